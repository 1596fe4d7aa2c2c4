export { Crm } from './crm';
export { Lrm, type LrmProcessState } from './lrm';
export { Manager, type ManagerOptions } from './manager';
export { type BalancerEvent } from './balance-host';
export { AUTO_REBALANCE_PERCENT_RANGE, SCHEDULER_MODES, type CrsSettings } from './crs';
export { BUILTIN_REGISTRY, loadPluginRegistry } from './plugins';
export { NodeStatus } from './node-status';
