import { describe, expect, test } from 'vitest';
import { formatImbalance } from './balance';

describe('formatImbalance', () => {
  test.each([
    // pve-5.2.0 prints the raw CV with %.2f (C rounding of the exact binary value)
    [Math.SQRT2, 'pve-5.2.0', '1.41'],
    [0.125, 'pve-5.2.0', '0.12'],
    // pve-9.2 prints percent with one decimal: 0.661 → 66.1%
    [1, 'pve-9.2', '100.0%'],
    [0.6611, 'pve-9.2', '66.1%'],
  ])('%s under %s is %s', (value, profile, expected) => {
    expect(formatImbalance(value, profile)).toBe(expected);
  });
});
