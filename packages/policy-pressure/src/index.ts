export { pressureGate, type PressureMissing } from './pressure';
export { judgeMigratability, parsePropertyString, type GuestKind, type JudgeOptions } from './migratable';
export { pressurePlugin, type PressureSettings } from './settings';
