/**
 * The simulated cluster (the reference's Sim/Hardware.pm): nodes with their power, network and
 * cluster filesystem, the documents the daemons share, the daemons themselves and the run loop
 * of one round, and the commands of a case's `cmdlist`. What the cluster measures lives in
 * `measurements.ts`, the locks and watchdogs in `locks.ts`, the round models in
 * `round-model.ts`, the guests' resource agents in `resources.ts`.
 */
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
import { Crm, Lrm, type LrmProcessState, type ManagerOptions } from '@poise/ha';
import type { CaseInput, HardwareNode } from './case';
import type { Command } from './commands';
import { SID_PATTERN } from './commands';
import { createResourceAgent } from './resources';
import { SimLog } from './log';
import { SimError } from './errors';
import { KeyedStore } from './store';
import { ClusterLocks, Watchdogs } from './locks';
import { Measurements } from './measurements';
import { parseLoadPressure } from './pressure/config';
import { LoadPressureModel, type NodePressure } from './pressure/model';
import {
  CONCURRENT_ROUND_SECONDS,
  MAX_ROUND_SECONDS,
  MIN_ROUND_SECONDS,
  resolveRoundModel,
  type RoundModel,
  type SkipRounds,
} from './round-model';
import { compareNames } from '@poise/usage';

/** pve-manager version of a node without one in hardware_status. */
const DEFAULT_PVE_MANAGER_VERSION = '9.0.0~2';

/** What the {@link Hardware} needs besides the case: the manager's options and the round model. */
export interface HardwareOptions extends ManagerOptions {
  /**
   * The round model (see {@link RoundModel}). Default: `reference`, except under `pve-9.2` for a
   * case of {@link CONCURRENT_MIN_NODES} nodes or more, which gets `concurrent`. `pve-5.2.0`
   * runs the reference's model only (`concurrent` is refused: that profile is the reference).
   */
  roundModel?: RoundModel | undefined;
}

interface NodeSlot {
  crm?: Crm;
  lrm?: Lrm;
  crmEnv: SimEnv;
  lrmEnv: SimEnv;
  lrmRestart?: boolean;
  crmStop?: boolean;
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
  private readonly locks = new ClusterLocks();
  private readonly watchdogs = new Watchdogs();
  private readonly measurements: Measurements;
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
  private readonly guestConfigs = new Map<string, Snapshot<GuestConfigEntry>>();
  /**
   * The membership {@link getNodeInfo} returns, frozen, until a command changes the hardware
   * (power, network): every daemon asks for it several times per round (`quorate()`).
   */
  private nodeInfo: NodeInfo | undefined;

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
    if (input.guestConfig) {
      for (const sid of Object.keys(input.guestConfig))
        this.guestConfigs.set(sid, snapshot<GuestConfigEntry>(input.guestConfig[sid]!));
    }
    this.log = new SimLog(sink);
    // the hardware owns copies: a case can be simulated again, and a caller's changes to its
    // input never reach a running simulation
    for (const node of Object.keys(input.hardwareStatus)) this.hw.set(node, thaw(input.hardwareStatus[node]!));
    for (const sid of Object.keys(input.serviceConfig)) this.serviceConfig.set(sid, thaw(input.serviceConfig[sid]!));
    this.managerStatus = snapshot(input.managerStatus);
    this.rulesText = input.rulesConfig;
    this.groupsText = input.groups;
    this.dc = snapshot(input.datacenterCfg);
    this.nodeNames = [...this.hw.keys()].sort(compareNames);
    this.loadModel =
      input.simOptions?.pressureModel === 'load'
        ? new LoadPressureModel(
            input.simOptions.loadPressure ??
              parseLoadPressure(undefined, `${input.name}/sim_options`, ['load-pressure'], this.nodeNames),
            this.nodeNames,
            seed,
          )
        : undefined;
    this.measurements = new Measurements(input, this, {
      legacy: this.legacy,
      loadModel: this.loadModel,
      seed,
      log: (level, msg) => this.hwLog(level, msg),
    });
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

  /** Cluster membership and quorum (frozen; the same object until a command changes the hardware). */
  getNodeInfo(): NodeInfo {
    if (this.nodeInfo) return this.nodeInfo;
    const nodeInfo = nullRecord<{ online: boolean }>();
    let online = 0;
    for (const d of this.hw.values()) if (this.nodeUp(d)) online++;
    const quorate = online > Math.trunc(this.hw.size / 2);
    for (const [node, d] of this.hw) nodeInfo[node] = Object.freeze({ online: quorate && this.nodeUp(d) });
    this.nodeInfo = Object.freeze({ nodeInfo: Object.freeze(nodeInfo), quorate });
    return this.nodeInfo;
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
    this.measurements.placementChanged();
  }

  changeServiceLocation(sid: string, current: string, next: string): void {
    const cd = this.serviceConfig.get(sid);
    if (!cd) throw new Error(`no such service '${sid}'\n`);
    if (current !== cd.node)
      throw new Error(`current_node for '${sid}' does not match (${current} != ${String(cd.node)})\n`);
    cd.node = next;
    this.serviceConfig.changed(sid);
    this.measurements.placementChanged();
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

  /** The configured services' ids in byte order. */
  sortedSids(): readonly string[] {
    return this.serviceConfig.sortedKeys();
  }

  /** The node a service is configured on, undefined for a service not configured. */
  configNode(sid: string): string | undefined {
    return this.serviceConfig.get(sid)?.node as string | undefined;
  }

  setRunning(node: string, sid: string, running: number | undefined): void {
    let flags = this.running.get(node);
    if (!flags) {
      flags = new Map();
      this.running.set(node, flags);
    }
    if (running === undefined) flags.delete(sid);
    else flags.set(sid, running);
    this.measurements.placementChanged();
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
    return this.measurements.staticServiceStats();
  }

  /** The measured service usage, with the reference's overcommit warnings (see `Measurements.serviceStats`). */
  getDynamicServiceStats(): Snapshot<Record<string, DynamicServiceStats>> {
    return this.measurements.serviceStats();
  }

  /** Measured node usage, with the reference's overcommit warnings (see `Measurements.nodeStats`). */
  getDynamicNodeStats(): Snapshot<Record<string, DynamicNodeStats>> {
    return this.measurements.nodeStats();
  }

  /** The load pressure model's noise-free state of every node now (undefined without the model). */
  pressureTruth(): readonly NodePressure[] | undefined {
    return this.measurements.pressureTruth();
  }

  /**
   * A running guest moves from `source` to `target` (called by the resource agents before its
   * configuration names the target): under the load pressure model it pays the migration's
   * cost; false when the live migration does not converge in time (the guest stays).
   */
  guestMoved(sid: string, source: string, target: string, live: boolean): boolean {
    return this.measurements.guestMoved(sid, source, target, live);
  }

  /** The load pressure model's finished live migrations (undefined without the model). */
  migrationTasks(): readonly { readonly durationSeconds: number; readonly transferredBytes: number }[] | undefined {
    return this.loadModel?.finishedMigrations();
  }

  // --- locks and watchdogs -----------------------------------------------------------------

  lock(env: Env, name: string, unlock: boolean): boolean {
    return this.locks.lock(env, name, unlock);
  }

  watchdogOpen(node: string): string {
    return this.watchdogs.open(node, this.curTime);
  }

  watchdogUpdate(id: string): void {
    this.watchdogs.update(id, this.curTime);
  }

  watchdogClose(id: string): void {
    this.watchdogs.close(id);
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
    this.nodeInfo = undefined; // any hardware command may change the membership
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
        this.node(command.node);
        this.measurements.setNode(command);
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
        this.watchdogs.reset(node);
        this.running.set(node, new Map());
        this.measurements.placementChanged();
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
        this.measurements.serviceDeleted(sid);
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
      case 'service-stats':
        this.measurements.setServiceStats(command);
        return;
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
        this.measurements.placementChanged();
        return;
      }
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
    // (its evaluation shared with the previous round's sample when nothing changed in between)
    this.loadModel?.begin(this.measurements.nodeLoads(), this.measurements.pressureTruth());
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
      this.enforceWatchdogs();
      first = false;
    }
    if (this.curTime - start < loopTime) this.curTime = start + loopTime;
    this.loadModel?.end(this.curTime - start);
    this.measurements.resampleNoise();
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
      if (!this.watchdogs.check(n, this.curTime)) {
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
    return this.measurements.measureNodes();
  }

  /** Services in the config, insertion order, with the defaults of a read. */
  serviceEntries(): Snapshot<ServiceConfig> {
    return this.serviceConfig.snapshot();
  }

  staticStatsSnapshot(): Snapshot<Record<string, StaticServiceStats>> {
    return this.measurements.staticServiceStats();
  }

  /** The configured service usage (what the case and the commands set, whatever runs). */
  dynamicStatsSnapshot(): Snapshot<Record<string, DynamicServiceStats>> {
    return this.measurements.configuredServiceStats();
  }

  /** The LRM statuses written so far. */
  lrmStatuses(): ReadonlyMap<string, Snapshot<LrmStatus>> {
    return this.lrmStatus;
  }
}

const EMPTY: Snapshot<LrmStatus> = snapshot({});

const NO_GUEST_CONFIG: Snapshot<GuestConfigEntry> = snapshot({});
