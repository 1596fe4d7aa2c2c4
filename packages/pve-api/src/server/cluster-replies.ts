import type { FakeHandler, FakeReply, FakeRequest } from './fake-server';

/**
 * A cluster as the Proxmox VE API shows it: what {@link clusterReadRoutes} serves. A fake or
 * simulated cluster describes itself in these terms (units: cores, bytes, PSI percent, epoch
 * seconds) and the replies are written with the real API's shapes and quirks.
 */
export interface ServedCluster {
  /**
   * `GET /version`, e.g. `9.2.2`. Below 9 the cluster is a PVE 8 one: no `/cluster/ha/rules`
   * (501), no `memhost`, HA groups served, HA migrate answering `null`.
   */
  readonly version: string;
  /** Now, epoch seconds: `manager_status` and LRM timestamps, RRD buckets, task start times. */
  readonly time: number;
  readonly quorate: boolean;
  /**
   * The answering node could not check its quorum: `manager_status` sends `quorate: null`
   * (`PVE::Cluster::check_cfs_quorum` failed), `/cluster/status` still its own view.
   */
  readonly quorumUnreadable?: boolean;
  /** Cluster nodes, in the order to serve them. */
  readonly nodes: readonly ServedNode[];
  readonly guests: readonly ServedGuest[];
  readonly ha: ServedHa;
  /** HA rules (`/cluster/ha/rules`, PVE 9), in rule order. */
  readonly rules: readonly ServedRule[];
  /** HA groups (`/cluster/ha/groups`): on PVE 9 an empty list answers the 500 of a cluster whose groups were migrated. */
  readonly groups: readonly ServedGroup[];
  /** The datacenter `crs` options (key → value as in datacenter.cfg); omitted from `/cluster/options` when empty. */
  readonly crs: Readonly<Record<string, string | number>>;
  /** How `crs` goes on the wire: a property string (`ha=static,ha-auto-rebalance=1`, the default) or an object. */
  readonly crsAs?: 'string' | 'object';
  /**
   * The calling token's effective ACL (with privilege separation already the user's ∩ the
   * token's): what `GET /access/permissions` reports and what the POST routes check. Left out:
   * the token holds {@link SERVED_PRIVILEGES} on `/`, propagated (an administrator's token).
   */
  readonly acl?: readonly ServedAcl[];
}

/** One ACL entry of the calling token: `privileges` on `path`, inherited below it when `propagate`. */
export interface ServedAcl {
  readonly path: string;
  readonly privileges: readonly string[];
  readonly propagate: boolean;
}

/** The privileges of a token without an explicit ACL (the ones a balancing daemon's role holds, spec §2). */
export const SERVED_PRIVILEGES: readonly string[] = [
  'Datastore.Audit',
  'Pool.Audit',
  'Sys.Audit',
  'Sys.Console',
  'VM.Audit',
  'VM.Migrate',
];

/** A node. */
export interface ServedNode {
  readonly name: string;
  /** Up and in the cluster (`status: online`); an offline node's row keeps only its maxima. */
  readonly online: boolean;
  /** The HA manager's node state (`online`, `maintenance`, `unknown`, `fence`, `gone`): `manager_status.node_status` and the row's `hastate`. */
  readonly haState: string;
  /** A maintenance request pending (`manager_status.node_request.<node>.maintenance`). */
  readonly maintenanceRequest?: boolean;
  readonly maxcpu: number;
  readonly maxmem: number;
  /** Cores in use (sent as a fraction of `maxcpu`). */
  readonly cpu: number;
  /** Bytes in use. */
  readonly mem: number;
  /** PSI "some" avg10, percent; a key left out of the RRD rows when undefined. */
  readonly pressureCpu?: number | undefined;
  readonly pressureMem?: number | undefined;
  /**
   * `pve8`: the node has not been upgraded (its RRD rows carry the PVE 8 keys only, no PSI;
   * its guests no `memhost`), as in a cluster in the middle of an upgrade. Default `pve9`.
   */
  readonly format?: 'pve8' | 'pve9';
}

/** A guest (VM or container). */
export interface ServedGuest {
  /** `vm:<vmid>` (qemu) or `ct:<vmid>` (lxc). */
  readonly sid: string;
  readonly node: string;
  readonly running: boolean;
  /** Cores in use (sent as a fraction of `maxcpu`; the integer 0 when idle). */
  readonly cpu: number;
  readonly maxcpu: number;
  /** Bytes in use (guest view). */
  readonly mem: number;
  readonly maxmem: number;
  /** Host-side bytes (PVE 9 qemu; 0 for containers and stopped VMs). Defaults to `mem`. */
  readonly memhost?: number | undefined;
  readonly lock?: string | undefined;
  readonly template?: boolean;
  /** `hastate` of its `/cluster/resources` row; undefined when it is no HA resource. */
  readonly hastate?: string | undefined;
  /** Guest config keys beyond the generated `cores`, `memory`, `scsi0`, `digest` (a local CD-ROM, passthrough, …). */
  readonly config?: Readonly<Record<string, string | number>>;
  /** Local resources the migrate precondition check reports (`hostpci0`, `usb1`, …). */
  readonly localResources?: readonly string[];
}

/** The HA stack's state. */
export interface ServedHa {
  /** The CRM master; undefined: no HA configured (an empty `manager_status`). */
  readonly master: string | undefined;
  /** `manager_status.service_status`. */
  readonly services: readonly ServedService[];
  /** `/cluster/ha/resources` (`resources.cfg`). */
  readonly resources: readonly ServedResource[];
  readonly disarm?: { readonly mode: string; readonly state: string } | undefined;
  /** LRM mode per node (`active` by default, `maintenance`, …). */
  readonly lrmModes?: Readonly<Record<string, string>>;
}

/** One entry of `manager_status.service_status`. */
export interface ServedService {
  readonly sid: string;
  readonly state: string;
  readonly node: string;
  readonly target?: string | undefined;
  /** Changes at every state change. */
  readonly uid: string;
}

/** One HA resource of `resources.cfg`. */
export interface ServedResource {
  readonly sid: string;
  /** Requested state: `started`, `stopped`, `disabled`, `ignored`. */
  readonly state: string;
  /** PVE 9.2's opt-out; sent as `auto-rebalance: 0` when false, left out otherwise. */
  readonly autoRebalance?: boolean;
  /** The HA group (PVE 8). */
  readonly group?: string | undefined;
}

/** An HA rule of `rules.cfg`. */
export type ServedRule = (
  | {
      readonly type: 'node-affinity';
      readonly nodes: readonly { readonly node: string; readonly priority: number }[];
      readonly strict: boolean;
    }
  | { readonly type: 'resource-affinity'; readonly affinity: 'positive' | 'negative' }
) & {
  readonly id: string;
  readonly resources: readonly string[];
  readonly disabled?: boolean;
  /** Feasibility errors (property → messages): the API marks a rule it does not apply this way. */
  readonly errors?: Readonly<Record<string, readonly string[]>>;
};

/** An HA group of `groups.cfg` (PVE 8). */
export interface ServedGroup {
  readonly group: string;
  readonly nodes: readonly { readonly node: string; readonly priority: number }[];
  readonly restricted?: boolean;
  readonly nofailback?: boolean;
}

const KIB = 1024;

/** `9.2.2` → 9. */
export function majorVersion(version: string): number {
  const major = Number.parseInt(version, 10);
  return Number.isFinite(major) ? major : 0;
}

/** `vm:101` → 101. */
export function vmidOfSid(sid: string): number {
  return Number(sid.slice(sid.indexOf(':') + 1));
}

function apiType(sid: string): 'qemu' | 'lxc' {
  return sid.startsWith('ct:') ? 'lxc' : 'qemu';
}

/** `node1:2,node2` as the API writes node lists. */
function nodeList(nodes: readonly { node: string; priority: number }[]): string {
  return nodes.map((n) => (n.priority === 0 ? n.node : `${n.node}:${n.priority}`)).join(',');
}

/** A fraction as the API sends it: the integer 0 when nothing is used. */
function fraction(used: number, max: number): number {
  return used === 0 || max <= 0 ? 0 : used / max;
}

function pve9(cluster: ServedCluster): boolean {
  return majorVersion(cluster.version) >= 9;
}

function nodeOf(cluster: ServedCluster, name: string): ServedNode | undefined {
  return cluster.nodes.find((n) => n.name === name);
}

function guestByVmid(cluster: ServedCluster, vmid: string | undefined): ServedGuest | undefined {
  return cluster.guests.find((g) => String(vmidOfSid(g.sid)) === vmid);
}

/** The reason phrase of pveproxy for a path it has no handler for. */
export function notImplemented(method: string, path: string): FakeReply {
  const text = `Method '${method} /api2/json${path}' not implemented`;
  return { status: 501, statusText: text };
}

/** `GET /version`. */
export function versionReply(cluster: ServedCluster): FakeReply {
  return {
    data: {
      version: cluster.version,
      release: cluster.version.split('.').slice(0, 2).join('.'),
      repoid: 'b9984c6d90a4bd80',
    },
  };
}

/**
 * `GET /cluster/resources`: node rows (usage only while online; `hastate`), two storages per
 * node (`local`, a dir, `shared: 0`; `ceph`, rbd, `shared: 1`), guest rows (cpu as a fraction
 * of the guest's cores, the integer 0 when idle; `memhost` on PVE 9 for guests on PVE 9 nodes,
 * 0 for containers and stopped VMs; `template: 0`; `lock`, `hastate` left out when unset).
 */
export function clusterResourcesReply(cluster: ServedCluster): FakeReply {
  const rows: Record<string, unknown>[] = [];
  for (const n of cluster.nodes) {
    rows.push({
      id: `node/${n.name}`,
      type: 'node',
      node: n.name,
      status: n.online ? 'online' : 'offline',
      level: '',
      'cgroup-mode': 2,
      ...(n.online
        ? {
            cpu: fraction(n.cpu, n.maxcpu),
            maxcpu: n.maxcpu,
            mem: n.mem,
            maxmem: n.maxmem,
            uptime: 86_400,
            disk: 4 * KIB ** 3,
            maxdisk: 64 * KIB ** 3,
            hastate: n.haState,
          }
        : { maxcpu: n.maxcpu, maxmem: n.maxmem }),
    });
    rows.push({
      id: `storage/${n.name}/local`,
      type: 'storage',
      storage: 'local',
      node: n.name,
      shared: 0,
      content: 'iso,vztmpl,backup',
      plugintype: 'dir',
      status: 'available',
    });
    rows.push({
      id: `storage/${n.name}/ceph`,
      type: 'storage',
      storage: 'ceph',
      node: n.name,
      shared: 1,
      content: 'images,rootdir',
      plugintype: 'rbd',
      status: 'available',
    });
  }
  const withMemhost = pve9(cluster);
  for (const g of cluster.guests) {
    const type = apiType(g.sid);
    const vmid = vmidOfSid(g.sid);
    const nodeIs9 = (nodeOf(cluster, g.node)?.format ?? 'pve9') === 'pve9';
    rows.push({
      id: `${type}/${vmid}`,
      type,
      vmid,
      name: `guest${vmid}`,
      node: g.node,
      status: g.running ? 'running' : 'stopped',
      cpu: g.running ? fraction(g.cpu, g.maxcpu) : 0,
      maxcpu: g.maxcpu,
      mem: g.running ? g.mem : 0,
      maxmem: g.maxmem,
      ...(withMemhost && nodeIs9 ? { memhost: type === 'qemu' && g.running ? (g.memhost ?? g.mem) : 0 } : {}),
      disk: 0,
      maxdisk: 32 * KIB ** 3,
      template: g.template ? 1 : 0,
      uptime: g.running ? 3600 : 0,
      ...(g.lock !== undefined ? { lock: g.lock } : {}),
      ...(g.hastate !== undefined ? { hastate: g.hastate } : {}),
    });
  }
  return { data: rows };
}

/** `GET /cluster/status`: the cluster row (`quorate` 0/1) and one row per node (`online`, `local` 0/1). */
export function clusterStatusReply(cluster: ServedCluster): FakeReply {
  return {
    data: [
      {
        type: 'cluster',
        id: 'cluster',
        name: 'poise',
        quorate: cluster.quorate ? 1 : 0,
        nodes: cluster.nodes.length,
        version: 3,
      },
      ...cluster.nodes.map((n, i) => ({
        type: 'node',
        id: `node/${n.name}`,
        name: n.name,
        nodeid: i + 1,
        online: n.online ? 1 : 0,
        local: i === 0 ? 1 : 0,
        ip: `10.0.0.${i + 1}`,
      })),
    ],
  };
}

/**
 * `GET /cluster/ha/status/manager_status`: `manager_status` (`service_status` entries with
 * `running: 1` while started), `quorum` with `quorate` as pveproxy serialises the Perl boolean
 * of `check_cfs_quorum` (spec §3.5): the **string** `"1"` when quorate, `""` when not, `null`
 * when the check failed; and `lrm_status`. No HA (no master): an empty document.
 */
export function managerStatusReply(cluster: ServedCluster): FakeReply {
  const ha = cluster.ha;
  if (ha.master === undefined) return { data: {} };
  const time = Math.floor(cluster.time);
  const services: Record<string, unknown> = {};
  for (const s of ha.services) {
    services[s.sid] = {
      state: s.state,
      node: s.node,
      uid: s.uid,
      ...(s.target !== undefined ? { target: s.target } : {}),
      ...(s.state === 'started' ? { running: 1 } : {}),
    };
  }
  return {
    data: {
      manager_status: {
        master_node: ha.master,
        timestamp: time,
        node_status: Object.fromEntries(cluster.nodes.map((n) => [n.name, n.haState])),
        node_request: Object.fromEntries(
          cluster.nodes.map((n) => [n.name, n.maintenanceRequest ? { maintenance: 1 } : {}]),
        ),
        service_status: services,
        ...(ha.disarm ? { disarm: { mode: ha.disarm.mode, state: ha.disarm.state } } : {}),
      },
      quorum: { node: ha.master, quorate: cluster.quorumUnreadable ? null : cluster.quorate ? '1' : '' },
      lrm_status: Object.fromEntries(
        cluster.nodes.map((n) => [
          n.name,
          {
            mode: ha.lrmModes?.[n.name] ?? 'active',
            state: n.online ? 'active' : 'wait_for_agent_lock',
            timestamp: time,
            results: {},
          },
        ]),
      ),
    },
  };
}

/** `GET /cluster/ha/resources`: `type`, `state`, `digest`, `max_restart`; `auto-rebalance: 0` only when opted out; `group` on PVE 8. */
export function haResourcesReply(cluster: ServedCluster): FakeReply {
  return {
    data: cluster.ha.resources.map((r) => ({
      sid: r.sid,
      type: r.sid.slice(0, r.sid.indexOf(':')),
      state: r.state,
      digest: 'f00dcafe',
      max_restart: 1,
      ...(r.autoRebalance === false ? { 'auto-rebalance': 0 } : {}),
      ...(r.group !== undefined ? { group: r.group } : {}),
    })),
  };
}

/** A group as the rule PVE 9 migrates it to: `ha-group-<name>`, strict = restricted, its resources. */
function groupAsRule(cluster: ServedCluster, g: ServedGroup): ServedRule | undefined {
  const resources = cluster.ha.resources.filter((r) => r.group === g.group).map((r) => r.sid);
  if (resources.length === 0) return undefined;
  return { id: `ha-group-${g.group}`, type: 'node-affinity', nodes: g.nodes, strict: g.restricted === true, resources };
}

/**
 * `GET /cluster/ha/rules` (PVE 9; 501 on PVE 8): lists as comma strings, `strict` left out when
 * 0, `order`, `disable`, `errors`. Groups not yet migrated are already in it as
 * `ha-group-<name>` rules: the GET handler runs `migrate_groups_to_rules` on what it returns
 * (spec §3.5), unless a rule of that id exists.
 */
export function haRulesReply(cluster: ServedCluster): FakeReply {
  if (!pve9(cluster)) return notImplemented('GET', '/cluster/ha/rules');
  const ids = new Set(cluster.rules.map((r) => r.id));
  const migrated = cluster.groups
    .map((g) => groupAsRule(cluster, g))
    .filter((r): r is ServedRule => r !== undefined && !ids.has(r.id));
  return {
    data: [...cluster.rules, ...migrated].map((r, i) => ({
      rule: r.id,
      type: r.type,
      resources: r.resources.join(','),
      ...(r.type === 'node-affinity'
        ? { nodes: nodeList(r.nodes), ...(r.strict ? { strict: 1 } : {}) }
        : { affinity: r.affinity }),
      ...(r.disabled ? { disable: 1 } : {}),
      ...(r.errors ? { errors: r.errors } : {}),
      order: i + 1,
      digest: 'feedface',
    })),
  };
}

/**
 * `GET /cluster/ha/groups`: the groups (`restricted`, `nofailback` left out when 0); on PVE 9
 * without groups (migrated) the 500 "cannot index groups: ha groups have been migrated to
 * rules"; on PVE 9 with groups not yet migrated, the groups (and `/cluster/ha/rules` has them
 * as rules too).
 */
export function haGroupsReply(cluster: ServedCluster): FakeReply {
  if (pve9(cluster) && cluster.groups.length === 0)
    return { status: 500, statusText: 'cannot index groups: ha groups have been migrated to rules' };
  return {
    data: cluster.groups.map((g) => ({
      group: g.group,
      nodes: nodeList(g.nodes),
      type: 'group',
      ...(g.restricted ? { restricted: 1 } : {}),
      ...(g.nofailback ? { nofailback: 1 } : {}),
    })),
  };
}

/** `GET /cluster/options`: `crs` as a property string (or object, `crsAs`), left out when unset. */
export function clusterOptionsReply(cluster: ServedCluster): FakeReply {
  const keys = Object.keys(cluster.crs);
  const crs = cluster.crsAs === 'object' ? { ...cluster.crs } : keys.map((k) => `${k}=${cluster.crs[k]}`).join(',');
  return { data: { keyboard: 'en-us', ...(keys.length > 0 ? { crs } : {}) } };
}

/**
 * `GET /nodes/{node}/rrddata?timeframe=hour`: three complete minute buckets before now and the
 * bucket being filled (only `time` and `loadavg`). A key without a value is left out (PSI when
 * the node reports none, and always on a `pve8` node).
 */
export function nodeRrdReply(cluster: ServedCluster, name: string): FakeReply {
  const n = nodeOf(cluster, name);
  if (n === undefined) return { status: 500, statusText: `no such node '${name}'` };
  const minute = Math.floor(cluster.time / 60) * 60;
  const is9 = (n.format ?? 'pve9') === 'pve9';
  const row = (time: number) => ({
    time,
    cpu: fraction(n.cpu, n.maxcpu),
    maxcpu: n.maxcpu,
    iowait: 0.001,
    loadavg: 0.5,
    memtotal: n.maxmem,
    memused: n.mem,
    ...(is9 ? { memavailable: Math.max(0, n.maxmem - n.mem) } : {}),
    ...(is9 && n.pressureCpu !== undefined ? { pressurecpusome: n.pressureCpu } : {}),
    ...(is9 && n.pressureMem !== undefined ? { pressurememorysome: n.pressureMem } : {}),
  });
  if (!n.online) return { data: [{ time: minute - 60 }, { time: minute }] };
  return { data: [row(minute - 180), row(minute - 120), row(minute - 60), { time: minute, loadavg: 0.5 }] };
}

/**
 * `GET /nodes/{node}/{type}/{vmid}/config`: `cores` (integer), `memory` (MiB as a **string**,
 * as PVE 9 sends it), a shared `scsi0` disk, `digest`, and the guest's own `config` keys. An
 * unknown guest is the 500 "Configuration file … does not exist".
 */
export function guestConfigReply(cluster: ServedCluster, request: FakeRequest): FakeReply {
  const g = guestByVmid(cluster, request.params.vmid);
  if (!g)
    return {
      status: 500,
      statusText: `Configuration file 'nodes/${request.params.node}/qemu-server/${request.params.vmid}.conf' does not exist`,
    };
  const disk =
    apiType(g.sid) === 'lxc'
      ? { rootfs: `ceph:vm-${vmidOfSid(g.sid)}-disk-0,size=8G` }
      : { scsi0: `ceph:vm-${vmidOfSid(g.sid)}-disk-0,size=32G` };
  return {
    data: {
      cores: g.maxcpu,
      memory: String(Math.round(g.maxmem / KIB / KIB)),
      ...disk,
      digest: 'c0ffee',
      ...(g.config ?? {}),
    },
  };
}

/**
 * `GET /nodes/{node}/{type}/{vmid}/migrate[?target=]`: `running` 0/1, every other node
 * allowed, `local_resources` from the guest; containers use the hyphenated `allowed-nodes` /
 * `not-allowed-nodes` and have no `local_disks`.
 */
export function migratePrecheckReply(cluster: ServedCluster, request: FakeRequest): FakeReply {
  const g = guestByVmid(cluster, request.params.vmid);
  if (!g)
    return {
      status: 500,
      statusText: `Configuration file 'nodes/${request.params.node}/qemu-server/${request.params.vmid}.conf' does not exist`,
    };
  const others = cluster.nodes.filter((n) => n.name !== g.node).map((n) => n.name);
  if (request.params.type === 'lxc')
    return { data: { running: g.running ? 1 : 0, 'allowed-nodes': others, 'not-allowed-nodes': {} } };
  return {
    data: {
      running: g.running ? 1 : 0,
      allowed_nodes: others,
      not_allowed_nodes: {},
      local_disks: [],
      local_resources: [...(g.localResources ?? [])],
      'mapped-resources': [],
      'mapped-resource-info': {},
      'has-dbus-vmstate': 0,
    },
  };
}

/**
 * The reply of an accepted HA migrate/relocate: PVE 9 `{sid, requested-node,
 * comigrated-resources?}`, PVE 8 `null` (the call only queues a command for the CRM).
 */
export function haMotionReply(
  cluster: ServedCluster,
  sid: string,
  node: string,
  comigrated: readonly string[] = [],
): FakeReply {
  if (!pve9(cluster)) return { data: null };
  return {
    data: {
      sid,
      'requested-node': node,
      ...(comigrated.length > 0 ? { 'comigrated-resources': [...comigrated] } : {}),
    },
  };
}

/** An HA migrate/relocate refused for a negative-affinity partner (PVE 9: a reply with `blocking-resources`, nothing queued). */
export function haMotionBlockedReply(
  cluster: ServedCluster,
  sid: string,
  node: string,
  blocking: readonly string[],
): FakeReply {
  if (!pve9(cluster))
    return {
      status: 500,
      statusText: `service '${sid}' cannot be moved to '${node}': blocked by ${blocking.join(', ')}`,
    };
  return {
    data: {
      sid,
      'requested-node': node,
      'blocking-resources': blocking.map((b) => ({ sid: b, cause: 'resource-affinity' })),
    },
  };
}

/**
 * What the HA migrate/relocate endpoint refuses before it queues anything, as pveproxy sends
 * a handler's `die` (HTTP 500, the message as reason phrase and `message`; spec §4.1): a
 * target that is no cluster node, a resource HA does not manage, a resource in the error state.
 * `undefined` when none applies (the command may be queued).
 */
export function haMotionRefusal(cluster: ServedCluster, sid: string, node: string): FakeReply | undefined {
  if (!cluster.nodes.some((n) => n.name === node)) return { status: 500, statusText: `no such cluster node '${node}'` };
  if (!cluster.ha.resources.some((r) => r.sid === sid))
    return { status: 500, statusText: `service '${sid}' is not HA managed` };
  const service = cluster.ha.services.find((s) => s.sid === sid);
  if (service?.state === 'error')
    return { status: 500, statusText: `service '${sid}' in error state, must be disabled and fixed first` };
  return undefined;
}

/** A 403 as pveproxy sends it for a missing privilege (`Permission check failed (<path>, <privilege>)`). */
export function permissionDenied(path: string, privilege: string): FakeReply {
  return { status: 403, statusText: `Permission check failed (${path}, ${privilege})` };
}

/** `/vms/101` → `['/', '/vms', '/vms/101']`. */
function aclLevels(path: string): string[] {
  const parts = path.split('/').filter((p) => p !== '');
  return ['/', ...parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`)];
}

/**
 * The token's effective privileges on `path`, privilege → propagate, as
 * `PVE::RPCEnvironment::permissions` walks the ACL tree from `/` down: an entry on the path
 * itself, or a propagating one above it, replaces what was inherited; a non-propagating entry
 * above the path does not reach it.
 */
export function effectivePrivileges(cluster: ServedCluster, path: string): Map<string, boolean> {
  const acl = cluster.acl ?? [{ path: '/', privileges: SERVED_PRIVILEGES, propagate: true }];
  let held = new Map<string, boolean>();
  for (const level of aclLevels(path)) {
    const entries = acl.filter((e) => e.path === level && (e.propagate || level === path));
    if (entries.length === 0) continue;
    held = new Map();
    for (const e of entries) for (const p of e.privileges) held.set(p, held.get(p) === true || e.propagate);
  }
  return held;
}

/**
 * `GET /access/permissions[?path=]` for the calling token: with `path`, `{<path>: {<priv>: 0|1}}`
 * (the propagate flag; an empty map when it holds nothing there); without, every path with an
 * ACL entry and `/`, each with its effective privileges (pve-access-control
 * `API2/AccessControl.pm` `permissions`). Another user's (`userid`) needs `Sys.Audit` on
 * `/access`, which a balancing token does not hold: 403.
 */
export function permissionsReply(cluster: ServedCluster, request: FakeRequest): FakeReply {
  if (request.query.get('userid')) return permissionDenied('/access', 'Sys.Audit');
  const path = request.query.get('path');
  const paths = path ? [path] : [...new Set(['/', ...(cluster.acl ?? []).map((e) => e.path)])].sort();
  const data: Record<string, Record<string, number>> = {};
  for (const p of paths) {
    const held = effectivePrivileges(cluster, p);
    if (path || held.size > 0) data[p] = Object.fromEntries([...held].map(([k, v]) => [k, v ? 1 : 0]));
  }
  return { data };
}

/** The 403 of an action whose privilege the token lacks (checked before the handler runs), or `undefined`. */
export function privilegeRefusal(cluster: ServedCluster, path: string, privilege: string): FakeReply | undefined {
  return effectivePrivileges(cluster, path).has(privilege) ? undefined : permissionDenied(path, privilege);
}

/**
 * The read routes of the API a balancing daemon uses, answered from `read()` at each request:
 * `GET /version`, `/cluster/resources`, `/cluster/status`, `/cluster/ha/status/manager_status`,
 * `/cluster/ha/resources`, `/cluster/ha/rules`, `/cluster/ha/groups`, `/cluster/options`,
 * `/nodes/{node}/rrddata`, `/nodes/{node}/{type}/{vmid}/config`, `GET
 * /nodes/{node}/{type}/{vmid}/migrate`, `GET /access/permissions`. Add the POST routes (and tasks) of the environment
 * behind them; pass the whole to `startFakePveServer`.
 */
export function clusterReadRoutes(read: () => ServedCluster): Record<string, FakeHandler> {
  return {
    'GET /version': () => versionReply(read()),
    'GET /cluster/resources': () => clusterResourcesReply(read()),
    'GET /cluster/status': () => clusterStatusReply(read()),
    'GET /cluster/ha/status/manager_status': () => managerStatusReply(read()),
    'GET /cluster/ha/resources': () => haResourcesReply(read()),
    'GET /cluster/ha/rules': () => haRulesReply(read()),
    'GET /cluster/ha/groups': () => haGroupsReply(read()),
    'GET /cluster/options': () => clusterOptionsReply(read()),
    'GET /nodes/{node}/rrddata': (req) => nodeRrdReply(read(), req.params.node!),
    'GET /nodes/{node}/{type}/{vmid}/config': (req) => guestConfigReply(read(), req),
    'GET /nodes/{node}/{type}/{vmid}/migrate': (req) => migratePrecheckReply(read(), req),
    'GET /access/permissions': (req) => permissionsReply(read(), req),
  };
}
