import {
  type BalanceCandidate,
  type BalanceContext,
  type NodeTelemetry,
  PolicyError,
  type StageOutcome,
} from '@poise/policy';
import { describe, expect, it } from 'vitest';
import { pressureGate } from './index';
import { type PressureGateState, pressureSourceFilter } from './pressure';

const node = (name: string, pressureCpu?: number, pressureMem?: number): NodeTelemetry => ({
  node: name,
  cpu: 1,
  maxcpu: 16,
  mem: 1,
  maxmem: 64,
  servicesCpu: 0,
  servicesMem: 0,
  pressureCpu,
  pressureMem,
});

const context = (nodes: NodeTelemetry[]): BalanceContext => ({
  now: 100,
  motionInFlight: false,
  imbalance: () => 0.5,
  candidates: () => [],
  score: () => [],
  nodes: () => nodes,
});

const INITIAL: PressureGateState = { missing: [] };
const stopOf = <S>(out: StageOutcome<S>) =>
  'stop' in out ? { code: out.code, stop: out.stop, breaksStreak: out.breaksStreak } : 'pass';

describe('pressure gate (cpu 10 %, memory 5 %)', () => {
  const gate = pressureGate({ cpuPercent: 10, memPercent: 5 });
  const cases: Array<{ name: string; nodes: NodeTelemetry[]; expected: ReturnType<typeof stopOf> }> = [
    {
      name: 'no node reaches a threshold: stop, naming the highest values',
      nodes: [node('node1', 3.14, 0), node('node2', 0.5, 0.04)],
      expected: {
        code: 'no-pressure',
        stop: 'pressure gate: no node under pressure (highest cpu 3.1% < 10.0%, mem 0.0% < 5.0%)',
        breaksStreak: true,
      },
    },
    {
      name: 'one node at the cpu threshold (≥ counts): go on',
      nodes: [node('node1', 10, 0), node('node2', 0, 0)],
      expected: 'pass',
    },
    {
      name: 'one node under memory pressure only: go on',
      nodes: [node('node1', 0, 5.5), node('node2', 0, 0)],
      expected: 'pass',
    },
    {
      name: 'every node under pressure: nothing to gain, more capacity needed',
      nodes: [node('node1', 12, 0), node('node2', 0, 7.25)],
      expected: {
        code: 'all-under-pressure',
        stop: 'pressure gate: every node under pressure (node1 cpu 12.0%, node2 mem 7.3%): the cluster needs more capacity',
        breaksStreak: true,
      },
    },
    {
      name: 'some telemetry missing, the rest calm: fail open (go on as without the gate)',
      nodes: [node('node1', 1, 0), node('node2', undefined, 0)],
      expected: 'pass',
    },
  ];
  it.each(cases)('$name', ({ nodes, expected }) => {
    expect(stopOf(gate.run(context(nodes), {}, INITIAL))).toEqual(expected);
  });

  it('judges a dimension only when its threshold is on', () => {
    const cpuOnly = pressureGate({ cpuPercent: 10, memPercent: 0 });
    // memory pressure 50 % is not looked at, nor is a missing memory value
    expect(stopOf(cpuOnly.run(context([node('node1', 1, 50), node('node2', 2, undefined)]), {}, INITIAL))).toEqual({
      code: 'no-pressure',
      stop: 'pressure gate: no node under pressure (highest cpu 2.0% < 10.0%)',
      breaksStreak: true,
    });
  });

  it("with 'hold', missing telemetry stops the round, naming the nodes and dimensions", () => {
    const hold = pressureGate({ cpuPercent: 10, memPercent: 5, missing: 'hold' });
    const out = hold.run(context([node('node1', 20, 0), node('node3'), node('node2', undefined, 1)]), {}, INITIAL);
    expect(out).toMatchObject({
      code: 'pressure-missing',
      stop: 'pressure gate: no pressure telemetry for node2 (cpu), node3 (cpu, mem)',
      key: 'pressure:pressure-missing:node2 (cpu), node3 (cpu, mem)',
      state: { missing: ['node2 (cpu)', 'node3 (cpu, mem)'] },
    });
  });

  it("with 'balance', missing telemetry is told once per change", () => {
    const first = gate.run(context([node('node1', 20, 0), node('node2')]), {}, INITIAL);
    expect(first.notices).toEqual([
      {
        code: 'pressure-missing',
        severity: 'warning',
        message: 'no pressure telemetry for node2 (cpu, mem): judging the nodes that report it',
      },
    ]);
    const again = gate.run(context([node('node1', 20, 0), node('node2')]), {}, first.state);
    expect(again.notices).toEqual([]);
    const back = gate.run(context([node('node1', 20, 0), node('node2', 0, 0)]), {}, again.state);
    expect(back.notices).toEqual([
      { code: 'pressure-telemetry-back', severity: 'info', message: 'pressure telemetry is complete again' },
    ]);
  });

  it("with 'balance' and no node reporting pressure at all, says the gate has nothing to judge", () => {
    const out = gate.run(context([node('node1'), node('node2')]), {}, INITIAL);
    expect('plan' in out).toBe(true);
    expect(out.notices).toEqual([
      {
        code: 'pressure-missing',
        severity: 'warning',
        message: 'no pressure telemetry from any node: balancing as without the pressure gate',
      },
    ]);
  });

  it('needs node telemetry; rejects bad options and state', () => {
    const bare = { ...context([]), nodes: undefined };
    expect(() => gate.run(bare, {}, INITIAL)).toThrow(
      new PolicyError('invalid-context', "stage 'pressure' needs 'ctx.nodes()', which the host does not provide"),
    );
    expect(() => pressureGate({ cpuPercent: 0, memPercent: 0 })).toThrow(
      'pressure stages need cpuPercent or memPercent above 0',
    );
    expect(() => pressureGate({ cpuPercent: 101, memPercent: 0 })).toThrow(
      "pressure cpuPercent must be a percentage in 0..100, got '101'",
    );
    expect(() => pressureGate({ cpuPercent: 10, memPercent: 0, missing: 'skip' as never })).toThrow(
      "pressure missing must be 'balance' or 'hold', got 'skip'",
    );
    expect(() => gate.validateState!({ missing: [1] })).toThrow(
      "stage 'pressure': state field 'missing.0' must be a non-empty string, got 1",
    );
  });
});

describe('pressure source filter', () => {
  const filter = pressureSourceFilter({ cpuPercent: 10, memPercent: 5 });
  const c = (leader: string, source: string, targets: string[]): BalanceCandidate => ({
    leader,
    resources: [leader],
    targets,
    source,
  });
  const CANDIDATES = [
    c('vm:101', 'node1', ['node2', 'node3']),
    c('vm:102', 'node2', ['node1', 'node3']),
    c('vm:103', 'node3', ['node1', 'node2']),
  ];
  const run = (nodes: NodeTelemetry[], candidates = CANDIDATES) => {
    const out = filter.run(context(nodes), { candidates }, null);
    return 'stop' in out
      ? out.stop
      : (out.plan.candidates ?? []).map((x) => `${x.leader}:${x.source}→${x.targets.join('|')}`);
  };

  it.each([
    {
      name: 'only guests of the node under pressure, not onto another one under pressure',
      nodes: [node('node1', 15, 0), node('node2', 11, 0), node('node3', 1, 0)],
      expected: ['vm:101:node1→node3', 'vm:102:node2→node3'],
    },
    {
      name: 'memory pressure is served first',
      nodes: [node('node1', 15, 0), node('node2', 0, 6), node('node3', 1, 0)],
      expected: ['vm:102:node2→node3'],
    },
    {
      name: 'cpu pressure when no memory-pressured node has a movable guest',
      nodes: [node('node1', 15, 0), node('node2', 0, 6), node('node3', 1, 0)],
      candidates: [CANDIDATES[0]!],
      expected: ['vm:101:node1→node3'],
    },
    {
      name: 'nothing known to be under pressure (fail open): unchanged',
      nodes: [node('node1'), node('node2', 1, 1), node('node3', 1, 1)],
      expected: ['vm:101:node1→node2|node3', 'vm:102:node2→node1|node3', 'vm:103:node3→node1|node2'],
    },
    {
      name: 'no candidate on the node under pressure: stop',
      nodes: [node('node1', 15, 0), node('node2', 0, 0), node('node3', 0, 0)],
      candidates: [CANDIDATES[1]!],
      expected: 'no movable candidate on a node under pressure (node1)',
    },
  ])('$name', ({ nodes, candidates, expected }) => {
    expect(run(nodes, candidates)).toEqual(expected);
  });

  it('a candidate without a source stops the round with invalid-input', () => {
    const out = () =>
      filter.run(
        context([node('node1', 50, 0), node('node2', 0, 0)]),
        { candidates: [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2'] }] },
        null,
      );
    expect(out).toThrow(
      expect.objectContaining({
        code: 'invalid-input',
        message: "candidate 'vm:101' has no 'source' (stage 'pressure-source' needs it)",
      }),
    );
  });
});
