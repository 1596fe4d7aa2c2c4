import type { ServiceStatus } from '@poise/env';
import {
  composePipeline,
  type BalanceCandidate,
  type BalanceContext,
  type Decision,
  type GuestConfig,
  type MigrationCandidate,
  type MotionOutcome,
  type NodeTelemetry,
  type Pipeline,
  type PipelineState,
  type ScoredMigration,
} from '@poise/policy';
import { stableStages } from '@poise/policy-stable';
import { pressureStages } from '@poise/policy-pressure';
import { contentionStages } from '@poise/policy-contention';
import { planStages } from '@poise/policy-plan';
import { rulesFromCompiled, type PlanGuest, type PlanInput, type PlanRule } from '@poise/plan';
import type { CompiledRules } from '@poise/rules';
import type { CrsSettings } from './crs';
import type { CrsUsage } from './usage-model';
import { ExitCode } from './tools';

/**
 * The host side of the balancer (the `@poise/policy` host contract, `BalanceContext`): the
 * pipeline built from the `crs` settings, the stage state, the balancer motions the manager
 * is waiting for and their outcomes, and what is logged about decisions not to act.
 *
 * It lives in the {@link Manager}, in memory, like the reference's hold counter: it dies with
 * the mastership (a new master starts with empty stage state: no backoff, cooldown or
 * smoothing history, and no motion to wait for).
 */

/** What the balancer did, for observers (`ManagerOptions.onBalancerEvent`; the simulator's recorder). */
export type BalancerEvent =
  | {
      readonly type: 'move';
      /** Seconds (the manager's clock). */
      readonly time: number;
      /** The whole bundle (leader first in byte order of the candidate). */
      readonly resources: readonly string[];
      readonly source: string;
      readonly target: string;
      /** The imbalance the round judged and the expected one after the move (fractions). */
      readonly imbalanceBefore: number;
      readonly imbalanceAfter: number;
    }
  | {
      readonly type: 'outcome';
      /** Seconds: when the outcome became known. */
      readonly time: number;
      readonly resources: readonly string[];
      readonly source: string;
      readonly target: string;
      /** Every member arrived on the target. */
      readonly ok: boolean;
      /** Why it failed (`migration error`, `refused`, ...). */
      readonly detail?: string;
    };

/** A balancer motion the manager waits for: the bundle, where to, and each member's result so far. */
interface PendingMotion {
  readonly resources: readonly string[];
  readonly source: string;
  readonly target: string;
  /** sid → result once known (`detail` set on failure). */
  readonly results: Map<string, { ok: boolean; detail?: string }>;
}

/** The pipeline for one set of settings, rebuilt only when they change. */
interface Built {
  readonly key: string;
  readonly pipeline: Pipeline;
}

/** Failure details by LRM exit code, for outcomes and the log. */
function failureDetail(exitCode: number): string {
  if (exitCode === ExitCode.EWRONG_NODE) return 'service registered on wrong node';
  if (exitCode === ExitCode.ERROR) return 'migration error';
  return `exit code ${exitCode}`;
}

const MOVING_STATES = new Set(['migrate', 'relocate']);

/** The manager's balancer: pipeline, stage state and motion bookkeeping (see the file comment). */
export class BalancerHost {
  /** The stage state (plain JSON), carried from round to round. */
  state: PipelineState = {};
  private built: Built | undefined;
  private readonly pending: PendingMotion[] = [];
  /** Outcomes known since the pipeline last ran, reported to it once. */
  private readonly ready: MotionOutcome[] = [];
  /** The key of the last decision not to act that was logged (forgotten after a move). */
  lastLoggedKey: string | undefined;

  constructor(private readonly observe?: (event: BalancerEvent) => void) {}

  /** The pipeline for these settings (fractions under `pve-9.2`, as configured under `pve-5.2.0`). */
  pipeline(crs: CrsSettings, percent: boolean, method: 'bruteforce' | 'topsis'): Pipeline {
    const reference = {
      threshold: percent ? crs.threshold / 100 : crs.threshold,
      holdRounds: crs.holdRounds,
      margin: percent ? crs.margin / 100 : crs.margin,
      method,
    };
    const key = JSON.stringify([
      reference,
      crs.variant.stable,
      crs.variant.pressure,
      crs.variant.plan,
      crs.variant.contention,
    ]);
    if (this.built?.key !== key) {
      let parts = [...stableStages(crs.variant.stable), ...pressureStages(crs.variant.pressure)];
      // one select stage per pipeline: the plan replaces the cost stage's choice when both are on
      if (crs.variant.plan.plan)
        parts = [...parts.filter((p) => p.slot !== 'select'), ...planStages(crs.variant.plan, { method })];
      parts = [...parts, ...contentionStages(crs.variant.contention, reference)];
      this.built = { key, pipeline: composePipeline(reference, parts) };
    }
    return this.built.pipeline;
  }

  /** Outcomes known since the last call (each reported once). */
  takeOutcomes(): MotionOutcome[] {
    return this.ready.splice(0);
  }

  /** The balancer queued this motion (the whole bundle): wait for its outcome. */
  issued(
    resources: readonly string[],
    source: string,
    target: string,
    time: number,
    ss: Readonly<Record<string, ServiceStatus>>,
  ): void {
    const motion: PendingMotion = { resources: [...resources], source, target, results: new Map() };
    // a member already on the target has nothing to do
    for (const sid of resources)
      if (ss[sid]?.node === target && !MOVING_STATES.has(ss[sid].state)) motion.results.set(sid, { ok: true });
    this.pending.push(motion);
    this.complete(motion, time);
  }

  /** The manager refused to queue the motion (e.g. a negative-affinity conflict): a failure, known now. */
  refused(resources: readonly string[], source: string, target: string, time: number): void {
    this.finish({ resources: [...resources], source, target, ok: false, at: time, detail: 'refused' });
  }

  /**
   * The LRM result of a migrate/relocate arrived for `sid` (moving from `sd.node` to
   * `sd.target`): if it belongs to a balancer motion, record it; the motion's outcome is known
   * once every member has a result. Called by the migrate/relocate state handler.
   */
  lrmResult(sid: string, sd: Readonly<ServiceStatus>, exitCode: number, time: number): void {
    const motion = this.pending.find((m) => m.target === sd.target && m.resources.includes(sid) && !m.results.has(sid));
    if (!motion) return;
    motion.results.set(
      sid,
      exitCode === ExitCode.SUCCESS ? { ok: true } : { ok: false, detail: failureDetail(exitCode) },
    );
    this.complete(motion, time);
  }

  /**
   * Resolves the members of waiting motions that will never get an LRM result: the service
   * is gone, or it is no longer moving to the target and has no such move queued (the manager
   * ignored the command, the node was fenced, ...). Such a member succeeded when it is on the
   * target, else it failed. Called before each balancing round, so an outcome is reported no
   * later than the round in which no motion is in flight any more.
   */
  settle(ss: Readonly<Record<string, ServiceStatus>>, time: number): void {
    for (const motion of [...this.pending]) {
      for (const sid of motion.resources) {
        if (motion.results.has(sid)) continue;
        const sd = Object.hasOwn(ss, sid) ? ss[sid] : undefined;
        if (!sd) {
          motion.results.set(sid, { ok: false, detail: 'service removed' });
          continue;
        }
        if (MOVING_STATES.has(sd.state) && sd.target === motion.target) continue;
        const cmd = sd.cmd;
        if (cmd && MOVING_STATES.has(String(cmd[0])) && cmd[1] === motion.target) continue;
        motion.results.set(
          sid,
          sd.node === motion.target ? { ok: true } : { ok: false, detail: 'motion not carried out' },
        );
      }
      this.complete(motion, time);
    }
  }

  /** Whether the manager waits for any balancer motion. */
  get waiting(): boolean {
    return this.pending.length > 0;
  }

  private complete(motion: PendingMotion, time: number): void {
    if (motion.results.size < motion.resources.length) return;
    this.pending.splice(this.pending.indexOf(motion), 1);
    const failed = motion.resources.map((sid) => motion.results.get(sid)!).find((r) => !r.ok);
    const outcome: MotionOutcome = failed
      ? {
          resources: motion.resources,
          source: motion.source,
          target: motion.target,
          ok: false,
          at: time,
          detail: failed.detail,
        }
      : { resources: motion.resources, source: motion.source, target: motion.target, ok: true, at: time };
    this.finish(outcome);
  }

  private finish(outcome: MotionOutcome): void {
    this.ready.push(outcome);
    this.observe?.({
      type: 'outcome',
      time: outcome.at,
      resources: outcome.resources,
      source: outcome.source,
      target: outcome.target,
      ok: outcome.ok,
      ...(outcome.detail === undefined ? {} : { detail: outcome.detail }),
    });
  }

  /** Tells observers about a move the balancer queued. */
  moved(decision: Extract<Decision, { action: 'move' }>, time: number): void {
    this.lastLoggedKey = undefined;
    this.observe?.({
      type: 'move',
      time,
      resources: decision.resources,
      source: decision.migration.source,
      target: decision.migration.target,
      imbalanceBefore: decision.imbalanceBefore,
      imbalanceAfter: decision.imbalanceAfter,
    });
  }
}

/**
 * The variant members of the balancer's context on the CRS usage (all lazy; the reference
 * stages read none of them): node telemetry (measured node stats, the HA services' part,
 * PSI), the services' own stats (guest telemetry, for the contention objective), adjusted
 * views for smoothing, candidates with their source and the memory a move
 * copies, and guest configurations from the Env.
 */
export function variantContext(
  usage: CrsUsage,
  guestConfig: (sid: string) => GuestConfig | undefined,
  scoreSafely: (score: () => ScoredMigration[]) => ScoredMigration[],
): Pick<BalanceContext, 'nodes' | 'guests' | 'adjust' | 'guestConfig'> {
  let telemetry: NodeTelemetry[] | undefined;
  return {
    nodes: () => (telemetry ??= usage.nodeTelemetry()),
    guests: () => usage.guestTelemetry(),
    adjust: (nodes) => {
      const view = usage.adjusted(nodes);
      // scoring on the adjusted view fails the way scoring on the measured one does: logged, nothing scored
      return {
        imbalance: () => view.imbalance(),
        score: (candidates, method, limit) => scoreSafely(() => view.score(candidates, method, limit)),
      };
    },
    guestConfig,
  };
}

/** A candidate with the facts the variant stages use: its source node and the memory its move copies. */
export function describeCandidate(candidate: MigrationCandidate, source: string, usage: CrsUsage): BalanceCandidate {
  let bytes: number | undefined = 0;
  for (const sid of candidate.resources) {
    const mem = usage.serviceMem(sid);
    if (mem === undefined) {
      bytes = undefined;
      break;
    }
    bytes += mem;
  }
  return bytes === undefined ? { ...candidate, source } : { ...candidate, source, transferBytes: bytes };
}

/**
 * The cluster as the plan-guided stage plans it (`@poise/plan`'s `PlanInput`), from the CRS
 * usage: the online nodes (cores, memory, and as base load what the HA services do not account
 * for), the HA services the usage holds (a moving one cannot move again), and the compiled
 * rules restricted to those services and nodes.
 */
export function planInputOf(usage: CrsUsage, compiled: CompiledRules): PlanInput {
  const nodes = usage.nodeTelemetry().map((n) => ({
    name: n.node,
    cpuCores: n.maxcpu,
    memBytes: n.maxmem,
    baseCpu: Math.max(0, n.cpu - n.servicesCpu),
    baseMem: Math.max(0, n.mem - n.servicesMem),
  }));
  const nodeNames = new Set(nodes.map((n) => n.name));
  const guests: PlanGuest[] = usage.planGuests().map((g) => ({
    id: g.sid,
    kind: g.sid.startsWith('ct:') ? 'ct' : 'vm',
    node: g.node,
    ha: true,
    cpu: g.cpu,
    mem: g.mem,
    ...(g.moving ? { migratable: false, reason: 'is moving' } : {}),
  }));
  const sids = new Set(guests.map((g) => g.id));
  const rules: PlanRule[] = [];
  const stuck = new Set<string>();
  for (const rule of rulesFromCompiled(compiled, sids)) {
    if (rule.type !== 'node-affinity') {
      rules.push(rule);
      continue;
    }
    const listed = rule.nodes.filter((n) => nodeNames.has(n.node));
    // no listed node online: the services stay where they are (HA has nowhere to put them either)
    if (listed.length === 0) for (const sid of rule.resources) stuck.add(sid);
    else rules.push({ ...rule, nodes: listed });
  }
  return {
    nodes,
    guests: guests.map((g) =>
      stuck.has(g.id) ? { ...g, migratable: false, reason: 'its node affinity lists no online node' } : g,
    ),
    rules,
  };
}
