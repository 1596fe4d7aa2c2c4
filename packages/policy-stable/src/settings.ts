import {
  type FlagKeySpec,
  type NumberKeySpec,
  type PluginSettings,
  type StagePart,
  checkSettingRange,
  definePlugin,
} from '@poise/policy';
import { BACKOFF_MAX_SECONDS, backoffFilter, backoffSeriesGate } from './backoff';
import { cooldownFilter } from './cooldown';
import { COST_SCORE_LIMIT, costSelect } from './cost';
import { minImprovementAccept } from './dead-band';
import { smoothingGate } from './smoothing';

/**
 * `ha-auto-rebalance-backoff`: base delay of the cross-series backoff of a failed
 * (bundle, target) pair, seconds; 0 = off (also turns off the series exclusion).
 */
const BACKOFF_KEY: NumberKeySpec = {
  key: 'ha-auto-rebalance-backoff',
  type: 'number',
  unit: 'seconds',
  min: 0,
  max: BACKOFF_MAX_SECONDS,
  off: 0,
  recommended: 60,
  description:
    'a failed (bundle, target) pair is excluded for the rest of its rebalancing series and skipped base·2^(failures−1) s (≤ 1 h) in later series',
  why: 'symptom-1 scenario: 17 failed motions in 20 min become 3 (at most 2 per pair); 60 s retries a passing cause in the next series, and a lasting one reaches the 1 h cap after 7 failures (the seed validated 60 s, 120 s on a live cluster)',
};

/** `ha-auto-rebalance-cooldown`: seconds a resource the balancer moved is left alone; 0 = off. */
const COOLDOWN_KEY: NumberKeySpec = {
  key: 'ha-auto-rebalance-cooldown',
  type: 'number',
  unit: 'seconds',
  min: 0,
  max: 86_400,
  off: 0,
  recommended: 600,
  description: 'a resource the balancer moved is not moved by it again within this time',
  why: 'symptom-2 scenario: alone it cuts 19 moves in 27 min to 3; 30 min would forbid ping-pongs outright but blocked the useful return move 11 min after a failover in rebalance-and-failover',
};

/** `ha-auto-rebalance-min-improvement`: absolute dead band, percentage points of imbalance; 0 = off. */
const MIN_IMPROVEMENT_KEY: NumberKeySpec = {
  key: 'ha-auto-rebalance-min-improvement',
  type: 'number',
  unit: 'percentage points',
  min: 0,
  max: 100,
  off: 0,
  recommended: 5,
  description: 'a move must lower the imbalance by at least this many percentage points, on top of the relative margin',
  why: 'below every useful move of the scenarios (13 to 51 pp) with room to spare, above moves of a few points that the 10 % margin lets through at 30-50 % imbalance; no dead band stops idle-cluster noise alone (it would take 20 pp): smoothing and memhost do',
};

/** `ha-auto-rebalance-smoothing`: half-life of the residual's moving average, seconds; 0 = off. */
const SMOOTHING_KEY: NumberKeySpec = {
  key: 'ha-auto-rebalance-smoothing',
  type: 'number',
  unit: 'seconds',
  min: 0,
  max: 86_400,
  off: 0,
  recommended: 300,
  description: 'half-life of the moving average of the node load the HA services do not account for',
  why: 'symptom-2 scenario: with memhost, 120 s is the shortest half-life that stops the ±0.5 pp noise moves (60 s leaves 3-7 per day); 300 s keeps them out at ±1 pp too (3-5 a day), and the lasting load shift at 12 h is still followed 20 s after it begins',
};

/** `ha-auto-rebalance-cost-weight`: tolerance (fraction of the best improvement) for preferring cheaper moves; 0 = off. */
const COST_WEIGHT_KEY: NumberKeySpec = {
  key: 'ha-auto-rebalance-cost-weight',
  type: 'number',
  unit: 'fraction of the best improvement',
  min: 0,
  max: 1,
  off: 0,
  recommended: 0.2,
  description:
    'among moves improving by at least (1 − weight) of the best improvement, the one copying the least memory is chosen',
  why: 'symptom-3 scenario: it moves the 4 GiB guest for 18.4 pp instead of the 8 GiB one for 21.0 pp (half the copy for 88 % of the gain, still below the threshold after); a larger weight would take clearly worse moves',
};

/** `ha-auto-rebalance-memhost` (0/1): the host feeds the host-side memory footprint to the usage model. */
const MEMHOST_KEY: FlagKeySpec = {
  key: 'ha-auto-rebalance-memhost',
  type: 'flag',
  off: false,
  recommended: true,
  description:
    "dynamic guest memory uses the host-side footprint ('memhost') when present (a host concern: which value it feeds to the usage model)",
  why: 'symptom-2 scenario: alone it cuts 19 moves in 27 min to 4; without it the rest of the preset still makes 69 moves a day, each one mispredicted by the memory the guest does not see (memhost is what the node carries and a migration copies)',
};

/**
 * The key of each setting, by the field of {@link StableSettings} it fills: the plug-in's keys
 * (see `PolicyPlugin.keys` of `@poise/policy`), in the order of the keys, problems and schema.
 */
/** The plug-in's key specs, by setting name (what its settings type is derived from). */
export const STABLE_FIELDS = {
  /** Backoff base, seconds (0 = off). */
  backoffSeconds: BACKOFF_KEY,
  /** Cooldown, seconds (0 = off). */
  cooldownSeconds: COOLDOWN_KEY,
  /** Dead band, percentage points of imbalance (0 = off); the stage gets it / 100. */
  minImprovementPoints: MIN_IMPROVEMENT_KEY,
  /** Smoothing half-life, seconds (0 = off). */
  smoothingHalfLifeSeconds: SMOOTHING_KEY,
  /** Cost tolerance, fraction 0..1 (0 = off). */
  costWeight: COST_WEIGHT_KEY,
  /** Feed the host-side memory footprint to the usage model (a host concern; no stage). */
  memhost: MEMHOST_KEY,
} as const;

/**
 * The stability settings, in the keys' units (0 / false = off): one field per key, typed from
 * the keys (`PluginSettings` of `@poise/policy`). A host reads them through a `PolicyRegistry`
 * (`registry.settingsOf(registry.read(crs), stablePlugin)`).
 */
export type StableSettings = PluginSettings<typeof STABLE_FIELDS>;

/** Where each stage of this package goes (see `composePipeline` of `@poise/policy`). */
const ORDER = {
  /** gate: first, so every later gate and the threshold see the adjusted view. */
  smoothing: 10,
  /** gate: before the pressure gate (30), so a retry round without pressure ends the series. */
  'backoff-series': 20,
  /** filter: after pressure-source (10), before backoff. */
  cooldown: 20,
  /** filter: after cooldown, before migratable (40). */
  backoff: 30,
  /** accept: after relative-margin. */
  'min-improvement': 10,
} as const;

/**
 * The stages the settings turn on, in their slots, for `composePipeline`; empty when every
 * setting is off (the composed pipeline is then the reference). `minImprovementPoints` is
 * converted to the imbalance's fraction (/ 100). Throws `PolicyError` `invalid-config` for a
 * value out of range (reading the keys never yields one).
 */
function stableStages(settings: StableSettings): StagePart[] {
  for (const name of [
    'backoffSeconds',
    'cooldownSeconds',
    'minImprovementPoints',
    'smoothingHalfLifeSeconds',
    'costWeight',
  ] as const) {
    checkSettingRange(`stable setting '${name}'`, settings[name], STABLE_FIELDS[name]);
  }
  const parts: StagePart[] = [];
  if (settings.smoothingHalfLifeSeconds > 0) {
    parts.push({
      slot: 'gate',
      order: ORDER.smoothing,
      stage: smoothingGate({ halfLifeSeconds: settings.smoothingHalfLifeSeconds }),
    });
  }
  if (settings.backoffSeconds > 0) {
    parts.push({ slot: 'gate', order: ORDER['backoff-series'], stage: backoffSeriesGate() });
    // the key's range caps the base at BACKOFF_MAX_SECONDS
    parts.push({
      slot: 'filter',
      order: ORDER.backoff,
      stage: backoffFilter({ baseSeconds: settings.backoffSeconds, maxSeconds: BACKOFF_MAX_SECONDS }),
    });
  }
  if (settings.cooldownSeconds > 0) {
    parts.push({
      slot: 'filter',
      order: ORDER.cooldown,
      stage: cooldownFilter({ seconds: settings.cooldownSeconds }),
    });
  }
  if (settings.costWeight > 0) {
    parts.push({
      slot: 'select',
      order: 0,
      stage: costSelect({ weight: settings.costWeight, limit: COST_SCORE_LIMIT }),
      scoreLimit: COST_SCORE_LIMIT,
    });
  }
  if (settings.minImprovementPoints > 0) {
    parts.push({
      slot: 'accept',
      order: ORDER['min-improvement'],
      stage: minImprovementAccept({ minImprovement: settings.minImprovementPoints / 100 }),
    });
  }
  return parts;
}

/** `backoff 60 s`, … `memhost`: one fragment per stability setting that is on. */
function describeStable(settings: StableSettings): string[] {
  const on: string[] = [];
  if (settings.backoffSeconds > 0) on.push(`backoff ${settings.backoffSeconds} s`);
  if (settings.cooldownSeconds > 0) on.push(`cooldown ${settings.cooldownSeconds} s`);
  if (settings.minImprovementPoints > 0) on.push(`min-improvement ${settings.minImprovementPoints} pp`);
  if (settings.smoothingHalfLifeSeconds > 0) on.push(`smoothing ${settings.smoothingHalfLifeSeconds} s`);
  if (settings.costWeight > 0) on.push(`cost-weight ${settings.costWeight}`);
  if (settings.memhost) on.push('memhost');
  return on;
}

/**
 * This package as a policy plug-in (see `PolicyPlugin` of `@poise/policy`): its keys, the
 * stages they turn on, and `memhost` for the host (the usage model takes the guests' host-side
 * memory). Register it in a `PolicyRegistry`, which reads the settings and composes the
 * pipeline; the HA core and poise-manager have it among their built-in plug-ins.
 */
export const stablePlugin = definePlugin({
  name: 'stable',
  keys: STABLE_FIELDS,
  stages: stableStages,
  needs: (settings) => ({ memhost: settings.memhost }),
  describe: describeStable,
});
