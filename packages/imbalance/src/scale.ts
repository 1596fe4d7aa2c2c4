/**
 * Exact power-of-two scaling for the scaled fallback of sums of squares: this package's folds
 * over loads, and `@poise/topsis`'s norms (exported for it). Multiplying by a power of two is
 * exact unless the result is subnormal, so a fold over values scaled by 2^k gives the same bits
 * as the fold over the original values would if it neither overflowed nor underflowed, and a
 * sum of squares of values scaled by 2^k is the plain one times 2^2k.
 */

const bits = new DataView(new ArrayBuffer(8));

/** 2^k exactly for an integer k in [-1074, 1023]; 0 below that range, Infinity above. */
export function pow2(k: number): number {
  if (k > 1023) return Infinity;
  if (k < -1074) return 0;
  if (k < -1022) return pow2(k + 64) * pow2(-64); // a subnormal power of two, exact
  bits.setUint32(0, (k + 1023) * 2 ** 20);
  bits.setUint32(4, 0);
  return bits.getFloat64(0);
}

/** floor(log2(x)) for a finite x > 0, exactly (Math.log2 corrected by exact comparisons). */
export function exponentOf(x: number): number {
  let e = Math.min(1023, Math.max(-1074, Math.floor(Math.log2(x))));
  while (e > -1074 && pow2(e) > x) e--;
  while (e < 1023 && pow2(e + 1) <= x) e++;
  return e;
}

/**
 * x·2^k for an integer k <= 2097: one multiplication (one rounding, only when the result is
 * subnormal), or two exact ones when 2^k itself would overflow (scaling up). Below k = -1074
 * the result is 0 (for |x| < 4 the exact value is below 2^-1072).
 */
export function scaleByPow2(x: number, k: number): number {
  return k <= 1023 ? x * pow2(k) : x * pow2(1023) * pow2(k - 1023);
}
