import type { Env, ServiceStatus } from '@poise/env';
import { ClusterUsage, type MigrationCandidate, type ResourceStats, type ScoredMigration } from '@poise/usage';
import { BasicUsage, serviceUsageNodes, type OnlineNodeUsage } from './scheduler';
import { errorMessage } from './crm';

/**
 * The static or dynamic CRS usage on {@link ClusterUsage}, with the reference's semantics:
 * static counts every assigned service at its configured maxcpu/maxmem; dynamic uses the
 * measured node stats and adds starting services at their configured maxima for start scoring.
 */
export class CrsUsage implements OnlineNodeUsage {
  private readonly usage: ClusterUsage;
  private readonly nodes: string[];
  private readonly staticStats: Record<string, { maxcpu: number; maxmem: number }>;
  private readonly dynamicStats: Record<string, { cpu: number; mem: number }>;

  constructor(
    private readonly env: Env,
    readonly mode: 'static' | 'dynamic',
    onlineNodes: string[],
    metric: 'raw' | 'normalized',
  ) {
    this.usage = new ClusterUsage({ aggregation: mode, metric });
    this.staticStats = env.getStaticServiceStats();
    this.dynamicStats = mode === 'dynamic' ? env.getDynamicServiceStats() : {};
    this.nodes = [...onlineNodes];
    if (mode === 'static') {
      const stats = env.getStaticNodeStats();
      for (const node of onlineNodes) {
        const s = stats[node];
        if (!s || s.maxcpu === undefined || s.maxmem === undefined) {
          throw new Error(`missing static stats for node '${node}'`);
        }
        this.usage.addNode(node, { cpu: 0, maxcpu: Math.trunc(s.maxcpu), mem: 0, maxmem: Math.trunc(s.maxmem) });
      }
    } else {
      const stats = env.getDynamicNodeStats();
      for (const node of onlineNodes) {
        const s = stats[node];
        if (!s) throw new Error(`missing dynamic stats for node '${node}'`);
        this.usage.addNode(node, { cpu: s.cpu, maxcpu: Math.trunc(s.maxcpu), mem: Math.trunc(s.mem), maxmem: Math.trunc(s.maxmem) });
      }
    }
  }

  listNodes(): string[] {
    return this.nodes;
  }

  containsNode(node: string): boolean {
    return this.usage.hasNode(node);
  }

  /** Service stats as the scheduler sees them (static: cpu = maxcpu, mem = maxmem). */
  private serviceStats(sid: string): ResourceStats {
    const st = this.staticStats[sid];
    if (!st) throw new Error(`no static stats for service '${sid}'`);
    if (this.mode === 'static') {
      return { cpu: st.maxcpu, maxcpu: st.maxcpu, mem: st.maxmem, maxmem: st.maxmem };
    }
    const dyn = this.dynamicStats[sid] ?? { cpu: 0, mem: 0 };
    return { cpu: dyn.cpu ?? 0, maxcpu: st.maxcpu, mem: dyn.mem ?? 0, maxmem: st.maxmem };
  }

  addServiceUsage(sid: string, sd: ServiceStatus): void {
    if (this.usage.hasResource(sid)) this.usage.removeResource(sid);
    const { current, target, running } = serviceUsageNodes(sd, (n) => this.usage.hasNode(n));
    if (current === undefined && target === undefined) return;
    let stats: ResourceStats;
    try {
      stats = this.serviceStats(sid);
    } catch (err) {
      this.env.log('warning', `unable to add service '${sid}' - ${errorMessage(err)}`);
      return;
    }
    const placement = current !== undefined
      ? target !== undefined && target !== current ? { current, target } : { current }
      : { current: target! };
    this.usage.addResource(sid, { stats, state: running ? 'started' : 'starting', placement });
  }

  removeServiceUsage(sid: string): void {
    if (this.usage.hasResource(sid)) this.usage.removeResource(sid);
  }

  scoreNodesToStartService(sid: string): Record<string, number> {
    const stats = this.serviceStats(sid);
    const res: Record<string, number> = {};
    for (const { node, score } of this.usage.scoreNodesToStart(stats)) res[node] = -score;
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
}

/** Builds the usage model for a scheduler mode, falling back to basic as the reference does. */
export function createUsage(env: Env, mode: string, onlineNodes: string[], profile: string): OnlineNodeUsage {
  const metric = profile === 'pve-5.2.0' ? 'raw' : 'normalized';
  if (mode === 'static' || mode === 'dynamic') {
    try {
      return new CrsUsage(env, mode, onlineNodes, metric);
    } catch (err) {
      env.log('warning', `fallback to 'basic' scheduler mode, init for '${mode}' failed - ${errorMessage(err)}`);
    }
  } else if (mode !== 'basic') {
    env.log('warning', `got unknown scheduler mode '${mode}', using 'basic'`);
  }
  return new BasicUsage(onlineNodes);
}
