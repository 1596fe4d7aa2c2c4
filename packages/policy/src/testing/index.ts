/**
 * Test support of `@poise/policy` (`@poise/policy/testing`), kept out of the main entry so that
 * no host ships it: {@link ReplayCluster}, an in-memory host that runs a pipeline round after
 * round, for the tests and README examples of the policy variants.
 */
export {
  ReplayCluster,
  type ReplayEvent,
  type ReplayGuest,
  type ReplayNode,
  type ReplayNodeState,
  type ReplayOptions,
} from './replay';
