export { loadCase, type CaseInput, type HardwareNode, type LoadOptions, NODE_NAME_PATTERN } from './case';
export { simulate } from './simulate';
export {
  Simulation,
  type ClusterView,
  type NodeView,
  type RoundEvent,
  type ServiceView,
  type SimulationOptions,
  type SimulationResult,
} from './simulation';
export {
  CONCURRENT_MIN_NODES,
  CONCURRENT_ROUND_SECONDS,
  Hardware,
  type HardwareOptions,
  LOCK_TIMEOUT_SECONDS,
  MAX_SIM_TIME,
  type RoundModel,
  type SkipRounds,
  WATCHDOG_TIMEOUT_SECONDS,
  resolveRoundModel,
} from './hardware';
export { SimLog } from './log';
export { SimError, type SimErrorCode } from './errors';
export { parseCommand, validateCommand, type Command, type CrmAction, type ParseResult, type ServiceStateWord, type StatKey } from './commands';
export { MAX_INPUT_FILE_BYTES, readInputFile, type ReadOptions } from './files';
export { JsonSyntaxError, parseStrictJson, type JsonObject, type JsonValue } from './json';
