import { describe, expect, it } from 'vitest';
import { LabError } from './errors';
import {
  BALANCED_THRESHOLD,
  hindsightOracle,
  movesToBalance,
  regret,
  type PlacementGuest,
  type TracePlacement,
} from './regret';

const GIB = 1024 ** 3;

/** Nodes of 4 cores and 4 GiB; guests of 1 core and 1 GiB; node use from the final placement (+ base). */
function cluster(
  initial: Record<string, string>,
  final: Record<string, string>,
  opts: {
    base?: Record<string, number>;
    guest?: Partial<Record<string, Partial<PlacementGuest>>>;
    rules?: TracePlacement['rules'];
  } = {},
): TracePlacement {
  const names = ['node1', 'node2', 'node3'];
  const guests: PlacementGuest[] = Object.keys(initial).map((sid) => ({
    sid,
    initial: initial[sid]!,
    final: final[sid]!,
    cpu: 1,
    mem: GIB,
    migratable: true,
    ignored: false,
    ...opts.guest?.[sid],
  }));
  const nodes = names.map((name) => {
    const on = guests.filter((g) => g.final === name);
    const base = opts.base?.[name] ?? 0;
    return {
      name,
      cpuCores: 4,
      memBytes: 4 * GIB,
      online: true,
      maintenance: false,
      cpu: base + on.reduce((a, g) => a + g.cpu, 0),
      mem: base * GIB + on.reduce((a, g) => a + g.mem, 0),
    };
  });
  return { nodes, guests, rules: opts.rules ?? [] };
}

const rounds = (imbalance: number[]) => ({ time: imbalance.map((_, i) => 20 * i), imbalance });
const move = (time: number) => ({
  time,
  sid: 'vm:1',
  source: 'node1',
  target: 'node2',
  ok: true,
  outcomeAt: time + 10,
});

describe('movesToBalance', () => {
  it('counts the moves issued up to the start of the last stretch below the line', () => {
    const r = movesToBalance({
      rounds: rounds([0.6, 0.5, 0.2, 0.4, 0.25, 0.1]),
      moves: [move(10), move(30), move(70), move(80), move(95)],
    });
    // below from sample 4 (t = 80) to the end; the dip at sample 2 does not count
    expect(r).toEqual({ at: 80, moves: 4 });
  });
  it('a run balanced from its first sample needed no move, whatever it did later', () => {
    expect(movesToBalance({ rounds: rounds([0.1, 0.1]), moves: [move(5)] })).toEqual({ at: 0, moves: 0 });
  });
  it('a run that ends at or above the line never reached balance', () => {
    expect(movesToBalance({ rounds: rounds([0.1, BALANCED_THRESHOLD]), moves: [] })).toEqual({ at: null, moves: null });
    expect(movesToBalance({ rounds: rounds([]), moves: [] })).toEqual({ at: null, moves: null });
  });
  it('refuses a threshold outside (0, 1]', () => {
    expect(() => movesToBalance({ rounds: rounds([0.1]), moves: [] }, Number.NaN)).toThrow(LabError);
    expect(() => movesToBalance({ rounds: rounds([0.1]), moves: [] }, 0)).toThrow(
      'balanced threshold must be in (0, 1], got 0',
    );
  });
});

describe('regret', () => {
  it('is moves / oracle moves', () => {
    expect(regret(6, 2)).toEqual({ regret: 3, excess: 4 });
    expect(regret(2, 2)).toEqual({ regret: 1, excess: 0 });
  });
  it('0 moves where the oracle needs 0 is 1; moves where it needs 0 are unbounded (null), never NaN or Infinity', () => {
    expect(regret(0, 0)).toEqual({ regret: 1, excess: 0 });
    expect(regret(279, 0)).toEqual({ regret: null, excess: 279 });
  });
  it('no oracle, no regret', () => {
    expect(regret(3, null)).toEqual({ regret: null, excess: null });
  });
  it('refuses counts that are not integers ≥ 0', () => {
    expect(() => regret(-1, 2)).toThrow('moves must be an integer ≥ 0, got -1');
    expect(() => regret(1, 0.5)).toThrow('oracle moves must be an integer ≥ 0, got 0.5');
    expect(() => regret(Number.NaN, 1)).toThrow(LabError);
  });
});

describe('hindsightOracle', () => {
  const start = {
    'vm:1': 'node1',
    'vm:2': 'node1',
    'vm:3': 'node1',
    'vm:4': 'node1',
    'vm:5': 'node2',
    'vm:6': 'node2',
  };

  it('finds fewer moves than the run made: two of node1 to node3, where the run shuffled four guests', () => {
    const o = hindsightOracle(
      cluster(start, {
        'vm:1': 'node1',
        'vm:2': 'node1',
        'vm:3': 'node2',
        'vm:4': 'node2',
        'vm:5': 'node3',
        'vm:6': 'node3',
      }),
    );
    expect(o.target).toEqual({ cpu: 0.5, mem: 0.5 });
    expect(o.runDisplaced).toBe(4);
    expect(o.runValid).toBe(true);
    expect(o.plannerMoves).toBe(2);
    expect(o.bound).toBe(2);
    expect(o).toMatchObject({ moves: 2, source: 'planner' });
    expect(o.imbalance.oracle).toBeCloseTo(0, 12);
  });

  it('is the run itself when the run took the fewest moves', () => {
    const o = hindsightOracle(cluster(start, { ...start, 'vm:1': 'node3', 'vm:2': 'node3' }));
    expect(o).toMatchObject({ moves: 2, source: 'both', runDisplaced: 2 });
  });

  it('needs no move when the start is already as balanced as the end', () => {
    const o = hindsightOracle(cluster(start, start));
    expect(o).toMatchObject({ moves: 0, plannerMoves: 0, runDisplaced: 0 });
    expect(regret(5, o.moves)).toEqual({ regret: null, excess: 5 });
  });

  it('counts base load: the peak the run ended with may be a node busy by itself', () => {
    // node3 runs 3 cores / 3 GiB outside HA: the run's end (2, 2, 3) peaks there at 75 %, so one move off node1 is enough
    const o = hindsightOracle(
      cluster(
        { 'vm:1': 'node1', 'vm:2': 'node1', 'vm:3': 'node1', 'vm:4': 'node1' },
        { 'vm:1': 'node2', 'vm:2': 'node2', 'vm:3': 'node1', 'vm:4': 'node1' },
        { base: { node3: 3 } },
      ),
    );
    expect(o.target).toEqual({ cpu: 0.75, mem: 0.75 });
    expect(o).toMatchObject({ moves: 1, source: 'planner', runDisplaced: 2 });
  });

  it('honours the rules and the guests that cannot move', () => {
    const placement = cluster(
      start,
      { ...start, 'vm:3': 'node3', 'vm:4': 'node3' },
      {
        guest: { 'vm:1': { migratable: false, reason: 'has a local cd-rom' } },
        rules: [{ id: 'pair', type: 'resource-affinity', affinity: 'positive', resources: ['vm:3', 'vm:4'] }],
      },
    );
    const o = hindsightOracle(placement);
    expect(o.moves).toBe(2);
  });

  it('an unreachable balance is an answer: no oracle, and why', () => {
    // the run ended with vm:1 and vm:2 apart although a positive rule binds them: no valid placement is that balanced
    const o = hindsightOracle(
      cluster(
        { 'vm:1': 'node1', 'vm:2': 'node1' },
        { 'vm:1': 'node1', 'vm:2': 'node2' },
        { rules: [{ id: 'pair', type: 'resource-affinity', affinity: 'positive', resources: ['vm:1', 'vm:2'] }] },
      ),
    );
    expect(o.moves).toBeNull();
    expect(o.source).toBeNull();
    expect(o.runValid).toBe(false);
    expect(o.note).toMatch(/^planner: .+; the run's final placement/);
    expect(regret(3, o.moves)).toEqual({ regret: null, excess: null });
  });

  it('a recorded cluster the planner refuses is an error naming the run and the field', () => {
    const placement = cluster(start, start, {
      rules: [{ id: 'r', type: 'resource-affinity', affinity: 'negative', resources: ['vm:1', 'vm:99'] }],
    });
    expect(() => hindsightOracle(placement, 's/v/seed-1')).toThrow(
      /^'s\/v\/seed-1': the planner refuses the recorded cluster: .*vm:99/,
    );
  });
});
