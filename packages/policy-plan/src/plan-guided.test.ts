import { describe, expect, test } from 'vitest';
import { type BalanceContext, PolicyRegistry } from '@poise/policy';
import type { PlanInput } from '@poise/plan';
import { PLAN_REVERSAL_SECONDS, planGuidedSelect } from './plan-guided';
import { planPlugin } from './settings';

const GIB = 1024 ** 3;
const cluster: PlanInput = {
  nodes: ['node1', 'node2', 'node3'].map((name) => ({ name, cpuCores: 16, memBytes: 64 * GIB })),
  guests: [
    { id: 'vm:101', kind: 'vm', node: 'node1', ha: true, cpu: 3.2, mem: 6 * GIB },
    { id: 'vm:102', kind: 'vm', node: 'node1', ha: true, cpu: 2.5, mem: 5 * GIB },
    { id: 'vm:103', kind: 'vm', node: 'node2', ha: true, cpu: 1, mem: 2 * GIB },
  ],
};
const candidates = ['vm:101', 'vm:102'].map((sid) => ({
  leader: sid,
  resources: [sid],
  targets: ['node2', 'node3'],
  source: 'node1',
}));

function context(input: unknown, extra: Partial<BalanceContext> = {}): BalanceContext {
  return {
    now: 100,
    motionInFlight: false,
    imbalance: () => 0.9,
    candidates: () => candidates,
    score: (cs, _m, limit) =>
      cs
        .flatMap((c) => c.targets.map((target) => ({ sid: c.leader, source: 'node1', target, imbalance: 0.4 })))
        .slice(0, limit),
    planInput: () => input,
    ...extra,
  };
}
const REFERENCE = { threshold: 0.3, holdRounds: 0, margin: 0.1, method: 'bruteforce' as const };
const registry = new PolicyRegistry([planPlugin]);
const pipeline = registry.pipeline(registry.read({ 'ha-auto-rebalance-plan': 1 }), REFERENCE);

describe('plan-guided select', () => {
  test('moves the first motion of the plan, with a notice of the plan', () => {
    const { decision } = pipeline.run(context(cluster), pipeline.initialState());
    expect(decision.action).toBe('move');
    if (decision.action !== 'move') return;
    const { sid, target } = decision.migration;
    expect(['vm:101', 'vm:102']).toContain(sid);
    expect(decision.notices.map((n) => n.code)).toEqual(['plan-step']);
    expect(decision.notices[0]!.message).toMatch(new RegExp(`^plan: ${sid} to ${target} \\(step 1 of `));
  });

  test('a guest that is not a candidate stays in the plan: the plan moves another one', () => {
    const { decision } = pipeline.run(
      context(cluster, { candidates: () => [candidates[1]!] }),
      pipeline.initialState(),
    );
    expect(decision.action === 'move' && decision.migration.sid).toBe('vm:102');
  });

  test('the target reached: nothing moves', () => {
    const spread: PlanInput = { ...cluster, guests: cluster.guests.map((g, i) => ({ ...g, node: `node${i + 1}` })) };
    const { decision } = pipeline.run(context(spread), pipeline.initialState());
    expect(decision.action === 'none' && decision.code).toBe('plan-reached');
  });

  test('an infeasible cluster stops with the plan reason', () => {
    const rules = [
      {
        id: 'apart',
        type: 'resource-affinity' as const,
        affinity: 'negative' as const,
        resources: ['vm:101', 'vm:102', 'vm:103'],
      },
    ];
    const two: PlanInput = { ...cluster, nodes: cluster.nodes.slice(0, 2), rules };
    const { decision } = pipeline.run(context(two), pipeline.initialState());
    expect(decision.action === 'none' && decision.reason).toBe(
      "plan: negative affinity 'apart' needs 3 nodes, 2 are eligible (node1 and node2)",
    );
  });

  test('a bad plan input stops the round with invalid-input naming the field', () => {
    const bad = { ...cluster, guests: [{ ...cluster.guests[0], mem: -1 }] };
    const { decision } = pipeline.run(context(bad), pipeline.initialState());
    expect(decision.action === 'none' && decision.code).toBe('invalid-input');
    expect(decision.action === 'none' && decision.reason).toMatch(
      /guest 'vm:101' \(guests\[0\]\): mem must be a finite number >= 0/,
    );
  });

  test('a guest is not sent back to the node it left within the reversal window; after it, it may be', () => {
    const two = (on101: string, base2: number): PlanInput => ({
      nodes: [
        { name: 'node1', cpuCores: 16, memBytes: 64 * GIB },
        { name: 'node2', cpuCores: 16, memBytes: 64 * GIB, baseCpu: base2 },
      ],
      guests: [
        { id: 'vm:101', kind: 'vm', node: on101, ha: true, cpu: 4, mem: 8 * GIB },
        { id: 'vm:102', kind: 'vm', node: 'node1', ha: true, cpu: 4, mem: 8 * GIB },
      ],
    });
    const first = pipeline.run(context(two('node1', 0)), pipeline.initialState());
    expect(first.decision.action === 'move' && [first.decision.migration.sid, first.decision.migration.target]).toEqual(
      ['vm:101', 'node2'],
    );
    // vm:101 arrived on node2 at 120; node2 then got busy: a fresh plan sends vm:101 back to node1
    const back = [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node1'], source: 'node2' }];
    const score: BalanceContext['score'] = (cs, _m, limit) =>
      cs
        .flatMap((c) => c.targets.map((target) => ({ sid: c.leader, source: 'node2', target, imbalance: 0.4 })))
        .slice(0, limit);
    const outcomes = [{ resources: ['vm:101'], source: 'node1', target: 'node2', ok: true, at: 120 }];
    const busy = two('node2', 10);
    const soon = pipeline.run(context(busy, { now: 140, candidates: () => back, score, outcomes }), first.state);
    expect(soon.decision.action === 'none' && soon.decision.code).toBe('plan-reversal');
    expect(soon.decision.action === 'none' && soon.decision.reason).toBe(
      `the plan's first step would reverse a recent motion: vm:101 back to node1 (left it, not sent back before ${120 + PLAN_REVERSAL_SECONDS})`,
    );
    const later = pipeline.run(
      context(busy, { now: 120 + PLAN_REVERSAL_SECONDS + 20, candidates: () => back, score }),
      soon.state,
    );
    expect(later.decision.action === 'move' && later.decision.migration.target).toBe('node1');
    // the state is checked when restored
    expect(() =>
      pipeline.restore({ 'plan-guided': { lastOutcomeAt: null, left: [{ sid: 'vm:101', node: 'node1' }] } }),
    ).toThrow(/left\.0\.until/);
    expect(() => planGuidedSelect({ method: 'bruteforce', reversalSeconds: -1 })).toThrow(
      /reversalSeconds must be a finite number ≥ 0, got '-1'/,
    );
  });

  test('a host without planInput is a broken pipeline', () => {
    const ctx = context(cluster);
    delete (ctx as { planInput?: unknown }).planInput;
    expect(() => pipeline.run(ctx, pipeline.initialState())).toThrow(/stage 'plan-guided' needs 'ctx.planInput'/);
  });

  test('settings: off by default, a bad value is a problem and off', () => {
    expect(registry.settingsOf(registry.read({}), planPlugin)).toEqual({ plan: false });
    expect(planPlugin.stages!({ plan: false }, { reference: REFERENCE })).toEqual([]);
    const bad = registry.read({ 'ha-auto-rebalance-plan': 'yes' });
    expect(registry.settingsOf(bad, planPlugin)).toEqual({ plan: false });
    expect(bad.problems[0]!.message).toMatch(/ha-auto-rebalance-plan/);
    expect(() => planGuidedSelect({ method: 'fastest' as never })).toThrow(/unknown method 'fastest'/);
  });
});
