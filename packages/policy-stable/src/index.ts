export { cooldownFilter, type CooldownEntry, type CooldownState } from './cooldown';
export { stablePlugin, type StableSettings } from './settings';
