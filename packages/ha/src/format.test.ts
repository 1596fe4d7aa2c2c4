import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatFixed } from './format';

describe('formatFixed: C printf %.Nf on the exact binary value, ties to even', () => {
  const cases: Array<{ value: number; digits: number; expected: string; why: string }> = [
    // exact ties: 0.125 = 1/8 is exactly representable, 12.5 hundredths → even 12
    { value: 0.125, digits: 2, expected: '0.12', why: 'exact tie rounds to the even 12 (toFixed gives 0.13)' },
    // 0.375 = 3/8 exactly, 37.5 hundredths → even 38
    { value: 0.375, digits: 2, expected: '0.38', why: 'exact tie rounds to the even 38' },
    { value: -0.125, digits: 2, expected: '-0.12', why: 'negative exact tie rounds to even too' },
    // 123456789.125 is exact in a double (needs 30 bits + 3 fraction bits)
    { value: 123456789.125, digits: 2, expected: '123456789.12', why: 'large exact tie → even' },
    // not ties: the decimal literal's double sits below or above the written value
    { value: 1.005, digits: 2, expected: '1.00', why: 'the double is 1.00499999999999989… < 1.005' },
    { value: 2.675, digits: 2, expected: '2.67', why: 'the double is 2.67499999999999982… < 2.675' },
    { value: 0.05, digits: 1, expected: '0.1', why: 'the double is 0.05000000000000000277… > 0.05' },
    { value: 0.35, digits: 1, expected: '0.3', why: 'the double is 0.34999999999999997779… < 0.35' },
    { value: 0.45, digits: 1, expected: '0.5', why: 'the double is 0.45000000000000001110… > 0.45' },
    { value: 1.41421356, digits: 2, expected: '1.41', why: 'plain rounding down' },
    { value: 0.94, digits: 2, expected: '0.94', why: 'a two-decimal value keeps its digits' },
    // zero and the sign of zero: C prints the sign of a negative value that rounds to 0
    { value: 0, digits: 2, expected: '0.00', why: 'zero' },
    { value: -0.001, digits: 2, expected: '-0.00', why: 'negative value rounding to zero keeps its sign' },
    { value: -0, digits: 2, expected: '-0.00', why: 'negative zero prints its sign (toFixed does not)' },
    { value: 5e-324, digits: 2, expected: '0.00', why: 'smallest subnormal' },
    // digits 1
    { value: 0.25, digits: 1, expected: '0.2', why: 'exact tie 2.5 tenths → even 2' },
    { value: 33.333333333333336, digits: 1, expected: '33.3', why: 'a percentage as the pve-9.2 log prints it' },
    // digits 0: no decimal point, ties to even
    { value: 0.5, digits: 0, expected: '0', why: 'tie → even 0' },
    { value: 1.5, digits: 0, expected: '2', why: 'tie → even 2' },
    { value: 2.5, digits: 0, expected: '2', why: 'tie → even 2' },
    { value: 3.5, digits: 0, expected: '4', why: 'tie → even 4' },
    { value: -2.5, digits: 0, expected: '-2', why: 'negative tie → even' },
    { value: 2.6, digits: 0, expected: '3', why: 'plain rounding up' },
    // large numbers: all integer digits, never an exponent (toFixed switches to e-notation at 1e21)
    { value: 1e21, digits: 2, expected: '1000000000000000000000.00', why: '10^21 is exact in a double' },
    { value: 2 ** 60, digits: 2, expected: '1152921504606846976.00', why: '2^60 exactly' },
    {
      value: 1e300,
      digits: 0,
      expected:
        '1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160',
      why: 'the exact binary value of the double nearest 1e300',
    },
    // non-finite values as glibc prints them
    { value: NaN, digits: 2, expected: 'nan', why: 'NaN' },
    { value: Infinity, digits: 2, expected: 'inf', why: '+∞' },
    { value: -Infinity, digits: 2, expected: '-inf', why: '−∞' },
  ];
  it.each(cases)('%.$digits f of $value is "$expected": $why', ({ value, digits, expected }) => {
    expect(formatFixed(value, digits)).toBe(expected);
  });
});

/**
 * A value x is an exact tie at `digits` decimals iff x·10^digits = k + 1/2, i.e. x = m / 2^(digits+1)
 * with m odd (a double is dyadic, so the 5^digits factor must divide into the integer part).
 * Scaling by a power of two is exact, so this needs no BigInt.
 */
function isTie(x: number, digits: number): boolean {
  const scaled = x * 2 ** (digits + 1);
  return Number.isInteger(scaled) && Math.abs(scaled % 2) === 1;
}

describe('formatFixed against Number.prototype.toFixed', () => {
  // toFixed is exact on the binary value as well, but breaks ties away from zero, drops the sign
  // of -0 and uses e-notation from 1e21: away from those, both must agree digit for digit.
  it('agrees on every value that is not an exact tie', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e20, max: 1e20, noNaN: true }),
        fc.integer({ min: 0, max: 20 }),
        (value, digits) => {
          fc.pre(!isTie(value, digits) && !Object.is(value, -0));
          expect(formatFixed(value, digits)).toBe(value.toFixed(digits));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('agrees on short decimals such as the imbalances the log prints', () => {
    fc.assert(
      fc.property(fc.integer({ min: -10_000_000, max: 10_000_000 }), fc.integer({ min: 1, max: 6 }), (n, places) => {
        const value = n / 10 ** places;
        const digits = Math.max(0, places - 1);
        fc.pre(!isTie(value, digits));
        expect(formatFixed(value, digits)).toBe(value.toFixed(digits));
      }),
      { numRuns: 2000 },
    );
  });

  it('rounds an exact tie to the neighbour with an even last digit', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 36), max: 2 ** 36 }), fc.integer({ min: 0, max: 6 }), (k, digits) => {
        const m = 2 * k + 1; // odd: value·10^digits = m·5^digits / 2 is a half-integer
        const value = m / 2 ** (digits + 1);
        // the two neighbours in units of 10^-digits are (|m|·5^d ∓ 1) / 2, exact below 2^53
        const lower = (Math.abs(m) * 5 ** digits - 1) / 2;
        const units = lower % 2 === 0 ? lower : lower + 1;
        const padded = String(units).padStart(digits + 1, '0');
        const body = digits === 0 ? padded : `${padded.slice(0, -digits)}.${padded.slice(-digits)}`;
        expect(formatFixed(value, digits)).toBe(m < 0 ? `-${body}` : body);
      }),
      { numRuns: 2000 },
    );
  });
});
