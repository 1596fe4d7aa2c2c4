/**
 * Node imbalance metrics (spec §4.3), computed in the reference's float operation order:
 * the sum folds left to right from 0, the squared differences `(l - mean) * (l - mean)` fold
 * left to right from 0, the standard deviation is the population one.
 *
 * That plain fold is used whenever it is safe, which covers every load a real cluster has
 * (a mean load of at least 2^-400 ≈ 3.9e-121 and sums below Number.MAX_VALUE). When it would
 * overflow (loads near 1e154 and above) or lose its squares to underflow (means in the
 * subnormal range), the same fold runs over the loads scaled by a power of two that brings the
 * largest load into [1, 2): the coefficient of variation does not change under scaling, and
 * the scaled fold neither overflows nor underflows. So every finite input gives a finite result.
 */
import { ImbalanceError } from './errors';
import { exponentOf, scaleByPow2 } from './scale';

/**
 * Which imbalance metric is in force: `raw` is the coefficient of variation of
 * proxmox-resource-scheduling 2.0.0 (profile `pve-5.2.0`, range 0..sqrt(n-1)); `normalized`
 * divides it by sqrt(n-1) as 2.1.0 does (profile `pve-9.2`, range 0..1).
 */
export type ImbalanceMetric = 'raw' | 'normalized';

/**
 * Below this mean load the plain fold may lose precision to subnormal squares: two distinct
 * floats near a mean m differ by at least m·2^-54, so with m ≥ 2^-400 every non-zero squared
 * deviation is ≥ 2^-908, a normal number rounded relatively.
 */
const SAFE_MIN_MEAN = 2 ** -400;
/**
 * With a smaller mean the plain fold is still safe when the sum of squares is at least
 * n·2^-969: the squares that underflowed then add at most n·2^-1075, a relative 2^-106.
 */
const SAFE_MIN_SQUARES_PER_LOAD = 2 ** -969;

/** Returned by the plain folds when they are not safe (never a valid coefficient of variation). */
const UNSAFE = -1;

/** Throws unless `metric` is one of {@link IMBALANCE_METRICS}. */
export function checkMetric(metric: unknown, where: string): asserts metric is ImbalanceMetric {
  if (metric !== 'raw' && metric !== 'normalized') {
    throw new ImbalanceError(
      'invalid-metric',
      `${where}: unknown imbalance metric '${String(metric)}', expected 'raw' or 'normalized'`,
    );
  }
}

/** The length of an array-like of loads, or an error naming `where`. */
function lengthOf(loads: ArrayLike<number>, where: string): number {
  const n = (loads as { length?: unknown } | null | undefined)?.length;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw new ImbalanceError('invalid-argument', `${where}: expected an array of loads, got ${describe(loads)}`);
  }
  return n;
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/** The error for a load that is not a finite number >= 0. */
export function invalidLoad(value: unknown, where: string): ImbalanceError {
  const shown = typeof value === 'number' ? String(value) : `${typeof value} ${JSON.stringify(value) ?? String(value)}`;
  return new ImbalanceError('invalid-load', `invalid load ${shown} at ${where}: expected a finite number >= 0`);
}

/** Whether `value` is a valid load: a finite number >= 0. */
export function isLoad(value: unknown): value is number {
  return typeof value === 'number' && value >= 0 && value < Infinity;
}

/**
 * Raw coefficient of variation of the node loads: population standard deviation / mean.
 * 0 for fewer than 2 loads or a zero load sum. Loads are ratios (usually 0..1, >1 when
 * overcommitted), each a finite number >= 0 (else {@link ImbalanceError} `invalid-load`,
 * naming the index); lower is better balanced. Finite for every valid input.
 */
export function rawCv(loads: ArrayLike<number>): number {
  const n = lengthOf(loads, 'loads');
  const cv = plainCv(loads, n);
  return cv !== UNSAFE ? cv : scaledCv(loads, n, -1, 0, -1, 0);
}

/**
 * The plain fold of spec §4.3 over `loads`, validating them on the way; {@link UNSAFE} when
 * the fold overflowed or may have lost its squares to underflow.
 */
function plainCv(loads: ArrayLike<number>, n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const x = loads[i]!;
    if (typeof x !== 'number' || !(x >= 0)) throw invalidLoad(x, `loads[${i}]`);
    sum += x;
  }
  if (!(sum < Infinity)) {
    for (let i = 0; i < n; i++) if (loads[i] === Infinity) throw invalidLoad(Infinity, `loads[${i}]`);
    return n < 2 ? 0 : UNSAFE;
  }
  if (n < 2 || sum === 0) return 0;
  const mean = sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const d = loads[i]! - mean;
    squares += d * d;
  }
  if (!(squares < Infinity) || (mean < SAFE_MIN_MEAN && squares < n * SAFE_MIN_SQUARES_PER_LOAD)) return UNSAFE;
  return Math.sqrt(squares / n) / mean;
}

/**
 * The plain fold over the (already validated) loads with up to two positions replaced, scaled by
 * the power of two that brings the largest load into [1, 2). The scaled fold is always safe: its
 * mean is at least 1/n and its squares at most 4n.
 */
function scaledCv(loads: ArrayLike<number>, n: number, i: number, li: number, j: number, lj: number): number {
  const scaled = new Float64Array(n);
  let max = 0;
  for (let k = 0; k < n; k++) {
    const x = k === j ? lj : k === i ? li : loads[k]!;
    scaled[k] = x;
    if (x > max) max = x;
  }
  if (max === 0) return 0;
  const shift = -exponentOf(max);
  for (let k = 0; k < n; k++) scaled[k] = scaleByPow2(scaled[k]!, shift);
  return plainCv(scaled, n);
}

/**
 * Normalised imbalance: {@link rawCv} / sqrt(n-1), in 0..1 for non-negative loads
 * (1 = all load on one node). 0 for fewer than 2 loads or a zero load sum.
 */
export function normalizedImbalance(loads: ArrayLike<number>): number {
  const cv = rawCv(loads);
  const n = loads.length;
  return n < 2 ? cv : cv / Math.sqrt(n - 1);
}

/**
 * The imbalance of `loads` under `metric` (see {@link ImbalanceMetric}); an unknown metric is
 * an {@link ImbalanceError} `invalid-metric`.
 */
export function imbalance(loads: ArrayLike<number>, metric: ImbalanceMetric): number {
  checkMetric(metric, 'metric');
  return metric === 'raw' ? rawCv(loads) : normalizedImbalance(loads);
}

/**
 * The imbalance of `loads` with up to two positions replaced (`i` by `li`, then `j` by
 * `lj`; pass `j = -1` for one replacement, `lj` is then ignored), folded exactly like
 * {@link imbalance} over the modified array but without copying it. O(n).
 * `i` must be an index of `loads`, `j` -1 or another index (`i === j` is an
 * `invalid-argument`: combine the two changes first); `li`, `lj` and the loads that are not
 * replaced must be finite and >= 0 (the replaced positions are not read).
 */
export function imbalanceWithReplaced(
  loads: ArrayLike<number>,
  metric: ImbalanceMetric,
  i: number,
  li: number,
  j: number,
  lj: number,
): number {
  checkMetric(metric, 'metric');
  const n = lengthOf(loads, 'loads');
  checkReplacement(n, i, li, j, lj);
  let cv = plainReplacedCv(loads, n, i, li, j, lj);
  if (cv === UNSAFE) cv = scaledCv(loads, n, i, li, j, lj);
  return metric === 'raw' || n < 2 ? cv : cv / Math.sqrt(n - 1);
}

/** Validates the replacement arguments of {@link imbalanceWithReplaced}. */
function checkReplacement(n: number, i: number, li: number, j: number, lj: number): void {
  if (!Number.isInteger(i) || i < 0 || i >= n) {
    throw new ImbalanceError('index-out-of-range', `replaced index i = ${String(i)} out of range 0..${n - 1}`);
  }
  if (!isLoad(li)) throw invalidLoad(li, `the replacement li of index ${i}`);
  if (j === -1) return;
  if (!Number.isInteger(j) || j < 0 || j >= n) {
    throw new ImbalanceError(
      'index-out-of-range',
      `replaced index j = ${String(j)} out of range 0..${n - 1} (or -1 for none)`,
    );
  }
  if (j === i)
    throw new ImbalanceError(
      'invalid-argument',
      `replaced indices i and j are both ${i}: combine the two changes first`,
    );
  if (!isLoad(lj)) throw invalidLoad(lj, `the replacement lj of index ${j}`);
}

/** {@link plainCv} over `loads` with positions i and j replaced (arguments already checked). */
function plainReplacedCv(loads: ArrayLike<number>, n: number, i: number, li: number, j: number, lj: number): number {
  let sum = 0;
  for (let k = 0; k < n; k++) {
    const x = k === j ? lj : k === i ? li : loads[k]!;
    if (typeof x !== 'number' || !(x >= 0)) throw invalidLoad(x, `loads[${k}]`);
    sum += x;
  }
  if (!(sum < Infinity)) {
    for (let k = 0; k < n; k++)
      if (k !== i && k !== j && loads[k] === Infinity) throw invalidLoad(Infinity, `loads[${k}]`);
    return n < 2 ? 0 : UNSAFE;
  }
  if (n < 2 || sum === 0) return 0;
  const mean = sum / n;
  let squares = 0;
  for (let k = 0; k < n; k++) {
    const d = (k === j ? lj : k === i ? li : loads[k]!) - mean;
    squares += d * d;
  }
  if (!(squares < Infinity) || (mean < SAFE_MIN_MEAN && squares < n * SAFE_MIN_SQUARES_PER_LOAD)) return UNSAFE;
  return Math.sqrt(squares / n) / mean;
}
