export {
  pressureGate,
  pressureSourceFilter,
  type PressureGateState,
  type PressureMissing,
  type PressureOptions,
} from './pressure';
export {
  REPORT_FORGET_SECONDS,
  isLocalStorage,
  judgeMigratability,
  migratableFilter,
  parsePropertyString,
  type GuestKind,
  type JudgeOptions,
  type MigratableState,
  type ReportedGuest,
} from './migratable';
export {
  CHECK_MIGRATABLE_KEY,
  MIN_PRESSURE_CPU_KEY,
  MIN_PRESSURE_MEM_KEY,
  PRESSURE_MISSING_KEY,
  pressurePlugin,
  type PressureSettings,
} from './settings';
