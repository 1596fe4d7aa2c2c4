export { cooldownFilter, type CooldownEntry, type CooldownState } from './cooldown';
export { STABLE_FIELDS, stablePlugin, type StableSettings } from './settings';
