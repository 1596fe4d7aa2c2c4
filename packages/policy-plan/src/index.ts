export {
  PLAN_REVERSAL_SECONDS,
  planGuidedSelect,
  type PlanGuidedOptions,
  type PlanGuidedState,
  type PlanLeftEntry,
} from './plan-guided';
export { PLAN_KEY, PLAN_SELECT_PRECEDENCE, planPlugin, type PlanSettings } from './settings';
