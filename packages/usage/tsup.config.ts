import { poiseTsup } from '../../tsup.config.base';

// Two entry points: the library, and its test support (`@poise/usage/testing`: the oracle),
// kept apart so that no host ships the test support.
export default poiseTsup(['src/index.ts', 'src/testing/index.ts']);
