import { describe, expect, it } from 'vitest';
import { placeGuests } from './place';
import { planPlacement } from './planner';
import { planInputFromSnapshot } from './snapshot';
import type { PlanInput } from './types';

const GIB = 1024 ** 3;
const nodes = ['node1', 'node2', 'node3'].map((name) => ({ name, cpuCores: 16, memBytes: 64 * GIB }));
const guest = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  kind: 'vm' as const,
  node: 'node1',
  ha: true,
  cpu: 1,
  mem: GIB,
  ...extra,
});

describe('bad inputs are named', () => {
  it.each([
    [
      'a guest using 50 cores with 4 assigned',
      { nodes, guests: [guest('vm:1', { cpu: 50, cores: 4 })] },
      "guest 'vm:1' (guests[0]): cpu 50 (cores in use) is more than its 4 assigned cores",
    ],
    [
      "a node's baseCpu 1,000 on 16 cores",
      { nodes: [{ ...nodes[0]!, baseCpu: 1000 }], guests: [] },
      "node 'node1' (nodes[0]): baseCpu 1000 is more than the node's 16 cores",
    ],
    [
      "a node's baseMem over its memory",
      { nodes: [{ ...nodes[0]!, baseMem: 65 * GIB }], guests: [] },
      "node 'node1' (nodes[0]): baseMem 69793218560 is more than the node's 68719476736 bytes of memory",
    ],
    [
      'an affinity priority of −5',
      {
        nodes,
        guests: [guest('vm:1')],
        rules: [{ id: 'pin', type: 'node-affinity', resources: ['vm:1'], nodes: [{ node: 'node2', priority: -5 }] }],
      },
      "rule 'pin' (rules[0]): nodes[0].priority must be a finite number >= 0, got -5",
    ],
  ])('%s', (_name, input, message) => {
    expect(() => planPlacement(input as PlanInput)).toThrow(message);
  });
});

describe('a drain that cannot finish says so', () => {
  it('a guest HA ignores stays on the drained node: infeasible, naming it', () => {
    const plan = planPlacement(
      { nodes, guests: [guest('vm:1'), guest('vm:2', { ignored: true })] },
      { drain: ['node1'] },
    );
    expect(plan.feasible).toBe(false);
    if (plan.feasible) return;
    expect(plan.reasons).toEqual(["node1 cannot be drained: vm:2 is ignored by HA (state 'ignored'): it stays"]);
  });

  it('an ignored guest elsewhere does not stop the drain', () => {
    const plan = planPlacement(
      { nodes, guests: [guest('vm:1'), guest('vm:2', { ignored: true, node: 'node2' })] },
      { drain: ['node1'] },
    );
    expect(plan.feasible).toBe(true);
  });

  it('a strict rule pinning a guest to the drained node: infeasible, naming guest, node and rule', () => {
    const input: PlanInput = {
      nodes,
      guests: [guest('vm:1')],
      rules: [
        {
          id: 'pin',
          type: 'node-affinity',
          resources: ['vm:1'],
          nodes: [{ node: 'node1', priority: 0 }],
          strict: true,
        },
      ],
    };
    const plan = planPlacement(input, { drain: ['node1'] });
    expect(plan.feasible).toBe(false);
    if (plan.feasible) return;
    expect(plan.reasons).toEqual(["node1 cannot be drained: vm:1 may run only on node1 (strict node affinity 'pin')"]);
    // the same rule not strict: HA may use any node, the drain is feasible
    const loose = planPlacement(
      { ...input, rules: [{ ...input.rules![0]!, strict: false } as NonNullable<PlanInput['rules']>[number]] },
      { drain: ['node1'] },
    );
    expect(loose.feasible).toBe(true);
  });
});

describe('place on a cluster with no usable node', () => {
  it('says the nodes are offline, not that rules allow none', () => {
    const result = placeGuests(
      { nodes: nodes.map((n, i) => ({ ...n, online: false, maintenance: i === 0 })), guests: [] },
      { guests: [{ id: 'new', cores: 2, mem: GIB, count: 1 }] },
    );
    expect(result.unplaced).toEqual([
      { id: 'new', reason: 'new: no node can take a guest (node1 offline, node2 offline and node3 offline)' },
    ]);
    const drained = placeGuests(
      { nodes: [nodes[0]!], guests: [] },
      { guests: [{ id: 'new', cores: 2, mem: GIB, count: 1 }] },
    );
    expect(drained.unplaced).toEqual([]);
  });
});

describe('planInputFromSnapshot', () => {
  it('counts a guest measured over its assigned cores at its cores, and says so', () => {
    const built = planInputFromSnapshot({
      nodes: [
        {
          name: 'node1',
          online: true,
          condition: 'online',
          maintenance: false,
          cpu: 8,
          mem: 4 * GIB,
          maxcpu: 16,
          maxmem: 64 * GIB,
          pressure: { cpuSome: undefined, memSome: undefined },
        },
      ],
      guests: [
        {
          sid: 'vm:1',
          vmid: 1,
          type: 'vm',
          node: 'node1',
          running: true,
          lock: undefined,
          template: false,
          ha: undefined,
          stats: { cpu: 4.2, mem: GIB, maxcpu: 4, maxmem: 2 * GIB, memhost: undefined },
        },
      ],
      rules: [],
    });
    expect(built.input.guests[0]).toMatchObject({ cpu: 4, cores: 4 });
    expect(built.problems).toEqual(["guest 'vm:1' uses 4.2 cores, more than its 4 assigned: counted as 4"]);
  });
});
