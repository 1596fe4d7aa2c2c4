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
  crsKeys,
  variantCrsKeys,
} from './case';
export { simulate } from './simulate';
export {
  Simulation,
  type ClusterView,
  type GroundTruth,
  type NodeSample,
  type NodeView,
  type RoundEvent,
  type ServiceView,
  type SimulationOptions,
  type SimulationResult,
} from './simulation';
export { Hardware, type HardwareOptions } from './hardware';
export {
  CONCURRENT_MIN_NODES,
  CONCURRENT_ROUND_SECONDS,
  MAX_SIM_TIME,
  type RoundModel,
  type SkipRounds,
  resolveRoundModel,
} from './round-model';
export { LOCK_TIMEOUT_SECONDS, WATCHDOG_TIMEOUT_SECONDS } from './locks';
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
  contentionRate,
  countPingPongs,
  guestContentionSeconds,
  migrationSeconds,
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
  type TruthColumns,
} from './summary';
export { moveOutcomes, type MoveOutcome, type NodePressurePoint, type ReportedPressurePoint } from './move-outcomes';
export {
  CPU_FAMILY_DEFAULTS,
  DEFAULT_CPU_FAMILY,
  DEFAULT_DELAY_SECONDS,
  DEFAULT_MEMORY_FAMILY,
  DEFAULT_RELOCATE_SECONDS,
  MEMORY_FAMILY_DEFAULTS,
  PRESSURE_MODEL_KINDS,
  parseLoadPressure,
  type LoadPressureOptions,
  type MigrationCostOptions,
  type NodePressureOptions,
  type PressureModelKind,
  type ResourcePressureOptions,
} from './pressure/config';
export {
  CURVE_FAMILIES,
  curveShare,
  erlangC,
  logisticShare,
  piecewiseShare,
  queueServers,
  queueShare,
  type CurveFamily,
  type LogisticCurve,
  type PiecewiseCurve,
  type PressureCurve,
  type QueueCurve,
} from './pressure/curves';
export {
  LoadPressureModel,
  decay,
  guestCpuStall,
  guestMemStall,
  wantShare,
  type FinishedMigrationRecord,
  type GuestContention,
  type GuestLoad,
  type NodeContention,
  type NodeLoad,
  type NodePressure,
} from './pressure/model';
export { walkStep } from './noise';
export { Prng, hash32 } from './prng';
export type { BalancerEvent } from '@poise/ha';
export { MAX_INPUT_FILE_BYTES, readInputFile, type ReadOptions } from './files';
export { JsonSyntaxError, parseStrictJson, type JsonObject, type JsonReadOptions, type JsonValue } from './json';
