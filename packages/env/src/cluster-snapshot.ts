/**
 * A cluster as one read sees it: nodes with capacity and measured use, guests with their stats
 * and HA state, the HA rules in force, the datacenter `crs` options. poise-manager reads one
 * each round (its `BalancerPort`: the Proxmox VE API and the embedded simulator fill it) and the
 * planner (`planInputFromSnapshot` of `@poise/plan`) plans on one. Units: cores and bytes.
 */

import type { FinishedMigrationTask } from './env';

/** One round's view of the cluster. */
export interface ClusterSnapshot {
  /** When it was read, in seconds (the port's clock: epoch seconds, or simulated time). */
  readonly time: number;
  /** Whether the cluster is quorate; without quorum nothing is balanced. */
  readonly quorate: boolean;
  /** Not quorate because the answering node could not check its quorum (`quorate: null`). */
  readonly quorumUnknown?: boolean;
  /**
   * HA is disarmed (`manager_status.disarm`, PVE 9): commands are not applied, so nothing is
   * balanced.
   */
  readonly haDisarmed: boolean;
  /** Every cluster node, online or not, by name in byte order. */
  readonly nodes: readonly NodeSnapshot[];
  /** Every guest (HA-managed or not), by sid in byte order. */
  readonly guests: readonly GuestSnapshot[];
  /**
   * HA rules in force, typed. PVE 9 reads `/cluster/ha/rules`; PVE 8 groups are converted by
   * the adapter into node-affinity rules named `ha-group-<name>` (strict = restricted), as
   * PVE 9's own migration does. Rules with `errors` in the API are not applied and not listed.
   */
  readonly rules: readonly HaRule[];
  /** The datacenter `crs` options. */
  readonly crs: CrsOptions;
  /**
   * Datacenter `max_workers` (how many migrations and other guest tasks a node runs at once;
   * PVE's default 4 when unset): the default of `drain --parallel`. Undefined when not set.
   */
  readonly maxWorkers?: number | undefined;
  /**
   * Guest configurations by sid (`GET /nodes/{node}/{qemu|lxc}/{vmid}/config`: key → value),
   * when the reader asked for them (poise-manager's `SnapshotNeeds.guestConfigs`); a guest left
   * out is unknown.
   */
  readonly guestConfigs?: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** `shared` of each storage id (`storage.cfg`), when known; a storage left out is unknown. */
  readonly storageShared?: ReadonlyMap<string, boolean>;
  /**
   * The cluster's finished live migrations, oldest first (how long each took, how much memory
   * it sent), when the policy reads them (`SnapshotNeeds.migrationTasks` of poise-manager).
   */
  readonly migrationTasks?: readonly FinishedMigrationTask[];
  /**
   * Nodes whose pressure is from before the last motion that changed them (poise-manager's
   * `BalancerPort.refreshTelemetry`): the pressure a decision would read is out of date.
   */
  readonly stalePressure?: readonly string[];
  /**
   * Parts of the cluster the adapter could not read this round, each left out or unknown (a
   * node without pressure telemetry, a guest whose config failed to load): the round goes on
   * without them. The daemon logs each line when it first appears and counts `error` by
   * endpoint and kind.
   */
  readonly problems?: readonly SnapshotProblem[];
}

/** Something the adapter left out of a snapshot, and why. */
export interface SnapshotProblem {
  /** One line, stable while the problem lasts (no timestamps or counters): logged when it first appears. */
  readonly message: string;
  /**
   * The failed call, when a call failed: the endpoint as a template (`GET /cluster/resources`)
   * and the kind of failure (poise-manager's `PortError`; counted in `poise_api_errors_total`).
   */
  readonly error?: { readonly endpoint: string; readonly kind: string; readonly message: string };
}

/**
 * A node. Units: `cpu` and `maxcpu` in cores (the API's `cpu` fraction × `maxcpu`), `mem` and
 * `maxmem` in bytes; `cpu`/`mem` are measured usage (everything running there, guests and host).
 */
export interface NodeSnapshot {
  readonly name: string;
  /**
   * Up, in the quorate partition, and `online` in the HA manager's node status. A node in
   * maintenance, fenced, unknown or gone is not online.
   */
  readonly online: boolean;
  /** What the cluster says of the node (see {@link NodeCondition}); `nodeCondition()` derives it. */
  readonly condition: NodeCondition;
  /** HA node status `maintenance` (its guests are being moved away by HA). */
  readonly maintenance: boolean;
  readonly maxcpu: number;
  readonly maxmem: number;
  readonly cpu: number;
  readonly mem: number;
  /**
   * Pressure stall information "some", avg10, in percent (0..100), from the node RRD; each
   * `undefined` when the node does not report it (PVE 8, or a node on an older version).
   */
  readonly pressure: { readonly cpuSome: number | undefined; readonly memSome: number | undefined };
}

/**
 * A node as the cluster sees it: `online`; `maintenance` (HA maintenance, or a request for it);
 * `offline` (not up in the cluster's membership: `/cluster/resources` status `offline` or
 * `unknown`); or one of the HA manager's failure states `unknown` (its LRM stopped
 * answering), `fence` (being fenced), `gone` (removed from the cluster). A node that is not
 * `online` or `maintenance` has failed (see `cluster-state.ts`).
 */
export type NodeCondition = 'online' | 'maintenance' | 'offline' | 'unknown' | 'fence' | 'gone';

/** The CRM's service states, as in `manager_status.service_status[sid].state` (spec §3.5). */
export const HA_SERVICE_STATES = [
  'stopped',
  'request_stop',
  'request_start',
  'request_start_balance',
  'started',
  'fence',
  'recovery',
  'migrate',
  'relocate',
  'freeze',
  'error',
] as const;

/**
 * A guest's HA state: one of {@link HA_SERVICE_STATES}, or `unknown`, a state this build does
 * not know (a newer Proxmox VE): never a candidate; a motion in flight stays pending until the
 * motion timeout.
 */
export type HaServiceState = (typeof HA_SERVICE_STATES)[number] | 'unknown';

const KNOWN_HA_STATES: ReadonlySet<unknown> = new Set(HA_SERVICE_STATES);

/** The HA state a reply names: a known one, else `unknown` (anything not a known string). */
export function haServiceState(state: unknown): HaServiceState {
  return KNOWN_HA_STATES.has(state) ? (state as HaServiceState) : 'unknown';
}

/** HA side of a guest that is an HA resource. */
export interface GuestHa {
  /** The CRM's state of the service. */
  readonly state: HaServiceState;
  /** Set while `migrate`/`relocate`: the node it is moving to. */
  readonly target: string | undefined;
  /** The requested state from `resources.cfg` (`started`, `stopped`, `disabled`, `ignored`). */
  readonly requestState: string;
  /**
   * The PVE 9.2 per-resource opt-out `auto-rebalance` (default true): false means no balancer,
   * the cluster's or poise, may move it.
   */
  readonly autoRebalance: boolean;
  /**
   * `service_status[sid].uid`: the HA manager gives a service a new one at every state change,
   * so a changed uid shows that a command was handled even when no read saw the service move
   * (a migration that failed between two reads). `undefined` when not reported.
   */
  readonly uid?: string | undefined;
}

/**
 * A guest. Units: `cpu` cores in use (the API's fraction × the guest's cores), `maxcpu`
 * configured cores, `mem`/`maxmem` bytes (guest view, balloon-adjusted), `memhost` bytes of the
 * host-side footprint (PVE 9, VMs only; `undefined` where not reported).
 */
export interface GuestSnapshot {
  /** `vm:<vmid>` or `ct:<vmid>`, as HA names it (also for guests that are not HA-managed). */
  readonly sid: string;
  readonly vmid: number;
  readonly type: 'vm' | 'ct';
  /** The node it is on (for a moving HA resource: the source). */
  readonly node: string;
  /** Whether it is running. */
  readonly running: boolean;
  /** A config lock (`backup`, `migrate`, `snapshot`, …): a locked guest is not moved. */
  readonly lock: string | undefined;
  readonly template: boolean;
  /** `undefined` when the guest is not an HA resource. */
  readonly ha: GuestHa | undefined;
  readonly stats: {
    readonly cpu: number;
    readonly maxcpu: number;
    readonly mem: number;
    readonly maxmem: number;
    readonly memhost: number | undefined;
  };
}

/** An HA rule in force (spec §3.5); node priorities as configured (higher is preferred). */
export type HaRule =
  | {
      readonly type: 'node-affinity';
      readonly id: string;
      readonly resources: readonly string[];
      readonly nodes: readonly { readonly node: string; readonly priority: number }[];
      readonly strict: boolean;
    }
  | {
      readonly type: 'resource-affinity';
      readonly id: string;
      readonly resources: readonly string[];
      readonly affinity: 'positive' | 'negative';
    };

/** The datacenter `crs` options as the daemon needs them. */
export interface CrsOptions {
  /** The HA scheduler mode (`basic`, `static`, `dynamic`). */
  readonly ha: string;
  /** `ha-auto-rebalance`: the cluster's own balancer (PVE 9.2). When on, poise leaves HA resources alone. */
  readonly autoRebalance: boolean;
  /**
   * The cluster's own balancer settings, for the log and the status only (poise balances with
   * its own `policy`): threshold and margin in percent whatever unit the cluster stores them
   * in (see the Proxmox VE adapter), hold in rounds; `undefined` when not set.
   */
  readonly settings?: {
    readonly thresholdPercent?: number;
    readonly marginPercent?: number;
    readonly holdRounds?: number;
    readonly method?: string;
  };
}
