import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ContentionError,
  emptyModel,
  fitModel,
  observeNodes,
  type NodeObservation,
  type PressureDimension,
} from './index';
import { MIN_SAMPLES, USAGE_CONFIDENCE } from './constants';
import { USAGE_PRIOR, curveAt, fitCurveFamily } from './curves';
import { type FitTables, fitCurveFamilyWith } from './curves';
import { CURVES, learnAll, synthetic, type TrueCurve } from './testing/support';

/** Absolute errors of the model's predictions against the true curve on a 0.01 grid of [low, high]. */
function errors(
  curve: TrueCurve,
  dimension: PressureDimension,
  low: number,
  high: number,
  seed: number,
  noise: number,
  outliers: number,
): number[] {
  const state = learnAll(
    synthetic('node1', curve, dimension, { seed, levels: 300, roundsPerLevel: 4, low, high, noise, outliers }),
  );
  const model = fitModel(state);
  const out: number[] = [];
  for (let i = Math.round(low * 100); i <= Math.round(high * 100); i++)
    out.push(Math.abs(model.predict('node1', dimension, i / 100).percent - curve(i / 100)));
  return out.sort((a, b) => a - b);
}

describe('the predictor recovers known curves (300 steady levels of 4 rounds over the range, 5 seeds)', () => {
  // stated error, percentage points: the largest error anywhere on the range, and the median
  // error over it (noise-free: the state's rounding of loads to 0.01 % and pressures to
  // 0.01 pp, no more). The README's table has the worst over 10 seeds: noise 2 pp / 5 %
  // outliers max 2.1 (linear), 5.1 (knee), 3.5 (logistic), 7.6 (steep memory, whose cliff
  // rises 22 pp within one bin); noise 3 pp / 10 % max 4.1, 4.3, 4.3, 11.5; medians ≤ 1.03.
  it.each([
    // curve, dimension, range, noise pp, outlier share, max error, median error
    ['linear', 'cpu', 1.1, 0, 0, 0.05, 0.01],
    ['linear', 'cpu', 1.1, 2, 0.05, 4, 1],
    ['linear', 'cpu', 1.1, 3, 0.1, 7, 1.5],
    ['knee', 'cpu', 1.1, 0, 0, 0.05, 0.01],
    ['knee', 'cpu', 1.1, 2, 0.05, 6, 1],
    ['knee', 'cpu', 1.1, 3, 0.1, 7, 1.5],
    ['logistic', 'cpu', 1.1, 0, 0, 0.5, 0.1],
    ['logistic', 'cpu', 1.1, 2, 0.05, 5, 1],
    ['logistic', 'cpu', 1.1, 3, 0.1, 7, 1.5],
    ['steepMemory', 'mem', 1.0, 0, 0, 0.05, 0.01],
    ['steepMemory', 'mem', 1.0, 2, 0.05, 10, 1],
    ['steepMemory', 'mem', 1.0, 3, 0.1, 15, 1.5],
  ] as const)(
    '%s (%s, 0..%d, noise %d pp, outliers %d): max error ≤ %d pp, median ≤ %d pp',
    (name, dimension, high, noise, outliers, maxError, medianError) => {
      for (let seed = 1; seed <= 5; seed++) {
        const e = errors(CURVES[name]!, dimension, 0, high, seed, noise, outliers);
        expect(e[e.length - 1]).toBeLessThanOrEqual(maxError);
        expect(e[e.length >> 1]).toBeLessThanOrEqual(medianError);
      }
    },
  );

  it('finds the family and its parameters from the points (noise-free): knee, exponent, centre', () => {
    const fitOf = (curve: TrueCurve, dimension: PressureDimension, high: number) =>
      fitModel(
        learnAll(
          synthetic('node1', curve, dimension, {
            seed: 1,
            levels: 300,
            roundsPerLevel: 4,
            low: 0,
            high,
            noise: 0,
            outliers: 0,
          }),
        ),
      ).curve('node1', dimension)!.fit;
    const scale = (fit: ReturnType<typeof fitOf>) => (fit?.family === 'hinge' ? fit.scale : Number.NaN);
    const knee = fitOf(CURVES.knee!, 'cpu', 1.1);
    expect(knee).toMatchObject({ family: 'hinge', knee: 0.6, exponent: 1 });
    expect(scale(knee)).toBeCloseTo(200, 0);
    const cliff = fitOf(CURVES.steepMemory!, 'mem', 1.0);
    expect(cliff).toMatchObject({ family: 'hinge', knee: 0.88, exponent: 2 });
    expect(scale(cliff) / 4000).toBeCloseTo(1, 2);
    expect(fitOf(CURVES.logistic!, 'cpu', 1.1)).toMatchObject({ family: 'logistic', width: 0.05 });
  });

  it('extrapolates above the observed loads with the fitted shape (knee seen up to 85 %: within 3 pp at 90-100 %)', () => {
    for (let seed = 1; seed <= 3; seed++) {
      const model = fitModel(
        learnAll(
          synthetic('node1', CURVES.knee!, 'cpu', {
            seed,
            levels: 100,
            roundsPerLevel: 4,
            low: 0.3,
            high: 0.85,
            noise: 2,
            outliers: 0.05,
          }),
        ),
      );
      for (const x of [0.9, 0.95, 1]) {
        const p = model.predict('node1', 'cpu', x);
        expect(p.reason).toBe('extrapolated');
        expect(Math.abs(p.percent - CURVES.knee!(x))).toBeLessThanOrEqual(3);
      }
    }
  });
});

describe('confidence', () => {
  it('grows with the data near the load', () => {
    const rounds = [
      ...synthetic('node1', CURVES.linear!, 'cpu', {
        seed: 2,
        levels: 200,
        roundsPerLevel: 4,
        low: 0.4,
        high: 0.6,
        noise: 2,
        outliers: 0,
      }),
    ];
    const after = (n: number) => fitModel(learnAll(rounds.slice(0, n))).predict('node1', 'cpu', 0.5).confidence;
    const seq = [10, 40, 200, 800].map(after);
    for (let i = 1; i < seq.length; i++) expect(seq[i]).toBeGreaterThan(seq[i - 1]!);
    expect(seq[seq.length - 1]).toBeGreaterThan(0.95);
  });

  it('decays with the distance beyond the observed loads, and is lower with the prior shape than with a fitted one', () => {
    const seen = fitModel(
      learnAll(
        synthetic('node1', CURVES.knee!, 'cpu', {
          seed: 4,
          levels: 100,
          roundsPerLevel: 4,
          low: 0.3,
          high: 0.8,
          noise: 1,
          outliers: 0,
        }),
      ),
    );
    const c = [0.8, 0.9, 1.0, 1.2].map((x) => seen.predict('node1', 'cpu', x).confidence);
    for (let i = 1; i < c.length; i++) expect(c[i]).toBeLessThan(c[i - 1]!);
    // idle node: the rise never showed, the prior's shape is used and the confidence halved
    const idle = fitModel(
      learnAll(
        synthetic('node1', CURVES.knee!, 'cpu', {
          seed: 4,
          levels: 100,
          roundsPerLevel: 4,
          low: 0.3,
          high: 0.5,
          noise: 1,
          outliers: 0,
        }),
      ),
    );
    expect(idle.curve('node1', 'cpu')!.fit).toBeUndefined();
    const beyond = (m: typeof seen, from: number) =>
      m.predict('node1', 'cpu', from + 0.1).confidence / m.predict('node1', 'cpu', from).confidence;
    expect(beyond(idle, 0.5)).toBeLessThan(beyond(seen, 0.8));
  });
});

describe('where the model cannot know it says so and falls back to the usage-based prior', () => {
  const prior = (dimension: PressureDimension, load: number) => curveAt(USAGE_PRIOR[dimension], load);

  it.each([
    // name, expected reason, node asked, dimension, observations (10 s apart)
    ['a node never observed', 'unknown-node', 'node9', 'cpu', []],
    [
      'a node without PSI',
      'no-psi',
      'node1',
      'cpu',
      Array.from({ length: 30 }, () => ({ node: 'node1', cpuLoad: 0.9, memLoad: 0.5 })),
    ],
    [
      'a node without memory PSI',
      'no-psi',
      'node1',
      'mem',
      Array.from({ length: 30 }, () => ({ node: 'node1', cpuLoad: 0.9, memLoad: 0.95, pressureCpu: 40 })),
    ],
    [
      'too little history',
      'too-little-history',
      'node1',
      'cpu',
      Array.from({ length: MIN_SAMPLES }, () => ({
        node: 'node1',
        cpuLoad: 0.9,
        memLoad: 0.5,
        pressureCpu: 40,
        pressureMem: 0,
      })),
    ],
    [
      'only unsettled samples',
      'too-little-history',
      'node1',
      'cpu',
      Array.from({ length: 30 }, (_, i) => ({ node: 'node1', cpuLoad: (i % 2) * 0.5, memLoad: 0.5, pressureCpu: 40 })),
    ],
  ] as const)('%s: reason %s, the prior, confidence USAGE_CONFIDENCE', (_name, reason, node, dimension, rounds) => {
    const model = fitModel(learnAll(rounds as readonly NodeObservation[]));
    for (const load of [0, 0.5, 0.8, 0.95, 1.2]) {
      expect(model.predict(node, dimension, load)).toEqual({
        percent: prior(dimension, load),
        confidence: USAGE_CONFIDENCE,
        basis: 'usage',
        reason,
      });
    }
    expect(model.curve(node, dimension)).toBeUndefined();
  });

  it('the prior is the documented judgement: cpu 5.6 % at 80 %, 22 % at 90 %, 50 % at full; memory 6.7 % at 90 %, 60 % at full', () => {
    expect([0.7, 0.8, 0.9, 1].map((x) => +prior('cpu', x).toFixed(1))).toEqual([0, 5.6, 22.2, 50]);
    expect([0.85, 0.9, 0.95, 1].map((x) => +prior('mem', x).toFixed(1))).toEqual([0, 6.7, 26.7, 60]);
  });

  it('uses the node’s own curve once MIN_SAMPLES settled samples are in', () => {
    const rounds = Array.from({ length: MIN_SAMPLES + 1 }, () => ({
      node: 'node1',
      cpuLoad: 0.9,
      memLoad: 0.5,
      pressureCpu: 40,
      pressureMem: 0,
    }));
    expect(fitModel(learnAll(rounds)).predict('node1', 'cpu', 0.9)).toMatchObject({
      percent: 40,
      basis: 'learned',
      reason: 'in-range',
    });
  });
});

describe('robustness', () => {
  it('every prediction is a finite percentage with a confidence in 0..1, whatever was learned and asked', () => {
    const observation = fc.record({
      node: fc.constantFrom('node1', 'node2', 'node3'),
      cpuLoad: fc.double({ min: 0, max: 3, noNaN: true }),
      memLoad: fc.double({ min: 0, max: 3, noNaN: true }),
      pressureCpu: fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: undefined }),
      pressureMem: fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: null }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(observation, { selector: (o) => o.node, maxLength: 3 }), { maxLength: 60 }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        (rounds, load) => {
          const model = fitModel(learnAll(rounds));
          for (const node of ['node1', 'node2', 'node4']) {
            for (const dimension of ['cpu', 'mem'] as const) {
              const p = model.predict(node, dimension, load);
              expect(Number.isFinite(p.percent) && p.percent >= 0 && p.percent <= 100).toBe(true);
              expect(p.confidence >= 0 && p.confidence <= 1).toBe(true);
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('predictions are non-decreasing in the load', () => {
    const model = fitModel(
      learnAll(
        synthetic('node1', CURVES.logistic!, 'cpu', {
          seed: 9,
          levels: 100,
          roundsPerLevel: 4,
          low: 0.2,
          high: 1.0,
          noise: 4,
          outliers: 0.1,
        }),
      ),
    );
    let last = -1;
    for (let i = 0; i <= 200; i++) {
      const p = model.predict('node1', 'cpu', i / 100).percent;
      expect(p).toBeGreaterThanOrEqual(last);
      last = p;
    }
  });

  it('names a bad load or dimension', () => {
    const model = fitModel(emptyModel());
    expect(() => model.predict('node1', 'cpu', -1)).toThrow(
      new ContentionError('invalid-argument', 'load must be a finite number >= 0 (a fraction of capacity), got -1'),
    );
    expect(() => model.predict('node1', 'cpu', Number.NaN)).toThrow(/got NaN/);
    expect(() => model.predict('node1', 'disk' as never, 0.5)).toThrow(
      new ContentionError('invalid-argument', "dimension must be 'cpu' or 'mem', got 'disk'"),
    );
  });

  it('the family fit needs the rise to show: two points at or above the floor, two bins apart', () => {
    expect(fitCurveFamily([0.1, 0.2, 0.3], [0, 0, 1], [7, 7, 7])).toBeUndefined();
    expect(fitCurveFamily([0.5, 0.525], [5, 10], [7, 7])).toBeUndefined();
    const fit = fitCurveFamily([0.4, 0.5, 0.6, 0.7], [0, 0, 20, 40], [7, 7, 7, 7]);
    expect(fit).toMatchObject({ family: 'hinge', knee: 0.5, exponent: 1 });
    expect(fit?.family === 'hinge' && fit.scale).toBeCloseTo(200, 9);
  });

  it('is deterministic: the same state fits to the same predictions after a JSON round trip', () => {
    const state = learnAll(
      synthetic('node1', CURVES.knee!, 'cpu', {
        seed: 5,
        levels: 80,
        roundsPerLevel: 4,
        low: 0,
        high: 1.2,
        noise: 3,
        outliers: 0.1,
      }),
    );
    const a = fitModel(state);
    const b = fitModel(JSON.parse(JSON.stringify(state)));
    for (let i = 0; i <= 150; i++)
      expect(b.predict('node1', 'cpu', i / 100)).toEqual(a.predict('node1', 'cpu', i / 100));
    expect(observeNodes(state, 1e9, []).nodes).toEqual([]);
  });
});

describe("the fit with kept tables of a point's curve values", () => {
  // points as the learner hands them: ascending loads, pressures that rise somewhere
  const points = fc
    .array(
      fc.record({
        load: fc.integer({ min: 0, max: 15000 }).map((x) => x / 1e4),
        pressure: fc.integer({ min: 0, max: 10000 }).map((p) => p / 100),
        weight: fc.integer({ min: 1, max: 32 }),
      }),
      { minLength: 2, maxLength: 24 },
    )
    .map((ps) => [...new Map(ps.map((p) => [p.load, p])).values()].sort((a, b) => a.load - b.load));

  it('fits the same curve as without them, while the tables are shared by a sequence of fits', () => {
    fc.assert(
      fc.property(fc.array(points, { minLength: 1, maxLength: 6 }), (fits) => {
        // one table per load value, kept across the fits (as a bin's summary keeps its own)
        const tables = new Map<number, FitTables>();
        for (const ps of fits) {
          const loads = ps.map((p) => p.load);
          const pressures = ps.map((p) => p.pressure);
          const weights = ps.map((p) => p.weight);
          const holders = loads.map((x) => tables.get(x) ?? tables.set(x, {}).get(x)!);
          const kept = fitCurveFamilyWith(loads, pressures, weights, holders);
          expect(kept).toEqual(fitCurveFamily(loads, pressures, weights));
          // a second fit reads the powers the first one kept
          expect(fitCurveFamilyWith(loads, pressures, weights, holders)).toEqual(kept);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the powers it worked out', () => {
    const holders: FitTables[] = [{}, {}, {}, {}];
    fitCurveFamilyWith([0.5, 0.7, 0.8, 0.9], [0, 5, 20, 60], [8, 8, 8, 8], holders);
    const filled = holders.map((h) => (h.powers ? h.powers.filter((v) => !Number.isNaN(v)).length : 0));
    expect(filled.every((n) => n > 0)).toBe(true);
  });
});
