/**
 * Rules->transform (Rules.pm:440-468): drop infeasible rules, then rewrite the rest into the
 * form `compileRules` expects. The pipeline, in order:
 * 1. run every check of `RULE_CHECKS` on the enabled rules, drop each named rule;
 * 2. merge connected positive resource-affinity rules into `_merged-<ids>`;
 * 3. infer `_implicit-negative-<positive>-<sid>-<csid>` rules: every member of a positive rule
 *    is kept apart from the negative partners of the other members;
 * 4. let every member of a positive rule join the node-affinity rule of any member.
 * Disabled rules are neither checked nor transformed and stay in the config.
 */
import { RULE_CHECKS, buildCheckContext, connectedRuleComponents, type RuleCheck } from './checks';
import { lowestOrder } from './groups';
import { enabledNodeAffinityRules, enabledResourceAffinityRules } from './rule-set';
import { byteCompare, sortedStrings } from './sort';
import type { ResourceAffinityRule, RulesConfig, SidSet } from './types';

/** Prefix of rules merged from connected positive rules. */
export const MERGED_RULE_PREFIX = '_merged-';
/** Prefix of inferred negative rules. */
export const IMPLICIT_NEGATIVE_RULE_PREFIX = '_implicit-negative-';

/** The log line for a dropped rule. */
export function dropRuleMessage(ruleId: string, reason: string): string {
  return `Drop rule '${ruleId}', because ${reason}.`;
}

/** Removes every rule failing a check; returns the sorted, de-duplicated drop messages. */
export function dropInfeasibleRules(
  rules: RulesConfig,
  nodes: readonly string[],
  checks: readonly RuleCheck[] = RULE_CHECKS,
): string[] {
  const context = buildCheckContext(rules, nodes);
  const messages = new Set<string>();
  const dropped = new Set<string>();
  for (const check of checks) {
    for (const [ruleId, reason] of check.run(context)) {
      messages.add(dropRuleMessage(ruleId, reason));
      dropped.add(ruleId);
    }
  }
  for (const ruleId of dropped) {
    delete rules.ids[ruleId];
    delete rules.order[ruleId];
  }
  return [...messages].sort(byteCompare);
}

/** Step 2: one `_merged-` rule per connected group of two or more positive rules. */
export function mergeConnectedPositiveRules(rules: RulesConfig): void {
  const positive = enabledResourceAffinityRules(rules, 'positive');
  for (const component of connectedRuleComponents(positive)) {
    if (component.length < 2) continue;
    const resources: SidSet = {};
    for (const id of component) Object.assign(resources, rules.ids[id]?.resources);
    const mergedId = MERGED_RULE_PREFIX + component.join('-');
    const order = rules.order[component[0] as string] as number;
    for (const id of component) {
      delete rules.ids[id];
      delete rules.order[id];
    }
    const merged: ResourceAffinityRule = { type: 'resource-affinity', affinity: 'positive', resources };
    rules.ids[mergedId] = merged;
    rules.order[mergedId] = order;
  }
}

/**
 * Step 3: for each positive rule P, each member `sid` and each negative partner `csid` of any
 * member (outside P) that `sid` is not yet kept apart from, add the negative rule
 * `_implicit-negative-<P>-<sid>-<csid>` = {sid, csid}. Its order is the lowest order + 1 (the
 * reference's get_next_ordinal).
 */
export function inferImplicitNegativeRules(rules: RulesConfig): void {
  const negativePartners = new Map<string, Set<string>>();
  for (const [, rule] of enabledResourceAffinityRules(rules, 'negative')) {
    const members = Object.keys(rule.resources);
    for (const sid of members) {
      const partners = negativePartners.get(sid) ?? new Set<string>();
      for (const csid of members) if (csid !== sid) partners.add(csid);
      negativePartners.set(sid, partners);
    }
  }
  for (const [positiveId, rule] of enabledResourceAffinityRules(rules, 'positive')) {
    const members = sortedStrings(Object.keys(rule.resources));
    const outside = new Set<string>();
    for (const sid of members) {
      for (const csid of negativePartners.get(sid) ?? []) if (!(csid in rule.resources)) outside.add(csid);
    }
    for (const csid of sortedStrings(outside)) {
      for (const sid of members) {
        if (negativePartners.get(sid)?.has(csid)) continue;
        const id = `${IMPLICIT_NEGATIVE_RULE_PREFIX}${positiveId}-${sid}-${csid}`;
        const order = lowestOrder(rules.order) + 1;
        rules.ids[id] = { type: 'resource-affinity', affinity: 'negative', resources: { [sid]: 1, [csid]: 1 } };
        rules.order[id] = order;
      }
    }
  }
}

/** Step 4: every member of a positive rule joins the node-affinity rule(s) of its members. */
export function inferNodeAffinityForPositiveRules(rules: RulesConfig): void {
  const nodeAffinity = enabledNodeAffinityRules(rules);
  for (const [, positive] of enabledResourceAffinityRules(rules, 'positive')) {
    for (const [, rule] of nodeAffinity) {
      if (!Object.keys(positive.resources).some((sid) => sid in rule.resources)) continue;
      for (const sid of Object.keys(positive.resources)) rule.resources[sid] = 1;
    }
  }
}

/**
 * Checks and transforms `rules` in place for the cluster `nodes` (see the module comment) and
 * returns the sorted `Drop rule '<id>', because <reason>.` messages (without newline).
 * Use `cloneRulesConfig` first to keep the parsed config.
 */
export function transformRules(rules: RulesConfig, nodes: readonly string[]): string[] {
  const messages = dropInfeasibleRules(rules, nodes);
  mergeConnectedPositiveRules(rules);
  inferImplicitNegativeRules(rules);
  inferNodeAffinityForPositiveRules(rules);
  return messages;
}
