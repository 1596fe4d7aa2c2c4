export { pressureGate, type PressureGateState, type PressureMissing, type PressureOptions } from './pressure';
export { judgeMigratability, parsePropertyString, type GuestKind, type JudgeOptions } from './migratable';
export { PRESSURE_FIELDS, pressurePlugin, type PressureSettings } from './settings';
