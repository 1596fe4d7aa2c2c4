/** Compiles enabled rules into per-resource lookups (NodeAffinity/ResourceAffinity compile). */
import { enabledNodeAffinityRules, enabledResourceAffinityRules } from './rule-set';
import type { AffinityPairs, CompiledRules, NodePriorities, RulesConfig } from './types';

/** Priority given to the nodes a non-strict node-affinity rule does not list. */
export const NON_STRICT_OTHER_NODE_PRIORITY = -1;

/**
 * Compiles the enabled rules, usually after `transformRules`:
 * - `node-affinity[sid].nodes` = the rule's nodes; a non-strict rule adds every node of `nodes`
 *   it does not list with priority -1 (a later rule for the same sid replaces an earlier one);
 * - `resource-affinity.{positive|negative}[sid][csid] = 1` for every ordered pair of distinct
 *   members of a rule.
 * Pure: `rules` is not modified.
 */
export function compileRules(rules: Pick<RulesConfig, 'ids' | 'order'>, nodes: readonly string[]): CompiledRules {
  const compiled: CompiledRules = {
    'node-affinity': {},
    'resource-affinity': { positive: {}, negative: {} },
  };

  for (const [, rule] of enabledNodeAffinityRules(rules)) {
    const ruleNodes: NodePriorities = {};
    for (const [node, entry] of Object.entries(rule.nodes)) ruleNodes[node] = { priority: entry.priority };
    if (!rule.strict) {
      for (const node of nodes) {
        if (ruleNodes[node] === undefined) ruleNodes[node] = { priority: NON_STRICT_OTHER_NODE_PRIORITY };
      }
    }
    for (const sid of Object.keys(rule.resources)) {
      compiled['node-affinity'][sid] = { nodes: structuredClone(ruleNodes) };
    }
  }

  for (const [, rule] of enabledResourceAffinityRules(rules)) {
    const pairs: AffinityPairs = compiled['resource-affinity'][rule.affinity];
    const members = Object.keys(rule.resources);
    for (const sid of members) {
      for (const csid of members) {
        if (sid === csid) continue;
        (pairs[sid] ??= {})[csid] = 1;
      }
    }
  }

  return compiled;
}

/** Compiled rules with no constraint at all. */
export function emptyCompiledRules(): CompiledRules {
  return { 'node-affinity': {}, 'resource-affinity': { positive: {}, negative: {} } };
}
