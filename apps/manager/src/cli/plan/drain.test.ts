import { type PlanInput, planPlacement } from '@poise/plan';
import { describe, expect, it } from 'vitest';
import { generatedCluster } from '../../../../../bench/plan-gen';
import { GIB, haGuest, node, snapshot } from '../../testing/support';
import { divergence, drainSequence } from './drain';

describe('drainSequence', () => {
  it('orders the motions step by step and ends at the imbalance the plan reports', () => {
    for (const seed of [1, 2, 3]) {
      const input = generatedCluster(seed, 6, 60, 6);
      const plan = planPlacement(input, { drain: ['node002'] });
      if (!plan.feasible) throw new Error(`seed ${seed}: ${plan.reasons.join('; ')}`);
      const sequence = drainSequence(input, plan, ['node002']);
      expect(sequence.map((m) => m.move)).toEqual(plan.steps.flat());
      expect(sequence.map((m) => m.step)).toEqual(plan.steps.flatMap((s, i) => s.map(() => i + 1)));
      expect(sequence[0]!.imbalanceBefore).toBeCloseTo(plan.imbalance.current, 12);
      expect(sequence.at(-1)!.imbalanceAfter).toBeCloseTo(plan.imbalance.target, 12);
      // each motion starts where the one before ended
      for (let i = 1; i < sequence.length; i++)
        expect(sequence[i]!.imbalanceBefore).toBe(sequence[i - 1]!.imbalanceAfter);
    }
  });

  it('works the reference imbalance by hand on two nodes that stay', () => {
    // node1 drained, so the imbalance is over node2 and node3 (10 cores, 10 GiB each, empty: 0 before);
    // vm:1 (2 cores, 2 GiB) arrives on one: loads (2/10 + 2/10)/2 = 0.2 and 0 → mean 0.1,
    // sd 0.1, cv 1, normalised cv/√(n−1) = 1
    const input: PlanInput = {
      nodes: ['node1', 'node2', 'node3'].map((name) => ({ name, cpuCores: 10, memBytes: 10 * GIB })),
      guests: [{ id: 'vm:1', kind: 'vm', node: 'node1', cpu: 2, mem: 2 * GIB }],
    };
    const plan = planPlacement(input, { drain: ['node1'] });
    if (!plan.feasible) throw new Error(plan.reasons.join('; '));
    const [only] = drainSequence(input, plan, ['node1']);
    expect(only).toMatchObject({ step: 1, imbalanceBefore: 0, imbalanceAfter: 1 });
  });
});

describe('divergence', () => {
  const move = { guests: ['vm:101'], source: 'node1', target: 'node2', bytes: 0, kind: 'move' as const };
  const nodes = [node('node1'), node('node2'), node('node3')];
  it.each([
    ['as planned', snapshot(nodes, [haGuest('vm:101', 'node1')]), undefined],
    [
      'moved elsewhere',
      snapshot(nodes, [haGuest('vm:101', 'node3')]),
      "'vm:101' is on 'node3', the plan expects it on 'node1'",
    ],
    ['gone', snapshot(nodes, []), "'vm:101' is gone from the cluster"],
    [
      'moving already',
      snapshot(nodes, [haGuest('vm:101', 'node1', { state: 'migrate', target: 'node3' })]),
      "'vm:101' is already moving (HA state 'migrate' to 'node3')",
    ],
    [
      'target in maintenance',
      snapshot(
        [node('node1'), node('node2', { condition: 'maintenance', maintenance: true, online: false }), node('node3')],
        [haGuest('vm:101', 'node1')],
      ),
      "the target 'node2' is in maintenance",
    ],
    [
      'a node failed',
      snapshot([...nodes, node('node4', { condition: 'fence', online: false })], [haGuest('vm:101', 'node1')]),
      "the cluster is not settled: node 'node4' is being fenced",
    ],
    [
      'HA recovering',
      snapshot(nodes, [haGuest('vm:101', 'node1'), haGuest('vm:102', 'node3', { state: 'recovery' })]),
      "the cluster is not settled: vm:102 in HA state 'recovery'",
    ],
  ])('%s', (_name, snap, expected) => {
    expect(divergence(snap, move)).toBe(expected);
  });
});
