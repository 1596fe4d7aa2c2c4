import {
  SimEnv,
  nullRecord,
  snapshot,
  thaw,
  type DatacenterSettings,
  type DynamicNodeStats,
  type DynamicServiceStats,
  type Env,
  type GuestConfigEntry,
  type LrmStatus,
  type ManagerStatus,
  type NodeInfo,
  type ResourceAgent,
  type ServiceConfig,
  type ServiceConfigEntry,
  type SimBackend,
  type Snapshot,
  type StaticNodeStats,
  type StaticServiceStats,
} from '@poise/env';
import { Crm, Lrm, type LrmProcessState, type ManagerOptions, byteCompare } from '@poise/ha';
import type { CaseInput, HardwareNode } from './case';
import type { Command } from './commands';
import { SID_PATTERN } from './commands';
import { createResourceAgent } from './resources';
import { SimLog } from './log';
import { SimError } from './errors';
import { KeyedStore } from './store';
import { Prng, walkStep } from './noise';
import { openRecord, sealRecord } from '@poise/env';
import { parseLoadPressure } from './pressure/config';
import { LoadPressureModel, type GuestLoad, type NodeLoad, type NodePressure } from './pressure/model';

/** Seconds after which a lock not renewed may be taken by another node. */
export const LOCK_TIMEOUT_SECONDS = 120;
/** Seconds after which a watchdog not updated powers its node off. */
export const WATCHDOG_TIMEOUT_SECONDS = 60;
/** The simulation dies once simulated time passes this (the reference's limit, seconds). */
export const MAX_SIM_TIME = 10000;
/** Default node capacity for the dynamic stats. */
export const DYNAMIC_NODE_DEFAULT_MAXCPU = 24;
export const DYNAMIC_NODE_DEFAULT_MAXMEM = 128 * 1024 ** 3;
/** pve-manager version of a node without one in hardware_status. */
export const DEFAULT_PVE_MANAGER_VERSION = '9.0.0~2';
/** A round lasts at least this many seconds (the reference: max(20, 2 × nodes)). */
export const MIN_ROUND_SECONDS = 20;
/** The reference dies when a round would take this long (30 nodes and more). */
export const MAX_ROUND_SECONDS = 60;
/** Length of a round of the `concurrent` model, whatever the number of nodes. */
export const CONCURRENT_ROUND_SECONDS = 20;
/**
 * From this many nodes on, `pve-9.2` runs the `concurrent` round model unless told otherwise:
 * the reference's model cannot run such a cluster at all (its round would reach 60 s).
 */
export const CONCURRENT_MIN_NODES = MAX_ROUND_SECONDS / 2;

/**
 * How the daemons of one round are laid out in simulated time:
 * - `reference`: node after node in byte order, each node's CRM then LRM iteration taking 1 s
 *   (node1/crm at T, node1/lrm at T+1, node2/crm at T+2, ...); a round lasts
 *   max(20, 2 × nodes) s and 30 nodes or more abort with `too many nodes` (the reference's
 *   harness);
 * - `concurrent`: every node's daemons run side by side, as on a real cluster: all CRM
 *   iterations at T (in node byte order), then all LRM iterations at T+1; a round lasts 20 s
 *   for any number of nodes.
 */
export type RoundModel = 'reference' | 'concurrent';

/** What the {@link Hardware} needs besides the case: the manager's options and the round model. */
export interface HardwareOptions extends ManagerOptions {
  /**
   * The round model (see {@link RoundModel}). Default: `reference`, except under `pve-9.2` for a
   * case of {@link CONCURRENT_MIN_NODES} nodes or more, which gets `concurrent`. `pve-5.2.0`
   * runs the reference's model only (`concurrent` is refused: that profile is the reference).
   */
  roundModel?: RoundModel | undefined;
}

/**
 * The round model in force for a profile, a node count and an optional request (see
 * {@link HardwareOptions.roundModel}); throws `SimError` `bad-case` for `concurrent` under
 * `pve-5.2.0` and for an unknown model.
 */
export function resolveRoundModel(
  profile: ManagerOptions['profile'],
  nodeCount: number,
  requested?: RoundModel,
): RoundModel {
  if (requested !== undefined && requested !== 'reference' && requested !== 'concurrent') {
    throw new SimError('bad-case', `unknown round model '${String(requested)}', expected 'reference' or 'concurrent'`);
  }
  if (profile === 'pve-5.2.0') {
    if (requested === 'concurrent')
      throw new SimError(
        'bad-case',
        "round model 'concurrent' needs the 'pve-9.2' profile ('pve-5.2.0' is the reference's harness)",
      );
    return 'reference';
  }
  return requested ?? (nodeCount >= CONCURRENT_MIN_NODES ? 'concurrent' : 'reference');
}

const MiB = 1024 ** 2;

interface NodeSlot {
  crm?: Crm;
  lrm?: Lrm;
  crmEnv: SimEnv;
  lrmEnv: SimEnv;
  lrmRestart?: boolean;
  crmStop?: boolean;
}

/** Skip counters of `skip-round` (rounds left without CRM / LRM iterations). */
export interface SkipRounds {
  crm: number;
  lrm: number;
}

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

/** A finite number >= 0: the only stat value the pve-9.2 hardware adds to a node's usage. */
function validMeasure(v: unknown): v is number {
  return typeof v === 'number' && v >= 0 && v < Infinity;
}

/** The reference's `read_service_config` defaults (Hardware.pm), applied on every read. */
function withDefaults(sid: string, raw: Record<string, unknown>): ServiceConfigEntry {
  if (!raw.node) throw new Error(`service '${sid}' without assigned node!`);
  const m = SID_PATTERN.exec(sid);
  if (!m) throw new Error('implement me');
  const d = Object.assign(Object.create(null) as Record<string, unknown>, raw);
  d.type = m[1];
  d.name = sid.slice(m[1]!.length + 1);
  if (!d.state) d.state = 'disabled';
  if (d.state === 'enabled') d.state = 'started';
  if (d.failback === undefined) d.failback = 1;
  if (d.max_restart === undefined) d.max_restart = 1;
  if (d.max_relocate === undefined) d.max_relocate = 1;
  return d as ServiceConfigEntry;
}

/**
 * The simulated cluster: nodes, power, network, cluster filesystem, locks, watchdogs, and the
 * documents the daemons share. Documents are kept as immutable snapshots (reads are O(1)) or
 * as keyed stores whose snapshots are rebuilt only after a change; see `@poise/env`.
 */
export class Hardware implements SimBackend {
  curTime = 0;
  readonly log: SimLog;
  private readonly hw = new Map<string, HardwareNode>();
  private readonly serviceConfig = new KeyedStore<Record<string, unknown>, ServiceConfigEntry>(withDefaults);
  private managerStatus: Snapshot<ManagerStatus>;
  private readonly lrmStatus = new Map<string, Snapshot<LrmStatus>>();
  private readonly running = new Map<string, Map<string, number>>();
  private crmCommands = '';
  private readonly locks = new Map<string, { node: string; time: number }>();
  private readonly watchdogs = new Map<string, { node: string; updateTime: number }>();
  private wdCounter = 0;
  private readonly staticStats = new KeyedStore<Record<string, unknown>>();
  private readonly dynamicStats = new KeyedStore<Record<string, unknown>>();
  private rulesText: string;
  private groupsText: string;
  private readonly dc: Snapshot<DatacenterSettings>;
  private readonly nodes = new Map<string, NodeSlot>();
  private readonly agents = new Map<Env, Map<string, ResourceAgent | undefined>>();
  readonly nodeNames: readonly string[];
  /** Process-global state of the reference: the LRM start-up flag. */
  readonly lrmProcess: LrmProcessState = { wroteStatusAtStartup: false };
  /** Process-global failure counters of `fa:` resources, per service name. */
  readonly virtFailTries = { start: new Map<string, number>(), migrate: new Map<string, number>() };
  /** Node load and pressure outside the HA services, by node. */
  private readonly nodeBase = new Map<string, NodeBase>();
  /** Node noise walks, by node. */
  private readonly nodeNoise = new Map<string, NodeNoise>();
  private readonly prng: Prng;
  private readonly guestConfigs = new Map<string, Snapshot<GuestConfigEntry>>();
  /**
   * Bumped whenever what the measured service stats depend on changes (running flags, config
   * nodes, the stats themselves), so the measured document is rebuilt only then.
   */
  private measureVersion = 0;
  private measuredServices: { version: number; doc: Snapshot<Record<string, DynamicServiceStats>> } | undefined;

  /** The options every CRM's manager gets. */
  readonly managerOptions: ManagerOptions;
  /** The round model in force (see {@link RoundModel}). */
  readonly roundModel: RoundModel;
  /**
   * The load pressure model (`sim_options` `pressure-model` `load`): node pressure follows from
   * the load, and every guest's contention is recorded. Undefined: pressure is scripted.
   */
  readonly loadModel: LoadPressureModel | undefined;

  constructor(input: CaseInput, options: HardwareOptions, sink?: (line: string) => void, seed = 0) {
    // every option but the round model is the managers' (kept as given)
    const { roundModel: _roundModel, ...managerOptions } = options;
    this.managerOptions = managerOptions;
    this.roundModel = resolveRoundModel(options.profile, Object.keys(input.hardwareStatus).length, options.roundModel);
    this.prng = new Prng(seed);
    if (input.guestConfig) {
      for (const sid of Object.keys(input.guestConfig))
        this.guestConfigs.set(sid, snapshot<GuestConfigEntry>(input.guestConfig[sid]!));
    }
    this.log = new SimLog(sink);
    // the hardware owns copies: a case can be simulated again, and a caller's changes to its
    // input never reach a running simulation
    for (const node of Object.keys(input.hardwareStatus)) this.hw.set(node, thaw(input.hardwareStatus[node]!));
    for (const sid of Object.keys(input.serviceConfig)) this.serviceConfig.set(sid, thaw(input.serviceConfig[sid]!));
    for (const sid of Object.keys(input.staticServiceStats))
      this.staticStats.set(sid, thaw(input.staticServiceStats[sid]!));
    for (const sid of Object.keys(input.dynamicServiceStats))
      this.dynamicStats.set(sid, thaw(input.dynamicServiceStats[sid]!));
    this.managerStatus = snapshot(input.managerStatus);
    this.rulesText = input.rulesConfig;
    this.groupsText = input.groups;
    this.dc = snapshot(input.datacenterCfg);
    this.nodeNames = [...this.hw.keys()].sort(byteCompare);
    this.loadModel =
      input.simOptions?.pressureModel === 'load'
        ? new LoadPressureModel(
            input.simOptions.loadPressure ??
              parseLoadPressure(undefined, `${input.name}/sim_options`, ['load-pressure'], this.nodeNames),
            this.nodeNames,
            seed,
          )
        : undefined;
    for (const node of this.nodeNames) {
      const flags = new Map<string, number>();
      const given = Object.hasOwn(input.serviceStatus, node) ? input.serviceStatus[node]! : {};
      for (const sid of Object.keys(given)) flags.set(sid, Number(given[sid]));
      this.running.set(node, flags);
      this.nodes.set(node, { crmEnv: new SimEnv(this, node, 'crm'), lrmEnv: new SimEnv(this, node, 'lrm') });
    }
  }

  private get legacy(): boolean {
    return this.managerOptions.profile === 'pve-5.2.0';
  }

  logDaemon(level: string, time: number, id: string, msg: string): void {
    this.log.daemon(level, time, id, msg);
  }

  resourceAgent(type: string, env: Env): ResourceAgent | undefined {
    // agents hold nothing but their env and this hardware: one per env and type
    let agents = this.agents.get(env);
    if (!agents) this.agents.set(env, (agents = new Map<string, ResourceAgent | undefined>()));
    if (!agents.has(type)) agents.set(type, createResourceAgent(type, env, this));
    return agents.get(type);
  }

  hwLog(level: string, msg: string, id = 'hardware'): void {
    this.log.hardware(level, this.curTime, id, msg);
  }

  // --- cluster membership, cfs -------------------------------------------------------------

  /** Whether a node is powered and networked (before quorum is taken into account). */
  private nodeUp(d: HardwareNode): boolean {
    return d.power === 'on' && d.network === 'on';
  }

  getNodeInfo(): NodeInfo {
    const nodeInfo = nullRecord<{ online: boolean }>();
    let online = 0;
    for (const [node, d] of this.hw) {
      const on = this.nodeUp(d);
      nodeInfo[node] = { online: on };
      if (on) online++;
    }
    const quorate = online > Math.trunc(this.hw.size / 2);
    if (!quorate) for (const node of this.hw.keys()) nodeInfo[node]!.online = false;
    return { nodeInfo, quorate };
  }

  cfsState(node: string, what: 'rw' | 'update'): boolean {
    const v = this.hw.get(node)?.cfs?.[what];
    return v === undefined ? true : !!v;
  }

  // --- status documents ----------------------------------------------------------------------

  readManagerStatus(): Snapshot<ManagerStatus> {
    return this.managerStatus;
  }

  writeManagerStatus(ms: Snapshot<ManagerStatus>): void {
    this.managerStatus = snapshot(ms, this.managerStatus);
  }

  readLrmStatus(node: string): Snapshot<LrmStatus> {
    return this.lrmStatus.get(node) ?? EMPTY;
  }

  writeLrmStatus(node: string, status: Snapshot<LrmStatus>): void {
    this.lrmStatus.set(node, snapshot(status, this.lrmStatus.get(node)));
  }

  /** The service config with the reference's defaults (Hardware.pm read_service_config). */
  readServiceConfig(): Snapshot<ServiceConfig> {
    return this.serviceConfig.snapshot();
  }

  // The writers change the stored entry in place. The reference reads the whole config with
  // defaults and writes it back; the defaults are re-applied on every read, so the stored
  // form makes no difference, and in place keeps a change O(1) instead of O(services).

  updateServiceConfig(sid: string, params: Record<string, unknown>, deleteKeys: string[] = []): void {
    const cd = this.serviceConfig.get(sid);
    if (!cd) throw new Error(`no such service ${sid}`);
    for (const k of Object.keys(params)) cd[k] = thaw(params[k]);
    for (const k of deleteKeys) delete cd[k];
    this.serviceConfig.changed(sid);
    this.measureVersion++;
  }

  changeServiceLocation(sid: string, current: string, next: string): void {
    const cd = this.serviceConfig.get(sid);
    if (!cd) throw new Error(`no such service '${sid}'\n`);
    if (current !== cd.node)
      throw new Error(`current_node for '${sid}' does not match (${current} != ${String(cd.node)})\n`);
    cd.node = next;
    this.serviceConfig.changed(sid);
    this.measureVersion++;
  }

  serviceLock(sid: string): string | undefined {
    const lock = this.serviceConfig.get(sid)?.lock;
    return typeof lock === 'string' && lock !== '' ? lock : undefined;
  }

  unlockService(sid: string, lock: string): string | undefined {
    const cd = this.serviceConfig.get(sid);
    if (!cd || cd.lock !== lock) return undefined;
    delete cd.lock;
    this.serviceConfig.changed(sid);
    return lock;
  }

  readRulesConfig(): string {
    return this.rulesText;
  }

  writeRulesConfig(text: string): void {
    this.rulesText = text;
  }

  readGroupConfig(): string {
    return this.groupsText;
  }

  deleteGroupConfig(): void {
    this.groupsText = '';
  }

  readCrmCommands(): string {
    const cmds = this.crmCommands;
    this.crmCommands = '';
    return cmds;
  }

  hasPendingCrmCommands(): boolean {
    return this.crmCommands !== '';
  }

  queueCrmCommands(cmd: string): void {
    this.crmCommands += `${cmd.replace(/\n$/, '')}\n`;
  }

  getDatacenterSettings(): Snapshot<DatacenterSettings> {
    return this.dc;
  }

  nodeVersion(node: string): string | undefined {
    return this.hw.get(node)?.['pve-manager-version'] ?? DEFAULT_PVE_MANAGER_VERSION;
  }

  isNodeShutdown(node: string): { shutdown: boolean; reboot: boolean } {
    const d = this.hw.get(node);
    if (!d) throw new Error(`undefined node status for node '${node}'`);
    const target = d.shutdown;
    if (!target) return { shutdown: false, reboot: false };
    if (target === 'shutdown') return { shutdown: true, reboot: false };
    if (target === 'reboot') return { shutdown: true, reboot: true };
    throw new Error(`unknown shutdown target '${String(target)}'`);
  }

  // --- running flags and stats -------------------------------------------------------------

  isRunning(node: string, sid: string): boolean {
    return !!this.running.get(node)?.get(sid);
  }

  setRunning(node: string, sid: string, running: number | undefined): void {
    let flags = this.running.get(node);
    if (!flags) {
      flags = new Map();
      this.running.set(node, flags);
    }
    if (running === undefined) flags.delete(sid);
    else flags.set(sid, running);
    this.measureVersion++;
  }

  /**
   * A guest's configuration: its entry in the case's `guest_config`, an empty configuration
   * (nothing that prevents a migration) for any other configured service, undefined for a
   * service the cluster does not know.
   */
  getGuestConfig(sid: string): Snapshot<GuestConfigEntry> | undefined {
    return this.guestConfigs.get(sid) ?? (this.serviceConfig.has(sid) ? NO_GUEST_CONFIG : undefined);
  }

  getStaticNodeStats(): Snapshot<Record<string, StaticNodeStats>> {
    const res = nullRecord<StaticNodeStats>();
    for (const node of this.nodeNames) {
      const d = this.hw.get(node)!;
      res[node] = { maxcpu: d.maxcpu as number, maxmem: d.maxmem as number };
    }
    return snapshot(res);
  }

  getStaticServiceStats(): Snapshot<Record<string, StaticServiceStats>> {
    return this.staticStats.snapshot() as Snapshot<Record<string, StaticServiceStats>>;
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
  getDynamicServiceStats(): Snapshot<Record<string, DynamicServiceStats>> {
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
          this.hwLog('warning', `overcommitted ${what} on '${sid}'`);
      }
    }
    const configured = this.dynamicStats.snapshot() as Snapshot<Record<string, DynamicServiceStats>>;
    if (this.legacy) return configured;
    return this.measuredServiceStats(configured);
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
      const cd = this.serviceConfig.get(sid);
      out[sid] = cd && this.isRunning(cd.node as string, sid) ? entry : idle(entry);
    }
    const doc = sealRecord(out);
    this.measuredServices = { version: this.measureVersion, doc };
    return doc;
  }

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
  getDynamicNodeStats(): Snapshot<Record<string, DynamicNodeStats>> {
    const res = this.measureNodes();
    for (const node of this.nodeNames) {
      const s = res[node]!;
      if (s.cpu > s.maxcpu) this.hwLog('warning', `overcommitted cpu on '${node}'`);
      if (s.mem > s.maxmem) this.hwLog('warning', `overcommitted mem on '${node}'`);
    }
    return snapshot(res);
  }

  private measureNodes(): Record<string, DynamicNodeStats> {
    const res = nullRecord<DynamicNodeStats>();
    for (const node of this.nodeNames) {
      const d = this.hw.get(node)!;
      const base = this.nodeBase.get(node);
      const host = this.hostLoad(node);
      const stats: DynamicNodeStats = {
        cpu: host.cpu,
        maxcpu: d.maxcpu ?? DYNAMIC_NODE_DEFAULT_MAXCPU,
        mem: host.mem,
        maxmem: d.maxmem ?? DYNAMIC_NODE_DEFAULT_MAXMEM,
      };
      if (this.loadModel) {
        // the same telemetry path as scripted pressure: the node's PSI fields
        const reported = this.loadModel.reported(node);
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
    const legacy = this.legacy;
    for (const sid of this.serviceConfig.sortedKeys()) {
      const node = this.serviceConfig.get(sid)!.node as string;
      if (!Object.hasOwn(res, node) || !this.isRunning(node, sid)) continue;
      const st = this.dynamicStats.get(sid);
      if (!st) continue;
      const n = res[node]!;
      if (legacy) {
        n.cpu += typeof st.cpu === 'number' ? st.cpu : 0;
        n.mem += typeof st.mem === 'number' ? st.mem : 0;
      } else {
        if (validMeasure(st.cpu)) n.cpu += st.cpu;
        const mem = validMeasure(st.memhost) ? st.memhost : st.mem;
        if (validMeasure(mem)) n.mem += mem;
      }
    }
    return res;
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

  /**
   * What every node carries now, for the load pressure model (node byte order): its capacity,
   * its load outside the HA services and its running guests (sid byte order) with the usage
   * the measured node stats count (`pve-9.2` rules: a value that is not a finite number ≥ 0
   * counts 0; memory is `memhost` when the guest reports one) and their configured cores.
   */
  nodeLoads(): NodeLoad[] {
    const guests = new Map<string, GuestLoad[]>(this.nodeNames.map((n) => [n, []]));
    for (const sid of this.serviceConfig.sortedKeys()) {
      const node = this.serviceConfig.get(sid)!.node as string;
      const list = guests.get(node);
      if (!list || !this.isRunning(node, sid)) continue;
      const st = this.dynamicStats.get(sid);
      const cpu = validMeasure(st?.cpu) ? st.cpu : 0;
      const mem = validMeasure(st?.memhost) ? st.memhost : validMeasure(st?.mem) ? st.mem : 0;
      const maxcpu = this.staticStats.get(sid)?.maxcpu;
      const vcpus = validMeasure(maxcpu) && maxcpu >= 1 ? Math.ceil(maxcpu) : Math.max(1, Math.ceil(cpu));
      list.push({ sid, cpu, vcpus, memBytes: mem });
    }
    return this.nodeNames.map((node) => {
      const d = this.hw.get(node)!;
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
  }

  /** The load pressure model's noise-free state of every node now (undefined without the model). */
  pressureTruth(): NodePressure[] | undefined {
    return this.loadModel?.evaluate(this.nodeLoads());
  }

  /**
   * A guest moved from `source` (called by the resource agents once its configuration names the
   * target): under the load pressure model a guest that was running pays the migration's cost
   * (live: copy time × stall share + pause, for the memory it holds; relocation: the restart).
   */
  guestMoved(sid: string, source: string, live: boolean): void {
    if (!this.loadModel) return;
    const st = this.dynamicStats.get(sid);
    const mem = validMeasure(st?.memhost) ? st.memhost : validMeasure(st?.mem) ? st.mem : 0;
    this.loadModel.chargeMigration(sid, source, live, mem);
  }

  // --- locks and watchdogs -----------------------------------------------------------------

  /** The cluster-wide lock of the reference simulator (Sim/Env.pm sim_get_lock). */
  lock(env: Env, name: string, unlock: boolean): boolean {
    if (!env.quorate()) return false;
    const node = env.nodename();
    const now = env.getTime();
    const d = this.locks.get(name);
    if (unlock) {
      if (!d) return false;
      const tdiff = now - d.time;
      if (tdiff > LOCK_TIMEOUT_SECONDS) return true;
      if (d.node === node) {
        this.locks.delete(name);
        return true;
      }
      return false;
    }
    if (d) {
      const tdiff = now - d.time;
      if (tdiff <= LOCK_TIMEOUT_SECONDS) {
        if (d.node === node) {
          d.time = now;
          return true;
        }
        return false;
      }
      env.log('info', `got lock '${name}'`);
      d.node = node;
      d.time = now;
      return true;
    }
    this.locks.set(name, { node, time: now });
    env.log('info', `got lock '${name}'`);
    return true;
  }

  watchdogOpen(node: string): string {
    this.wdCounter++;
    const id = `WD:${node}:${this.wdCounter}`;
    this.watchdogs.set(id, { node, updateTime: this.curTime });
    return id;
  }

  watchdogUpdate(id: string): void {
    const wd = this.watchdogs.get(id);
    if (!wd) throw new Error(`no such watchdog handle '${id}'\n`);
    if (this.curTime - wd.updateTime > WATCHDOG_TIMEOUT_SECONDS) throw new Error('watchdog expired');
    wd.updateTime = this.curTime;
  }

  watchdogClose(id: string): void {
    this.watchdogs.delete(id);
  }

  /** False when a watchdog of `node` expired. */
  private watchdogCheck(node: string): boolean {
    for (const wd of this.watchdogs.values()) {
      if (wd.node !== node) continue;
      if (this.curTime - wd.updateTime > WATCHDOG_TIMEOUT_SECONDS) return false;
    }
    return true;
  }

  private watchdogReset(node: string): void {
    for (const [id, wd] of [...this.watchdogs]) if (wd.node === node) this.watchdogs.delete(id);
  }

  // --- commands ------------------------------------------------------------------------------

  private startCrm(node: string): Crm {
    return new Crm(this.slot(node).crmEnv, this.managerOptions);
  }

  private startLrm(node: string): Lrm {
    return new Lrm(this.slot(node).lrmEnv, this.lrmProcess);
  }

  private slot(node: string): NodeSlot {
    const d = this.nodes.get(node);
    if (!d) throw new SimError('command-failed', `sim_hardware_cmd: no such node '${node}'`);
    return d;
  }

  private node(node: string): HardwareNode {
    const d = this.hw.get(node);
    if (!d) throw new SimError('command-failed', `sim_hardware_cmd: no such node '${node}'`);
    return d;
  }

  /**
   * Executes one hardware/cluster command (spec §2) already parsed by `parseCommand`; `text` is
   * the command as given (logged as `execute <text>`), `id` the log id of the issuer
   * (`cmdlist`, `watchdog`, `reboot`, `shutdown`). `delay` and `skip-round` belong to the run
   * loop. A command that cannot apply (a service that already exists, ...) throws
   * `command-failed`.
   */
  execute(command: Command, text: string, id: string): void {
    this.hwLog('info', `execute ${text}`, id);
    switch (command.kind) {
      case 'delay':
      case 'skip-round':
        throw new SimError('command-failed', `'${command.kind}' is a run-loop command`);
      case 'power':
        this.power(command.node, command.on);
        return;
      case 'network':
        this.node(command.node).network = command.on ? 'on' : 'off';
        return;
      case 'cfs': {
        const hw = this.node(command.node);
        hw.cfs ??= {};
        hw.cfs[command.what] = command.works;
        return;
      }
      case 'reboot':
      case 'shutdown': {
        const hw = this.node(command.node);
        hw.shutdown = command.kind;
        this.slot(command.node).lrm?.shutdownRequest();
        return;
      }
      case 'restart-lrm': {
        const d = this.slot(command.node);
        if (d.lrm) {
          d.lrmRestart = true;
          d.lrm.shutdownRequest();
        }
        return;
      }
      case 'crm': {
        const d = this.slot(command.node);
        switch (command.action) {
          case 'stop':
            if (d.crm) {
              d.crmStop = true;
              d.crm.shutdownRequest();
            }
            return;
          case 'start':
            d.crm ??= this.startCrm(command.node);
            return;
          case 'enable-node-maintenance':
          case 'disable-node-maintenance':
            this.queueCrmCommands(`${command.action} ${command.node}`);
            return;
          case 'arm-ha':
            this.queueCrmCommands('arm-ha');
            return;
        }
        return;
      }
      case 'crm-disarm':
        this.slot(command.node);
        this.queueCrmCommands(`disarm-ha ${command.mode}`);
        return;
      case 'pve-manager-version':
        this.node(command.node)['pve-manager-version'] = command.version;
        return;
      case 'node-stats':
      case 'node-noise':
        this.nodeCommand(command);
        return;
      default:
        this.serviceCommand(command);
    }
  }

  private power(node: string, on: boolean): void {
    const hw = this.node(node);
    const d = this.slot(node);
    const action = on ? 'on' : 'off';
    if (hw.power !== action) {
      if (on) {
        d.crm ??= this.startCrm(node);
        d.lrm ??= this.startLrm(node);
        d.lrmRestart = undefined;
        hw.cfs = {};
      } else {
        if (d.crm) {
          d.crmEnv.log('info', 'killed by poweroff');
          d.crm = undefined;
        }
        if (d.lrm) {
          d.lrmEnv.log('info', 'killed by poweroff');
          d.lrm = undefined;
        }
        this.watchdogReset(node);
        this.running.set(node, new Map());
        this.measureVersion++;
      }
    }
    hw.power = action;
    hw.network = action;
    hw.shutdown = undefined;
  }

  private serviceCommand(
    command: Exclude<
      Command,
      {
        kind:
          | 'delay'
          | 'skip-round'
          | 'power'
          | 'network'
          | 'cfs'
          | 'reboot'
          | 'shutdown'
          | 'restart-lrm'
          | 'crm'
          | 'crm-disarm'
          | 'pve-manager-version'
          | 'node-stats'
          | 'node-noise';
      }
    >,
  ): void {
    const conf = this.serviceConfig;
    const sid = command.sid;
    const existing = (): Record<string, unknown> => {
      const cd = conf.get(sid);
      if (!cd) throw new SimError('command-failed', `no such service '${sid}'`);
      return cd;
    };
    switch (command.kind) {
      case 'service-state':
        existing().state = command.state;
        conf.changed(sid);
        return;
      case 'service-move':
        this.queueCrmCommands(`${command.task} ${sid} ${command.node}`);
        return;
      case 'service-stop':
        this.queueCrmCommands(`stop ${sid} ${command.timeout}`);
        return;
      case 'service-add': {
        if (conf.has(sid))
          throw new SimError('command-failed', `sim_hardware_cmd: cannot add service '${sid}', already exists`);
        const cd = nullRecord<unknown>();
        cd.state = command.state;
        cd.node = command.node;
        conf.set(sid, cd);
        this.setRunning(command.node, sid, command.running);
        return;
      }
      case 'service-delete':
        conf.delete(sid);
        this.staticStats.delete(sid);
        this.measureVersion++;
        return;
      case 'service-lock':
        existing().lock = command.lock || 'backup';
        conf.changed(sid);
        return;
      case 'service-unlock': {
        const cd = existing();
        if (command.lock && cd.lock !== command.lock) return; // the reference warns on stderr only
        delete cd.lock;
        conf.changed(sid);
        return;
      }
      case 'service-stats': {
        const store = command.which === 'static' ? this.staticStats : this.dynamicStats;
        const entry = store.get(sid) ?? nullRecord<unknown>();
        for (const [key, value] of command.values) {
          entry[key] = key === 'maxmem' || key === 'mem' || key === 'memhost' ? value * MiB : value;
        }
        store.set(sid, entry);
        this.measureVersion++;
        return;
      }
      case 'service-manual-migrate': {
        const cd = existing();
        const disarmMode = this.managerStatus.disarm?.mode;
        if (cd.state !== 'ignored' && disarmMode !== 'ignore') {
          throw new SimError(
            'command-failed',
            `sim_hardware_cmd: manual-migrate requires service '${sid}' to be ignored or the HA stack disarmed in ignore mode`,
          );
        }
        cd.node = command.node;
        conf.changed(sid);
        this.measureVersion++;
        return;
      }
    }
  }

  /** `node <node> set-dynamic-stats` and `node <node> set-noise` (values: cores, MiB, percent). */
  private nodeCommand(command: Extract<Command, { kind: 'node-stats' | 'node-noise' }>): void {
    this.node(command.node);
    if (command.kind === 'node-stats') {
      if (this.loadModel) {
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
      return;
    }
    const noise = this.nodeNoise.get(command.node) ?? { cpu: 0, mem: 0, cpuOffset: 0, memOffset: 0 };
    for (const [key, value] of command.values) {
      if (key === 'cpu') noise.cpu = value;
      else noise.mem = value * MiB;
    }
    this.nodeNoise.set(command.node, noise);
  }

  /**
   * Moves every node's noise one step (see `noise.ts`): nodes in byte order, cpu then mem.
   * Called at the end of every round, so the next round's manager sees the new values.
   */
  resampleNoise(): void {
    if (this.nodeNoise.size === 0) return;
    for (const node of this.nodeNames) {
      const noise = this.nodeNoise.get(node);
      if (!noise) continue;
      const base = this.nodeBase.get(node);
      noise.cpuOffset = walkStep(noise.cpuOffset, noise.cpu, base?.cpu ?? 0, this.prng.nextSigned());
      noise.memOffset = walkStep(noise.memOffset, noise.mem, base?.mem ?? 0, this.prng.nextSigned());
    }
  }

  // --- one round ---------------------------------------------------------------------------

  /**
   * The length of a round: the reference's max(20, 2 × nodes) seconds, or 20 s in the
   * `concurrent` model.
   */
  roundSeconds(): number {
    if (this.roundModel === 'concurrent') return CONCURRENT_ROUND_SECONDS;
    return Math.max(MIN_ROUND_SECONDS, 2 * this.nodeNames.length);
  }

  /**
   * One round of the run loop in the {@link roundModel}: the reference's (spec §1.4: every node
   * in byte order runs its CRM then its LRM iteration, 1 s each, watchdogs checked after each
   * node) or the concurrent one (all CRMs at T, all LRMs at T+1); then time advances to the round's
   * end, where every env clock is set. Command lists are the caller's business.
   */
  runRound(skip: SkipRounds): void {
    const start = this.curTime;
    const nodes = this.nodeNames;
    const loopTime = this.roundSeconds();
    // the concurrent model runs its daemons in phases; the reference's node loop below then has
    // nothing to do, and the round ends the same way for both
    const concurrent = this.roundModel === 'concurrent';
    // the loads at the round's start hold for the whole round (a move shows in the next one)
    this.loadModel?.begin(this.nodeLoads());
    if (concurrent) this.runConcurrentDaemons(skip);
    if (!concurrent && loopTime >= MAX_ROUND_SECONDS) throw new SimError('sim-abort', 'too many nodes');
    let first = true;
    for (const node of concurrent ? [] : nodes) {
      const d = this.nodes.get(node)!;
      if (d.crm) {
        let exit = false;
        if (!skip.crm) {
          d.crmEnv.setTime(this.curTime);
          exit = !d.crm.doOneIteration();
        } else if (first) {
          this.hwLog('info', 'skipping CRM round', 'run-loop');
        }
        this.curTime = Math.max(this.curTime, d.crmEnv.getTime());
        if (exit) this.crmExited(node, d);
      }
      if (d.lrm) {
        let exit = false;
        if (!skip.lrm) {
          d.lrmEnv.setTime(this.curTime);
          exit = !d.lrm.doOneIteration();
        } else if (first) {
          this.hwLog('info', 'skipping LRM round', 'run-loop');
        }
        this.curTime = Math.max(this.curTime, d.lrmEnv.getTime());
        if (exit) this.lrmExited(node, d);
      }
      for (const n of nodes) {
        if (!this.watchdogCheck(n)) {
          this.internal({ kind: 'power', node: n, on: false }, `power ${n} off`, 'watchdog');
          this.hwLog('info', `server '${n}' stopped by poweroff (watchdog)`);
        }
      }
      first = false;
    }
    if (this.curTime - start < loopTime) this.curTime = start + loopTime;
    this.loadModel?.end(this.curTime - start);
    this.resampleNoise();
    for (const node of nodes) {
      const d = this.nodes.get(node)!;
      d.lrmEnv.setTime(this.curTime);
      d.crmEnv.setTime(this.curTime);
    }
  }

  /**
   * The daemons of a round in the `concurrent` model: expired watchdogs are enforced first (time
   * moved on since the last round), then every node's CRM iteration runs at the round's start T
   * (nodes in byte order), the watchdogs are checked, then every node's LRM iteration at T+1,
   * the watchdogs again (at T+2). Within a phase simulated time stands still, so one watchdog pass
   * per phase sees what a pass after every node would see. The caller ends the round
   * ({@link CONCURRENT_ROUND_SECONDS} after T).
   */
  private runConcurrentDaemons(skip: SkipRounds): void {
    const start = this.curTime;
    const nodes = this.nodeNames;
    this.enforceWatchdogs();
    for (const node of nodes) {
      const d = this.nodes.get(node)!;
      if (!d.crm || skip.crm) continue;
      d.crmEnv.setTime(start);
      if (!d.crm.doOneIteration()) this.crmExited(node, d);
    }
    if (skip.crm) this.hwLog('info', 'skipping CRM round', 'run-loop');
    this.setClocks(start + 1);
    this.enforceWatchdogs();
    for (const node of nodes) {
      const d = this.nodes.get(node)!;
      if (!d.lrm || skip.lrm) continue;
      d.lrmEnv.setTime(start + 1);
      if (!d.lrm.doOneIteration()) this.lrmExited(node, d);
    }
    if (skip.lrm) this.hwLog('info', 'skipping LRM round', 'run-loop');
    this.setClocks(start + 2);
    this.enforceWatchdogs();
  }

  /** Sets the hardware clock and every daemon's (between the phases of a concurrent round). */
  private setClocks(time: number): void {
    this.curTime = time;
    for (const node of this.nodeNames) {
      const d = this.nodes.get(node)!;
      d.lrmEnv.setTime(time);
      d.crmEnv.setTime(time);
    }
  }

  /** Powers off every node whose watchdog expired (logged as the reference does). */
  private enforceWatchdogs(): void {
    for (const n of this.nodeNames) {
      if (!this.watchdogCheck(n)) {
        this.internal({ kind: 'power', node: n, on: false }, `power ${n} off`, 'watchdog');
        this.hwLog('info', `server '${n}' stopped by poweroff (watchdog)`);
      }
    }
  }

  /** A command the simulated hardware issues itself (watchdog, reboot, shutdown). */
  private internal(command: Command, text: string, id: string): void {
    this.execute(command, text, id);
  }

  private crmExited(node: string, d: NodeSlot): void {
    d.crmEnv.log('info', 'exit (loop end)');
    d.crm = undefined;
    const flag = this.hw.get(node)!.shutdown;
    if (flag === 'reboot') {
      this.internal({ kind: 'power', node, on: false }, `power ${node} off`, 'reboot');
      this.internal({ kind: 'power', node, on: true }, `power ${node} on`, 'reboot');
    } else if (flag === 'shutdown') {
      this.internal({ kind: 'power', node, on: false }, `power ${node} off`, 'shutdown');
    } else if (!d.crmStop) {
      throw new SimError('sim-abort', 'unexpected CRM exit - not implemented');
    }
    d.crmStop = false;
  }

  private lrmExited(node: string, d: NodeSlot): void {
    d.lrmEnv.log('info', 'exit (loop end)');
    d.lrm = undefined;
    const flag = this.hw.get(node)!.shutdown;
    if (d.lrmRestart) {
      d.lrmRestart = undefined;
      d.lrm = this.startLrm(node);
    } else if (flag === 'reboot' || flag === 'shutdown') {
      this.internal({ kind: 'crm', node, action: 'stop' }, `crm ${node} stop`, flag);
    } else {
      throw new SimError('sim-abort', 'unexpected LRM exit - not implemented');
    }
  }

  // --- read-only views for the Simulation API ----------------------------------------------

  /** Node hardware state (copies; the view is read-only). */
  nodeHardware(node: string): Readonly<HardwareNode> | undefined {
    return this.hw.get(node);
  }

  /** Measured node usage without the overcommit warnings (for views). */
  measuredNodeStats(): Record<string, DynamicNodeStats> {
    return this.measureNodes();
  }

  /** Services in the config, insertion order, with the defaults of a read. */
  serviceEntries(): Snapshot<ServiceConfig> {
    return this.serviceConfig.snapshot();
  }

  staticStatsSnapshot(): Snapshot<Record<string, StaticServiceStats>> {
    return this.staticStats.snapshot() as Snapshot<Record<string, StaticServiceStats>>;
  }

  dynamicStatsSnapshot(): Snapshot<Record<string, DynamicServiceStats>> {
    return this.dynamicStats.snapshot() as Snapshot<Record<string, DynamicServiceStats>>;
  }

  /** The LRM statuses written so far. */
  lrmStatuses(): ReadonlyMap<string, Snapshot<LrmStatus>> {
    return this.lrmStatus;
  }
}

const EMPTY: Snapshot<LrmStatus> = snapshot({});

const NO_GUEST_CONFIG: Snapshot<GuestConfigEntry> = snapshot({});

const IDLE: Snapshot<DynamicServiceStats> = snapshot({ cpu: 0, mem: 0 });
const IDLE_WITH_MEMHOST: Snapshot<DynamicServiceStats> = snapshot({ cpu: 0, mem: 0, memhost: 0 });

/** What a guest that does not run measures: 0 for every value it reports. */
function idle(entry: Snapshot<DynamicServiceStats>): Snapshot<DynamicServiceStats> {
  return entry.memhost === undefined ? IDLE : IDLE_WITH_MEMHOST;
}
