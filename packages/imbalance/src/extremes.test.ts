/**
 * Finite extremes, validation and an independent oracle (mathjs with 80-digit BigNumbers) for
 * the imbalance metrics: every finite input gives a finite result close to the exact one, the
 * plain fold of spec §4.3 stays in use (bit for bit) wherever it is safe, and bad input is an
 * `ImbalanceError` that names the argument.
 */
import fc from 'fast-check';
import { type BigNumber, all, create } from 'mathjs';
import { describe, expect, it } from 'vitest';
import {
  ImbalanceAccumulator,
  ImbalanceError,
  type ImbalanceMetric,
  imbalance,
  imbalanceWithReplaced,
  normalizedImbalance,
  rawCv,
} from './index';
import { MAX_ACCUMULATOR_LOAD } from './accumulator';

// mathjs declares its factory sets as one destructured Record, so `all` reads as possibly undefined
const big = create(all!, { number: 'BigNumber', precision: 80 });
type Big = BigNumber;

/** mathjs's mean and population ("uncorrected") standard deviation of BigNumbers. */
function bigMean(xs: Big[]): Big {
  return big.mean<Big>(xs);
}
function bigSd(xs: Big[]): Big {
  return (big.std as (values: Big[], normalization: 'uncorrected') => Big)(xs, 'uncorrected');
}

/** The exact value of a double as an 80-digit BigNumber (a decimal string would round subnormals). */
function exact(x: number): Big {
  if (x === 0) return big.bignumber(0);
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const raw = view.getBigUint64(0);
  const field = Number((raw >> 52n) & 0x7ffn);
  const fraction = raw & ((1n << 52n) - 1n);
  const [mantissa, exponent] = field === 0 ? [fraction, -1074] : [fraction | (1n << 52n), field - 1075];
  return big.multiply(big.bignumber(mantissa.toString()), big.pow(big.bignumber(2), exponent) as Big) as Big;
}

/** Oracle: population sd / mean with mathjs (0 for < 2 loads or a zero sum). */
function oracleRawCv(loads: readonly number[]): number {
  if (loads.length < 2 || loads.every((x) => x === 0)) return 0;
  const xs = loads.map(exact);
  return big.number(big.divide(bigSd(xs), bigMean(xs)) as Big);
}

/**
 * The plain fold exactly as spec §4.3 writes it (the code before the scaled fallback existed):
 * it may overflow to NaN/Infinity or lose its squares to underflow.
 */
function specRawCv(loads: readonly number[]): number {
  const n = loads.length;
  if (n < 2) return 0;
  let sum = 0;
  for (const x of loads) sum += x;
  if (sum === 0) return 0;
  const mean = sum / n;
  let squares = 0;
  for (const x of loads) squares += (x - mean) * (x - mean);
  return Math.sqrt(squares / n) / mean;
}

/**
 * Tolerance against the oracle: relative 1e-12 of (1 + cv) per load. The float fold is accurate
 * to a few n·ulp of the mean relative to the sd, so a near-balanced cluster (cv ≈ 1e-16) has
 * only an absolute accuracy; everything else is relative.
 */
function close(got: number, want: number, n: number): boolean {
  return Math.abs(got - want) <= 1e-12 * n * (1 + want);
}

const EXTREMES = [
  0,
  5e-324,
  2 ** -1022 - 2 ** -1074,
  2 ** -1022,
  1e-300,
  1e-200,
  1e-100,
  1,
  1e100,
  1e154,
  1e200,
  1e300,
  Number.MAX_SAFE_INTEGER,
  2 ** 64,
  Number.MAX_VALUE,
];
/** Any finite load, with the edges (0, subnormals, 1e±300, Number.MAX_VALUE) drawn often. */
const anyLoad = fc.oneof(
  fc.constantFrom(...EXTREMES),
  fc.double({ min: 0, max: Number.MAX_VALUE, noNaN: true }),
  fc.double({ min: 0, max: 3, noNaN: true }),
);
/** An ordinary load: what a real cluster has (ratios 0..4 on a fine grid). */
const ordinaryLoad = fc.integer({ min: 0, max: 4000 }).map((x) => x / 997);
const metric = fc.constantFrom<ImbalanceMetric>('raw', 'normalized');

describe('finite in, finite out', () => {
  it('every finite load vector gives a finite imbalance in range (raw ≤ √(n−1), normalised ≤ 1)', () => {
    fc.assert(
      fc.property(fc.array(anyLoad, { maxLength: 24 }), (loads) => {
        const n = loads.length;
        const raw = rawCv(loads);
        const normalized = normalizedImbalance(loads);
        expect(Number.isFinite(raw) && Number.isFinite(normalized)).toBe(true);
        expect(raw).toBeGreaterThanOrEqual(0);
        expect(raw).toBeLessThanOrEqual(Math.sqrt(Math.max(0, n - 1)) * (1 + 1e-12));
        expect(normalized).toBeLessThanOrEqual(1 + 1e-12);
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    // [1e308, 1e308]: the plain sum overflows to Infinity and the fold gives NaN; the loads are equal → 0
    ['two loads near Number.MAX_VALUE', [1e308, 1e308], 0],
    // [1e200, 0]: (1e200 − 5e199)² overflows; cv of [x, 0] is 1 for any x > 0
    ['squares that overflow', [1e200, 0], 1],
    // [Number.MAX_VALUE, 0, 0]: all on one of three → √2
    ['Number.MAX_VALUE on one of three', [Number.MAX_VALUE, 0, 0], Math.SQRT2],
    // [1e-200, 0]: the squared deviation (5e-201)² underflows to 0, the plain fold says 0; truly 1
    ['squares that underflow', [1e-200, 0], 1],
    // [5e-324, 0]: the mean rounds to 0 and the plain fold gives 0/0 = NaN; truly 1
    ['a subnormal load', [5e-324, 0], 1],
    // three subnormals 1, 2, 3 ulps: mean 2, sd √(2/3) → cv √(2/3)/2
    ['subnormal loads only', [5e-324, 1e-323, 1.5e-323], Math.sqrt(2 / 3) / 2],
  ])('%s', (_name, loads, want) => {
    expect(rawCv(loads)).toBeCloseTo(want, 14);
    expect(Number.isFinite(specRawCv(loads)) && Math.abs(specRawCv(loads) - want) < 1e-9).toBe(false); // the plain fold fails here
  });
});

describe('the plain fold of spec §4.3 is kept bit for bit wherever it is safe', () => {
  it('ordinary loads: identical bits to the spec fold (both metrics, and with replacements)', () => {
    fc.assert(
      fc.property(
        fc.array(ordinaryLoad, { maxLength: 40 }),
        fc.nat(),
        fc.nat(),
        ordinaryLoad,
        ordinaryLoad,
        (loads, a, b, la, lb) => {
          expect(rawCv(loads)).toBe(specRawCv(loads));
          const n = loads.length;
          expect(normalizedImbalance(loads)).toBe(n < 2 ? specRawCv(loads) : specRawCv(loads) / Math.sqrt(n - 1));
          if (n === 0) return;
          const i = a % n;
          const j = n > 1 && b % n !== i ? b % n : -1;
          const replaced = [...loads];
          replaced[i] = la;
          if (j !== -1) replaced[j] = lb;
          expect(imbalanceWithReplaced(loads, 'raw', i, la, j, lb)).toBe(specRawCv(replaced));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('any finite loads: where the spec fold is finite and its mean at least 2^-400, identical bits', () => {
    fc.assert(
      fc.property(fc.array(anyLoad, { minLength: 2, maxLength: 12 }), (loads) => {
        const spec = specRawCv(loads);
        const sum = loads.reduce((s, x) => s + x, 0);
        if (Number.isFinite(spec) && sum / loads.length >= 2 ** -400) expect(rawCv(loads)).toBe(spec);
      }),
      { numRuns: 3000 },
    );
  });

  it('scaling every load by a power of two changes no bit (the scaled path is the plain fold on scaled loads)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.integer({ min: 0, max: 4000 }).map((x) => x / 1024),
          { minLength: 2, maxLength: 20 },
        ),
        fc.integer({ min: -1000, max: 1000 }),
        (loads, k) => {
          const scaled = loads.map((x) => x * 2 ** k); // exact: the grid values stay normal
          expect(rawCv(scaled)).toBe(rawCv(loads));
          expect(normalizedImbalance(scaled)).toBe(normalizedImbalance(loads));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('mathjs oracle (80-digit BigNumbers)', () => {
  it('raw and normalised imbalance match the oracle on any finite loads', () => {
    fc.assert(
      fc.property(fc.array(anyLoad, { maxLength: 12 }), (loads) => {
        const want = oracleRawCv(loads);
        const n = loads.length;
        expect(close(rawCv(loads), want, n)).toBe(true);
        const wantNormalized = n < 2 ? want : want / Math.sqrt(n - 1);
        expect(close(normalizedImbalance(loads), wantNormalized, n)).toBe(true);
      }),
      { numRuns: 600 },
    );
  });

  it('the pieces (mean, population sd, CV) on ordinary loads scaled to the extremes', () => {
    fc.assert(
      fc.property(
        fc.array(ordinaryLoad, { minLength: 2, maxLength: 12 }),
        fc.constantFrom(1, 1e-300, 1e300, 2 ** -1060, 1e-150, 1e150),
        (base, factor) => {
          const loads = base.map((x) => x * factor);
          const xs = loads.map(exact);
          const mean = bigMean(xs);
          // the ratio in BigNumbers: as doubles, a subnormal mean and sd would round first
          // (and `isZero` of the Decimal itself: mathjs's own compares within an absolute tolerance)
          const want = mean.isZero() ? 0 : big.number(big.divide(bigSd(xs), mean) as Big);
          expect(close(rawCv(loads), want, loads.length)).toBe(true);
          // the same CV as the unscaled loads (scale invariance), up to the rounding of x·factor,
          // which is relative unless x·factor is subnormal (then only the oracle check applies)
          if (factor >= 1e-300) expect(close(rawCv(loads), rawCv(base), loads.length)).toBe(true);
        },
      ),
      { numRuns: 600 },
    );
  });

  it('is invariant under permutation (up to the fold’s rounding)', () => {
    fc.assert(
      fc.property(fc.array(anyLoad, { minLength: 2, maxLength: 12 }), fc.integer(), (loads, seed) => {
        const shift = Math.abs(seed) % loads.length;
        const permuted = loads.map((_, i) => loads[(i + shift) % loads.length]!).reverse();
        expect(close(rawCv(permuted), rawCv(loads), loads.length)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('imbalanceWithReplaced equals the fold over the modified array', () => {
  it('bit for bit, on any finite loads', () => {
    fc.assert(
      fc.property(
        fc.array(anyLoad, { minLength: 1, maxLength: 12 }),
        fc.nat(),
        fc.nat(),
        anyLoad,
        anyLoad,
        metric,
        (loads, a, b, la, lb, m) => {
          const n = loads.length;
          const i = a % n;
          const j = n > 1 && b % n !== i ? b % n : -1;
          const replaced = [...loads];
          replaced[i] = la;
          if (j !== -1) replaced[j] = lb;
          expect(imbalanceWithReplaced(loads, m, i, la, j, lb)).toBe(imbalance(replaced, m));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

/** Runs `fn` and returns the ImbalanceError it throws. */
function caught(fn: () => unknown): ImbalanceError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ImbalanceError);
    expect((error as ImbalanceError).name).toBe('ImbalanceError');
    return error as ImbalanceError;
  }
  throw new Error('expected an ImbalanceError');
}

describe('bad input is an ImbalanceError naming the argument', () => {
  it.each([
    ['a NaN load', () => rawCv([0.1, Number.NaN]), 'invalid-load', /loads\[1\]/],
    ['a negative load', () => rawCv([0.1, -0.5, 0.2]), 'invalid-load', /loads\[1\]/],
    ['an infinite load', () => rawCv([0.1, Infinity]), 'invalid-load', /loads\[1\]/],
    ['an infinite load beside a huge one', () => rawCv([Number.MAX_VALUE, Infinity]), 'invalid-load', /loads\[1\]/],
    ['a single NaN load', () => rawCv([Number.NaN]), 'invalid-load', /loads\[0\]/],
    ['a string load', () => rawCv([0.1, '0.5' as unknown as number]), 'invalid-load', /loads\[1\]/],
    ['no array', () => rawCv(null as unknown as number[]), 'invalid-argument', /loads/],
    ['an unknown metric', () => imbalance([0.1, 0.2], 'cv' as ImbalanceMetric), 'invalid-metric', /'cv'/],
    ['NaN in normalizedImbalance', () => normalizedImbalance([Number.NaN, 1]), 'invalid-load', /loads\[0\]/],
    [
      'replaced index out of range',
      () => imbalanceWithReplaced([0.1, 0.2], 'raw', 2, 0.1, -1, 0),
      'index-out-of-range',
      /i = 2/,
    ],
    [
      'second index out of range',
      () => imbalanceWithReplaced([0.1, 0.2], 'raw', 0, 0.1, 5, 0),
      'index-out-of-range',
      /j = 5/,
    ],
    [
      'the same index twice',
      () => imbalanceWithReplaced([0.1, 0.2], 'raw', 1, 0.1, 1, 0.3),
      'invalid-argument',
      /both 1/,
    ],
    ['a negative replacement', () => imbalanceWithReplaced([0.1, 0.2], 'raw', 0, -1, -1, 0), 'invalid-load', /li/],
    [
      'a NaN second replacement',
      () => imbalanceWithReplaced([0.1, 0.2], 'raw', 0, 1, 1, Number.NaN),
      'invalid-load',
      /lj/,
    ],
    [
      'an unknown metric with replacements',
      () => imbalanceWithReplaced([0.1, 0.2], 'x' as ImbalanceMetric, 0, 1, -1, 0),
      'invalid-metric',
      /'x'/,
    ],
    [
      'a load above the accumulator range',
      () => new ImbalanceAccumulator([0.1, 2 ** 401]),
      'invalid-load',
      /loads\[1\].*2\^400/,
    ],
    [
      'a move to the same node',
      () => new ImbalanceAccumulator([0.1, 0.2]).imbalanceWithMove(1, 1, 0.1, 'raw'),
      'invalid-argument',
      /two nodes/,
    ],
    [
      'a move that leaves a negative load',
      () => new ImbalanceAccumulator([0.1, 0.2]).imbalanceWithMove(0, 1, 0.5, 'raw'),
      'invalid-load',
      /index 0/,
    ],
    [
      'a NaN move',
      () => new ImbalanceAccumulator([0.1, 0.2]).approxImbalanceWithMove(0, 1, Number.NaN, 'raw'),
      'invalid-argument',
      /finite/,
    ],
    [
      'an approximate move to an unknown node',
      () => new ImbalanceAccumulator([0.1, 0.2]).approxImbalanceWithMove(0, 7, 0.1, 'raw'),
      'index-out-of-range',
      /7/,
    ],
    [
      'an unknown metric in the accumulator',
      () => new ImbalanceAccumulator([0.1, 0.2]).imbalance('x' as ImbalanceMetric),
      'invalid-metric',
      /'x'/,
    ],
  ])('%s', (_name, fn, code, message) => {
    const error = caught(fn);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });
});

describe('ImbalanceAccumulator on finite extremes', () => {
  const heldLoad = fc.oneof(
    fc.constantFrom(0, 5e-324, 1e-300, 1e-100, 1, 1e100, 1e120, MAX_ACCUMULATOR_LOAD),
    fc.double({ min: 0, max: MAX_ACCUMULATOR_LOAD, noNaN: true }),
    fc.double({ min: 0, max: 3, noNaN: true }),
  );

  it('bounds contain the exact fold and every output is finite', () => {
    const out = new Float64Array(3);
    fc.assert(
      fc.property(
        fc.array(heldLoad, { minLength: 2, maxLength: 16 }),
        fc.nat(),
        fc.nat(),
        heldLoad,
        heldLoad,
        metric,
        (loads, a, b, la, lb, m) => {
          const acc = new ImbalanceAccumulator(loads);
          const i = a % loads.length;
          const j = b % loads.length === i ? -1 : b % loads.length;
          acc.boundsWithReplaced(i, la, j, lb, m, out);
          const want = acc.imbalanceWithReplaced(i, la, j, lb, m);
          expect(Number.isFinite(want)).toBe(true);
          expect([...out].every(Number.isFinite)).toBe(true);
          expect(out[0]).toBeLessThanOrEqual(want);
          expect(out[1]).toBeGreaterThanOrEqual(want);
          if (j !== -1) {
            const d = loads[i]! - la; // la = loads[i] − d, so node j receives d
            if (Number.isFinite(d) && loads[j]! + d >= 0 && loads[j]! + d < Infinity) {
              expect(Number.isFinite(acc.approxImbalanceWithMove(i, j, d, m))).toBe(true);
            }
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('a rejected call leaves the state as it was (set-load sequences with rejections in between)', () => {
    const step = fc.record({
      index: fc.nat(),
      load: fc.oneof(heldLoad, fc.constantFrom(-1, Number.NaN, Infinity, 2 ** 401)),
    });
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { minLength: 2, maxLength: 10 }),
        fc.array(step, { maxLength: 20 }),
        metric,
        (initial, steps, m) => {
          const acc = new ImbalanceAccumulator(initial);
          const model = [...initial];
          const out = new Float64Array(3);
          for (const { index, load } of steps) {
            const i = index % model.length;
            const valid = load >= 0 && load <= MAX_ACCUMULATOR_LOAD;
            if (valid) {
              acc.setLoad(i, load);
              model[i] = load;
            } else {
              expect(caught(() => acc.setLoad(i, load)).code).toBe('invalid-load');
            }
            expect(acc.imbalance(m)).toBe(imbalance(model, m));
            expect(acc.load(i)).toBe(model[i]);
            acc.boundsWithReplaced(0, model[0]!, -1, 0, m, out);
            expect(out[0]).toBeLessThanOrEqual(imbalance(model, m));
            expect(out[1]).toBeGreaterThanOrEqual(imbalance(model, m));
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
