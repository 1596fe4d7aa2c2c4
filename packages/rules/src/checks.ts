/**
 * Feasibility checks of the rules (Rules.pm check_feasibility and the plugins' checks).
 *
 * Every check sees the same snapshot of the enabled rules (a rule another check drops still
 * counts) and reports one `[ruleId, reason]` conflict per conflict it finds: a rule in conflict
 * with two rules is named twice. `dropInfeasibleRules` drops every named rule and keeps one
 * message per conflict. Reasons are lower-case, without the final period, in the reference's
 * wording.
 *
 * Cost: building the context is O(R log R) for R rule memberships (resources summed over the
 * rules); every check is O(R) through the per-resource indexes, plus the conflicts it reports.
 */
import { enabledRulesByType } from './rule-set';
import type { NodeAffinityRule, ResourceAffinityRule, RulesConfig, SidSet } from './types';

/** A connected group of enabled positive rules (rules sharing a resource, transitively). */
export interface PositiveComponent {
  /** Rule ids, breadth-first from the first rule in rule order (the `_merged-` id order). */
  ruleIds: readonly string[];
  /** Every resource of the component's rules, each once. */
  resources: readonly string[];
}

/** The enabled rules a check looks at, each list in rule order, with lookups over them. */
export interface CheckContext {
  /** Every node of the cluster (the reference's `$nodes`). */
  nodes: readonly string[];
  nodeAffinity: ReadonlyArray<readonly [string, NodeAffinityRule]>;
  positive: ReadonlyArray<readonly [string, ResourceAffinityRule]>;
  negative: ReadonlyArray<readonly [string, ResourceAffinityRule]>;
  /** Ids of the enabled node-affinity rules naming each resource, in rule order. */
  nodeAffinityBySid: ReadonlyMap<string, readonly string[]>;
  /** Ids of the enabled negative resource-affinity rules naming each resource, in rule order. */
  negativeBySid: ReadonlyMap<string, readonly string[]>;
  /** The enabled positive rules as connected components, by their first rule in rule order. */
  positiveComponents: readonly PositiveComponent[];
}

/** A rule that cannot be kept, with the reason. */
export type RuleConflict = [ruleId: string, reason: string];

/** One feasibility check; pure, returns its conflicts (empty when all rules pass). */
export interface RuleCheck {
  name: string;
  run(context: CheckContext): RuleConflict[];
}

/** Ids of the given rules per resource, each list in the given (rule) order. */
export function indexRulesBySid(rules: ReadonlyArray<readonly [string, { resources: SidSet }]>): Map<string, string[]> {
  const bySid = new Map<string, string[]>();
  for (const [id, rule] of rules) {
    for (const sid of Object.keys(rule.resources)) {
      const ids = bySid.get(sid);
      if (ids === undefined) bySid.set(sid, [id]);
      else ids.push(id);
    }
  }
  return bySid;
}

/**
 * Groups rules into connected components: two rules are connected when they share a resource.
 * Components are listed by their first rule (in the given order) and each component's ids are
 * in breadth-first order from that rule, visiting neighbours in the given order. This is the
 * order the reference joins into `_merged-<ids>`.
 *
 * Cost: O(R log R) for R rule memberships; each resource's rule list is walked once.
 */
export function connectedRuleComponents(rules: ReadonlyArray<readonly [string, { resources: SidSet }]>): string[][] {
  return connectedComponents(rules).map((component) => component.ruleIds as string[]);
}

function connectedComponents(rules: ReadonlyArray<readonly [string, { resources: SidSet }]>): PositiveComponent[] {
  const positionsBySid = new Map<string, number[]>();
  const resourcesOf = rules.map(([, rule]) => Object.keys(rule.resources));
  resourcesOf.forEach((sids, position) => {
    for (const sid of sids) {
      const positions = positionsBySid.get(sid);
      if (positions === undefined) positionsBySid.set(sid, [position]);
      else positions.push(position);
    }
  });

  const visited = new Uint8Array(rules.length);
  const components: PositiveComponent[] = [];
  for (let start = 0; start < rules.length; start++) {
    if (visited[start]) continue;
    visited[start] = 1;
    const queue = [start];
    const resources: string[] = [];
    for (let head = 0; head < queue.length; head++) {
      const neighbours: number[] = [];
      for (const sid of resourcesOf[queue[head] as number] as string[]) {
        const positions = positionsBySid.get(sid);
        // a resource's rules are all visited once it was expanded: expand each resource once
        if (positions === undefined) continue;
        positionsBySid.delete(sid);
        resources.push(sid);
        for (const position of positions) {
          if (visited[position]) continue;
          visited[position] = 1;
          neighbours.push(position);
        }
      }
      neighbours.sort((a, b) => a - b);
      for (const position of neighbours) queue.push(position);
    }
    components.push({
      ruleIds: queue.map((position) => (rules[position] as readonly [string, unknown])[0]),
      resources,
    });
  }
  return components;
}

/** Collects and indexes the enabled rules once for all checks. */
export function buildCheckContext(rules: Pick<RulesConfig, 'ids' | 'order'>, nodes: readonly string[]): CheckContext {
  const { nodeAffinity, positive, negative } = enabledRulesByType(rules);
  return {
    nodes,
    nodeAffinity,
    positive,
    negative,
    nodeAffinityBySid: indexRulesBySid(nodeAffinity),
    negativeBySid: indexRulesBySid(negative),
    positiveComponents: connectedComponents(positive),
  };
}

/** Ids of the rules of `bySid` that name any of `sids`, each once, in first-seen order. */
function rulesNaming(sids: Iterable<string>, bySid: ReadonlyMap<string, readonly string[]>): string[] {
  const seen = new Set<string>();
  for (const sid of sids) {
    for (const id of bySid.get(sid) ?? []) seen.add(id);
  }
  return [...seen];
}

// --- node-affinity plugin ---------------------------------------------------------------

/**
 * A resource may be in at most one node-affinity rule: every rule naming a shared resource is
 * dropped, once per shared resource.
 */
const singleNodeAffinityPerResource: RuleCheck = {
  name: 'single-node-affinity-per-resource',
  run({ nodeAffinityBySid }) {
    const conflicts: RuleConflict[] = [];
    for (const [sid, ids] of nodeAffinityBySid) {
      if (ids.length < 2) continue;
      for (const id of ids) conflicts.push([id, `resource '${sid}' is already used in another node affinity rule`]);
    }
    return conflicts;
  },
};

// --- resource-affinity plugin -----------------------------------------------------------

/** A resource-affinity rule needs at least two resources to mean anything. */
const effectiveResourceAffinity: RuleCheck = {
  name: 'effective-resource-affinity',
  run({ positive, negative }) {
    return [...positive, ...negative]
      .filter(([, rule]) => Object.keys(rule.resources).length < 2)
      .map(([id]): RuleConflict => [id, 'rule is ineffective as there are less than two resources']);
  },
};

/** A negative rule cannot keep more resources apart than there are nodes. */
const negativeFitsNodes: RuleCheck = {
  name: 'negative-fits-nodes',
  run({ negative, nodes }) {
    return negative
      .filter(([, rule]) => Object.keys(rule.resources).length > nodes.length)
      .map(([id]): RuleConflict => [id, 'rule defines more resources than available nodes']);
  },
};

/**
 * Resources kept together must not be kept apart: the positive rules are judged as connected
 * components (the groups the merge transform would build). A component sharing two or more
 * resources with a negative rule conflicts with it: every positive rule of the component gets
 * one message per such negative rule, and the negative rule one message per such component.
 */
const positiveNegativeConsistency: RuleCheck = {
  name: 'positive-negative-consistency',
  run({ positiveComponents, negativeBySid }) {
    const conflicts: RuleConflict[] = [];
    for (const component of positiveComponents) {
      const shared = new Map<string, number>();
      for (const sid of component.resources) {
        for (const negativeId of negativeBySid.get(sid) ?? [])
          shared.set(negativeId, (shared.get(negativeId) ?? 0) + 1);
      }
      for (const [negativeId, count] of shared) {
        if (count < 2) continue;
        for (const positiveId of component.ruleIds) {
          conflicts.push([positiveId, 'rule shares two or more resources with a negative resource affinity rule']);
        }
        conflicts.push([negativeId, 'rule shares two or more resources with a positive resource affinity rule']);
      }
    }
    return conflicts;
  },
};

// --- global checks between rule types ---------------------------------------------------

/** Whether the nodes of a node-affinity rule have more than one distinct priority. */
function hasSeveralPriorities(rule: NodeAffinityRule): boolean {
  let first: number | undefined;
  for (const node of Object.keys(rule.nodes)) {
    const priority = (rule.nodes[node] as { priority: number }).priority;
    if (first === undefined) first = priority;
    else if (priority !== first) return true;
  }
  return false;
}

/**
 * Resources of a resource-affinity rule (positive or negative) must not be in a node-affinity
 * rule with more than one priority group: for each such pair both rules are dropped, each with
 * its own message (so a rule paired with two others is reported twice).
 */
const singlePriorityNodeAffinityForResourceAffinity: RuleCheck = {
  name: 'single-priority-node-affinity-for-resource-affinity',
  run({ nodeAffinity, positive, negative, nodeAffinityBySid }) {
    const severalPriorities = new Set<string>();
    for (const [id, rule] of nodeAffinity) if (hasSeveralPriorities(rule)) severalPriorities.add(id);
    if (severalPriorities.size === 0) return [];
    const conflicts: RuleConflict[] = [];
    for (const [resourceAffinityId, rule] of [...positive, ...negative]) {
      for (const nodeAffinityId of rulesNaming(Object.keys(rule.resources), nodeAffinityBySid)) {
        if (!severalPriorities.has(nodeAffinityId)) continue;
        conflicts.push([
          nodeAffinityId,
          'resources are in a resource affinity rule and cannot be in a node affinity rule with multiple priorities',
        ]);
        conflicts.push([resourceAffinityId, 'resources are in node affinity rules with multiple priorities']);
      }
    }
    return conflicts;
  },
};

/**
 * Resources kept together (transitively, over connected positive rules) must not be spread
 * over several node-affinity rules: all those positive and node-affinity rules are dropped,
 * once per component.
 */
const positiveSingleNodeAffinity: RuleCheck = {
  name: 'positive-single-node-affinity',
  run({ positiveComponents, nodeAffinityBySid }) {
    const conflicts: RuleConflict[] = [];
    for (const component of positiveComponents) {
      const paired = rulesNaming(component.resources, nodeAffinityBySid);
      if (paired.length < 2) continue;
      for (const id of component.ruleIds) conflicts.push([id, 'resources are in multiple node affinity rules']);
      for (const id of paired) {
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
 * resources list fewer distinct nodes than resources they place, the negative rule and each of
 * those node-affinity rules are dropped, once per negative rule.
 */
const negativeNodeAffinityConsistency: RuleCheck = {
  name: 'negative-node-affinity-consistency',
  run({ negative, nodeAffinity, nodeAffinityBySid }) {
    const nodeAffinityById = new Map(nodeAffinity);
    const conflicts: RuleConflict[] = [];
    for (const [negativeId, negativeRule] of negative) {
      const located = Object.keys(negativeRule.resources).filter((sid) => nodeAffinityBySid.has(sid));
      if (located.length === 0) continue;
      const paired = rulesNaming(located, nodeAffinityBySid);
      const allowedNodes = new Set<string>();
      for (const id of paired) {
        for (const node of Object.keys((nodeAffinityById.get(id) as NodeAffinityRule).nodes)) allowedNodes.add(node);
        if (allowedNodes.size >= located.length) break;
      }
      if (allowedNodes.size >= located.length) continue;
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

/**
 * All checks in the reference's order: the node-affinity plugin's, the resource-affinity
 * plugin's (plugins in registration order), then the global checks between rule types. The
 * order does not change the result (every check sees the same rules and the messages are
 * sorted), only the order in which conflicts are found.
 */
export const RULE_CHECKS: readonly RuleCheck[] = [
  singleNodeAffinityPerResource,
  effectiveResourceAffinity,
  negativeFitsNodes,
  positiveNegativeConsistency,
  singlePriorityNodeAffinityForResourceAffinity,
  positiveSingleNodeAffinity,
  negativeNodeAffinityConsistency,
];
