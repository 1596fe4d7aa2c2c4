import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import type { ServiceConfigEntry, ServiceStatus } from '@poise/env';
import { selectServiceNode, type NodePreference } from './select-node';
import { NO_RULES, type RulesView } from './rules-state';
import type { OnlineNodeUsage } from './scheduler';

/** A usage whose scores are given per node (lower is better). */
function usageWith(scores: Record<string, number>): OnlineNodeUsage {
  return {
    mode: 'basic',
    listNodes: () => Object.keys(scores),
    containsNode: (n) => n in scores,
    addServiceUsage: () => {},
    removeServiceUsage: () => {},
    scoreNodesToStartService: () => new Map(Object.entries(scores)),
    calculateNodeImbalance: () => undefined,
  };
}

const cd = (failback: number): ServiceConfigEntry => ({
  node: 'node1',
  state: 'started',
  type: 'vm',
  name: '101',
  failback,
  max_restart: 1,
  max_relocate: 1,
});

function rulesWith(over: Partial<RulesView>): RulesView {
  return { ...NO_RULES, ...over };
}

describe('selectServiceNode', () => {
  const scores = { node1: 2, node2: 0, node3: 1 };
  const cases: Array<{
    name: string;
    sd: ServiceStatus;
    failback: number;
    pref: NodePreference;
    rules?: RulesView;
    expected: string | undefined;
  }> = [
    // failback off and allowed: stay, whatever the scores say
    {
      name: 'stays without failback',
      sd: { state: 'started', node: 'node1' },
      failback: 0,
      pref: 'none',
      expected: 'node1',
    },
    // failback on, preference none: the current node is still in pri, so stay
    {
      name: 'stays with failback when the node is in pri',
      sd: { state: 'started', node: 'node1' },
      failback: 1,
      pref: 'none',
      expected: 'node1',
    },
    // best-score: lowest score wins (node2 = 0)
    {
      name: 'best-score takes the lowest score',
      sd: { state: 'recovery', node: 'node1' },
      failback: 1,
      pref: 'best-score',
      expected: 'node2',
    },
    // try-next: order node2(0), node3(1), node1(2); node1 failed and is dropped → node2
    {
      name: 'try-next skips failed nodes',
      sd: { state: 'started', node: 'node1', failed_nodes: ['node1'] },
      failback: 1,
      pref: 'try-next',
      expected: 'node2',
    },
    // try-next with the current node still in the list: the one after it (node2 → node3)
    {
      name: 'try-next takes the node after the current one',
      sd: { state: 'started', node: 'node2' },
      failback: 1,
      pref: 'try-next',
      expected: 'node3',
    },
    // maintenance fallback wins over scores when allowed
    {
      name: 'maintenance fallback first',
      sd: { state: 'started', node: 'node2', maintenance_node: 'node1' },
      failback: 1,
      pref: 'best-score',
      expected: 'node1',
    },
    // a negative partner on node2 removes it: best of node1(2), node3(1) → node3
    {
      name: 'negative affinity removes nodes',
      sd: { state: 'recovery', node: 'node1' },
      failback: 1,
      pref: 'best-score',
      rules: rulesWith({ resourceAffinity: () => ({ together: new Map(), separate: new Map([['node2', 1]]) }) }),
      expected: 'node3',
    },
    // positive partners: the majority node among pri wins (node1 has 2, node3 has 1)
    {
      name: 'positive affinity keeps the majority node',
      sd: { state: 'recovery', node: 'node2' },
      failback: 1,
      pref: 'best-score',
      rules: rulesWith({
        resourceAffinity: () => ({
          together: new Map([
            ['node1', 2],
            ['node3', 1],
          ]),
          separate: new Map(),
        }),
      }),
      expected: 'node1',
    },
    // no pri node online → undefined
    {
      name: 'no allowed node gives undefined',
      sd: { state: 'recovery', node: 'node1' },
      failback: 1,
      pref: 'best-score',
      rules: rulesWith({ nodeAffinity: () => ({ allowed: new Set(), pri: new Set() }) }),
      expected: undefined,
    },
  ];
  test.each(cases)('$name', ({ sd, failback, pref, rules, expected }) => {
    expect(selectServiceNode(rules ?? NO_RULES, usageWith(scores), {}, 'vm:101', cd(failback), sd, pref)).toBe(
      expected,
    );
  });

  test('ties in score go to the node name in byte order (node10 before node2)', () => {
    const usage = usageWith({ node2: 0, node10: 0 });
    expect(
      selectServiceNode(NO_RULES, usage, {}, 'vm:101', cd(1), { state: 'recovery', node: 'node3' }, 'best-score'),
    ).toBe('node10');
  });
});

describe('selectServiceNode: the fast path for services no rule names', () => {
  // the fast path (no node sets built) must choose exactly what the general path chooses
  const node = fc.constantFrom('node1', 'node2', 'node3', 'node4');
  test('property: same choice as the general path', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(node, { minLength: 0, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 4, maxLength: 4 }),
        node,
        fc.option(node, { nil: undefined }),
        fc.array(node, { maxLength: 2 }),
        fc.constantFrom(0, 1),
        fc.constantFrom<NodePreference>('none', 'best-score', 'try-next'),
        (online, scoreList, current, maintenance, failed, failback, pref) => {
          const scores: Record<string, number> = {};
          online.forEach((n, i) => (scores[n] = scoreList[i]!));
          const sd: ServiceStatus = { state: 'started', node: current };
          if (maintenance !== undefined) sd.maintenance_node = maintenance;
          if (failed.length) sd.failed_nodes = failed;
          const general = rulesWith({ unconstrained: () => false });
          const fast = selectServiceNode(NO_RULES, usageWith(scores), {}, 'vm:101', cd(failback), sd, pref);
          const slow = selectServiceNode(general, usageWith(scores), {}, 'vm:101', cd(failback), sd, pref);
          expect(fast).toBe(slow);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
