import type { ServiceConfigEntry, ServiceStatus } from '@poise/env';
import type { RulesView } from './rules-state';
import type { OnlineNodeUsage } from './scheduler';
import { byteCompare, perlTrue } from './tools';

/**
 * `none`: stay where possible; `best-score`: the best node by score; `try-next`: the node
 * after the current one in score order, skipping nodes where the start already failed.
 */
export type NodePreference = 'none' | 'best-score' | 'try-next';

/**
 * Chooses the node a service should run on (spec §3.6): node affinity, staying put without
 * failback, failed nodes, resource affinity, the maintenance fallback, then the scheduler's
 * scores (lower is better, ties by node name). Undefined when no node qualifies.
 */
export function selectServiceNode(
  rules: RulesView,
  usage: OnlineNodeUsage,
  ss: Record<string, ServiceStatus>,
  sid: string,
  cd: ServiceConfigEntry,
  sd: ServiceStatus,
  preference: NodePreference,
): string | undefined {
  const current = sd.node;
  const tried = sd.failed_nodes ?? [];
  const maintenanceFallback = sd.maintenance_node;
  const online = usage.listNodes();
  const { allowed, pri } = rules.nodeAffinity(sid, online);
  if (pri.size === 0) return undefined;

  const { together, separate } = rules.resourceAffinity(sid, ss);

  // stay on the current node if possible (avoids needless migrations)
  if (
    preference === 'none' &&
    !perlTrue(cd.failback) &&
    allowed.has(current) &&
    ((together.get(current) ?? 0) > 0 || !((separate.get(current) ?? 0) > 0))
  ) {
    return current;
  }

  if (preference === 'try-next') for (const node of tried) pri.delete(node);

  for (const node of separate.keys()) pri.delete(node);
  applyPositive(together, pri);

  if (maintenanceFallback !== undefined && pri.has(maintenanceFallback)) return maintenanceFallback;
  if (preference === 'none' && pri.has(current)) return current;

  const scores = usage.scoreNodesToStartService(sid);
  const nodes = [...pri].sort((a, b) => {
    const d = (scores[a] ?? 0) - (scores[b] ?? 0);
    return d !== 0 ? d : byteCompare(a, b);
  });
  if (preference === 'try-next') {
    const found = nodes.indexOf(current);
    if (found >= 0 && found < nodes.length - 1) return nodes[found + 1];
    return nodes[0];
  }
  return nodes[0];
}

/** Keeps only the node most positive partners are on (ties: node name), if any is allowed. */
function applyPositive(together: Map<string, number>, pri: Set<string>): void {
  const candidates = [...together.keys()].filter((n) => pri.has(n)).sort(byteCompare);
  if (candidates.length === 0) return;
  const majority = candidates
    .map((n) => ({ n, c: together.get(n)! }))
    .sort((a, b) => b.c - a.c)[0]!.n;
  for (const n of [...pri]) if (n !== majority) pri.delete(n);
}
