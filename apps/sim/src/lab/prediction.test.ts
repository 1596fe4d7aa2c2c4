import { describe, expect, it } from 'vitest';
import { predictionErrorStats, predictionPoints, type PredictionPoint } from './prediction';
import { TRACE_FORMAT, type RunTrace } from './trace';

/** A known curve: PSI cpu some of a node at a cpu load (fraction of its cores). */
const logistic = (load: number) => 100 / (1 + Math.exp(-(load - 0.75) / 0.05));

/**
 * Two nodes over `samples` rounds of 20 s: node1's load sweeps 0.3..1.1 and back (so its curve
 * is learned over that range), node2's stays near 0.3..0.5; both report `curve(load)` plus
 * `noise` as PSI and the truth is `curve(load)`. One move of vm:101 from node1 to node2 issued
 * at `moveAt` lands a sample later, taking 0.2 of node1's load to node2.
 */
function trace(o: { samples: number; moveAt: number; noise?: (r: number) => number; psi?: boolean }): RunTrace {
  const time: number[] = [];
  const cpu: number[][] = [[], []];
  const pressure: (number | null)[][] = [[], []];
  const truth: number[][] = [[], []];
  const landed = o.moveAt + 20;
  for (let r = 0; r < o.samples; r++) {
    const t = 20 * r;
    time.push(t);
    const phase = (r % 80) / 80;
    let l1 = 0.3 + 0.8 * (phase < 0.5 ? 2 * phase : 2 - 2 * phase);
    let l2 = 0.3 + 0.2 * phase;
    if (t >= landed) {
      l1 -= 0.2;
      l2 += 0.2;
    }
    [l1, l2].forEach((l, i) => {
      cpu[i]!.push(l);
      truth[i]!.push(logistic(l));
      pressure[i]!.push(o.psi === false ? null : Math.min(100, Math.max(0, logistic(l) + (o.noise?.(r) ?? 0))));
    });
  }
  const zeros = () => [time.map(() => 0), time.map(() => 0)];
  return {
    format: TRACE_FORMAT,
    scenario: 's',
    variant: 'v',
    seed: 1,
    endTime: time[time.length - 1]! + 20,
    nodes: ['node1', 'node2'],
    rounds: {
      time,
      imbalance: time.map(() => 0),
      cpu,
      mem: zeros(),
      online: [time.map(() => true), time.map(() => true)],
      pressureCpu: pressure,
      pressureMem: [time.map(() => null), time.map(() => null)],
      truth: { cpuSome: truth, memSome: zeros(), cpuStall: zeros(), memStall: zeros(), migrationStall: zeros() },
    },
    moves: [
      {
        time: o.moveAt,
        sid: 'vm:101',
        source: 'node1',
        target: 'node2',
        ok: true,
        outcomeAt: landed,
        landedAt: landed,
      },
      {
        time: o.moveAt + 40,
        sid: 'vm:102',
        source: 'node1',
        target: 'node2',
        ok: false,
        outcomeAt: o.moveAt + 60,
        landedAt: null,
      },
    ],
    cpuFamilies: ['logistic', 'queue'],
  };
}

describe('predictionPoints', () => {
  it('predicts source and target after a move from the curve learned before it: close to a known curve', () => {
    // 320 samples (four sweeps of node1) before the move, noise of ±2 pp
    const points = predictionPoints(trace({ samples: 400, moveAt: 6400, noise: (r) => ((r * 7919) % 5) - 2 }));
    expect(points.map((p) => [p.sid, p.node, p.role, p.family])).toEqual([
      ['vm:101', 'node1', 'source', 'logistic'],
      ['vm:101', 'node2', 'target', 'queue'],
    ]);
    const at = 6420 / 20;
    const source = points[0]!;
    expect(source.realised).toBeCloseTo(logistic(trace({ samples: 400, moveAt: 6400 }).rounds.cpu[0]![at]!), 9);
    for (const p of points) {
      expect(p.basis).toBe('learned');
      expect(Math.abs(p.predicted - p.realised)).toBeLessThanOrEqual(5);
    }
  });

  it('learns nothing from after the move: a node that never reported PSI is predicted from the usage prior', () => {
    const points = predictionPoints(trace({ samples: 400, moveAt: 6400, psi: false }));
    expect(points.map((p) => p.basis)).toEqual(['usage', 'usage']);
  });

  it('has no points without the ground truth or the families, and none for a failed move', () => {
    const t = trace({ samples: 100, moveAt: 1000 });
    const { truth: _, ...rounds } = t.rounds;
    expect(predictionPoints({ ...t, rounds })).toEqual([]);
    const { cpuFamilies: __, ...noFamilies } = t;
    expect(predictionPoints(noFamilies)).toEqual([]);
    expect(predictionPoints(t).every((p) => p.sid === 'vm:101')).toBe(true);
  });
});

describe('predictionErrorStats', () => {
  const point = (
    family: string,
    predicted: number,
    realised: number,
    basis: 'learned' | 'usage' = 'learned',
  ): PredictionPoint => ({
    sid: 'vm:101',
    time: 0,
    node: 'node1',
    role: 'source',
    family,
    predicted,
    realised,
    basis,
  });
  it('gives count, usage points, median, p90 and max of the absolute errors per family, in first-seen order', () => {
    const stats = predictionErrorStats([
      point('queue', 10, 12),
      point('logistic', 50, 40),
      point('queue', 5, 1, 'usage'),
      point('queue', 30, 30),
      point('queue', 0, 10),
    ]);
    // queue errors 2, 4, 0, 10 → sorted 0, 2, 4, 10: median 3, p90 = 4 + 0.7·6 = 8.2
    expect(stats).toEqual([
      { family: 'queue', n: 4, usage: 1, median: 3, p90: expect.closeTo(8.2, 9), max: 10 },
      { family: 'logistic', n: 1, usage: 0, median: 10, p90: 10, max: 10 },
    ]);
  });
});
