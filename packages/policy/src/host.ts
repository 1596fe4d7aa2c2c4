import { ClusterUsage, compareNames, type MigrationCandidate, type ScoredMigration } from '@poise/usage';
import type {
  AdjustedNodeUsage,
  BalanceCandidate,
  BalanceEvaluator,
  BalanceMethod,
  GuestTelemetry,
  MotionOutcome,
  NodeTelemetry,
} from './types';

/**
 * The host kit: what a host of the balancer (the HA core in the simulator, poise-manager) builds
 * the same way whatever its cluster view, once. {@link usageContext} turns a usage model (a
 * `@poise/usage` `ClusterUsage` holding the round's nodes and guests) into the context members
 * the stages read: the imbalance and the scoring, candidates with their source and transfer
 * size, node and guest telemetry, adjusted views. {@link MotionLedger} keeps the motions a host
 * waits for and their outcomes.
 */

/** A node's pressure (PSI some avg10, percent) as the host measures it; `undefined` where not reported. */
export interface NodePressure {
  readonly cpu: number | undefined;
  readonly mem: number | undefined;
}

/** Options of {@link usageContext}. */
export interface UsageContextOptions {
  /** A node's pressure, or `undefined` when the host has none for it (default: none). */
  readonly pressure?: (node: string) => NodePressure | undefined;
  /**
   * Runs a scoring of the usage model: a host catches what it throws (bad candidates), logs it
   * and returns `[]`, or scores nothing at all (an unknown method). Default: runs it.
   */
  readonly guardScore?: (score: () => ScoredMigration[]) => ScoredMigration[];
}

/**
 * The context members a usage model provides (see {@link usageContext}); functions that need no
 * `this`, so a host may hand each on alone.
 */
export interface UsageContext {
  readonly imbalance: () => number;
  readonly score: (candidates: MigrationCandidate[], method: BalanceMethod, limit: number) => ScoredMigration[];
  /** Every node of the usage (byte order) with its stats, the part its guests account for, and its pressure. */
  readonly nodes: () => NodeTelemetry[];
  /** Every guest of the usage (byte order of the sids) with the stats the usage moves with it. */
  readonly guests: () => GuestTelemetry[];
  /** A view on the usage with the listed nodes' cpu/mem replaced, built on its first call. */
  readonly adjust: (nodes: readonly AdjustedNodeUsage[]) => BalanceEvaluator;
  /** The candidates with their source and the memory their move copies ({@link candidateFacts}). */
  readonly describe: (candidates: readonly MigrationCandidate[]) => BalanceCandidate[];
}

/**
 * The balancer's context on a usage model (all lazy; each value computed when a stage asks):
 *
 * - `imbalance()`, `score()`: the usage model's (`nodeImbalance`, `bestBalancingMigrations`),
 *   scoring through `options.guardScore`;
 * - `nodes()`: each node's stats as the usage holds them (dynamic aggregation: the measured
 *   node stats; static: what its services account for, their configured maxima) with the sum of
 *   the stats of the guests placed on it (their current node: the values a migration moves)
 *   and its pressure;
 * - `guests()`: each guest of the usage, on its current node (a moving one: its source), with
 *   the stats the usage moves with it;
 * - `adjust(nodes)`: the usage with those nodes' cpu/mem as given (as `nodes()` reports them;
 *   static: the node's base becomes what its services do not account for, at least 0; memory
 *   rounded to whole bytes), guests and placements unchanged, scored the same way;
 * - `describe(candidates)`: {@link candidateFacts}.
 */
export function usageContext(usage: ClusterUsage, options: UsageContextOptions = {}): UsageContext {
  const guard = options.guardScore ?? ((score: () => ScoredMigration[]) => score());
  const evaluator = (model: () => ClusterUsage): BalanceEvaluator => ({
    imbalance: () => model().nodeImbalance(),
    score: (candidates: MigrationCandidate[], method: BalanceMethod, limit: number) =>
      guard(() => model().bestBalancingMigrations(candidates, method, limit)),
  });
  const measured = evaluator(() => usage);
  let telemetry: NodeTelemetry[] | undefined;
  return {
    imbalance: () => measured.imbalance(),
    score: (candidates, method, limit) => measured.score(candidates, method, limit),
    nodes: () => (telemetry ??= nodeTelemetry(usage, options.pressure)),
    guests: () => guestTelemetry(usage),
    adjust: (nodes) => {
      let built: ClusterUsage | undefined;
      return evaluator(() => (built ??= adjustedUsage(usage, nodes)));
    },
    describe: (candidates) => candidates.map((c) => candidateFacts(usage, c)),
  };
}

/** cpu and mem of the guests placed on each node as their current node, summed in the usage's fold order. */
function guestsPerNode(usage: ClusterUsage): Map<string, { cpu: number; mem: number }> {
  // summed in place (a node's slot in two arrays): read every round, so no copy of the usage
  const slots = new Map<string, number>();
  const cpu = new Float64Array(usage.resourceCount);
  const mem = new Float64Array(usage.resourceCount);
  usage.forEachResource((_sid, current, rcpu, _maxcpu, rmem) => {
    let slot = slots.get(current);
    if (slot === undefined) {
      slot = slots.size;
      slots.set(current, slot);
    }
    cpu[slot]! += rcpu;
    mem[slot]! += rmem;
  });
  const out = new Map<string, { cpu: number; mem: number }>();
  for (const [node, slot] of slots) out.set(node, { cpu: cpu[slot]!, mem: mem[slot]! });
  return out;
}

/** Node telemetry of a usage model (see {@link usageContext}). O(nodes + guests). */
export function nodeTelemetry(
  usage: ClusterUsage,
  pressure?: (node: string) => NodePressure | undefined,
): NodeTelemetry[] {
  const services = guestsPerNode(usage);
  const measured = usage.aggregation === 'dynamic';
  return usage.nodeNames().map((node) => {
    const base = usage.getNodeStats(node);
    const part = services.get(node) ?? { cpu: 0, mem: 0 };
    const psi = pressure?.(node);
    return {
      node,
      cpu: measured ? base.cpu : part.cpu,
      maxcpu: base.maxcpu,
      mem: measured ? base.mem : part.mem,
      maxmem: base.maxmem,
      servicesCpu: part.cpu,
      servicesMem: part.mem,
      pressureCpu: psi?.cpu,
      pressureMem: psi?.mem,
    };
  });
}

/** Guest telemetry of a usage model (see {@link usageContext}). O(guests · log guests). */
export function guestTelemetry(usage: ClusterUsage): GuestTelemetry[] {
  const guests: GuestTelemetry[] = [];
  usage.forEachResource((sid, node, cpu, maxcpu, mem) => guests.push({ sid, node, cpu, maxcpu, mem }));
  return guests.sort((a, b) => compareNames(a.sid, b.sid));
}

/**
 * A copy of the usage in which each listed node's cpu/mem (as {@link nodeTelemetry} reports
 * them) are the given ones; nodes not listed, guests, placements and capacities unchanged.
 * Dynamic aggregation: the node's measured stats are replaced; static: its base becomes what
 * its services do not account for (at least 0). Memory is rounded to whole bytes.
 */
export function adjustedUsage(usage: ClusterUsage, nodes: readonly AdjustedNodeUsage[]): ClusterUsage {
  const snap = usage.snapshot();
  const given = new Map(nodes.map((n) => [n.node, n]));
  const services = usage.aggregation === 'static' ? guestsPerNode(usage) : undefined;
  const out = new ClusterUsage({ aggregation: snap.aggregation, metric: usage.metric });
  for (const n of snap.nodes) {
    const g = given.get(n.name);
    let stats = n.stats;
    if (g) {
      const part = services?.get(n.name) ?? { cpu: 0, mem: 0 };
      stats = {
        cpu: Math.max(0, g.cpu - part.cpu),
        maxcpu: n.stats.maxcpu,
        mem: Math.max(0, Math.round(g.mem - part.mem)),
        maxmem: n.stats.maxmem,
      };
    }
    out.addNode(n.name, stats);
  }
  for (const r of snap.resources) out.addResource(r.sid, { stats: r.stats, state: r.state, placement: r.placement });
  return out;
}

/**
 * The memory a move of these guests copies, bytes: the sum of their memory in the usage (the
 * host-side footprint when the host fed that); `undefined` when one is not part of the usage.
 */
export function transferBytes(usage: ClusterUsage, resources: readonly string[]): number | undefined {
  let bytes = 0;
  for (const sid of resources) {
    if (!usage.hasResource(sid)) return undefined;
    bytes += usage.getResourceStats(sid).mem;
  }
  return bytes;
}

/**
 * A candidate with the facts the variant stages read: `source` (the candidate's own, else the
 * leader's current node in the usage) and `transferBytes` ({@link transferBytes}; left out when
 * unknown).
 */
export function candidateFacts(usage: ClusterUsage, candidate: MigrationCandidate): BalanceCandidate {
  const given = (candidate as BalanceCandidate).source;
  const source = given ?? (usage.hasResource(candidate.leader) ? usage.currentNode(candidate.leader) : undefined);
  const bytes = transferBytes(usage, candidate.resources);
  // one object per candidate (every scoring round describes each): no spread of a temporary
  if (bytes === undefined) return source === undefined ? { ...candidate } : { ...candidate, source };
  return source === undefined ? { ...candidate, transferBytes: bytes } : { ...candidate, source, transferBytes: bytes };
}

/** One member's result: arrived on the target, or why not. */
export interface MemberResult {
  readonly ok: boolean;
  readonly detail?: string | undefined;
}

/** A motion the ledger waits for (see {@link MotionLedger}). */
export interface PendingMotion {
  readonly resources: readonly string[];
  readonly source: string;
  readonly target: string;
}

interface Waiting extends PendingMotion {
  readonly results: Map<string, MemberResult>;
}

/**
 * The motions a host issued for the balancer and waits for, and their outcomes: each motion's
 * outcome is known once every member of its bundle has a result (failed when one failed, with
 * that member's detail), and is reported to the pipeline once (`take`), as the policy's
 * `MotionOutcome` contract asks. In memory: a host that persists its state across restarts
 * keeps the outcomes it has not yet reported itself.
 */
export class MotionLedger {
  private readonly pending: Waiting[] = [];
  private readonly ready: MotionOutcome[] = [];

  /** `onOutcome` sees every outcome when it becomes known (an observer: it must not throw). */
  constructor(private readonly onOutcome?: (outcome: MotionOutcome) => void) {}

  /** The host issued this motion: wait for its members' results. `arrived` members need none (already on the target). */
  issued(motion: PendingMotion, time: number, arrived: (sid: string) => boolean = () => false): void {
    const waiting: Waiting = {
      resources: [...motion.resources],
      source: motion.source,
      target: motion.target,
      results: new Map(),
    };
    for (const sid of waiting.resources) if (arrived(sid)) waiting.results.set(sid, { ok: true });
    this.pending.push(waiting);
    this.complete(waiting, time);
  }

  /** The host did not issue the motion (refused it): a failure known now. */
  refused(motion: PendingMotion, time: number, detail = 'refused'): void {
    this.finish({
      resources: [...motion.resources],
      source: motion.source,
      target: motion.target,
      ok: false,
      at: time,
      detail,
    });
  }

  /**
   * A member's result arrived (its move to `target` ended): recorded in the first waiting
   * motion to `target` that has the member without a result. Returns whether one had it.
   */
  result(sid: string, target: string, result: MemberResult, time: number): boolean {
    const motion = this.pending.find((m) => m.target === target && m.resources.includes(sid) && !m.results.has(sid));
    if (!motion) return false;
    motion.results.set(sid, result);
    this.complete(motion, time);
    return true;
  }

  /**
   * Judges every member still without a result: `judge` returns its result, or `undefined`
   * while it is still on its way. A host calls it before each balancing round, so an outcome
   * is known no later than the round in which no motion is in flight any more.
   */
  settle(time: number, judge: (sid: string, motion: PendingMotion) => MemberResult | undefined): void {
    for (const motion of [...this.pending]) {
      for (const sid of motion.resources) {
        if (motion.results.has(sid)) continue;
        const result = judge(sid, motion);
        if (result) motion.results.set(sid, result);
      }
      this.complete(motion, time);
    }
  }

  /** Outcomes known since the last call, oldest first (each reported once). */
  take(): MotionOutcome[] {
    return this.ready.splice(0);
  }

  /** Whether the host waits for any motion. */
  get waiting(): boolean {
    return this.pending.length > 0;
  }

  private complete(motion: Waiting, time: number): void {
    if (motion.results.size < motion.resources.length) return;
    this.pending.splice(this.pending.indexOf(motion), 1);
    const failed = motion.resources.map((sid) => motion.results.get(sid)!).find((r) => !r.ok);
    const base = { resources: motion.resources, source: motion.source, target: motion.target, at: time };
    this.finish(failed ? { ...base, ok: false, detail: failed.detail } : { ...base, ok: true });
  }

  private finish(outcome: MotionOutcome): void {
    this.ready.push(outcome);
    this.onOutcome?.(outcome);
  }
}
