export { cooldownFilter } from './cooldown';
export { stablePlugin, type StableSettings } from './settings';
