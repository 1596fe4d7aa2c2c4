import { TopsisError } from './errors';
import { exponentOf, scaleByPow2 } from '@poise/imbalance';

/**
 * One criterion as data: a `name` (for errors and explanations) and a `weight` whose
 * absolute value is its importance; a negative weight means the criterion is minimised
 * (lower values are better), a positive one that it is maximised.
 */
export interface Criterion {
  readonly name: string;
  readonly weight: number;
}

/** Criteria after validation: weights normalised by the sum of their absolute values. */
export interface Criteria {
  readonly names: readonly string[];
  /** |weight| / Σ|weight|, summed left to right from 0 (e.g. 1, 2, 5, 10 → w/18). */
  readonly weights: Float64Array;
  /** 1 where the criterion is maximised, 0 where it is minimised. */
  readonly maximize: Uint8Array;
}

/**
 * Below this sum of squares (per value) a column's 2-norm may have lost bits to subnormal
 * squares: those add at most 2^-1075 each, a relative 2^-106 of a sum above 2^-969 per value.
 */
const SAFE_MIN_SQUARES_PER_VALUE = 2 ** -969;
/**
 * Below this d_best² + d_worst² (per criterion) the distances may have lost bits to subnormal
 * squares; above it their error is below 2^-87 of the larger distance, so the score is exact to
 * the last bits. Ordinary scores never come near it (components are ≥ 1e-20 or exactly 0).
 */
const SAFE_MIN_DISTANCE_SQUARES_PER_CRITERION = 2 ** -900;

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/** A value for an error message: numbers as they print, anything else with its type. */
function shown(value: unknown): string {
  return typeof value === 'number' ? String(value) : `${describe(value)} ${JSON.stringify(value) ?? String(value)}`;
}

/**
 * Validates and normalises criteria (like `Criteria::new` of the reference): a non-empty array
 * of `{ name, weight }` with distinct non-empty names and finite weights, at least one non-zero.
 * The weights are divided by Σ|w| folded left to right; if that sum overflows (weights near
 * `Number.MAX_VALUE`), by the same sum over the weights scaled by a power of two, so the result
 * is always finite.
 */
export function defineCriteria(criteria: readonly Criterion[]): Criteria {
  // checked through an `unknown` copy: Array.isArray would narrow the typed array itself to any[]
  const given: unknown = criteria;
  if (!Array.isArray(given))
    throw new TopsisError('invalid-criteria', `criteria: expected an array, got ${describe(criteria)}`);
  if (criteria.length === 0) throw new TopsisError('no-criteria', 'no criteria given');
  const seen = new Set<string>();
  let sum = 0;
  let largest = 0;
  criteria.forEach((c, j) => {
    const name = (c as Partial<Criterion> | null)?.name;
    if (typeof name !== 'string' || name === '') {
      throw new TopsisError(
        'invalid-criteria',
        `criteria[${j}].name: expected a non-empty string, got ${describe(name)}`,
      );
    }
    if (seen.has(name))
      throw new TopsisError('duplicate-criterion', `criteria[${j}].name: criterion '${name}' is defined twice`);
    seen.add(name);
    if (typeof c.weight !== 'number' || !Number.isFinite(c.weight)) {
      throw new TopsisError(
        'invalid-weight',
        `criteria[${j}].weight: criterion '${name}' has a non-finite weight ${shown(c.weight)}`,
      );
    }
    const w = Math.abs(c.weight);
    sum += w;
    if (w > largest) largest = w;
  });
  if (sum === 0) throw new TopsisError('zero-weights', 'all criteria weights are zero');
  const weights = new Float64Array(criteria.length);
  const maximize = new Uint8Array(criteria.length);
  if (sum < Infinity) {
    criteria.forEach((c, j) => {
      weights[j] = Math.abs(c.weight) / sum;
    });
  } else {
    const shift = -exponentOf(largest);
    let scaledSum = 0;
    for (const c of criteria) scaledSum += scaleByPow2(Math.abs(c.weight), shift);
    criteria.forEach((c, j) => {
      weights[j] = scaleByPow2(Math.abs(c.weight), shift) / scaledSum;
    });
  }
  criteria.forEach((c, j) => {
    maximize[j] = c.weight > 0 ? 1 : 0;
  });
  return { names: Object.freeze(criteria.map((c) => c.name)), weights, maximize };
}

/**
 * Checks criteria given to the scoring functions (they may be built by hand or changed after
 * {@link defineCriteria}): as many names, weights and directions, at least one, weights finite
 * and >= 0 (only their ratios matter to the score). O(criteria), once per call.
 */
function checkCriteria(criteria: Criteria): number {
  const cols = (criteria as Partial<Criteria> | null)?.weights?.length;
  if (typeof cols !== 'number')
    throw new TopsisError('invalid-criteria', 'criteria: expected the result of defineCriteria');
  if (cols === 0) throw new TopsisError('no-criteria', 'no criteria given');
  if (criteria.names?.length !== cols || criteria.maximize?.length !== cols) {
    throw new TopsisError(
      'invalid-criteria',
      `criteria: ${cols} weights but ${String(criteria.names?.length)} names and ${String(criteria.maximize?.length)} directions`,
    );
  }
  for (let j = 0; j < cols; j++) {
    const w = criteria.weights[j]!;
    if (!(w >= 0 && w < Infinity)) {
      throw new TopsisError(
        'invalid-weight',
        `criteria.weights[${j}]: criterion '${criteria.names[j]}' has weight ${String(w)}, expected a finite number >= 0`,
      );
    }
  }
  return cols;
}

/**
 * A decision matrix in row-major order: `rows` alternatives × `cols` criteria.
 * The hot-path form; {@link scoreAlternatives} accepts plain nested arrays.
 */
export interface FlatMatrix {
  readonly data: Float64Array;
  readonly rows: number;
  readonly cols: number;
}

/**
 * Converts nested rows to a {@link FlatMatrix}, rejecting ragged rows (`ragged-matrix`) and
 * values that are not finite numbers (`non-finite-value`, naming `rows[i][j]`).
 */
export function toFlatMatrix(criteria: Criteria, rows: readonly (readonly number[])[]): FlatMatrix {
  const cols = checkCriteria(criteria);
  if (!Array.isArray(rows))
    throw new TopsisError('invalid-argument', `rows: expected an array of alternatives, got ${describe(rows)}`);
  const data = new Float64Array(rows.length * cols);
  rows.forEach((row, i) => {
    if (!Array.isArray(row))
      throw new TopsisError(
        'invalid-argument',
        `rows[${i}]: expected an array of ${cols} values, got ${describe(row)}`,
      );
    if (row.length !== cols) {
      throw new TopsisError('ragged-matrix', `alternative ${i} has ${row.length} values, expected ${cols}`);
    }
    for (let j = 0; j < cols; j++) {
      const v: unknown = row[j];
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        throw new TopsisError(
          'non-finite-value',
          `rows[${i}][${j}]: alternative ${i} has the value ${shown(v)} for criterion '${criteria.names[j]}', expected a finite number`,
        );
      }
      data[i * cols + j] = v;
    }
  });
  return { data, rows: rows.length, cols };
}

/**
 * Scores a flat matrix in place of `out` (length `rows`), reference operation order
 * (spec §4.5):
 * 1. each column j is divided by sqrt(Σ_i x_ij²) (fold from 0 over the rows), unless that is 0;
 * 2. best/worst per column = min/max (minimised) or max/min (maximised);
 * 3. d_best = sqrt(Σ_j (w_j·(x_j − best_j))²), d_worst likewise (fold over the criteria);
 * 4. score = d_worst / (d_best + d_worst), or 0 when that divisor is 0.
 * Scores are in [0, 1], **higher is better**. `data` is normalised in place. `work` is optional
 * scratch space (length >= 2·cols) reused instead of allocating.
 *
 * Any finite values give finite scores: where a sum of squares of steps 1 or 3 would overflow
 * (values near 1e154 and above) or lose its bits to underflow (a column, or a row's weighted
 * differences, all below about 1e-146), that norm is computed over the values scaled by a power
 * of two instead (the same result as the plain fold on values of ordinary size, so a column
 * of tiny non-zero values is normalised, not left as it is). The plain fold is kept bit for bit
 * everywhere else.
 * Throws {@link TopsisError}: `non-finite-value` on a NaN/infinite value (naming alternative and
 * criterion), `ragged-matrix` when `cols` is not the criteria's count, `invalid-argument` for a
 * malformed matrix or a too short `out`, `invalid-criteria`/`invalid-weight` for bad criteria.
 */
export function scoreFlatInPlace(
  criteria: Criteria,
  matrix: FlatMatrix,
  out: Float64Array,
  work?: Float64Array,
): Float64Array {
  const expected = checkCriteria(criteria);
  const { data, rows, cols } = matrix;
  const { weights, maximize } = criteria;
  if (cols !== expected) {
    throw new TopsisError('ragged-matrix', `matrix has ${cols} columns, expected ${expected}`);
  }
  if (!Number.isInteger(rows) || rows < 0)
    throw new TopsisError('invalid-argument', `matrix.rows: expected an integer >= 0, got ${String(rows)}`);
  if (!(data?.length >= rows * cols)) {
    throw new TopsisError(
      'invalid-argument',
      `matrix.data: ${rows} × ${cols} values expected, got ${String(data?.length)}`,
    );
  }
  if (!(out?.length >= rows))
    throw new TopsisError('invalid-argument', `out: room for ${rows} scores expected, got ${String(out?.length)}`);
  if (rows === 0) return out;
  // the ideal points; `work` (length >= 2·cols) spares the allocation on hot paths
  const space = work !== undefined && work.length >= 2 * cols ? work : new Float64Array(2 * cols);
  // best_j at space[j], worst_j at space[cols + j]
  const safeSquares = rows * SAFE_MIN_SQUARES_PER_VALUE;
  for (let j = 0; j < cols; j++) {
    let squares = 0;
    for (let i = 0; i < rows; i++) {
      const x = data[i * cols + j]!;
      if (!Number.isFinite(x)) {
        throw new TopsisError(
          'non-finite-value',
          `alternative ${i} has a non-finite value ${String(x)} for criterion '${criteria.names[j]}'`,
        );
      }
      squares += x * x;
    }
    let min = Infinity;
    let max = -Infinity;
    if (squares < Infinity && squares >= safeSquares) {
      const divisor = Math.sqrt(squares);
      for (let i = 0; i < rows; i++) {
        const k = i * cols + j;
        const v = data[k]! / divisor;
        data[k] = v;
        if (totalLess(v, min)) min = v;
        if (totalLess(max, v)) max = v;
      }
    } else {
      normalizeScaled(data, rows, cols, j);
      for (let i = 0; i < rows; i++) {
        const v = data[i * cols + j]!;
        if (totalLess(v, min)) min = v;
        if (totalLess(max, v)) max = v;
      }
    }
    space[j] = maximize[j] ? max : min;
    space[cols + j] = maximize[j] ? min : max;
  }
  const safeDistance = cols * SAFE_MIN_DISTANCE_SQUARES_PER_CRITERION;
  for (let i = 0; i < rows; i++) {
    let dBest = 0;
    let dWorst = 0;
    for (let j = 0; j < cols; j++) {
      const x = data[i * cols + j]!;
      const b = weights[j]! * (x - space[j]!);
      const w = weights[j]! * (x - space[cols + j]!);
      dBest += b * b;
      dWorst += w * w;
    }
    const total = dBest + dWorst;
    if (total < Infinity && total >= safeDistance) {
      dBest = Math.sqrt(dBest);
      dWorst = Math.sqrt(dWorst);
      const divisor = dBest + dWorst;
      out[i] = divisor === 0 ? 0 : dWorst / divisor;
    } else if (total === 0 && atBothIdeals(data, i * cols, cols, space)) {
      out[i] = 0; // identical alternatives: both distances exactly 0, as in the plain fold
    } else {
      out[i] = scaledScore(data, i * cols, cols, weights, space);
    }
  }
  return out;
}

/**
 * Normalises column `j` by its 2-norm computed over the values scaled by the power of two that
 * brings the largest magnitude into [1, 2): no overflow (the scaled sum is at most 4·rows), no
 * underflow that matters (a scaled square below 2^-1022 is negligible against the largest, ≥ 1).
 * An all-zero column stays as it is, like the reference's.
 */
function normalizeScaled(data: Float64Array, rows: number, cols: number, j: number): void {
  let largest = 0;
  for (let i = 0; i < rows; i++) largest = Math.max(largest, Math.abs(data[i * cols + j]!));
  if (largest === 0) return;
  const shift = -exponentOf(largest);
  let squares = 0;
  for (let i = 0; i < rows; i++) {
    const x = scaleByPow2(data[i * cols + j]!, shift);
    squares += x * x;
  }
  const divisor = Math.sqrt(squares);
  for (let i = 0; i < rows; i++) {
    const k = i * cols + j;
    data[k] = scaleByPow2(data[k]!, shift) / divisor;
  }
}

/**
 * The score of the row at `offset` with both distances computed from components scaled by the
 * power of two of the largest one: each component w_j·|x_j − ideal_j| is taken as the product
 * of its two factors' mantissas times 2^(sum of their exponents), so neither the product nor its
 * square underflows or overflows before the scaling. Both distances share the scale, which
 * cancels in d_worst / (d_best + d_worst); when every component is 0 the score is 0.
 */
function scaledScore(
  data: Float64Array,
  offset: number,
  cols: number,
  weights: Float64Array,
  space: Float64Array,
): number {
  let top = -Infinity;
  for (let j = 0; j < cols; j++) {
    const w = weights[j]!;
    const x = data[offset + j]!;
    const toBest = Math.abs(x - space[j]!);
    const toWorst = Math.abs(x - space[cols + j]!);
    // identical alternatives (every difference 0) are the common case here: no exponent work
    if (w === 0 || (toBest === 0 && toWorst === 0)) continue;
    const ew = exponentOf(w);
    if (toBest !== 0) top = Math.max(top, ew + exponentOf(toBest));
    if (toWorst !== 0) top = Math.max(top, ew + exponentOf(toWorst));
  }
  if (top === -Infinity) return 0;
  let dBest = 0;
  let dWorst = 0;
  for (let j = 0; j < cols; j++) {
    const w = weights[j]!;
    if (w === 0) continue;
    const x = data[offset + j]!;
    const b = scaledProduct(w, Math.abs(x - space[j]!), top);
    const v = scaledProduct(w, Math.abs(x - space[cols + j]!), top);
    dBest += b * b;
    dWorst += v * v;
  }
  dBest = Math.sqrt(dBest);
  dWorst = Math.sqrt(dWorst);
  return dWorst / (dBest + dWorst);
}

/** Whether the row at `offset` equals the best and the worst point in every column. */
function atBothIdeals(data: Float64Array, offset: number, cols: number, space: Float64Array): boolean {
  for (let j = 0; j < cols; j++) {
    const x = data[offset + j]!;
    if (x !== space[j] || x !== space[cols + j]) return false;
  }
  return true;
}

/** a·b·2^-top for a, b >= 0 finite: the mantissas' product (in [1, 4)) times 2^(ea + eb − top). */
function scaledProduct(a: number, b: number, top: number): number {
  if (a === 0 || b === 0) return 0;
  const ea = exponentOf(a);
  const eb = exponentOf(b);
  return scaleByPow2(scaleByPow2(a, -ea) * scaleByPow2(b, -eb), ea + eb - top);
}

/** `a < b` in IEEE total order for finite values (−0 before +0), like Rust's `total_cmp`. */
function totalLess(a: number, b: number): boolean {
  return a < b || (a === 0 && b === 0 && Object.is(a, -0) && !Object.is(b, -0));
}

/** Scores nested rows (see {@link scoreFlatInPlace}); the input is not modified. */
export function scoreAlternatives(criteria: Criteria, rows: readonly (readonly number[])[]): number[] {
  const matrix = toFlatMatrix(criteria, rows);
  return Array.from(scoreFlatInPlace(criteria, matrix, new Float64Array(matrix.rows)));
}

/**
 * Indices of `scores` stably sorted by score descending (ties keep their input order), like
 * the reference's `rank_alternatives`. Scores must be finite numbers (`non-finite-value`
 * naming `scores[i]` otherwise); any finite values are ranked, −0 after +0.
 */
export function rankScores(scores: ArrayLike<number>): number[] {
  const n = (scores as { length?: unknown } | null | undefined)?.length;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw new TopsisError('invalid-argument', `scores: expected an array of numbers, got ${describe(scores)}`);
  }
  for (let i = 0; i < n; i++) {
    const s: unknown = scores[i];
    if (typeof s !== 'number' || !Number.isFinite(s)) {
      throw new TopsisError('non-finite-value', `scores[${i}]: expected a finite number, got ${shown(s)}`);
    }
  }
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => {
    const sa = scores[a]!;
    const sb = scores[b]!;
    if (totalLess(sb, sa)) return -1;
    if (totalLess(sa, sb)) return 1;
    return a - b;
  });
  return order;
}

/** Ranks nested rows: indices best first (see {@link scoreAlternatives}, {@link rankScores}). */
export function rankAlternatives(criteria: Criteria, rows: readonly (readonly number[])[]): number[] {
  return rankScores(scoreAlternatives(criteria, rows));
}
