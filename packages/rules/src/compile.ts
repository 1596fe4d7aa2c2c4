/** Compiles enabled rules into per-resource lookups (NodeAffinity/ResourceAffinity compile). */
import { getOwn, nullRecord } from './records';
import { enabledRulesByType } from './rule-set';
import type { AffinityPairs, CompiledRules, NodePriorities, NodePriority, RulesConfig } from './types';

/** Priority given to the nodes a non-strict node-affinity rule does not list. */
const NON_STRICT_OTHER_NODE_PRIORITY = -1;

/**
 * Compiles the enabled rules, usually after `transformRules`:
 * - `node-affinity[sid].nodes` = the rule's nodes; a non-strict rule adds every node of `nodes`
 *   it does not list with priority -1 (a later rule for the same sid replaces an earlier one);
 * - `resource-affinity.{positive|negative}[sid][csid] = 1` for every ordered pair of distinct
 *   members of a rule.
 *
 * Pure: `rules` is not modified. Every record of the result has no prototype, and the
 * resources of one node-affinity rule share one frozen `nodes` record (read it, never write
 * it). Cost: O(Σ node-affinity rules × nodes + Σ resource-affinity rules × members²); the
 * second term is the size of the result (a positive group of k resources has k(k−1) pairs).
 */
export function compileRules(rules: Pick<RulesConfig, 'ids' | 'order'>, nodes: readonly string[]): CompiledRules {
  const compiled = emptyCompiledRules();
  const { nodeAffinity, positive, negative } = enabledRulesByType(rules);

  for (const [, rule] of nodeAffinity) {
    const ruleNodes: NodePriorities = nullRecord<NodePriority>();
    for (const [node, entry] of Object.entries(rule.nodes))
      ruleNodes[node] = Object.freeze({ priority: entry.priority });
    if (!rule.strict) {
      const other = Object.freeze({ priority: NON_STRICT_OTHER_NODE_PRIORITY });
      for (const node of nodes) {
        if (getOwn(ruleNodes, node) === undefined) ruleNodes[node] = other;
      }
    }
    const entry = Object.freeze({ nodes: Object.freeze(ruleNodes) });
    for (const sid of Object.keys(rule.resources)) compiled['node-affinity'][sid] = entry;
  }

  for (const [affinity, list] of [
    ['positive', positive],
    ['negative', negative],
  ] as const) {
    const pairs: AffinityPairs = compiled['resource-affinity'][affinity];
    for (const [, rule] of list) {
      const members = Object.keys(rule.resources);
      for (const sid of members) {
        let partners = getOwn(pairs, sid);
        if (partners === undefined) pairs[sid] = partners = nullRecord<1>();
        for (const csid of members) if (csid !== sid) partners[csid] = 1;
      }
    }
  }

  return compiled;
}

/** Compiled rules with no constraint at all (records without prototype). */
export function emptyCompiledRules(): CompiledRules {
  return {
    'node-affinity': nullRecord(),
    'resource-affinity': { positive: nullRecord(), negative: nullRecord() },
  };
}
