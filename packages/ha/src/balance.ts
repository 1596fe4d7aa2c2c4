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
 */
export function loadBalance(manager: Manager, state: BalancerState): void {
  const crs = manager.crs;
  const usage = manager.usage;
  if (!crs.autoRebalance || !(usage instanceof CrsUsage)) return;
  const env = manager.env;
  const percent = manager.options.profile !== 'pve-5.2.0';
  const method = crs.method;
  if (method !== 'bruteforce' && method !== 'topsis') return; // the reference silently does nothing

  const pipeline = referencePipeline({
    threshold: percent ? crs.threshold / 100 : crs.threshold,
    holdRounds: crs.holdRounds,
    margin: percent ? crs.margin / 100 : crs.margin,
    method,
  });
  let imbalance: number | undefined;
  const ctx: BalanceContext = {
    now: env.getTime(),
    motionInFlight: motionInFlight(manager),
    imbalance: () => (imbalance ??= usage.calculateNodeImbalance()),
    candidates: () => migrationCandidates(manager),
    score: (candidates, m, limit) => {
      try {
        return usage.scoreBestBalancingMigrations(candidates, m, limit);
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
  const before = formatImbalance(decision.imbalanceBefore, manager.options.profile);
  const after = formatImbalance(decision.imbalanceAfter, manager.options.profile);
  env.log('info', `auto rebalance - ${task} ${sid} to ${target} (expected change for imbalance from ${before} to ${after})`);
  manager.queueResourceMotion(`${task} ${sid} ${target}`, task, sid, target);
}
