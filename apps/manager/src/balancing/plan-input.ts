import { planInputFromSnapshot, type PlanInput } from '@poise/plan';
import { judgeMigratability } from '@poise/policy-pressure';
import type { ClusterSnapshot } from '../cluster/port';
import type { ManagerConfig } from '../config/load';

// The global planner's side of the daemon: the planner's input from a snapshot of the cluster,
// used by `plan`, `drain`, `place` and the status page's plan and what-if answers.

/** The capacity a plan assumes where the command line or the request overrides the cluster's (`--cpu-overcommit-ratio`, `--memory-headroom`). */
export interface CapacityArgs {
  readonly cpuOvercommitRatio?: number;
  readonly memoryHeadroomPercent?: number;
}

/**
 * Why a guest's configuration prevents a migration, as the daemon's migratability check judges
 * it (`@poise/policy-pressure`'s `judgeMigratability` with the cluster's shared storages):
 * `cannot be migrated: local cd-rom image 'local:iso/d.iso' (ide2)`; `undefined` when it can or
 * its configuration was not read.
 */
function configBlocker(snapshot: ClusterSnapshot, sid: string): string | undefined {
  const config = snapshot.guestConfigs?.get(sid);
  if (config === undefined) return undefined;
  const verdict = judgeMigratability(config, {
    kind: sid.startsWith('ct:') ? 'ct' : 'vm',
    sharedStorage: (storage) => snapshot.storageShared?.get(storage),
  });
  return verdict.migratable ? undefined : `cannot be migrated: ${verdict.blockers.map((b) => b.message).join('; ')}`;
}

/**
 * Which guests may move, for a plan: none whose configuration prevents a migration (anywhere,
 * a drained node too); on a drained node every other one; elsewhere, what the daemon may balance.
 */
function unmigratableReason(
  snapshot: ClusterSnapshot,
  config: ManagerConfig,
  drain: readonly string[],
): (sid: string) => string | undefined {
  const bySid = new Map(snapshot.guests.map((g) => [g.sid, g]));
  return (sid) => {
    const g = bySid.get(sid);
    if (g === undefined) return undefined;
    const blocked = configBlocker(snapshot, sid);
    if (blocked !== undefined) return blocked;
    if (drain.includes(g.node)) return undefined;
    if (g.ha === undefined && !config.guests.nonHa) return 'is not an HA resource (guests.non-ha: false)';
    if (g.ha !== undefined && !g.ha.autoRebalance) return 'has auto-rebalance 0 (no balancer may move it)';
    return undefined;
  };
}

/** A plan input from a snapshot of a live or simulated cluster (usage as the cluster's scheduler mode counts it). */
export function inputFromSnapshot(
  snapshot: ClusterSnapshot,
  config: ManagerConfig,
  capacity: CapacityArgs,
  drain: readonly string[],
): { input: PlanInput; problems: string[] } {
  const built = planInputFromSnapshot(snapshot, {
    usage: snapshot.crs.ha === 'static' ? 'configured' : 'measured',
    capacity,
    unmigratable: unmigratableReason(snapshot, config, drain),
  });
  const problems = [...built.problems];
  // what the daemon calls not migratable stays where it is: say so (a drain of its node says why it cannot be done)
  for (const g of snapshot.guests) {
    const blocked = configBlocker(snapshot, g.sid);
    if (blocked !== undefined && !drain.includes(g.node)) problems.push(`${g.sid} stays on ${g.node}: it ${blocked}`);
  }
  if (!snapshot.quorate) problems.push('the cluster is not quorate: the plan is of a cluster that cannot act now');
  for (const p of snapshot.problems ?? []) problems.push(p.message);
  return { input: built.input, problems };
}
