import type { ServiceStatus } from '@poise/env';
import {
  MotionLedger,
  type Decision,
  type MotionOutcome,
  type Pipeline,
  type PipelineState,
  type PolicyRegistry,
} from '@poise/policy';
import { rulesFromCompiled, type PlanGuest, type PlanInput, type PlanRule } from '@poise/plan';
import { balancingCandidatesCache, type CachedBalancingCandidates, type CompiledRules } from '@poise/rules';
import type { CrsSettings } from './crs';
import type { CrsUsage } from './usage-model';
import { BUILTIN_REGISTRY } from './plugins';
import { ExitCode } from './tools';

/**
 * The host side of the balancer (the `@poise/policy` host contract, `BalanceContext`): the
 * pipeline built from the `crs` settings by the policy registry in force, the stage state, the
 * balancer motions the manager is waiting for and their outcomes (the policy's host kit,
 * `MotionLedger`), and what is logged about decisions not to act.
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
  private readonly motions: MotionLedger;
  /** The key of the last decision not to act that was logged (forgotten after a move). */
  lastLoggedKey: string | undefined;
  /** The rules' balancing candidates, worked out again only when what they read changed. */
  readonly candidates: CachedBalancingCandidates = balancingCandidatesCache();

  constructor(
    private readonly observe?: (event: BalancerEvent) => void,
    /** The policy plug-ins in force (default the built-in ones). */
    readonly registry: PolicyRegistry = BUILTIN_REGISTRY,
  ) {
    this.motions = new MotionLedger((outcome) => this.reportOutcome(outcome));
  }

  /** The pipeline for these settings (fractions under `pve-9.2`, as configured under `pve-5.2.0`). */
  pipeline(crs: CrsSettings, percent: boolean, method: 'bruteforce' | 'topsis'): Pipeline {
    const reference = {
      threshold: percent ? crs.threshold / 100 : crs.threshold,
      holdRounds: crs.holdRounds,
      margin: percent ? crs.margin / 100 : crs.margin,
      method,
    };
    const key = JSON.stringify([reference, crs.variant.key]);
    if (this.built?.key !== key) this.built = { key, pipeline: this.registry.pipeline(crs.variant, reference) };
    return this.built.pipeline;
  }

  /** Outcomes known since the last call (each reported once). */
  takeOutcomes(): MotionOutcome[] {
    return this.motions.take();
  }

  /** The balancer queued this motion (the whole bundle): wait for its outcome. */
  issued(
    resources: readonly string[],
    source: string,
    target: string,
    time: number,
    ss: Readonly<Record<string, ServiceStatus>>,
  ): void {
    // a member already on the target has nothing to do
    this.motions.issued(
      { resources, source, target },
      time,
      (sid) => ss[sid]?.node === target && !MOVING_STATES.has(ss[sid].state),
    );
  }

  /** The manager refused to queue the motion (e.g. a negative-affinity conflict): a failure, known now. */
  refused(resources: readonly string[], source: string, target: string, time: number): void {
    this.motions.refused({ resources, source, target }, time);
  }

  /**
   * The LRM result of a migrate/relocate arrived for `sid` (moving from `sd.node` to
   * `sd.target`): if it belongs to a balancer motion, record it; the motion's outcome is known
   * once every member has a result. Called by the migrate/relocate state handler.
   */
  lrmResult(sid: string, sd: Readonly<ServiceStatus>, exitCode: number, time: number): void {
    if (sd.target === undefined) return;
    this.motions.result(
      sid,
      sd.target,
      exitCode === ExitCode.SUCCESS ? { ok: true } : { ok: false, detail: failureDetail(exitCode) },
      time,
    );
  }

  /**
   * Resolves the members of waiting motions that will never get an LRM result: the service
   * is gone, or it is no longer moving to the target and has no such move queued (the manager
   * ignored the command, the node was fenced, ...). Such a member succeeded when it is on the
   * target, else it failed. Called before each balancing round, so an outcome is reported no
   * later than the round in which no motion is in flight any more.
   */
  settle(ss: Readonly<Record<string, ServiceStatus>>, time: number): void {
    this.motions.settle(time, (sid, motion) => {
      const sd = Object.hasOwn(ss, sid) ? ss[sid] : undefined;
      if (!sd) return { ok: false, detail: 'service removed' };
      if (MOVING_STATES.has(sd.state) && sd.target === motion.target) return undefined;
      const cmd = sd.cmd;
      if (cmd && MOVING_STATES.has(String(cmd[0])) && cmd[1] === motion.target) return undefined;
      return sd.node === motion.target ? { ok: true } : { ok: false, detail: 'motion not carried out' };
    });
  }

  /** Whether the manager waits for any balancer motion. */
  get waiting(): boolean {
    return this.motions.waiting;
  }

  private reportOutcome(outcome: MotionOutcome): void {
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
