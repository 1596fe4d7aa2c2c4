/**
 * Finite extremes, validation and an independent oracle (mathjs with 80-digit BigNumbers) for
 * TOPSIS: every finite matrix gives finite scores in [0, 1] close to the exact ones, the plain
 * folds of spec §4.5 stay in use (bit for bit) wherever they are safe, and bad input is a
 * `TopsisError` that names the argument.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Criteria, TopsisError, defineCriteria, rankScores, scoreAlternatives, scoreFlatInPlace } from './index';
import {
  ORACLE_RUNS,
  ORACLE_SAMPLE_RUNS,
  anyValue,
  criteriaOf,
  oracleAgreement,
  oracleTopsis,
  permutationInvariance,
  scaledMatrix,
  weight,
} from './testing/oracle';

describe('finite in, finite out', () => {
  it('any finite matrix gives finite scores in [0, 1]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }).chain((cols) =>
          fc.tuple(
            fc
              .array(fc.oneof(weight, fc.constantFrom(1e-300, 5e-324, 1e300, Number.MAX_VALUE)), {
                minLength: cols,
                maxLength: cols,
              })
              .filter((w) => w.some((x) => x !== 0)),
            fc.array(fc.array(anyValue, { minLength: cols, maxLength: cols }), { minLength: 1, maxLength: 8 }),
          ),
        ),
        ([weights, rows]) => {
          for (const s of scoreAlternatives(criteriaOf(weights), rows)) {
            expect(Number.isFinite(s)).toBe(true);
            expect(s).toBeGreaterThanOrEqual(0);
            expect(s).toBeLessThanOrEqual(1);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it.each([
    // column [1e300, 2e300]: Σx² overflows, the plain divisor is Infinity and every value 0 → scores 0, 0;
    // truly [1, 2]/√5 and, maximised, the second row is the ideal → 0, 1
    ['squares that overflow', [[1e300], [2e300]], [0, 1]],
    // column [1e-200, 2e-200]: Σx² underflows to 0, the plain fold leaves the column as it is
    // and the distances (1e-200)² underflow too → 0, 0; truly 0, 1
    ['squares that underflow', [[1e-200], [2e-200]], [0, 1]],
    // subnormal values 1, 2, 3 ulps: normalised [1, 2, 3]/√14 → 0, 0.5, 1
    ['subnormal values', [[5e-324], [1e-323], [1.5e-323]], [0, 0.5, 1]],
  ])('%s', (_name, rows, want) => {
    const scores = scoreAlternatives(defineCriteria([{ name: 'value', weight: 1 }]), rows);
    scores.forEach((s, i) => expect(s).toBeCloseTo(want[i]!, 14));
  });

  it('weights near Number.MAX_VALUE normalise to finite weights (the plain Σ|w| overflows)', () => {
    // Σ|w| = 2·MAX overflows; each weight is then 1/2 (not MAX/Infinity = 0)
    const c = defineCriteria([
      { name: 'a', weight: Number.MAX_VALUE },
      { name: 'b', weight: -Number.MAX_VALUE },
    ]);
    expect(Array.from(c.weights)).toEqual([0.5, 0.5]);
  });

  it('a tiny weight still decides when every other criterion ties (distances that underflow)', () => {
    // w = (1, 1e-300)/(1 + 1e-300) = (1, 1e-300); column a ties, so d = 1e-300·|Δb|: the plain
    // squares (1e-300·0.27)² underflow to 0 and every score was 0; the scaled distances rank by b
    const criteria = defineCriteria([
      { name: 'a', weight: 1 },
      { name: 'b', weight: 1e-300 },
    ]);
    const rows = [
      [1, 1],
      [1, 2],
      [1, 3],
    ];
    const scores = scoreAlternatives(criteria, rows);
    const want = oracleTopsis(criteria, rows).scores;
    scores.forEach((s, i) => expect(s).toBeCloseTo(want[i]!, 14));
    expect(scores).toEqual([0, 0.5, 1]);
  });
});

describe('the plain folds of spec §4.5 are kept bit for bit wherever they are safe', () => {
  it('scaling a column by any power of two changes no bit of the scores (scaled path = plain path)', () => {
    fc.assert(
      fc.property(scaledMatrix, fc.nat(), fc.integer({ min: -1074, max: 1016 }), ({ weights, base }, column, k) => {
        const criteria = criteriaOf(weights);
        const j = column % weights.length;
        // integers ≤ 100 times 2^k: exact for every k in range (subnormal multiples of 2^-1074 included)
        const scaled = base.map((row) => row.map((x, c) => (c === j ? x * 2 ** k : x)));
        expect(scoreAlternatives(criteria, scaled)).toEqual(scoreAlternatives(criteria, base));
      }),
      { numRuns: 1500 },
    );
  });

  it('scaling all weights by a power of two changes no normalised weight', () => {
    fc.assert(
      fc.property(
        fc.array(weight, { minLength: 1, maxLength: 6 }).filter((w) => w.some((x) => x !== 0)),
        fc.integer({ min: -1000, max: 1020 }),
        (weights, k) => {
          expect(criteriaOf(weights.map((w) => w * 2 ** k)).weights).toEqual(criteriaOf(weights).weights);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('ordinary matrices: identical bits to the spec fold', () => {
    fc.assert(
      fc.property(scaledMatrix, ({ weights, base }) => {
        const criteria = criteriaOf(weights);
        const rows = base.map((row) => row.map((x) => 1 + x / 7)); // scheduler-like criteria ≥ 1
        expect(scoreAlternatives(criteria, rows)).toEqual(specScores(criteria, rows));
      }),
      { numRuns: 1500 },
    );
  });
});

/** Spec §4.5 literally (the code before the scaled fallbacks existed). */
function specScores(criteria: Criteria, rows: readonly (readonly number[])[]): number[] {
  const cols = criteria.weights.length;
  const data = rows.map((row) => [...row]);
  const best: number[] = [];
  const worst: number[] = [];
  for (let j = 0; j < cols; j++) {
    let squares = 0;
    for (const row of data) squares += row[j]! * row[j]!;
    const divisor = Math.sqrt(squares);
    for (const row of data) if (divisor !== 0) row[j] = row[j]! / divisor;
    const column = data.map((row) => row[j]!);
    best.push(criteria.maximize[j] ? Math.max(...column) : Math.min(...column));
    worst.push(criteria.maximize[j] ? Math.min(...column) : Math.max(...column));
  }
  return data.map((row) => {
    let b = 0;
    let w = 0;
    for (let j = 0; j < cols; j++) {
      b += (criteria.weights[j]! * (row[j]! - best[j]!)) ** 2;
      w += (criteria.weights[j]! * (row[j]! - worst[j]!)) ** 2;
    }
    const divisor = Math.sqrt(b) + Math.sqrt(w);
    return divisor === 0 ? 0 : Math.sqrt(w) / divisor;
  });
}

describe(`mathjs oracle (80-digit BigNumbers), ${ORACLE_SAMPLE_RUNS} of ${ORACLE_RUNS} runs (the rest: extremes.slow.test.ts)`, () => {
  it('normalisation, ideal points, distances and scores match the oracle on columns scaled to the extremes', () =>
    oracleAgreement(ORACLE_SAMPLE_RUNS));
  it('scores are invariant under row permutation (up to rounding) on any finite matrix', () =>
    permutationInvariance(ORACLE_SAMPLE_RUNS));
});

function caught(fn: () => unknown): TopsisError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(TopsisError);
    expect((error as TopsisError).name).toBe('TopsisError');
    return error as TopsisError;
  }
  throw new Error('expected a TopsisError');
}

const one = defineCriteria([{ name: 'value', weight: 1 }]);

describe('bad input is a TopsisError naming the argument', () => {
  it.each([
    ['criteria that are not an array', () => defineCriteria(null as unknown as []), 'invalid-criteria', /criteria/],
    [
      'a criterion without a name',
      () => defineCriteria([{ name: '', weight: 1 }]),
      'invalid-criteria',
      /criteria\[0\]\.name/,
    ],
    [
      'a criterion that is null',
      () => defineCriteria([null as unknown as { name: string; weight: number }]),
      'invalid-criteria',
      /criteria\[0\]\.name/,
    ],
    [
      'a duplicate criterion',
      () =>
        defineCriteria([
          { name: 'a', weight: 1 },
          { name: 'a', weight: 2 },
        ]),
      'duplicate-criterion',
      /criteria\[1\]\.name.*'a'/,
    ],
    [
      'an infinite weight',
      () => defineCriteria([{ name: 'a', weight: Infinity }]),
      'invalid-weight',
      /criteria\[0\]\.weight/,
    ],
    [
      'a string weight',
      () => defineCriteria([{ name: 'a', weight: '1' as unknown as number }]),
      'invalid-weight',
      /criteria\[0\]\.weight/,
    ],
    ['a NaN value', () => scoreAlternatives(one, [[1], [Number.NaN]]), 'non-finite-value', /rows\[1\]\[0\].*'value'/],
    [
      'a string value',
      () => scoreAlternatives(one, [['1' as unknown as number]]),
      'non-finite-value',
      /rows\[0\]\[0\].*string "1"/,
    ],
    ['a null value', () => scoreAlternatives(one, [[null as unknown as number]]), 'non-finite-value', /rows\[0\]\[0\]/],
    [
      'rows that are not an array',
      () => scoreAlternatives(one, undefined as unknown as number[][]),
      'invalid-argument',
      /rows/,
    ],
    [
      'a row that is not an array',
      () => scoreAlternatives(one, [5 as unknown as number[]]),
      'invalid-argument',
      /rows\[0\]/,
    ],
    [
      'a NaN in a flat matrix',
      () => scoreFlatInPlace(one, { data: new Float64Array([1, Number.NaN]), rows: 2, cols: 1 }, new Float64Array(2)),
      'non-finite-value',
      /alternative 1/,
    ],
    [
      'a flat matrix shorter than rows × cols',
      () => scoreFlatInPlace(one, { data: new Float64Array(1), rows: 2, cols: 1 }, new Float64Array(2)),
      'invalid-argument',
      /matrix\.data/,
    ],
    [
      'a fractional row count',
      () => scoreFlatInPlace(one, { data: new Float64Array(2), rows: 1.5, cols: 1 }, new Float64Array(2)),
      'invalid-argument',
      /matrix\.rows/,
    ],
    [
      'an output too short',
      () => scoreFlatInPlace(one, { data: new Float64Array(2), rows: 2, cols: 1 }, new Float64Array(1)),
      'invalid-argument',
      /out/,
    ],
    [
      'columns that do not match the criteria',
      () => scoreFlatInPlace(one, { data: new Float64Array(4), rows: 2, cols: 2 }, new Float64Array(2)),
      'ragged-matrix',
      /2 columns/,
    ],
    [
      'criteria changed to a NaN weight',
      () => {
        const c = defineCriteria([{ name: 'a', weight: 1 }]);
        c.weights[0] = Number.NaN;
        return scoreAlternatives(c, [[1]]);
      },
      'invalid-weight',
      /criteria\.weights\[0\].*'a'/,
    ],
    [
      'hand-made criteria with missing directions',
      () => scoreAlternatives({ names: ['a'], weights: new Float64Array([1]), maximize: new Uint8Array(0) }, [[1]]),
      'invalid-criteria',
      /directions/,
    ],
    ['a NaN score to rank', () => rankScores([0.5, Number.NaN]), 'non-finite-value', /scores\[1\]/],
    ['an infinite score to rank', () => rankScores([Infinity]), 'non-finite-value', /scores\[0\]/],
    ['scores that are not an array', () => rankScores(3 as unknown as number[]), 'invalid-argument', /scores/],
  ])('%s', (_name, fn, code, message) => {
    const error = caught(fn);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });
});
