export {
  PLAN_REVERSAL_SECONDS,
  planGuidedSelect,
  type PlanGuidedOptions,
  type PlanGuidedState,
  type PlanLeftEntry,
} from './plan-guided';
export {
  PLAN_KEY,
  PLAN_KEYS,
  PLAN_OFF,
  PLAN_SELECT_PRECEDENCE,
  parsePlanSettings,
  planPlugin,
  planStages,
  type PlanSettings,
} from './settings';
