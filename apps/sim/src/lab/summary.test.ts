import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { dot, sum } from 'mathjs';
import { contentionRate, timeWeightedMean } from '@poise/sim';
import { summarize } from './summary';
import { TRACE_FORMAT, type RunTrace, type TraceMove } from './trace';

// The definitions themselves are tested where they live (packages/sim, extensions.test.ts);
// here: the lab's traces go through them unchanged, and an independent oracle (mathjs) for the
// time-weighted mean.

function trace(over: Partial<RunTrace> & { rounds?: Partial<RunTrace['rounds']> } = {}): RunTrace {
  const { rounds, ...rest } = over;
  const none = [[], []];
  return {
    format: TRACE_FORMAT,
    scenario: 's',
    variant: 'v',
    seed: 1,
    endTime: 100,
    nodes: ['node1', 'node2'],
    moves: [],
    ...rest,
    rounds: {
      time: [],
      imbalance: [],
      cpu: none,
      mem: none,
      online: none,
      pressureCpu: none,
      pressureMem: none,
      ...rounds,
    },
  };
}

const mv = (time: number, sid: string, source: string, target: string, ok: boolean | null = true): TraceMove => ({
  time,
  sid,
  source,
  target,
  ok,
  outcomeAt: ok === null ? null : time + 20,
});

describe('summarize (a trace through @poise/sim summarizeRun)', () => {
  it('an empty run: no samples, no moves', () => {
    expect(summarize(trace({ endTime: 0 }))).toEqual({
      guestContentionSeconds: null,
      migrationSeconds: null,
      moves: 0,
      failedMoves: 0,
      movesBySid: {},
      pingPongs: 0,
      imbalanceTimeWeighted: null,
      pressureSeconds: null,
      simSeconds: 0,
    });
  });
  it('counts moves, failures, ping-pongs, moves per resource in byte order, imbalance and pressure node-seconds', () => {
    const t = trace({
      endTime: 3600,
      rounds: {
        time: [0, 1800],
        imbalance: [0.5, 0.1],
        cpu: [
          [0, 0],
          [0, 0],
        ],
        mem: [
          [0, 0],
          [0, 0],
        ],
        online: [
          [true, true],
          [true, true],
        ],
        // node1 cpu 12 % for the first 1800 s, node2 memory 6 % for the second: 3600 node-s
        pressureCpu: [
          [12, 0],
          [0, 0],
        ],
        pressureMem: [
          [0, 0],
          [0, 6],
        ],
      },
      moves: [
        mv(100, 'vm:2', 'node1', 'node2'),
        mv(200, 'vm:10', 'node1', 'node2', false),
        mv(300, 'vm:10', 'node1', 'node2', null),
        // back on node1, which vm:2 left at 100 (300 s ≤ 30 min)
        mv(400, 'vm:2', 'node2', 'node1'),
      ],
    });
    const s = summarize(t);
    expect(s).toEqual({
      guestContentionSeconds: null,
      migrationSeconds: null,
      moves: 4,
      failedMoves: 1,
      movesBySid: { 'vm:10': 2, 'vm:2': 2 },
      pingPongs: 1,
      // (0.5 · 1800 + 0.1 · 1800) / 3600 = 0.3
      imbalanceTimeWeighted: 0.3,
      pressureSeconds: 3600,
      simSeconds: 3600,
    });
    expect(Object.keys(s.movesBySid)).toEqual(['vm:10', 'vm:2']);
    expect(Object.getPrototypeOf(s.movesBySid)).toBeNull();
  });
});

describe('guest contention-seconds (the load pressure model’s ground truth)', () => {
  it('sums every node’s cpu, memory and migration stall over the samples; the rate per sample for the chart', () => {
    const t = trace({
      endTime: 60,
      rounds: {
        time: [0, 20, 40],
        imbalance: [0, 0, 0],
        cpu: [
          [0, 0, 0],
          [0, 0, 0],
        ],
        mem: [
          [0, 0, 0],
          [0, 0, 0],
        ],
        online: [
          [true, true, true],
          [true, true, true],
        ],
        pressureCpu: [
          [50, 50, 50],
          [0, 0, 0],
        ],
        pressureMem: [
          [0, 0, 0],
          [0, 0, 0],
        ],
        truth: {
          cpuSome: [
            [50, 50, 50],
            [0, 0, 0],
          ],
          memSome: [
            [0, 0, 0],
            [0, 0, 0],
          ],
          cpuStall: [
            [10, 12, 8],
            [0, 1, 0],
          ],
          memStall: [
            [0, 2, 0],
            [0, 0, 0],
          ],
          migrationStall: [
            [0, 0.5, 0],
            [0, 0, 0],
          ],
        },
      },
    });
    // 10 + 12 + 8 + 1 + 2 + 0.5 = 33.5
    expect(summarize(t).guestContentionSeconds).toBe(33.5);
    // per 20 s sample: 10 / 20, (12 + 1 + 2 + 0.5) / 20, 8 / 20
    expect(contentionRate(t.rounds.time, t.rounds.truth!, t.endTime)).toEqual([0.5, 0.775, 0.4]);
  });
});

describe('timeWeightedMean', () => {
  it('agrees with mathjs (dot product of values and durations over the total)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 500 }), fc.double({ min: 0, max: 1, noNaN: true })), {
          minLength: 1,
          maxLength: 50,
        }),
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
          return (
            got !== null &&
            Math.abs(got - want) <= 1e-12 &&
            got >= Math.min(...values) - 1e-12 &&
            got <= Math.max(...values) + 1e-12
          );
        },
      ),
    );
  });
});
