import { LOAD_BINS } from './constants';

/**
 * Robust one-dimensional statistics the learner is built on: the median, the weighted median
 * and isotonic (monotone) regression. Plain arrays of finite numbers in, finite numbers out.
 */

/** The median of a non-empty list (the mean of the two middle values for an even count). */
export function median(values: ArrayLike<number>): number {
  // insertion sort into a scratch array: the lists are short (a bin's samples, a curve's points)
  const n = values.length;
  const sorted = n <= SCRATCH.length ? SCRATCH : new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    let j = i;
    while (j > 0 && sorted[j - 1]! > v) {
      sorted[j] = sorted[j - 1]!;
      j--;
    }
    sorted[j] = v;
  }
  const mid = n >> 1;
  return n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Scratch space of {@link median} (its contents never outlive one call). */
const SCRATCH = new Float64Array(64);

/**
 * The weighted median of `values` (weights > 0, same length, non-empty): the smallest value at
 * which the cumulative weight reaches half the total. Minimises `Σ w·|v − m|` over `m`.
 * Deterministic: ties in value keep their order.
 */
export function weightedMedian(values: ArrayLike<number>, weights: ArrayLike<number>): number {
  return weightedMedianOf(values, weights, values.length);
}

/** {@link weightedMedian} of the first `n` values and weights (the fit's scratch arrays, without a view of them per call). */
export function weightedMedianOf(values: ArrayLike<number>, weights: ArrayLike<number>, n: number): number {
  // insertion sort of (value, weight) pairs: the lists are short (a curve's points) and stable
  const v = n <= WEIGHTED_VALUES.length ? WEIGHTED_VALUES : new Float64Array(n);
  const w = n <= WEIGHTED_WEIGHTS.length ? WEIGHTED_WEIGHTS : new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const value = values[i]!;
    const weight = weights[i]!;
    total += weight;
    let j = i;
    while (j > 0 && v[j - 1]! > value) {
      v[j] = v[j - 1]!;
      w[j] = w[j - 1]!;
      j--;
    }
    v[j] = value;
    w[j] = weight;
  }
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += w[i]!;
    if (sum >= total / 2) return v[i]!;
  }
  return v[n - 1]!;
}

/** Scratch space of {@link weightedMedian} (its contents never outlive one call; the fit calls it in its inner loop). */
const WEIGHTED_VALUES = new Float64Array(LOAD_BINS);
const WEIGHTED_WEIGHTS = new Float64Array(LOAD_BINS);

/**
 * Isotonic regression in absolute error (pool adjacent violators with medians): given groups of
 * samples ordered by their abscissa (each group non-empty), the non-decreasing values, one per
 * group, that minimise the summed absolute error of every sample. Violating neighbours are
 * pooled, and a pool's value is the median of all its samples, so one group spoiled by
 * outliers is outvoted by the samples of the groups it is pooled with. O(samples · groups)
 * at worst.
 *
 * Example: groups [[1], [3, 3], [2], [4]] → [1, 3, 3, 4] ([3, 3] and [2] pool to the median 3).
 */
export function isotonicMedians(groups: readonly (readonly number[])[]): number[] {
  return isotonicSortedMedians(groups.map((group) => (group.length === 1 ? group : sortedCopy(group))));
}

/** `values` sorted ascending, a new array. */
export function sortedCopy(values: readonly number[]): number[] {
  return Array.from(Float64Array.from(values).sort());
}

/** {@link isotonicMedians} of groups already sorted ascending (as {@link sortedCopy} sorts them); the groups are not changed. */
export function isotonicSortedMedians(groups: readonly (readonly number[])[]): number[] {
  const blocks: { sorted: readonly number[]; value: number; groups: number }[] = [];
  for (const group of groups) {
    let sorted = group;
    let count = 1;
    let value = median(sorted);
    while (blocks.length > 0 && blocks[blocks.length - 1]!.value > value) {
      const previous = blocks.pop()!;
      sorted = mergeSorted(previous.sorted, sorted);
      count += previous.groups;
      value = median(sorted);
    }
    blocks.push({ sorted, value, groups: count });
  }
  const out: number[] = [];
  for (const b of blocks) for (let k = 0; k < b.groups; k++) out.push(b.value);
  return out;
}

function mergeSorted(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) out.push(j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!);
  return out;
}
