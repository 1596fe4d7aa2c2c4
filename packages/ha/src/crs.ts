import type { Env } from '@poise/env';
import { readCrs, showValue } from '@poise/policy';
import { STABLE_OFF, parseStableSettings, type StableSettings } from '@poise/policy-stable';
import { PRESSURE_OFF, parsePressureSettings, type PressureSettings } from '@poise/policy-pressure';
import { PLAN_OFF, parsePlanSettings, type PlanSettings } from '@poise/policy-plan';
import { CONTENTION_OFF, parseContentionSettings, type ContentionSettings } from '@poise/policy-contention';
import { perlTrue } from './tools';

/** Auto-rebalance defaults of the pve-5.2.0 profile (fractions of the imbalance). */
export const AUTO_REBALANCE_DEFAULTS_FRACTION = { threshold: 0.3, margin: 0.1 } as const;
/** Auto-rebalance defaults of the pve-9.2 profile (percent of the normalised imbalance). */
export const AUTO_REBALANCE_DEFAULTS_PERCENT = { threshold: 30, margin: 10 } as const;
/**
 * The range of `ha-auto-rebalance-threshold` and `-margin` in percent (PVE 9.2's
 * datacenter.cfg schema): a threshold above 100 % could never be exceeded, a margin above
 * 100 % never met. The `pve-9.2` profile falls back to the default for a value outside it;
 * the simulator's case loader refuses one under either profile.
 */
export const AUTO_REBALANCE_PERCENT_RANGE = { min: 0, max: 100 } as const;
/** Consecutive rounds above the threshold before a rebalance fires. */
export const AUTO_REBALANCE_DEFAULT_HOLD_ROUNDS = 3;

/** The scheduler modes of `crs.ha` (an unknown one is logged and read as `basic`, as by the reference). */
export const SCHEDULER_MODES = ['basic', 'static', 'dynamic'] as const;
export type SchedulerMode = (typeof SCHEDULER_MODES)[number];

/** The `crs` datacenter settings the manager reads every round. */
export interface CrsSettings {
  /** The configured mode string (may be unknown; the usage falls back to basic). */
  scheduler: string;
  rebalanceOnRequestStart: boolean;
  autoRebalance: boolean;
  /** Imbalance threshold as a fraction (pve-5.2.0) or percent (pve-9.2) as configured. */
  threshold: number;
  method: string;
  holdRounds: number;
  margin: number;
  /**
   * The balancer's variant stages (`ha-auto-rebalance-backoff`, `-cooldown`,
   * `-min-improvement`, `-smoothing`, `-cost-weight`, `-memhost`, `-min-pressure-cpu`,
   * `-min-pressure-mem`, `-pressure-missing`, `-check-migratable`, `-plan`, `-objective`, `-preset`), in the units of
   * the `pve-9.2` profile. Under `pve-5.2.0` the reference knows none of these keys: they are
   * ignored there (every stage off) and nothing is logged about them.
   */
  variant: VariantSettings;
}

/** The variant stages' settings; every field off means the reference balancer. */
export interface VariantSettings {
  readonly stable: StableSettings;
  readonly pressure: PressureSettings;
  /** `ha-auto-rebalance-plan` (`@poise/policy-plan`): the first step of a global plan instead of the greedy best move. */
  readonly plan: PlanSettings;
  readonly contention: ContentionSettings;
  /**
   * Some variant key has a non-default value (explicitly or through the preset): the balancer
   * then explains its decisions not to act in the log (on change) and logs its notices. With
   * every key at its default the log is the reference's, byte for byte.
   */
  readonly active: boolean;
}

/** Every variant stage off (the reference balancer). */
export const VARIANT_OFF: VariantSettings = {
  stable: STABLE_OFF,
  pressure: PRESSURE_OFF,
  plan: PLAN_OFF,
  contention: CONTENTION_OFF,
  active: false,
};

/**
 * Reads the variant keys (see {@link CrsSettings.variant}) from a `crs` section; never throws.
 * A bad value is returned as a problem naming the key (e.g.
 * `datacenter.cfg: invalid value 'abc' for 'crs.ha-auto-rebalance-backoff' (seconds, 0 to 3600), falling back to 0 (off)`)
 * and that stage is off.
 */
export function readVariantSettings(crs: unknown): { settings: VariantSettings; problems: string[] } {
  const input = readCrs(crs);
  const stable = parseStableSettings(input);
  const pressure = parsePressureSettings(input);
  const plan = parsePlanSettings(input);
  const contention = parseContentionSettings(input);
  const problems = [
    ...input.problems,
    ...stable.problems,
    ...pressure.problems,
    ...plan.problems,
    ...contention.problems,
  ].map((p) => p.message);
  const differs = <T extends object>(value: T, off: T) =>
    (Object.keys(off) as (keyof T)[]).some((k) => value[k] !== off[k]);
  const active =
    differs(stable.settings, STABLE_OFF) ||
    differs(pressure.settings, PRESSURE_OFF) ||
    differs(plan.settings, PLAN_OFF) ||
    differs(contention.settings, CONTENTION_OFF);
  return {
    settings: {
      stable: stable.settings,
      pressure: pressure.settings,
      plan: plan.settings,
      contention: contention.settings,
      active,
    },
    problems,
  };
}

/**
 * Perl's numeric reading of a scalar: a number as it is, a string by its longest leading
 * decimal number (after leading whitespace), anything else 0. What the reference computes with
 * when a setting is not a number (it only warns on stderr).
 */
export function perlNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'string') return 0;
  const m = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(value);
  return m ? Number(m[0]) : 0;
}

/** A setting's value in a message: text and numbers quoted as written, any other shape by kind. */
function shownSetting(raw: unknown): string {
  return typeof raw === 'string' || typeof raw === 'number' ? `'${raw}'` : showValue(raw);
}

/**
 * Reads the `crs` settings as the reference's `update_crs_scheduler_mode` does: an empty or
 * absent `crs.ha` means `basic` (`ha || 'basic'`), flags are Perl-true values.
 *
 * A numeric setting that is not a number: under `pve-9.2` it falls back to its default and is
 * reported in `problems` (field named), so a typo never turns into a NaN threshold; under
 * `pve-5.2.0` it is read as Perl reads it (`'high'` is 0, `'0.5x'` is 0.5; a hold duration
 * counts as the next whole number of rounds) and nothing is reported, as the reference logs
 * nothing.
 */
export function readCrsSettings(
  env: Env,
  profile: 'pve-5.2.0' | 'pve-9.2',
): { settings: CrsSettings; problems: string[] } {
  const crs = env.getDatacenterSettings().crs ?? {};
  const legacy = profile === 'pve-5.2.0';
  const defaults = legacy ? AUTO_REBALANCE_DEFAULTS_FRACTION : AUTO_REBALANCE_DEFAULTS_PERCENT;
  const problems: string[] = [];
  const num = (key: string, fallback: number, integer = false, range?: { min: number; max: number }): number => {
    const raw = (crs as Record<string, unknown>)[key];
    if (raw === undefined || raw === null) return fallback;
    if (legacy) {
      const value = perlNumber(raw);
      if (!Number.isFinite(value)) return fallback;
      // within what the balancer pipeline accepts (no negative threshold, margin or count, a
      // count of at most 2^53−1), so that no setting stops a round; the simulator's loader
      // refuses such values before they get here
      return integer ? Math.min(Math.max(0, Math.ceil(value)), Number.MAX_SAFE_INTEGER) : Math.max(0, value);
    }
    if (raw === '') return fallback;
    const value = typeof raw === 'number' || typeof raw === 'string' ? Number(raw) : NaN;
    if (!Number.isFinite(value) || (integer && (!Number.isSafeInteger(value) || value < 0))) {
      problems.push(
        `datacenter.cfg: invalid value ${shownSetting(raw)} for 'crs.${key}', using the default ${fallback}`,
      );
      return fallback;
    }
    if (range && (value < range.min || value > range.max)) {
      problems.push(
        `datacenter.cfg: invalid value ${shownSetting(raw)} for 'crs.${key}' (percent, ${range.min} to ${range.max}), using the default ${fallback}`,
      );
      return fallback;
    }
    return value;
  };
  const mode = crs.ha;
  const method = crs['ha-auto-rebalance-method'];
  let variant = VARIANT_OFF;
  if (!legacy) {
    const read = readVariantSettings(crs);
    variant = read.settings;
    problems.push(...read.problems);
  }
  return {
    settings: {
      scheduler: perlTrue(mode) ? String(mode) : 'basic',
      rebalanceOnRequestStart: perlTrue(crs['ha-rebalance-on-start']),
      autoRebalance: perlTrue(crs['ha-auto-rebalance']),
      threshold: num('ha-auto-rebalance-threshold', defaults.threshold, false, AUTO_REBALANCE_PERCENT_RANGE),
      method: method === undefined || method === null ? 'bruteforce' : String(method),
      holdRounds: num('ha-auto-rebalance-hold-duration', AUTO_REBALANCE_DEFAULT_HOLD_ROUNDS, true),
      margin: num('ha-auto-rebalance-margin', defaults.margin, false, AUTO_REBALANCE_PERCENT_RANGE),
      variant,
    },
    problems,
  };
}
