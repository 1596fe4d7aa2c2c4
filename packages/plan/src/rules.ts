import { type CompiledRules, type RulesConfig, enabledRules } from '@poise/rules';
import type { PlanRule } from './types';
import { sortNames } from '@poise/usage';

/**
 * The enabled rules of a rules config (`ha/rules.cfg`, as `@poise/rules` parses it, best after
 * `transformRules` has dropped the infeasible ones, as HA applies them), in rule order, with
 * their ids: what the planner's reasons name.
 */
export function rulesFromConfig(config: Pick<RulesConfig, 'ids' | 'order'>): PlanRule[] {
  const out: PlanRule[] = [];
  for (const [id, rule] of enabledRules(config)) {
    const resources = sortNames(Object.keys(rule.resources));
    if (rule.type === 'node-affinity') {
      const nodes = sortNames(Object.keys(rule.nodes)).map((node) => ({
        node,
        priority: rule.nodes[node]!.priority,
      }));
      out.push({ id, type: 'node-affinity', resources, nodes, strict: rule.strict === 1 });
    } else out.push({ id, type: 'resource-affinity', affinity: rule.affinity, resources });
  }
  return out;
}

/** Added to a compiled priority (≥ −1: the other nodes of a non-strict rule) to make it ≥ 0. */
const COMPILED_PRIORITY_OFFSET = 1;

/**
 * The rules as HA compiles them (`compileRules` of `@poise/rules`), which keep no rule ids:
 * one node-affinity rule per distinct compiled node list (`node-affinity-<first sid>`; a
 * non-strict rule is compiled with every other node at priority −1, so every list is strict
 * here and means the same; priorities are raised by 1 so that they are ≥ 0, as a plan input's
 * must be: only their order counts), one positive rule per connected group of positive pairs
 * (`positive-<first sid>`) and one negative rule per pair (`negative-<sid>-<sid>`). Sids in
 * byte order; `onlyResources` (when given) drops everything about other sids.
 */
export function rulesFromCompiled(compiled: CompiledRules, onlyResources?: ReadonlySet<string>): PlanRule[] {
  const keep = (sid: string) => onlyResources === undefined || onlyResources.has(sid);
  const out: PlanRule[] = [];
  const lists = new Map<object, string[]>();
  for (const sid of sortNames(Object.keys(compiled['node-affinity']))) {
    if (!keep(sid)) continue;
    const nodes = compiled['node-affinity'][sid]!.nodes;
    const list = lists.get(nodes);
    if (list) list.push(sid);
    else lists.set(nodes, [sid]);
  }
  for (const [nodes, sids] of lists) {
    const priorities = nodes as Record<string, { priority: number }>;
    out.push({
      id: `node-affinity-${sids[0]}`,
      type: 'node-affinity',
      resources: sids,
      nodes: sortNames(Object.keys(priorities)).map((node) => ({
        node,
        priority: priorities[node]!.priority + COMPILED_PRIORITY_OFFSET,
      })),
      strict: true,
    });
  }
  const positive = compiled['resource-affinity'].positive;
  const seen = new Set<string>();
  for (const sid of sortNames(Object.keys(positive))) {
    if (seen.has(sid) || !keep(sid)) continue;
    const group: string[] = [];
    const stack = [sid];
    seen.add(sid);
    while (stack.length > 0) {
      const s = stack.pop()!;
      group.push(s);
      for (const p of Object.keys(positive[s] ?? {})) {
        if (!seen.has(p) && keep(p)) {
          seen.add(p);
          stack.push(p);
        }
      }
    }
    if (group.length > 1)
      out.push({
        id: `positive-${sortNames(group)[0]}`,
        type: 'resource-affinity',
        affinity: 'positive',
        resources: sortNames(group),
      });
  }
  const negative = compiled['resource-affinity'].negative;
  for (const a of sortNames(Object.keys(negative))) {
    if (!keep(a)) continue;
    for (const b of sortNames(Object.keys(negative[a] ?? {}))) {
      if (b <= a || !keep(b)) continue;
      out.push({ id: `negative-${a}-${b}`, type: 'resource-affinity', affinity: 'negative', resources: [a, b] });
    }
  }
  return out;
}
