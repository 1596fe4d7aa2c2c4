/**
 * An in-memory Env for unit tests of the HA core (not exported): one node's daemons, every
 * document a snapshot as the Env contract says, so a core that changes what it read fails
 * loudly (frozen objects throw in strict mode). Tests set the fields directly.
 */
import {
  nullRecord,
  snapshot,
  type DatacenterSettings,
  type DynamicNodeStats,
  type DynamicServiceStats,
  type Env,
  type LogLevel,
  type LrmStatus,
  type ManagerStatus,
  type NodeInfo,
  type ResourceAgent,
  type ServiceConfig,
  type Snapshot,
  type StaticNodeStats,
  type StaticServiceStats,
} from '@poise/env';

export class MemoryEnv implements Env {
  time = 0;
  lines: string[] = [];
  nodes: string[];
  managerStatus: Snapshot<ManagerStatus> = snapshot({});
  lrm = new Map<string, Snapshot<LrmStatus>>();
  services: Snapshot<ServiceConfig> = snapshot({});
  datacenter: Snapshot<DatacenterSettings> = snapshot({ ha: {}, crs: {} });
  staticNodeStats: Snapshot<Record<string, StaticNodeStats>> = snapshot({});
  dynamicNodeStats: Snapshot<Record<string, DynamicNodeStats>> = snapshot({});
  staticServiceStats: Snapshot<Record<string, StaticServiceStats>> = snapshot({});
  dynamicServiceStats: Snapshot<Record<string, DynamicServiceStats>> = snapshot({});
  crmCommands: string[] = [];

  constructor(
    private readonly node: string,
    nodes: string[],
  ) {
    this.nodes = nodes;
  }

  /** Sets the service config (a plain object; stored as a snapshot). */
  setServices(config: Record<string, Record<string, unknown>>): void {
    this.services = snapshot(config as unknown as ServiceConfig);
  }

  nodename() {
    return this.node;
  }
  getTime() {
    return this.time;
  }
  log(level: LogLevel, msg: string) {
    this.lines.push(`${level} ${this.time} ${msg}`);
  }
  sleep() {}
  sleepUntil() {}
  loopStartHook() {}
  loopEndHook() {}
  clusterStateUpdate() {
    return true;
  }
  quorate() {
    return true;
  }
  getNodeInfo(): NodeInfo {
    const nodeInfo = nullRecord<{ online: boolean }>();
    for (const n of this.nodes) nodeInfo[n] = { online: true };
    return { nodeInfo, quorate: true };
  }
  getHaManagerLock() {
    return true;
  }
  releaseHaManagerLock() {
    return true;
  }
  getHaAgentLock() {
    return true;
  }
  releaseHaAgentLock() {
    return true;
  }
  watchdogOpen() {
    return 'wd';
  }
  watchdogUpdate() {}
  watchdogClose() {}
  readManagerStatus() {
    return this.managerStatus;
  }
  writeManagerStatus(status: Snapshot<ManagerStatus>) {
    this.managerStatus = snapshot(status, this.managerStatus);
  }
  readLrmStatus(node: string) {
    return this.lrm.get(node) ?? snapshot<LrmStatus>({});
  }
  writeLrmStatus(status: Snapshot<LrmStatus>) {
    this.lrm.set(this.node, snapshot(status, this.lrm.get(this.node)));
  }
  isNodeShutdown() {
    return { shutdown: false, reboot: false };
  }
  readServiceConfig() {
    return this.services;
  }
  updateServiceConfig() {}
  changeServiceLocation() {}
  readRulesConfig() {
    return '';
  }
  writeRulesConfig() {}
  readGroupConfig() {
    return '';
  }
  deleteGroupConfig() {}
  readCrmCommands() {
    return this.crmCommands.splice(0).join('\n');
  }
  hasPendingCrmCommands() {
    return this.crmCommands.length > 0;
  }
  queueCrmCommands(cmd: string) {
    this.crmCommands.push(cmd);
  }
  getDatacenterSettings() {
    return this.datacenter;
  }
  getStaticNodeStats() {
    return this.staticNodeStats;
  }
  getDynamicNodeStats() {
    return this.dynamicNodeStats;
  }
  getStaticServiceStats() {
    return this.staticServiceStats;
  }
  getDynamicServiceStats() {
    return this.dynamicServiceStats;
  }
  getNodeVersion() {
    return '9.0.0';
  }
  sendNotification(prefix: string, subject: string) {
    this.log('email', `${prefix}: ${subject}`);
  }
  getMaxWorkers() {
    return 0;
  }
  resourceAgent(): ResourceAgent | undefined {
    return undefined;
  }
}
