/**
 * The indexed checks and transforms agree with the pairwise reference implementations
 * (`reference.ts`) on random configs: same drop messages in the same order, same transformed
 * config, same compiled rules.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';

import { cloneRulesConfig, compileRules, parseRulesConfig, transformRules, writeRulesConfig } from './index';
import { canonicalJson } from './canonical-json';
import { nullRecord } from './records';
import { referenceTransform } from './testing/reference';
import type { Rule, RulesConfig } from './types';

const SIDS = ['vm:1', 'vm:2', 'vm:3', 'vm:4', 'vm:5', 'vm:6', 'vm:7', 'ct:8'];
const NODE_NAMES = ['node1', 'node2', 'node3', 'node4'];

const resources = fc.uniqueArray(fc.constantFrom(...SIDS), { minLength: 1, maxLength: 5 });
const nodeEntries = fc.uniqueArray(
  fc.record({ node: fc.constantFrom(...NODE_NAMES), priority: fc.integer({ min: 0, max: 2 }) }),
  { minLength: 1, maxLength: 4, selector: (entry) => entry.node },
);
const rule: fc.Arbitrary<Rule> = fc.oneof(
  fc
    .record({
      type: fc.constant('node-affinity' as const),
      resources,
      nodes: nodeEntries,
      strict: fc.constantFrom(undefined, 0 as const, 1 as const),
      disable: fc.constantFrom(undefined, undefined, undefined, 1 as const),
    })
    .map((r): Rule => {
      const nodes = nullRecord<{ priority: number }>();
      for (const { node, priority } of r.nodes) nodes[node] = { priority };
      const out: Rule = { type: r.type, resources: toSet(r.resources), nodes };
      if (r.strict !== undefined) out.strict = r.strict;
      if (r.disable !== undefined) out.disable = r.disable;
      return out;
    }),
  fc
    .record({
      type: fc.constant('resource-affinity' as const),
      resources,
      affinity: fc.constantFrom('positive' as const, 'negative' as const),
      disable: fc.constantFrom(undefined, undefined, undefined, 1 as const),
    })
    .map((r): Rule => {
      const out: Rule = { type: r.type, resources: toSet(r.resources), affinity: r.affinity };
      if (r.disable !== undefined) out.disable = r.disable;
      return out;
    }),
);

function toSet(sids: string[]): Record<string, 1> {
  const set = nullRecord<1>();
  for (const sid of sids) set[sid] = 1;
  return set;
}

const config: fc.Arbitrary<RulesConfig> = fc.array(rule, { maxLength: 9 }).map((list) => {
  const ids = nullRecord<Rule>();
  const order = nullRecord<number>();
  list.forEach((r, index) => {
    ids[`rule${index}`] = r;
    order[`rule${index}`] = index + 1;
  });
  return { ids, order, digest: '' };
});

const nodeCount = fc.integer({ min: 1, max: 4 });

describe('indexed checks and transforms = pairwise reference', () => {
  test('same drop messages, transformed config and compiled rules', () => {
    fc.assert(
      fc.property(config, nodeCount, (rules, count) => {
        const nodes = NODE_NAMES.slice(0, count);
        const fast = cloneRulesConfig(rules);
        const slow = cloneRulesConfig(rules);
        expect(transformRules(fast, nodes)).toEqual(referenceTransform(slow, nodes));
        expect(canonicalJson({ ids: fast.ids, order: fast.order })).toBe(
          canonicalJson({ ids: slow.ids, order: slow.order }),
        );
        expect(canonicalJson(compileRules(fast, nodes))).toBe(canonicalJson(compileRules(slow, nodes)));
      }),
      { numRuns: 2000, seed: 7 },
    );
  });

  test('what is written parses back to the same rules', () => {
    fc.assert(
      fc.property(config, (rules) => {
        const parsed = parseRulesConfig(writeRulesConfig(rules)).config;
        expect(canonicalJson(parsed.ids)).toBe(canonicalJson(rules.ids));
      }),
      { numRuns: 500, seed: 11 },
    );
  });
});
