export { Crm, CRM_MAX_IDLE_ROUNDS } from './crm';
export { Lrm, LRM_MAX_ACTIVE_IDLE_ROUNDS, type LrmProcessState } from './lrm';
export { Manager, type ManagerOptions } from './manager';
export { type BalancerEvent } from './balance-host';
export { AUTO_REBALANCE_PERCENT_RANGE, SCHEDULER_MODES, readVariantSettings, type CrsSettings } from './crs';
export {
  BUILTIN_PLUGINS,
  BUILTIN_REGISTRY,
  loadPluginRegistry,
  loadPolicyPlugins,
  type LoadedPlugin,
} from './plugins';
export { NodeStatus, FENCE_DELAY_SECONDS } from './node-status';
export { ExitCode, sortedKeys, jsonClone, parseSid } from './tools';
export { formatFixed } from './format';
export { compareDebianVersions } from './version';
