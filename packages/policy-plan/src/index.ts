export { PLAN_FIELDS, planPlugin, type PlanSettings } from './settings';
