export { ClusterUsage } from './cluster-usage';
export { UsageError, type UsageErrorCode } from './errors';
export {
  CRITERIA_COUNT,
  MIGRATION_IMBALANCE_DIGITS,
  SCHEDULER_CRITERIA,
  compareNames,
  compareScoredMigrations,
  nodeLoad,
  sortNames,
  truncateImbalance,
} from './kernels';
export {
  type AggregationPurpose,
  type MutableNodeStats,
  type ResolvedCandidate,
  type UsageSnapshot,
  addRunningResource,
  addStartedResource,
  referenceAggregate,
  referenceBestBalancingMigrations,
  referenceCriteria,
  referenceImbalanceOf,
  referenceNodeImbalance,
  referenceScoreNodesToStart,
  removeRunningResource,
  validateSnapshot,
} from './reference';
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
