/**
 * Test support of `@poise/plan` (`@poise/plan/testing`), kept out of the main entry so that no
 * host ships it: {@link generatedCluster}, a seeded, heterogeneous cluster of any size with rules
 * its placement satisfies, for the benchmark and the tests of the planner and its hosts.
 */
export { generatedCluster } from './generated-cluster';
