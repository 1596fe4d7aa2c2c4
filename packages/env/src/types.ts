/**
 * Data shapes exchanged between the HA core and its environment. They mirror the JSON
 * documents of the reference HA stack (manager status, LRM status, service config) so that
 * status files written by one implementation can be read by the other.
 */

/** A service's entry in the manager status (`sd` in the reference). */
export interface ServiceStatus {
  state: string;
  node: string;
  uid?: string;
  target?: string;
  failed_nodes?: string[];
  maintenance_node?: string;
  running?: number;
  cmd?: Array<string | number>;
  timeout?: number | string;
  [key: string]: unknown;
}

/** The CRM master's persistent state (`manager_status`). */
export interface ManagerStatus {
  master_node?: string;
  node_status?: Record<string, string>;
  service_status?: Record<string, ServiceStatus>;
  node_request?: Record<string, { maintenance?: number }>;
  disarm?: { mode: string; state: string };
  timestamp?: number;
  [key: string]: unknown;
}

/** One LRM command result, keyed by the command's uid. */
export interface LrmResult {
  sid: string;
  state: string;
  exit_code: number;
}

/** What an LRM publishes about itself (`lrm_status_<node>`). */
export interface LrmStatus {
  state?: string;
  mode?: string;
  results?: Record<string, LrmResult>;
  timestamp?: number;
}

/** A service's configuration, after the reference's defaults were applied. */
export interface ServiceConfigEntry {
  node: string;
  state: string;
  type: string;
  name: string;
  group?: string;
  failback: number | string | boolean;
  max_restart: number;
  max_relocate: number;
  comment?: string;
  lock?: string;
  [key: string]: unknown;
}

export type ServiceConfig = Record<string, ServiceConfigEntry>;

/** Datacenter settings relevant to HA (`datacenter.cfg` keys `ha` and `crs`). */
export interface DatacenterSettings {
  ha: { shutdown_policy?: string; [key: string]: unknown };
  /** Tasks (migrations among them) a node runs at once (PVE's default 4 when unset). */
  max_workers?: number;
  crs: {
    ha?: string;
    'ha-rebalance-on-start'?: unknown;
    'ha-auto-rebalance'?: unknown;
    'ha-auto-rebalance-threshold'?: number;
    'ha-auto-rebalance-method'?: string;
    'ha-auto-rebalance-hold-duration'?: number;
    'ha-auto-rebalance-margin'?: number;
    [key: string]: unknown;
  };
}

/** Cluster membership as seen by one node. */
export interface NodeInfo {
  nodeInfo: Record<string, { online: boolean }>;
  quorate: boolean;
}

/** Static node capacity: cpu count and memory in bytes. */
export interface StaticNodeStats {
  maxcpu: number;
  maxmem: number;
}

/**
 * Measured node usage: cpu in cores, memory in bytes (everything on the node: HA services,
 * other guests, the host). The pressure fields are the node's PSI "some" avg10 in percent
 * (0..100), as PVE 9 nodes broadcast them in their RRD stats; absent when the node does not
 * report them (an older stats schema), which is not the same as 0 (no pressure).
 */
export interface DynamicNodeStats {
  cpu: number;
  maxcpu: number;
  mem: number;
  maxmem: number;
  /** PSI cpu "some" avg10, percent; absent = not reported. */
  pressurecpusome?: number;
  /** PSI memory "some" avg10, percent; absent = not reported. */
  pressurememorysome?: number;
}

/** Static service stats: configured cores and memory bytes. */
export interface StaticServiceStats {
  maxcpu: number;
  maxmem: number;
}

/**
 * Measured service usage: cores and memory bytes. `mem` is the guest's own (balloon-adjusted)
 * view; `memhost`, when reported, is the host-side footprint of the guest (what the node
 * carries and what a migration copies; PVE's RRD `memhost`).
 */
export interface DynamicServiceStats {
  cpu: number;
  mem: number;
  /** Host-side memory footprint, bytes; absent = not reported. */
  memhost?: number;
}

/**
 * A guest's configuration as `GET /nodes/{node}/qemu/{vmid}/config` (or `lxc`) returns it:
 * keys to property strings or numbers (`"ide2": "local:iso/d.iso,media=cdrom"`).
 */
export type GuestConfigEntry = Record<string, string | number | boolean>;

/** The resource agent of one service type (vm, ct, ...) as the LRM drives it. */
export interface ResourceAgent {
  /** Whether the guest exists at all. */
  exists(sid: string): boolean;
  checkRunning(sid: string): boolean;
  start(sid: string): void;
  shutdown(sid: string, timeout?: number | string): void;
  /** Moves the guest; `online` is a live migration. Returns false on failure. */
  migrate(sid: string, target: string, online: boolean): boolean;
  /** Removes the first of `locks` the guest holds; returns the removed lock name. */
  removeLocks(sid: string, locks: string[]): string | undefined;
}
