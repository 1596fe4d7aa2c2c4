import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isotonicMedians, median, weightedMedian } from './robust';

describe('median and weighted median', () => {
  it.each([
    // values, median
    [[5], 5],
    [[3, 1, 2], 2],
    // even count: mean of the two middle values, (2 + 3) / 2
    [[4, 1, 3, 2], 2.5],
    // an outlier moves nothing
    [[1, 2, 3, 1000], 2.5],
  ])('median of %j is %d', (values, expected) => {
    expect(median(values)).toBe(expected);
  });

  it.each([
    // values, weights, weighted median: the smallest value whose cumulative weight reaches half
    [[1, 2, 3], [1, 1, 1], 2],
    // total 10, half 5: 1 (w 1) → 1, 2 (w 8) → 9 ≥ 5
    [[1, 2, 3], [1, 8, 1], 2],
    // total 4, half 2: 10 (w 3) reaches it at once
    [[10, 0, 5], [3, 0.5, 0.5], 10],
  ])('weighted median of %j with weights %j is %d', (values, weights, expected) => {
    expect(weightedMedian(values, weights)).toBe(expected);
  });
});

describe('isotonicMedians', () => {
  it.each([
    // groups, result
    [
      [[1], [2], [3]],
      [1, 2, 3],
    ],
    // [3, 3] then [2] violate: pooled samples [2, 3, 3], median 3
    [
      [[1], [3, 3], [2], [4]],
      [1, 3, 3, 4],
    ],
    // a decreasing run pools into one block: median of [1, 2, 3] = 2
    [
      [[3], [2], [1]],
      [2, 2, 2],
    ],
    // a group spoiled by outliers is outvoted by the samples it is pooled with:
    // [90, 91, 92] then [10, 15, 95]: pooled median of six = (90 + 91) / 2
    [
      [
        [90, 91, 92],
        [10, 15, 95],
      ],
      [90.5, 90.5],
    ],
  ])('%j → %j', (groups, expected) => {
    expect(isotonicMedians(groups)).toEqual(expected);
  });

  it('is non-decreasing, one value per group, each within the range of all samples', () => {
    const group = fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: 1, maxLength: 7 });
    fc.assert(
      fc.property(fc.array(group, { minLength: 1, maxLength: 40 }), (groups) => {
        const out = isotonicMedians(groups);
        expect(out).toHaveLength(groups.length);
        const all = groups.flat();
        for (let i = 0; i < out.length; i++) {
          expect(out[i]).toBeGreaterThanOrEqual(Math.min(...all));
          expect(out[i]).toBeLessThanOrEqual(Math.max(...all));
          if (i > 0) expect(out[i]).toBeGreaterThanOrEqual(out[i - 1]!);
        }
      }),
    );
  });

  it('leaves groups whose medians already rise as they are', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 30 }), (values) => {
        const sorted = [...values].sort((a, b) => a - b);
        expect(isotonicMedians(sorted.map((v) => [v]))).toEqual(sorted);
      }),
    );
  });
});
