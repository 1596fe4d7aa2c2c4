/**
 * Records what the hindsight oracle (`regret.ts`) needs of a simulator run: each guest's node at
 * the start, and at the end the guests' nodes and use, the nodes' capacity, state and measured
 * use, and the case's HA rules. Read from the Simulation API and the case, nothing from the log.
 */
import { judgeMigratability } from '@poise/policy-pressure';
import { rulesFromConfig, type PlanRule } from '@poise/plan';
import { migrateGroupsToRules, parseGroupsConfig, parseRulesConfig } from '@poise/rules';
import type { CaseInput, ClusterView } from '@poise/sim';
import { PLAN_CRS_KEY } from './balance-summary';
import type { PlacementGuest, PlacementNode, TracePlacement } from './regret';

/** Each configured service's node (sid → node), from a view: the placement at the start. */
export function servicePlacement(view: ClusterView): Map<string, string> {
  return new Map([...view.services].map(([sid, s]) => [sid, s.node]));
}

const measure = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;

/**
 * The placement record of a run that ended in `view`, started with `initial`: the guests that
 * run at the end (their use as the node measurement counts it: cpu, memhost when given else
 * mem), migratability from the case's `guest_config`, and the rules (groups migrated to rules
 * as the HA manager does) restricted to those guests and the case's nodes.
 */
export function recordPlacement(
  view: ClusterView,
  initial: ReadonlyMap<string, string>,
  input: Pick<CaseInput, 'rulesConfig' | 'groups' | 'serviceConfig' | 'guestConfig' | 'datacenterCfg'>,
): TracePlacement {
  const nodes: PlacementNode[] = [...view.nodes].map(([name, n]) => {
    const stats = view.nodeStats.get(name)!;
    return {
      name,
      cpuCores: stats.maxcpu,
      memBytes: stats.maxmem,
      online: n.online,
      maintenance: view.lrmModes.get(name) === 'maintenance',
      cpu: stats.cpu,
      mem: stats.mem,
    };
  });
  const guests: PlacementGuest[] = [];
  for (const [sid, s] of view.services) {
    if (!s.running || !s.dynamicStats) continue;
    const cpu = measure(s.dynamicStats.cpu);
    const mem = measure(s.dynamicStats.memhost) ?? measure(s.dynamicStats.mem);
    if (cpu === undefined || mem === undefined) continue;
    const config = input.guestConfig?.[sid];
    const verdict = config ? judgeMigratability(config, { kind: sid.startsWith('ct:') ? 'ct' : 'vm' }) : undefined;
    const blocker = verdict && !verdict.migratable ? verdict.blockers[0] : undefined;
    guests.push({
      sid,
      initial: initial.get(sid) ?? s.node,
      final: s.node,
      cpu,
      mem,
      migratable: blocker === undefined && s.lock === undefined,
      ...(blocker
        ? { reason: `has a ${blocker.message}` }
        : s.lock !== undefined
          ? { reason: `is locked (${s.lock})` }
          : {}),
      ignored: s.state === 'ignored',
    });
  }
  const plan = (input.datacenterCfg.crs as Record<string, unknown> | undefined)?.[PLAN_CRS_KEY];
  const balancer = plan === 1 || plan === '1' || plan === true ? 'planned' : 'greedy';
  return {
    balancer,
    nodes,
    guests,
    rules: caseRules(
      input,
      new Set(guests.filter((g) => !g.ignored).map((g) => g.sid)),
      new Set(nodes.map((n) => n.name)),
    ),
  };
}

/** The case's enabled rules in `@poise/plan` form, kept to `sids` and `nodes` (a rule left with too few resources is dropped). */
function caseRules(
  input: Pick<CaseInput, 'rulesConfig' | 'groups' | 'serviceConfig'>,
  sids: ReadonlySet<string>,
  nodes: ReadonlySet<string>,
): PlanRule[] {
  const config = parseRulesConfig(input.rulesConfig, 'rules_config').config;
  migrateGroupsToRules(config, parseGroupsConfig(input.groups, 'groups').config, input.serviceConfig);
  const out: PlanRule[] = [];
  for (const rule of rulesFromConfig(config)) {
    const resources = rule.resources.filter((r) => sids.has(r));
    if (rule.type === 'node-affinity') {
      const listed = rule.nodes.filter((n) => nodes.has(n.node));
      if (resources.length > 0 && listed.length > 0) out.push({ ...rule, resources, nodes: listed });
    } else if (resources.length > 1) out.push({ ...rule, resources });
  }
  return out;
}
