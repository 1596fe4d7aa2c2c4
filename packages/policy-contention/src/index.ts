export { contentionGate, type ContentionGateOptions, type ContentionGateState, type NodeSpells } from './gate';
export { contentionHold, type ContentionHoldState } from './hold';
export { contentionScorer, type ContentionScorerOptions } from './score';
export { contentionMarginAccept, type ContentionMarginOptions, type ContentionMarginState } from './margin';
export { JUDGED_CONFIDENCE, MISS_POINTS, type PredictedRelief, type Unrelieved } from './relief';
export { RISE, type PressureSample, type UnexplainedRise } from './rise';
export {
  CONTENTION_OBJECTIVE,
  contentionObjectiveOf,
  type ContentionObjective,
  type NodePressureNow,
} from './objective';
export { CONTENTION_PACE, SPELL_MOTIONS_KEPT, type ContentionPace, type RecentMotion } from './pace';
export { CONTENTION_FLOOR, CONTENTION_SCORE_LIMIT, MIN_GAIN_SECONDS, SATURATED } from './limits';
export {
  COST_BENEFIT_KEY,
  MIN_GAIN_KEY,
  OBJECTIVE_KEY,
  contentionPlugin,
  createContentionPlugin,
  type ContentionPluginOptions,
  type ContentionSettings,
  type RebalanceObjective,
} from './settings';
