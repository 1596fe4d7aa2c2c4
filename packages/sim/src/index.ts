export { loadCase, type CaseInput, type HardwareNode } from './case';
export { simulate, type SimulationResult } from './simulate';
export { Hardware, LOCK_TIMEOUT_SECONDS, WATCHDOG_TIMEOUT_SECONDS, MAX_SIM_TIME } from './hardware';
export { SimLog } from './log';
export { SimError, type SimErrorCode } from './errors';
export { validateCommand } from './commands';
