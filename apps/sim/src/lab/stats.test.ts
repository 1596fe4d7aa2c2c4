import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  computeStats,
  computeVerdicts,
  describeValues,
  metricValue,
  pairedDifference,
  type MetricStats,
} from './stats';
import type { RunSummary } from './summary';

/** Hyndman & Fan type 7, written out independently of mathjs. */
function type7(values: number[], p: number): number {
  const xs = [...values].sort((a, b) => a - b);
  const h = (xs.length - 1) * p;
  const lo = Math.floor(h);
  return lo + 1 < xs.length ? xs[lo]! + (h - lo) * (xs[lo + 1]! - xs[lo]!) : xs[lo]!;
}

describe('describeValues', () => {
  it('hand-worked: 1..20', () => {
    const xs = Array.from({ length: 20 }, (_, i) => 20 - i); // unsorted on purpose
    const s = describeValues(xs);
    expect(s.n).toBe(20);
    expect(s.mean).toBe(10.5); // 210 / 20
    // Σ (i − 10.5)² over 1..20 = 665; 665 / 19 = 35; √35
    expect(s.sd).toBeCloseTo(Math.sqrt(35), 12);
    // h = 19 · 0.5 = 9.5 → x₉ + 0.5 (x₁₀ − x₉) = 10 + 0.5 = 10.5
    expect(s.p50).toBe(10.5);
    // h = 19 · 0.95 = 18.05 → x₁₈ + 0.05 (x₁₉ − x₁₈) = 19 + 0.05 = 19.05
    expect(s.p95).toBeCloseTo(19.05, 12);
    expect([s.min, s.max]).toEqual([1, 20]);
  });
  it('one run: no standard deviation, every quantile is the value', () => {
    expect(describeValues([7])).toEqual({ n: 1, mean: 7, sd: null, p50: 7, p95: 7, min: 7, max: 7 });
  });
  it('two runs: p95 interpolates (h = 0.95)', () => {
    // 0 + 0.95 · (10 − 0) = 9.5; sd = √((25 + 25) / 1) = √50
    const s = describeValues([10, 0]);
    expect(s.p95).toBeCloseTo(9.5, 12);
    expect(s.sd).toBeCloseTo(Math.sqrt(50), 12);
  });
  it('rejects an empty list and non-finite values', () => {
    expect(() => describeValues([])).toThrow(/no values/);
    expect(() => describeValues([1, Number.NaN])).toThrow(/finite/);
    expect(() => describeValues([Infinity])).toThrow(/finite/);
  });
  it('properties: quantiles follow type 7, order min ≤ p50 ≤ p95 ≤ max, mean in range, permutation-invariant', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 40 }), (xs) => {
        const s = describeValues(xs);
        const rev = describeValues([...xs].reverse());
        const tol = 1e-9 * (1 + Math.abs(s.max) + Math.abs(s.min));
        return (
          Math.abs(s.p50 - type7(xs, 0.5)) <= tol &&
          Math.abs(s.p95 - type7(xs, 0.95)) <= tol &&
          s.min <= s.p50 + tol &&
          s.p50 <= s.p95 + tol &&
          s.p95 <= s.max + tol &&
          s.mean >= s.min - tol &&
          s.mean <= s.max + tol &&
          (s.sd === null ? xs.length === 1 : s.sd >= 0) &&
          Math.abs(rev.mean - s.mean) <= tol &&
          rev.p95 === s.p95
        );
      }),
    );
  });
});

const summary = (over: Partial<RunSummary>): RunSummary => ({
  guestContentionSeconds: null,
  migrationSeconds: null,
  moves: 0,
  failedMoves: 0,
  movesBySid: {},
  pingPongs: 0,
  imbalanceTimeWeighted: 0.1,
  pressureSeconds: null,
  simSeconds: 100,
  ...over,
});

describe('metricValue', () => {
  it('derives the most moves of one resource; other metrics as in the summary', () => {
    const s = summary({ movesBySid: { 'vm:1': 2, 'vm:2': 5 }, imbalanceTimeWeighted: 0.25 });
    expect(metricValue(s, 'maxMovesPerSid')).toBe(5);
    expect(metricValue(s, 'imbalanceTimeWeighted')).toBe(0.25);
    expect(metricValue(summary({}), 'maxMovesPerSid')).toBe(0);
  });
});

describe('computeStats and computeVerdicts', () => {
  const groups = [
    {
      scenario: 'sc',
      variant: 'defaults',
      summaries: [summary({ moves: 10, pingPongs: 4 }), summary({ moves: 14, pingPongs: 2 })],
    },
    {
      scenario: 'sc',
      variant: 'recommended',
      summaries: [summary({ moves: 2, pingPongs: 0 }), summary({ moves: 4, pingPongs: 0 })],
    },
  ];
  const stats = computeStats(groups);
  const verdicts = computeVerdicts(stats, ['sc'], ['defaults', 'recommended']);
  const v = (metric: string) => verdicts.find((x) => x.metric === metric)!;

  it('judges on the mean, with the difference and the relative change against the runner-up', () => {
    // defaults: mean 12, recommended: mean 3 → 9 fewer, 9 / 12 = 75 %
    expect(v('moves')).toMatchObject({
      best: ['recommended'],
      next: 'defaults',
      bestMean: 3,
      nextMean: 12,
      difference: 9,
      relative: 0.75,
    });
    // defaults 3, recommended 0 → 3 fewer, 100 %
    expect(v('pingPongs')).toMatchObject({ best: ['recommended'], difference: 3, relative: 1 });
  });
  it('equal means are a tie: every variant best, none next', () => {
    expect(v('failedMoves')).toMatchObject({
      best: ['defaults', 'recommended'],
      next: null,
      difference: 0,
      note: 'tie',
    });
    expect(v('imbalanceTimeWeighted')).toMatchObject({ next: null, note: 'tie' });
  });
  it('a metric some run cannot tell has no statistics and no verdict, with the reason', () => {
    const ps = stats.find((s) => s.metric === 'pressureSeconds' && s.variant === 'defaults') as MetricStats;
    expect(ps.stats).toBeNull();
    expect(ps.reason).toBe('no pressure telemetry');
    expect(v('pressureSeconds')).toMatchObject({ best: [], note: 'no pressure telemetry' });
  });
  it('simulated time is reported, never judged', () => {
    expect(v('simSeconds')).toMatchObject({ best: [], note: 'not judged' });
  });
  it('with three variants the best is compared with the second best', () => {
    const three = [
      ...groups,
      { scenario: 'sc', variant: 'no-smoothing', summaries: [summary({ moves: 5 }), summary({ moves: 7 })] },
    ];
    const vv = computeVerdicts(computeStats(three), ['sc'], ['defaults', 'recommended', 'no-smoothing']).find(
      (x) => x.metric === 'moves',
    )!;
    // recommended 3, no-smoothing 6, defaults 12 → 3 fewer than no-smoothing, 50 %
    expect(vv).toMatchObject({ best: ['recommended'], next: 'no-smoothing', difference: 3, relative: 0.5 });
  });
  it('two variants tied at the best are both best, ahead of the next', () => {
    const g = [
      { scenario: 'sc', variant: 'a', summaries: [summary({ moves: 0 })] },
      { scenario: 'sc', variant: 'b', summaries: [summary({ moves: 16 })] },
      { scenario: 'sc', variant: 'c', summaries: [summary({ moves: 0 })] },
    ];
    const vv = computeVerdicts(computeStats(g), ['sc'], ['a', 'b', 'c']).find((x) => x.metric === 'moves')!;
    // a and c: 0, b: 16 → 16 fewer, 100 %
    expect(vv).toMatchObject({ best: ['a', 'c'], next: 'b', bestMean: 0, nextMean: 16, difference: 16, relative: 1 });
  });
  it('one variant: nothing to judge', () => {
    const one = computeVerdicts(computeStats(groups.slice(0, 1)), ['sc'], ['defaults']);
    expect(one.every((x) => x.best.length === 0 && x.note !== undefined)).toBe(true);
  });
});

describe('paired verdicts: a lead clear of the seed-to-seed noise', () => {
  const runs = (variant: string, moves: number[]) => ({
    scenario: 'sc',
    variant,
    seeds: moves.map((_, i) => i + 1),
    summaries: moves.map((m) => summary({ moves: m })),
  });
  it.each<[string, number[], number[], boolean]>([
    // differences 2, 2, 2, 2: mean 2, sd 0 → se 0 → clear
    ['the same lead on every seed', [10, 11, 12, 13], [8, 9, 10, 11], true],
    // differences 10, −8, 9, −7: mean 1, sd √(Σ(d−1)²/3) = √((81+81+64+64)/3) = √96.7 ≈ 9.83, se ≈ 4.92; 1 ≤ 9.83 → within noise
    ['a lead that flips from seed to seed', [10, 2, 11, 3], [0, 10, 2, 10], false],
    // differences 5, 6, 4, 5: mean 5, sd √(2/3) ≈ 0.816, se ≈ 0.408; 5 > 0.816 → clear
    ['a large lead with a little noise', [10, 11, 9, 10], [5, 5, 5, 5], true],
  ])('%s', (_name, a, b, clear) => {
    const groups = [runs('a', a), runs('b', b)];
    const v = computeVerdicts(computeStats(groups), ['sc'], ['a', 'b'], groups).find((x) => x.metric === 'moves')!;
    expect(v.best).toEqual(['b']);
    expect(v.clear).toBe(clear);
  });
  it('the per-seed difference pairs runs by seed, whatever their order', () => {
    const a = {
      scenario: 'sc',
      variant: 'a',
      seeds: [3, 1, 2],
      summaries: [summary({ moves: 30 }), summary({ moves: 10 }), summary({ moves: 20 })],
    };
    const b = {
      scenario: 'sc',
      variant: 'b',
      seeds: [1, 2, 3],
      summaries: [summary({ moves: 11 }), summary({ moves: 22 }), summary({ moves: 33 })],
    };
    // differences b − a by seed: 1, 2, 3 → mean 2, sd 1, se 1/√3
    const d = pairedDifference(a, b, 'moves')!;
    expect(d.n).toBe(3);
    expect(d.mean).toBe(2);
    expect(d.se).toBeCloseTo(1 / Math.sqrt(3), 12);
  });
  it('one seed, or no seeds given: cannot tell (null), the verdict stands as before', () => {
    const one = [runs('a', [5]), runs('b', [1])];
    expect(computeVerdicts(computeStats(one), ['sc'], ['a', 'b'], one).find((x) => x.metric === 'moves')).toMatchObject(
      { best: ['b'], clear: null, pairedSe: null },
    );
    const v = computeVerdicts(computeStats(one), ['sc'], ['a', 'b']).find((x) => x.metric === 'moves')!;
    expect(v.clear).toBeUndefined();
  });
});
