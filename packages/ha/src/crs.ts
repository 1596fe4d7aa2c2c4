import type { Env } from '@poise/env';
import { perlTrue } from './tools';

/** Auto-rebalance defaults of the pve-5.2.0 profile (fractions of the imbalance). */
export const AUTO_REBALANCE_DEFAULTS_FRACTION = { threshold: 0.3, margin: 0.1 } as const;
/** Auto-rebalance defaults of the pve-9.2 profile (percent of the normalised imbalance). */
export const AUTO_REBALANCE_DEFAULTS_PERCENT = { threshold: 30, margin: 10 } as const;
/** Consecutive rounds above the threshold before a rebalance fires. */
export const AUTO_REBALANCE_DEFAULT_HOLD_ROUNDS = 3;

export type SchedulerMode = 'basic' | 'static' | 'dynamic';

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
  const num = (key: string, fallback: number, integer = false): number => {
    const raw = (crs as Record<string, unknown>)[key];
    if (raw === undefined || raw === null) return fallback;
    if (legacy) {
      const value = perlNumber(raw);
      if (!Number.isFinite(value)) return fallback;
      return integer ? Math.max(0, Math.ceil(value)) : value;
    }
    if (raw === '') return fallback;
    const value = typeof raw === 'number' || typeof raw === 'string' ? Number(raw) : NaN;
    if (!Number.isFinite(value) || (integer && (!Number.isInteger(value) || value < 0))) {
      problems.push(`datacenter.cfg: invalid value '${String(raw)}' for 'crs.${key}', using the default ${fallback}`);
      return fallback;
    }
    return value;
  };
  const mode = crs.ha;
  const method = crs['ha-auto-rebalance-method'];
  return {
    settings: {
      scheduler: perlTrue(mode) ? String(mode) : 'basic',
      rebalanceOnRequestStart: perlTrue(crs['ha-rebalance-on-start']),
      autoRebalance: perlTrue(crs['ha-auto-rebalance']),
      threshold: num('ha-auto-rebalance-threshold', defaults.threshold),
      method: method === undefined || method === null ? 'bruteforce' : String(method),
      holdRounds: num('ha-auto-rebalance-hold-duration', AUTO_REBALANCE_DEFAULT_HOLD_ROUNDS, true),
      margin: num('ha-auto-rebalance-margin', defaults.margin),
    },
    problems,
  };
}
