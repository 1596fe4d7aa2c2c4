export { planPlugin, type PlanSettings } from './settings';
