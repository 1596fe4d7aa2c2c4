import type { Env, ServiceStatus } from '@poise/env';
import {
  percentReasonFormat,
  type GuestConfig,
  type BalanceCandidate,
  type BalanceContext,
  type Decision,
  type ScoredMigration,
} from '@poise/policy';
import type { BalancingCandidate } from '@poise/rules';
import { CrsUsage } from './usage-model';
import { formatFixed } from './format';
import { errorMessage } from './tools';
import { BalancerHost, planInputOf } from './balance-host';
import type { CrsSettings } from './crs';
import type { RulesView } from './rules-state';
import type { OnlineNodeUsage } from './scheduler';

export { BalancerHost, type BalancerEvent } from './balance-host';

/**
 * What the balancer reads from the manager's round and the one thing it does to it (queue a
 * motion). The `Manager` is one; the balancer depends on this view, not on the manager's
 * module, so the two do not import each other.
 */
export interface BalancingManager {
  readonly env: Env;
  readonly options: { readonly profile: 'pve-5.2.0' | 'pve-9.2' };
  readonly ss: Readonly<Record<string, ServiceStatus>>;
  readonly crs: CrsSettings;
  readonly usage: OnlineNodeUsage;
  readonly rules: { readonly view: Pick<RulesView, 'compiled'> };
  /** The entries of {@link ss} (any order; the same objects), without enumerating the record. */
  statusEntries(): readonly Readonly<ServiceStatus>[];
  /** Queues a migrate/relocate as a user's command would; false when the manager refused it. */
  queueResourceMotion(cmd: string, task: string, sid: string, target: string): boolean;
}

/** Whether any service is moving or has a move queued. */
function motionInFlight(manager: BalancingManager): boolean {
  for (const sd of manager.statusEntries()) {
    if (sd.state === 'migrate' || sd.state === 'relocate') return true;
    const cmd = sd.cmd?.[0];
    if (cmd === 'migrate' || cmd === 'relocate') return true;
  }
  return false;
}

/**
 * The balancer's candidates: `@poise/rules`' {@link getBalancingCandidates} (movable bundles:
 * started, co-located, positively affine services with no member moving; as targets the
 * leader's highest-priority allowed nodes minus nodes of its negative partners and minus its
 * own node), on the nodes of the usage, the same query poise-manager asks. Each with its source,
 * the node the bundle runs on.
 */
function migrationCandidates(
  manager: BalancingManager,
  host: BalancerHost,
): Array<Readonly<BalancingCandidate> & { source: string }> {
  const ss = manager.ss;
  return host.candidates(manager.rules.view.compiled, ss, manager.usage.listNodes()).map((c) => ({
    ...c,
    source: ss[c.leader]!.node,
  }));
}

/**
 * The `pve-9.2` rule the rules query knows nothing of, since it is about the usage: a bundle
 * with a member the usage left out (no or invalid stats) cannot be scored, so it is not a
 * candidate, and the other bundles still are (the reference offers it, and then every round's
 * scoring fails: `pve-5.2.0` keeps that). Each remaining candidate carries the memory its move
 * copies (`candidateFacts` of the policy's host kit).
 */
export function scorableCandidates(
  candidates: ReadonlyArray<Readonly<BalancingCandidate> & { source: string }>,
  usage: CrsUsage,
): BalanceCandidate[] {
  return usage.context().describe(candidates.filter((c) => c.resources.every((sid) => usage.containsService(sid))));
}

/** Formats an imbalance for the log: `%.2f` (pve-5.2.0) or percent with one decimal (pve-9.2). */
export function formatImbalance(value: number, profile: string): string {
  return profile === 'pve-5.2.0' ? formatFixed(value, 2) : `${formatFixed(value * 100, 1)}%`;
}

/**
 * How the balancer's reasons and notices print imbalances under `pve-9.2`, whose keys are in
 * percent: `imbalance 27.4% at or below threshold 30.0%`, `relative improvement -1.2% below
 * margin 10.0%`, `improvement 18.4 pp`, rounded like the move lines ({@link formatImbalance}).
 * `pve-5.2.0` keeps the policy's default (fractions), and logs none of these lines anyway.
 */
const PERCENT_REASONS = percentReasonFormat(formatFixed);

/**
 * Auto-rebalance (spec §3.7): runs the balancer pipeline configured from the `crs` settings
 * (the reference stages, plus the variant stages of `@poise/policy-stable` and
 * `@poise/policy-pressure` that the `pve-9.2` keys turn on) and queues the chosen motion
 * through the same path as a user's migrate command.
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
 *
 * With a variant key set (`crs.variant.active`), the balancer explains itself: a decision not
 * to act is logged (`auto rebalance - <reason>`) when its key differs from the last one logged
 * (never the quiet hold rounds, never while a motion is in flight; forgotten after a move), and
 * every notice is logged once (`auto rebalance - <message>`, at its severity). With every key
 * at its default nothing of this is logged: the reference's log, byte for byte.
 */
export function loadBalance(manager: BalancingManager, host: BalancerHost): void {
  const crs = manager.crs;
  if (!crs.autoRebalance) return;
  if (crs.scheduler !== 'static' && crs.scheduler !== 'dynamic') return;
  const usage = manager.usage;
  const crsUsage = usage instanceof CrsUsage ? usage : undefined;
  const env = manager.env;
  const profile = manager.options.profile;
  const percent = profile !== 'pve-5.2.0';
  const knownMethod = crs.method === 'bruteforce' || crs.method === 'topsis';
  const now = env.getTime();

  host.settle(manager.ss, now);
  // without a CRS usage (the static/dynamic init failed and the usage fell back to basic) there
  // is no telemetry to host the variant stages on: the reference stages judge the round (the
  // basic usage has no load, imbalance 0), and the variant stages keep their state for later
  const settings = crsUsage ? crs : { ...crs, variant: host.registry.off };
  const pipeline = host.pipeline(
    settings,
    percent,
    knownMethod ? (crs.method as 'bruteforce' | 'topsis') : 'bruteforce',
  );
  let imbalance: number | undefined;
  /**
   * Scoring as the reference does it: an unknown method scores nothing, silently (the
   * reference returns without a word); a scoring error is logged and scores nothing.
   */
  const scoreSafely = (score: () => ScoredMigration[]): ScoredMigration[] => {
    if (!knownMethod || !crsUsage) return [];
    try {
      return score();
    } catch (err) {
      env.log('warning', `unable to score best balancing migration - ${errorMessage(err)}`);
      return [];
    }
  };
  const guestConfig = (sid: string) => env.getGuestConfig?.(sid) as GuestConfig | undefined;
  // the usage model's members of the context (the policy's host kit): telemetry, adjusted views
  const kit = crsUsage?.context({ guardScore: scoreSafely });
  const ctx: BalanceContext = {
    now,
    motionInFlight: motionInFlight(manager),
    outcomes: host.takeOutcomes(),
    imbalance: () => (imbalance ??= kit ? kit.imbalance() : 0),
    candidates: () => {
      const all = migrationCandidates(manager, host);
      return percent && crsUsage ? scorableCandidates(all, crsUsage) : all;
    },
    score: (candidates, m, limit) => (kit ? kit.score(candidates, m, limit) : []),
    ...(kit ? { nodes: kit.nodes, guests: kit.guests, adjust: kit.adjust } : {}),
    guestConfig,
    // finished migrations, when the host reports them (cost–benefit learns the link rate)
    ...(env.getMigrationTasks ? { migrationTasks: () => env.getMigrationTasks?.() ?? [] } : {}),
    ...(crsUsage && host.registry.needs(settings.variant).planInput
      ? { planInput: () => planInputOf(crsUsage, manager.rules.view.compiled) }
      : {}),
    ...(percent ? { format: PERCENT_REASONS } : {}),
  };
  const { decision, state: next } = pipeline.run(ctx, host.state);
  host.state = next;
  if (crs.variant.active) explain(manager, host, decision);
  if (decision.action !== 'move') return;

  const { sid, source, target } = decision.migration;
  const task = sid.startsWith('vm:') ? 'migrate' : 'relocate';
  const before = formatImbalance(decision.imbalanceBefore, profile);
  const after = formatImbalance(decision.imbalanceAfter, profile);
  env.log(
    'info',
    `auto rebalance - ${task} ${sid} to ${target} (expected change for imbalance from ${before} to ${after})`,
  );
  host.moved(decision, now);
  if (manager.queueResourceMotion(`${task} ${sid} ${target}`, task, sid, target)) {
    host.issued(decision.resources, source, target, now, manager.ss);
  } else {
    host.refused(decision.resources, source, target, now);
  }
}

/** Stops that are not decisions: nothing to explain (a motion in flight is a round that did not happen). */
const UNEXPLAINED_STOPS = new Set(['motion-in-flight']);

/** Logs the notices and, on change, the decision not to act (see {@link loadBalance}). */
function explain(manager: BalancingManager, host: BalancerHost, decision: Decision): void {
  const env = manager.env;
  for (const n of decision.notices)
    env.log(n.severity === 'warning' ? 'warning' : 'info', `auto rebalance - ${n.message}`);
  if (decision.action !== 'none' || decision.quiet || UNEXPLAINED_STOPS.has(decision.code)) return;
  if (decision.key === host.lastLoggedKey) return;
  host.lastLoggedKey = decision.key;
  env.log(decision.code === 'invalid-input' ? 'warning' : 'info', `auto rebalance - ${decision.reason}`);
}
