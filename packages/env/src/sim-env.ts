import type { Env, FinishedMigrationTask, LogLevel } from './env';
import type {
  DatacenterSettings,
  DynamicNodeStats,
  DynamicServiceStats,
  GuestConfigEntry,
  LrmStatus,
  ManagerStatus,
  NodeInfo,
  ResourceAgent,
  ServiceConfig,
  StaticNodeStats,
  StaticServiceStats,
} from './types';
import type { Snapshot } from './snapshot';

/**
 * The simulated cluster behind {@link SimEnv} (implemented by `@poise/sim`'s hardware): shared
 * state of all simulated nodes. Reads return immutable snapshots (see {@link Env}); `lock` logs
 * `got lock` on the calling env when it takes a lock.
 */
export interface SimBackend {
  logDaemon(level: string, time: number, id: string, msg: string): void;
  cfsState(node: string, what: 'rw' | 'update'): boolean;
  getNodeInfo(): NodeInfo;
  lock(env: Env, name: string, unlock: boolean): boolean;
  watchdogOpen(node: string): string;
  watchdogUpdate(handle: string): void;
  watchdogClose(handle: string): void;
  readManagerStatus(): Snapshot<ManagerStatus>;
  writeManagerStatus(status: Snapshot<ManagerStatus>): void;
  readLrmStatus(node: string): Snapshot<LrmStatus>;
  writeLrmStatus(node: string, status: Snapshot<LrmStatus>): void;
  isNodeShutdown(node: string): { shutdown: boolean; reboot: boolean };
  readServiceConfig(): Snapshot<ServiceConfig>;
  updateServiceConfig(sid: string, params: Record<string, unknown>, deleteKeys?: string[]): void;
  changeServiceLocation(sid: string, current: string, next: string): void;
  readRulesConfig(): string;
  writeRulesConfig(text: string): void;
  readGroupConfig(): string;
  deleteGroupConfig(): void;
  readCrmCommands(): string;
  hasPendingCrmCommands(): boolean;
  queueCrmCommands(cmd: string): void;
  getDatacenterSettings(): Snapshot<DatacenterSettings>;
  getStaticNodeStats(): Snapshot<Record<string, StaticNodeStats>>;
  getDynamicNodeStats(): Snapshot<Record<string, DynamicNodeStats>>;
  getStaticServiceStats(): Snapshot<Record<string, StaticServiceStats>>;
  getDynamicServiceStats(): Snapshot<Record<string, DynamicServiceStats>>;
  nodeVersion(node: string): string | undefined;
  /** A guest's configuration (the case's `guest_config`), `undefined` when it has none. */
  getGuestConfig?(sid: string): Snapshot<GuestConfigEntry> | undefined;
  /** The simulated cluster's finished live migrations, `undefined` when it does not model them. */
  migrationTasks?(): readonly FinishedMigrationTask[] | undefined;
  /** The simulated resource agent of a service type, acting as the daemon of `env`. */
  resourceAgent(type: string, env: Env): ResourceAgent | undefined;
}

/** The message the simulated cluster filesystem fails with (reference text). */
const CFS_ERROR = 'cfs connection refused - not mounted?\n';

/**
 * The Env of one simulated daemon (`crm` or `lrm`) on one node: its own clock (advanced one
 * second per loop iteration), its log id `<node>/<daemon>`, and the cluster through the
 * {@link SimBackend}. Cluster-filesystem access throws `CFS_ERROR` while the node's cfs
 * is set to fail.
 */
export class SimEnv implements Env {
  private curTime = 0;

  constructor(
    private readonly hw: SimBackend,
    private readonly node: string,
    private readonly daemon: 'crm' | 'lrm',
  ) {}

  /** Sets the env clock (loop start / round end hooks of the run loop). */
  setTime(time: number): void {
    this.curTime = time;
  }

  nodename(): string {
    return this.node;
  }

  getTime(): number {
    return this.curTime;
  }

  log(level: LogLevel, msg: string): void {
    this.hw.logDaemon(level, this.curTime, `${this.node}/${this.daemon}`, msg);
  }

  sleep(): void {}

  sleepUntil(): void {}

  loopStartHook(): void {}

  loopEndHook(): void {
    this.curTime += 1;
  }

  private assertCfs(): void {
    if (!this.hw.cfsState(this.node, 'rw')) throw new Error(CFS_ERROR);
  }

  clusterStateUpdate(): boolean {
    return this.hw.cfsState(this.node, 'update');
  }

  quorate(): boolean {
    const { nodeInfo, quorate } = this.hw.getNodeInfo();
    if (!nodeInfo[this.node]?.online) return false;
    return quorate;
  }

  getNodeInfo(): NodeInfo {
    return this.hw.getNodeInfo();
  }

  getHaManagerLock(): boolean {
    return this.hw.lock(this, 'ha_manager_lock', false);
  }

  releaseHaManagerLock(): boolean {
    return this.hw.lock(this, 'ha_manager_lock', true);
  }

  getHaAgentLock(node = this.node): boolean {
    return this.hw.lock(this, `ha_agent_${node}_lock`, false);
  }

  releaseHaAgentLock(): boolean {
    return this.hw.lock(this, `ha_agent_${this.node}_lock`, true);
  }

  watchdogOpen(): string {
    return this.hw.watchdogOpen(this.node);
  }

  watchdogUpdate(handle: string): void {
    this.hw.watchdogUpdate(handle);
  }

  watchdogClose(handle: string): void {
    this.hw.watchdogClose(handle);
  }

  readManagerStatus(): Snapshot<ManagerStatus> {
    this.assertCfs();
    return this.hw.readManagerStatus();
  }

  writeManagerStatus(status: Snapshot<ManagerStatus>): void {
    this.assertCfs();
    this.hw.writeManagerStatus(status);
  }

  readLrmStatus(node: string): Snapshot<LrmStatus> {
    this.assertCfs();
    return this.hw.readLrmStatus(node);
  }

  writeLrmStatus(status: Snapshot<LrmStatus>): void {
    this.assertCfs();
    this.hw.writeLrmStatus(this.node, status);
  }

  isNodeShutdown(): { shutdown: boolean; reboot: boolean } {
    return this.hw.isNodeShutdown(this.node);
  }

  readServiceConfig(): Snapshot<ServiceConfig> {
    this.assertCfs();
    return this.hw.readServiceConfig();
  }

  updateServiceConfig(sid: string, params: Record<string, unknown>, deleteKeys?: string[]): void {
    this.hw.updateServiceConfig(sid, params, deleteKeys);
  }

  changeServiceLocation(sid: string, currentNode: string, newNode: string): void {
    this.assertCfs();
    this.hw.changeServiceLocation(sid, currentNode, newNode);
  }

  readRulesConfig(): string {
    this.assertCfs();
    return this.hw.readRulesConfig();
  }

  writeRulesConfig(text: string): void {
    this.assertCfs();
    this.hw.writeRulesConfig(text);
  }

  readGroupConfig(): string {
    this.assertCfs();
    return this.hw.readGroupConfig();
  }

  deleteGroupConfig(): void {
    this.assertCfs();
    this.hw.deleteGroupConfig();
  }

  readCrmCommands(): string {
    this.assertCfs();
    return this.hw.readCrmCommands();
  }

  hasPendingCrmCommands(): boolean {
    return this.hw.hasPendingCrmCommands();
  }

  queueCrmCommands(cmd: string): void {
    this.assertCfs();
    this.hw.queueCrmCommands(cmd);
  }

  getDatacenterSettings(): Snapshot<DatacenterSettings> {
    return this.hw.getDatacenterSettings();
  }

  getStaticNodeStats(): Snapshot<Record<string, StaticNodeStats>> {
    return this.hw.getStaticNodeStats();
  }

  getDynamicNodeStats(): Snapshot<Record<string, DynamicNodeStats>> {
    return this.hw.getDynamicNodeStats();
  }

  getStaticServiceStats(): Snapshot<Record<string, StaticServiceStats>> {
    return this.hw.getStaticServiceStats();
  }

  getDynamicServiceStats(): Snapshot<Record<string, DynamicServiceStats>> {
    return this.hw.getDynamicServiceStats();
  }

  getNodeVersion(node: string): string | undefined {
    return this.hw.nodeVersion(node);
  }

  getGuestConfig(sid: string): Snapshot<GuestConfigEntry> | undefined {
    return this.hw.getGuestConfig?.(sid);
  }

  getMigrationTasks(): readonly FinishedMigrationTask[] | undefined {
    return this.hw.migrationTasks?.();
  }

  sendNotification(prefix: string, subject: string): void {
    this.log('email', `${prefix}: ${subject}`);
  }

  getMaxWorkers(): number {
    return 0;
  }

  resourceAgent(type: string): ResourceAgent | undefined {
    return this.hw.resourceAgent(type, this);
  }
}
