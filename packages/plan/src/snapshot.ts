import type { ClusterSnapshot } from '@poise/env';
import type { CapacityPolicy, PlanGuest, PlanInput, PlanNode, PlanRule, PlanWeights } from './types';
import { compareNames } from '@poise/usage';

/**
 * What the planner reads of a cluster snapshot (`ClusterSnapshot` of `@poise/env`, the one
 * poise-manager reads each round): its nodes, guests and HA rules.
 */
export type PlanSnapshot = Pick<ClusterSnapshot, 'nodes' | 'guests' | 'rules'>;

/** Options of {@link planInputFromSnapshot}. */
export interface SnapshotOptions {
  /**
   * What a guest weighs: `measured` (default) its cpu and memory in use (memhost when known),
   * as the `dynamic` scheduler; `configured` its assigned cores and memory, as `static`.
   */
  readonly usage?: 'measured' | 'configured' | undefined;
  readonly capacity?: CapacityPolicy | undefined;
  readonly weights?: PlanWeights | undefined;
  /** Why a guest cannot be migrated (e.g. the policy's migratability check), or `undefined` when it can. */
  readonly unmigratable?: ((sid: string) => string | undefined) | undefined;
}

/**
 * Builds a plan input from a cluster snapshot (the thin layer under `poise-manager plan`):
 *
 * - nodes: cores and memory, online (a node in maintenance is online and in maintenance; a
 *   node without cores or memory, as PVE reports an offline one, is offline: it takes nothing),
 *   and as base load what the measured use has beyond the listed guests (measured usage only);
 * - guests: HA resources (`ha`) and the others; stopped guests weigh nothing (measured usage);
 *   a locked guest or a template cannot move (the reason names it), nor one
 *   `options.unmigratable` names; HA resources requested `ignored` are ignored;
 * - rules: as given, without the resources and nodes the snapshot does not have (each one left
 *   out is reported in `problems`, never an exception: a rule may name a guest removed since).
 */
export function planInputFromSnapshot(
  snapshot: PlanSnapshot,
  options: SnapshotOptions = {},
): { input: PlanInput; problems: string[] } {
  const measured = (options.usage ?? 'measured') === 'measured';
  const problems: string[] = [];
  const nodeNames = new Set(snapshot.nodes.map((n) => n.name));
  const guests: PlanGuest[] = [];
  const used = new Map<string, { cpu: number; mem: number }>();
  for (const g of [...snapshot.guests].sort((a, b) => compareNames(a.sid, b.sid))) {
    if (!nodeNames.has(g.node)) {
      problems.push(`guest '${g.sid}' is on '${g.node}', which is not a node of the snapshot: left out`);
      continue;
    }
    const s = g.stats;
    let cpu = measured ? (g.running ? s.cpu : 0) : s.maxcpu;
    if (cpu > s.maxcpu) {
      // a share of the assigned cores, measured a little over them at times
      problems.push(`guest '${g.sid}' uses ${cpu} cores, more than its ${s.maxcpu} assigned: counted as ${s.maxcpu}`);
      cpu = s.maxcpu;
    }
    const mem = measured ? (g.running ? (s.memhost ?? s.mem) : 0) : s.maxmem;
    const reason =
      g.lock !== undefined ? `is locked (${g.lock})` : g.template ? 'is a template' : options.unmigratable?.(g.sid);
    guests.push({
      id: g.sid,
      kind: g.type,
      node: g.node,
      ha: g.ha !== undefined,
      cpu,
      cores: s.maxcpu,
      mem,
      ...(reason === undefined ? {} : { migratable: false, reason }),
      ...(g.ha?.requestState === 'ignored' ? { ignored: true } : {}),
    });
    const sum = used.get(g.node) ?? { cpu: 0, mem: 0 };
    used.set(g.node, { cpu: sum.cpu + cpu, mem: sum.mem + mem });
  }
  const nodes: PlanNode[] = snapshot.nodes.map((n) => {
    const sum = used.get(n.name) ?? { cpu: 0, mem: 0 };
    // a node without sizes (PVE: maxcpu 0 when it is offline) takes nothing, as the daemon's model leaves it out
    const online = (n.online || n.maintenance) && n.maxcpu > 0 && n.maxmem > 0;
    return {
      name: n.name,
      cpuCores: n.maxcpu,
      memBytes: n.maxmem,
      online,
      maintenance: n.maintenance,
      ...(measured && online
        ? {
            baseCpu: Math.min(n.maxcpu, Math.max(0, n.cpu - sum.cpu)),
            baseMem: Math.min(n.maxmem, Math.max(0, n.mem - sum.mem)),
          }
        : {}),
    };
  });
  const guestIds = new Set(guests.map((g) => g.id));
  const rules: PlanRule[] = [];
  for (const rule of snapshot.rules) {
    const resources = rule.resources.filter((sid) => {
      if (guestIds.has(sid)) return true;
      problems.push(`rule '${rule.id}': resource '${sid}' is not a guest of the snapshot: left out of the rule`);
      return false;
    });
    if (resources.length === 0) continue;
    if (rule.type === 'node-affinity') {
      const listed = rule.nodes.filter((n) => {
        if (nodeNames.has(n.node)) return true;
        problems.push(`rule '${rule.id}': node '${n.node}' is not a node of the snapshot: left out of the rule`);
        return false;
      });
      if (listed.length === 0) {
        problems.push(`rule '${rule.id}' lists no node of the snapshot: left out`);
        continue;
      }
      rules.push({
        id: rule.id,
        type: 'node-affinity',
        resources,
        nodes: listed.map((n) => ({ node: n.node, priority: n.priority })),
        strict: rule.strict,
      });
    } else rules.push({ id: rule.id, type: 'resource-affinity', affinity: rule.affinity, resources });
  }
  return {
    input: {
      nodes,
      guests,
      rules,
      ...(options.capacity ? { capacity: options.capacity } : {}),
      ...(options.weights ? { weights: options.weights } : {}),
    },
    problems,
  };
}
