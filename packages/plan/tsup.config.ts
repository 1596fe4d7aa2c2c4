import { poiseTsup } from '../../tsup.config.base';

// Two entry points: the planner, and its test support (`@poise/plan/testing`: generatedCluster),
// kept apart so that no host ships the test support.
export default poiseTsup(['src/index.ts', 'src/testing/index.ts']);
