export {
  loadCase,
  type CaseInput,
  type HardwareNode,
  type LoadOptions,
  type SimOptions,
  CRS_KEYS,
  MAX_SEED,
  NODE_NAME_PATTERN,
  VARIANT_CRS_KEYS,
} from './case';
export { simulate } from './simulate';
export {
  Simulation,
  type ClusterView,
  type NodeSample,
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
export {
  MAX_NODE_LOAD,
  parseCommand,
  validateCommand,
  type Command,
  type CrmAction,
  type NodeNoiseKey,
  type NodeStatKey,
  type ParseResult,
  type ServiceStateWord,
  type StatKey,
} from './commands';
export { parseCrsOverride, withCrsOverrides } from './overrides';
export {
  PING_PONG_WINDOW_SECONDS,
  PRESSURE_CPU_THRESHOLD_PERCENT,
  PRESSURE_MEM_THRESHOLD_PERCENT,
  PRESSURE_THRESHOLDS,
  RunRecorder,
  countPingPongs,
  pressureNodeSeconds,
  resourceMoves,
  summarizeRun,
  timeWeightedMean,
  type PressureThresholds,
  type RecordedMotion,
  type RecordedRounds,
  type ResourceMove,
  type RunRecord,
  type RunSummary,
} from './summary';
export { Prng, walkStep } from './noise';
export type { BalancerEvent } from '@poise/ha';
export { MAX_INPUT_FILE_BYTES, readInputFile, type ReadOptions } from './files';
export { JsonSyntaxError, parseStrictJson, type JsonObject, type JsonReadOptions, type JsonValue } from './json';
