/**
 * Results of the client, in poise's units and names: bytes, seconds, fractions 0..1, PSI in
 * percent 0..100, booleans as booleans. A field that the reply omitted is `undefined` — never
 * replaced by 0 — so the caller decides what a missing value means.
 */

/** `GET /version`. */
export interface PveVersion {
  /** Full version, e.g. `9.2.2` (PVE 7 sends `7.4-16`). */
  version: string;
  /** Release, e.g. `9.2`. */
  release: string;
  /** Build id (16 hex digits), when sent. */
  repoId: string | undefined;
  /** Major version (8, 9). */
  major: number;
  /** Minor version. */
  minor: number;
}

/** A `type: node` row of `GET /cluster/resources`. Stats are absent without `Sys.Audit` on the node and while it is offline. */
export interface ClusterNodeResource {
  kind: 'node';
  /** `node/<name>`. */
  id: string;
  /** Node name. */
  node: string;
  /** `online`, `offline` or `unknown`. */
  status: string;
  /** `status === 'online'`. */
  online: boolean;
  /** CPU usage of the whole node, 0..1. */
  cpuUsage: number | undefined;
  /** Logical CPUs. */
  maxCpus: number | undefined;
  /** Used memory (total − available; ZFS ARC counts as used), bytes. */
  memBytes: number | undefined;
  /** Total memory, bytes. */
  maxMemBytes: number | undefined;
  /** Root file system used, bytes. */
  diskBytes: number | undefined;
  /** Root file system size, bytes. */
  maxDiskBytes: number | undefined;
  /** Uptime, seconds. */
  uptimeSeconds: number | undefined;
  /** HA node state from `manager_status` (`online`, `maintenance`, `unknown`, `fence`, `gone`), when HA runs. */
  haState: string | undefined;
}

/** A `qemu` or `lxc` row of `GET /cluster/resources` (rows of guests that never ran lack the usage stats). */
export interface ClusterGuestResource {
  kind: 'guest';
  /** Guest type. */
  type: 'qemu' | 'lxc';
  /** `qemu/<vmid>` or `lxc/<vmid>`. */
  id: string;
  /** Guest id. */
  vmid: number;
  /** HA service id this guest would have: `vm:<vmid>` or `ct:<vmid>`. */
  sid: string;
  /** Node the guest is on. */
  node: string;
  /** Name, when set. */
  name: string | undefined;
  /** Run state (`running`, `stopped`, `paused`, …). */
  status: string;
  /** `status === 'running'`. */
  running: boolean;
  /** CPU usage as a fraction of the guest's vCPUs, 0..1 (may exceed 1 briefly). */
  cpuUsage: number | undefined;
  /** vCPUs (capped at the host's CPU count). */
  maxCpus: number;
  /** Guest-reported used memory (balloon stats, else host usage), bytes; may exceed `maxMemBytes`. */
  memBytes: number | undefined;
  /** Configured memory, bytes. */
  maxMemBytes: number;
  /** PVE 9, qemu: host-side memory use, bytes (0 when stopped; always 0 on lxc rows); `undefined` on PVE 8. */
  memHostBytes: number | undefined;
  /** Root disk used, bytes. */
  diskBytes: number | undefined;
  /** Root disk size, bytes (may be 0). */
  maxDiskBytes: number | undefined;
  /** Bytes received since the guest started (cumulative). */
  netInBytes: number | undefined;
  /** Bytes sent since the guest started (cumulative). */
  netOutBytes: number | undefined;
  /** Uptime, seconds. */
  uptimeSeconds: number | undefined;
  /** Whether the guest is a template; `undefined` when the row omits it. */
  template: boolean | undefined;
  /** Tags (split on `;`, `,`, space). */
  tags: string[];
  /** Config lock (`backup`, `migrate`, …), when locked. */
  lock: string | undefined;
  /** Pool, when in one. */
  pool: string | undefined;
  /** HA service state, when HA-managed (absent → not HA-managed). */
  haState: string | undefined;
}

/** A `storage` row of `GET /cluster/resources` (one per node where the storage is enabled). */
export interface ClusterStorageResource {
  kind: 'storage';
  /** `storage/<node>/<storage>`. */
  id: string;
  /** Storage id. */
  storage: string;
  /** Node of this row. */
  node: string;
  /** `available` or `unknown`. */
  status: string | undefined;
  /** Shared between nodes. */
  shared: boolean | undefined;
  /** Content types. */
  content: string[];
  /** Plugin type (`dir`, `zfspool`, `rbd`, …). */
  pluginType: string | undefined;
}

/** Any other row of `GET /cluster/resources` (`pool`, `sdn`, `network`, future types): kept with its id and type only. */
export interface ClusterOtherResource {
  kind: 'other';
  /** Row type as sent. */
  type: string;
  /** Row id. */
  id: string;
}

/** One row of `GET /cluster/resources`. */
export type ClusterResource =
  | ClusterNodeResource
  | ClusterGuestResource
  | ClusterStorageResource
  | ClusterOtherResource;

/** `GET /cluster/status` rows. */
export type ClusterStatusEntry =
  | {
      kind: 'cluster';
      /** Cluster name. */
      name: string;
      /** Whether the cluster has quorum. */
      quorate: boolean;
      /** Number of nodes. */
      nodes: number | undefined;
      /** Config version. */
      version: number | undefined;
    }
  | {
      kind: 'node';
      /** Node name. */
      name: string;
      /** Corosync node id. */
      nodeId: number | undefined;
      /** Node address. */
      ip: string | undefined;
      /** Whether corosync sees the node. */
      online: boolean;
      /** Whether it is the node that answered. */
      local: boolean;
    };

/** `GET /nodes/{node}/status` (no PSI here; see the RRD data). */
export interface NodeStatus {
  /** CPU usage, 0..1. */
  cpuUsage: number;
  /** I/O wait, 0..1, when sent. */
  ioWait: number | undefined;
  /** Load averages 1, 5, 15 min (sent as strings). */
  loadAverage: number[] | undefined;
  /** Memory, bytes; `availableBytes` when sent. */
  memory: { totalBytes: number; usedBytes: number; freeBytes: number; availableBytes: number | undefined };
  /** Swap, bytes, when sent. */
  swap: { totalBytes: number; usedBytes: number; freeBytes: number } | undefined;
  /** Root file system, bytes, when sent. */
  rootfs: { totalBytes: number; usedBytes: number; freeBytes: number } | undefined;
  /** CPU: logical CPUs, cores, sockets, model, MHz. */
  cpuInfo: {
    cpus: number;
    cores: number | undefined;
    sockets: number | undefined;
    model: string | undefined;
    mhz: number | undefined;
  };
  /** Uptime, seconds. */
  uptimeSeconds: number;
  /** `pve-manager/9.2.x/…`, when sent. */
  pveVersion: string | undefined;
  /** Kernel version text, when sent. */
  kernelVersion: string | undefined;
}

/** RRD timeframes of `rrddata` (`decade` only for nodes). */
export type RrdTimeframe = 'hour' | 'day' | 'week' | 'month' | 'year' | 'decade';
/** RRD consolidation function. */
export type RrdConsolidation = 'AVERAGE' | 'MAX';

/** Node PSI (`avg10`, percent 0..100). There is no node `cpuFull`. Absent on PVE 8 nodes. */
export interface NodePressure {
  cpuSome: number | undefined;
  ioSome: number | undefined;
  ioFull: number | undefined;
  memorySome: number | undefined;
  memoryFull: number | undefined;
}

/** Guest PSI (`avg10`, percent 0..100). Absent on PVE 8. */
export interface GuestPressure extends NodePressure {
  cpuFull: number | undefined;
}

/** One bucket of `GET /nodes/{node}/rrddata`. Undefined buckets omit keys: those fields are `undefined`. */
export interface NodeRrdPoint {
  /** Bucket start, epoch seconds. */
  time: number;
  /** CPU usage, 0..1. */
  cpuUsage: number | undefined;
  /** Logical CPUs. */
  maxCpus: number | undefined;
  /** I/O wait, 0..1. */
  ioWait: number | undefined;
  /** 1-min load average. */
  loadAverage: number | undefined;
  /** Memory, bytes (fractional: consolidated averages). */
  memTotalBytes: number | undefined;
  memUsedBytes: number | undefined;
  /** PVE 9. */
  memAvailableBytes: number | undefined;
  /** ZFS ARC size, bytes (PVE 9). */
  arcSizeBytes: number | undefined;
  swapTotalBytes: number | undefined;
  swapUsedBytes: number | undefined;
  rootTotalBytes: number | undefined;
  rootUsedBytes: number | undefined;
  /** Network, bytes per second. */
  netInBytesPerSecond: number | undefined;
  netOutBytesPerSecond: number | undefined;
  /** PSI (PVE 9). */
  pressure: NodePressure;
}

/** One bucket of `GET /nodes/{node}/{qemu|lxc}/{vmid}/rrddata`. */
export interface GuestRrdPoint {
  /** Bucket start, epoch seconds. */
  time: number;
  /** CPU usage as a fraction of the guest's vCPUs. */
  cpuUsage: number | undefined;
  maxCpus: number | undefined;
  memBytes: number | undefined;
  maxMemBytes: number | undefined;
  /** Host-side memory, bytes (PVE 9 qemu). */
  memHostBytes: number | undefined;
  diskBytes: number | undefined;
  maxDiskBytes: number | undefined;
  /** Bytes per second. */
  netInBytesPerSecond: number | undefined;
  netOutBytesPerSecond: number | undefined;
  diskReadBytesPerSecond: number | undefined;
  diskWriteBytesPerSecond: number | undefined;
  /** PSI (PVE 9). */
  pressure: GuestPressure;
}

/** One guest of `GET /nodes/{node}/qemu` or `/lxc` (live stats). */
export interface NodeGuest {
  type: 'qemu' | 'lxc';
  vmid: number;
  /** `vm:<vmid>` / `ct:<vmid>`. */
  sid: string;
  /** The node asked. */
  node: string;
  name: string | undefined;
  /** `running`, `stopped`, … */
  status: string;
  running: boolean;
  /** QMP run state (qemu). */
  qmpStatus: string | undefined;
  /** CPU usage, fraction of vCPUs (a per-worker sample: can be 0 on the first call; prefer `/cluster/resources`). */
  cpuUsage: number | undefined;
  /** vCPUs. */
  cpus: number | undefined;
  memBytes: number | undefined;
  maxMemBytes: number | undefined;
  /** Host-side memory, bytes (PVE 9 qemu). */
  memHostBytes: number | undefined;
  /** Live PSI avg10, percent (PVE 9). */
  pressure: GuestPressure;
  lock: string | undefined;
  tags: string[];
  template: boolean | undefined;
  uptimeSeconds: number | undefined;
}

/** `GET /nodes/{node}/{qemu|lxc}/{vmid}/status/current`: the live stats of one guest plus its HA flag. */
export interface GuestStatus extends NodeGuest {
  /** `ha.managed` (0/1), when sent. */
  haManaged: boolean | undefined;
}

/** One entry of `GET /nodes/{node}/tasks`. */
export interface TaskListEntry {
  upid: string;
  node: string;
  /** Task type (`qmigrate`, `hamigrate`, …). */
  type: string;
  id: string | undefined;
  user: string;
  /** Epoch seconds. */
  startTime: number;
  /** Epoch seconds, once finished. */
  endTime: number | undefined;
  /** `OK`, `WARNINGS: n` or an error text, once finished. */
  exitStatus: string | undefined;
  /** As in {@link TaskStatus}. */
  outcome: 'running' | 'ok' | 'warnings' | 'failed';
}

/** `manager_status.service_status[sid]`: the CRM's view of one HA resource. */
export interface HaServiceStatus {
  /** `started`, `migrate`, `relocate`, `stopped`, `request_stop`, `fence`, `recovery`, `freeze`, `error`, … */
  state: string;
  /** Node the service is on (the source during `migrate`/`relocate`). */
  node: string;
  /** Target node during `migrate`/`relocate`. */
  target: string | undefined;
  /** Command uid. */
  uid: string | undefined;
  /** `true` once the LRM confirmed a start. */
  running: boolean | undefined;
  /** Nodes that failed to start it. */
  failedNodes: string[] | undefined;
  /** Node it left for maintenance. */
  maintenanceNode: string | undefined;
}

/** `lrm_status[node]`. */
export interface HaLrmStatus {
  /** `active`, `maintenance`, `restart`, `shutdown`, `disarm`. */
  mode: string | undefined;
  /** `wait_for_agent_lock`, `active`, `lost_agent_lock`, `maintenance`. */
  state: string | undefined;
  /** Epoch seconds. */
  timestamp: number | undefined;
  /** Results by command uid: `exitCode` 0 success, 1 error, 2 try again, 3 wrong node, 8 ignored. */
  results: ReadonlyMap<string, { sid: string | undefined; state: string | undefined; exitCode: number | undefined }>;
}

/** `GET /cluster/ha/status/manager_status`. An empty document (no HA configured) gives empty maps and no master. */
export interface HaManagerStatus {
  /** Current CRM master. */
  masterNode: string | undefined;
  /** Epoch seconds of the CRM's last write (≈ every 10 s). */
  timestamp: number | undefined;
  /** HA node states: `online`, `maintenance`, `unknown`, `fence`, `gone`. */
  nodeStatus: ReadonlyMap<string, string>;
  /** Pending node requests (`maintenance: true` while entering maintenance). */
  nodeRequest: ReadonlyMap<string, { maintenance: boolean }>;
  /**
   * The CRM's service table; `undefined` when the reply has none (seen in a trimmed capture).
   * Motions cannot be followed without it: use {@link requireServiceStatus}.
   */
  serviceStatus: ReadonlyMap<string, HaServiceStatus> | undefined;
  /** Present while HA is disarmed (`mode` `freeze`|`ignore`). */
  disarm: { mode: string | undefined; state: string | undefined } | undefined;
  /**
   * Quorum as seen by the answering node: `quorate` from a Perl boolean (`"1"` true, `""`
   * false), `undefined` when the node could not check it (`null`). The whole entry is
   * `undefined` when the reply has none (no HA configured).
   */
  quorum: { node: string | undefined; quorate: boolean | undefined } | undefined;
  /** LRM status by node. */
  lrmStatus: ReadonlyMap<string, HaLrmStatus>;
}

/**
 * State of an HA daemon derived from the free text of `/cluster/ha/status/current`
 * (`"<node> (idle, watchdog standby, <time>)"`): `active`, `idle` (LRM waiting for its lock),
 * a mode (`maintenance`, `restart`, `shutdown`, `disarm`), `dead` (`old timestamp - dead?`),
 * `time-drift`, `unreadable` (`unable to read lrm status`), or `unknown` for text not recognised.
 */
export type HaDaemonState =
  | 'active'
  | 'idle'
  | 'maintenance'
  | 'restart'
  | 'shutdown'
  | 'disarm'
  | 'dead'
  | 'time-drift'
  | 'unreadable'
  | 'unknown';

/** An `lrm` or `master` row of `/cluster/ha/status/current`. */
export interface HaDaemonEntry {
  /** Node (may be `''`: an LRM row with an empty name has been seen). */
  node: string;
  /** Derived from `status`. */
  state: HaDaemonState;
  /** `active`/`standby` when the text says `watchdog …`. */
  watchdog: string | undefined;
  /** Epoch seconds, when sent. */
  timestamp: number | undefined;
  /** The free text as sent. */
  statusText: string;
}

/** A `service` row of `/cluster/ha/status/current`. */
export interface HaServiceEntry {
  sid: string;
  node: string;
  /** Verbose state (`started`, `starting`, `migrate`, `queued`, …). */
  state: string | undefined;
  /** Raw CRM state. */
  crmState: string | undefined;
  /** Requested state. */
  requestState: string | undefined;
  failback: boolean | undefined;
  maxRestart: number | undefined;
  maxRelocate: number | undefined;
  /** PVE 9.2 per-resource opt-out of the built-in balancer (`false` = opted out). */
  autoRebalance: boolean | undefined;
  comment: string | undefined;
}

/** `GET /cluster/ha/status/current`. */
export interface HaStatusCurrent {
  quorum: { node: string; quorate: boolean } | undefined;
  master: HaDaemonEntry | undefined;
  /** PVE 9.2: fencing `armedState` (`armed`, `standby`, `disarming`, `disarmed`) and `resourceMode` (`freeze`, `ignore`). */
  fencing: { node: string | undefined; armedState: string | undefined; resourceMode: string | undefined } | undefined;
  lrm: HaDaemonEntry[];
  services: HaServiceEntry[];
}

/** One entry of `GET /cluster/ha/resources`, with the config's defaults applied to omitted keys. */
export interface HaResource {
  /** `vm:100`, `ct:101`. */
  sid: string;
  /** `vm` or `ct`. */
  type: string;
  /** Requested state (`started`, `stopped`, `disabled`, `ignored`; `enabled` is read as `started`; default `started`). */
  state: string;
  /** Default `true`. */
  failback: boolean;
  /** Default 1. */
  maxRestart: number;
  /** Default 1. */
  maxRelocate: number;
  /** PVE 9.2 opt-out of automatic rebalancing; default `true`. */
  autoRebalance: boolean;
  /** HA group (PVE 8, or before migration to rules). */
  group: string | undefined;
  comment: string | undefined;
}

/** A node with its priority in an HA rule or group (`node1:2`; default priority 0). */
export interface NodePriority {
  node: string;
  priority: number;
}

/** One entry of `GET /cluster/ha/rules` (PVE 9). */
export interface HaRule {
  /** Rule id. */
  rule: string;
  /** `node-affinity` or `resource-affinity` (other types kept as sent). */
  type: string;
  /** Resource ids. */
  resources: string[];
  /** Node-affinity nodes with priorities. */
  nodes: NodePriority[] | undefined;
  /** Default `false` (the key is absent when 0). */
  strict: boolean;
  /** Resource-affinity `positive` or `negative`. */
  affinity: string | undefined;
  /** `disable` set. */
  disabled: boolean;
  comment: string | undefined;
  order: number | undefined;
  /** Feasibility errors by property; a rule with errors is not applied. */
  errors: ReadonlyMap<string, string[]>;
  /** `!disabled && errors.size === 0`. */
  applied: boolean;
}

/** One entry of `GET /cluster/ha/groups` (PVE 8). */
export interface HaGroup {
  group: string;
  nodes: NodePriority[];
  restricted: boolean;
  nofailback: boolean;
  comment: string | undefined;
}

/** `GET /cluster/ha/groups`: on PVE 9 after the migration to rules the server answers 500; that is `migratedToRules: true` with no groups. */
export interface HaGroups {
  groups: HaGroup[];
  migratedToRules: boolean;
}

/**
 * The `crs` datacenter option. Every key is `undefined` when not set (cluster defaults then
 * apply: `ha` `basic`, `haRebalanceOnStart` false, `haAutoRebalance` false, threshold 30 %
 * (0.3 before pve-cluster 9.1.5), method `bruteforce`, hold 3 rounds, margin 10 % (0.1)).
 */
export interface CrsOptions {
  /** `basic`, `static`, `dynamic` (9.2). */
  ha: string | undefined;
  haRebalanceOnStart: boolean | undefined;
  /** PVE 9.2: the built-in balancer is on. */
  haAutoRebalance: boolean | undefined;
  /** Percent 0..100 on pve-cluster ≥ 9.1.5, a fraction 0..1 before: passed on as sent. */
  haAutoRebalanceThreshold: number | undefined;
  /** `bruteforce` or `topsis`. */
  haAutoRebalanceMethod: string | undefined;
  /** HA rounds. */
  haAutoRebalanceHoldDuration: number | undefined;
  /** Percent (fraction before 9.1.5), as sent. */
  haAutoRebalanceMargin: number | undefined;
}

/** `GET /cluster/options` (the parts poise reads). */
export interface ClusterOptions {
  /** `crs`, whether sent as an object or as a property string. */
  crs: CrsOptions;
  /** Whether `crs` was set at all. */
  crsSet: boolean;
  /** Parallel LRM workers per node (default 4 when `undefined`). */
  maxWorkers: number | undefined;
}

/** Something in a guest config that prevents migration (spec §3.7). */
export interface MigrationBlocker {
  /** Config key (`hostpci0`, `lock`, …). */
  key: string;
  /** Why. */
  reason: string;
  /** `always`: blocks any migration; `live`: forces an offline migration (or blocks live). */
  scope: 'always' | 'live';
}

/** `GET /nodes/{node}/{qemu|lxc}/{vmid}/config`. */
export interface GuestConfig {
  type: 'qemu' | 'lxc';
  vmid: number;
  /** Every key, values as text (numbers turned into their decimal text). */
  entries: ReadonlyMap<string, string>;
  digest: string | undefined;
  name: string | undefined;
  lock: string | undefined;
  template: boolean;
  /** Configured memory, MiB (`memory` is a number, a numeric string or `current=…` on PVE 9). */
  memoryMiB: number | undefined;
  cores: number | undefined;
  sockets: number | undefined;
  tags: string[];
  /** What in the config blocks migration (see {@link migrationBlockers}). */
  migrationBlockers: MigrationBlocker[];
}

/** `not_allowed_nodes[node]` of the migration precondition check. */
export interface NotAllowedNode {
  unavailableStorages: string[];
  unavailableResources: string[];
  blockingHaResources: { sid: string; cause: string | undefined }[];
}

/** `GET /nodes/{node}/{qemu|lxc}/{vmid}/migrate` (LXC sends hyphenated keys; both spellings read the same). */
export interface MigratePrecheck {
  running: boolean;
  /** Configured nodes the guest may go to (ignores online state, capacity and node affinity). */
  allowedNodes: string[];
  notAllowedNodes: ReadonlyMap<string, NotAllowedNode>;
  localDisks: {
    volid: string;
    sizeBytes: number | undefined;
    cdrom: boolean;
    unused: boolean;
    shared: boolean | undefined;
    drive: string | undefined;
  }[];
  /** Local resources (`hostpci0`, `usb1`, `amd-sev`, …). */
  localResources: string[];
  mappedResources: string[];
  /** Positive-affinity partners that would move too. */
  dependentHaResources: string[];
  hasDbusVmstate: boolean | undefined;
}

/**
 * `GET /access/permissions[?path=]`: the calling token's effective privileges (with privilege
 * separation the user's ∩ the token's), ACL path → privilege → whether it propagates to the
 * paths below. Asked with `path`, one entry: that path's effective privileges (empty when it
 * has none). A privilege listed is granted on its path whatever its propagate flag.
 */
export type AccessPermissions = Map<string, Map<string, boolean>>;

/** Result of `POST /cluster/ha/resources/{sid}/migrate|relocate`. The CRM acts on its next round; follow `manager_status`. */
export interface HaMotionResult {
  sid: string;
  requestedNode: string;
  /** `false` when the server listed blocking resources (the request is rejected). */
  accepted: boolean;
  /** Positive-affinity partners moved along. */
  comigrated: string[];
  /** Resources that block the motion. */
  blocking: { sid: string; cause: string | undefined }[];
  /** `false` on PVE 8, whose reply is `null` (queued, nothing more known). */
  detailed: boolean;
}

/** A parsed task id `UPID:<node>:<pid>:<pstart>:<starttime>:<type>:<id>:<user>:`. */
export interface Upid {
  upid: string;
  node: string;
  pid: number;
  pstart: number;
  /** Epoch seconds. */
  startTime: number;
  /** Task type (`qmigrate`, `hamigrate`, `vzmigrate`, …). */
  type: string;
  /** Task id (often the vmid). */
  id: string;
  /** User (may be a token: `user@realm!token`). */
  user: string;
}

/** `GET /nodes/{node}/tasks/{upid}/status`. */
export interface TaskStatus {
  upid: string;
  node: string;
  type: string | undefined;
  id: string | undefined;
  user: string | undefined;
  /** `running` or `stopped`. */
  status: string;
  /** `OK`, `WARNINGS: n` or an error text, once stopped. */
  exitStatus: string | undefined;
  /** `running`; `ok` (`OK`); `warnings` (`WARNINGS: n`, a success); `failed` (anything else). */
  outcome: 'running' | 'ok' | 'warnings' | 'failed';
  startTime: number | undefined;
}

/** One certificate of `GET /nodes/{node}/certificates/info`. */
export interface CertificateInfo {
  filename: string | undefined;
  /** SHA-256 fingerprint, `AB:CD:…` (ready for `tls.fingerprints`). */
  fingerprint256: string | undefined;
  subject: string | undefined;
  issuer: string | undefined;
  /** Epoch seconds. */
  notAfter: number | undefined;
  notBefore: number | undefined;
  san: string[];
  pem: string | undefined;
}
