import { type FakePveServer, type FakeReply, type FakeRequest, startFakePveServer } from '@poise/pve-api/testing';
import type { FakeCluster, FakeGuest } from './fake-cluster';
import { PortError } from './port';

/**
 * A {@link FakeCluster} behind a fake `pveproxy` (`@poise/pve-api/testing`): the endpoints the
 * Proxmox VE adapter uses, over real HTTPS on 127.0.0.1, with the real replies' shapes and
 * quirks (0/1 booleans, `quorate` as the string `"1"`, `crs` as a property string, `strict`
 * absent when 0, RRD rows that omit undefined keys and a trailing incomplete row, HA migrate
 * returning before the CRM acts). Token checking and fault injection (`inject`) come from the
 * fake server. For tests and fixtures only.
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
  /** Milliseconds a motion POST waits after it was applied before its reply is sent (0 by default). */
  postDelayMs: number;
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

const KIB = 1024;

function vmidOf(sid: string): number {
  return Number(sid.slice(sid.indexOf(':') + 1));
}

function guestType(g: FakeGuest): 'qemu' | 'lxc' {
  return g.sid.startsWith('ct:') ? 'lxc' : 'qemu';
}

/** Starts the fake API for a fake cluster. The cluster keeps being driven by the test (`step`). */
export async function startFakePve(options: FakePveOptions): Promise<FakePve> {
  const cluster = options.cluster;
  const version = options.version ?? '9.2.2';
  const pve9 = Number(version.split('.')[0]) >= 9;
  const injected = new Map<string, { match: (request: FakeRequest) => boolean; reply: FakeReply }[]>();
  const route = (key: string, handler: (req: FakeRequest) => FakeReply | Promise<FakeReply>) => [
    key,
    async (req: FakeRequest) => {
      const queue = injected.get(key) ?? [];
      const i = queue.findIndex((f) => f.match(req));
      if (i >= 0) return queue.splice(i, 1)[0]!.reply;
      return handler(req);
    },
  ] as const;

  const nodeCpuMem = (name: string) => {
    const n = cluster.node(name);
    let cpu = n.baseCpu;
    let mem = n.baseMem;
    for (const g of cluster.s.guests) {
      if (g.running && g.node === name) {
        cpu += g.cpu;
        mem += g.mem;
      }
    }
    return { cpu, mem };
  };

  const routes = [
    route('GET /version', () => ({ data: { version, release: version.split('.').slice(0, 2).join('.'), repoid: 'b9984c6d90a4bd80' } })),
    route('GET /cluster/resources', () => {
      const rows: Record<string, unknown>[] = [];
      for (const n of cluster.s.nodes) {
        const { cpu, mem } = nodeCpuMem(n.name);
        rows.push({
          id: `node/${n.name}`,
          type: 'node',
          node: n.name,
          status: n.online ? 'online' : 'offline',
          level: '',
          ...(n.online ? { cpu: cpu / n.maxcpu, maxcpu: n.maxcpu, mem, maxmem: n.maxmem, uptime: 86_400, disk: 4 * KIB ** 3, maxdisk: 64 * KIB ** 3 } : { maxcpu: n.maxcpu, maxmem: n.maxmem }),
          ...(n.online ? { hastate: n.maintenance ? 'maintenance' : 'online' } : {}),
        });
        rows.push({ id: `storage/${n.name}/local`, type: 'storage', storage: 'local', node: n.name, shared: 0, content: 'iso,vztmpl,backup', plugintype: 'dir', status: 'available' });
        rows.push({ id: `storage/${n.name}/ceph`, type: 'storage', storage: 'ceph', node: n.name, shared: 1, content: 'images,rootdir', plugintype: 'rbd', status: 'available' });
      }
      for (const g of cluster.s.guests) {
        const type = guestType(g);
        rows.push({
          id: `${type}/${vmidOf(g.sid)}`,
          type,
          vmid: vmidOf(g.sid),
          name: `guest${vmidOf(g.sid)}`,
          node: g.node,
          status: g.running ? 'running' : 'stopped',
          // cpu is a fraction of the guest's vCPUs; idle guests send the integer 0
          cpu: g.running ? g.cpu / g.maxcpu : 0,
          maxcpu: g.maxcpu,
          mem: g.running ? g.mem : 0,
          maxmem: g.maxmem,
          ...(pve9 ? { memhost: type === 'qemu' && g.running ? (g.memhost ?? g.mem) : 0 } : {}),
          template: 0,
          uptime: g.running ? 3600 : 0,
          ...(g.lock !== undefined ? { lock: g.lock } : {}),
          ...(g.ha ? { hastate: g.haState } : {}),
        });
      }
      return { data: rows };
    }),
    route('GET /cluster/status', () => ({
      data: [
        { type: 'cluster', id: 'cluster', name: 'fake', quorate: cluster.s.quorate ? 1 : 0, nodes: cluster.s.nodes.length, version: 3 },
        ...cluster.s.nodes.map((n, i) => ({ type: 'node', id: `node/${n.name}`, name: n.name, nodeid: i + 1, online: n.online ? 1 : 0, local: i === 0 ? 1 : 0, ip: `10.0.0.${i + 1}` })),
      ],
    })),
    route('GET /cluster/ha/status/manager_status', () => {
      const master = cluster.s.nodes.find((n) => n.online)?.name;
      const services: Record<string, unknown> = {};
      for (const g of cluster.s.guests) {
        if (!g.ha) continue;
        services[g.sid] = { state: g.haState, node: g.node, uid: `${vmidOf(g.sid)}-${g.haUid ?? 0}`, ...(g.haTarget !== undefined ? { target: g.haTarget } : {}), ...(g.haState === 'started' ? { running: 1 } : {}) };
      }
      return {
        data: {
          manager_status: {
            master_node: master,
            timestamp: Math.floor(cluster.time),
            node_status: Object.fromEntries(cluster.s.nodes.map((n) => [n.name, !n.online ? 'unknown' : n.maintenance ? 'maintenance' : 'online'])),
            node_request: Object.fromEntries(cluster.s.nodes.map((n) => [n.name, n.maintenance ? { maintenance: 1 } : {}])),
            service_status: services,
            ...(cluster.s.haDisarmed ? { disarm: { mode: 'freeze', state: 'disarmed' } } : {}),
          },
          quorum: { node: master, quorate: cluster.s.quorate ? '1' : '0' },
          lrm_status: Object.fromEntries(cluster.s.nodes.map((n) => [n.name, { mode: 'active', state: 'active', timestamp: Math.floor(cluster.time), results: {} }])),
        },
      };
    }),
    route('GET /cluster/ha/resources', () => ({
      data: cluster.s.guests
        .filter((g) => g.ha)
        .map((g) => {
          const group = options.groups?.find((gr) => gr.members.includes(g.sid))?.group;
          return {
            sid: g.sid,
            type: g.sid.slice(0, 2),
            state: 'started',
            digest: 'f00dcafe',
            max_restart: 1,
            ...(g.autoRebalance ? {} : { 'auto-rebalance': 0 }),
            ...(group !== undefined ? { group } : {}),
          };
        }),
    })),
    route('GET /cluster/ha/groups', () =>
      pve9 && !options.groups
        ? { status: 500, statusText: 'cannot index groups: ha groups have been migrated to rules' }
        : { data: (options.groups ?? []).map((g) => ({ group: g.group, nodes: g.nodes, type: 'group', ...(g.restricted ? { restricted: 1 } : {}) })) },
    ),
    route('GET /cluster/options', () => ({
      data: {
        keyboard: 'en-us',
        // a property string here; real clusters send an object too (both are read)
        crs: cluster.s.autoRebalance ? 'ha=static,ha-auto-rebalance=1,ha-auto-rebalance-threshold=30,ha-auto-rebalance-margin=10' : 'ha=static',
      },
    })),
    route('GET /nodes/{node}/rrddata', (req) => {
      const n = cluster.node(req.params.node!);
      const { cpu, mem } = nodeCpuMem(n.name);
      const minute = Math.floor(cluster.time / 60) * 60;
      const row = (time: number) => ({
        time,
        cpu: cpu / n.maxcpu,
        maxcpu: n.maxcpu,
        memtotal: n.maxmem,
        memused: mem,
        loadavg: 0.5,
        ...(n.pressureCpu !== undefined ? { pressurecpusome: n.pressureCpu } : {}),
        ...(n.pressureMem !== undefined ? { pressurememorysome: n.pressureMem } : {}),
      });
      // the bucket being filled has only some keys; the complete ones before it have them all
      return { data: [row(minute - 180), row(minute - 120), row(minute - 60), { time: minute, loadavg: 0.5 }] };
    }),
    route('GET /nodes/{node}/{type}/{vmid}/config', (req) => {
      const g = cluster.s.guests.find((x) => vmidOf(x.sid) === Number(req.params.vmid));
      if (!g) return { status: 500, statusText: `Configuration file 'nodes/${req.params.node}/qemu-server/${req.params.vmid}.conf' does not exist` };
      return { data: { cores: g.maxcpu, memory: String(g.maxmem / KIB / KIB), scsi0: `ceph:vm-${vmidOf(g.sid)}-disk-0,size=32G`, digest: 'c0ffee', ...(g.config ?? {}) } };
    }),
    route('GET /nodes/{node}/{type}/{vmid}/migrate', (req) => {
      const g = cluster.s.guests.find((x) => vmidOf(x.sid) === Number(req.params.vmid));
      const refusal = g && Object.hasOwn(cluster.s.guestCheckRefusals, g.sid) ? cluster.s.guestCheckRefusals[g.sid] : undefined;
      return {
        data: {
          running: g?.running ? 1 : 0,
          allowed_nodes: cluster.s.nodes.filter((n) => n.name !== req.params.node).map((n) => n.name),
          not_allowed_nodes: {},
          local_disks: [],
          local_resources: refusal === undefined ? [] : ['hostpci0'],
          'mapped-resources': [],
        },
      };
    }),
    ...(['migrate', 'relocate'] as const).map((kind) =>
      route(`POST /cluster/ha/resources/{sid}/${kind}`, async (req) => {
        const sid = req.params.sid!;
        const g = cluster.s.guests.find((x) => x.sid === sid);
        if (g?.haState === 'error') return { status: 500, statusText: `service '${sid}' in error state, must be disabled and fixed first` };
        try {
          const reply = await cluster.requestMotion({ sid, kind, target: req.form.get('node') ?? '' });
          if (!reply.accepted) return { status: 400, statusText: reply.reason };
          return {
            data: { sid, 'requested-node': req.form.get('node'), ...(reply.comigrated.length > 0 ? { 'comigrated-resources': reply.comigrated } : {}) },
            delayMs: fake.postDelayMs,
          };
        } catch (err) {
          // a scripted 'lost' reply: the command was queued, the reply never arrives
          if (err instanceof PortError) return { drop: 'before-reply' };
          throw err;
        }
      }),
    ),
    route('POST /nodes/{node}/{type}/{vmid}/migrate', async (req) => {
      const g = cluster.s.guests.find((x) => vmidOf(x.sid) === Number(req.params.vmid));
      const reply = await cluster.requestGuestMigration({ sid: g?.sid ?? `vm:${req.params.vmid}`, kind: 'migrate', target: req.form.get('target') ?? '' });
      if (!reply.accepted) return { status: 400, statusText: reply.reason };
      return { data: reply.task };
    }),
    route('GET /nodes/{node}/tasks/{upid}/status', (req) => {
      const task = Object.hasOwn(cluster.s.tasks, req.params.upid!) ? cluster.s.tasks[req.params.upid!] : undefined;
      if (!task) return { status: 500, statusText: `unable to find task '${req.params.upid}'` };
      return { data: { upid: req.params.upid, node: req.params.node, type: 'qmigrate', id: String(vmidOf(task.sid)), user: 'poise@pve!fake', status: task.status, ...(task.exitstatus ? { exitstatus: task.exitstatus } : {}), starttime: 0 } };
    }),
    route('GET /nodes/{node}/tasks', (req) => {
      const vmid = req.query.get('vmid');
      const data = Object.entries(cluster.s.tasks)
        .filter(([, t]) => vmid === null || String(vmidOf(t.sid)) === vmid)
        .map(([upid, t]) => ({ upid, node: req.params.node, type: 'qmigrate', id: String(vmidOf(t.sid)), user: 'poise@pve!fake', starttime: Math.floor(cluster.time), ...(t.status === 'stopped' ? { endtime: Math.floor(cluster.time), status: t.exitstatus } : {}) }));
      return { data };
    }),
  ];
  const active = routes.filter(([key]) => pve9 || key !== 'GET /cluster/ha/rules');
  if (pve9) {
    active.push(
      route('GET /cluster/ha/rules', () => ({
        data: (cluster.s.rules ?? []).map((r, i) =>
          r.type === 'node-affinity'
            ? { rule: r.id, type: r.type, resources: r.resources.join(','), nodes: r.nodes.map((n) => (n.priority === 0 ? n.node : `${n.node}:${n.priority}`)).join(','), ...(r.strict ? { strict: 1 } : {}), order: i + 1, digest: 'feedface' }
            : { rule: r.id, type: r.type, resources: r.resources.join(','), affinity: r.affinity, order: i + 1, digest: 'feedface' },
        ),
      })),
    );
  }
  const fake: { postDelayMs: number } = { postDelayMs: 0 };
  const server = await startFakePveServer({ tls: options.tls, tokens: options.tokens, routes: Object.fromEntries(active), port: options.port });
  const methods: Omit<FakePve, 'postDelayMs'> = {
    server,
    url: server.url,
    inject: (key, ...replies) => injected.set(key, [...(injected.get(key) ?? []), ...replies.map((reply) => ({ match: () => true, reply }))]),
    injectWhere: (key, match, ...replies) => injected.set(key, [...(injected.get(key) ?? []), ...replies.map((reply) => ({ match, reply }))]),
    posts: () => server.requests.filter((r) => r.method === 'POST'),
    close: () => server.close(),
  };
  return Object.assign(fake, methods);
}
