/**
 * The load pressure model at run time: from what runs where, each node's PSI "some" share
 * (cpu and memory), the avg10-like average a node reports (with noise and outliers), and every
 * guest's ground truth (time it wanted cpu and waited, memory stall, migration stall). The
 * hardware calls {@link LoadPressureModel.begin} at the start of a round with the loads that
 * hold during it and {@link LoadPressureModel.end} at its end; reported values change only
 * then. Deterministic: one generator of its own (seeded from the simulation's seed), drawn in
 * node byte order. See the package README, *Load pressure model*.
 */
import { Prng } from '../prng';
import { curveShare } from './curves';
import type { LoadPressureOptions, NodePressureOptions, ResourcePressureOptions } from './config';
import { compareNames } from '@poise/usage';

/** One running guest's demand on its node. */
export interface GuestLoad {
  readonly sid: string;
  /** Cores it uses (its measured cpu). */
  readonly cpu: number;
  /** Its virtual cpus (the configured `maxcpu`, at least 1). */
  readonly vcpus: number;
  /** Memory it holds on the host, bytes (`memhost`, else `mem`). */
  readonly memBytes: number;
}

/** What a node carries at one moment. */
export interface NodeLoad {
  readonly node: string;
  /** The node's cores. */
  readonly cores: number;
  /** The node's physical memory, bytes. */
  readonly memBytes: number;
  /** Load outside the HA guests (host processes, other guests; base load and noise), cores. */
  readonly hostCpu: number;
  /** Memory outside the HA guests, bytes. */
  readonly hostMemBytes: number;
  /** Running guests, in sid byte order. */
  readonly guests: readonly GuestLoad[];
}

/** One node's state under a load (noise-free, instantaneous). */
export interface NodePressure {
  readonly node: string;
  /** cpu demand / (cores × capacity factor). */
  readonly cpuRatio: number;
  /** Memory in use / physical memory. */
  readonly memRatio: number;
  /** PSI cpu some share, 0..1. */
  readonly cpuShare: number;
  /** PSI memory some share, 0..1. */
  readonly memShare: number;
}

/** One guest's ground truth (shares: now; seconds: summed since the start). */
export interface GuestContention {
  /** The node it ran on at the last evaluation (undefined once it no longer runs). */
  readonly node: string | undefined;
  /** Share of the time it wants cpu (at least one vcpu runnable), 0..1. */
  readonly wantShare: number;
  /** Share of the time it wanted cpu and waited, 0..1 (wantShare × the node's cpu wait). */
  readonly cpuWaitShare: number;
  /** Share of the time it is stalled on memory, 0..1. */
  readonly memStallShare: number;
  readonly cpuStallSeconds: number;
  readonly memStallSeconds: number;
  readonly migrationStallSeconds: number;
}

/** A node's guests' ground truth summed since the start, seconds (migration stalls: charged to the source). */
export interface NodeContention {
  readonly cpuStallSeconds: number;
  readonly memStallSeconds: number;
  readonly migrationStallSeconds: number;
}

/**
 * A guest's cpu stall share: the share of the time it wants cpu × the node's cpu some share (a
 * runnable vcpu finds the run queue backed up as often as the node has a waiting task). Never
 * less for more demand: both factors grow with it.
 */
export function guestCpuStall(want: number, cpuShare: number): number {
  return want * cpuShare;
}

/** A guest's memory stall share: the node's memory some share, for a guest that holds memory on it. */
export function guestMemStall(memBytes: number, memShare: number): number {
  return memBytes > 0 ? memShare : 0;
}

/** Separates the model's random stream from the node noise's (same seed, another generator). */
const PRESSURE_STREAM = 0x70726573; // "pres"

/**
 * Share of the time a guest with `vcpus` virtual cpus using `cpu` cores has at least one vcpu
 * runnable: 1 − (1 − u)^v with u = min(1, cpu / v), the vcpus busy independently.
 */
export function wantShare(cpu: number, vcpus: number): number {
  if (!(cpu > 0)) return 0;
  const v = Math.max(1, vcpus);
  const u = Math.min(1, cpu / v);
  return 1 - (1 - u) ** v;
}

interface NodeState {
  readonly name: string;
  readonly capacityFactor: number;
  readonly cpu: ResourcePressureOptions;
  readonly memory: ResourcePressureOptions;
  readonly psi: boolean;
  avgCpu: number;
  avgMem: number;
  reportedCpu: number;
  reportedMem: number;
  cpuStall: number;
  memStall: number;
  migrationStall: number;
}

interface GuestState {
  node: string | undefined;
  want: number;
  cpuRate: number;
  memRate: number;
  cpuStall: number;
  memStall: number;
  migrationStall: number;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export class LoadPressureModel {
  private readonly nodes: NodeState[] = [];
  private readonly byName = new Map<string, NodeState>();
  private readonly guests = new Map<string, GuestState>();
  private readonly prng: Prng;
  /** The per-node state of the round running (from `begin`). */
  private current: readonly NodePressure[] = [];

  /** `nodeNames` in byte order; `seed` the simulation's. */
  constructor(
    readonly options: LoadPressureOptions,
    nodeNames: readonly string[],
    seed: number,
  ) {
    this.prng = new Prng((seed ^ PRESSURE_STREAM) >>> 0);
    for (const name of nodeNames) {
      // one draw per node whatever the settings, so a node's factor does not depend on the others'
      const u = this.prng.nextSigned();
      const own: NodePressureOptions | undefined = Object.hasOwn(options.nodes, name) ? options.nodes[name] : undefined;
      const state: NodeState = {
        name,
        capacityFactor: own?.capacityFactor ?? 1 + options.heterogeneity * u,
        cpu: own?.cpu ?? options.cpu,
        memory: own?.memory ?? options.memory,
        psi: own?.psi ?? true,
        avgCpu: 0,
        avgMem: 0,
        reportedCpu: 0,
        reportedMem: 0,
        cpuStall: 0,
        memStall: 0,
        migrationStall: 0,
      };
      this.nodes.push(state);
      this.byName.set(name, state);
    }
  }

  /** A node's cpu capacity factor (drawn or configured). */
  capacityFactor(node: string): number {
    return this.byName.get(node)!.capacityFactor;
  }

  /**
   * The state of one node under `load` (noise-free, instantaneous). Pure with respect to the
   * model (reads only the node's fixed settings). O(guests on the node + the queue's servers).
   */
  evaluateNode(load: NodeLoad): NodePressure {
    const n = this.byName.get(load.node)!;
    const cores = load.cores * n.capacityFactor;
    let demand = load.hostCpu;
    let mem = load.hostMemBytes;
    for (const g of load.guests) {
      demand += g.cpu;
      mem += g.memBytes;
    }
    const cpuRatio = cores > 0 ? demand / cores : 0;
    const memRatio = load.memBytes > 0 ? mem / load.memBytes : 0;
    return {
      node: load.node,
      cpuRatio,
      memRatio,
      cpuShare: clamp01(curveShare(n.cpu.curve, cpuRatio, cores)),
      memShare: clamp01(curveShare(n.memory.curve, memRatio, cores)),
    };
  }

  /** Every node's state under `loads` (one per node, byte order). */
  evaluate(loads: readonly NodeLoad[]): NodePressure[] {
    return loads.map((l) => this.evaluateNode(l));
  }

  /**
   * The start of a round: `loads` hold until {@link end}. Sets every running guest's shares;
   * a guest that no longer runs keeps its totals and gets no share.
   */
  begin(loads: readonly NodeLoad[]): void {
    this.current = this.evaluate(loads);
    for (const g of this.guests.values()) {
      g.node = undefined;
      g.want = 0;
      g.cpuRate = 0;
      g.memRate = 0;
    }
    loads.forEach((load, i) => {
      const p = this.current[i]!;
      for (const x of load.guests) {
        const g = this.guest(x.sid);
        g.node = load.node;
        g.want = wantShare(x.cpu, x.vcpus);
        g.cpuRate = guestCpuStall(g.want, p.cpuShare);
        g.memRate = guestMemStall(x.memBytes, p.memShare);
      }
    });
  }

  /**
   * The end of a round of `seconds`: every running guest's stall accrues at its share, each
   * node's average moves towards the round's share (`avg ← s + (avg − s)·e^(−Δ/τ)`), and the
   * reported values are drawn (noise, outliers; nodes in byte order, cpu then memory).
   */
  end(seconds: number): void {
    for (const g of this.guests.values()) {
      if (g.node === undefined) continue;
      const n = this.byName.get(g.node)!;
      g.cpuStall += g.cpuRate * seconds;
      g.memStall += g.memRate * seconds;
      n.cpuStall += g.cpuRate * seconds;
      n.memStall += g.memRate * seconds;
    }
    const byNode = new Map(this.current.map((p) => [p.node, p]));
    for (const n of this.nodes) {
      const p = byNode.get(n.name);
      n.avgCpu = decay(n.avgCpu, p?.cpuShare ?? 0, seconds, n.cpu.delaySeconds);
      n.avgMem = decay(n.avgMem, p?.memShare ?? 0, seconds, n.memory.delaySeconds);
      n.reportedCpu = this.report(n.avgCpu, n.cpu);
      n.reportedMem = this.report(n.avgMem, n.memory);
    }
  }

  private report(avg: number, r: ResourcePressureOptions): number {
    let v = avg * 100;
    if (r.noisePercent > 0) v += this.prng.nextSigned() * r.noisePercent;
    if (r.outlierProbability > 0 && this.prng.nextUint32() / 2 ** 32 < r.outlierProbability) v += r.outlierPercent;
    return round2(Math.min(100, Math.max(0, v)));
  }

  /**
   * A migration's cost to the guest: a live one stalls it for the copy time × the stall share
   * plus the final pause; a relocation takes it down for `relocate-seconds`. Charged to the
   * guest and to the source node's migration stall.
   */
  chargeMigration(sid: string, source: string, live: boolean, memBytes: number): number {
    const m = this.options.migration;
    const seconds = live
      ? (memBytes / 1024 ** 2 / m.bandwidthMiBPerSecond) * m.stallShare + m.downtimeSeconds
      : m.relocateSeconds;
    this.guest(sid).migrationStall += seconds;
    const n = this.byName.get(source);
    if (n) n.migrationStall += seconds;
    return seconds;
  }

  /** What a node reports (percent, avg10-like, noisy); undefined for a node without PSI. */
  reported(node: string): { cpu: number; mem: number } | undefined {
    const n = this.byName.get(node);
    if (!n?.psi) return undefined;
    return { cpu: n.reportedCpu, mem: n.reportedMem };
  }

  /** Every node's guests' stall totals, by node (byte order). */
  nodeTotals(): Map<string, NodeContention> {
    return new Map(
      this.nodes.map((n) => [
        n.name,
        { cpuStallSeconds: n.cpuStall, memStallSeconds: n.memStall, migrationStallSeconds: n.migrationStall },
      ]),
    );
  }

  /** Every guest's ground truth, by sid (byte order). */
  guestTotals(): Map<string, GuestContention> {
    const out = new Map<string, GuestContention>();
    for (const sid of [...this.guests.keys()].sort(compareNames)) {
      const g = this.guests.get(sid)!;
      out.set(sid, {
        node: g.node,
        wantShare: g.want,
        cpuWaitShare: g.cpuRate,
        memStallShare: g.memRate,
        cpuStallSeconds: g.cpuStall,
        memStallSeconds: g.memStall,
        migrationStallSeconds: g.migrationStall,
      });
    }
    return out;
  }

  private guest(sid: string): GuestState {
    let g = this.guests.get(sid);
    if (!g)
      this.guests.set(
        sid,
        (g = { node: undefined, want: 0, cpuRate: 0, memRate: 0, cpuStall: 0, memStall: 0, migrationStall: 0 }),
      );
    return g;
  }
}

/** The exponentially decaying average after `seconds` at a constant `share` (time constant `tau`; 0: no delay). */
export function decay(avg: number, share: number, seconds: number, tau: number): number {
  if (!(tau > 0)) return share;
  return share + (avg - share) * Math.exp(-seconds / tau);
}

function clamp01(x: number): number {
  return x > 1 ? 1 : x > 0 ? x : 0;
}
