/**
 * The TOPSIS oracle (test support): TOPSIS of spec §4.5 in mathjs 80-digit BigNumbers, the
 * generators of extreme matrices, and the properties that compare the float code with the oracle.
 * The fast tier runs the properties on a sample (extremes.test.ts), the slow tier the rest of the
 * runs (extremes.slow.test.ts).
 */
import fc from 'fast-check';
import { type BigNumber, all, create } from 'mathjs';
import { expect } from 'vitest';
import { type Criteria, defineCriteria, scoreAlternatives, scoreFlatInPlace } from '../index';
import { toFlatMatrix } from '../topsis';

/** Runs of each oracle property in all; the fast tier runs {@link ORACLE_SAMPLE_RUNS} of them. */
export const ORACLE_RUNS = 800;
export const ORACLE_SAMPLE_RUNS = 200;

// mathjs declares its factory sets as one destructured Record, so `all` reads as possibly undefined
const big = create(all!, { number: 'BigNumber', precision: 80 });
type Big = BigNumber;

/** The exact value of a double as an 80-digit BigNumber (a decimal string would round subnormals). */
function exact(x: number): Big {
  if (x === 0) return big.bignumber(0);
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const raw = view.getBigUint64(0);
  const field = Number((raw >> 52n) & 0x7ffn);
  const fraction = raw & ((1n << 52n) - 1n);
  const [mantissa, exponent] = field === 0 ? [fraction, -1074] : [fraction | (1n << 52n), field - 1075];
  const magnitude = big.multiply(big.bignumber(mantissa.toString()), big.pow(big.bignumber(2), exponent) as Big) as Big;
  return x < 0 ? big.unaryMinus<Big>(magnitude) : magnitude;
}

/** The oracle's intermediate results, for the piecewise comparisons. */
interface OracleResult {
  normalized: Big[][];
  best: Big[];
  worst: Big[];
  dBest: Big[];
  dWorst: Big[];
  scores: number[];
}

/** TOPSIS of spec §4.5 in BigNumbers, with mathjs's norm, min/max, subtract and sqrt. */
export function oracleTopsis(criteria: Criteria, rows: readonly (readonly number[])[]): OracleResult {
  const cols = criteria.weights.length;
  const x = rows.map((row) => row.map(exact));
  const weights = Array.from(criteria.weights, exact);
  const normalized: Big[][] = x.map((row) => [...row]);
  const best: Big[] = [];
  const worst: Big[] = [];
  for (let j = 0; j < cols; j++) {
    const column = x.map((row) => row[j]!);
    const norm = big.norm(column) as Big; // 2-norm
    if (!norm.isZero()) column.forEach((v, i) => (normalized[i]![j] = big.divide(v, norm) as Big));
    const values = normalized.map((row) => row[j]!);
    const min = big.min<Big>(values);
    const max = big.max<Big>(values);
    best.push(criteria.maximize[j] ? max : min);
    worst.push(criteria.maximize[j] ? min : max);
  }
  const distance = (row: Big[], ideal: Big[]) =>
    big.norm(row.map((v, j) => big.multiply(weights[j]!, big.subtract<Big>(v, ideal[j]!)) as Big)) as Big;
  const dBest = normalized.map((row) => distance(row, best));
  const dWorst = normalized.map((row) => distance(row, worst));
  const scores = dBest.map((b, i) => {
    const divisor = big.add<Big>(b, dWorst[i]!);
    return divisor.isZero() ? 0 : big.number(big.divide(dWorst[i]!, divisor) as Big);
  });
  return { normalized, best, worst, dBest, dWorst, scores };
}

function toNumber(x: Big): number {
  return big.number(x);
}

const EXTREME_SCALES = [1, 1e-300, 1e300, 5e-324, 1e-320, 1e-150, 1e150, 2 ** 64, Number.MAX_VALUE / 256];
export const weight = fc.integer({ min: -10, max: 10 });
/**
 * A matrix on an integer grid (0..100) with every column multiplied by a scale from the extremes
 * (subnormal 5e-324 keeps integers exact; 1e300 makes squares overflow; 1e-300 makes them
 * underflow), so the exact TOPSIS is well-conditioned and the float one must match it.
 */
export const scaledMatrix = fc.integer({ min: 1, max: 4 }).chain((cols) =>
  fc.record({
    weights: fc.array(weight, { minLength: cols, maxLength: cols }).filter((w) => w.some((x) => x !== 0)),
    scales: fc.array(fc.constantFrom(...EXTREME_SCALES), { minLength: cols, maxLength: cols }),
    base: fc.array(fc.array(fc.integer({ min: 0, max: 100 }), { minLength: cols, maxLength: cols }), {
      minLength: 1,
      maxLength: 10,
    }),
  }),
);
export const anyValue = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    5e-324,
    -5e-324,
    1e-300,
    1e300,
    -1e300,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MAX_SAFE_INTEGER,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.double({ min: -10, max: 10, noNaN: true }),
);

export function criteriaOf(weights: readonly number[]): Criteria {
  return defineCriteria(weights.map((w, j) => ({ name: `c${j}`, weight: w })));
}

/** Normalisation, ideal points, distances and scores match the oracle on columns scaled to the extremes. */
export function oracleAgreement(numRuns: number): void {
  fc.assert(
    fc.property(scaledMatrix, ({ weights, scales, base }) => {
      const criteria = criteriaOf(weights);
      const rows = base.map((row) => row.map((x, j) => x * scales[j]!));
      const want = oracleTopsis(criteria, rows);
      // the normalised matrix and the ideal points, from the in-place flat form
      const matrix = toFlatMatrix(criteria, rows);
      const scores = scoreFlatInPlace(criteria, matrix, new Float64Array(matrix.rows));
      const cols = weights.length;
      want.normalized.forEach((row, i) =>
        row.forEach((v, j) => expect(matrix.data[i * cols + j]).toBeCloseTo(toNumber(v), 14)),
      );
      for (let j = 0; j < cols; j++) {
        const column = Array.from({ length: rows.length }, (_, i) => matrix.data[i * cols + j]!);
        const [lo, hi] = [Math.min(...column), Math.max(...column)];
        expect(criteria.maximize[j] ? hi : lo).toBeCloseTo(toNumber(want.best[j]!), 14);
        expect(criteria.maximize[j] ? lo : hi).toBeCloseTo(toNumber(want.worst[j]!), 14);
      }
      // scores in [0, 1]: an absolute tolerance is a relative one here
      Array.from(scores).forEach((s, i) => expect(Math.abs(s - want.scores[i]!)).toBeLessThanOrEqual(1e-12));
      // the distances behind them: d_best / (d_best + d_worst) = 1 − score, within the same tolerance
      want.dBest.forEach((b, i) => {
        const sum = big.add<Big>(b, want.dWorst[i]!);
        if (!sum.isZero())
          expect(Math.abs(1 - scores[i]! - toNumber(big.divide(b, sum) as Big))).toBeLessThanOrEqual(1e-12);
      });
    }),
    { numRuns },
  );
}

/** Scores are invariant under row permutation (up to rounding) on any finite matrix. */
export function permutationInvariance(numRuns: number): void {
  fc.assert(
    fc.property(scaledMatrix, fc.integer(), ({ weights, scales, base }, seed) => {
      const criteria = criteriaOf(weights);
      const rows = base.map((row) => row.map((x, j) => x * scales[j]!));
      const shift = Math.abs(seed) % rows.length;
      const perm = rows.map((_, i) => (i + shift) % rows.length).reverse();
      const scores = scoreAlternatives(criteria, rows);
      const permuted = scoreAlternatives(
        criteria,
        perm.map((i) => rows[i]!),
      );
      perm.forEach((from, to) => expect(Math.abs(permuted[to]! - scores[from]!)).toBeLessThanOrEqual(1e-12));
    }),
    { numRuns },
  );
}
