export { ContentionError, type ContentionErrorCode } from './errors';
export { LOAD_BINS, LOAD_MAX } from './constants';
export { type HingeCurve, type LogisticCurve, type PressureCurve } from './curves';
export {
  MIGRATION_DEFAULTS,
  estimateMigration,
  learnMigrationSettings,
  migrationSettings,
  type MigrationEstimate,
  type MigrationInput,
  type MigrationSettings,
  type MigrationTask,
} from './migration';
export { HORIZON_SPELLS_KEPT, spellHorizon } from './horizon';
export {
  checkModelState,
  emptyModel,
  type BinState,
  type ContentionModelState,
  type CurveState,
  type NodeModelState,
} from './state';
export { observeNodes, type NodeObservation } from './learn';
export {
  fitModel,
  type CurveSummary,
  type FittedModel,
  type PredictionReason,
  type PressureDimension,
  type PressurePrediction,
} from './fit';
export {
  CONTENTION_DEFAULTS,
  assessMove,
  contentionOptions,
  guestActivity,
  moveScorer,
  predictMovePressure,
  type ContentionOptions,
  type MoveAssessment,
  type MoveInput,
  type MovedBundle,
  type MovedLoad,
  type MovePressure,
  type NodeContention,
  type NodeLoad,
  type NodePressureChange,
  type PressureChange,
} from './score';
