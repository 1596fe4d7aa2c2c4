/**
 * Test support of `@poise/usage` (`@poise/usage/testing`), kept out of the main entry so that no
 * host ships it: the oracle, the direct reference implementation of the spec (§4) that the fast
 * {@link ClusterUsage} is tested against and the benchmark's baselines are checked with. Slow on
 * purpose; never a production path.
 */
export {
  referenceBestBalancingMigrations,
  referenceScoreNodesToStart,
  type UsageSnapshot,
} from '../reference';
