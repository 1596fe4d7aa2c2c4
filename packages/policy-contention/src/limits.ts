/** The contention stages' thresholds, each with why it has its value. */
import { PolicyError } from '@poise/policy';

/**
 * A node has contention when its PSI some avg10 reaches these (percent): the gate's floor. Below
 * both on every node nothing waits enough for a move to spare anything (an idle cluster
 * reports 0.3–2.1 % cpu in the seed's field data).
 */
export const CONTENTION_FLOOR = { cpuPercent: 5, memPercent: 2 } as const;

/**
 * A node is saturated when its PSI some avg10 reaches these (percent): its work waits for cpu
 * close to half of the time, or for memory a fifth of it (memory stalls are the more severe).
 * With every node saturated no move can help: the cluster needs more capacity.
 */
export const SATURATED = { cpuPercent: 40, memPercent: 20 } as const;

/**
 * A move must spare at least this many guest-seconds over the horizon, net of its cost: 5 % of
 * one guest's time over the default 600 s. Below it the prediction's own error (a few points
 * of pressure on a handful of guests) would decide.
 */
export const MIN_GAIN_SECONDS = 30;

/** `value` when it is a valid minimum saving (a finite number ≥ 0), else `PolicyError` `invalid-config`. */
export function checkMinGainSeconds(value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new PolicyError(
      'invalid-config',
      `contention minGainSeconds must be a finite number >= 0, got '${String(value)}'`,
    );
  return value;
}

/**
 * A move is predicted to relieve its source when the source's cpu pressure falls by at least
 * this (percentage points): the noise the lab's model families add (±1 pp) and below what a
 * guest's share of a busy node changes.
 */
export const PREDICTED_FALL_POINTS = 1;

/** How many moves the contention scorer hands on, best first (as many as `select-cost` compares). */
export const CONTENTION_SCORE_LIMIT = 16;
