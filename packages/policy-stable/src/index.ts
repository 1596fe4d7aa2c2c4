export {
  BACKOFF_FORGET_SECONDS,
  BACKOFF_MAX_SECONDS,
  backoffDelay,
  backoffFilter,
  backoffSeriesGate,
  type BackoffOptions,
  type BackoffPair,
  type BackoffSeriesState,
  type BackoffState,
  type MotionPair,
} from './backoff';
export { cooldownFilter, type CooldownEntry, type CooldownState } from './cooldown';
export { COST_SCORE_LIMIT, costSelect } from './cost';
export { minImprovementAccept } from './dead-band';
export { decayWeight, smoothingGate, type ResidualEntry, type SmoothingState } from './smoothing';
export {
  BACKOFF_KEY,
  COOLDOWN_KEY,
  COST_WEIGHT_KEY,
  MEMHOST_KEY,
  MIN_IMPROVEMENT_KEY,
  SMOOTHING_KEY,
  stablePlugin,
  type StableSettings,
} from './settings';
