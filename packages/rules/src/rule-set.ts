/** Iteration helpers over a rules config (the reference's `foreach_rule`). */
import { getOwn } from './records';
import type { NodeAffinityRule, ResourceAffinityRule, Rule, RulesConfig } from './types';
import { compareNames } from '@poise/usage';

/** A disabled rule is one with a `disable` key, whatever its value (as the reference). */
function isRuleDisabled(rule: Rule): boolean {
  return rule.disable !== undefined;
}

/**
 * Rule ids sorted by `order`, then by id in byte order (ids without an order come last).
 * The reference sorts by order only and leaves ties in hash order; the id makes ties
 * deterministic. Cost: O(n log n).
 */
export function sortedRuleIds(rules: Pick<RulesConfig, 'ids' | 'order'>): string[] {
  const keyed = Object.keys(rules.ids).map((id) => {
    const order = getOwn(rules.order, id);
    return { id, order: typeof order === 'number' && !Number.isNaN(order) ? order : Number.POSITIVE_INFINITY };
  });
  keyed.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : compareNames(a.id, b.id)));
  return keyed.map((entry) => entry.id);
}

/** Enabled (unless `includeDisabled`) rules as `[id, rule]` pairs in rule order. */
export function enabledRules(
  rules: Pick<RulesConfig, 'ids' | 'order'>,
  includeDisabled = false,
): Array<[string, Rule]> {
  const out: Array<[string, Rule]> = [];
  for (const id of sortedRuleIds(rules)) {
    const rule = rules.ids[id] as Rule;
    if (includeDisabled || !isRuleDisabled(rule)) out.push([id, rule]);
  }
  return out;
}

/** The enabled rules split by type, each list in rule order (one sort for all of them). */
export interface EnabledRulesByType {
  nodeAffinity: Array<[string, NodeAffinityRule]>;
  positive: Array<[string, ResourceAffinityRule]>;
  negative: Array<[string, ResourceAffinityRule]>;
}

/** Splits the enabled rules by type and affinity, keeping rule order. */
export function enabledRulesByType(rules: Pick<RulesConfig, 'ids' | 'order'>): EnabledRulesByType {
  const byType: EnabledRulesByType = { nodeAffinity: [], positive: [], negative: [] };
  for (const entry of enabledRules(rules)) {
    const rule = entry[1];
    if (rule.type === 'node-affinity') byType.nodeAffinity.push([entry[0], rule]);
    else if (rule.type === 'resource-affinity') {
      if (rule.affinity === 'positive') byType.positive.push([entry[0], rule]);
      else if (rule.affinity === 'negative') byType.negative.push([entry[0], rule]);
    }
  }
  return byType;
}

/**
 * The reference's get_next_ordinal source: the smallest `order` value, or 0 for none (it sorts
 * ascending and takes the first, so new rules get the lowest order + 1).
 */
export function lowestOrder(order: Readonly<Record<string, number>>): number {
  let lowest: number | undefined;
  for (const id of Object.keys(order)) {
    const value = order[id] as number;
    if (lowest === undefined || value < lowest) lowest = value;
  }
  return lowest ?? 0;
}
