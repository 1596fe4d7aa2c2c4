/**
 * C `printf("%.<digits>f", value)`: the exact binary value rounded half to even. JavaScript's
 * `toFixed` rounds exact ties away from zero (`(0.125).toFixed(2)` is "0.13", C gives "0.12"),
 * so this expands the double exactly with BigInt arithmetic instead.
 */
export function formatFixed(value: number, digits: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf';
  const negative = value < 0 || Object.is(value, -0);
  const abs = Math.abs(value);
  // abs = mantissa * 2^exp exactly
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, abs);
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const biasedExp = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (biasedExp === 0) {
    exp = -1074;
  } else {
    mantissa |= 1n << 52n;
    exp = biasedExp - 1075;
  }
  const scale = 10n ** BigInt(digits);
  // scaled = abs * 10^digits = mantissa * 10^digits * 2^exp, as a rational num/den
  let num = mantissa * scale;
  let den = 1n;
  if (exp >= 0) num <<= BigInt(exp);
  else den <<= BigInt(-exp);
  let q = num / den;
  const rem = num - q * den;
  const twice = rem * 2n;
  if (twice > den || (twice === den && (q & 1n) === 1n)) q += 1n;
  let s = q.toString();
  if (digits > 0) {
    s = s.padStart(digits + 1, '0');
    s = `${s.slice(0, s.length - digits)}.${s.slice(s.length - digits)}`;
  }
  // C keeps the sign of negative values that round to zero ("-0.00").
  return negative ? `-${s}` : s;
}
