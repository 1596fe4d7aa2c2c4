import { referencePipeline, type BalanceContext, type MigrationCandidate, type PipelineState } from '@poise/policy';
import type { Manager } from './manager';
import { applyNegativeResourceAffinity, getActiveStationaryResourceBundles } from '@poise/rules';
import { CrsUsage } from './usage-model';
import { formatFixed } from './format';
import { errorMessage } from './crm';
import { byteCompare } from './tools';

/** The balancer's state across rounds; it lives as long as the manager (not persisted). */
export interface BalancerState {
  pipeline: PipelineState;
}

export function initialBalancerState(): BalancerState {
  return { pipeline: {} };
}

/** Whether any service is moving or has a move queued. */
function motionInFlight(manager: Manager): boolean {
  for (const sd of Object.values(manager.ss)) {
    if (sd.state === 'migrate' || sd.state === 'relocate') return true;
    const cmd = sd.cmd?.[0];
    if (cmd === 'migrate' || cmd === 'relocate') return true;
  }
  return false;
}

/**
 * Movable bundles (started, co-located, positively affine services with no member moving),
 * each with the leader's highest-priority allowed nodes minus nodes of its negative partners
 * and minus its own node.
 */
function migrationCandidates(manager: Manager): MigrationCandidate[] {
  const view = manager.rules.view;
  const ss = manager.ss;
  const online = manager.usage.listNodes();
  const bundles = getActiveStationaryResourceBundles(
    view.compiled,
    ss as Parameters<typeof getActiveStationaryResourceBundles>[1],
  );
  const candidates: MigrationCandidate[] = [];
  for (const leader of [...bundles.keys()].sort(byteCompare)) {
    const sd = ss[leader]!;
    const { pri } = view.nodeAffinity(leader, online);
    const { separate } = view.resourceAffinity(leader, ss);
    applyNegativeResourceAffinity(separate, pri);
    pri.delete(sd.node);
    if (pri.size === 0) continue;
    candidates.push({ leader, resources: [...bundles.get(leader)!].sort(byteCompare), targets: [...pri].sort(byteCompare) });
  }
  return candidates;
}

/** Formats an imbalance for the log: `%.2f` (pve-5.2.0) or percent with one decimal (pve-9.2). */
export function formatImbalance(value: number, profile: string): string {
  return profile === 'pve-5.2.0' ? formatFixed(value, 2) : `${formatFixed(value * 100, 1)}%`;
}

/**
 * Auto-rebalance (spec §3.7): runs the balancer pipeline configured from the `crs` settings
 * and queues the chosen motion through the same path as a user's migrate command.
 *
 * As the reference's `load_balance`: nothing happens (the hold counter included) unless
 * balancing is enabled and the configured mode is static or dynamic, or while a motion is in
 * flight. Otherwise the imbalance is measured and the hold counter counts or resets, also when
 * the method is unknown (then no move is scored, silently) and when the usage fell back to
 * basic because the static/dynamic init failed (the basic usage has no load, so its imbalance
 * is 0 and the counter resets).
 *
 * A service that is not part of the usage (no or invalid stats) cannot be scored: the
 * reference then fails the whole scoring every round (`unable to score best balancing
 * migration - …`), which `pve-5.2.0` keeps; under `pve-9.2` bundles with such a member are
 * not candidates, and the others still are.
 */
export function loadBalance(manager: Manager, state: BalancerState): void {
  const crs = manager.crs;
  if (!crs.autoRebalance) return;
  if (crs.scheduler !== 'static' && crs.scheduler !== 'dynamic') return;
  const usage = manager.usage;
  const crsUsage = usage instanceof CrsUsage ? usage : undefined;
  const env = manager.env;
  const profile = manager.options.profile;
  const percent = profile !== 'pve-5.2.0';
  const knownMethod = crs.method === 'bruteforce' || crs.method === 'topsis';

  const pipeline = referencePipeline({
    threshold: percent ? crs.threshold / 100 : crs.threshold,
    holdRounds: crs.holdRounds,
    margin: percent ? crs.margin / 100 : crs.margin,
    method: knownMethod ? (crs.method as 'bruteforce' | 'topsis') : 'bruteforce',
  });
  let imbalance: number | undefined;
  const ctx: BalanceContext = {
    now: env.getTime(),
    motionInFlight: motionInFlight(manager),
    imbalance: () => (imbalance ??= crsUsage ? crsUsage.calculateNodeImbalance() : 0),
    candidates: () => {
      const all = migrationCandidates(manager);
      if (!percent || !crsUsage) return all;
      return all.filter((c) => c.resources.every((sid) => crsUsage.containsService(sid)));
    },
    score: (candidates, m, limit) => {
      // an unknown method scores nothing, silently (the reference returns without a word)
      if (!knownMethod || !crsUsage) return [];
      try {
        return crsUsage.scoreBestBalancingMigrations(candidates, m, limit);
      } catch (err) {
        env.log('warning', `unable to score best balancing migration - ${errorMessage(err)}`);
        return [];
      }
    },
  };
  const { decision, state: next } = pipeline.run(ctx, state.pipeline);
  state.pipeline = next;
  if (decision.action !== 'move') return;

  const { sid, target } = decision.migration;
  const task = sid.startsWith('vm:') ? 'migrate' : 'relocate';
  const before = formatImbalance(decision.imbalanceBefore, profile);
  const after = formatImbalance(decision.imbalanceAfter, profile);
  env.log('info', `auto rebalance - ${task} ${sid} to ${target} (expected change for imbalance from ${before} to ${after})`);
  manager.queueResourceMotion(`${task} ${sid} ${target}`, task, sid, target);
}
