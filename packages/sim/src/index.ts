export {
  loadCase,
  type CaseInput,
  type HardwareNode,
  type LoadOptions,
  type SimOptions,
  CRS_KEYS,
  MAX_SEED,
  VARIANT_CRS_KEYS,
  crsKeys,
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
export { MAX_SIM_TIME, type RoundModel } from './round-model';
export { SimError, type SimErrorCode } from './errors';
export { parseCrsOverride, withCrsOverrides } from './overrides';
export {
  RunRecorder,
  contentionRate,
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
export {
  parseLoadPressure,
  type LoadPressureOptions,
  type MigrationCostOptions,
  type NodePressureOptions,
  type PressureModelKind,
  type ResourcePressureOptions,
} from './pressure/config';
export { type LogisticCurve, type PiecewiseCurve, type PressureCurve, type QueueCurve } from './pressure/curves';
export { type GuestContention, type NodeContention } from './pressure/model';
export { Prng, hash32 } from './prng';
export type { BalancerEvent } from '@poise/ha';
export { readInputFile, type ReadOptions } from './files';
export { JsonSyntaxError, parseStrictJson, type JsonObject, type JsonReadOptions, type JsonValue } from './json';
