import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TopsisError, defineCriteria, rankAlternatives, rankScores, scoreAlternatives } from './index';

const maximise = defineCriteria([{ name: 'value', weight: 1 }]);
const minimise = defineCriteria([{ name: 'value', weight: -1 }]);

describe('defineCriteria', () => {
  it('normalises absolute weights by their sum (spec §4.5: 1, 2, 5, 10 → w/18)', () => {
    const c = defineCriteria([
      { name: 'average cpu', weight: -1 },
      { name: 'highest cpu', weight: -2 },
      { name: 'average memory', weight: -5 },
      { name: 'highest memory', weight: -10 },
    ]);
    expect(Array.from(c.weights)).toEqual([1 / 18, 2 / 18, 5 / 18, 10 / 18]);
    expect(Array.from(c.maximize)).toEqual([0, 0, 0, 0]);
  });

  it.each([
    ['no criteria', [], 'no-criteria'],
    [
      'all-zero weights',
      [
        { name: 'a', weight: 0 },
        { name: 'b', weight: 0 },
      ],
      'zero-weights',
    ],
    ['NaN weight', [{ name: 'a', weight: Number.NaN }], 'invalid-weight'],
  ])('rejects %s', (_name, criteria, code) => {
    expect(() => defineCriteria(criteria)).toThrowError(TopsisError);
    try {
      defineCriteria(criteria);
    } catch (error) {
      expect((error as TopsisError).code).toBe(code);
      expect((error as TopsisError).name).toBe('TopsisError');
    }
  });
});

describe('rankAlternatives (reference vectors, spec §4.6)', () => {
  it.each([
    // one criterion: the best is the largest (maximise) or the smallest (minimise) value
    ['maximise', maximise, [[1], [2], [5], [3], [4]], [2, 4, 3, 1, 0]],
    ['minimise', minimise, [[1], [2], [5], [3], [4]], [0, 1, 3, 4, 2]],
    // ties keep input order (stable): 3 and 3 → indices 0 then 2
    ['stable ties', maximise, [[3], [1], [3]], [0, 2, 1]],
  ])('%s', (_name, criteria, rows, ranking) => {
    expect(rankAlternatives(criteria, rows)).toEqual(ranking);
  });
});

describe('scoreAlternatives', () => {
  it.each([
    // columns have norm 1; best = (1, 0), worst = (0, 1); row 0 is the ideal → 1, row 1 the anti-ideal → 0
    [
      'two criteria, opposite directions',
      [
        { name: 'a', weight: 1 },
        { name: 'b', weight: -1 },
      ],
      [
        [1, 0],
        [0, 1],
      ],
      [1, 0],
    ],
    // column 0 is all zero: it stays zero and contributes nothing; column 1 [3,4] /5 = [0.6, 0.8],
    // maximised: row 1 ideal → 1, row 0 anti-ideal → 0
    [
      'zero column stays zero',
      [
        { name: 'z', weight: 1 },
        { name: 'v', weight: 1 },
      ],
      [
        [0, 3],
        [0, 4],
      ],
      [0, 1],
    ],
    // all rows identical: d_best = d_worst = 0 → score 0 (never NaN)
    ['identical alternatives', [{ name: 'a', weight: 1 }], [[2], [2]], [0, 0]],
    // three criteria, w = (1/3 each); column norms 5, 5, 1: normalised rows (0.6,0.8,1) and (0.8,0.6,0);
    // best = (0.8, 0.8, 1), worst = (0.6, 0.6, 0) (all maximised)
    // row 0: d_best = sqrt((0.2/3)²) = 0.0667, d_worst = sqrt((0.2/3)² + (1/3)²) = 0.3399 → 0.836
    [
      'three criteria',
      [
        { name: 'a', weight: 1 },
        { name: 'b', weight: 1 },
        { name: 'c', weight: 1 },
      ],
      [
        [3, 4, 1],
        [4, 3, 0],
      ],
      [0.836, 0.164],
    ],
  ])('%s', (_name, criteria, rows, expected) => {
    const scores = scoreAlternatives(defineCriteria(criteria), rows);
    scores.forEach((s, i) => expect(s).toBeCloseTo(expected[i]!, 3));
  });

  it.each([
    ['NaN value', [[1], [Number.NaN]], 'non-finite-value'],
    ['infinite value', [[Infinity], [1]], 'non-finite-value'],
    ['ragged rows', [[1], [1, 2]], 'ragged-matrix'],
  ])('rejects %s with an error, not a NaN score', (_name, rows, code) => {
    try {
      scoreAlternatives(maximise, rows);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(TopsisError);
      expect((error as TopsisError).code).toBe(code);
    }
  });

  it('returns nothing for no alternatives', () => {
    expect(scoreAlternatives(maximise, [])).toEqual([]);
    expect(rankScores([])).toEqual([]);
  });
});

const smallInt = fc.integer({ min: 0, max: 100 });
const weight = fc.integer({ min: -10, max: 10 });

describe('properties', () => {
  const matrixWithCriteria = fc.integer({ min: 1, max: 4 }).chain((cols) =>
    fc.record({
      weights: fc.array(weight, { minLength: cols, maxLength: cols }).filter((w) => w.some((x) => x !== 0)),
      rows: fc.array(fc.array(smallInt, { minLength: cols, maxLength: cols }), { minLength: 1, maxLength: 12 }),
    }),
  );

  it('scores lie in [0, 1]', () => {
    fc.assert(
      fc.property(matrixWithCriteria, ({ weights, rows }) => {
        const criteria = defineCriteria(weights.map((w, j) => ({ name: `c${j}`, weight: w })));
        for (const s of scoreAlternatives(criteria, rows)) {
          expect(s).toBeGreaterThanOrEqual(0);
          expect(s).toBeLessThanOrEqual(1);
        }
      }),
    );
  });

  it('is invariant under row permutation (integer data: column norms are exact in any order)', () => {
    fc.assert(
      fc.property(matrixWithCriteria, fc.integer(), ({ weights, rows }, seed) => {
        const criteria = defineCriteria(weights.map((w, j) => ({ name: `c${j}`, weight: w })));
        // a deterministic permutation from the seed (rotate then reverse)
        const shift = Math.abs(seed) % rows.length;
        const perm = rows.map((_, i) => (i + shift) % rows.length).reverse();
        const scores = scoreAlternatives(criteria, rows);
        const permuted = scoreAlternatives(
          criteria,
          perm.map((i) => rows[i]!),
        );
        perm.forEach((from, to) => expect(permuted[to]).toBe(scores[from]));
      }),
    );
  });
});

describe('README example', () => {
  it('gives the values the README states', () => {
    const biggest = defineCriteria([{ name: 'value', weight: 1 }]);
    expect(rankAlternatives(biggest, [[1], [2], [5], [3], [4]])).toEqual([2, 4, 3, 1, 0]);
    const smallest = defineCriteria([{ name: 'value', weight: -1 }]);
    expect(scoreAlternatives(smallest, [[1], [2]])).toEqual([1, 0]);
    expect(scoreAlternatives(biggest, [[1e300], [2e300]])).toEqual([0, 1]);
  });
});
