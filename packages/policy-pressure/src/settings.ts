import {
  type ChoiceKeySpec,
  type FlagKeySpec,
  type NumberKeySpec,
  type PluginSettings,
  type StagePart,
  checkSettingRange,
  definePlugin,
} from '@poise/policy';
import { migratableFilter } from './migratable';
import { type PressureMissing, pressureGate, pressureSourceFilter } from './pressure';

/** `ha-auto-rebalance-min-pressure-cpu`: node cpu some-pressure (PSI avg10, %) that counts as pressure; 0 = off. */
const MIN_PRESSURE_CPU_KEY: NumberKeySpec = {
  key: 'ha-auto-rebalance-min-pressure-cpu',
  type: 'number',
  unit: 'percent',
  min: 0,
  max: 100,
  off: 0,
  recommended: 10,
  description:
    'balance only while some node spends at least this share of time with work waiting for cpu (PSI some avg10)',
  why: "symptom-3 scenario: idle nodes report 0.3-2.1 % and never balance, a 14.5 % episode moves a guest off the node 40 s later; the seed's field value (work then loses a tenth of its time to contention)",
};

/** `ha-auto-rebalance-min-pressure-mem`: node memory some-pressure (PSI avg10, %) that counts as pressure; 0 = off. */
const MIN_PRESSURE_MEM_KEY: NumberKeySpec = {
  key: 'ha-auto-rebalance-min-pressure-mem',
  type: 'number',
  unit: 'percent',
  min: 0,
  max: 100,
  off: 0,
  recommended: 5,
  description:
    'balance only while some node spends at least this share of time with work waiting for memory reclaim (PSI some avg10)',
  why: 'memory stalls are the more severe (reclaim, then the OOM killer), so act at half the cpu value; no scenario has memory pressure yet, so this one is judgement, not measurement',
};

/** `ha-auto-rebalance-pressure-missing`: what to do while some node reports no pressure telemetry. */
const PRESSURE_MISSING_KEY: ChoiceKeySpec<PressureMissing> = {
  key: 'ha-auto-rebalance-pressure-missing',
  type: 'choice',
  choices: ['balance', 'hold'],
  off: 'balance',
  recommended: 'balance',
  description:
    "while some node reports no pressure: 'balance' judges the nodes that report it (fail open), 'hold' moves nothing",
  why: "fail open: in the scenarios without PSI telemetry 'hold' would stop the preset entirely (symptom 1: no move at all instead of 3 useful ones); nodes on an older stats schema keep the reference behaviour",
};

/** `ha-auto-rebalance-check-migratable` (0/1): guests whose configuration prevents a migration are not candidates. */
const CHECK_MIGRATABLE_KEY: FlagKeySpec = {
  key: 'ha-auto-rebalance-check-migratable',
  type: 'flag',
  off: false,
  recommended: true,
  description:
    'guests with a local cd-rom image, pci/usb passthrough, amd sev / intel tdx or local disks are not candidates',
  why: 'symptom-1 scenario: 17 failed motions become none and the other three guests are balanced; such a motion fails every time, so not trying it beats backing it off',
};

/**
 * The key of each setting, by the field of {@link PressureSettings} it fills: the plug-in's keys
 * (see `PolicyPlugin.keys` of `@poise/policy`), in the order of the keys, problems and schema.
 */
/** The plug-in's key specs, by setting name (what its settings type is derived from). */
export const PRESSURE_FIELDS = {
  /** cpu pressure threshold, percent (0 = cpu not judged). */
  minPressureCpuPercent: MIN_PRESSURE_CPU_KEY,
  /** memory pressure threshold, percent (0 = memory not judged). */
  minPressureMemPercent: MIN_PRESSURE_MEM_KEY,
  /** While telemetry is missing: `balance` (fail open) or `hold`. */
  pressureMissing: PRESSURE_MISSING_KEY,
  /** Guests whose configuration prevents a migration are not candidates. */
  checkMigratable: CHECK_MIGRATABLE_KEY,
} as const;

/**
 * The pressure and migratability settings, in the keys' units (0 / false = off): one field per
 * key, typed from the keys (`PluginSettings` of `@poise/policy`). A host reads them through a
 * `PolicyRegistry` (`registry.settingsOf(registry.read(crs), pressurePlugin)`).
 */
export type PressureSettings = PluginSettings<typeof PRESSURE_FIELDS>;

/** Where each stage of this package goes (see `composePipeline` of `@poise/policy`). */
const ORDER = {
  /** gate: after smoothing (10) and backoff-series (20), before threshold-hold. */
  pressure: 30,
  /** filter: first — it restricts the sources most and needs no host lookups. */
  'pressure-source': 10,
  /** filter: last — the host's guest configurations are read only for the survivors. */
  migratable: 40,
} as const;

/**
 * The stages the settings turn on, in their slots, for `composePipeline`; empty when every
 * setting is off. Throws `PolicyError` `invalid-config` for a value out of range (reading the
 * keys never yields one).
 */
function pressureStages(settings: PressureSettings): StagePart[] {
  for (const name of ['minPressureCpuPercent', 'minPressureMemPercent'] as const) {
    checkSettingRange(`pressure setting '${name}'`, settings[name], PRESSURE_FIELDS[name]);
  }
  const parts: StagePart[] = [];
  if (settings.minPressureCpuPercent > 0 || settings.minPressureMemPercent > 0) {
    const options = {
      cpuPercent: settings.minPressureCpuPercent,
      memPercent: settings.minPressureMemPercent,
      missing: settings.pressureMissing,
    };
    parts.push({ slot: 'gate', order: ORDER.pressure, stage: pressureGate(options) });
    parts.push({ slot: 'filter', order: ORDER['pressure-source'], stage: pressureSourceFilter(options) });
  }
  if (settings.checkMigratable) parts.push({ slot: 'filter', order: ORDER.migratable, stage: migratableFilter() });
  return parts;
}

/** Whether a pressure threshold is set: the gate and the source filter read node PSI. */
function readsPressure(settings: PressureSettings): boolean {
  return settings.minPressureCpuPercent > 0 || settings.minPressureMemPercent > 0;
}

/**
 * This package as a policy plug-in (see `PolicyPlugin` of `@poise/policy`): its keys, the
 * stages they turn on, and for the host: node pressure when a threshold is set, the guest
 * configurations with `check-migratable`. Register it in a `PolicyRegistry`, which reads the
 * settings and composes the pipeline; the HA core and poise-manager have it among their built-in
 * plug-ins.
 */
export const pressurePlugin = definePlugin({
  name: 'pressure',
  keys: PRESSURE_FIELDS,
  stages: pressureStages,
  needs: (settings) => ({ nodePressure: readsPressure(settings), guestConfigs: settings.checkMigratable }),
  describe: (settings) => [
    ...(settings.minPressureCpuPercent > 0 ? [`min-pressure-cpu ${settings.minPressureCpuPercent}%`] : []),
    ...(settings.minPressureMemPercent > 0 ? [`min-pressure-mem ${settings.minPressureMemPercent}%`] : []),
    ...(readsPressure(settings) ? [`pressure-missing ${settings.pressureMissing}`] : []),
    ...(settings.checkMigratable ? ['check-migratable'] : []),
  ],
});
