export { Pipeline, referencePipeline, type ReferenceBalancerConfig } from './pipeline';
export {
  hostCandidates,
  motionInFlightGate,
  relativeMarginAccept,
  selectBest,
  thresholdHoldGate,
  usageScorer,
  type HoldState,
} from './stages';
export { PolicyError, type PolicyErrorCode } from './errors';
export type {
  BalanceContext,
  BalanceMethod,
  Decision,
  MigrationCandidate,
  PipelineState,
  Plan,
  ScoredMigration,
  Stage,
  StageKind,
  StageOutcome,
} from './types';
