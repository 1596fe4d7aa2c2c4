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
import { estimateMigration, type MigrationEstimate } from '@poise/contention';

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
function guestMemStall(memBytes: number, memShare: number): number {
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
  /** Extra cpu stall share while migrations run on its node (the round's, from `begin`). */
  migrationRate: number;
  cpuStall: number;
  memStall: number;
  migrationStall: number;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** A live migration as the cluster reports it once done (PVE: a `qmigrate` task and its log). */
export interface FinishedMigrationRecord {
  readonly sid: string;
  readonly source: string;
  readonly target: string;
  /** From its start to its end, seconds. */
  readonly durationSeconds: number;
  /** Memory sent, bytes. */
  readonly transferredBytes: number;
  /** false: it did not converge in time (the guest stayed). */
  readonly converged: boolean;
}

/** Finished migrations the model keeps for {@link LoadPressureModel.finishedMigrations}. */
const FINISHED_MIGRATIONS_KEPT = 50;

/** A migration whose transfer still runs (its cpu on both ends). */
interface RunningMigration {
  readonly sid: string;
  readonly source: string;
  readonly target: string;
  /** Cores the transfer keeps busy on each end. */
  readonly cores: number;
  /** Seconds of transfer left. */
  remainingSeconds: number;
}

/** A node's migration load in the round running (from `begin`). */
interface MigrationLoad {
  /** The node's cpu share with the transfers minus without, 0..1. */
  readonly extraCpuShare: number;
  /** Seconds of the round the transfers run (the longest remaining, at most the round). */
  readonly remainingSeconds: number;
}

export class LoadPressureModel {
  private readonly nodes: NodeState[] = [];
  private readonly byName = new Map<string, NodeState>();
  private readonly guests = new Map<string, GuestState>();
  private readonly prng: Prng;
  /** The per-node state of the round running (from `begin`), without the migrations' cpu. */
  private current: readonly NodePressure[] = [];
  /** Transfers still running, in start order. */
  private running: RunningMigration[] = [];
  /** Per node with transfers in the round running: their effect (from `begin`). */
  private migrationLoad = new Map<string, MigrationLoad>();
  /** How many of `running` were running at `begin` (those started later begin with the next round). */
  private runningAtBegin = 0;
  /** The newest finished live migrations, oldest first (at most {@link FINISHED_MIGRATIONS_KEPT}). */
  private finished: FinishedMigrationRecord[] = [];

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
   * a guest that no longer runs keeps its totals and gets no share. A node with migration
   * transfers running carries their cpu too: each of its guests gets the extra cpu stall
   * share they cause (`migrationRate`), charged to its migration stall. `evaluated` is
   * {@link evaluate}`(loads)` when the caller has it already (the evaluation is pure).
   */
  begin(loads: readonly NodeLoad[], evaluated: readonly NodePressure[] = this.evaluate(loads)): void {
    this.current = evaluated;
    for (const g of this.guests.values()) {
      g.node = undefined;
      g.want = 0;
      g.cpuRate = 0;
      g.memRate = 0;
      g.migrationRate = 0;
    }
    this.migrationLoad = this.evaluateMigrations(loads);
    this.runningAtBegin = this.running.length;
    loads.forEach((load, i) => {
      const p = this.current[i]!;
      const extra = this.migrationLoad.get(load.node)?.extraCpuShare ?? 0;
      for (const x of load.guests) {
        const g = this.guest(x.sid);
        g.node = load.node;
        g.want = wantShare(x.cpu, x.vcpus);
        g.cpuRate = guestCpuStall(g.want, p.cpuShare);
        g.memRate = guestMemStall(x.memBytes, p.memShare);
        g.migrationRate = guestCpuStall(g.want, extra);
      }
    });
  }

  /** Per node with running transfers: the extra cpu share they cause and how long they run this round. */
  private evaluateMigrations(loads: readonly NodeLoad[]): Map<string, MigrationLoad> {
    const out = new Map<string, MigrationLoad>();
    if (this.running.length === 0) return out;
    const cores = new Map<string, number>();
    const remaining = new Map<string, number>();
    for (const m of this.running) {
      for (const node of [m.source, m.target]) {
        cores.set(node, (cores.get(node) ?? 0) + m.cores);
        remaining.set(node, Math.max(remaining.get(node) ?? 0, m.remainingSeconds));
      }
    }
    loads.forEach((load, i) => {
      const extraCores = cores.get(load.node);
      if (extraCores === undefined) return;
      const withTransfers = this.evaluateNode({ ...load, hostCpu: load.hostCpu + extraCores });
      out.set(load.node, {
        extraCpuShare: Math.max(0, withTransfers.cpuShare - this.current[i]!.cpuShare),
        remainingSeconds: remaining.get(load.node)!,
      });
    });
    return out;
  }

  /**
   * The end of a round of `seconds`: every running guest's stall accrues at its share (the
   * migrations' extra share for the part of the round their transfers ran), each node's average
   * moves towards the round's share (`avg ← s + (avg − s)·e^(−Δ/τ)`, the transfers' share
   * weighted by the part of the round they ran), and the reported values are drawn (noise,
   * outliers; nodes in byte order, cpu then memory). Transfers then advance by `seconds`.
   */
  end(seconds: number): void {
    for (const g of this.guests.values()) {
      if (g.node === undefined) continue;
      const n = this.byName.get(g.node)!;
      g.cpuStall += g.cpuRate * seconds;
      g.memStall += g.memRate * seconds;
      n.cpuStall += g.cpuRate * seconds;
      n.memStall += g.memRate * seconds;
      if (g.migrationRate > 0) {
        const during = Math.min(seconds, this.migrationLoad.get(g.node)!.remainingSeconds);
        g.migrationStall += g.migrationRate * during;
        n.migrationStall += g.migrationRate * during;
      }
    }
    const byNode = new Map(this.current.map((p) => [p.node, p]));
    for (const n of this.nodes) {
      const p = byNode.get(n.name);
      const m = this.migrationLoad.get(n.name);
      const extra = m && seconds > 0 ? (m.extraCpuShare * Math.min(seconds, m.remainingSeconds)) / seconds : 0;
      n.avgCpu = decay(n.avgCpu, (p?.cpuShare ?? 0) + extra, seconds, n.cpu.delaySeconds);
      n.avgMem = decay(n.avgMem, p?.memShare ?? 0, seconds, n.memory.delaySeconds);
      n.reportedCpu = this.report(n.avgCpu, n.cpu);
      n.reportedMem = this.report(n.avgMem, n.memory);
    }
    // the transfers that ran this round advance; one started during the round (after `begin`)
    // starts with the next
    if (this.runningAtBegin > 0) {
      for (let i = 0; i < this.runningAtBegin; i++) this.running[i]!.remainingSeconds -= seconds;
      this.running = this.running.filter((m) => m.remainingSeconds > 0);
    }
    this.runningAtBegin = 0;
    this.migrationLoad = new Map();
  }

  private report(avg: number, r: ResourcePressureOptions): number {
    let v = avg * 100;
    if (r.noisePercent > 0) v += this.prng.nextSigned() * r.noisePercent;
    if (r.outlierProbability > 0 && this.prng.nextUint32() / 2 ** 32 < r.outlierProbability) v += r.outlierPercent;
    return round2(Math.min(100, Math.max(0, v)));
  }

  /**
   * Prices a live migration of `guest` from `source` to `target` with the migration model
   * (`@poise/contention` `estimateMigration`): the link shared with the transfers already
   * running at either end. Pure: nothing is charged (see {@link chargeMigration}).
   */
  priceMigration(
    source: string,
    target: string,
    guest: { readonly cpu: number; readonly vcpus: number; readonly memBytes: number },
  ): MigrationEstimate {
    let atSource = 1;
    let atTarget = 1;
    for (const m of this.running) {
      if (m.source === source || m.target === source) atSource++;
      if (m.source === target || m.target === target) atTarget++;
    }
    return estimateMigration(this.options.migration.model, {
      memBytes: guest.memBytes,
      cpuCores: guest.cpu,
      vcpus: Math.max(1, Math.ceil(guest.vcpus)),
      sourceMigrations: atSource,
      targetMigrations: atTarget,
    });
  }

  /**
   * Charges a migration's cost: a live one (`estimate` from {@link priceMigration}) costs the
   * guest its `guestSeconds` (the slowdown while it migrates, the pause, the throttle) and
   * starts its transfer, whose cpu raises both ends' pressure for its duration (what the other
   * guests pay, charged in {@link end}); a relocation takes the guest down for
   * `relocate-seconds`. The guest's own cost is charged to the source node's migration stall.
   * Returns the guest's own seconds.
   */
  chargeMigration(sid: string, source: string, target: string, estimate: MigrationEstimate | undefined): number {
    const seconds = estimate ? estimate.guestSeconds : this.options.migration.relocateSeconds;
    this.guest(sid).migrationStall += seconds;
    const n = this.byName.get(source);
    if (n) n.migrationStall += seconds;
    if (estimate) {
      this.finished.push({
        sid,
        source,
        target,
        durationSeconds: estimate.durationSeconds,
        transferredBytes: estimate.transferredBytes,
        converged: estimate.converged,
      });
      if (this.finished.length > FINISHED_MIGRATIONS_KEPT) this.finished.shift();
    }
    if (estimate && estimate.transferCpuCores > 0 && estimate.durationSeconds > 0)
      this.running.push({
        sid,
        source,
        target,
        cores: estimate.transferCpuCores,
        remainingSeconds: estimate.durationSeconds,
      });
    return seconds;
  }

  /**
   * The newest finished live migrations (oldest first, at most 50),
   * as a cluster's task logs report them; a migration counts from the moment the guest moves
   * (the simulated HA stack moves it at once; its transfer's cpu runs after).
   */
  finishedMigrations(): readonly FinishedMigrationRecord[] {
    return this.finished;
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
        (g = {
          node: undefined,
          want: 0,
          cpuRate: 0,
          memRate: 0,
          migrationRate: 0,
          cpuStall: 0,
          memStall: 0,
          migrationStall: 0,
        }),
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
