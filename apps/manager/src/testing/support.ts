import type { Io } from '../cli/io';
import type { ClusterSnapshot, GuestSnapshot, MotionRecord, NodeSnapshot } from '../cluster/port';

export const GIB = 1024 ** 3;
export const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z

/** A usable node of 16 cores and 64 GiB, idle unless given. */
export function node(name: string, extra: Partial<NodeSnapshot> = {}): NodeSnapshot {
  return {
    name,
    online: true,
    condition: 'online',
    maintenance: false,
    maxcpu: 16,
    maxmem: 64 * GIB,
    cpu: 0,
    mem: 0,
    pressure: { cpuSome: undefined, memSome: undefined },
    ...extra,
  };
}

/** A started HA VM using 2 cores and 4 GiB (unless given). */
export function haGuest(
  sid: string,
  onNode: string,
  extra: Partial<GuestSnapshot> & {
    state?: NonNullable<GuestSnapshot['ha']>['state'];
    target?: string;
    autoRebalance?: boolean;
  } = {},
): GuestSnapshot {
  const { state = 'started', target, autoRebalance = true, ...rest } = extra;
  return {
    sid,
    vmid: Number(sid.slice(3)),
    type: sid.startsWith('ct:') ? 'ct' : 'vm',
    node: onNode,
    running: true,
    lock: undefined,
    template: false,
    ha: { state, target, requestState: 'started', autoRebalance },
    stats: { cpu: 2, maxcpu: 4, mem: 4 * GIB, maxmem: 8 * GIB, memhost: undefined },
    ...rest,
  };
}

/** A running guest that is not an HA resource. */
export function plainGuest(sid: string, onNode: string, extra: Partial<GuestSnapshot> = {}): GuestSnapshot {
  return { ...haGuest(sid, onNode), ha: undefined, ...extra };
}

export function snapshot(
  nodes: NodeSnapshot[],
  guests: GuestSnapshot[],
  extra: Partial<ClusterSnapshot> = {},
): ClusterSnapshot {
  return {
    time: T0,
    quorate: true,
    haDisarmed: false,
    nodes,
    guests,
    rules: [],
    crs: { ha: 'dynamic', autoRebalance: false },
    ...extra,
  };
}

/** An HA migrate of vm:101 from node1 to node2, issued at T0 and queued (fields as given). */
export function motionRecord(extra: Partial<MotionRecord> = {}): MotionRecord {
  return {
    sid: 'vm:101',
    resources: ['vm:101'],
    kind: 'migrate',
    via: 'ha',
    source: 'node1',
    target: 'node2',
    issuedAt: T0,
    phase: 'queued',
    task: undefined,
    imbalanceBefore: 0.6,
    imbalanceAfter: 0.3,
    ...extra,
  };
}

/** An `Io` that collects what the command line prints (stdout, stderr, log lines) and the signal handlers it registers. */
export function captureIo(env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const logs: string[] = [];
  const handlers = new Map<string, () => void>();
  const io: Io = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    logLine: (l) => logs.push(l),
    progress: (l) => {
      if (l !== '') err.push(l);
    },
    isTty: false,
    env,
    onSignal: (signal, handler) => {
      handlers.set(signal, handler);
      return () => handlers.delete(signal);
    },
  };
  return { io, out, err, logs, handlers };
}
