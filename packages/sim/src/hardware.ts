import type {
  DatacenterSettings,
  DynamicNodeStats,
  LrmStatus,
  ManagerStatus,
  ServiceConfig,
  ServiceConfigEntry,
} from '@poise/env';
import { Crm, Lrm, type LrmProcessState, type ManagerOptions, byteCompare, jsonClone } from '@poise/ha';
import type { CaseInput, HardwareNode } from './case';
import { SimEnv, type Env, type ResourceAgent, type SimBackend } from '@poise/env';
import { createResourceAgent } from './resources';
import { SimLog } from './log';
import { SimError } from './errors';

/** Seconds after which a lock not renewed may be taken by another node. */
export const LOCK_TIMEOUT_SECONDS = 120;
/** Seconds after which a watchdog not updated powers its node off. */
export const WATCHDOG_TIMEOUT_SECONDS = 60;
/** The simulation dies once simulated time passes this. */
export const MAX_SIM_TIME = 10000;
/** Default node capacity for the dynamic stats. */
export const DYNAMIC_NODE_DEFAULT_MAXCPU = 24;
export const DYNAMIC_NODE_DEFAULT_MAXMEM = 128 * 1024 ** 3;
/** pve-manager version of a node without one in hardware_status. */
export const DEFAULT_PVE_MANAGER_VERSION = '9.0.0~2';

const MiB = 1024 ** 2;

interface NodeSlot {
  crm?: Crm;
  lrm?: Lrm;
  crmEnv: SimEnv;
  lrmEnv: SimEnv;
  lrmRestart?: boolean;
  crmStop?: boolean;
}

/** The simulated cluster: nodes, power, network, cluster filesystem, locks and watchdogs. */
export class Hardware implements SimBackend {
  curTime = 0;
  readonly log: SimLog;
  hw: Record<string, HardwareNode>;
  private serviceConfig: Record<string, Record<string, unknown>>;
  private managerStatus: ManagerStatus;
  private lrmStatus: Record<string, LrmStatus> = {};
  private running: Record<string, Record<string, number>>;
  private crmCommands = '';
  private locks: Record<string, { node: string; time: number }> = {};
  private watchdogs = new Map<string, { node: string; updateTime: number }>();
  private wdCounter = 0;
  private staticStats: CaseInput['staticServiceStats'];
  private dynamicStats: CaseInput['dynamicServiceStats'];
  private rulesText: string;
  private groupsText: string;
  private readonly dc: DatacenterSettings;
  /** @internal Each node's daemons and their envs. */
  readonly nodes: Record<string, NodeSlot> = {};
  readonly nodeNames: string[];
  /** Process-global state of the reference: the LRM start-up flag. */
  readonly lrmProcess: LrmProcessState = { wroteStatusAtStartup: false };
  /** Process-global failure counters of `fa:` resources, per service name. */
  readonly virtFailTries = { start: new Map<string, number>(), migrate: new Map<string, number>() };

  constructor(
    input: CaseInput,
    readonly managerOptions: ManagerOptions,
    sink?: (line: string) => void,
  ) {
    this.log = new SimLog(sink);
    const c = jsonClone(input);
    this.hw = c.hardwareStatus;
    this.serviceConfig = c.serviceConfig;
    this.managerStatus = c.managerStatus;
    this.running = c.serviceStatus;
    this.staticStats = c.staticServiceStats;
    this.dynamicStats = c.dynamicServiceStats;
    this.rulesText = c.rulesConfig;
    this.groupsText = c.groups;
    this.dc = c.datacenterCfg;
    this.nodeNames = Object.keys(this.hw).sort(byteCompare);
    for (const node of this.nodeNames) {
      this.running[node] ??= {};
      this.nodes[node] = {
        crmEnv: new SimEnv(this, node, 'crm'),
        lrmEnv: new SimEnv(this, node, 'lrm'),
      };
    }
  }

  logDaemon(level: string, time: number, id: string, msg: string): void {
    this.log.daemon(level, time, id, msg);
  }

  resourceAgent(type: string, env: Env): ResourceAgent | undefined {
    return createResourceAgent(type, env, this);
  }

  hwLog(level: string, msg: string, id = 'hardware'): void {
    this.log.hardware(level, this.curTime, id, msg);
  }

  // --- cluster membership, cfs -------------------------------------------------------------

  getNodeInfo(): { nodeInfo: Record<string, { online: boolean }>; quorate: boolean } {
    const nodeInfo: Record<string, { online: boolean }> = {};
    let online = 0;
    const names = Object.keys(this.hw);
    for (const node of names) {
      const d = this.hw[node]!;
      const on = d.power === 'on' && d.network === 'on';
      nodeInfo[node] = { online: on };
      if (on) online++;
    }
    const quorate = online > Math.trunc(names.length / 2);
    if (!quorate) for (const node of names) nodeInfo[node]!.online = false;
    return { nodeInfo, quorate };
  }

  cfsState(node: string, what: 'rw' | 'update'): boolean {
    const v = this.hw[node]?.cfs?.[what];
    return v === undefined ? true : !!v;
  }

  // --- status documents ----------------------------------------------------------------------

  readManagerStatus(): ManagerStatus {
    return jsonClone(this.managerStatus);
  }

  writeManagerStatus(ms: ManagerStatus): void {
    this.managerStatus = jsonClone(ms);
  }

  readLrmStatus(node: string): LrmStatus {
    return jsonClone(this.lrmStatus[node] ?? {});
  }

  writeLrmStatus(node: string, status: LrmStatus): void {
    this.lrmStatus[node] = jsonClone(status);
  }

  /** The service config with the reference's defaults (Hardware.pm read_service_config). */
  readServiceConfig(): ServiceConfig {
    const conf = jsonClone(this.serviceConfig) as Record<string, Record<string, unknown>>;
    for (const sid of Object.keys(conf)) {
      const d = conf[sid]!;
      if (!d.node) throw new Error(`service '${sid}' without assigned node!`);
      const m = /^(vm|ct|fa):(\d+)$/.exec(sid);
      if (!m) throw new Error('implement me');
      d.type = m[1];
      d.name = m[2];
      if (!d.state) d.state = 'disabled';
      if (d.state === 'enabled') d.state = 'started';
      if (d.failback === undefined) d.failback = 1;
      if (d.max_restart === undefined) d.max_restart = 1;
      if (d.max_relocate === undefined) d.max_relocate = 1;
    }
    return conf as unknown as ServiceConfig;
  }

  // The two writers below change the stored entry in place. The reference reads the whole
  // config with defaults and writes it back; the defaults are re-applied on every read, so the
  // stored form makes no difference, and in place keeps a change O(1) instead of O(services).

  updateServiceConfig(sid: string, params: Record<string, unknown>, deleteKeys: string[] = []): void {
    const cd = this.serviceConfig[sid];
    if (!cd) throw new Error(`no such service ${sid}`);
    for (const [k, v] of Object.entries(params)) cd[k] = jsonClone(v);
    for (const k of deleteKeys) delete cd[k];
  }

  changeServiceLocation(sid: string, current: string, next: string): void {
    const cd = this.serviceConfig[sid];
    if (!cd) throw new Error(`no such service '${sid}'\n`);
    if (current !== cd.node) throw new Error(`current_node for '${sid}' does not match (${current} != ${cd.node})\n`);
    cd.node = next;
  }

  serviceLock(sid: string): string | undefined {
    const lock = this.serviceConfig[sid]?.lock;
    return typeof lock === 'string' && lock !== '' ? lock : undefined;
  }

  unlockService(sid: string, lock: string): string | undefined {
    const cd = this.serviceConfig[sid];
    if (!cd || cd.lock !== lock) return undefined;
    delete cd.lock;
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

  getDatacenterSettings(): DatacenterSettings {
    return jsonClone(this.dc);
  }

  nodeVersion(node: string): string | undefined {
    return (this.hw[node]?.['pve-manager-version'] as string | undefined) ?? DEFAULT_PVE_MANAGER_VERSION;
  }

  isNodeShutdown(node: string): { shutdown: boolean; reboot: boolean } {
    const d = this.hw[node];
    if (!d) throw new Error(`undefined node status for node '${node}'`);
    const target = d.shutdown;
    if (!target) return { shutdown: false, reboot: false };
    if (target === 'shutdown') return { shutdown: true, reboot: false };
    if (target === 'reboot') return { shutdown: true, reboot: true };
    throw new Error(`unknown shutdown target '${target}'`);
  }

  // --- running flags and stats -------------------------------------------------------------

  isRunning(node: string, sid: string): boolean {
    return !!this.running[node]?.[sid];
  }

  setRunning(node: string, sid: string, running: number | undefined): void {
    this.running[node] ??= {};
    if (running === undefined) delete this.running[node]![sid];
    else this.running[node]![sid] = running;
  }

  getStaticNodeStats(): Record<string, { maxcpu: number; maxmem: number }> {
    const res: Record<string, { maxcpu: number; maxmem: number }> = {};
    for (const node of this.nodeNames) {
      const d = this.hw[node]!;
      res[node] = { maxcpu: d.maxcpu as number, maxmem: d.maxmem as number };
    }
    return res;
  }

  getStaticServiceStats(): Record<string, { maxcpu: number; maxmem: number }> {
    return jsonClone(this.staticStats);
  }

  getDynamicServiceStats(): Record<string, { cpu: number; mem: number }> {
    return jsonClone(this.dynamicStats);
  }

  /**
   * Measured node usage: a node's cpu and memory are the sum of the measured usage of the
   * services running on it (by config node and running flag), summed in sid byte order.
   */
  getDynamicNodeStats(): Record<string, DynamicNodeStats> {
    const res: Record<string, DynamicNodeStats> = {};
    for (const node of this.nodeNames) {
      const d = this.hw[node]!;
      res[node] = {
        cpu: 0.0,
        maxcpu: (d.maxcpu as number | undefined) ?? DYNAMIC_NODE_DEFAULT_MAXCPU,
        mem: 0,
        maxmem: (d.maxmem as number | undefined) ?? DYNAMIC_NODE_DEFAULT_MAXMEM,
      };
    }
    const conf = this.serviceConfig;
    for (const sid of Object.keys(conf).sort(byteCompare)) {
      const node = conf[sid]!.node as string;
      if (!res[node] || !this.isRunning(node, sid)) continue;
      const st = this.dynamicStats[sid];
      if (!st) continue;
      res[node]!.cpu += st.cpu ?? 0;
      res[node]!.mem += st.mem ?? 0;
    }
    return res;
  }

  // --- locks and watchdogs -----------------------------------------------------------------

  /** The cluster-wide lock of the reference simulator (Sim/Env.pm sim_get_lock). */
  lock(env: Env, name: string, unlock: boolean): boolean {
    if (!env.quorate()) return false;
    const node = env.nodename();
    const now = env.getTime();
    const d = this.locks[name];
    if (unlock) {
      if (!d) return false;
      const tdiff = now - d.time;
      if (tdiff > LOCK_TIMEOUT_SECONDS) return true;
      if (d.node === node) {
        delete this.locks[name];
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
    this.locks[name] = { node, time: now };
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
    return new Crm(this.nodes[node]!.crmEnv, this.managerOptions);
  }

  private startLrm(node: string): Lrm {
    return new Lrm(this.nodes[node]!.lrmEnv, this.lrmProcess);
  }

  /** Executes one hardware/cluster command (spec §2); `id` is the log id of the issuer. */
  simCmd(cmdstr: string, id: string): void {
    const [cmd, objid, action, ...params] = cmdstr.trim().split(/\s+/);
    if (!objid) throw new Error(`sim_hardware_cmd: no node or service for command specified`);
    this.hwLog('info', `execute ${cmdstr}`, id);

    if (cmd === 'service') {
      this.serviceCmd(objid, action ?? '', params);
      return;
    }
    const node = objid;
    const d = this.nodes[node];
    const hw = this.hw[node];
    if (!d || !hw) throw new Error(`sim_hardware_cmd: no such node '${node}'`);

    switch (cmd) {
      case 'power': {
        if (action !== 'on' && action !== 'off') throw new Error(`sim_hardware_cmd: unknown action '${action}'`);
        if (hw.power !== action) {
          if (action === 'on') {
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
            this.running[node] = {};
          }
        }
        hw.power = action;
        hw.network = action;
        hw.shutdown = undefined;
        break;
      }
      case 'network':
        if (action !== 'on' && action !== 'off') throw new Error(`sim_hardware_cmd: unknown network action '${action}'`);
        hw.network = action;
        break;
      case 'cfs': {
        if (action !== 'rw' && action !== 'update') throw new Error(`sim_hardware_cmd: unknown cfs action '${action}' for node '${node}'`);
        const v = params[0];
        if (v !== 'work' && v !== 'fail') throw new Error(`sim_hardware_cmd: unknown cfs command '${v}' for '${action}' on node '${node}'`);
        hw.cfs ??= {};
        hw.cfs[action] = v === 'work';
        break;
      }
      case 'reboot':
      case 'shutdown':
        hw.shutdown = cmd;
        d.lrm?.shutdownRequest();
        break;
      case 'restart-lrm':
        if (d.lrm) {
          d.lrmRestart = true;
          d.lrm.shutdownRequest();
        }
        break;
      case 'crm':
        switch (action) {
          case 'stop':
            if (d.crm) {
              d.crmStop = true;
              d.crm.shutdownRequest();
            }
            break;
          case 'start':
            d.crm ??= this.startCrm(node);
            break;
          case 'enable-node-maintenance':
          case 'disable-node-maintenance':
            this.queueCrmCommands(`${action} ${node}`);
            break;
          case 'disarm-ha':
            if (params[0] !== 'freeze' && params[0] !== 'ignore') throw new Error(`sim_hardware_cmd: unknown disarm mode '${params[0]}'`);
            this.queueCrmCommands(`disarm-ha ${params[0]}`);
            break;
          case 'arm-ha':
            this.queueCrmCommands('arm-ha');
            break;
          default:
            throw new Error(`sim_hardware_cmd: unknown action '${action}'`);
        }
        break;
      case 'pve-manager-version':
        if (action !== 'set' || params[0] === undefined) throw new Error(`sim_hardware_cmd: unknown action '${action}'`);
        hw['pve-manager-version'] = params[0];
        break;
      default:
        throw new Error(`sim_hardware_cmd: unknown command '${cmd}'`);
    }
  }

  private serviceCmd(sid: string, action: string, params: string[]): void {
    const conf = this.serviceConfig;
    switch (action) {
      case 'started': case 'disabled': case 'stopped': case 'ignored': case 'enabled':
        if (!conf[sid]) throw new Error(`no such service '${sid}'`);
        conf[sid]!.state = action;
        return;
      case 'migrate': case 'relocate':
        this.queueCrmCommands(`${action} ${sid} ${params[0]}`);
        return;
      case 'stop':
        if (params[0] === undefined) throw new Error(`sim_hardware_cmd: missing timeout for 'stop' command`);
        this.queueCrmCommands(`stop ${sid} ${params[0]}`);
        return;
      case 'add': {
        if (conf[sid]) throw new Error(`sim_hardware_cmd: cannot add service '${sid}', already exists`);
        const [node, state = 'started', running = '0'] = params;
        conf[sid] = { state, node };
        this.setRunning(node!, sid, Number(running));
        return;
      }
      case 'delete':
        delete conf[sid];
        delete this.staticStats[sid];
        return;
      case 'lock': {
        if (!conf[sid]) throw new Error(`no such service '${sid}'`);
        conf[sid]!.lock = params[0] || 'backup';
        return;
      }
      case 'unlock': {
        const cd = conf[sid];
        if (!cd) throw new Error(`no such service '${sid}'`);
        if (params[0] && cd.lock !== params[0]) return; // the reference warns on stderr only
        delete cd.lock;
        return;
      }
      case 'set-static-stats':
      case 'set-dynamic-stats': {
        const dyn = action === 'set-dynamic-stats';
        const target = (dyn ? this.dynamicStats : this.staticStats) as Record<string, Record<string, number>>;
        target[sid] ??= {};
        for (let i = 0; i < params.length; i += 2) {
          const key = params[i]!;
          const raw = Number(params[i + 1]);
          if (key === 'maxcpu' || key === 'cpu') target[sid]![key] = raw;
          else if (key === 'maxmem' || key === 'mem') target[sid]![key] = raw * MiB;
          else throw new Error(`sim_hardware_cmd: unknown stat '${key}'`);
        }
        return;
      }
      case 'manual-migrate': {
        const cd = conf[sid];
        if (!cd) throw new Error(`no such service '${sid}'`);
        const disarmMode = this.managerStatus.disarm?.mode;
        if (cd.state !== 'ignored' && disarmMode !== 'ignore') {
          throw new Error(`sim_hardware_cmd: manual-migrate requires service '${sid}' to be ignored or the HA stack disarmed in ignore mode`);
        }
        cd.node = params[0];
        return;
      }
      default:
        throw new Error(`sim_hardware_cmd: unknown service action '${action}'`);
    }
  }

  // --- the run loop ------------------------------------------------------------------------

  /**
   * Runs the simulation (spec §1.4): 20-second rounds, nodes in byte order, CRM then LRM per
   * node, command lists at round ends.
   */
  run(cmdlist: string[][]): void {
    const lists = cmdlist.map((l) => [...l]);
    let loopCount = 0;
    let nextCmdAt = 0;
    let lastCommandTime = 0;
    const skip = { crm: 0, lrm: 0 };

    for (;;) {
      const start = this.curTime;
      const nodes = this.nodeNames;
      const loopTime = Math.max(20, 2 * nodes.length);
      if (loopTime >= 60) throw new SimError('sim-abort', 'too many nodes');
      let first = true;
      for (const node of nodes) {
        const d = this.nodes[node]!;
        if (d.crm) {
          let exit = false;
          if (!skip.crm) {
            d.crmEnv.setTime(this.curTime);
            exit = !d.crm.doOneIteration();
          } else if (first) {
            this.hwLog('info', 'skipping CRM round', 'run-loop');
          }
          this.curTime = Math.max(this.curTime, d.crmEnv.getTime());
          if (exit) {
            d.crmEnv.log('info', 'exit (loop end)');
            d.crm = undefined;
            const flag = this.hw[node]!.shutdown;
            if (flag === 'reboot') {
              this.simCmd(`power ${node} off`, 'reboot');
              this.simCmd(`power ${node} on`, 'reboot');
            } else if (flag === 'shutdown') {
              this.simCmd(`power ${node} off`, 'shutdown');
            } else if (!d.crmStop) {
              throw new SimError('sim-abort', 'unexpected CRM exit - not implemented');
            }
            d.crmStop = false;
          }
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
          if (exit) {
            d.lrmEnv.log('info', 'exit (loop end)');
            d.lrm = undefined;
            const flag = this.hw[node]!.shutdown;
            if (d.lrmRestart) {
              d.lrmRestart = undefined;
              d.lrm = this.startLrm(node);
            } else if (flag === 'reboot' || flag === 'shutdown') {
              this.simCmd(`crm ${node} stop`, flag);
            } else {
              throw new SimError('sim-abort', 'unexpected LRM exit - not implemented');
            }
          }
        }
        for (const n of nodes) {
          if (!this.watchdogCheck(n)) {
            this.simCmd(`power ${n} off`, 'watchdog');
            this.hwLog('info', `server '${n}' stopped by poweroff (watchdog)`);
          }
        }
        first = false;
      }
      if (skip.crm > 0) skip.crm--;
      if (skip.lrm > 0) skip.lrm--;

      if (this.curTime - start < loopTime) this.curTime = start + loopTime;
      if (this.curTime > MAX_SIM_TIME) throw new SimError('sim-abort', `simulation end - time limit reached`);

      for (const node of nodes) {
        this.nodes[node]!.lrmEnv.setTime(this.curTime);
        this.nodes[node]!.crmEnv.setTime(this.curTime);
      }

      if (this.curTime < nextCmdAt) continue;
      if (loopCount % 5 === 0) {
        const list = lists.shift();
        if (!list) {
          if (this.curTime - lastCommandTime > 500) return;
        } else {
          for (const cmd of list) {
            lastCommandTime = this.curTime;
            let m: RegExpExecArray | null;
            if ((m = /^delay\s+(\d+)\s*$/.exec(cmd))) {
              this.hwLog('info', `execute ${cmd}`, 'cmdlist');
              nextCmdAt = this.curTime + Number(m[1]);
            } else if ((m = /^skip-round\s+(crm|lrm)(?:\s+(\d+))?\s*$/.exec(cmd))) {
              this.hwLog('info', `execute ${cmd}`, 'cmdlist');
              skip[m[1] as 'crm' | 'lrm'] += m[2] !== undefined ? Number(m[2]) : 1;
            } else {
              this.simCmd(cmd, 'cmdlist');
            }
          }
        }
      }
      loopCount++;
    }
  }
}

export type { ServiceConfigEntry };
