import type {
  DynamicNodeStats,
  DynamicServiceStats,
  Env,
  ServiceStatus,
  Snapshot,
  StaticNodeStats,
  StaticServiceStats,
} from '@poise/env';
import {
  ClusterUsage,
  UsageError,
  type MigrationCandidate,
  type NodeStats,
  type ResourceStats,
  type ScoredMigration,
  compareNames,
} from '@poise/usage';
import {
  nodeTelemetry,
  showValue,
  usageContext,
  type NodePressure,
  type NodeTelemetry,
  type UsageContext,
  type UsageContextOptions,
} from '@poise/policy';
import { BasicUsage, serviceUsageNodes, type OnlineNodeUsage } from './scheduler';
import { errorMessage, own } from './tools';

/** A service's stats could not be used: missing, or not a finite number >= 0. */
class ServiceStatsError extends Error {
  override readonly name = 'ServiceStatsError';
}

/** A stat value the scheduler can use: a finite number >= 0. */
function validStat(v: unknown): v is number {
  return typeof v === 'number' && v >= 0 && v < Infinity;
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'string') return `'${v}'`;
  return showValue(v);
}

/**
 * Checks one service's stats as reported by the Env (which does not validate them) and
 * returns them as the scheduler needs them. Throws {@link ServiceStatsError} naming the service
 * and field: no entry (`did not get static service usage information for '<sid>'`, the
 * reference's wording), a missing field, or a value that is not a finite number >= 0. A
 * reported `memhost` is used when `memhost`, and checked like the other stats then or when
 * `checkMemhost` (a guest reporting a negative footprint is not trusted either way).
 */
export function checkServiceStats(
  sid: string,
  mode: 'static' | 'dynamic',
  staticStats: Snapshot<StaticServiceStats> | undefined,
  dynamicStats: Snapshot<DynamicServiceStats> | undefined,
  memhost = false,
  checkMemhost = memhost,
): ResourceStats {
  if (!staticStats) throw new ServiceStatsError(`did not get static service usage information for '${sid}'`);
  const maxcpu: unknown = staticStats.maxcpu;
  const maxmem: unknown = staticStats.maxmem;
  if (!validStat(maxcpu)) throw invalidStat(sid, 'static', 'maxcpu', maxcpu);
  if (!validStat(maxmem)) throw invalidStat(sid, 'static', 'maxmem', maxmem);
  if (mode === 'static') return { cpu: maxcpu, maxcpu, mem: maxmem, maxmem };
  // a service that was not measured has no usage: it is not idle (no 0 in its place)
  if (!dynamicStats) throw new ServiceStatsError(`did not get dynamic service usage information for '${sid}'`);
  const cpu: unknown = dynamicStats.cpu;
  const mem: unknown = dynamicStats.mem;
  if (!validStat(cpu)) throw invalidStat(sid, 'dynamic', 'cpu', cpu);
  if (!validStat(mem)) throw invalidStat(sid, 'dynamic', 'mem', mem);
  // `ha-auto-rebalance-memhost`: the host-side footprint when the guest reports one
  const host: unknown = dynamicStats.memhost;
  if (host !== undefined && (memhost || checkMemhost)) {
    if (!validStat(host)) throw invalidStat(sid, 'dynamic', 'memhost', host);
    if (memhost) return { cpu, maxcpu, mem: host, maxmem };
  }
  return { cpu, maxcpu, mem, maxmem };
}

function invalidStat(sid: string, kind: string, key: string, value: unknown): ServiceStatsError {
  return new ServiceStatsError(
    `invalid ${kind} service usage information for '${sid}': '${key}' must be a finite number >= 0, got ${describeValue(value)}`,
  );
}

/**
 * The static or dynamic CRS usage on {@link ClusterUsage}, with the reference's semantics:
 * static counts every assigned service at its configured maxcpu/maxmem; dynamic uses the
 * measured node stats and adds starting services at their configured maxima for start scoring.
 *
 * A service whose stats are missing or invalid is left out of the usage with a warning
 * (`unable to add service '<sid>' - …`), as the reference does, instead of failing the round;
 * scoring nodes for such a service logs an error and falls back to the service counts (the
 * reference's fallback), so placement and recovery go on.
 */
export class CrsUsage implements OnlineNodeUsage {
  private readonly usage: ClusterUsage;
  private readonly nodes: string[];
  private readonly staticStats: Snapshot<Record<string, StaticServiceStats>>;
  private readonly dynamicStats: Snapshot<Record<string, DynamicServiceStats>> | undefined;
  /**
   * Services placed on a node but left out of the usage (stats missing or invalid), with the
   * node(s) they count on (one name, or current and target): with the usage's own counts per
   * node, the fallback scores.
   */
  private readonly unscored = new Map<string, string | readonly [string, string]>();
  private readonly isNode = (node: string): boolean => this.usage.hasNode(node);
  /** The measured node stats this usage was built from (dynamic mode), for the pressure telemetry. */
  private measured: Snapshot<Record<string, DynamicNodeStats>> | undefined;
  private readonly memhost: boolean;
  private readonly checkMemhost: boolean;

  constructor(
    private readonly env: Env,
    readonly mode: 'static' | 'dynamic',
    onlineNodes: string[],
    metric: 'raw' | 'normalized',
    options: UsageOptions = {},
  ) {
    this.memhost = options.memhost ?? false;
    this.checkMemhost = options.checkMemhost ?? this.memhost;
    this.usage = new ClusterUsage({ aggregation: mode, metric });
    this.nodes = [...onlineNodes];
    // what `renew` read already (it reads as this constructor does, in its order): not again
    const read = options.documents;
    if (mode === 'static') {
      const stats = read?.staticNodeStats ?? env.getStaticNodeStats();
      for (const node of onlineNodes) {
        const s = own(stats, node);
        if (!s || s.maxcpu === undefined || s.maxmem === undefined) {
          throw new Error(`missing static stats for node '${node}'`);
        }
        this.usage.addNode(node, { cpu: 0, maxcpu: Math.trunc(s.maxcpu), mem: 0, maxmem: Math.trunc(s.maxmem) });
      }
      this.staticStats = read?.staticServiceStats ?? env.getStaticServiceStats();
    } else {
      const stats = read?.dynamicNodeStats ?? env.getDynamicNodeStats();
      this.measured = stats;
      for (const node of onlineNodes) {
        const s = own(stats, node);
        if (!s) throw new Error(`missing dynamic stats for node '${node}'`);
        this.usage.addNode(node, {
          cpu: s.cpu,
          maxcpu: Math.trunc(s.maxcpu),
          mem: Math.trunc(s.mem),
          maxmem: Math.trunc(s.maxmem),
        });
      }
      this.staticStats = read?.staticServiceStats ?? env.getStaticServiceStats();
      this.dynamicStats = read?.dynamicServiceStats ?? env.getDynamicServiceStats();
    }
  }

  listNodes(): string[] {
    return this.nodes;
  }

  /**
   * Whether {@link renew} may be asked: every service added so far is part of the usage (none
   * was left out with a warning, which a rebuild would log again).
   */
  renewable(): boolean {
    return this.unscored.size === 0;
  }

  /**
   * Makes this usage what a new one on `onlineNodes` would be after the same services were
   * added again in the same order, when the only difference is the node stats. Reads the
   * documents the constructor reads, in its order and stopping where it would stop (the Env
   * may log while reading them), and returns `true` when the nodes are the same, every node
   * has valid stats, the service stats documents are the same snapshots as before and no
   * service was left out ({@link renewable}): then the nodes have taken the new stats, which the
   * usage re-folds in the order a new one would fold them. Otherwise it returns what it read,
   * for the new usage's constructor (`UsageOptions.documents`), and this usage is to be
   * dropped. The caller guarantees that the services (ids, placement, states) are those it
   * added.
   */
  renew(onlineNodes: readonly string[]): true | UsageDocuments {
    const same =
      this.renewable() && onlineNodes.length === this.nodes.length && onlineNodes.every((n, i) => n === this.nodes[i]);
    const env = this.env;
    const next: NodeStats[] = [];
    if (this.mode === 'static') {
      const staticNodeStats = env.getStaticNodeStats();
      for (const node of onlineNodes) {
        const s = own(staticNodeStats, node);
        if (!s || s.maxcpu === undefined || s.maxmem === undefined) return { staticNodeStats };
        next.push({ cpu: 0, maxcpu: Math.trunc(s.maxcpu), mem: 0, maxmem: Math.trunc(s.maxmem) });
      }
      const staticServiceStats = env.getStaticServiceStats();
      if (!same || staticServiceStats !== this.staticStats) return { staticNodeStats, staticServiceStats };
      if (!this.setNodeStats(onlineNodes, next)) return { staticNodeStats, staticServiceStats };
      this.measured = undefined; // read when first asked for, as by a new usage
      return true;
    }
    const dynamicNodeStats = env.getDynamicNodeStats();
    for (const node of onlineNodes) {
      const s = own(dynamicNodeStats, node);
      if (!s) return { dynamicNodeStats };
      next.push({ cpu: s.cpu, maxcpu: Math.trunc(s.maxcpu), mem: Math.trunc(s.mem), maxmem: Math.trunc(s.maxmem) });
    }
    const staticServiceStats = env.getStaticServiceStats();
    const dynamicServiceStats = env.getDynamicServiceStats();
    const read = { dynamicNodeStats, staticServiceStats, dynamicServiceStats };
    if (!same || staticServiceStats !== this.staticStats || dynamicServiceStats !== this.dynamicStats) return read;
    if (!this.setNodeStats(onlineNodes, next)) return read;
    this.measured = dynamicNodeStats;
    return true;
  }

  /** Gives every node its new stats; false when the usage refuses one (then it is to be dropped). */
  private setNodeStats(nodes: readonly string[], stats: readonly NodeStats[]): boolean {
    try {
      for (let i = 0; i < nodes.length; i++) this.usage.setNodeStats(nodes[i]!, stats[i]!);
    } catch (err) {
      if (err instanceof UsageError) return false;
      throw err;
    }
    return true;
  }

  containsNode(node: string): boolean {
    return this.usage.hasNode(node);
  }

  /** Whether the service is part of the usage (it has valid stats and occupies a node). */
  containsService(sid: string): boolean {
    return this.usage.hasResource(sid);
  }

  /** Service stats as the scheduler sees them (static: cpu = maxcpu, mem = maxmem). */
  private serviceStats(sid: string): ResourceStats {
    return checkServiceStats(
      sid,
      this.mode,
      own(this.staticStats, sid),
      own(this.dynamicStats, sid),
      this.memhost,
      this.checkMemhost,
    );
  }

  addServiceUsage(sid: string, sd: Snapshot<ServiceStatus>): void {
    this.removeServiceUsage(sid);
    const { current, target, running } = serviceUsageNodes(sd, this.isNode);
    if (current === undefined && target === undefined) return;
    // a service with no current node (request_start_balance) is placed on its target
    const home = (current ?? target)!;
    const moving = current !== undefined && target !== undefined && target !== current ? target : undefined;
    try {
      const stats = this.serviceStats(sid);
      const placement = moving === undefined ? { current: home } : { current: home, target: moving };
      this.usage.addResource(sid, { stats, state: running ? 'started' : 'starting', placement });
    } catch (err) {
      if (!(err instanceof ServiceStatsError || err instanceof UsageError)) throw err;
      // (a rejected addResource leaves the usage as it was: the service counts for the fallback only)
      this.unscored.set(sid, moving === undefined ? home : [home, moving]);
      this.env.log('warning', `unable to add service '${sid}' - ${errorMessage(err)}`);
    }
  }

  removeServiceUsage(sid: string): void {
    if (this.unscored.size > 0 && this.unscored.delete(sid)) return;
    if (this.usage.hasResource(sid)) this.usage.removeResource(sid);
  }

  /** The number of services on (or moving to) each node, whatever their stats (lower is better). */
  private serviceCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const node of this.nodes) counts.set(node, this.usage.nodeResourceCount(node));
    for (const nodes of this.unscored.values()) {
      if (typeof nodes === 'string') counts.set(nodes, counts.get(nodes)! + 1);
      else for (const n of nodes) counts.set(n, counts.get(n)! + 1);
    }
    return counts;
  }

  scoreNodesToStartService(sid: string): ReadonlyMap<string, number> {
    let scores;
    try {
      scores = this.usage.scoreNodesToStart(this.serviceStats(sid));
    } catch (err) {
      if (!(err instanceof ServiceStatsError || err instanceof UsageError)) throw err;
      this.env.log(
        'err',
        `unable to score nodes according to ${this.mode} usage for service '${sid}' - ${errorMessage(err)}`,
      );
      // the reference's fallback: the number of services per node (lower is better)
      return this.serviceCounts();
    }
    const res = new Map<string, number>();
    for (const { node, score } of scores) res.set(node, -score);
    return res;
  }

  calculateNodeImbalance(): number {
    return this.usage.nodeImbalance();
  }

  scoreBestBalancingMigrations(
    candidates: MigrationCandidate[],
    method: 'bruteforce' | 'topsis',
    limit: number,
  ): ScoredMigration[] {
    return this.usage.bestBalancingMigrations(candidates, method, limit);
  }

  /**
   * The balancer's context members on this usage (the policy's host kit, `usageContext`): the
   * imbalance and scoring, node telemetry with the measured pressure (PSI some avg10, percent,
   * from the measured node stats when the node reports it), guest telemetry, adjusted views and
   * the facts of candidates. Dynamic: the node stats are the measured ones (everything on the
   * node); static: what the services account for, their configured maxima (no residual).
   */
  context(options: Pick<UsageContextOptions, 'guardScore'> = {}): UsageContext {
    return usageContext(this.usage, { ...options, pressure: (node) => this.pressureOf(node) });
  }

  /** Per online node (byte order): the node telemetry of {@link context}. O(nodes + services). */
  nodeTelemetry(): NodeTelemetry[] {
    return nodeTelemetry(this.usage, (node) => this.pressureOf(node));
  }

  /** A node's measured pressure, read from the Env once (dynamic mode: the stats the usage was built from). */
  private pressureOf(node: string): NodePressure {
    const measured = (this.measured ??= this.env.getDynamicNodeStats());
    const m = own(measured, node);
    return { cpu: pressureValue(m?.pressurecpusome), mem: pressureValue(m?.pressurememorysome) };
  }

  /**
   * The services the usage holds, for the planner: sid, the node they are on (their current
   * node), their stats as the scheduler sees them (static: configured maxima) and whether they
   * are moving. Byte order of sid.
   */
  planGuests(): Array<{ sid: string; node: string; cpu: number; mem: number; moving: boolean }> {
    return [...this.usage.snapshot().resources]
      .sort((a, b) => compareNames(a.sid, b.sid))
      .map((r) => ({
        sid: r.sid,
        node: r.placement.current,
        cpu: r.stats.cpu,
        mem: r.stats.mem,
        moving: r.placement.target !== undefined,
      }));
  }
}

/** Options of the CRS usage model. */
export interface UsageOptions {
  /** `ha-auto-rebalance-memhost`: a guest's memory is its host-side footprint when reported. */
  memhost?: boolean;
  /**
   * A reported `memhost` that is not a finite number >= 0 leaves the service out of the usage
   * with the warning every other bad stat gets, even when `memhost` is not used (default: as
   * `memhost`; {@link createUsage} turns it on except under `pve-5.2.0`, whose reference knows
   * no `memhost`).
   */
  checkMemhost?: boolean;
  /** Documents already read from the Env this round ({@link CrsUsage.renew}), not to be read again. */
  documents?: UsageDocuments;
}

/** The Env documents a {@link CrsUsage} is built from, as far as they were read. */
export interface UsageDocuments {
  readonly staticNodeStats?: Snapshot<Record<string, StaticNodeStats>>;
  readonly dynamicNodeStats?: Snapshot<Record<string, DynamicNodeStats>>;
  readonly staticServiceStats?: Snapshot<Record<string, StaticServiceStats>>;
  readonly dynamicServiceStats?: Snapshot<Record<string, DynamicServiceStats>>;
}

/** A reported pressure value as it is (the pipeline range-checks it); undefined when absent. */
function pressureValue(v: unknown): number | undefined {
  return v === undefined || v === null ? undefined : (v as number);
}

/** Builds the usage model for a scheduler mode, falling back to basic as the reference does. */
export function createUsage(
  env: Env,
  mode: string,
  onlineNodes: string[],
  profile: string,
  options: UsageOptions = {},
): OnlineNodeUsage {
  const legacy = profile === 'pve-5.2.0';
  const metric = legacy ? 'raw' : 'normalized';
  if (mode === 'static' || mode === 'dynamic') {
    try {
      return new CrsUsage(env, mode, onlineNodes, metric, { checkMemhost: !legacy, ...options });
    } catch (err) {
      env.log('warning', `fallback to 'basic' scheduler mode, init for '${mode}' failed - ${errorMessage(err)}`);
    }
  } else if (mode !== 'basic') {
    env.log('warning', `got unknown scheduler mode '${mode}', using 'basic'`);
  }
  return new BasicUsage(onlineNodes);
}
