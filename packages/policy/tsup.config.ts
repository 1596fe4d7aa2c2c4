import { poiseTsup } from '../../tsup.config.base';

// Two entry points: the pipeline, and its test support (`@poise/policy/testing`: ReplayCluster),
// kept apart so that no host ships the test support. Shared code (PolicyError) is one chunk.
export default poiseTsup(['src/index.ts', 'src/testing/index.ts']);
