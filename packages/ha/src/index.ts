export { Crm, CRM_MAX_IDLE_ROUNDS } from './crm';
export { Lrm, LRM_MAX_ACTIVE_IDLE_ROUNDS, type LrmProcessState } from './lrm';
export { CRM_SERVICE_STATES, Manager, type ManagerOptions } from './manager';
export { type BalancerEvent } from './balance-host';
export {
  AUTO_REBALANCE_PERCENT_RANGE,
  SCHEDULER_MODES,
  VARIANT_OFF,
  readVariantSettings,
  type CrsSettings,
  type VariantSettings,
} from './crs';
export { NodeStatus, FENCE_DELAY_SECONDS } from './node-status';
export { ExitCode, byteCompare, sortedKeys, jsonClone, parseSid } from './tools';
export { formatFixed } from './format';
export { compareDebianVersions } from './version';
