import type { ServiceConfigEntry, ServiceStatus, Snapshot } from '@poise/env';
import type { RulesView } from './rules-state';
import type { OnlineNodeUsage } from './scheduler';
import { perlTrue } from './tools';
import { applyNegativeResourceAffinity, applyPositiveResourceAffinity, isAllowedOnNode } from '@poise/rules';
import { compareNames } from '@poise/usage';

/**
 * `none`: stay where possible; `best-score`: the best node by score; `try-next`: the node
 * after the current one in score order, skipping nodes where the start already failed.
 */
export type NodePreference = 'none' | 'best-score' | 'try-next';

/** No failed nodes (one shared empty list, not a new one per service and round). */
const NO_NODES: readonly string[] = Object.freeze([]);

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
  cd: Snapshot<ServiceConfigEntry>,
  sd: ServiceStatus,
  preference: NodePreference,
): string | undefined {
  const current = sd.node;
  const tried: readonly string[] = sd.failed_nodes ?? NO_NODES;
  const maintenanceFallback = sd.maintenance_node;

  // The common case of a large cluster, without building node sets: a service no rule names,
  // asked whether it stays. All online nodes are allowed and preferred, and no partner
  // narrows them, so the steps below reduce to these three checks.
  if (preference === 'none' && rules.unconstrained(sid)) {
    if (!perlTrue(cd.failback) && usage.containsNode(current)) return current;
    if (maintenanceFallback !== undefined && usage.containsNode(maintenanceFallback)) return maintenanceFallback;
    if (usage.containsNode(current)) return current;
  }

  const online = usage.listNodes();
  const { allowed, pri } = rules.nodeAffinity(sid, online);
  if (pri.size === 0) return undefined;

  const { together, separate } = rules.resourceAffinity(sid, ss);

  // stay on the current node if possible (avoids needless migrations)
  if (
    preference === 'none' &&
    !perlTrue(cd.failback) &&
    allowed.has(current) &&
    isAllowedOnNode(together, separate, current)
  ) {
    return current;
  }

  if (preference === 'try-next') for (const node of tried) pri.delete(node);

  applyNegativeResourceAffinity(separate, pri);
  applyPositiveResourceAffinity(together, pri);

  if (maintenanceFallback !== undefined && pri.has(maintenanceFallback)) return maintenanceFallback;
  if (preference === 'none' && pri.has(current)) return current;

  const scores = usage.scoreNodesToStartService(sid);
  const nodes = [...pri].sort((a, b) => {
    const d = (scores.get(a) ?? 0) - (scores.get(b) ?? 0);
    return d !== 0 ? d : compareNames(a, b);
  });
  if (preference === 'try-next') {
    const found = nodes.indexOf(current);
    if (found >= 0 && found < nodes.length - 1) return nodes[found + 1];
    return nodes[0];
  }
  return nodes[0];
}
