import { TopsisError } from './errors';

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
 * Validates and normalises criteria (like `Criteria::new` of the reference): weights must be
 * finite and at least one non-zero.
 */
export function defineCriteria(criteria: readonly Criterion[]): Criteria {
  if (criteria.length === 0) throw new TopsisError('no-criteria', 'no criteria given');
  let sum = 0;
  for (const c of criteria) {
    if (!Number.isFinite(c.weight)) {
      throw new TopsisError('invalid-weight', `criterion '${c.name}' has a non-finite weight ${String(c.weight)}`);
    }
    sum += Math.abs(c.weight);
  }
  if (sum === 0) throw new TopsisError('zero-weights', 'all criteria weights are zero');
  const weights = new Float64Array(criteria.length);
  const maximize = new Uint8Array(criteria.length);
  criteria.forEach((c, j) => {
    weights[j] = Math.abs(c.weight) / sum;
    maximize[j] = c.weight > 0 ? 1 : 0;
  });
  return { names: criteria.map((c) => c.name), weights, maximize };
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

/** Converts nested rows to a {@link FlatMatrix}, rejecting ragged rows and non-finite values. */
export function toFlatMatrix(criteria: Criteria, rows: readonly (readonly number[])[]): FlatMatrix {
  const cols = criteria.weights.length;
  const data = new Float64Array(rows.length * cols);
  rows.forEach((row, i) => {
    if (row.length !== cols) {
      throw new TopsisError('ragged-matrix', `alternative ${i} has ${row.length} values, expected ${cols}`);
    }
    for (let j = 0; j < cols; j++) data[i * cols + j] = row[j]!;
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
 * Throws {@link TopsisError} `non-finite-value` on a NaN/infinite input or normalised value.
 */
export function scoreFlatInPlace(criteria: Criteria, matrix: FlatMatrix, out: Float64Array, work?: Float64Array): Float64Array {
  const { data, rows, cols } = matrix;
  const { weights, maximize } = criteria;
  if (cols !== weights.length) {
    throw new TopsisError('ragged-matrix', `matrix has ${cols} columns, expected ${weights.length}`);
  }
  if (rows === 0) return out;
  // the ideal points; `work` (length >= 2·cols) spares the allocation on hot paths
  const space = work !== undefined && work.length >= 2 * cols ? work : new Float64Array(2 * cols);
  // best_j at space[j], worst_j at space[cols + j]
  for (let j = 0; j < cols; j++) {
    let squares = 0;
    for (let i = 0; i < rows; i++) {
      const x = data[i * cols + j]!;
      if (!Number.isFinite(x)) {
        throw new TopsisError('non-finite-value', `alternative ${i} has a non-finite value ${String(x)} for criterion '${criteria.names[j]}'`);
      }
      squares += x * x;
    }
    const divisor = Math.sqrt(squares);
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < rows; i++) {
      const k = i * cols + j;
      const v = divisor !== 0 ? data[k]! / divisor : data[k]!;
      if (!Number.isFinite(v)) {
        throw new TopsisError('non-finite-value', `alternative ${i} normalises to a non-finite value for criterion '${criteria.names[j]}'`);
      }
      data[k] = v;
      if (totalLess(v, min)) min = v;
      if (totalLess(max, v)) max = v;
    }
    space[j] = maximize[j] ? max : min;
    space[cols + j] = maximize[j] ? min : max;
  }
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
    dBest = Math.sqrt(dBest);
    dWorst = Math.sqrt(dWorst);
    const divisor = dBest + dWorst;
    out[i] = divisor === 0 ? 0 : dWorst / divisor;
  }
  return out;
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
 * the reference's `rank_alternatives`.
 */
export function rankScores(scores: ArrayLike<number>): number[] {
  const order = Array.from({ length: scores.length }, (_, i) => i);
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
