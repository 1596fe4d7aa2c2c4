import { describe, expect, it } from 'vitest';
import { CONTENTION_DEFAULTS, emptyModel, fitModel } from '@poise/contention';
import type { GuestTelemetry, NodeTelemetry } from '@poise/policy';
import { roundObjective } from './objective';
import { CONTENTION_PACE } from './pace';

const GIB = 1024 ** 3;
const node = (name: string, cpu: number, maxcpu = 8): NodeTelemetry => ({
  node: name,
  cpu,
  maxcpu,
  mem: 8 * GIB,
  maxmem: 64 * GIB,
  servicesCpu: cpu,
  servicesMem: 8 * GIB,
  pressureCpu: undefined,
  pressureMem: undefined,
});
const GUESTS: GuestTelemetry[] = [
  { sid: 'vm:101', node: 'node1', cpu: 2, maxcpu: 4, mem: 4 * GIB },
  { sid: 'vm:102', node: 'node1', cpu: 1, maxcpu: 2, mem: 2 * GIB },
  { sid: 'vm:201', node: 'node2', cpu: 1, maxcpu: 2, mem: 2 * GIB },
];
const objectiveOf = (nodes: NodeTelemetry[], guests = GUESTS) => {
  let reads = 0;
  const objective = roundObjective(
    fitModel(emptyModel()),
    nodes,
    () => {
      reads++;
      return guests;
    },
    CONTENTION_DEFAULTS,
    [],
    { pace: CONTENTION_PACE, motions: [], calmAt: null },
  );
  return { objective, reads: () => reads };
};
const candidate = (leader: string, resources = [leader], source?: string) => ({
  leader,
  resources,
  targets: ['node2', 'node3'],
  ...(source === undefined ? {} : { source }),
});

describe("the round objective's assessments", () => {
  it('answers each (leader, target) once, reading the guests once', () => {
    const { objective, reads } = objectiveOf([node('node1', 7), node('node2', 1), node('node3', 2)]);
    const c = candidate('vm:101');
    const a = objective.assess(c, 'node2');
    expect(a?.source.node).toBe('node1');
    expect(a?.target.node).toBe('node2');
    expect(a?.movedCpu).toBe(2);
    expect(objective.assess(c, 'node2')).toBe(a);
    const b = objective.assess(c, 'node3');
    expect(b?.target.node).toBe('node3');
    // the source side of one guest's moves is the same for each target
    expect(b?.source).toEqual(a?.source);
    // a bundle moves its members' sum (a round lists each leader once)
    expect(objective.assess(candidate('vm:102', ['vm:102', 'vm:101']), 'node2')?.movedCpu).toBe(3);
    expect(reads()).toBe(1);
  });

  it('does not judge a move whose member is unknown or elsewhere, or onto its own node or an unknown one', () => {
    const { objective } = objectiveOf([node('node1', 7), node('node2', 1), node('node3', 2)]);
    expect(objective.assess(candidate('vm:101', ['vm:101', 'vm:999']), 'node2')).toBeUndefined();
    expect(objective.assess(candidate('vm:101', ['vm:101', 'vm:201']), 'node3')).toBeUndefined();
    expect(objective.assess(candidate('vm:101'), 'node1')).toBeUndefined();
    expect(objective.assess(candidate('vm:101'), 'node9')).toBeUndefined();
    expect(objective.assess(candidate('vm:999', ['vm:999']), 'node2')).toBeUndefined();
  });

  it("stops the round as invalid input naming the move when the model refuses the host's data", () => {
    // a node without cores: the model's check names the field, the objective the move
    const { objective } = objectiveOf([node('node1', 7), node('node2', 1, 0), node('node3', 2)]);
    expect(() => objective.assess(candidate('vm:101'), 'node2')).toThrow(
      /candidate 'vm:101' to 'node2': move\.target\.maxcpu must be a finite number > 0/,
    );
  });
});
