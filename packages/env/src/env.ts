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

/** Log levels the HA core uses (syslog names, plus `email` for notifications in the simulator). */
export type LogLevel = 'err' | 'warning' | 'warn' | 'notice' | 'info' | 'debug' | 'email';

/**
 * Everything the HA core (CRM, LRM, manager) may do to the world. There is no other way out:
 * time, logging, locks, quorum, status documents, configuration, stats, commands, watchdog and
 * the resource agents all come through here. One Env belongs to one daemon on one node.
 *
 * Contract: every `read*` and `get*Stats` returns an immutable {@link Snapshot} of the stored
 * document (deeply read-only, frozen by the simulator), in O(1) or O(what is read); a caller
 * that wants to change what it read makes an explicit copy (`thaw`). `write*` takes a value
 * the caller may go on changing: the implementation stores its own snapshot, sharing the
 * parts that did not change with the previous one. Methods that touch the cluster filesystem
 * throw when it is unavailable, with the message the reference uses (callers catch and log it).
 */
/** A finished live migration (see {@link Env.getMigrationTasks}). */
export interface FinishedMigrationTask {
  /** From its start to its end, seconds. */
  readonly durationSeconds: number;
  /** Memory sent, bytes. */
  readonly transferredBytes: number;
}

export interface Env {
  nodename(): string;
  /** Seconds (integer in the simulator). */
  getTime(): number;
  log(level: LogLevel, msg: string): void;
  /** A pause; the simulator only accounts for it. */
  sleep(seconds: number): void;
  sleepUntil(time: number): void;
  loopStartHook(): void;
  loopEndHook(): void;

  /** Refreshes the cluster state; false when it is inconsistent (cfs restart). */
  clusterStateUpdate(): boolean;
  quorate(): boolean;
  getNodeInfo(): NodeInfo;

  getHaManagerLock(): boolean;
  releaseHaManagerLock(): boolean;
  getHaAgentLock(node?: string): boolean;
  releaseHaAgentLock(): boolean;

  watchdogOpen(): string;
  watchdogUpdate(handle: string): void;
  watchdogClose(handle: string): void;

  readManagerStatus(): Snapshot<ManagerStatus>;
  writeManagerStatus(status: Snapshot<ManagerStatus>): void;
  readLrmStatus(node: string): Snapshot<LrmStatus>;
  writeLrmStatus(status: Snapshot<LrmStatus>): void;

  /** Whether this node is shutting down, and whether that is a reboot. */
  isNodeShutdown(): { shutdown: boolean; reboot: boolean };

  readServiceConfig(): Snapshot<ServiceConfig>;
  updateServiceConfig(sid: string, params: Record<string, unknown>, deleteKeys?: string[]): void;
  /** Moves a service's configuration to another node (`steal_service`). */
  changeServiceLocation(sid: string, currentNode: string, newNode: string): void;

  /** The rules configuration as SectionConfig text ('' when absent). */
  readRulesConfig(): string;
  writeRulesConfig(text: string): void;
  /** The legacy HA groups configuration as SectionConfig text ('' when absent). */
  readGroupConfig(): string;
  deleteGroupConfig(): void;

  /** Reads and clears the queued CRM commands (one per line). */
  readCrmCommands(): string;
  /** Whether CRM commands are queued, without consuming them. */
  hasPendingCrmCommands(): boolean;
  queueCrmCommands(cmd: string): void;

  getDatacenterSettings(): Snapshot<DatacenterSettings>;
  getStaticNodeStats(): Snapshot<Record<string, StaticNodeStats>>;
  getDynamicNodeStats(): Snapshot<Record<string, DynamicNodeStats>>;
  /** Per service as reported; values are not validated (the HA core checks them). */
  getStaticServiceStats(): Snapshot<Record<string, StaticServiceStats>>;
  /** Per service as measured; values are not validated (the HA core checks them). */
  getDynamicServiceStats(): Snapshot<Record<string, DynamicServiceStats>>;
  /** The pve-manager version a node runs, if known. */
  getNodeVersion(node: string): string | undefined;
  /**
   * Optional: a guest's current configuration (keys to property strings, as the PVE API
   * returns it), or `undefined` when unknown. Used by the balancer's migratability check; an
   * Env without it makes every guest's configuration unknown (the check then moves them).
   * May be slow on a real cluster: the HA core asks only for guests it considers moving.
   */
  getGuestConfig?(sid: string): Snapshot<GuestConfigEntry> | undefined;
  /**
   * Optional: the cluster's finished live migrations, oldest first (how long each took, how
   * much memory it sent), or `undefined` when unknown; read by the contention objective's
   * cost–benefit to learn the migration link's rate.
   */
  getMigrationTasks?(): readonly FinishedMigrationTask[] | undefined;

  /** A notification (fence events); subject is `<prefix>: <subject>`. */
  sendNotification(prefix: string, subject: string): void;
  /** 0 runs resource commands synchronously (the simulator). */
  getMaxWorkers(): number;
  resourceAgent(type: string): ResourceAgent | undefined;
}
