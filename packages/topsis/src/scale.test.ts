import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exponentOf, pow2, scaleByPow2 } from './scale';

describe('power-of-two helpers of the scaled path', () => {
  it('pow2 is exact over the whole range, 0 below and Infinity above', () => {
    // 2^-1074 is the smallest subnormal, 2^1023 the largest power of two
    expect(pow2(-1074)).toBe(5e-324);
    expect(pow2(-1023)).toBe(2 ** -1022 / 2);
    expect(pow2(0)).toBe(1);
    expect(pow2(1023)).toBe(2 ** 1023);
    expect(pow2(-1075)).toBe(0);
    expect(pow2(1024)).toBe(Infinity);
    for (let k = -1073; k <= 1023; k++) expect(pow2(k) * 2).toBe(k === 1023 ? Infinity : pow2(k + 1));
  });

  it('exponentOf(x) is floor(log2 x) exactly: 2^e <= x < 2^(e+1)', () => {
    fc.assert(
      fc.property(fc.double({ min: 5e-324, max: Number.MAX_VALUE, noNaN: true }), (x) => {
        const e = exponentOf(x);
        expect(pow2(e)).toBeLessThanOrEqual(x);
        if (e < 1023) expect(x).toBeLessThan(pow2(e + 1));
      }),
      { numRuns: 3000 },
    );
  });

  it('scaleByPow2 brings any finite x > 0 into [1, 2) exactly and back', () => {
    fc.assert(
      fc.property(fc.double({ min: 5e-324, max: Number.MAX_VALUE, noNaN: true }), (x) => {
        const e = exponentOf(x);
        const y = scaleByPow2(x, -e);
        expect(y).toBeGreaterThanOrEqual(1);
        expect(y).toBeLessThan(2);
        expect(scaleByPow2(y, e)).toBe(x);
      }),
      { numRuns: 3000 },
    );
  });
});
