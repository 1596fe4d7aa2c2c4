import { CRM_SERVICE_STATES } from '@poise/ha';
import { ManagerError } from '../errors';

/**
 * The balancer port: everything `poise-manager` needs from a cluster, and nothing more.
 *
 * On a real cluster the reference HA stack stays in charge of HA (fencing, recovery, its own
 * service state machine); poise only balances. So the daemon never drives the simulated HA
 * core's `Env`: it reads a {@link ClusterSnapshot}, asks for a motion, and follows its outcome.
 * Two adapters implement it: the Proxmox VE API (`@poise/pve-api`) and the embedded simulator
 * (`@poise/sim`'s `Simulation`); tests use `FakeCluster` (`fake-cluster.ts`).
 *
 * Contract, for every method:
 * - Methods are async and may be slow (HTTP). They never return NaN or Infinity: a value the
 *   adapter cannot read as a finite number is either left out (optional fields: `undefined`) or
 *   makes the call fail with a {@link PortError} that names the endpoint and field.
 * - A {@link PortError} is a failure of that call only; the daemon logs it, counts it by
 *   endpoint and kind, and tries again next round. Any other exception is a bug.
 * - Secrets (the API token) never appear in a returned value or an error message.
 * - Names are returned in byte order (nodes by name, guests by sid).
 */
export interface BalancerPort {
  /** A short description for the start-up line, e.g. `pve https://node1:8006` (no secrets). */
  readonly description: string;

  /**
   * Reads the whole cluster for one round. `needs` says what the policy in force reads beyond
   * the basics (guest configurations for the migratability check); an adapter may ignore it
   * when the extra costs nothing.
   */
  readSnapshot(needs?: SnapshotNeeds): Promise<ClusterSnapshot>;

  /**
   * Asks the HA manager to move an HA resource (`POST /cluster/ha/resources/{sid}/migrate` or
   * `/relocate`). Returns `accepted: false` with a reason when the request was certainly not
   * applied (a 4xx reply, `blocking-resources` in the reply, the handler's refusal — on the
   * wire an HTTP 500 with its message, such as a resource in `error`). Throws a
   * {@link PortError} only when it is unknown whether the request was applied (a timeout or a
   * dropped connection after sending): the daemon then follows the motion as if accepted and
   * never re-issues it. Adapters never retry this call.
   */
  requestMotion(request: MotionRequest): Promise<MotionReply>;

  /**
   * The guest migrate endpoint's precondition check for a guest that is not HA-managed
   * (`GET /nodes/{node}/qemu/{vmid}/migrate?target=…`, plus the guest config for local
   * resources). Read-only.
   */
  checkGuestMigration(request: MotionRequest): Promise<GuestMigrationCheck>;

  /**
   * Migrates a guest that is not HA-managed (`POST /nodes/{node}/qemu/{vmid}/migrate` with
   * `online=1`, or `/lxc/{vmid}/migrate` with `restart=1`). Same reply and throw contract as
   * {@link requestMotion}; the handle carries the task id (UPID) to follow.
   */
  requestGuestMigration(request: MotionRequest): Promise<MotionReply>;

  /**
   * Where a motion this daemon issued stands, given the snapshot just read. HA motions are
   * judged from the HA manager status ({@link followHaMotion} in `motion.ts` holds the rules
   * every adapter shares): started on the target = succeeded; back on the source after moving,
   * `error`, or gone = failed; not yet picked up = pending. Guest (non-HA) motions follow the
   * migration task. The daemon persists `seenMoving` and the phase between rounds, so this is
   * a function of its arguments and the cluster, never of adapter memory (a restarted daemon
   * follows a motion issued by its previous run).
   */
  followMotion(motion: MotionRecord, snapshot: ClusterSnapshot, options?: FollowOptions): Promise<MotionProgress>;

  /**
   * A motion ended at `since` (seconds, the port's clock) and changed the telemetry of these
   * nodes. A port that caches telemetry (node pressure read every 60 s) reads it again and
   * lists the nodes in the snapshot's `stalePressure` until it has values from after `since`.
   * Absent on a port whose snapshot is always current (the simulator).
   */
  refreshTelemetry?(nodes: readonly string[], since: number): void;

  /** Releases connections and timers. Optional; called once at shutdown. */
  close?(): Promise<void>;
}

/** What the policy in force reads beyond nodes, guests, HA state and rules (see `readSnapshot`). */
export interface SnapshotNeeds {
  /**
   * Guest configurations of the guests that could be moved (`ha-auto-rebalance-check-migratable`):
   * `ClusterSnapshot.guestConfigs`. An adapter reading them over the network caches them and
   * refreshes them at a bounded rate.
   */
  readonly guestConfigs: boolean;
  /** Also the running non-HA guests (`guests.non-ha`), not only the HA resources. */
  readonly nonHa: boolean;
}

/** How a motion is judged, from the config in force (a reload changes it). */
export interface FollowOptions {
  /** `limits.pickup-timeout`: a motion not seen moving this long after its request was dropped. */
  readonly pickupTimeoutSeconds: number;
}

/** Kind of failure of a port call, for the `poise_api_errors_total{endpoint,kind}` metric. */
export type PortErrorKind =
  /** The connection failed or was dropped. */
  | 'network'
  /** No reply in time. */
  | 'timeout'
  /** An HTTP error status (5xx, or a 4xx other than 401/403). */
  | 'http'
  /** 401 or 403: the token is wrong, revoked, or lacks a privilege (the message names it). */
  | 'auth'
  /** A reply that does not match the schema (the message names the endpoint and field). */
  | 'invalid-reply'
  /** TLS verification failed (untrusted certificate, wrong fingerprint). */
  | 'tls'
  /** Any other failure of the environment (the simulator stopped, …). */
  | 'other';

/** A failed port call: which endpoint, what kind of failure. The message never holds a secret. */
export class PortError extends ManagerError {
  override name = 'PortError';
  constructor(
    /** The endpoint as a template, e.g. `GET /cluster/resources` (bounded label values). */
    readonly endpoint: string,
    readonly kind: PortErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('port', message, options);
  }
}

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
   * when {@link SnapshotNeeds.guestConfigs} asked for them; a guest left out is unknown.
   */
  readonly guestConfigs?: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** `shared` of each storage id (`storage.cfg`), when known; a storage left out is unknown. */
  readonly storageShared?: ReadonlyMap<string, boolean>;
  /**
   * Nodes whose pressure is from before the last motion that changed them (see
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
  /** The failed call, when a call failed (counted in `poise_api_errors_total`). */
  readonly error?: PortError;
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
export const HA_SERVICE_STATES = CRM_SERVICE_STATES;

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

/** What the daemon asks for: move `sid` to `target` (`relocate` = stop, move, start). */
export interface MotionRequest {
  readonly sid: string;
  readonly kind: 'migrate' | 'relocate';
  readonly target: string;
}

/** The cluster's answer to a motion request. */
export type MotionReply =
  | {
      readonly accepted: true;
      /** The migration task id (UPID) of a guest migration; `undefined` for HA motions. */
      readonly task: string | undefined;
      /** Resources HA moves along (positive affinity), from the PVE 9 reply. */
      readonly comigrated: readonly string[];
    }
  | {
      readonly accepted: false;
      readonly reason: string;
      /** The failed call when the refusal was an API error (a 4xx, a connection refused before sending): counted. */
      readonly error?: PortError;
      /**
       * Set when the refusal is a fault of the credentials (a 403: a privilege missing; a 401),
       * not of this motion: what is missing, e.g. `the API token lacks 'Sys.Console' on '/' (…)`.
       * The daemon pauses motions of this kind instead of blaming the (guest, target) pair.
       */
      readonly authFault?: string;
    };

/** The guest migrate endpoint's verdict for one (guest, target). */
export type GuestMigrationCheck = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

/**
 * A motion this daemon issued, as persisted in the state file (plain JSON). `phase`:
 * `requesting` (written before the request is sent, so a crash in between never leads to a
 * second request), `queued` (accepted, not yet seen moving), `moving` (seen in
 * `migrate`/`relocate`, or the task running).
 */
export interface MotionRecord {
  readonly sid: string;
  /**
   * The whole bundle that moves (the leader `sid` and its positive-affinity partners, which HA
   * moves along), for the policy's motion outcome. `[sid]` for a motion of one guest.
   */
  readonly resources: readonly string[];
  readonly kind: 'migrate' | 'relocate';
  /** `ha`: an HA motion followed through the HA manager status; `guest`: a migration task. */
  readonly via: 'ha' | 'guest';
  readonly source: string;
  readonly target: string;
  /** Seconds (the daemon's clock) when the request was sent. */
  readonly issuedAt: number;
  readonly phase: 'requesting' | 'queued' | 'moving';
  /** For `via: 'ha'`: the service's HA `uid` when the request was sent (see `GuestHa.uid`). */
  readonly haUid?: string | undefined;
  /** The migration task (UPID) for `via: 'guest'`. */
  readonly task: string | undefined;
  /** The imbalance before and the one expected after (fractions), for the outcome line. */
  readonly imbalanceBefore: number;
  readonly imbalanceAfter: number;
}

/** Where a motion stands. */
export type MotionProgress =
  | { readonly status: 'pending'; readonly phase: 'queued' | 'moving' }
  | { readonly status: 'succeeded' }
  | { readonly status: 'failed'; readonly reason: string };
