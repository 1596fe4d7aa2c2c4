import { describe, expect, it } from 'vitest';
import {
  CONTENTION_DEFAULTS,
  ContentionError,
  assessMove,
  contentionOptions,
  emptyModel,
  fitModel,
  guestActivity,
  migrationSettings,
  moveScorer,
  predictMovePressure,
  type FittedModel,
  type MovedBundle,
  type NodeContention,
  type NodeObservation,
} from './index';
import { contentionRate } from './score';
import { CURVES, learnAll, synthetic } from './testing/support';

const GIB = 1024 ** 3;
const node = (
  name: string,
  cpu: number,
  mem: number,
  activity: number,
  maxcpu = 16,
  maxmem = 64 * GIB,
): NodeContention => ({
  node: name,
  cpu,
  maxcpu,
  mem,
  maxmem,
  activity,
});
const bundle = (cpu: number, mem: number, activity: number, guests = 1, transferBytes = mem): MovedBundle => ({
  cpu,
  mem,
  activity,
  guests,
  transferBytes,
});

describe('assessMove: the worked example (usage prior, defaults)', () => {
  // node1: 15 of 16 cores (load 0.9375), 6 busy guests; node2: 2 of 16 (0.125), 1 guest.
  // A guest using 2 of its 4 cores (activity 0.5) and 4 GiB moves node1 → node2.
  // Prior cpu = 50/0.09 · (load − 0.7)²: node1 31.3368 % → at 13 cores (0.8125) 7.03125 %;
  // node2 0 % before and after (0.25 < 0.7); memory below 85 % everywhere: 0.
  // rate before = 6 · 0.313368 = 1.880208; after = 5.5 · 0.0703125 = 0.386719 (guest-s/s)
  // migration 5 s + 4 GiB / 512 MiB/s = 13 s; saved = 1.493490 · (600 − 13) = 876.678
  // cost = 1 · (13 · 0.1 + 0.3) = 1.6; confidence 0.25 (prior) → net = 876.678 · 0.25 − 1.6 = 217.570
  const a = assessMove(fitModel(emptyModel()), {
    source: node('node1', 15, 32 * GIB, 6),
    target: node('node2', 2, 16 * GIB, 1),
    bundle: bundle(2, 4 * GIB, 0.5),
  });

  it('predicts the pressures of both ends', () => {
    expect(a.source.cpu.before.percent).toBeCloseTo(31.336806, 5);
    expect(a.source.cpu.after.percent).toBeCloseTo(7.03125, 9);
    expect([
      a.target.cpu.before.percent,
      a.target.cpu.after.percent,
      a.source.mem.after.percent,
      a.target.mem.after.percent,
    ]).toEqual([0, 0, 0, 0]);
    expect(a.source.cpu.after).toMatchObject({ basis: 'usage', reason: 'unknown-node' });
  });

  it('scores the saved guest contention net of the migration', () => {
    expect(a.rateBefore).toBeCloseTo(1.880208, 5);
    expect(a.rateAfter).toBeCloseTo(0.386719, 5);
    expect(a.relative).toBeCloseTo(0.794321, 5);
    expect(a.migrationSeconds).toBe(13);
    expect(a.savedSeconds).toBeCloseTo(876.678, 2);
    expect(a.costSeconds).toBeCloseTo(1.6, 12);
    expect(a.confidence).toBe(0.25);
    expect(a.netSeconds).toBeCloseTo(217.57, 2);
    expect(a.basis).toBe('usage');
  });
});

/** Three nodes that learned the knee curve (cpu) over their whole range: a confident model. */
function learnedModel() {
  return fitModel(learnedState());
}

function learnedState() {
  const knee = CURVES.knee!;
  const rounds: NodeObservation[][] = [];
  const streams = ['node1', 'node2', 'node3'].map((n, i) =>
    synthetic(n, knee, 'cpu', {
      seed: 10 + i,
      levels: 200,
      roundsPerLevel: 4,
      low: 0,
      high: 1.1,
      noise: 1,
      outliers: 0,
    }),
  );
  for (;;) {
    const round = streams.map((s) => s.next());
    if (round.some((r) => r.done)) break;
    rounds.push(round.map((r) => r.value as NodeObservation));
  }
  return learnAll(rounds);
}

describe('assessMove on a learned model (knee: 0 to 60 %, then 2 points per load percent)', () => {
  const model = learnedModel();

  it('a hot node relieved onto a cool one: a large gain, confident', () => {
    // node1 at 0.9 (60 %), node2 at 0.3 (0 %): 2 cores of 16 move (0.125): node1 → 35 %, node2 → 0 %
    const a = assessMove(model, {
      source: node('node1', 14.4, 0, 4),
      target: node('node2', 4.8, 0, 2),
      bundle: bundle(2, 2 * GIB, 1),
    });
    expect(a.source.cpu.before.percent).toBeCloseTo(60, 0);
    expect(a.source.cpu.after.percent).toBeCloseTo(35, 0);
    expect(a.target.cpu.after.percent).toBeLessThan(1);
    expect(a.basis).toBe('learned');
    expect(a.confidence).toBeGreaterThan(0.8);
    expect(a.netSeconds).toBeGreaterThan(500);
  });

  it('an idle cluster: nothing waits, so no move saves anything and every move costs', () => {
    const a = assessMove(model, {
      source: node('node1', 4, 0, 3),
      target: node('node2', 1, 0, 1),
      bundle: bundle(2, 4 * GIB, 1),
    });
    expect(a.rateBefore).toBeLessThan(0.01);
    expect(Math.abs(a.savedSeconds)).toBeLessThan(a.costSeconds);
    expect(a.netSeconds).toBeLessThan(0);
  });

  it('moving onto a node past its knee makes it worse: negative, and not discounted', () => {
    // node1 at 0.7 (20 %), node2 at 0.75 (30 %): node2 → 0.875 (55 %) while node1 → 0.575 (0 %)
    const a = assessMove(model, {
      source: node('node1', 11.2, 0, 1),
      target: node('node2', 12, 0, 6),
      bundle: bundle(2, 2 * GIB, 1),
    });
    expect(a.savedSeconds).toBeLessThan(0);
    expect(a.netSeconds).toBeCloseTo(a.savedSeconds - a.costSeconds, 9);
  });

  it("a move far below the loads the source was seen at: the moving guest's escape keeps its own confidence", () => {
    // a model that knows node4 only saturated: 80 % now (confidence 0.9), 10 % after the move
    // (an extrapolation, confidence 0.1); node2 stays at 0 % (0.9); no memory pressure (0.9)
    const model: FittedModel = {
      nodes: ['node2', 'node4'],
      curve: () => undefined,
      predict: (n, dimension, load) => {
        const percent = n === 'node4' && dimension === 'cpu' ? (load >= 0.99 ? 80 : 10) : 0;
        const confidence = n === 'node4' && dimension === 'cpu' && load < 0.99 ? 0.1 : 0.9;
        return { percent, confidence, basis: 'learned', reason: confidence < 0.5 ? 'extrapolated' : 'in-range' };
      },
    };
    // 6 guests' worth of activity on node4 (16 of 16 cores); one with activity 1 and 8 cores leaves
    const a = assessMove(model, {
      source: node('node4', 16, 0, 6),
      target: node('node2', 3.2, 0, 1),
      bundle: bundle(8, 2 * GIB, 1),
    });
    // copy 5 + 4 s; counted 591 s. Before 6 · 0.8 = 4.8; after 5 · 0.1 = 0.5; escape: 5 · 0.8 = 4.0
    expect(a.migrationSeconds).toBe(9);
    expect(a.savedSeconds).toBeCloseTo(4.3 * 591, 9);
    expect(a.escapeSeconds).toBeCloseTo(0.8 * 591, 9);
    expect([a.confidence, a.escapeConfidence]).toEqual([0.1, 0.9]);
    expect(a.movingRate).toBeCloseTo(0.8, 12);
    expect(a.movedCpu).toBe(8);
    expect(a.costSeconds).toBeCloseTo(9 * 0.1 + 0.3, 12);
    // 472.8 · 0.9 + 2068.5 · 0.1 − 1.2; a single discount (the least certain prediction) gave 252.93
    expect(a.netSeconds).toBeCloseTo(0.8 * 591 * 0.9 + 3.5 * 591 * 0.1 - 1.2, 9);
    expect(a.savedSeconds * a.confidence - a.costSeconds).toBeCloseTo(252.93, 9);
  });

  it('a move and its reverse cannot both gain (one consistent model)', () => {
    const s = node('node1', 13, 0, 3);
    const t = node('node2', 9, 0, 2);
    const there = assessMove(model, { source: s, target: t, bundle: bundle(1.5, GIB, 0.75) });
    const back = assessMove(model, {
      source: { ...t, cpu: t.cpu + 1.5, activity: t.activity + 0.75 },
      target: { ...s, cpu: s.cpu - 1.5, activity: s.activity - 0.75 },
      bundle: bundle(1.5, GIB, 0.75),
    });
    expect(there.netSeconds > 0 && back.netSeconds > 0).toBe(false);
  });

  it('the lab hook gives the same pressures as the score', () => {
    const source = node('node1', 14.4, 8 * GIB, 4);
    const target = node('node3', 4.8, 8 * GIB, 2);
    const hook = predictMovePressure(model, source, target, { cpu: 2, mem: 2 * GIB });
    const a = assessMove(model, { source, target, bundle: bundle(2, 2 * GIB, 1) });
    expect(hook).toEqual({ source: a.source, target: a.target });
  });
});

describe('guestActivity and contentionRate', () => {
  it.each([
    // cpu, maxcpu, activity
    [2, 4, 0.5],
    [6, 4, 1],
    [0, 4, 0],
    [0.5, 0, 1],
    [0, 0, 0],
  ])('a guest using %d of %d cores is %d active', (cpu, maxcpu, expected) => {
    expect(guestActivity(cpu, maxcpu)).toBe(expected);
  });

  it('caps each unit of activity at waiting all of its time', () => {
    expect(contentionRate(3, 20, 10)).toBeCloseTo(0.9, 12);
    expect(contentionRate(3, 90, 40)).toBe(3);
  });
});

describe('bad arguments and options are named', () => {
  const model = fitModel(emptyModel());
  const good = { source: node('node1', 8, GIB, 2), target: node('node2', 4, GIB, 1), bundle: bundle(1, GIB, 0.5) };
  it.each([
    [
      'source.maxcpu',
      { ...good, source: { ...good.source, maxcpu: 0 } },
      'move.source.maxcpu must be a finite number > 0 and <= 2^53, got 0',
    ],
    [
      'target.node',
      { ...good, target: { ...good.target, node: '' } },
      "move.target.node must be a non-empty string, got ''",
    ],
    [
      'same node',
      { ...good, target: { ...good.target, node: 'node1' } },
      "move.target.node must be another node than the source, got 'node1'",
    ],
    [
      'target.activity',
      { ...good, target: { ...good.target, activity: Number.NaN } },
      'move.target.activity must be a finite number >= 0 and <= 2^53, got NaN',
    ],
    [
      'bundle.cpu',
      { ...good, bundle: { ...good.bundle, cpu: -1 } },
      'move.bundle.cpu must be a finite number >= 0 and <= 2^53, got -1',
    ],
    [
      'bundle.guests',
      { ...good, bundle: { ...good.bundle, guests: 0.5 } },
      'move.bundle.guests must be an integer in 1..2^31, got 0.5',
    ],
    [
      'bundle.transferBytes',
      { ...good, bundle: { ...good.bundle, transferBytes: 2 ** 60 } },
      'move.bundle.transferBytes must be a finite number >= 0 and <= 2^53, got 1152921504606847000',
    ],
    [
      'a load out of range',
      { ...good, source: { ...good.source, cpu: 2 ** 53, maxcpu: 1e-300 } },
      "the load of 'node1' must be a finite number >= 0 (a fraction of capacity), got Infinity",
    ],
  ])('%s', (_name, move, message) => {
    expect(() => assessMove(model, move as never)).toThrow(new ContentionError('invalid-argument', message));
  });

  it.each([
    [{ horizonSeconds: 0 }, "contention option 'horizonSeconds' must be a number of seconds in (0, 1e9], got 0"],
    [
      { bandwidthBytesPerSecond: 0.5 },
      "contention option 'bandwidthBytesPerSecond' must be a number of bytes per second in 1..2^53, got 0.5",
    ],
    [{ stallShare: 1.5 }, "contention option 'stallShare' must be a share in 0..1, got 1.5"],
    [{ setupSeconds: Number.NaN }, "contention option 'setupSeconds' must be a number of seconds in 0..1e9, got NaN"],
    [{ downtimeSeconds: -1 }, "contention option 'downtimeSeconds' must be a number of seconds in 0..1e9, got -1"],
  ])('options %j', (options, message) => {
    expect(() => contentionOptions(options)).toThrow(new ContentionError('invalid-options', message));
    expect(() => assessMove(model, good, options)).toThrow(new ContentionError('invalid-options', message));
  });

  it('fills missing options with the defaults', () => {
    expect(contentionOptions({ horizonSeconds: 60 })).toEqual({ ...CONTENTION_DEFAULTS, horizonSeconds: 60 });
  });

  it('the lab hook names its arguments too', () => {
    expect(() => predictMovePressure(model, good.source, { ...good.target, maxmem: -1 }, { cpu: 1, mem: 0 })).toThrow(
      new ContentionError('invalid-argument', 'target.maxmem must be a finite number > 0 and <= 2^53, got -1'),
    );
    expect(() => predictMovePressure(model, good.source, good.target, { cpu: 1 } as never)).toThrow(
      new ContentionError('invalid-argument', 'moved.mem must be a finite number >= 0 and <= 2^53, got undefined'),
    );
  });
});

describe('moveScorer: one round of moves', () => {
  const model = learnedModel();
  const nodes = [
    node('node1', 14.4, 40 * GIB, 4),
    node('node2', 4.8, 10 * GIB, 2),
    node('node3', 11, 60 * GIB, 3),
    node('node4', 9.6, 20 * GIB, 2),
  ];
  const bundles = [bundle(2, 2 * GIB, 1), bundle(0.5, 8 * GIB, 0.25, 2), bundle(4, 1 * GIB, 1), bundle(2, 2 * GIB, 1)];
  // every guest of every source to every target, sources repeated: what a round asks
  const moves = nodes.flatMap((source) =>
    bundles.flatMap((b) => nodes.filter((t) => t !== source).map((target) => ({ source, target, bundle: b }))),
  );

  it.each([
    ['the fixed price', {}],
    ['the migration model', { migration: migrationSettings({}) }],
  ])('with %s: each move as assessMove judges it alone (shared nodes, remembered predictions)', (_name, options) => {
    const score = moveScorer(model, options);
    for (const move of [...moves, ...moves.slice().reverse()]) {
      expect(score(move)).toEqual(
        assessMove(model, { ...move, source: { ...move.source }, target: { ...move.target } }, options),
      );
    }
  });

  it('a bad node is refused every time it is named, not only the first', () => {
    const score = moveScorer(model);
    const broken = { ...nodes[0]!, maxcpu: 0 };
    for (let i = 0; i < 2; i++)
      expect(() => score({ source: broken, target: nodes[1]!, bundle: bundles[0]! })).toThrow(
        'move.source.maxcpu must be a finite number > 0',
      );
  });
});
