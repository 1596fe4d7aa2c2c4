import { ClusterUsage, compareNames, type ImbalanceMetric } from '@poise/usage';
import { PolicyError } from '../errors';
import { showValue } from '../state';
import type { Pipeline } from '../pipeline';
import type {
  FinishedMigration,
  AdjustedNodeUsage,
  BalanceCandidate,
  BalanceContext,
  BalanceEvaluator,
  Decision,
  GuestConfig,
  GuestTelemetry,
  MotionOutcome,
  NodeTelemetry,
  PipelineState,
} from '../types';

/** A node of a {@link ReplayCluster}: capacity, load outside the HA services, pressure. */
export interface ReplayNode {
  readonly name: string;
  /** Cores (> 0). */
  readonly maxcpu: number;
  /** Bytes (> 0). */
  readonly maxmem: number;
  /** Load outside the HA services: cores and bytes (default 0). */
  readonly cpu?: number;
  readonly mem?: number;
  /** PSI some avg10, percent; `undefined` = not reported. */
  readonly pressureCpu?: number | undefined;
  readonly pressureMem?: number | undefined;
}

/** An HA guest of a {@link ReplayCluster}. */
export interface ReplayGuest {
  readonly sid: string;
  readonly node: string;
  /** Cores and bytes in use. */
  readonly cpu: number;
  readonly mem: number;
  /** Configured cores (default: the cores in use rounded up, at least 1). */
  readonly maxcpu?: number;
  /** How many motions of this guest fail before one succeeds (like the simulator's `fa:` resources). */
  readonly failures?: number;
  /** Guests with the same bundle name on the same node move together (a positive affinity). */
  readonly bundle?: string;
  readonly config?: GuestConfig;
}

export interface ReplayOptions {
  readonly nodes: readonly ReplayNode[];
  readonly guests: readonly ReplayGuest[];
  /** `normalized` (pve-9.2, default) or `raw` (pve-5.2.0). */
  readonly metric?: ImbalanceMetric;
  /** Seconds between rounds (default 20, the simulator's). */
  readonly roundSeconds?: number;
  /** Seconds from issuing a motion to knowing its outcome (default 20). */
  readonly motionSeconds?: number;
  /** Time of the first round (default 0). */
  readonly start?: number;
}

/** What a replay records: moves, outcomes, and stops and notices as a host would log them. */
export type ReplayEvent =
  | {
      readonly time: number;
      readonly type: 'move';
      readonly resources: readonly string[];
      readonly source: string;
      readonly target: string;
      readonly imbalanceBefore: number;
      readonly imbalanceAfter: number;
    }
  | {
      readonly time: number;
      readonly type: 'outcome';
      readonly resources: readonly string[];
      readonly source: string;
      readonly target: string;
      readonly ok: boolean;
    }
  /** A stop, recorded only when it is not quiet and its key differs from the last one recorded (log on change). */
  | {
      readonly time: number;
      readonly type: 'stop';
      readonly stage: string;
      readonly code: string;
      readonly reason: string;
      readonly key: string;
    }
  | {
      readonly time: number;
      readonly type: 'notice';
      readonly stage: string;
      readonly code: string;
      readonly message: string;
    };

interface Guest {
  sid: string;
  node: string;
  cpu: number;
  maxcpu: number;
  mem: number;
  failures: number;
  bundle: string;
  config: GuestConfig | undefined;
}

/** A node of the replay cluster, as {@link ReplayCluster.setNode} patches it. */
export interface ReplayNodeState {
  name: string;
  maxcpu: number;
  maxmem: number;
  cpu: number;
  mem: number;
  pressureCpu: number | undefined;
  pressureMem: number | undefined;
}

/** Capacities (> 0 when `positive`) and loads (≥ 0): finite numbers. */
function checkAmounts(what: string, values: Record<string, number>, positive: boolean): void {
  for (const [field, v] of Object.entries(values)) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (positive && v === 0)) {
      throw new PolicyError(
        'invalid-config',
        `${what}: '${field}' must be a finite number ${positive ? '> 0' : '>= 0'}, got ${showValue(v)}`,
      );
    }
  }
}

interface Pending {
  resources: string[];
  source: string;
  target: string;
  doneAt: number;
}

/**
 * A small in-memory cluster that hosts a pipeline the way the HA manager does, for tests,
 * examples and experiments (not for production): it builds a full {@link BalanceContext}
 * every round (candidates with source and cost, node telemetry, adjusted views, guest
 * configurations), queues the chosen motion, reports its outcome when it completes, and
 * records what a host would log. Node load = the node's own load + its guests'; imbalance
 * and scoring come from `@poise/usage` (dynamic aggregation).
 */
export class ReplayCluster {
  time: number;
  readonly events: ReplayEvent[] = [];
  readonly roundSeconds: number;
  readonly motionSeconds: number;
  /** The finished migrations `ctx.migrationTasks()` reports; `undefined`: the member is absent. */
  migrationTasks: FinishedMigration[] | undefined;
  private readonly metric: ImbalanceMetric;
  private readonly nodeMap = new Map<string, ReplayNodeState>();
  private readonly guests = new Map<string, Guest>();
  private pending: Pending | undefined;
  private lastKey: string | undefined;

  constructor(options: ReplayOptions) {
    this.metric = options.metric ?? 'normalized';
    this.roundSeconds = options.roundSeconds ?? 20;
    this.motionSeconds = options.motionSeconds ?? 20;
    this.time = options.start ?? 0;
    for (const n of options.nodes) this.addNode(n);
    for (const g of options.guests) {
      if (this.guests.has(g.sid)) throw new PolicyError('invalid-config', `guest '${g.sid}' listed twice`);
      if (!this.nodeMap.has(g.node))
        throw new PolicyError('invalid-config', `guest '${g.sid}' is on unknown node '${g.node}'`);
      checkAmounts(`guest '${g.sid}'`, { cpu: g.cpu, mem: g.mem }, false);
      if (g.maxcpu !== undefined) checkAmounts(`guest '${g.sid}'`, { maxcpu: g.maxcpu }, true);
      if (g.failures !== undefined && (!Number.isInteger(g.failures) || g.failures < 0)) {
        throw new PolicyError(
          'invalid-config',
          `guest '${g.sid}': 'failures' must be an integer >= 0, got '${g.failures}'`,
        );
      }
      const maxcpu = g.maxcpu ?? Math.max(1, Math.ceil(g.cpu));
      this.guests.set(g.sid, {
        sid: g.sid,
        node: g.node,
        cpu: g.cpu,
        maxcpu,
        mem: g.mem,
        failures: g.failures ?? 0,
        bundle: g.bundle ?? g.sid,
        config: g.config,
      });
    }
  }

  addNode(node: ReplayNode): void {
    if (this.nodeMap.has(node.name)) throw new PolicyError('invalid-config', `node '${node.name}' listed twice`);
    checkAmounts(`node '${node.name}'`, { maxcpu: node.maxcpu, maxmem: node.maxmem }, true);
    checkAmounts(`node '${node.name}'`, { cpu: node.cpu ?? 0, mem: node.mem ?? 0 }, false);
    this.nodeMap.set(node.name, {
      name: node.name,
      maxcpu: node.maxcpu,
      maxmem: node.maxmem,
      cpu: node.cpu ?? 0,
      mem: node.mem ?? 0,
      pressureCpu: node.pressureCpu,
      pressureMem: node.pressureMem,
    });
  }

  /** Removes an empty node (its guests must have moved away). */
  removeNode(name: string): void {
    for (const g of this.guests.values())
      if (g.node === name) throw new PolicyError('invalid-config', `node '${name}' still runs '${g.sid}'`);
    this.nodeMap.delete(name);
  }

  /**
   * Changes a node's own load (cores, bytes: finite, ≥ 0) or pressure (percent; any value, even
   * out of range, is passed to the pipeline as it is, so tests can feed it bad telemetry).
   */
  setNode(name: string, patch: Partial<Pick<ReplayNodeState, 'cpu' | 'mem' | 'pressureCpu' | 'pressureMem'>>): void {
    const node = this.nodeMap.get(name);
    if (!node) throw new PolicyError('invalid-config', `unknown node '${name}'`);
    const amounts: Record<string, number> = {};
    if ('cpu' in patch) amounts.cpu = patch.cpu!;
    if ('mem' in patch) amounts.mem = patch.mem!;
    checkAmounts(`node '${name}'`, amounts, false);
    Object.assign(node, patch);
  }

  /** Where a guest runs now. */
  nodeOf(sid: string): string {
    const g = this.guests.get(sid);
    if (!g) throw new PolicyError('invalid-config', `unknown guest '${sid}'`);
    return g.node;
  }

  /** The moves recorded so far. */
  moves() {
    return this.events.filter((e) => e.type === 'move');
  }

  /** Outcomes recorded so far. */
  outcomes() {
    return this.events.filter((e) => e.type === 'outcome');
  }

  private sortedNodes(): ReplayNodeState[] {
    return [...this.nodeMap.values()].sort((a, b) => compareNames(a.name, b.name));
  }

  private sortedGuests(): Guest[] {
    return [...this.guests.values()].sort((a, b) => compareNames(a.sid, b.sid));
  }

  /** The usage model with each node's cpu/mem taken from `override` (adjusted views) or measured. */
  private usage(override?: ReadonlyMap<string, AdjustedNodeUsage>): ClusterUsage {
    const usage = new ClusterUsage({ aggregation: 'dynamic', metric: this.metric });
    const guests = this.sortedGuests();
    for (const n of this.sortedNodes()) {
      const adjusted = override?.get(n.name);
      let cpu = n.cpu;
      let mem = n.mem;
      for (const g of guests) {
        if (g.node === n.name) {
          cpu += g.cpu;
          mem += g.mem;
        }
      }
      usage.addNode(n.name, {
        cpu: adjusted ? adjusted.cpu : cpu,
        maxcpu: n.maxcpu,
        mem: Math.round(adjusted ? adjusted.mem : mem),
        maxmem: n.maxmem,
      });
    }
    for (const g of guests) {
      usage.addResource(g.sid, {
        stats: { cpu: g.cpu, maxcpu: g.maxcpu, mem: g.mem, maxmem: g.mem },
        state: 'started',
        placement: { current: g.node },
      });
    }
    return usage;
  }

  private evaluator(override?: ReadonlyMap<string, AdjustedNodeUsage>): BalanceEvaluator {
    let usage: ClusterUsage | undefined;
    const get = () => (usage ??= this.usage(override));
    return {
      imbalance: () => get().nodeImbalance(),
      score: (candidates, method, limit) => get().bestBalancingMigrations(candidates, method, limit),
    };
  }

  private candidates(): BalanceCandidate[] {
    const bundles = new Map<string, Guest[]>();
    for (const g of this.sortedGuests()) {
      const list = bundles.get(g.bundle) ?? [];
      list.push(g);
      bundles.set(g.bundle, list);
    }
    const nodes = this.sortedNodes().map((n) => n.name);
    const out: BalanceCandidate[] = [];
    for (const members of bundles.values()) {
      const source = members[0]!.node;
      if (members.some((m) => m.node !== source)) continue;
      out.push({
        leader: members[0]!.sid,
        resources: members.map((m) => m.sid),
        targets: nodes.filter((n) => n !== source),
        source,
        transferBytes: members.reduce((sum, m) => sum + m.mem, 0),
      });
    }
    return out.sort((a, b) => compareNames(a.leader, b.leader));
  }

  /** Every node as the pipeline sees it this round (own load plus its guests'), in byte order. */
  telemetry(): NodeTelemetry[] {
    return this.sortedNodes().map((n) => {
      let servicesCpu = 0;
      let servicesMem = 0;
      for (const g of this.guests.values()) {
        if (g.node === n.name) {
          servicesCpu += g.cpu;
          servicesMem += g.mem;
        }
      }
      return {
        node: n.name,
        cpu: n.cpu + servicesCpu,
        maxcpu: n.maxcpu,
        mem: n.mem + servicesMem,
        maxmem: n.maxmem,
        servicesCpu,
        servicesMem,
        pressureCpu: n.pressureCpu,
        pressureMem: n.pressureMem,
      };
    });
  }

  /** Completes a motion that is due; returns its outcome (to report this round). */
  private settle(): MotionOutcome[] {
    const p = this.pending;
    if (!p || this.time < p.doneAt) return [];
    this.pending = undefined;
    const members = p.resources.map((sid) => this.guests.get(sid)).filter((g): g is Guest => g !== undefined);
    let ok =
      members.length === p.resources.length && members.every((g) => g.node === p.source) && this.nodeMap.has(p.target);
    for (const g of members) {
      if (g.failures > 0) {
        g.failures--;
        ok = false;
      }
    }
    if (ok) for (const g of members) g.node = p.target;
    this.events.push({
      time: this.time,
      type: 'outcome',
      resources: p.resources,
      source: p.source,
      target: p.target,
      ok,
    });
    return [{ resources: p.resources, source: p.source, target: p.target, ok, at: this.time }];
  }

  /** The context of the current round (settles a due motion first). */
  context(): BalanceContext {
    const outcomes = this.settle();
    const measured = this.evaluator();
    return {
      now: this.time,
      motionInFlight: this.pending !== undefined,
      outcomes,
      imbalance: () => measured.imbalance(),
      score: (candidates, method, limit) => measured.score(candidates, method, limit),
      candidates: () => this.candidates(),
      nodes: () => this.telemetry(),
      guests: (): GuestTelemetry[] =>
        this.sortedGuests().map((g) => ({ sid: g.sid, node: g.node, cpu: g.cpu, maxcpu: g.maxcpu, mem: g.mem })),
      adjust: (nodes) => this.evaluator(new Map(nodes.map((n) => [n.node, n]))),
      guestConfig: (sid) => this.guests.get(sid)?.config,
      ...(this.migrationTasks ? { migrationTasks: () => this.migrationTasks! } : {}),
    };
  }

  /** Applies a decision: records it as a host would log it and queues a move. */
  apply(decision: Decision): void {
    for (const n of decision.notices)
      this.events.push({ time: this.time, type: 'notice', stage: n.stage, code: n.code, message: n.message });
    if (decision.action === 'none') {
      if (decision.quiet) return;
      if (decision.key !== this.lastKey) {
        this.events.push({
          time: this.time,
          type: 'stop',
          stage: decision.stage,
          code: decision.code,
          reason: decision.reason,
          key: decision.key,
        });
      }
      this.lastKey = decision.key;
      return;
    }
    this.lastKey = undefined;
    const { source, target } = decision.migration;
    this.events.push({
      time: this.time,
      type: 'move',
      resources: decision.resources,
      source,
      target,
      imbalanceBefore: decision.imbalanceBefore,
      imbalanceAfter: decision.imbalanceAfter,
    });
    this.pending = { resources: [...decision.resources], source, target, doneAt: this.time + this.motionSeconds };
  }

  /** One round: context → pipeline → apply → advance the clock. */
  round(pipeline: Pipeline, state: PipelineState): { decision: Decision; state: PipelineState } {
    const out = pipeline.run(this.context(), state);
    this.apply(out.decision);
    this.time += this.roundSeconds;
    return out;
  }

  /**
   * Runs rounds while the clock is before `until` (seconds); `beforeRound` may change loads
   * and pressure first. The state is round-tripped through JSON every round, as a daemon
   * persisting it would. Returns the final state.
   */
  run(
    pipeline: Pipeline,
    options: { until: number; state?: PipelineState; beforeRound?: (cluster: ReplayCluster) => void },
  ): PipelineState {
    let state = options.state ?? pipeline.initialState();
    while (this.time < options.until) {
      options.beforeRound?.(this);
      state = JSON.parse(JSON.stringify(this.round(pipeline, state).state)) as PipelineState;
    }
    return state;
  }
}
