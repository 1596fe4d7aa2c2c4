export {
  PIPELINE_STAGE,
  Pipeline,
  composePipeline,
  referencePipeline,
  type ReferenceBalancerConfig,
  type StagePart,
  type StageSlot,
} from './pipeline';
export {
  evaluatorOf,
  hostCandidates,
  motionInFlightGate,
  relativeMarginAccept,
  selectBest,
  selectedOf,
  thresholdHoldGate,
  usageScorer,
  type HoldState,
} from './stages';
export { PolicyError, invalidInput, missingContext, type PolicyErrorCode } from './errors';
export { showValue, stateCheck, type StateCheck } from './state';
export { TELEMETRY_MAX } from './round';
export { REASON_LIST_MAX, bundleLabel, formatCompared, formatList, formatPercent, pairKey, sortedBundle } from './explain';
export {
  PRESETS,
  PRESET_KEY,
  crsJsonSchema,
  readChoiceKey,
  readCrs,
  readFlagKey,
  readNumberKey,
  type ChoiceKeySpec,
  type CrsInput,
  type CrsKeySpec,
  type FlagKeySpec,
  type NumberKeySpec,
  type RebalancePreset,
  type SettingProblem,
} from './settings';
export { ReplayCluster, type ReplayEvent, type ReplayGuest, type ReplayNode, type ReplayNodeState, type ReplayOptions } from './replay';
export { compareNames } from '@poise/usage';
export type {
  AdjustedNodeUsage,
  BalanceCandidate,
  BalanceContext,
  BalanceEvaluator,
  BalanceMethod,
  Decision,
  GuestConfig,
  MigratabilityVerdict,
  MigrationBlocker,
  MigrationCandidate,
  MotionOutcome,
  MoveDecision,
  NodeTelemetry,
  Notice,
  NoticeInit,
  Observed,
  PipelineState,
  Plan,
  RoundFacts,
  ScoredMigration,
  Stage,
  StageKind,
  StageOutcome,
  StagePass,
  StageStop,
  StopDecision,
} from './types';
