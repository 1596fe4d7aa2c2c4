/** Iteration helpers over a rules config (the reference's `foreach_rule`). */
import { byteCompare } from './sort';
import type { NodeAffinityRule, ResourceAffinityRule, Rule, RulesConfig } from './types';

/** A disabled rule is one with a `disable` key, whatever its value (as the reference). */
export function isRuleDisabled(rule: Rule): boolean {
  return rule.disable !== undefined;
}

/** Rule ids sorted by `order`, then by id (ids without an order come last). */
export function sortedRuleIds(rules: Pick<RulesConfig, 'ids' | 'order'>): string[] {
  const orderOf = (id: string) => rules.order[id] ?? Number.POSITIVE_INFINITY;
  return Object.keys(rules.ids).sort((a, b) => {
    const delta = orderOf(a) - orderOf(b);
    return delta !== 0 && !Number.isNaN(delta) ? delta : byteCompare(a, b);
  });
}

/** Enabled (unless `includeDisabled`) rules as `[id, rule]` pairs in rule order. */
export function enabledRules(
  rules: Pick<RulesConfig, 'ids' | 'order'>,
  includeDisabled = false,
): Array<[string, Rule]> {
  return sortedRuleIds(rules)
    .map((id): [string, Rule] => [id, rules.ids[id] as Rule])
    .filter(([, rule]) => includeDisabled || !isRuleDisabled(rule));
}

export function enabledNodeAffinityRules(
  rules: Pick<RulesConfig, 'ids' | 'order'>,
): Array<[string, NodeAffinityRule]> {
  return enabledRules(rules).filter((entry): entry is [string, NodeAffinityRule] => entry[1].type === 'node-affinity');
}

export function enabledResourceAffinityRules(
  rules: Pick<RulesConfig, 'ids' | 'order'>,
  affinity?: 'positive' | 'negative',
): Array<[string, ResourceAffinityRule]> {
  return enabledRules(rules).filter(
    (entry): entry is [string, ResourceAffinityRule] =>
      entry[1].type === 'resource-affinity' && (affinity === undefined || entry[1].affinity === affinity),
  );
}
