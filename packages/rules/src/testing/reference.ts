/**
 * Obviously-correct implementations of the checks and transforms, written as the spec reads
 * (pairwise scans over the rules, O(n²)), to test the indexed implementations of `checks.ts`
 * and `transform.ts` against. Not exported from the package; never use them on large inputs.
 */
import { enabledRulesByType, lowestOrder } from '../rule-set';
import type { NodeAffinityRule, ResourceAffinityRule, RulesConfig, SidSet } from '../types';
import { dropRuleMessage } from '../transform';
import { compareNames, sortNames } from '@poise/usage';

type Entry<T> = readonly [string, T];

const has = (set: SidSet, sid: string) => Object.prototype.hasOwnProperty.call(set, sid);
const common = (a: SidSet, b: SidSet) => Object.keys(a).filter((sid) => has(b, sid));

/** Connected components by breadth-first search, scanning every rule for each visited rule. */
function referenceComponents(rules: ReadonlyArray<Entry<{ resources: SidSet }>>): string[][] {
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
      const resources = (rules.find(([other]) => other === id) as Entry<{ resources: SidSet }>)[1].resources;
      for (const [otherId, other] of rules) {
        if (visited.has(otherId) || common(resources, other.resources).length === 0) continue;
        visited.add(otherId);
        queue.push(otherId);
      }
    }
    components.push(component);
  }
  return components;
}

/** `[check index, rule id, reason]` for every conflict, by pairwise scans. */
function referenceConflicts(
  rules: Pick<RulesConfig, 'ids' | 'order'>,
  nodes: readonly string[],
): Array<[number, string, string]> {
  const { nodeAffinity, positive, negative } = enabledRulesByType(rules);
  const out: Array<[number, string, string]> = [];
  const union = (ids: string[]) => {
    const set = Object.create(null) as SidSet;
    for (const id of ids)
      for (const sid of Object.keys((rules.ids[id] as ResourceAffinityRule).resources)) set[sid] = 1;
    return set;
  };
  const components = referenceComponents(positive);

  // 0: a resource in two node-affinity rules
  for (const [id, rule] of nodeAffinity) {
    for (const sid of Object.keys(rule.resources)) {
      if (nodeAffinity.some(([other, o]) => other !== id && has(o.resources, sid))) {
        out.push([0, id, `resource '${sid}' is already used in another node affinity rule`]);
      }
    }
  }
  // 1: fewer than two resources
  for (const [id, rule] of [...positive, ...negative]) {
    if (Object.keys(rule.resources).length < 2)
      out.push([1, id, 'rule is ineffective as there are less than two resources']);
  }
  // 2: more negative resources than nodes
  for (const [id, rule] of negative) {
    if (Object.keys(rule.resources).length > nodes.length)
      out.push([2, id, 'rule defines more resources than available nodes']);
  }
  // 3: positive groups against negative rules
  for (const component of components) {
    const resources = union(component);
    for (const [negativeId, rule] of negative) {
      if (common(resources, rule.resources).length < 2) continue;
      for (const id of component)
        out.push([3, id, 'rule shares two or more resources with a negative resource affinity rule']);
      out.push([3, negativeId, 'rule shares two or more resources with a positive resource affinity rule']);
    }
  }
  // 4: node-affinity rules with several priorities and resource affinity
  for (const [raId, ra] of [...positive, ...negative]) {
    for (const [naId, na] of nodeAffinity) {
      if (common(ra.resources, na.resources).length === 0) continue;
      const priorities = new Set(Object.values(na.nodes).map((entry) => entry.priority));
      if (priorities.size < 2) continue;
      out.push([
        4,
        naId,
        'resources are in a resource affinity rule and cannot be in a node affinity rule with multiple priorities',
      ]);
      out.push([4, raId, 'resources are in node affinity rules with multiple priorities']);
    }
  }
  // 5: positive groups over several node-affinity rules
  for (const component of components) {
    const resources = union(component);
    const paired = nodeAffinity.filter(([, na]) => common(resources, na.resources).length > 0);
    if (paired.length < 2) continue;
    for (const id of component) out.push([5, id, 'resources are in multiple node affinity rules']);
    for (const [id] of paired) {
      out.push([
        5,
        id,
        'at least one resource is in a positive resource affinity rule and there are other resources in at least one other node affinity rule already',
      ]);
    }
  }
  // 6: negative rules restricted to too few nodes
  for (const [negativeId, rule] of negative) {
    const located = new Set<string>();
    const allowed = new Set<string>();
    const paired: string[] = [];
    for (const [id, na] of nodeAffinity) {
      const shared = common(rule.resources, na.resources);
      if (shared.length === 0) continue;
      for (const sid of shared) located.add(sid);
      for (const node of Object.keys(na.nodes)) allowed.add(node);
      paired.push(id);
    }
    if (allowed.size >= located.size) continue;
    out.push([6, negativeId, 'two or more resources are restricted to less nodes than available to the resources']);
    for (const id of paired) {
      out.push([
        6,
        id,
        'at least one resource is in a negative resource affinity rule and this rule would restrict these to less nodes than available to the resources',
      ]);
    }
  }
  return out;
}

/** The drop messages of `referenceConflicts`: by rule id, then check, then reason. */
function referenceDropMessages(rules: Pick<RulesConfig, 'ids' | 'order'>, nodes: readonly string[]): string[] {
  return referenceConflicts(rules, nodes)
    .sort((a, b) => compareNames(a[1], b[1]) || a[0] - b[0] || compareNames(a[2], b[2]))
    .map(([, id, reason]) => dropRuleMessage(id, reason));
}

/** transformRules by pairwise scans; mutates `rules` and returns the drop messages. */
export function referenceTransform(rules: RulesConfig, nodes: readonly string[]): string[] {
  const messages = referenceDropMessages(rules, nodes);
  for (const [, id] of referenceConflicts(rules, nodes)) {
    delete rules.ids[id];
    delete rules.order[id];
  }

  // merge
  for (const component of referenceComponents(enabledRulesByType(rules).positive)) {
    if (component.length < 2) continue;
    const resources = Object.create(null) as SidSet;
    for (const id of component) Object.assign(resources, (rules.ids[id] as ResourceAffinityRule).resources);
    const order = rules.order[component[0] as string] as number;
    for (const id of component) {
      delete rules.ids[id];
      delete rules.order[id];
    }
    const mergedId = `_merged-${component.join('-')}`;
    rules.ids[mergedId] = { type: 'resource-affinity', affinity: 'positive', resources };
    rules.order[mergedId] = order;
  }

  // implicit negatives
  const { positive, negative } = enabledRulesByType(rules);
  const apart = (sid: string, csid: string) =>
    negative.some(([, rule]) => sid !== csid && has(rule.resources, sid) && has(rule.resources, csid));
  for (const [positiveId, rule] of positive) {
    const members = sortNames(Object.keys(rule.resources));
    const outside = new Set<string>();
    for (const [, neg] of negative) {
      if (common(rule.resources, neg.resources).length === 0) continue;
      for (const csid of Object.keys(neg.resources)) if (!has(rule.resources, csid)) outside.add(csid);
    }
    for (const csid of sortNames(outside)) {
      for (const sid of members) {
        if (apart(sid, csid)) continue;
        const id = `_implicit-negative-${positiveId}-${sid}-${csid}`;
        const order = lowestOrder(rules.order) + 1;
        const resources = Object.create(null) as SidSet;
        resources[sid] = 1;
        resources[csid] = 1;
        rules.ids[id] = { type: 'resource-affinity', affinity: 'negative', resources };
        rules.order[id] = order;
      }
    }
  }

  // node affinity for positive groups (live: later positive rules see earlier additions)
  const { nodeAffinity } = enabledRulesByType(rules);
  for (const [, rule] of enabledRulesByType(rules).positive) {
    for (const [, na] of nodeAffinity as Array<Entry<NodeAffinityRule>>) {
      if (common(rule.resources, na.resources).length === 0) continue;
      for (const sid of Object.keys(rule.resources)) na.resources[sid] = 1;
    }
  }
  return messages;
}
