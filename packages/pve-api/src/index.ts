export {
  PveClient,
  requireServiceStatus,
  type CallOptions,
  type GuestMigrateParams,
  type GuestType,
  type PveClientOptions,
} from './client';
export { PveApiError, type PveApiErrorCode, type PveApiErrorDetails } from './errors';
export { ApiToken, readTokenFile, tokenFromEnv } from './token';
export { type PveTlsOptions, type TransportSecurity } from './tls';
export {
  DEFAULT_BACKOFF_BASE_MS,
  DEFAULT_BACKOFF_MAX_MS,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type RetryEvent,
  type TransportOptions,
} from './transport';
export {
  ACTION_PRIVILEGES,
  actionPrivilege,
  ENDPOINT_PRIVILEGES,
  grantsPrivilege,
  type ActionName,
  type PrivilegeNeed,
} from './privileges';
export { ACTION_REFUSALS } from './refusals';
export { decode, parsePropertyString } from './wire';
export {
  clusterResourceSchema,
  clusterResourcesSchema,
  crsSchema,
  haManagerStatusSchema,
  nodePriorityList,
  nodeRrdSchema,
  objAliased,
} from './schemas';
export type {
  AccessPermissions,
  CertificateInfo,
  ClusterGuestResource,
  ClusterNodeResource,
  ClusterOptions,
  ClusterOtherResource,
  ClusterResource,
  ClusterStatusEntry,
  ClusterStorageResource,
  CrsOptions,
  GuestConfig,
  GuestPressure,
  GuestRrdPoint,
  GuestStatus,
  HaDaemonEntry,
  HaDaemonState,
  HaGroup,
  HaGroups,
  HaLrmStatus,
  HaManagerStatus,
  HaMotionResult,
  HaResource,
  HaRule,
  HaServiceEntry,
  HaServiceStatus,
  HaStatusCurrent,
  MigratePrecheck,
  MigrationBlocker,
  NodeGuest,
  NodePressure,
  NodePriority,
  NodeRrdPoint,
  NodeStatus,
  NotAllowedNode,
  PveVersion,
  RrdConsolidation,
  RrdTimeframe,
  TaskListEntry,
  TaskStatus,
  Upid,
} from './types';
export { parseMigrationLog, type MigrationLogSummary } from './migration-log';
