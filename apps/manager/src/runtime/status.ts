import type { ClusterSnapshot, MotionRecord } from '../cluster/port';
import type { DaemonState } from './state';
import type { DaemonContext } from './context';
import { MOTION_LIMIT_WINDOW_SECONDS } from './follower';
import type { RoundReport } from './report';
import { describeMotion } from './text';

/** What the status is made of, from the daemon's concerns. */
export interface StatusInput {
  readonly active: boolean;
  readonly clusterBalancer: { readonly on: boolean | undefined; readonly settings: ClusterSnapshot['crs']['settings'] };
  readonly rounds: number;
  readonly lastReport: RoundReport | undefined;
  readonly state: DaemonState;
  /** The node conditions and whether the cluster is settled (`ClusterWatch.status`). */
  readonly cluster: Record<string, unknown>;
  /** Motions paused for a fault of the credentials, by kind. */
  readonly paused: Record<string, unknown>;
}

/** The JSON of `/status`. */
export function statusJson(ctx: DaemonContext, input: StatusInput): Record<string, unknown> {
  const now = ctx.now();
  const config = ctx.config;
  const policy = ctx.policy;
  const balancerOn = input.clusterBalancer.on;
  const last = input.lastReport;
  return {
    version: ctx.version,
    env: config.env,
    mode: config.mode,
    active: input.active,
    clusterAutoRebalance: balancerOn ?? null,
    notice:
      balancerOn === true
        ? "the cluster's own ha-auto-rebalance is on: poise refuses to move HA resources"
        : input.cluster.settled === false
          ? 'the cluster is not settled (a node failed or came back, or HA is recovering): no motion is requested'
          : config.mode === 'observe'
            ? 'observe mode: nothing is moved'
            : null,
    clusterBalancer: balancerOn === true ? (input.clusterBalancer.settings ?? null) : null,
    policy: policy.description,
    policyProblems: policy.problems,
    policySources: policy.sources,
    rounds: input.rounds,
    lastRound: last ? { round: last.round, outcome: last.outcome, reason: last.reason, message: last.message } : null,
    motionInFlight: input.state.motion,
    motionsLastHour: input.state.motionsIssuedAt.filter((t) => now - t < MOTION_LIMIT_WINDOW_SECONDS).length,
    recentOutcomes: input.state.outcomes.slice(-5),
    cluster: input.cluster,
    pausedMotions: input.paused,
  };
}

/** `; motions this run: 3 requested, 2 succeeded, 1 failed, 4 refused for the credentials (…)` (or what observe mode would have done), for the closing line. */
export function runSummary(ctx: DaemonContext, inFlight: MotionRecord | null): string {
  const c = ctx.runCounts;
  if (ctx.config.mode === 'observe' && c.requested === 0) {
    return c.wouldMove > 0
      ? `; observe mode: nothing moved, ${c.wouldMove} ${c.wouldMove === 1 ? 'round' : 'rounds'} would have requested a motion`
      : '; observe mode: nothing moved';
  }
  const still = inFlight ? `, 1 still in flight (${describeMotion(inFlight)})` : '';
  const forbidden =
    c.forbidden > 0 ? `, ${c.forbidden} refused for the credentials (${c.forbiddenFault ?? 'http 403'})` : '';
  return `; motions this run: ${c.requested} requested, ${c.succeeded} succeeded, ${c.failed} failed${forbidden}${still}`;
}
