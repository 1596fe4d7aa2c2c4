/**
 * What the simulated cluster measures: the services' configured and measured usage, every
 * node's load outside the HA services (`node <node> set-dynamic-stats`) with its noise
 * (`node <node> set-noise`), the node usage the daemons read, and the loads the load pressure
 * model is fed. The hardware owns where services are configured and whether they run; this
 * module reads both through {@link GuestPlacement}.
 */
import {
  nullRecord,
  openRecord,
  sealRecord,
  snapshot,
  thaw,
  type DynamicNodeStats,
  type DynamicServiceStats,
  type Snapshot,
  type StaticServiceStats,
} from '@poise/env';
import type { CaseInput, HardwareNode } from './case';
import type { Command } from './commands';
import { SimError } from './errors';
import { walkStep } from './noise';
import { Prng } from './prng';
import type { GuestLoad, LoadPressureModel, NodeLoad, NodePressure } from './pressure/model';
import { KeyedStore } from './store';

/** Default node capacity for the dynamic stats. */
const DYNAMIC_NODE_DEFAULT_MAXCPU = 24;
const DYNAMIC_NODE_DEFAULT_MAXMEM = 128 * 1024 ** 3;

const MiB = 1024 ** 2;

/** A node's load and pressure outside the HA services (`node <node> set-dynamic-stats`). */
interface NodeBase {
  /** Cores. */
  cpu: number;
  /** Bytes. */
  mem: number;
  /** PSI some avg10, percent; undefined until set (the node reports no pressure). */
  pressureCpu?: number;
  pressureMem?: number;
}

/** The random walk on a node's base load (`node <node> set-noise`): amplitudes and the current offsets. */
interface NodeNoise {
  /** Amplitude, cores. */
  cpu: number;
  /** Amplitude, bytes. */
  mem: number;
  /** Current offsets (cores, bytes). */
  cpuOffset: number;
  memOffset: number;
}

/** What the measurements read of the hardware: its nodes, and where each service is configured and runs. */
export interface GuestPlacement {
  /** Node names in byte order. */
  readonly nodeNames: readonly string[];
  /** A node's hardware state (capacity), undefined for an unknown node. */
  nodeHardware(node: string): Readonly<HardwareNode> | undefined;
  /** The configured services' ids in byte order. */
  sortedSids(): readonly string[];
  /** The node a service is configured on, undefined for a service not configured. */
  configNode(sid: string): string | undefined;
  isRunning(node: string, sid: string): boolean;
}

/** What the measurements need besides the placement. */
export interface MeasurementOptions {
  /** Sums as the reference does (`pve-5.2.0`): configured stats whatever runs, missing values count 0. */
  readonly legacy: boolean;
  /** The load pressure model, when node pressure follows from the load. */
  readonly loadModel: LoadPressureModel | undefined;
  /** Seed of the node noise. */
  readonly seed: number;
  /** Writes a line of the hardware's log. */
  readonly log: (level: string, msg: string) => void;
}

/** What a node's running services add to its measured usage, in the order it is summed (cores, bytes). */
interface NodeContribution {
  readonly cpu: number[];
  readonly mem: number[];
}

/** A finite number >= 0: the only stat value the pve-9.2 hardware adds to a node's usage. */
function validMeasure(v: unknown): v is number {
  return typeof v === 'number' && v >= 0 && v < Infinity;
}

/** The stats of the services and nodes of one simulated cluster (see the file comment). */
export class Measurements {
  private readonly staticStats = new KeyedStore<Record<string, unknown>>();
  private readonly dynamicStats = new KeyedStore<Record<string, unknown>>();
  /** Node load and pressure outside the HA services, by node. */
  private readonly nodeBase = new Map<string, NodeBase>();
  /** Node noise walks, by node. */
  private readonly nodeNoise = new Map<string, NodeNoise>();
  private readonly prng: Prng;
  /**
   * Bumped whenever what the measured service stats depend on changes (running flags, config
   * nodes, the stats themselves), so the measured document is rebuilt only then.
   */
  private measureVersion = 0;
  private measuredServices: { version: number; doc: Snapshot<Record<string, DynamicServiceStats>> } | undefined;
  /** Bumped whenever a service's static or dynamic stats change (`set-static-stats`, `set-dynamic-stats`, a deletion). */
  private statsVersion = 0;
  /** The overcommit warnings of the services' stats, for {@link statsVersion}. */
  private overcommitted: { version: number; warnings: readonly string[] } | undefined;
  /** Bumped whenever a node's load outside the services changes (`set-dynamic-stats`, `set-noise`, a noise step). */
  private hostVersion = 0;
  /**
   * Per node, what its running services add to its measured usage, in sid byte order (the
   * order {@link measureNodes} sums in), for {@link measureVersion}: the pass over every
   * service is made once per change, not once per read.
   */
  private contributions: { version: number; byNode: Map<string, NodeContribution> } | undefined;
  /**
   * Per node, its running guests as the load pressure model sees them (sid byte order), for
   * {@link measureVersion}: it moves with everything they are made of (running flags, config
   * nodes, the services' static and dynamic stats); the nodes and their capacity never change.
   */
  private guestLoads: { version: number; byNode: Map<string, GuestLoad[]> } | undefined;
  /**
   * The last {@link nodeLoads} result for the versions it was made at (the guests by
   * {@link measureVersion}, the host load by {@link hostVersion}), and its noise-free pressure
   * once asked for: a round's start and the previous round's sample see the same loads when no
   * command ran between them, so they are built and evaluated once. Neither the model nor any
   * caller changes them (`readonly` all the way down).
   */
  private loads:
    | {
        version: number;
        hostVersion: number;
        loads: readonly NodeLoad[];
        truth: readonly NodePressure[] | undefined;
      }
    | undefined;
  /** The last {@link measureNodes} result and its snapshot, for the versions it was made at (scripted pressure only). */
  private measuredNodes:
    | {
        version: number;
        hostVersion: number;
        res: Record<string, DynamicNodeStats>;
        doc: Snapshot<Record<string, DynamicNodeStats>> | undefined;
      }
    | undefined;

  constructor(
    input: Pick<CaseInput, 'staticServiceStats' | 'dynamicServiceStats'>,
    private readonly placement: GuestPlacement,
    private readonly options: MeasurementOptions,
  ) {
    this.prng = new Prng(options.seed);
    // copies: a caller's changes to its input never reach a running simulation
    for (const sid of Object.keys(input.staticServiceStats))
      this.staticStats.set(sid, thaw(input.staticServiceStats[sid]!));
    for (const sid of Object.keys(input.dynamicServiceStats))
      this.dynamicStats.set(sid, thaw(input.dynamicServiceStats[sid]!));
  }

  /** Marks what the measured service stats depend on (running flags, config nodes) as changed. */
  placementChanged(): void {
    this.measureVersion++;
  }

  // --- commands ------------------------------------------------------------------------------

  /** `service <sid> set-static-stats|set-dynamic-stats` (values: cores, MiB). */
  setServiceStats(command: Extract<Command, { kind: 'service-stats' }>): void {
    const store = command.which === 'static' ? this.staticStats : this.dynamicStats;
    const entry = store.get(command.sid) ?? nullRecord<unknown>();
    for (const [key, value] of command.values) {
      entry[key] = key === 'maxmem' || key === 'mem' || key === 'memhost' ? value * MiB : value;
    }
    store.set(command.sid, entry);
    this.measureVersion++;
    this.statsVersion++;
  }

  /** A service deleted from the config: its static stats go with it. */
  serviceDeleted(sid: string): void {
    this.staticStats.delete(sid);
    this.measureVersion++;
    this.statsVersion++;
  }

  /** `node <node> set-dynamic-stats` and `node <node> set-noise` (values: cores, MiB, percent). */
  setNode(command: Extract<Command, { kind: 'node-stats' | 'node-noise' }>): void {
    if (command.kind === 'node-stats') {
      if (this.options.loadModel) {
        const scripted = command.values.find(([key]) => key.startsWith('pressure'));
        if (scripted)
          throw new SimError(
            'command-failed',
            `'${scripted[0]}' is scripted pressure, but the load pressure model computes node pressure (sim_options 'pressure-model' 'load')`,
          );
      }
      const base = this.nodeBase.get(command.node) ?? { cpu: 0, mem: 0 };
      for (const [key, value] of command.values) {
        if (key === 'cpu') base.cpu = value;
        else if (key === 'mem') base.mem = value * MiB;
        else if (key === 'pressurecpusome') base.pressureCpu = value;
        else base.pressureMem = value;
      }
      this.nodeBase.set(command.node, base);
      this.hostVersion++;
      return;
    }
    const noise = this.nodeNoise.get(command.node) ?? { cpu: 0, mem: 0, cpuOffset: 0, memOffset: 0 };
    for (const [key, value] of command.values) {
      if (key === 'cpu') noise.cpu = value;
      else noise.mem = value * MiB;
    }
    this.nodeNoise.set(command.node, noise);
    this.hostVersion++;
  }

  /**
   * Moves every node's noise one step (see `noise.ts`): nodes in byte order, cpu then mem.
   * Called at the end of every round, so the next round's manager sees the new values.
   */
  resampleNoise(): void {
    if (this.nodeNoise.size === 0) return;
    this.hostVersion++;
    for (const node of this.placement.nodeNames) {
      const noise = this.nodeNoise.get(node);
      if (!noise) continue;
      const base = this.nodeBase.get(node);
      noise.cpuOffset = walkStep(noise.cpuOffset, noise.cpu, base?.cpu ?? 0, this.prng.nextSigned());
      noise.memOffset = walkStep(noise.memOffset, noise.mem, base?.mem ?? 0, this.prng.nextSigned());
    }
  }

  // --- service stats -------------------------------------------------------------------------

  staticServiceStats(): Snapshot<Record<string, StaticServiceStats>> {
    return this.staticStats.snapshot() as Snapshot<Record<string, StaticServiceStats>>;
  }

  /** The configured service usage (as the case and the commands set it). */
  configuredServiceStats(): Snapshot<Record<string, DynamicServiceStats>> {
    return this.dynamicStats.snapshot() as Snapshot<Record<string, DynamicServiceStats>>;
  }

  /**
   * The measured service usage; logs the reference's `overcommitted cpu|mem on '<sid>'`
   * warnings (hardware log) for services using more than their configured maximum.
   *
   * Under `pve-9.2` the stats follow the actual running state, as a real cluster's RRD stats
   * do: a guest that is not running on its config node (stopped, or between the end of a
   * migration and its start on the target) measures 0 (`cpu`, `mem` and `memhost`). Under
   * `pve-5.2.0` they are the configured values whatever runs, as in the reference simulator.
   */
  serviceStats(): Snapshot<Record<string, DynamicServiceStats>> {
    for (const warning of this.overcommittedServices()) this.options.log('warning', warning);
    const configured = this.configuredServiceStats();
    if (this.options.legacy) return configured;
    return this.measuredServiceStats(configured);
  }

  /** The warnings {@link serviceStats} logs, in sid byte order (remembered until a service stat changes). */
  private overcommittedServices(): readonly string[] {
    if (this.overcommitted?.version === this.statsVersion) return this.overcommitted.warnings;
    const warnings: string[] = [];
    for (const sid of this.dynamicStats.sortedKeys()) {
      const dyn = this.dynamicStats.get(sid)!;
      const st = this.staticStats.get(sid);
      for (const [used, max, what] of [
        ['cpu', 'maxcpu', 'cpu'],
        ['mem', 'maxmem', 'mem'],
      ] as const) {
        const u = dyn[used];
        const m = st?.[max];
        if (typeof u === 'number' && typeof m === 'number' && m > 0 && u > m)
          warnings.push(`overcommitted ${what} on '${sid}'`);
      }
    }
    this.overcommitted = { version: this.statsVersion, warnings };
    return warnings;
  }

  /** The configured stats with every guest that does not run measuring 0 (cached per change). */
  private measuredServiceStats(
    configured: Snapshot<Record<string, DynamicServiceStats>>,
  ): Snapshot<Record<string, DynamicServiceStats>> {
    const cached = this.measuredServices;
    if (cached && cached.version === this.measureVersion) return cached.doc;
    const out = openRecord<DynamicServiceStats>();
    for (const sid of Object.keys(configured)) {
      const entry = configured[sid]!;
      const node = this.placement.configNode(sid);
      out[sid] = node !== undefined && this.placement.isRunning(node, sid) ? entry : idle(entry);
    }
    const doc = sealRecord(out);
    this.measuredServices = { version: this.measureVersion, doc };
    return doc;
  }

  // --- node stats ----------------------------------------------------------------------------

  /**
   * Measured node usage: a node's cpu and memory are its base load (`node <node>
   * set-dynamic-stats`, plus its noise) and the sum of the measured usage of the services
   * running on it (by config node and running flag), summed in sid byte order; a guest's memory
   * counts with its host-side footprint (`memhost`) when it reports one, as a node's own memory
   * figure does. The node's pressure (PSI, percent) is reported once set. Logs
   * `overcommitted cpu|mem on '<node>'` when a node's sum exceeds its capacity. Under
   * `pve-5.2.0` every value is summed as the reference does (a missing value counts 0);
   * under `pve-9.2` a value that is not a finite number >= 0 is left out, so one bad service
   * stat cannot make a node's measurement meaningless.
   */
  nodeStats(): Snapshot<Record<string, DynamicNodeStats>> {
    const res = this.measureNodes();
    for (const node of this.placement.nodeNames) {
      const s = res[node]!;
      if (s.cpu > s.maxcpu) this.options.log('warning', `overcommitted cpu on '${node}'`);
      if (s.mem > s.maxmem) this.options.log('warning', `overcommitted mem on '${node}'`);
    }
    const cached = this.measuredNodes;
    if (cached?.res === res) return (cached.doc ??= snapshot(res));
    return snapshot(res);
  }

  /**
   * Measured node usage without the overcommit warnings (see {@link nodeStats}). Under scripted
   * pressure the same object is returned while neither the services nor the nodes' own load
   * changed (callers read it, never change it).
   */
  measureNodes(): Record<string, DynamicNodeStats> {
    const loadModel = this.options.loadModel;
    const cached = this.measuredNodes;
    if (
      !loadModel &&
      cached !== undefined &&
      cached.version === this.measureVersion &&
      cached.hostVersion === this.hostVersion
    )
      return cached.res;
    const res = nullRecord<DynamicNodeStats>();
    const byNode = this.nodeContributions();
    for (const node of this.placement.nodeNames) {
      const d = this.placement.nodeHardware(node)!;
      const base = this.nodeBase.get(node);
      const host = this.hostLoad(node);
      // the running services' usage, summed onto the host load in sid byte order
      let cpu = host.cpu;
      let mem = host.mem;
      const c = byNode.get(node);
      if (c !== undefined) {
        // (indexed loops: a for-of over a double array boxes each number it hands out)
        const cpus = c.cpu;
        const mems = c.mem;
        for (let i = 0; i < cpus.length; i++) cpu += cpus[i]!;
        for (let i = 0; i < mems.length; i++) mem += mems[i]!;
      }
      const stats: DynamicNodeStats = {
        cpu,
        maxcpu: d.maxcpu ?? DYNAMIC_NODE_DEFAULT_MAXCPU,
        mem,
        maxmem: d.maxmem ?? DYNAMIC_NODE_DEFAULT_MAXMEM,
      };
      if (loadModel) {
        // the same telemetry path as scripted pressure: the node's PSI fields
        const reported = loadModel.reported(node);
        if (reported) {
          stats.pressurecpusome = reported.cpu;
          stats.pressurememorysome = reported.mem;
        }
      } else {
        if (base?.pressureCpu !== undefined) stats.pressurecpusome = base.pressureCpu;
        if (base?.pressureMem !== undefined) stats.pressurememorysome = base.pressureMem;
      }
      res[node] = stats;
    }
    if (!loadModel)
      this.measuredNodes = { version: this.measureVersion, hostVersion: this.hostVersion, res, doc: undefined };
    return res;
  }

  /**
   * Per node, the values its running services add to its cpu and memory, in sid byte order
   * (a service counts on its config node while it runs there). Under `pve-5.2.0` every value is
   * added as the reference does (a missing one counts 0); under `pve-9.2` only finite numbers
   * >= 0, memory being `memhost` when the guest reports one. Rebuilt when {@link measureVersion}
   * moves.
   */
  private nodeContributions(): Map<string, NodeContribution> {
    const cached = this.contributions;
    if (cached !== undefined && cached.version === this.measureVersion) return cached.byNode;
    const byNode = new Map<string, NodeContribution>();
    for (const node of this.placement.nodeNames) byNode.set(node, { cpu: [], mem: [] });
    const legacy = this.options.legacy;
    for (const sid of this.placement.sortedSids()) {
      const node = this.placement.configNode(sid)!;
      const c = byNode.get(node);
      if (c === undefined || !this.placement.isRunning(node, sid)) continue;
      const st = this.dynamicStats.get(sid);
      if (!st) continue;
      if (legacy) {
        c.cpu.push(typeof st.cpu === 'number' ? st.cpu : 0);
        c.mem.push(typeof st.mem === 'number' ? st.mem : 0);
      } else {
        if (validMeasure(st.cpu)) c.cpu.push(st.cpu);
        const mem = validMeasure(st.memhost) ? st.memhost : st.mem;
        if (validMeasure(mem)) c.mem.push(mem);
      }
    }
    this.contributions = { version: this.measureVersion, byNode };
    return byNode;
  }

  /** A node's load outside the HA services now: its base load and noise (cores, bytes), never negative. */
  private hostLoad(node: string): { cpu: number; mem: number } {
    const base = this.nodeBase.get(node);
    const noise = this.nodeNoise.get(node);
    if (!base && !noise) return { cpu: 0, mem: 0 };
    return {
      cpu: Math.max(0, (base?.cpu ?? 0) + (noise?.cpuOffset ?? 0)),
      mem: Math.max(0, Math.round((base?.mem ?? 0) + (noise?.memOffset ?? 0))),
    };
  }

  // --- the load pressure model's inputs ------------------------------------------------------

  /**
   * What every node carries now, for the load pressure model (node byte order): its capacity,
   * its load outside the HA services and its running guests (sid byte order) with the usage
   * the measured node stats count (`pve-9.2` rules: a value that is not a finite number ≥ 0
   * counts 0; memory is `memhost` when the guest reports one) and their configured cores.
   * The same array is returned while nothing it is made of changed (callers read it, never
   * change it).
   */
  nodeLoads(): readonly NodeLoad[] {
    const cached = this.loads;
    if (cached !== undefined && cached.version === this.measureVersion && cached.hostVersion === this.hostVersion)
      return cached.loads;
    const guests = this.nodeGuestLoads();
    const loads = this.placement.nodeNames.map((node): NodeLoad => {
      const d = this.placement.nodeHardware(node)!;
      const host = this.hostLoad(node);
      return {
        node,
        cores: d.maxcpu ?? DYNAMIC_NODE_DEFAULT_MAXCPU,
        memBytes: d.maxmem ?? DYNAMIC_NODE_DEFAULT_MAXMEM,
        hostCpu: host.cpu,
        hostMemBytes: host.mem,
        guests: guests.get(node)!,
      };
    });
    this.loads = { version: this.measureVersion, hostVersion: this.hostVersion, loads, truth: undefined };
    return loads;
  }

  /** Per node, its running guests for {@link nodeLoads} (rebuilt when {@link measureVersion} moves). */
  private nodeGuestLoads(): Map<string, GuestLoad[]> {
    const cached = this.guestLoads;
    if (cached !== undefined && cached.version === this.measureVersion) return cached.byNode;
    const byNode = new Map<string, GuestLoad[]>(this.placement.nodeNames.map((n) => [n, []]));
    for (const sid of this.placement.sortedSids()) {
      const node = this.placement.configNode(sid)!;
      const list = byNode.get(node);
      if (!list || !this.placement.isRunning(node, sid)) continue;
      const st = this.dynamicStats.get(sid);
      const cpu = validMeasure(st?.cpu) ? st.cpu : 0;
      const mem = validMeasure(st?.memhost) ? st.memhost : validMeasure(st?.mem) ? st.mem : 0;
      const maxcpu = this.staticStats.get(sid)?.maxcpu;
      const vcpus = validMeasure(maxcpu) && maxcpu >= 1 ? Math.ceil(maxcpu) : Math.max(1, Math.ceil(cpu));
      list.push({ sid, cpu, vcpus, memBytes: mem });
    }
    this.guestLoads = { version: this.measureVersion, byNode };
    return byNode;
  }

  /**
   * The load pressure model's noise-free state of every node now (undefined without the model);
   * evaluated once per {@link nodeLoads} result (the evaluation reads only the loads and the
   * model's fixed node settings).
   */
  pressureTruth(): readonly NodePressure[] | undefined {
    const loadModel = this.options.loadModel;
    if (!loadModel) return undefined;
    const loads = this.nodeLoads();
    const cached = this.loads!;
    return (cached.truth ??= loadModel.evaluate(loads));
  }

  /**
   * A running guest moves from `source` to `target`: under the load pressure model it pays the
   * migration's cost (live: the migration model's price for the memory it holds and the cores
   * it keeps busy; relocation: the restart). Returns false when the live migration does not
   * converge before the model's timeout (its cost is paid all the same): the guest stays.
   */
  guestMoved(sid: string, source: string, target: string, live: boolean): boolean {
    const loadModel = this.options.loadModel;
    if (!loadModel) return true;
    const st = this.dynamicStats.get(sid);
    const mem = validMeasure(st?.memhost) ? st.memhost : validMeasure(st?.mem) ? st.mem : 0;
    const cpu = validMeasure(st?.cpu) ? st.cpu : 0;
    const maxcpu = this.staticStats.get(sid)?.maxcpu;
    const vcpus = validMeasure(maxcpu) && maxcpu >= 1 ? Math.ceil(maxcpu) : Math.max(1, Math.ceil(cpu));
    const estimate = live ? loadModel.priceMigration(source, target, { cpu, vcpus, memBytes: mem }) : undefined;
    loadModel.chargeMigration(sid, source, target, estimate);
    return estimate === undefined || estimate.converged;
  }
}

const IDLE: Snapshot<DynamicServiceStats> = snapshot({ cpu: 0, mem: 0 });
const IDLE_WITH_MEMHOST: Snapshot<DynamicServiceStats> = snapshot({ cpu: 0, mem: 0, memhost: 0 });

/** What a guest that does not run measures: 0 for every value it reports. */
function idle(entry: Snapshot<DynamicServiceStats>): Snapshot<DynamicServiceStats> {
  return entry.memhost === undefined ? IDLE : IDLE_WITH_MEMHOST;
}
