export { ClusterUsage } from './cluster-usage';
export { UsageError, type UsageErrorCode } from './errors';
export { compareNames, compareScoredMigrations, nodeLoad, sortNames, truncateImbalance } from './kernels';
export type { UsageSnapshot } from './reference';
export { MAX_STAT_VALUE, MIN_NODE_CAPACITY } from './validate';
export type {
  Aggregation,
  ImbalanceMetric,
  MigrationCandidate,
  MigrationMethod,
  NodeScore,
  NodeStats,
  Placement,
  ResourceSpec,
  ResourceState,
  ResourceStats,
  ScoredMigration,
} from './types';
