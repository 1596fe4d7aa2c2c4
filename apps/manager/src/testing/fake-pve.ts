import {
  clusterReadRoutes,
  type FakePveServer,
  type FakeReply,
  type FakeRequest,
  haMotionRefusal,
  haMotionReply,
  privilegeRefusal,
  type ServedAcl,
  type ServedCluster,
  startFakePveServer,
  vmidOfSid,
} from '@poise/pve-api/server';
import type { FakeCluster, FakeGuest } from './fake-cluster';
import { PortError } from '../cluster/port';

/**
 * A {@link FakeCluster} behind a fake `pveproxy` (`@poise/pve-api/server`): the endpoints the
 * Proxmox VE adapter uses, over real HTTPS on 127.0.0.1. The read replies are
 * `@poise/pve-api/server`'s `clusterReadRoutes` over {@link servedFakeCluster} — the same
 * writer `poise-sim serve` uses, with the real replies' shapes and quirks (0/1 booleans,
 * `quorate` as the string `"1"`, `crs` as a property string, `strict` absent when 0, RRD rows
 * that omit undefined keys and a trailing incomplete row); HA migrate returns before the CRM
 * acts. Token checking and fault injection (`inject`) come from the fake server. For tests and
 * fixtures only.
 */
export interface FakePve {
  readonly server: FakePveServer;
  readonly url: string;
  /**
   * The next `replies.length` requests to `route` (e.g. `'GET /cluster/resources'`) get these
   * replies instead of the cluster's (a 500, a delay past the timeout, a dropped connection,
   * malformed JSON, …).
   */
  inject(route: string, ...replies: FakeReply[]): void;
  /** Like `inject`, for the requests to `route` that `match` accepts (e.g. one node's). */
  injectWhere(route: string, match: (request: FakeRequest) => boolean, ...replies: FakeReply[]): void;
  /** Every request to `route` gets `reply` until it is set to `undefined` again (a privilege revoked for a while). */
  override(route: string, reply: FakeReply | undefined): void;
  /** Milliseconds a motion POST waits after it was applied before its reply is sent (0 by default). */
  postDelayMs: number;
  /**
   * The token's effective ACL, read at each request: `GET /access/permissions` reports it and
   * the migrate POSTs check it first (a 403 `Permission check failed (<path>, <privilege>)`,
   * as pveproxy answers before the handler runs). `undefined` (the default): every privilege
   * a balancing role holds, on `/`.
   */
  acl: ServedAcl[] | undefined;
  /** The HA and guest migrate POSTs that reached the server, in order. */
  posts(): FakeRequest[];
  close(): Promise<void>;
}

export interface FakePveOptions {
  readonly cluster: FakeCluster;
  readonly tls: { cert: string; key: string };
  /** Accepted API tokens (`USER@REALM!TOKENID=SECRET`). */
  readonly tokens: string[];
  /** `/version`: `9.2.2` (rules) by default; an `8.x` version serves HA groups and no rules (501). */
  readonly version?: string;
  /** HA groups of a PVE 8 cluster, by group name; resources name them in `group`. */
  readonly groups?: { group: string; nodes: string; restricted?: boolean; members: string[] }[];
  /** Listen port (default any free one); a test restarts a server on the same port to swap its certificate. */
  readonly port?: number;
}

function vmidOf(sid: string): number {
  return vmidOfSid(sid);
}

/** `node1:2,node2` → node priorities. */
function parseNodes(list: string): { node: string; priority: number }[] {
  return list
    .split(',')
    .filter((e) => e !== '')
    .map((e) => {
      const [node, priority] = e.split(':');
      return { node: node!, priority: priority === undefined ? 0 : Number(priority) };
    });
}

/** The fake cluster as the API shows it (`@poise/pve-api/server`'s {@link ServedCluster}). */
export function servedFakeCluster(
  cluster: FakeCluster,
  options: Pick<FakePveOptions, 'version' | 'groups'> & { acl?: readonly ServedAcl[] | undefined } = {},
): ServedCluster {
  const version = options.version ?? '9.2.2';
  const nodes = cluster.s.nodes.map((n) => {
    let cpu = n.baseCpu;
    let mem = n.baseMem;
    for (const g of cluster.s.guests) {
      if (g.running && g.node === n.name) {
        cpu += g.cpu;
        mem += g.mem;
      }
    }
    return {
      name: n.name,
      online: n.online,
      haState: n.haState ?? (!n.online ? 'unknown' : n.maintenance ? 'maintenance' : 'online'),
      maintenanceRequest: n.maintenance,
      maxcpu: n.maxcpu,
      maxmem: n.maxmem,
      cpu,
      mem,
      pressureCpu: n.pressureCpu,
      pressureMem: n.pressureMem,
    };
  });
  const groupOf = (sid: string) => options.groups?.find((gr) => gr.members.includes(sid))?.group;
  return {
    version,
    time: cluster.time,
    quorate: cluster.s.quorate,
    quorumUnreadable: cluster.s.quorumUnreadable,
    nodes,
    guests: cluster.s.guests.map((g: FakeGuest) => ({
      sid: g.sid,
      node: g.node,
      running: g.running,
      cpu: g.cpu,
      maxcpu: g.maxcpu,
      mem: g.mem,
      maxmem: g.maxmem,
      memhost: g.memhost,
      lock: g.lock,
      hastate: g.ha ? g.haState : undefined,
      config: g.config,
      localResources: Object.hasOwn(cluster.s.guestCheckRefusals, g.sid) ? ['hostpci0'] : [],
    })),
    ha: {
      master: cluster.s.nodes.find((n) => n.online)?.name,
      services: cluster.s.guests
        .filter((g) => g.ha)
        .map((g) => ({
          sid: g.sid,
          state: g.haState,
          node: g.node,
          target: g.haTarget,
          uid: `${vmidOf(g.sid)}-${g.haUid ?? 0}`,
        })),
      resources: cluster.s.guests
        .filter((g) => g.ha)
        .map((g) => ({ sid: g.sid, state: 'started', autoRebalance: g.autoRebalance, group: groupOf(g.sid) })),
      disarm: cluster.s.haDisarmed ? { mode: 'freeze', state: 'disarmed' } : undefined,
    },
    rules: cluster.s.rules ?? [],
    groups: (options.groups ?? []).map((g) => ({
      group: g.group,
      nodes: parseNodes(g.nodes),
      restricted: g.restricted,
    })),
    // a property string here; real clusters send an object too (both are read)
    crs: cluster.s.autoRebalance
      ? { ha: 'static', 'ha-auto-rebalance': 1, 'ha-auto-rebalance-threshold': 30, 'ha-auto-rebalance-margin': 10 }
      : { ha: 'static' },
    ...(options.acl === undefined ? {} : { acl: options.acl }),
  };
}

/** Starts the fake API for a fake cluster. The cluster keeps being driven by the test (`step`). */
export async function startFakePve(options: FakePveOptions): Promise<FakePve> {
  const cluster = options.cluster;
  const injected = new Map<string, { match: (request: FakeRequest) => boolean; reply: FakeReply }[]>();
  const overridden = new Map<string, FakeReply>();
  const route = (key: string, handler: (req: FakeRequest) => FakeReply | Promise<FakeReply>) =>
    [
      key,
      async (req: FakeRequest) => {
        const fixed = overridden.get(key);
        if (fixed) return fixed;
        const queue = injected.get(key) ?? [];
        const i = queue.findIndex((f) => f.match(req));
        if (i >= 0) return queue.splice(i, 1)[0]!.reply;
        return handler(req);
      },
    ] as const;
  const served = () => servedFakeCluster(cluster, { ...options, acl: fake.acl });

  const routes = [
    ...Object.entries(clusterReadRoutes(served)).map(([key, handler]) => route(key, handler)),
    ...(['migrate', 'relocate'] as const).map((kind) =>
      route(`POST /cluster/ha/resources/{sid}/${kind}`, async (req) => {
        const sid = req.params.sid!;
        const denied = privilegeRefusal(served(), '/', 'Sys.Console');
        if (denied) return denied;
        const node = req.form.get('node');
        if (node === null || node === '')
          return {
            status: 400,
            statusText: 'Parameter verification failed.',
            data: { node: 'property is missing and it is not optional' },
          };
        // what the endpoint refuses before queueing: a 500 with the handler's message
        const refusal = haMotionRefusal(served(), sid, node);
        if (refusal) return refusal;
        try {
          const reply = await cluster.requestMotion({ sid, kind, target: node });
          if (!reply.accepted)
            return { status: 500, statusText: `service '${sid}' cannot be moved to '${node}': ${reply.reason}` };
          return { ...haMotionReply(served(), sid, node, reply.comigrated), delayMs: fake.postDelayMs };
        } catch (err) {
          // a scripted 'lost' reply: the command was queued, the reply never arrives
          if (err instanceof PortError) return { drop: 'before-reply' };
          throw err;
        }
      }),
    ),
    route('POST /nodes/{node}/{type}/{vmid}/migrate', async (req) => {
      const denied = privilegeRefusal(served(), `/vms/${req.params.vmid}`, 'VM.Migrate');
      if (denied) return denied;
      const g = cluster.s.guests.find((x) => vmidOf(x.sid) === Number(req.params.vmid));
      const reply = await cluster.requestGuestMigration({
        sid: g?.sid ?? `vm:${req.params.vmid}`,
        kind: 'migrate',
        target: req.form.get('target') ?? '',
      });
      if (!reply.accepted) return { status: 400, statusText: reply.reason };
      return { data: reply.task };
    }),
    route('GET /nodes/{node}/tasks/{upid}/status', (req) => {
      const task = Object.hasOwn(cluster.s.tasks, req.params.upid!) ? cluster.s.tasks[req.params.upid!] : undefined;
      if (!task) return { status: 500, statusText: `unable to find task '${req.params.upid}'` };
      return {
        data: {
          upid: req.params.upid,
          node: req.params.node,
          type: 'qmigrate',
          id: String(vmidOf(task.sid)),
          user: 'poise@pve!fake',
          status: task.status,
          ...(task.exitstatus ? { exitstatus: task.exitstatus } : {}),
          starttime: 0,
        },
      };
    }),
    // a finished task's log as qemu-server writes a live migration's: the guest's memory sent
    // once in 8 s; a task whose guest has no memory says nothing usable (no transfer line)
    route('GET /nodes/{node}/tasks/{upid}/log', (req) => {
      const task = Object.hasOwn(cluster.s.tasks, req.params.upid!) ? cluster.s.tasks[req.params.upid!] : undefined;
      if (!task) return { status: 500, statusText: `unable to find task '${req.params.upid}'` };
      const mem = cluster.s.guests.find((g) => g.sid === task.sid)?.mem ?? 0;
      const lines = [
        `starting migration of VM ${vmidOf(task.sid)} to node '${task.target}'`,
        ...(mem > 0
          ? [
              `migration active, transferred ${(mem / 1024 ** 2).toFixed(1)} MiB of ${(mem / 1024 ** 2).toFixed(1)} MiB VM-state, 512.0 MiB/s`,
            ]
          : []),
        ...(task.status === 'stopped' && task.exitstatus === 'OK'
          ? ['migration finished successfully (duration 00:00:08)', 'TASK OK']
          : []),
      ];
      return { data: lines.map((t, i) => ({ n: i + 1, t })) };
    }),
    route('GET /nodes/{node}/tasks', (req) => {
      const vmid = req.query.get('vmid');
      const data = Object.entries(cluster.s.tasks)
        .filter(([, t]) => vmid === null || String(vmidOf(t.sid)) === vmid)
        .map(([upid, t]) => ({
          upid,
          node: req.params.node,
          type: 'qmigrate',
          id: String(vmidOf(t.sid)),
          user: 'poise@pve!fake',
          starttime: Math.floor(cluster.time),
          ...(t.status === 'stopped' ? { endtime: Math.floor(cluster.time), status: t.exitstatus } : {}),
        }));
      return { data };
    }),
  ];
  const fake: { postDelayMs: number; acl: ServedAcl[] | undefined } = { postDelayMs: 0, acl: undefined };
  const server = await startFakePveServer({
    tls: options.tls,
    tokens: options.tokens,
    routes: Object.fromEntries(routes),
    port: options.port,
  });
  const methods: Omit<FakePve, 'postDelayMs' | 'acl'> = {
    server,
    url: server.url,
    inject: (key, ...replies) =>
      injected.set(key, [...(injected.get(key) ?? []), ...replies.map((reply) => ({ match: () => true, reply }))]),
    injectWhere: (key, match, ...replies) =>
      injected.set(key, [...(injected.get(key) ?? []), ...replies.map((reply) => ({ match, reply }))]),
    override: (key, reply) => {
      if (reply === undefined) overridden.delete(key);
      else overridden.set(key, reply);
    },
    posts: () => server.requests.filter((r) => r.method === 'POST'),
    close: () => server.close(),
  };
  return Object.assign(fake, methods);
}
