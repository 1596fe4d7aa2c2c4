import type { ClusterSnapshot } from '@poise/env';
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
   * The endpoint templates its {@link PortError}s name (`GET /cluster/resources`): the bounded
   * `endpoint` label values of `poise_api_errors_total`, each counted from 0. Absent or empty
   * for a port whose calls cannot fail (the simulator).
   */
  readonly errorEndpoints?: readonly string[];

  /**
   * Reads the whole cluster for one round. `needs` says what the policy in force reads beyond
   * the basics (guest configurations for the migratability check); an adapter may ignore it
   * when the extra costs nothing.
   */
  readSnapshot(needs?: SnapshotNeeds): Promise<PortSnapshot>;

  /**
   * Asks the HA manager to move an HA resource (`POST /cluster/ha/resources/{sid}/migrate` or
   * `/relocate`). Returns `accepted: false` with a reason when the request was certainly not
   * applied (a 4xx reply, `blocking-resources` in the reply, the handler's refusal — on the
   * wire an HTTP 500 with its message, such as a resource in `error`). Throws a
   * {@link PortError} only when it is unknown whether the request was applied (a timeout or a
   * dropped connection after sending): the daemon then follows the motion as if accepted and
   * never re-issues it. An error reply of the handler (a bare HTTP 500, no task started) is a
   * refusal, named as what it is. Adapters never retry this call.
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

  /**
   * Whether the credentials hold `need` now, asked without trying the action (on Proxmox VE
   * `GET /access/permissions?path=`: one cheap read). The daemon asks once per round while
   * motions are paused for a refusal naming `need`, and requests again only once it is held.
   * Throws a {@link PortError} when it cannot tell (an older release without the endpoint, a
   * refusal of the read, the network): the daemon then falls back to a bounded retry of the
   * request. Absent on a port without privileges (the simulator).
   */
  checkPrivilege?(need: PrivilegeNeed): Promise<boolean>;

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
  /**
   * The cluster's finished live migrations (`ha-auto-rebalance-contention-cost-benefit`):
   * `ClusterSnapshot.migrationTasks`. An adapter reading them over the network caches each
   * task's reading and refreshes the list at a bounded rate.
   */
  readonly migrationTasks?: boolean;
}

/** How a motion is judged, from the config in force (a reload changes it). */
export interface FollowOptions {
  /** `limits.pickup-timeout`: a motion not seen moving this long after its request was dropped. */
  readonly pickupTimeoutSeconds: number;
}

/**
 * Kinds of failure of a port call, for the `poise_api_errors_total{endpoint,kind}` metric (which
 * starts at 0 for each of them on every endpoint of {@link BalancerPort.errorEndpoints}).
 */
export const PORT_ERROR_KINDS = [
  /** The connection failed or was dropped. */
  'network',
  /** No reply in time. */
  'timeout',
  /** An HTTP error status (5xx, or a 4xx other than 401/403). */
  'http',
  /** 401 or 403: the token is wrong, revoked, or lacks a privilege (the message names it). */
  'auth',
  /** A reply that does not match the schema (the message names the endpoint and field). */
  'invalid-reply',
  /** TLS verification failed (untrusted certificate, wrong fingerprint). */
  'tls',
  /** Any other failure of the environment (the simulator stopped, …). */
  'other',
] as const;

/** Kind of failure of a port call: one of {@link PORT_ERROR_KINDS}. */
export type PortErrorKind = (typeof PORT_ERROR_KINDS)[number];

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

// The cluster snapshot is `@poise/env`'s (one type for the daemon, its adapters and the planner).
export {
  haServiceState,
  type ClusterSnapshot,
  type CrsOptions,
  type GuestSnapshot,
  type HaRule,
  type HaServiceState,
  type NodeCondition,
  type NodeSnapshot,
  type SnapshotProblem,
} from '@poise/env';

/** A privilege on an ACL path (`'VM.Migrate'` on `'/vms/101'`), as the cluster names it. */
export interface PrivilegeNeed {
  readonly path: string;
  readonly privilege: string;
}

/**
 * A node the port saw but could not read whole (online, yet no usable stats in the reply): left
 * out of the snapshot's usable nodes. The balancing model treats it as a node left out, so a
 * round does not decide from a partial view (`balancing.allow-partial-view`).
 */
export interface NodeLeftOut {
  readonly node: string;
  /** Why, one phrase (`GET /cluster/resources has no usage stats for it`). */
  readonly reason: string;
}

/** A snapshot as a port returns it: the cluster, and what of it the port could not read. */
export type PortSnapshot = ClusterSnapshot & {
  /** Nodes left out by the reader (see {@link NodeLeftOut}); absent or empty when none. */
  readonly nodesLeftOut?: readonly NodeLeftOut[];
};

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
      /** With `authFault` for a missing privilege: the one the request needed, to ask for (`checkPrivilege`). */
      readonly privilege?: PrivilegeNeed;
    };

/** The guest migrate endpoint's verdict for one (guest, target). */
export type GuestMigrationCheck = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

/**
 * How the daemon requests and follows its motions (`MotionRecord.via`, the `via` label of the
 * motion counters): `ha` through the HA manager, `guest` a migration task of a non-HA guest.
 */
export const MOTION_VIAS = ['ha', 'guest'] as const;

/** One of {@link MOTION_VIAS}. */
type MotionVia = (typeof MOTION_VIAS)[number];

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
  readonly via: MotionVia;
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
