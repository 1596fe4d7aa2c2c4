/**
 * Feasibility checks of the rules (Rules.pm check_feasibility and the plugins' checks).
 *
 * Every check sees the same snapshot of the enabled rules and reports `[ruleId, reason]`
 * conflicts; `transformRules` drops every rule named by any check. Reasons are lower-case,
 * without the final period, in the reference's wording.
 */
import { enabledNodeAffinityRules, enabledResourceAffinityRules } from './rule-set';
import { byteCompare } from './sort';
import type { NodeAffinityRule, ResourceAffinityRule, RulesConfig } from './types';

/** The enabled rules a check looks at, each list in rule order. */
export interface CheckContext {
  nodes: readonly string[];
  nodeAffinity: Array<[string, NodeAffinityRule]>;
  positive: Array<[string, ResourceAffinityRule]>;
  negative: Array<[string, ResourceAffinityRule]>;
}

/** A rule that cannot be kept, with the reason. */
export type RuleConflict = [ruleId: string, reason: string];

/** One feasibility check; pure, returns its conflicts (empty when all rules pass). */
export interface RuleCheck {
  name: string;
  run(context: CheckContext): RuleConflict[];
}

export function buildCheckContext(rules: Pick<RulesConfig, 'ids' | 'order'>, nodes: readonly string[]): CheckContext {
  return {
    nodes,
    nodeAffinity: enabledNodeAffinityRules(rules),
    positive: enabledResourceAffinityRules(rules, 'positive'),
    negative: enabledResourceAffinityRules(rules, 'negative'),
  };
}

function shareCount(a: Record<string, unknown>, b: Record<string, unknown>): number {
  return Object.keys(a).filter((key) => key in b).length;
}

/**
 * Groups rules into connected components: two rules are connected when they share a resource.
 * Components are listed by their first rule (in the given order) and each component's ids are
 * in breadth-first order from that rule, visiting neighbours in the given order. This is the
 * order the reference joins into `_merged-<ids>`.
 */
export function connectedRuleComponents(rules: Array<[string, { resources: Record<string, 1> }]>): string[][] {
  const visited = new Set<string>();
  const components: string[][] = [];
  for (const [startId] of rules) {
    if (visited.has(startId)) continue;
    visited.add(startId);
    const component: string[] = [];
    const queue = [startId];
    while (queue.length > 0) {
      const id = queue.shift() as string;
      component.push(id);
      const resources = (rules.find(([other]) => other === id) as [string, { resources: Record<string, 1> }])[1]
        .resources;
      for (const [otherId, other] of rules) {
        if (visited.has(otherId) || shareCount(resources, other.resources) === 0) continue;
        visited.add(otherId);
        queue.push(otherId);
      }
    }
    components.push(component);
  }
  return components;
}

/** A resource may be in at most one node-affinity rule; every rule naming it is dropped. */
export const singleNodeAffinityPerResource: RuleCheck = {
  name: 'single-node-affinity-per-resource',
  run({ nodeAffinity }) {
    const ruleIdsBySid = new Map<string, string[]>();
    for (const [id, rule] of nodeAffinity) {
      for (const sid of Object.keys(rule.resources)) ruleIdsBySid.set(sid, [...(ruleIdsBySid.get(sid) ?? []), id]);
    }
    const conflicts: RuleConflict[] = [];
    for (const [sid, ids] of [...ruleIdsBySid].sort((a, b) => byteCompare(a[0], b[0]))) {
      if (ids.length < 2) continue;
      for (const id of ids) conflicts.push([id, `resource '${sid}' is already used in another node affinity rule`]);
    }
    return conflicts;
  },
};

/** A resource-affinity rule needs at least two resources to mean anything. */
export const effectiveResourceAffinity: RuleCheck = {
  name: 'effective-resource-affinity',
  run({ positive, negative }) {
    return [...positive, ...negative]
      .filter(([, rule]) => Object.keys(rule.resources).length < 2)
      .map(([id]): RuleConflict => [id, 'rule is ineffective as there are less than two resources']);
  },
};

/** A negative rule cannot keep more resources apart than there are nodes. */
export const negativeFitsNodes: RuleCheck = {
  name: 'negative-fits-nodes',
  run({ negative, nodes }) {
    return negative
      .filter(([, rule]) => Object.keys(rule.resources).length > nodes.length)
      .map(([id]): RuleConflict => [id, 'rule defines more resources than available nodes']);
  },
};

/** A positive and a negative rule sharing two or more resources contradict each other. */
export const positiveNegativeConsistency: RuleCheck = {
  name: 'positive-negative-consistency',
  run({ positive, negative }) {
    const conflicts: RuleConflict[] = [];
    for (const [positiveId, positiveRule] of positive) {
      for (const [negativeId, negativeRule] of negative) {
        if (shareCount(positiveRule.resources, negativeRule.resources) < 2) continue;
        conflicts.push([positiveId, 'rule shares two or more resources with a negative resource affinity rule']);
        conflicts.push([negativeId, 'rule shares two or more resources with a positive resource affinity rule']);
      }
    }
    return conflicts;
  },
};

/**
 * Resources kept together (transitively, over connected positive rules) must not be spread
 * over several node-affinity rules: all those positive and node-affinity rules are dropped.
 */
export const positiveSingleNodeAffinity: RuleCheck = {
  name: 'positive-single-node-affinity',
  run({ positive, nodeAffinity }) {
    const conflicts: RuleConflict[] = [];
    const byId = new Map(positive);
    for (const component of connectedRuleComponents(positive)) {
      const members: Record<string, 1> = {};
      for (const id of component) Object.assign(members, byId.get(id)?.resources);
      const paired = nodeAffinity.filter(([, rule]) => shareCount(rule.resources, members) > 0);
      if (paired.length < 2) continue;
      for (const id of component) conflicts.push([id, 'resources are in multiple node affinity rules']);
      for (const [id] of paired) {
        conflicts.push([
          id,
          'at least one resource is in a positive resource affinity rule and there are other resources in at least one other node affinity rule already',
        ]);
      }
    }
    return conflicts;
  },
};

/**
 * Resources kept apart must have enough nodes: if the node-affinity rules of a negative rule's
 * resources list fewer distinct nodes than resources they place, both sides are dropped.
 */
export const negativeNodeAffinityConsistency: RuleCheck = {
  name: 'negative-node-affinity-consistency',
  run({ negative, nodeAffinity }) {
    const conflicts: RuleConflict[] = [];
    for (const [negativeId, negativeRule] of negative) {
      const located = new Set<string>();
      const allowedNodes = new Set<string>();
      const paired: string[] = [];
      for (const [id, rule] of nodeAffinity) {
        const common = Object.keys(rule.resources).filter((sid) => sid in negativeRule.resources);
        if (common.length === 0) continue;
        for (const sid of common) located.add(sid);
        for (const node of Object.keys(rule.nodes)) allowedNodes.add(node);
        paired.push(id);
      }
      if (allowedNodes.size >= located.size) continue;
      conflicts.push([
        negativeId,
        'two or more resources are restricted to less nodes than available to the resources',
      ]);
      for (const id of paired) {
        conflicts.push([
          id,
          'at least one resource is in a negative resource affinity rule and this rule would restrict these to less nodes than available to the resources',
        ]);
      }
    }
    return conflicts;
  },
};

/** All checks, plugin checks first (node-affinity, resource-affinity), then the global ones. */
export const RULE_CHECKS: readonly RuleCheck[] = [
  singleNodeAffinityPerResource,
  effectiveResourceAffinity,
  negativeFitsNodes,
  positiveNegativeConsistency,
  positiveSingleNodeAffinity,
  negativeNodeAffinityConsistency,
];
