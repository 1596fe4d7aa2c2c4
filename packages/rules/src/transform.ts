/**
 * Rules->transform (Rules.pm:440-468): drop infeasible rules, then rewrite the rest into the
 * form `compileRules` expects. The pipeline, in order:
 * 1. run every check of `RULE_CHECKS` on the enabled rules (all on the same snapshot), drop
 *    each named rule, and sort the messages (one per conflict) by rule id, keeping the check
 *    order for the messages of one rule;
 * 2. merge connected positive resource-affinity rules into `_merged-<ids>`;
 * 3. infer `_implicit-negative-<positive>-<sid>-<csid>` rules: every member of a positive rule
 *    is kept apart from the negative partners of the other members;
 * 4. let every member of a positive rule join the node-affinity rule of any member.
 * Disabled rules are neither checked nor transformed and stay in the config.
 *
 * Cost: O(R log R) for R rule memberships, plus the size of what is inferred.
 */
import { RULE_CHECKS, buildCheckContext, connectedRuleComponents, indexRulesBySid, type RuleCheck } from './checks';
import { getOwn, hasOwn, nullRecord, setOwn } from './records';
import { enabledRulesByType, lowestOrder } from './rule-set';
import type { ResourceAffinityRule, RulesConfig, SidSet } from './types';
import { compareNames, sortNames } from '@poise/usage';

/** Prefix of rules merged from connected positive rules. */
const MERGED_RULE_PREFIX = '_merged-';
/** Prefix of inferred negative rules. */
const IMPLICIT_NEGATIVE_RULE_PREFIX = '_implicit-negative-';

/** The log line for a dropped rule. */
export function dropRuleMessage(ruleId: string, reason: string): string {
  return `Drop rule '${ruleId}', because ${reason}.`;
}

/** A conflict a check found: the rule to drop, why, and the check's name. */
export interface FoundConflict {
  ruleId: string;
  reason: string;
  check: string;
}

/**
 * Runs `checks` on the enabled rules of `rules` without changing them and returns every
 * conflict, one entry per conflict (a rule in conflict with two rules appears twice), sorted
 * by rule id (byte order); a rule's conflicts keep the order of `checks`, and within one check
 * are sorted by reason. This is the order of the drop messages. For a validator that explains
 * each drop.
 */
export function findRuleConflicts(
  rules: Pick<RulesConfig, 'ids' | 'order'>,
  nodes: readonly string[],
  checks: readonly RuleCheck[] = RULE_CHECKS,
): FoundConflict[] {
  const context = buildCheckContext(rules, nodes);
  const found: FoundConflict[] = [];
  for (const check of checks) {
    const conflicts = check.run(context).sort((a, b) => compareNames(a[0], b[0]) || compareNames(a[1], b[1]));
    for (const [ruleId, reason] of conflicts) found.push({ ruleId, reason, check: check.name });
  }
  // stable: equal rule ids keep the check order
  return found.sort((a, b) => compareNames(a.ruleId, b.ruleId));
}

/**
 * Runs `checks` on the enabled rules, removes every rule a check names (from `ids` and
 * `order`) and returns one `Drop rule …` message per conflict in the order of
 * `findRuleConflicts` (by rule id, then check order): a rule in conflict with two rules has
 * two (possibly equal) messages. Mutates `rules`.
 */
function dropInfeasibleRules(
  rules: RulesConfig,
  nodes: readonly string[],
  checks: readonly RuleCheck[] = RULE_CHECKS,
): string[] {
  const conflicts = findRuleConflicts(rules, nodes, checks);
  removeRules(
    rules,
    conflicts.map((conflict) => conflict.ruleId),
  );
  return conflicts.map(({ ruleId, reason }) => dropRuleMessage(ruleId, reason));
}

/** Deletes the given rules from `ids` and `order` (unknown ids are ignored). Mutates `rules`. */
export function removeRules(rules: RulesConfig, ruleIds: Iterable<string>): void {
  for (const ruleId of ruleIds) {
    delete rules.ids[ruleId];
    delete rules.order[ruleId];
  }
}

/** Step 2: one `_merged-` rule per connected group of two or more positive rules. */
function mergeConnectedPositiveRules(rules: RulesConfig): void {
  const { positive } = enabledRulesByType(rules);
  for (const component of connectedRuleComponents(positive)) {
    if (component.length < 2) continue;
    const resources: SidSet = nullRecord<1>();
    for (const id of component) {
      for (const sid of Object.keys((getOwn(rules.ids, id) as ResourceAffinityRule).resources)) resources[sid] = 1;
    }
    const mergedId = MERGED_RULE_PREFIX + component.join('-');
    const order = getOwn(rules.order, component[0] as string) as number;
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
function inferImplicitNegativeRules(rules: RulesConfig): void {
  const { positive, negative } = enabledRulesByType(rules);
  const negativePartners = new Map<string, Set<string>>();
  for (const [, rule] of negative) {
    const members = Object.keys(rule.resources);
    for (const sid of members) {
      let partners = negativePartners.get(sid);
      if (partners === undefined) negativePartners.set(sid, (partners = new Set<string>()));
      for (const csid of members) if (csid !== sid) partners.add(csid);
    }
  }
  // adding lowest + 1 keeps the lowest order unless there was none
  let hasOrder = Object.keys(rules.order).length > 0;
  let lowest = lowestOrder(rules.order);
  for (const [positiveId, rule] of positive) {
    const members = sortNames(Object.keys(rule.resources));
    const outside = new Set<string>();
    for (const sid of members) {
      for (const csid of negativePartners.get(sid) ?? []) if (!hasOwn(rule.resources, csid)) outside.add(csid);
    }
    for (const csid of sortNames(outside)) {
      for (const sid of members) {
        if (negativePartners.get(sid)?.has(csid)) continue;
        const id = `${IMPLICIT_NEGATIVE_RULE_PREFIX}${positiveId}-${sid}-${csid}`;
        const order = (hasOrder ? lowest : 0) + 1;
        if (!hasOrder || order < lowest) lowest = order;
        hasOrder = true;
        const resources = nullRecord<1>();
        resources[sid] = 1;
        resources[csid] = 1;
        rules.ids[id] = { type: 'resource-affinity', affinity: 'negative', resources };
        rules.order[id] = order;
      }
    }
  }
}

/**
 * Step 4: every member of a positive rule joins the node-affinity rule(s) of its members, the
 * positive rules taken in rule order (a resource added for one positive rule counts for the
 * next; after step 2 the positive rules share no resource, so it never matters there).
 */
function inferNodeAffinityForPositiveRules(rules: RulesConfig): void {
  const { nodeAffinity, positive } = enabledRulesByType(rules);
  const nodeAffinityById = new Map(nodeAffinity);
  const nodeAffinityBySid = indexRulesBySid(nodeAffinity);
  for (const [, rule] of positive) {
    const members = Object.keys(rule.resources);
    const paired: string[] = [];
    for (const sid of members) for (const id of nodeAffinityBySid.get(sid) ?? []) paired.push(id);
    for (const id of new Set(paired)) {
      const target = (nodeAffinityById.get(id) as { resources: SidSet }).resources;
      for (const sid of members) {
        if (hasOwn(target, sid)) continue;
        setOwn(target, sid, 1);
        const ids = nodeAffinityBySid.get(sid);
        if (ids === undefined) nodeAffinityBySid.set(sid, [id]);
        else ids.push(id);
      }
    }
  }
}

/**
 * Checks and transforms `rules` in place for the cluster `nodes` (see the module comment) and
 * returns the `Drop rule '<id>', because <reason>.` messages (without newline), one per
 * conflict, sorted by rule id. Use `cloneRulesConfig` first to keep the parsed config.
 */
export function transformRules(rules: RulesConfig, nodes: readonly string[]): string[] {
  const messages = dropInfeasibleRules(rules, nodes);
  applyRuleTransforms(rules);
  return messages;
}

/** Steps 2–4 of `transformRules` (merge, implicit negatives, node affinity), in place. */
export function applyRuleTransforms(rules: RulesConfig): void {
  mergeConnectedPositiveRules(rules);
  inferImplicitNegativeRules(rules);
  inferNodeAffinityForPositiveRules(rules);
}
