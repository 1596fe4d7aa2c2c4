export { planGuidedSelect, type PlanGuidedOptions } from './plan-guided';
export { PLAN_KEY, PLAN_KEYS, PLAN_OFF, parsePlanSettings, planStages, type PlanSettings } from './settings';
