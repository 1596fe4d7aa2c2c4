export type { Env, FinishedMigrationTask, LogLevel } from './env';
export type {
  DatacenterSettings,
  DynamicNodeStats,
  DynamicServiceStats,
  GuestConfigEntry,
  LrmResult,
  LrmStatus,
  ManagerStatus,
  NodeInfo,
  ResourceAgent,
  ServiceConfig,
  ServiceConfigEntry,
  ServiceStatus,
  StaticNodeStats,
  StaticServiceStats,
} from './types';
export { SimEnv, type SimBackend } from './sim-env';
export {
  isSnapshot,
  lazyRecord,
  lazyRecordEntries,
  nullRecord,
  openRecord,
  sealRecord,
  snapshot,
  thaw,
  type LazyRecordOptions,
  type Snapshot,
} from './snapshot';
export {
  HA_SERVICE_STATES,
  haServiceState,
  type ClusterSnapshot,
  type CrsOptions,
  type GuestHa,
  type GuestSnapshot,
  type HaRule,
  type HaServiceState,
  type NodeCondition,
  type NodeSnapshot,
  type SnapshotProblem,
} from './cluster-snapshot';
