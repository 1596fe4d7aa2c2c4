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

export function readCrsSettings(env: Env, profile: 'pve-5.2.0' | 'pve-9.2'): CrsSettings {
  const crs = env.getDatacenterSettings().crs ?? {};
  const defaults = profile === 'pve-5.2.0' ? AUTO_REBALANCE_DEFAULTS_FRACTION : AUTO_REBALANCE_DEFAULTS_PERCENT;
  return {
    scheduler: (crs.ha as string | undefined) ?? 'basic',
    rebalanceOnRequestStart: perlTrue(crs['ha-rebalance-on-start']),
    autoRebalance: perlTrue(crs['ha-auto-rebalance']),
    threshold: Number(crs['ha-auto-rebalance-threshold'] ?? defaults.threshold),
    method: (crs['ha-auto-rebalance-method'] as string | undefined) ?? 'bruteforce',
    holdRounds: Number(crs['ha-auto-rebalance-hold-duration'] ?? AUTO_REBALANCE_DEFAULT_HOLD_ROUNDS),
    margin: Number(crs['ha-auto-rebalance-margin'] ?? defaults.margin),
  };
}
