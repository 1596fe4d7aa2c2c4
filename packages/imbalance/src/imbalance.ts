/**
 * Node imbalance metrics (spec §4.3), computed in the reference's float operation order:
 * the sum folds left to right from 0, the squared differences `(l - mean) * (l - mean)` fold
 * left to right from 0, the standard deviation is the population one.
 */

/**
 * Which imbalance metric is in force: `raw` is the coefficient of variation of
 * proxmox-resource-scheduling 2.0.0 (profile `pve-5.2.0`, range 0..sqrt(n-1)); `normalized`
 * divides it by sqrt(n-1) as 2.1.0 does (profile `pve-9.2`, range 0..1).
 */
export type ImbalanceMetric = 'raw' | 'normalized';

/** Both metrics, for validation and iteration. */
export const IMBALANCE_METRICS: readonly ImbalanceMetric[] = ['raw', 'normalized'];

/**
 * Raw coefficient of variation of the node loads: population standard deviation / mean.
 * 0 for fewer than 2 loads or a zero load sum. Loads are ratios (usually 0..1, >1 when
 * overcommitted); lower is better balanced.
 */
export function rawCv(loads: ArrayLike<number>): number {
  const n = loads.length;
  if (n < 2) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += loads[i]!;
  if (sum === 0) return 0;
  const mean = sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const d = loads[i]! - mean;
    squares += d * d;
  }
  const sd = Math.sqrt(squares / n);
  return sd / mean;
}

/**
 * Normalised imbalance: {@link rawCv} / sqrt(n-1), in 0..1 for non-negative loads
 * (1 = all load on one node). 0 for fewer than 2 loads or a zero load sum.
 */
export function normalizedImbalance(loads: ArrayLike<number>): number {
  const n = loads.length;
  if (n < 2) return 0;
  return rawCv(loads) / Math.sqrt(n - 1);
}

/** The imbalance of `loads` under `metric` (see {@link ImbalanceMetric}). */
export function imbalance(loads: ArrayLike<number>, metric: ImbalanceMetric): number {
  return metric === 'raw' ? rawCv(loads) : normalizedImbalance(loads);
}

/**
 * The imbalance of `loads` with up to two positions replaced (`i` by `li`, then `j` by
 * `lj`; pass `j = -1` for one replacement), folded exactly like {@link imbalance} over the
 * modified array but without copying it. O(n).
 */
export function imbalanceWithReplaced(
  loads: ArrayLike<number>,
  metric: ImbalanceMetric,
  i: number,
  li: number,
  j: number,
  lj: number,
): number {
  const n = loads.length;
  if (n < 2) return 0;
  let sum = 0;
  for (let k = 0; k < n; k++) sum += k === j ? lj : k === i ? li : loads[k]!;
  if (sum === 0) return 0;
  const mean = sum / n;
  let squares = 0;
  for (let k = 0; k < n; k++) {
    const d = (k === j ? lj : k === i ? li : loads[k]!) - mean;
    squares += d * d;
  }
  const cv = Math.sqrt(squares / n) / mean;
  return metric === 'raw' ? cv : cv / Math.sqrt(n - 1);
}
