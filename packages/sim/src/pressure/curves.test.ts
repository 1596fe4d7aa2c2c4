import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  curveShare,
  erlangC,
  logisticShare,
  piecewiseShare,
  queueServers,
  queueShare,
  type PressureCurve,
} from './curves';

/** Erlang C from its textbook form, with factorials: the reference the recursion is checked against. */
function erlangCReference(k: number, a: number): number {
  let fact = 1;
  let sum = 0;
  for (let j = 0; j < k; j++) {
    if (j > 0) fact *= j;
    sum += a ** j / fact;
  }
  const top = (a ** k / (fact * k)) * (k / (k - a));
  return top / (sum + top);
}

describe('erlangC: the probability that an arrival waits in M/M/k', () => {
  it.each([
    // M/M/1: C = ρ
    [1, 0.5, 0.5],
    // M/M/2, A = 1: B(1) = 1/2, B(2) = 0.5/2.5 = 0.2, C = 2·0.2 / (2 − 1·0.8) = 1/3
    [2, 1, 1 / 3],
    // M/M/2, A = 1.5 (ρ = 0.75): P0 = 1 / (1 + 1.5 + 2.25/0.5) = 1/7, C = 4.5 · 1/7 = 9/14
    [2, 1.5, 9 / 14],
    [4, 0, 0],
    [4, 4, 1],
    [4, 5, 1],
  ])('C(%i, %f) = %f', (k, a, expected) => {
    expect(erlangC(k, a)).toBeCloseTo(expected, 12);
  });

  it('equals the factorial form for small k', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.double({ min: 0.001, max: 0.999, noNaN: true }), (k, rho) => {
        expect(erlangC(k, rho * k)).toBeCloseTo(erlangCReference(k, rho * k), 9);
      }),
    );
  });

  it('stays finite for large k (no factorials)', () => {
    const c = erlangC(1024, 1000);
    expect(Number.isFinite(c)).toBe(true);
    expect(c).toBeGreaterThan(0);
    expect(c).toBeLessThan(1);
  });
});

describe('the families on synthetic loads', () => {
  const queue = (burstiness: number, maxPercent = 100): PressureCurve => ({ family: 'queue', burstiness, maxPercent });

  it.each<[string, PressureCurve, number, number, number]>([
    // 8 cores / burstiness 4 = 2 servers; x = 0.5 → A = 1: 0.5 · 1/3
    ['queue, 2 servers, half loaded', queue(4), 8, 0.5, 1 / 6],
    // 4 cores / 4 = 1 server: M/M/1, P(N > 1) = ρ² = 0.25
    ['queue, 1 server (M/M/1)', queue(4), 4, 0.5, 0.25],
    // 2 servers, ρ = 0.75: 0.75 · 9/14, capped by max 50 %: × 0.5
    ['queue, max 50 %', queue(1, 50), 2, 0.75, 0.5 * 0.75 * (9 / 14)],
    ['queue, saturated', queue(4), 32, 1, 1],
    ['queue, overcommitted', queue(4, 80), 32, 1.7, 0.8],
    ['queue, idle', queue(4), 32, 0, 0],
    // σ(0) = 0.5, σ(−5) = 0.0066929: (0.5 − 0.0066929) / (1 − 0.0066929) = 0.496631
    ['logistic at its knee', { family: 'logistic', knee: 0.5, width: 0.1, maxPercent: 100 }, 16, 0.5, 0.4966310265],
    // σ(5) = 0.9933071: (0.9933071 − 0.0066929) / 0.9933071 = 0.993262
    ['logistic far above', { family: 'logistic', knee: 0.5, width: 0.1, maxPercent: 100 }, 16, 1, 0.993262053],
    ['logistic at 0', { family: 'logistic', knee: 0.5, width: 0.1, maxPercent: 100 }, 16, 0, 0],
    // halfway between (0, 0) and (0.5, 10): 5 %
    [
      'piecewise, first segment',
      {
        family: 'piecewise',
        points: [
          [0, 0],
          [0.5, 10],
          [1, 60],
        ],
      },
      16,
      0.25,
      0.05,
    ],
    // halfway between (0.5, 10) and (1, 60): 35 %
    [
      'piecewise, second segment',
      {
        family: 'piecewise',
        points: [
          [0, 0],
          [0.5, 10],
          [1, 60],
        ],
      },
      16,
      0.75,
      0.35,
    ],
    [
      'piecewise, beyond the last point',
      {
        family: 'piecewise',
        points: [
          [0, 0],
          [0.5, 10],
          [1, 60],
        ],
      },
      16,
      2,
      0.6,
    ],
    [
      'piecewise, on a point',
      {
        family: 'piecewise',
        points: [
          [0, 0],
          [0.5, 10],
          [1, 60],
        ],
      },
      16,
      0.5,
      0.1,
    ],
  ])('%s', (_name, curve, cores, x, expected) => {
    expect(curveShare(curve, x, cores)).toBeCloseTo(expected, 9);
  });

  it('queue servers: cores grouped by burstiness, at least one', () => {
    expect(queueServers(32, 4)).toBe(8);
    expect(queueServers(30, 4)).toBe(7);
    expect(queueServers(2, 4)).toBe(1);
  });

  it('a burstier load reaches the same pressure at a lower load (the knee moves left)', () => {
    expect(queueShare(0.6, 32, { family: 'queue', burstiness: 8, maxPercent: 100 })).toBeGreaterThan(
      queueShare(0.6, 32, { family: 'queue', burstiness: 2, maxPercent: 100 }),
    );
  });
});

describe('monotonicity: more load never less pressure', () => {
  const curveArb: fc.Arbitrary<PressureCurve> = fc.oneof(
    fc.record({
      family: fc.constant('queue' as const),
      burstiness: fc.double({ min: 1, max: 64, noNaN: true }),
      maxPercent: fc.double({ min: 1, max: 100, noNaN: true }),
    }),
    fc.record({
      family: fc.constant('logistic' as const),
      knee: fc.double({ min: 0.05, max: 2, noNaN: true }),
      width: fc.double({ min: 0.001, max: 1, noNaN: true }),
      maxPercent: fc.double({ min: 1, max: 100, noNaN: true }),
    }),
    fc
      .array(fc.tuple(fc.double({ min: 0.01, max: 2, noNaN: true }), fc.double({ min: 0, max: 100, noNaN: true })), {
        minLength: 1,
        maxLength: 8,
      })
      .map((pts): PressureCurve => {
        const xs = [...new Set(pts.map((p) => p[0]))].sort((a, b) => a - b);
        const ys = pts.map((p) => p[1]).sort((a, b) => a - b);
        return {
          family: 'piecewise',
          points: [[0, 0], ...xs.map((x, i): [number, number] => [x, ys[Math.min(i, ys.length - 1)]!])],
        };
      }),
  );

  it('every family is non-decreasing in the load ratio and within 0..its maximum', () => {
    fc.assert(
      fc.property(
        curveArb,
        fc.integer({ min: 1, max: 256 }),
        fc.double({ min: 0, max: 3, noNaN: true }),
        fc.double({ min: 0, max: 3, noNaN: true }),
        (curve, cores, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          const sLo = curveShare(curve, lo, cores);
          const sHi = curveShare(curve, hi, cores);
          expect(sHi).toBeGreaterThanOrEqual(sLo - 1e-12);
          expect(sLo).toBeGreaterThanOrEqual(0);
          expect(sHi).toBeLessThanOrEqual(1 + 1e-12);
        },
      ),
    );
  });

  it('the logistic family is 0 at no load, whatever its parameters', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 2, noNaN: true }),
        fc.double({ min: 0.001, max: 1, noNaN: true }),
        (knee, width) => {
          expect(logisticShare(0, { family: 'logistic', knee, width, maxPercent: 100 })).toBe(0);
        },
      ),
    );
    expect(
      piecewiseShare(-1, {
        family: 'piecewise',
        points: [
          [0, 0],
          [1, 50],
        ],
      }),
    ).toBe(0);
  });
});
