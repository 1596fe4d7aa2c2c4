import { performance } from 'node:perf_hooks';
import {
  type BalanceContext,
  type Decision,
  type MotionOutcome as PolicyOutcome,
  type Notice,
  PIPELINE_STAGE,
  type ScoredMigration,
} from '@poise/policy';
import { compareNames } from '@poise/usage';
import { nodeFailed, TRANSITIONAL_SERVICE_STATES } from '../cluster/condition';
import { errorMessage } from '../errors';
import type { NodeNow } from './journal';
import type { LogFields } from '../log';
import {
  buildUsageModel,
  clusterMotionInFlight,
  compileSnapshotRules,
  describeLeftOut,
  migrationCandidates,
  modelWarnings,
  nonHaCandidates,
  restrictToModel,
  type UsageModel,
} from '../balancing/model';
import { balanceContext, REASON_FORMAT } from '../balancing/policy';
import type { ClusterSnapshot, PortSnapshot, SnapshotProblem } from '../cluster/port';
import type { DaemonContext } from './context';
import type { ClusterWatch } from './cluster-watch';
import type { MotionFollower } from './follower';
import type { LockGuard } from './lock-guard';
import { type PartialReport, portFailure, type RoundReport } from './report';
import { REFERENCE_STOP_CODES, SKIP_COUNTED_OUTCOMES } from './reasons';
import type { StateKeeper } from './state-keeper';
import { isStageError, StageGuard } from './stage-guard';
import { describeMotion, percent } from './text';

/** Whether a guest is in one of the transitional HA states (see `cluster/condition.ts`). */
function transitional(snapshot: ClusterSnapshot, sid: string): boolean {
  const state = snapshot.guests.find((g) => g.sid === sid)?.ha?.state;
  return state !== undefined && TRANSITIONAL_SERVICE_STATES.has(state);
}

/** A ratio of use to capacity, when both are finite and the capacity positive. */
function ratio(used: number, capacity: number): number | undefined {
  return Number.isFinite(used) && Number.isFinite(capacity) && capacity > 0 ? used / capacity : undefined;
}

/** Each node of a snapshot as the status shows it (see `NodeNow`). */
export function nodesNow(snapshot: ClusterSnapshot, model: UsageModel): NodeNow[] {
  const guests = new Map<string, { all: number; ha: number }>();
  for (const g of snapshot.guests) {
    const on = g.ha ? g.ha.state === 'started' || g.ha.state === 'migrate' || g.ha.state === 'relocate' : g.running;
    if (!on) continue;
    const count = guests.get(g.node) ?? { all: 0, ha: 0 };
    count.all++;
    if (g.ha) count.ha++;
    guests.set(g.node, count);
  }
  const finite = (x: number) => (Number.isFinite(x) ? x : undefined);
  return snapshot.nodes.map((n) => {
    const load = model.loads.get(n.name);
    return {
      name: n.name,
      condition: n.condition,
      state: nodeFailed(n.condition)
        ? 'failed'
        : n.condition === 'maintenance' || n.maintenance
          ? 'maintenance'
          : 'settled',
      balanced: load !== undefined,
      cpuCores: finite(n.cpu),
      maxCpuCores: finite(n.maxcpu),
      memBytes: finite(n.mem),
      maxMemBytes: finite(n.maxmem),
      cpu: load?.cpu ?? ratio(n.cpu, n.maxcpu),
      mem: load?.mem ?? ratio(n.mem, n.maxmem),
      load: load?.load,
      pressureCpu: n.pressure.cpuSome,
      pressureMem: n.pressure.memSome,
      guests: guests.get(n.name)?.all ?? 0,
      haResources: guests.get(n.name)?.ha ?? 0,
    };
  });
}

/**
 * After a motion changed two nodes, decisions that read node pressure wait this long at most
 * for pressure from after it (the RRD's step is 60 s, and a row is complete only once its
 * minute is over); then they go on with what there is, and say so.
 */
const TELEMETRY_WAIT_MAX_SECONDS = 180;

/**
 * One round: lock → read the cluster → follow the motion in flight → usage model → gates
 * (quorum, disarm, the cluster's own balancer) → candidates → policy pipeline → act or explain,
 * and its one line. Also what the round notices about the cluster between rounds (the
 * cluster's own balancer switched, parts that could not be read) and the node metrics.
 */

/** The reference stages whose codes {@link RoundRunner.explain} words with the daemon's own facts. */
const REFERENCE_STAGES: ReadonlySet<string> = new Set([PIPELINE_STAGE, ...Object.keys(REFERENCE_STOP_CODES)]);

export class RoundRunner {
  private roundNo = 0;
  /** The round a restored journal ended with: this run's rounds are numbered after it (see `continueAfter`). */
  private firstRound = 0;
  private clusterAutoRebalance: boolean | undefined;
  /** The cluster's own balancer settings as last read (for the status). */
  private lastCrs: ClusterSnapshot['crs']['settings'];
  private reportedProblems = new Set<string>();
  private last: RoundReport | undefined;
  private working = false;
  /**
   * The resources of poise's last motion after it ended, while HA still finishes it (a relocated
   * container in `request_start` on its target): their transitional states are poise's own.
   */
  private ending = new Set<string>();
  /** A motion ended at `since` and changed `nodes`: decisions that read pressure wait for theirs (see TELEMETRY_WAIT_MAX_SECONDS). */
  private telemetryWait: { readonly since: number; readonly nodes: readonly string[] } | undefined;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly keeper: StateKeeper,
    private readonly lock: LockGuard,
    private readonly follower: MotionFollower,
    private readonly watch: ClusterWatch,
  ) {}

  /** Whether a round is at work (its line not yet written). */
  #stageGuard: StageGuard | undefined;

  /** The policy's failing stages, and whether balancing stopped for them (see `stage-guard.ts`). */
  get stageGuard(): StageGuard {
    return (this.#stageGuard ??= new StageGuard(this.ctx));
  }

  get busy(): boolean {
    return this.working;
  }

  /** Rounds run so far (this run). */
  get rounds(): number {
    return this.roundNo - this.firstRound;
  }

  /**
   * Numbers this run's rounds after `lastRound` (the newest of a journal saved by the run
   * before), so the page's history and the log go on with the numbering. Before the first round only.
   */
  continueAfter(lastRound: number): void {
    if (this.roundNo === this.firstRound && Number.isInteger(lastRound) && lastRound >= 0)
      this.roundNo = this.firstRound = lastRound;
  }

  /** The last round's line. */
  get lastReport(): RoundReport | undefined {
    return this.last;
  }

  /** Whether the cluster's own balancer was on at the last read (`undefined` before the first). */
  get clusterBalancer(): { readonly on: boolean | undefined; readonly settings: ClusterSnapshot['crs']['settings'] } {
    return { on: this.clusterAutoRebalance, settings: this.lastCrs };
  }

  /** One round; never throws (a failure is the round's line). */
  async run(): Promise<RoundReport> {
    const started = performance.now();
    const startedAt = this.ctx.now();
    this.roundNo++;
    let partial: PartialReport;
    this.working = true;
    try {
      partial = await this.body();
    } catch (err) {
      partial = isStageError(err)
        ? this.stageGuard.failed(err, this.roundNo)
        : { outcome: 'error', reason: 'error', level: 'error', message: `round failed: ${errorMessage(err)}` };
    } finally {
      this.working = false;
    }
    const report: RoundReport = {
      round: this.roundNo,
      outcome: partial.outcome,
      reason: partial.reason,
      message: this.withOnceNote(partial),
      level: partial.level ?? (partial.outcome === 'error' ? 'warn' : 'info'),
      fields: partial.fields ?? {},
    };
    const metrics = this.ctx.metrics;
    metrics.rounds.inc();
    metrics.decisions.inc({ outcome: report.outcome });
    if (SKIP_COUNTED_OUTCOMES.has(report.outcome)) metrics.skips.inc({ reason: report.reason });
    metrics.roundDuration.observe((performance.now() - started) / 1000);
    this.last = report;
    this.ctx.journal.round(report, startedAt, this.ctx.timeText(startedAt));
    this.ctx.log.log(report.level, 'round', report.message, {
      round: report.round,
      outcome: report.outcome,
      reason: report.reason,
      ...report.fields,
    });
    return report;
  }

  private async body(): Promise<PartialReport> {
    const ctx = this.ctx;
    const now = ctx.now();
    const config = ctx.config;
    const policy = ctx.policy;

    const standby = this.lock.acquire();
    if (standby) return standby;

    let snapshot: PortSnapshot;
    try {
      snapshot = await ctx.host.port.readSnapshot({
        guestConfigs: policy.needs.guestConfigs,
        nonHa: config.guests.nonHa,
        ...(policy.needs.migrationTasks ? { migrationTasks: true } : {}),
      });
    } catch (err) {
      return portFailure(ctx, err, 'reading the cluster');
    }
    this.noteClusterAutoRebalance(snapshot);
    const inFlight = this.keeper.state.motion;
    this.ending = new Set([...this.ending].filter((sid) => transitional(snapshot, sid)));
    this.watch.observe(snapshot, new Set([...(inFlight?.resources ?? []), ...this.ending]), now);

    let endedNow = false;
    if (inFlight) {
      let ended;
      try {
        ended = await this.follower.follow(inFlight, snapshot, now);
      } catch (err) {
        return portFailure(ctx, err, `following ${describeMotion(inFlight)}`);
      }
      // the telemetry the motion changed is read again before the next decision
      const refresh = ctx.host.port.refreshTelemetry?.bind(ctx.host.port);
      if (ended !== undefined) this.ending = new Set(inFlight.resources);
      if (ended !== undefined && refresh !== undefined) {
        const nodes = [inFlight.source, inFlight.target];
        refresh(nodes, now);
        this.telemetryWait = { since: now, nodes };
        endedNow = true;
      }
    }
    // motions paused for a privilege: asked for it once a round (GET /access/permissions)
    await this.follower.checkPauses(now);

    const model = buildUsageModel(snapshot, { memhost: policy.needs.memhost });
    const rules = compileSnapshotRules(snapshot);
    this.reportProblems([
      ...(snapshot.problems ?? []),
      ...[...rules.dropped, ...model.problems].map((message) => ({ message })),
    ]);
    // said each round they last: a value out of range keeps the view partial
    for (const line of modelWarnings(model)) ctx.log.warn('cluster', line);
    const imbalance = model.nodes.length > 0 ? model.usage.nodeImbalance() : undefined;
    this.exportNodes(snapshot, model, imbalance);
    const fields: LogFields = { imbalance: imbalance ?? null };

    if (!snapshot.quorate) {
      const why = snapshot.quorumUnknown ? ' (the node that answered could not check its quorum)' : '';
      return {
        outcome: 'skip',
        reason: 'not-quorate',
        message: `the cluster is not quorate${why}: nothing is balanced`,
        fields,
      };
    }
    if (snapshot.haDisarmed)
      return { outcome: 'skip', reason: 'ha-disarmed', message: 'HA is disarmed: nothing is balanced', fields };
    const unsettled = this.watch.gate(now);
    if (unsettled) {
      // a round that does not qualify: the hold counts again from the first settled round
      this.breakStreaks();
      return { ...unsettled, fields };
    }
    if (model.leftOut.length > 0 && !config.balancing.allowPartialView) {
      // the imbalance of the other nodes is not the cluster's: no motion from it, no hold counted
      this.breakStreaks();
      return {
        outcome: 'skip',
        reason: 'partial-view',
        message: `partial view of the cluster: ${describeLeftOut(model.leftOut)}; nothing is decided from the other nodes (balancing.allow-partial-view: false)`,
        fields,
      };
    }
    const waiting = this.waitForTelemetry(snapshot, now, endedNow);
    if (waiting) return { ...waiting, fields };
    if (imbalance === undefined)
      return {
        outcome: 'skip',
        reason: 'no-nodes',
        message: 'no usable node (online, not in maintenance, with valid stats)',
        fields,
      };

    const balanceHa = !snapshot.crs.autoRebalance;
    if (!balanceHa && !config.guests.nonHa) {
      return {
        outcome: 'skip',
        reason: 'cluster-auto-rebalance',
        message: `the cluster's own ha-auto-rebalance is on: poise leaves HA resources to it (imbalance ${percent(imbalance)})`,
        fields,
      };
    }
    const candidates = restrictToModel(
      [
        ...(balanceHa ? migrationCandidates(snapshot, rules) : []),
        ...(config.guests.nonHa ? nonHaCandidates(snapshot) : []),
      ].sort((a, b) => compareNames(a.leader, b.leader)),
      model,
    );

    let lastScored: ScoredMigration[] = [];
    // outcomes learned since the policy last ran, stamped with this round's time (see UnreportedOutcome)
    const outcomes: PolicyOutcome[] = this.keeper.state.unreported.map((o) => ({
      resources: [...o.resources],
      source: o.source,
      target: o.target,
      ok: o.ok,
      at: now,
      ...(o.detail === undefined ? {} : { detail: o.detail }),
    }));
    const balance = balanceContext({
      now,
      snapshot,
      model,
      candidates,
      motionInFlight: this.keeper.state.motion !== null || clusterMotionInFlight(snapshot),
      outcomes,
      onScoreError: (err) => ctx.log.warn('round', `unable to score the balancing migrations: ${errorMessage(err)}`),
    });
    // what the stages judged, for the round line: the scored moves and, when smoothing adjusted
    // the node stats, the adjusted imbalance (the threshold and the margin judge that one)
    let smoothed: number | undefined;
    const adjust = balance.adjust?.bind(balance);
    const scoring: BalanceContext = {
      ...balance,
      score: (...args) => (lastScored = balance.score(...args)),
      ...(adjust
        ? {
            adjust: (nodes) => {
              const view = adjust(nodes);
              return {
                imbalance: () => (smoothed = view.imbalance()),
                score: (...args) => (lastScored = view.score(...args)),
              };
            },
          }
        : {}),
    };
    // balancing stopped for a failing stage: the round has done its HA-safety duties above
    const stopped = this.stageGuard.stoppedReport();
    if (stopped) return { ...stopped, fields: { ...fields, ...stopped.fields } };
    const { decision, state: pipelineState } = policy.pipeline.run(scoring, this.keeper.state.pipeline, this.roundNo);
    this.stageGuard.succeeded();
    // the pipeline state that saw the outcomes and the end of their being unreported: one write
    this.keeper.update({ pipeline: pipelineState, unreported: [] });
    this.logNotices(decision.notices);
    if (decision.action === 'none') {
      return {
        outcome: 'skip',
        reason: decision.code,
        message: this.explain(
          decision,
          { value: smoothed ?? imbalance, smoothed: smoothed !== undefined },
          pipelineState,
          lastScored,
          snapshot,
        ),
        fields: { ...fields, stage: decision.stage, code: decision.code, key: decision.key },
      };
    }
    return this.follower.request(decision, snapshot, now);
  }

  /**
   * Under `--once` (the hold counted as met), a line the hold would have changed says so: a
   * motion it would request, or a stop by a stage after the hold.
   */
  private withOnceNote(partial: PartialReport): string {
    const policy = this.ctx.policy;
    if (!policy.holdCountedMet || policy.holdRounds <= 1) return partial.message;
    const stages = policy.pipeline.stages.map((s) => s.name);
    const stage = typeof partial.fields?.stage === 'string' ? partial.fields.stage : undefined;
    // the objective's hold: `threshold-hold` (imbalance) or `contention-hold`
    const holdAt = stages.findIndex((name) => /(^|-)hold$/.test(name));
    const afterHold = stage !== undefined && holdAt >= 0 && stages.indexOf(stage) > holdAt;
    if (partial.outcome !== 'would-move' && !afterHold) return partial.message;
    return `${partial.message} (--once: the hold of ${policy.holdRounds} rounds counted as met)`;
  }

  /** The stages' streaks (the hold count) restart, as after a round that does not qualify (`Stage.breakStreak`). */
  private breakStreaks(): void {
    if (this.stageGuard.stopped) return;
    const state = this.keeper.state.pipeline;
    // the pipeline's checks: a stage's breakStreak that fails is its StageError
    const next = this.ctx.policy.pipeline.breakStreaks(state, this.roundNo);
    if (JSON.stringify(next) !== JSON.stringify(state)) this.keeper.update({ pipeline: next });
  }

  /**
   * The skip line while a policy that reads node pressure would judge pressure from before the
   * last motion (its nodes' RRD not yet past it); `undefined` to go on. Bounded by
   * {@link TELEMETRY_WAIT_MAX_SECONDS}.
   */
  private waitForTelemetry(snapshot: ClusterSnapshot, now: number, endedNow: boolean): PartialReport | undefined {
    const wait = this.telemetryWait;
    if (wait === undefined) return undefined;
    // the snapshot of the round the motion ended in was read before it ended: its pressure (if
    // the node reports any) is from before
    const reports = (name: string) =>
      snapshot.nodes.some(
        (n) => n.name === name && (n.pressure.cpuSome !== undefined || n.pressure.memSome !== undefined),
      );
    const stale = endedNow
      ? wait.nodes.filter(reports)
      : (snapshot.stalePressure ?? []).filter((n) => wait.nodes.includes(n));
    if (stale.length === 0 || !this.ctx.policy.needs.nodePressure) {
      this.telemetryWait = undefined;
      return undefined;
    }
    const until = wait.since + TELEMETRY_WAIT_MAX_SECONDS;
    if (now >= until) {
      this.telemetryWait = undefined;
      this.ctx.log.warn(
        'cluster',
        `no pressure telemetry of ${stale.join(', ')} from after the last motion within ${TELEMETRY_WAIT_MAX_SECONDS} s: deciding with the newest there is`,
      );
      return undefined;
    }
    return {
      outcome: 'skip',
      reason: 'telemetry-pending',
      message: `waiting for the pressure of ${stale.join(', ')} from after the last motion (ended at ${this.ctx.timeText(wait.since)}); at most until ${this.ctx.timeText(until)}`,
    };
  }

  /** The policy's notices (a failure recorded, a guest that cannot move): each is a line of its own. */
  private logNotices(notices: readonly Notice[]): void {
    for (const n of notices) {
      this.ctx.log.log(
        n.severity === 'warning' ? 'warn' : 'info',
        'policy',
        `${n.stage}: ${this.ctx.policyText(n.message)}`,
        { stage: n.stage, code: n.code },
      );
    }
  }

  private noteClusterAutoRebalance(snapshot: ClusterSnapshot): void {
    const on = snapshot.crs.autoRebalance;
    this.lastCrs = snapshot.crs.settings;
    if (on === this.clusterAutoRebalance) return;
    this.clusterAutoRebalance = on;
    this.ctx.metrics.clusterAutoRebalance.set(on ? 1 : 0);
    if (on) {
      const s = snapshot.crs.settings;
      const how =
        s && s.thresholdPercent !== undefined
          ? ` (its threshold ${s.thresholdPercent}%${s.marginPercent !== undefined ? `, margin ${s.marginPercent}%` : ''})`
          : '';
      this.ctx.log.warn(
        'cluster',
        `the cluster's own ha-auto-rebalance is on (datacenter.cfg crs${how}): poise refuses to move HA resources while it is on${this.ctx.config.guests.nonHa ? '; non-HA guests are still balanced' : ''}`,
      );
    } else {
      this.ctx.log.info('cluster', "the cluster's own ha-auto-rebalance is off: poise balances HA resources");
    }
  }

  /**
   * Logs each problem line when it first appears (not again while it lasts) and counts every
   * failed call behind one, each round it happens.
   */
  private reportProblems(problems: readonly SnapshotProblem[]): void {
    const next = new Set<string>();
    for (const p of problems) {
      if (p.error) this.ctx.metrics.apiErrors.inc({ endpoint: p.error.endpoint, kind: p.error.kind });
      if (!next.has(p.message) && !this.reportedProblems.has(p.message)) this.ctx.log.warn('cluster', p.message);
      next.add(p.message);
    }
    this.reportedProblems = next;
  }

  private exportNodes(snapshot: ClusterSnapshot, model: UsageModel, imbalance: number | undefined): void {
    this.ctx.journal.observe({
      round: this.roundNo,
      time: this.ctx.now(),
      quorate: snapshot.quorate,
      imbalance,
      nodes: nodesNow(snapshot, model),
      snapshot,
    });
    this.ctx.metrics.setNodes(
      snapshot.nodes.map((n) => {
        const load = model.loads.get(n.name);
        return {
          name: n.name,
          load: load?.load,
          cpu: load?.cpu,
          mem: load?.mem,
          pressureCpu: n.pressure.cpuSome,
          pressureMem: n.pressure.memSome,
        };
      }),
    );
    if (imbalance !== undefined) this.ctx.metrics.imbalance.set(imbalance);
  }

  /**
   * Why a round did nothing, in words: the policy's reason (the stage is a field of its own;
   * named in the text only for invalid input), with the daemon's own facts for the reference
   * codes (the motion it follows, the hold count, the best move below the margin) and epoch
   * seconds shown as UTC times.
   */
  private explain(
    decision: Extract<Decision, { action: 'none' }>,
    judged: { readonly value: number; readonly smoothed: boolean },
    pipelineState: Readonly<Record<string, unknown>>,
    scored: readonly ScoredMigration[],
    snapshot: ClusterSnapshot,
  ): string {
    const policy = this.ctx.policy;
    const threshold = policy.thresholdFraction;
    const imbalance = judged.value;
    // the imbalance the threshold judged, with digits enough to tell it from the threshold
    const judgedText = `${judged.smoothed ? 'smoothed imbalance' : 'imbalance'} ${REASON_FORMAT.value('imbalance', imbalance, threshold)}`;
    // another objective's stages (`contention-hold`, `contention-margin`, …) share some codes
    // with the reference's but judge no imbalance: their own reasons say what they judged
    const reference = REFERENCE_STAGES.has(decision.stage) || decision.stage.startsWith('score-');
    if (!reference && decision.code !== 'invalid-input') return this.ctx.policyText(decision.reason);
    switch (decision.code) {
      case 'motion-in-flight': {
        const m = this.keeper.state.motion;
        if (m)
          return `motion in flight: ${describeMotion(m)} (${m.phase}, ${Math.round(this.ctx.now() - m.issuedAt)} s)`;
        const moving = snapshot.guests.filter(
          (g) => g.ha?.state === 'migrate' || g.ha?.state === 'relocate' || g.lock === 'migrate',
        );
        return `a motion is running in the cluster (${moving.map((g) => g.sid).join(', ')})`;
      }
      case 'below-threshold':
        return `below threshold: ${judgedText} ≤ ${REASON_FORMAT.bound('imbalance', threshold)}`;
      case 'holding': {
        const held = (pipelineState['threshold-hold'] as { sustainedRounds?: number } | undefined)?.sustainedRounds;
        return `hold round ${held ?? '?'}/${policy.holdRounds}: ${judgedText} > ${REASON_FORMAT.bound('imbalance', threshold)}`;
      }
      case 'no-candidates':
        return `no candidates: no started ${this.ctx.config.guests.nonHa ? 'guest' : 'HA resource'} can move to another usable node (${judgedText})`;
      case 'nothing-scored':
        return `no scored migration (${judgedText})`;
      case 'below-margin': {
        const best = scored[0];
        if (best) {
          const margin = this.ctx.config.policy.reference.marginPercent / 100;
          const relative = REASON_FORMAT.value(
            'relative-improvement',
            (imbalance - best.imbalance) / imbalance,
            margin,
          );
          const what = judged.smoothed ? 'smoothed imbalance' : 'imbalance';
          return (
            `below margin: the best move (${best.sid} from ${best.source} to ${best.target}) changes the ${what} from ${percent(imbalance)} ` +
            `to ${percent(best.imbalance)}, relative improvement ${relative} below margin ${REASON_FORMAT.bound('relative-improvement', margin)}`
          );
        }
        return `below margin: ${decision.reason}`;
      }
      case 'invalid-input':
        // a host bug: name the stage that found it
        return `${decision.stage}: ${this.ctx.policyText(decision.reason)}`;
      default:
        // the variant stages' reasons say what they are about (`pressure gate: …`, `cooldown of …`)
        return this.ctx.policyText(decision.reason);
    }
  }
}
