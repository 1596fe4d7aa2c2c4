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
 * Reads the `crs` settings. A numeric setting that is not a finite number (or a hold
 * duration that is not a non-negative integer) falls back to its default and is reported in
 * `problems` (field named), so a typo never turns into a NaN threshold.
 */
export function readCrsSettings(
  env: Env,
  profile: 'pve-5.2.0' | 'pve-9.2',
): { settings: CrsSettings; problems: string[] } {
  const crs = env.getDatacenterSettings().crs ?? {};
  const defaults = profile === 'pve-5.2.0' ? AUTO_REBALANCE_DEFAULTS_FRACTION : AUTO_REBALANCE_DEFAULTS_PERCENT;
  const problems: string[] = [];
  const num = (key: string, fallback: number, integer = false): number => {
    const raw = crs[key];
    if (raw === undefined || raw === null || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || (integer && (!Number.isInteger(value) || value < 0))) {
      problems.push(`datacenter.cfg: invalid value '${String(raw)}' for 'crs.${key}', using the default ${fallback}`);
      return fallback;
    }
    return value;
  };
  return {
    settings: {
      scheduler: (crs.ha as string | undefined) ?? 'basic',
      rebalanceOnRequestStart: perlTrue(crs['ha-rebalance-on-start']),
      autoRebalance: perlTrue(crs['ha-auto-rebalance']),
      threshold: num('ha-auto-rebalance-threshold', defaults.threshold),
      method: (crs['ha-auto-rebalance-method'] as string | undefined) ?? 'bruteforce',
      holdRounds: num('ha-auto-rebalance-hold-duration', AUTO_REBALANCE_DEFAULT_HOLD_ROUNDS, true),
      margin: num('ha-auto-rebalance-margin', defaults.margin),
    },
    problems,
  };
}
