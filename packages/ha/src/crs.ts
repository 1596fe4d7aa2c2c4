import type { Env } from '@poise/env';
import { type PolicyRegistry, type PolicySettings, showValue } from '@poise/policy';
import { BUILTIN_REGISTRY } from './plugins';
import { perlTrue } from './tools';

/** Auto-rebalance defaults of the pve-5.2.0 profile (fractions of the imbalance). */
const AUTO_REBALANCE_DEFAULTS_FRACTION = { threshold: 0.3, margin: 0.1 } as const;
/** Auto-rebalance defaults of the pve-9.2 profile (percent of the normalised imbalance). */
const AUTO_REBALANCE_DEFAULTS_PERCENT = { threshold: 30, margin: 10 } as const;
/**
 * The range of `ha-auto-rebalance-threshold` and `-margin` in percent (PVE 9.2's
 * datacenter.cfg schema): a threshold above 100 % could never be exceeded, a margin above
 * 100 % never met. The `pve-9.2` profile falls back to the default for a value outside it;
 * the simulator's case loader refuses one under either profile.
 */
export const AUTO_REBALANCE_PERCENT_RANGE = { min: 0, max: 100 } as const;
/** Consecutive rounds above the threshold before a rebalance fires. */
const AUTO_REBALANCE_DEFAULT_HOLD_ROUNDS = 3;

/** The scheduler modes of `crs.ha` (an unknown one is logged and read as `basic`, as by the reference). */
export const SCHEDULER_MODES = ['basic', 'static', 'dynamic'] as const;

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
   * The settings of the balancer's policy plug-ins (the variant keys of the registry in force:
   * `ha-auto-rebalance-backoff`, `-cooldown`, …, `-objective`, the preset, and the keys of any
   * out-of-tree plug-in), in the units of the `pve-9.2` profile. Under `pve-5.2.0` the reference
   * knows none of these keys: they are ignored there (every stage off) and nothing is logged
   * about them. `variant.active`: some key differs from its default, and the balancer then
   * explains its decisions not to act in the log (on change) and logs its notices; with every
   * key at its default the log is the reference's, byte for byte.
   */
  variant: PolicySettings;
}

/**
 * Reads the variant keys of a registry's plug-ins (see {@link CrsSettings.variant}) from a `crs`
 * section; never throws. A bad value is returned as a problem naming the key (e.g.
 * `datacenter.cfg: invalid value 'abc' for 'crs.ha-auto-rebalance-backoff' (seconds, 0 to 3600), falling back to 0 (off)`)
 * and that stage is off.
 */
function readVariantSettings(
  crs: unknown,
  registry: PolicyRegistry = BUILTIN_REGISTRY,
): { settings: PolicySettings; problems: string[] } {
  const settings = registry.read(crs);
  return { settings, problems: settings.problems.map((p) => p.message) };
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
 * The variant keys are those of `registry`'s plug-ins (default the built-in ones).
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
  registry: PolicyRegistry = BUILTIN_REGISTRY,
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
  let variant = registry.off;
  if (!legacy) {
    const read = readVariantSettings(crs, registry);
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
