import type { Host } from '../cluster/host';
import { nodeCondition } from '../cluster/condition';
import { followHaMotion } from '../cluster/motion';
import {
  type BalancerPort,
  type ClusterSnapshot,
  type FollowOptions,
  type GuestMigrationCheck,
  type GuestSnapshot,
  type HaRule,
  type HaServiceState,
  type MotionProgress,
  type MotionRecord,
  type MotionReply,
  type MotionRequest,
  type NodeSnapshot,
  PortError,
  type PortErrorKind,
  type SnapshotNeeds,
} from '../cluster/port';
import { compareNames } from '@poise/usage';

/** A node of a fake cluster: capacity, base load outside the guests (cores, bytes), pressure (%). */
export interface FakeNode {
  name: string;
  maxcpu: number;
  maxmem: number;
  baseCpu: number;
  baseMem: number;
  online: boolean;
  maintenance: boolean;
  /** The HA manager's state of a failed node (`unknown` while it waits for fencing, `fence`, `gone`); by default `unknown` once offline. */
  haState?: 'unknown' | 'fence' | 'gone';
  pressureCpu?: number;
  pressureMem?: number;
}

/** A guest of a fake cluster (units as in `GuestSnapshot`). */
export interface FakeGuest {
  sid: string;
  node: string;
  /** Whether it is an HA resource. */
  ha: boolean;
  haState: HaServiceState;
  /** Bumped at every HA state change, like the CRM's service `uid`. */
  haUid?: number;
  haTarget?: string;
  autoRebalance: boolean;
  running: boolean;
  lock?: string;
  cpu: number;
  maxcpu: number;
  mem: number;
  maxmem: number;
  memhost?: number;
  /** The guest's configuration (`GET …/config` keys), read when the policy checks migratability. */
  config?: Record<string, string>;
}

/**
 * How the cluster answers a motion of one guest (keyed by sid, or `sid>target`), attempt by
 * attempt (the last entry repeats).
 * - `reply`: `accept` (default); `refuse` (a 4xx: not applied); `lost` (the request times out
 *   but was applied); `lost-unapplied` (times out, not applied).
 * - `outcome`: `succeed` (default); `fail` (back on the source); `error` (HA error state);
 *   `drop` (the CRM drops the command: never moves).
 * - `rounds`: rounds spent moving before the outcome (default 1).
 */
export interface FakeMotionScript {
  reply?: 'accept' | 'refuse' | 'lost' | 'lost-unapplied';
  outcome?: 'succeed' | 'fail' | 'error' | 'drop';
  rounds?: number;
}

/** A fake cluster's whole state: plain JSON (a fixture can persist it across processes). */
export interface FakeClusterState {
  /** Seconds. */
  time: number;
  /** Seconds per `step()` (one HA manager round). */
  roundSeconds: number;
  nodes: FakeNode[];
  guests: FakeGuest[];
  autoRebalance: boolean;
  /** HA rules in force (positive partners move along with a motion, as HA does). */
  rules: HaRule[];
  quorate: boolean;
  /** The API's node could not check the quorum (`manager_status` says `quorate: null`). */
  quorumUnreadable?: boolean;
  haDisarmed: boolean;
  pickupTimeoutSeconds: number;
  scripts: Record<string, FakeMotionScript[]>;
  /** Refusals of the guest migrate precondition check, by sid. */
  guestCheckRefusals: Record<string, string>;
  /** Scripted failures of the next `readSnapshot` calls. */
  readFailures: PortErrorKind[];
  /** Commands the CRM will pick up next round. */
  queue: { sid: string; kind: 'migrate' | 'relocate'; target: string; script: FakeMotionScript }[];
  /** Guests moving: rounds left and how it ends. */
  moving: { sid: string; roundsLeft: number; outcome: 'succeed' | 'fail' | 'error'; task?: string }[];
  /** Guest migration tasks by UPID. */
  tasks: Record<string, { sid: string; target: string; status: 'running' | 'stopped'; exitstatus?: string }>;
  /** Every motion request received, in order (to count duplicates). */
  requests: { time: number; sid: string; kind: string; target: string; via: 'ha' | 'guest' }[];
  /** Attempts per script key so far. */
  attempts: Record<string, number>;
}

export interface FakeClusterSpec {
  nodes: (Partial<FakeNode> & { name: string })[];
  guests: (Partial<FakeGuest> & { sid: string; node: string })[];
  autoRebalance?: boolean;
  rules?: HaRule[];
  roundSeconds?: number;
  startTime?: number;
  pickupTimeoutSeconds?: number;
  scripts?: Record<string, FakeMotionScript | FakeMotionScript[]>;
  guestCheckRefusals?: Record<string, string>;
}

const GIB = 1024 ** 3;
/** 2026-01-01T00:00:00Z, a fixed start so logs are reproducible. */
export const FAKE_START_TIME = 1_767_225_600;

/**
 * A tiny scripted cluster implementing {@link BalancerPort}, for tests and fixtures. It behaves
 * like the reference HA stack where the daemon can tell: a motion request is queued and picked
 * up in the next round (`step()`), the service shows `migrate`/`relocate` with its target for
 * `rounds` rounds, then ends on the target (or back on the source, in `error`, or dropped, as
 * scripted). Node usage is measured: base load plus the running guests on it.
 */
export class FakeCluster implements BalancerPort {
  readonly description = 'fake cluster';
  /** The endpoints of its scripted failures (a read; a motion request lost after sending). */
  readonly errorEndpoints: readonly string[] = [
    'GET /cluster/resources',
    'POST /cluster/ha/resources/{sid}/migrate',
    'POST /cluster/ha/resources/{sid}/relocate',
  ];

  constructor(readonly s: FakeClusterState) {}

  static create(spec: FakeClusterSpec): FakeCluster {
    const scripts: Record<string, FakeMotionScript[]> = {};
    for (const [k, v] of Object.entries(spec.scripts ?? {})) scripts[k] = Array.isArray(v) ? v : [v];
    return new FakeCluster({
      time: spec.startTime ?? FAKE_START_TIME,
      roundSeconds: spec.roundSeconds ?? 10,
      nodes: spec.nodes.map((n) => ({
        maxcpu: 16,
        maxmem: 64 * GIB,
        baseCpu: 0,
        baseMem: 0,
        online: true,
        maintenance: false,
        ...n,
      })),
      guests: spec.guests.map((g) => {
        const ha = g.ha ?? true;
        const running = g.running ?? true;
        return {
          ha,
          running,
          haState: running ? 'started' : 'stopped',
          autoRebalance: true,
          cpu: 1,
          maxcpu: 2,
          mem: 2 * GIB,
          maxmem: 4 * GIB,
          ...g,
        };
      }),
      autoRebalance: spec.autoRebalance ?? false,
      rules: spec.rules ?? [],
      quorate: true,
      haDisarmed: false,
      pickupTimeoutSeconds: spec.pickupTimeoutSeconds ?? 120,
      scripts,
      guestCheckRefusals: spec.guestCheckRefusals ?? {},
      readFailures: [],
      queue: [],
      moving: [],
      tasks: {},
      requests: [],
      attempts: {},
    });
  }

  static fromJSON(state: FakeClusterState): FakeCluster {
    return new FakeCluster(state);
  }

  toJSON(): FakeClusterState {
    return this.s;
  }

  get time(): number {
    return this.s.time;
  }

  guest(sid: string): FakeGuest {
    const g = this.s.guests.find((x) => x.sid === sid);
    if (!g) throw new Error(`fake cluster: no guest '${sid}'`);
    return g;
  }

  node(name: string): FakeNode {
    const n = this.s.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`fake cluster: no node '${name}'`);
    return n;
  }

  /** Started positive-affinity partners of `sid` on its node: HA moves them along (spec §4.1). */
  partners(sid: string): string[] {
    const g = this.guest(sid);
    const out = new Set<string>();
    for (const r of this.s.rules ?? []) {
      if (r.type !== 'resource-affinity' || r.affinity !== 'positive' || !r.resources.includes(sid)) continue;
      for (const p of r.resources) {
        const pg = this.s.guests.find((x) => x.sid === p);
        if (p !== sid && pg && pg.ha && pg.haState === 'started' && pg.node === g.node) out.add(p);
      }
    }
    return [...out].sort(compareNames);
  }

  /** The next `kinds.length` snapshot reads fail with these kinds. */
  failNextReads(...kinds: PortErrorKind[]): void {
    this.s.readFailures.push(...kinds);
  }

  /** One HA manager round: moving guests progress, queued commands are picked up. */
  step(seconds = this.s.roundSeconds): void {
    this.s.time += seconds;
    const still: FakeClusterState['moving'] = [];
    for (const m of this.s.moving) {
      m.roundsLeft -= 1;
      if (m.roundsLeft > 0) {
        still.push(m);
        continue;
      }
      const g = this.guest(m.sid);
      const target = g.haTarget!;
      if (m.outcome === 'succeed') g.node = target;
      g.haState = m.outcome === 'error' ? 'error' : 'started';
      g.haUid = (g.haUid ?? 0) + 1;
      delete g.haTarget;
      if (!g.ha) delete g.lock;
      if (m.task)
        this.s.tasks[m.task] = {
          ...this.s.tasks[m.task]!,
          status: 'stopped',
          exitstatus: m.outcome === 'succeed' ? 'OK' : 'migration aborted',
        };
    }
    this.s.moving = still;
    for (const cmd of this.s.queue) {
      const g = this.s.guests.find((x) => x.sid === cmd.sid);
      const target = this.s.nodes.find((n) => n.name === cmd.target);
      if (!g || !target || !target.online || g.node === cmd.target || cmd.script.outcome === 'drop') continue; // dropped, as the CRM does
      for (const sid of [g.sid, ...(g.ha ? this.partners(g.sid) : [])]) {
        const m = this.guest(sid);
        m.haState = cmd.kind;
        m.haUid = (m.haUid ?? 0) + 1;
        m.haTarget = cmd.target;
        this.s.moving.push({
          sid,
          roundsLeft: Math.max(1, cmd.script.rounds ?? 1),
          outcome: cmd.script.outcome === 'fail' || cmd.script.outcome === 'error' ? cmd.script.outcome : 'succeed',
        });
      }
    }
    this.s.queue = [];
  }

  async readSnapshot(needs?: SnapshotNeeds): Promise<ClusterSnapshot> {
    const failure = this.s.readFailures.shift();
    if (failure) throw new PortError('GET /cluster/resources', failure, `scripted ${failure} failure`);
    const nodes: NodeSnapshot[] = [...this.s.nodes]
      .sort((a, b) => compareNames(a.name, b.name))
      .map((n) => {
        let cpu = n.baseCpu;
        let mem = n.baseMem;
        for (const g of this.s.guests) {
          if (g.running && g.node === n.name) {
            cpu += g.cpu;
            mem += g.mem;
          }
        }
        return {
          name: n.name,
          online: n.online && !n.maintenance && n.haState === undefined,
          condition: nodeCondition(n.online, n.haState ?? (n.online ? 'online' : 'unknown'), n.maintenance),
          maintenance: n.maintenance,
          maxcpu: n.maxcpu,
          maxmem: n.maxmem,
          cpu,
          mem,
          pressure: { cpuSome: n.pressureCpu, memSome: n.pressureMem },
        };
      });
    const guests: GuestSnapshot[] = [...this.s.guests]
      .sort((a, b) => compareNames(a.sid, b.sid))
      .map((g) => ({
        sid: g.sid,
        vmid: Number(g.sid.slice(g.sid.indexOf(':') + 1)),
        type: g.sid.startsWith('ct:') ? 'ct' : 'vm',
        node: g.node,
        running: g.running,
        lock: g.lock,
        template: false,
        ha: g.ha
          ? {
              state: g.haState,
              target: g.haTarget,
              requestState: 'started',
              autoRebalance: g.autoRebalance,
              uid: String(g.haUid ?? 0),
            }
          : undefined,
        stats: { cpu: g.cpu, maxcpu: g.maxcpu, mem: g.mem, maxmem: g.maxmem, memhost: g.memhost },
      }));
    return structuredClone({
      time: this.s.time,
      quorate: this.s.quorate && this.s.quorumUnreadable !== true,
      ...(this.s.quorumUnreadable ? { quorumUnknown: true } : {}),
      haDisarmed: this.s.haDisarmed,
      nodes,
      guests,
      rules: this.s.rules ?? [],
      crs: { ha: 'dynamic', autoRebalance: this.s.autoRebalance },
      ...(needs?.guestConfigs
        ? {
            guestConfigs: new Map(
              this.s.guests.filter((g) => g.config !== undefined).map((g) => [g.sid, { ...g.config! }]),
            ),
          }
        : {}),
    });
  }

  private script(sid: string, target: string): FakeMotionScript {
    const key = Object.hasOwn(this.s.scripts, `${sid}>${target}`) ? `${sid}>${target}` : sid;
    const list = Object.hasOwn(this.s.scripts, key) ? this.s.scripts[key]! : [{}];
    const n = Object.hasOwn(this.s.attempts, key) ? this.s.attempts[key]! : 0;
    this.s.attempts[key] = n + 1;
    return list[Math.min(n, list.length - 1)]!;
  }

  async requestMotion(request: MotionRequest): Promise<MotionReply> {
    this.s.requests.push({
      time: this.s.time,
      sid: request.sid,
      kind: request.kind,
      target: request.target,
      via: 'ha',
    });
    const g = this.s.guests.find((x) => x.sid === request.sid);
    if (!g || !g.ha) return { accepted: false, reason: `'${request.sid}' is not an HA resource` };
    if (g.haState === 'error') return { accepted: false, reason: `service '${request.sid}' is in error state` };
    const script = this.script(request.sid, request.target);
    if (script.reply === 'refuse') return { accepted: false, reason: 'scripted refusal (403)' };
    if (script.reply !== 'lost-unapplied')
      this.s.queue.push({ sid: request.sid, kind: request.kind, target: request.target, script });
    if (script.reply === 'lost' || script.reply === 'lost-unapplied') {
      throw new PortError(
        `POST /cluster/ha/resources/{sid}/${request.kind}`,
        'timeout',
        'scripted timeout after sending',
      );
    }
    return { accepted: true, task: undefined, comigrated: this.partners(request.sid) };
  }

  async checkGuestMigration(request: MotionRequest): Promise<GuestMigrationCheck> {
    const reason = Object.hasOwn(this.s.guestCheckRefusals, request.sid)
      ? this.s.guestCheckRefusals[request.sid]
      : undefined;
    return reason === undefined ? { allowed: true } : { allowed: false, reason };
  }

  async requestGuestMigration(request: MotionRequest): Promise<MotionReply> {
    this.s.requests.push({
      time: this.s.time,
      sid: request.sid,
      kind: request.kind,
      target: request.target,
      via: 'guest',
    });
    const g = this.s.guests.find((x) => x.sid === request.sid);
    if (!g || g.ha) return { accepted: false, reason: `'${request.sid}' is not a non-HA guest` };
    const script = this.script(request.sid, request.target);
    if (script.reply === 'refuse') return { accepted: false, reason: 'scripted refusal (403)' };
    const task = `UPID:${g.node}:0000FA1E:00000000:${this.s.time.toString(16).toUpperCase()}:qmigrate:${request.sid.slice(3)}:poise@pve!fake:`;
    this.s.tasks[task] = { sid: g.sid, target: request.target, status: 'running' };
    g.lock = 'migrate';
    g.haTarget = request.target;
    this.s.moving.push({
      sid: g.sid,
      roundsLeft: Math.max(1, script.rounds ?? 1),
      outcome: script.outcome === 'fail' || script.outcome === 'error' ? 'fail' : 'succeed',
      task,
    });
    return { accepted: true, task, comigrated: [] };
  }

  async followMotion(
    motion: MotionRecord,
    snapshot: ClusterSnapshot,
    options?: FollowOptions,
  ): Promise<MotionProgress> {
    const pickupTimeoutSeconds = options?.pickupTimeoutSeconds ?? this.s.pickupTimeoutSeconds;
    if (motion.via === 'ha') return followHaMotion(motion, snapshot, { now: snapshot.time, pickupTimeoutSeconds });
    const task =
      motion.task === undefined || !Object.hasOwn(this.s.tasks, motion.task) ? undefined : this.s.tasks[motion.task];
    if (!task) {
      // written before the request left: judge by where the guest is
      const g = snapshot.guests.find((x) => x.sid === motion.sid);
      if (g?.node === motion.target) return { status: 'succeeded' };
      if (snapshot.time - motion.issuedAt > pickupTimeoutSeconds)
        return { status: 'failed', reason: 'no migration task was started' };
      return { status: 'pending', phase: 'queued' };
    }
    if (task.status === 'running') return { status: 'pending', phase: 'moving' };
    return task.exitstatus === 'OK'
      ? { status: 'succeeded' }
      : { status: 'failed', reason: `migration task ended: ${task.exitstatus ?? '?'}` };
  }
}

/**
 * A {@link Host} over a fake cluster: its clock is the cluster's time and each sleep between
 * rounds is one cluster round (`step`). `afterStep` runs after each (a fixture persists the
 * cluster there).
 */
export function fakeHost(
  cluster: FakeCluster,
  options: { afterStep?: () => void | Promise<void>; redact?: (text: string) => string } = {},
): Host {
  return {
    port: cluster,
    clock: {
      now: () => cluster.time,
      sleep: async (seconds, signal) => {
        if (signal.aborted) return;
        cluster.step(seconds);
        await options.afterStep?.();
      },
    },
    notices: [],
    ...(options.redact ? { redact: options.redact } : {}),
  };
}
