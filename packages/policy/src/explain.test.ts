import { describe, expect, it } from 'vitest';
import { formatCompared } from './explain';

describe('formatCompared: numbers in stop reasons', () => {
  it.each([
    // 4 significant digits: 1/13 = 0.076923… → 0.07692
    [1 / 13, 0.3, '0.07692'],
    // float noise disappears: 0.25 − 2^−54
    [0.24999999999999997, 0.3, '0.25'],
    [0.2, 0.3, '0.2'],
    // a value just below its bound keeps every digit, so the reason never reads "0.05 below 0.05"
    [0.35 - 0.3, 0.05, '0.04999999999999999'],
    // equal to the bound: printed as the bound
    [0.05, 0.05, '0.05'],
    [Number.NaN, 0.1, 'NaN'],
  ])('%s against %s is %s', (value, bound, shown) => {
    expect(formatCompared(value, bound)).toBe(shown);
  });
});
