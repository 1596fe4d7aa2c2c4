import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { dot, sum } from 'mathjs';
import { countPingPongs, pressureSeconds, summarize, timeWeightedMean } from './summary';
import { TRACE_FORMAT, type RunTrace, type TraceMove } from './trace';

function trace(over: Partial<RunTrace> & { rounds?: Partial<RunTrace['rounds']> } = {}): RunTrace {
  const { rounds, ...rest } = over;
  return {
    format: TRACE_FORMAT,
    scenario: 's',
    variant: 'v',
    seed: 1,
    endTime: 100,
    nodes: ['node1', 'node2'],
    moves: [],
    ...rest,
    rounds: { time: [], imbalance: [], cpu: [[], []], mem: [[], []], ...rounds },
  };
}

const mv = (time: number, sid: string, source: string, target: string, ok: boolean | null = true): TraceMove =>
  ({ time, sid, source, target, ok });

describe('countPingPongs', () => {
  const cases: { name: string; moves: TraceMove[]; want: number }[] = [
    { name: 'no moves', moves: [], want: 0 },
    { name: 'one move', moves: [mv(0, 'vm:1', 'a', 'b')], want: 0 },
    { name: 'back after 10 min', moves: [mv(0, 'vm:1', 'a', 'b'), mv(600, 'vm:1', 'b', 'a')], want: 1 },
    // 1800 - 0 = 1800 ≤ 1800: still inside the window
    { name: 'back after exactly 30 min', moves: [mv(0, 'vm:1', 'a', 'b'), mv(1800, 'vm:1', 'b', 'a')], want: 1 },
    // 1801 > 1800
    { name: 'back after 30 min + 1 s', moves: [mv(0, 'vm:1', 'a', 'b'), mv(1801, 'vm:1', 'b', 'a')], want: 0 },
    // a→b at 0, b→c at 600, c→a at 1200: back on a, which it left at 0 (1200 ≤ 1800)
    { name: 'back through a third node', moves: [mv(0, 'vm:1', 'a', 'b'), mv(600, 'vm:1', 'b', 'c'), mv(1200, 'vm:1', 'c', 'a')], want: 1 },
    // a→b, b→a (pp), a→b (pp: left b at 600, back at 1200), b→a (pp)
    { name: 'oscillation counts every return', moves: [mv(0, 'vm:1', 'a', 'b'), mv(600, 'vm:1', 'b', 'a'), mv(1200, 'vm:1', 'a', 'b'), mv(1800, 'vm:1', 'b', 'a')], want: 3 },
    { name: 'another resource going the other way', moves: [mv(0, 'vm:1', 'a', 'b'), mv(60, 'vm:2', 'b', 'a')], want: 0 },
    // the failed return did not happen; the later successful one did (600 ≤ 1800)
    { name: 'failed return is no ping-pong', moves: [mv(0, 'vm:1', 'a', 'b'), mv(300, 'vm:1', 'b', 'a', false)], want: 0 },
    { name: 'failed departure leaves nothing', moves: [mv(0, 'vm:1', 'a', 'b', false), mv(300, 'vm:1', 'a', 'c'), mv(600, 'vm:1', 'c', 'a')], want: 1 },
    { name: 'in-flight move neither leaves nor arrives', moves: [mv(0, 'vm:1', 'a', 'b'), mv(300, 'vm:1', 'b', 'a', null)], want: 0 },
    // back on a at 1900: left a at 0, 1900 > 1800, no pp; back on b at 2000: left b at 1900, pp;
    // back on a at 2100: the latest departure from a is 2000 (not 0), 100 s, pp → 2
    { name: 'latest departure counts', moves: [mv(0, 'vm:1', 'a', 'b'), mv(1900, 'vm:1', 'b', 'a'), mv(2000, 'vm:1', 'a', 'b'), mv(2100, 'vm:1', 'b', 'a')], want: 2 },
  ];
  for (const c of cases) it(c.name, () => expect(countPingPongs(c.moves)).toBe(c.want));
});

describe('timeWeightedMean', () => {
  it('weights each sample by how long it holds, with irregular intervals', () => {
    // 0.2 for 10 s (0..10), 0.8 for 30 s (10..40), 0.5 for 60 s (40..100):
    // (2 + 24 + 30) / 100 = 0.56
    expect(timeWeightedMean([0, 10, 40], [0.2, 0.8, 0.5], 100)).toBeCloseTo(0.56, 15);
  });
  it('starts at the first sample, not at 0', () => {
    // 1 for 20 s (20..40), 0 for 60 s (40..100): 20 / 80 = 0.25
    expect(timeWeightedMean([20, 40], [1, 0], 100)).toBe(0.25);
  });
  it('holds the last sample until the end', () => {
    expect(timeWeightedMean([0], [0.3], 50)).toBe(0.3);
  });
  it('is null without samples', () => {
    expect(timeWeightedMean([], [], 100)).toBeNull();
  });
  it('is null without elapsed time', () => {
    expect(timeWeightedMean([100], [0.4], 100)).toBeNull();
  });
  it('agrees with mathjs (dot product of values and durations over the total)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 500 }), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 0, max: 500 }),
        (steps, tail) => {
          const times: number[] = [];
          let t = 7;
          for (const [dt] of steps) {
            times.push(t);
            t += dt;
          }
          const values = steps.map(([, v]) => v);
          const end = times[times.length - 1]! + tail;
          const durations = times.map((ti, r) => (r + 1 < times.length ? times[r + 1]! : end) - ti);
          const total = Number(sum(durations));
          const got = timeWeightedMean(times, values, end);
          if (total === 0) return got === null;
          const want = Number(dot(values, durations)) / total;
          return got !== null && Math.abs(got - want) <= 1e-12 && got >= Math.min(...values) - 1e-12 && got <= Math.max(...values) + 1e-12;
        },
      ),
    );
  });
});

describe('pressureSeconds', () => {
  it('counts node-seconds at or above 10 %, cpu or memory, with irregular intervals', () => {
    const t = trace({
      endTime: 100,
      rounds: {
        time: [0, 20, 50],
        imbalance: [0, 0, 0],
        cpu: [[0, 0, 0], [0, 0, 0]],
        mem: [[0, 0, 0], [0, 0, 0]],
        // node1 cpu: 10 (yes) for 20 s, 9.9 (no) for 30 s, 50 (yes) for 50 s → 70
        // node2 mem: null (not reported) for 20 s, 12 (yes) for 30 s, 0 for 50 s → 30
        pressureCpu: [[10, 9.9, 50], [0, 0, 0]],
        pressureMem: [[0, 0, 0], [null, 12, 0]],
      },
    });
    expect(pressureSeconds(t)).toBe(100);
  });
  it('counts a node under both cpu and memory pressure once', () => {
    const t = trace({
      endTime: 40,
      rounds: { time: [0], imbalance: [0], cpu: [[0], [0]], mem: [[0], [0]], pressureCpu: [[20], [0]], pressureMem: [[30], [0]] },
    });
    expect(pressureSeconds(t)).toBe(40);
  });
  it('is null when the trace has no pressure telemetry', () => {
    expect(pressureSeconds(trace())).toBeNull();
  });
});

describe('summarize', () => {
  it('an empty run: no samples, no moves', () => {
    expect(summarize(trace({ endTime: 0 }))).toEqual({
      moves: 0,
      failedMoves: 0,
      movesBySid: {},
      pingPongs: 0,
      imbalanceTimeWeighted: null,
      pressureSeconds: null,
      simSeconds: 0,
    });
  });
  it('counts moves, failures and moves per resource in byte order', () => {
    const t = trace({
      endTime: 3600,
      rounds: { time: [0, 1800], imbalance: [0.5, 0.1], cpu: [[0, 0], [0, 0]], mem: [[0, 0], [0, 0]] },
      moves: [
        mv(100, 'vm:2', 'node1', 'node2'),
        mv(200, 'vm:10', 'node1', 'node2', false),
        mv(300, 'vm:10', 'node1', 'node2', null),
        mv(400, 'vm:2', 'node2', 'node1'),
      ],
    });
    const s = summarize(t);
    expect(s).toEqual({
      moves: 4,
      failedMoves: 1,
      movesBySid: { 'vm:10': 2, 'vm:2': 2 },
      pingPongs: 1,
      // (0.5 · 1800 + 0.1 · 1800) / 3600 = 0.3
      imbalanceTimeWeighted: 0.3,
      pressureSeconds: null,
      simSeconds: 3600,
    });
    expect(Object.keys(s.movesBySid)).toEqual(['vm:10', 'vm:2']);
  });
  it('keys of movesBySid that look like Object members stay plain data', () => {
    const s = summarize(trace({ moves: [mv(0, 'vm:1', 'node1', 'node2')] }));
    expect(Object.getPrototypeOf(s.movesBySid)).toBeNull();
  });
});
