/**
 * zod schemas of the replies (the `data` member), each turning the wire shape with its quirks into
 * the typed result of `types.ts`. Exported for reuse (e.g. a simulator checking what it serves):
 * `schema.safeParse(data)` accepts exactly what the client accepts.
 */
import { z } from 'zod';
import { migrationBlockers } from './guest-config';
import { parseDaemonStatus } from './ha-text';
import { normaliseFingerprint } from './tls';
import type {
  CertificateInfo,
  ClusterGuestResource,
  ClusterNodeResource,
  ClusterOptions,
  ClusterOtherResource,
  ClusterResource,
  ClusterStatusEntry,
  ClusterStorageResource,
  CrsOptions,
  GuestConfig,
  GuestPressure,
  GuestRrdPoint,
  GuestStatus,
  HaDaemonEntry,
  HaGroup,
  HaManagerStatus,
  HaResource,
  HaRule,
  HaServiceEntry,
  HaStatusCurrent,
  MigratePrecheck,
  NodeGuest,
  NodePriority,
  NodeRrdPoint,
  NodeStatus,
  PveVersion,
  TaskListEntry,
  TaskStatus,
  Upid,
} from './types';
import { parseUpid } from './upid';
import {
  arr,
  bool01,
  count,
  int,
  list,
  mapOf,
  name,
  nonNeg,
  num,
  obj,
  opt,
  parsePropertyString,
  percent,
  perlBool,
  text,
} from './wire';

type Ctx = z.RefinementCtx;

/** Re-raise the issues of a nested parse at `path` (relative to the current value). */
function forward(ctx: Ctx, issues: readonly z.core.$ZodIssue[], path: PropertyKey[] = []): typeof z.NEVER {
  for (const issue of issues)
    ctx.addIssue({ code: 'custom', message: issue.message, path: [...path, ...issue.path] as (string | number)[] });
  return z.NEVER;
}

/**
 * An object whose keys may arrive hyphenated or underscored (`allowed_nodes` / `allowed-nodes`):
 * each key of `shape` that contains `-` or `_` is also read under the other spelling. Paths in
 * errors name the spelling of `shape`.
 */
export function objAliased<S extends z.ZodRawShape>(shape: S) {
  const aliases: [string, string][] = [];
  for (const key of Object.keys(shape)) {
    if (key.includes('-')) aliases.push([key, key.replace(/-/g, '_')]);
    else if (key.includes('_')) aliases.push([key, key.replace(/_/g, '-')]);
  }
  return z.preprocess((value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const rec = value as Record<string, unknown>;
    if (!aliases.some(([canonical, alias]) => !(canonical in rec) && alias in rec)) return value;
    const copy: Record<string, unknown> = { ...rec };
    for (const [canonical, alias] of aliases) if (!(canonical in copy) && alias in copy) copy[canonical] = copy[alias];
    return copy;
  }, obj(shape));
}

// ---------------------------------------------------------------- /version

/** `GET /version`. */
export const versionSchema = obj({ version: name, release: opt(text), repoid: opt(text) }).transform(
  (v, ctx): PveVersion => {
    const m = /^(\d+)\.(\d+)/.exec(v.release ?? v.version) ?? /^(\d+)\.(\d+)/.exec(v.version);
    if (!m) {
      ctx.addIssue({ code: 'custom', message: 'expected a version like "9.2.2"', path: ['version'] });
      return z.NEVER;
    }
    return {
      version: v.version,
      release: v.release ?? `${m[1]}.${m[2]}`,
      repoId: v.repoid,
      major: Number(m[1]),
      minor: Number(m[2]),
    };
  },
);

// ---------------------------------------------------------------- /cluster/resources

const nodeRowSchema = objAliased({
  id: name,
  node: name,
  status: text,
  cpu: opt(nonNeg),
  maxcpu: opt(nonNeg),
  mem: opt(nonNeg),
  maxmem: opt(nonNeg),
  disk: opt(nonNeg),
  maxdisk: opt(nonNeg),
  uptime: opt(nonNeg),
  hastate: opt(text),
}).transform(
  (r): ClusterNodeResource => ({
    kind: 'node',
    id: r.id,
    node: r.node,
    status: r.status,
    online: r.status === 'online',
    cpuUsage: r.cpu,
    maxCpus: r.maxcpu,
    memBytes: r.mem,
    maxMemBytes: r.maxmem,
    diskBytes: r.disk,
    maxDiskBytes: r.maxdisk,
    uptimeSeconds: r.uptime,
    haState: r.hastate,
  }),
);

const guestRowSchema = obj({
  type: z.enum(['qemu', 'lxc']),
  id: name,
  vmid: count,
  node: name,
  status: text,
  name: opt(text),
  cpu: opt(nonNeg),
  maxcpu: nonNeg,
  mem: opt(nonNeg),
  maxmem: nonNeg,
  memhost: opt(nonNeg),
  disk: opt(nonNeg),
  maxdisk: opt(nonNeg),
  netin: opt(nonNeg),
  netout: opt(nonNeg),
  uptime: opt(nonNeg),
  template: opt(bool01),
  tags: opt(list),
  lock: opt(text),
  pool: opt(text),
  hastate: opt(text),
}).transform(
  (r): ClusterGuestResource => ({
    kind: 'guest',
    type: r.type,
    id: r.id,
    vmid: r.vmid,
    sid: `${r.type === 'qemu' ? 'vm' : 'ct'}:${r.vmid}`,
    node: r.node,
    name: r.name,
    status: r.status,
    running: r.status === 'running',
    cpuUsage: r.cpu,
    maxCpus: r.maxcpu,
    memBytes: r.mem,
    maxMemBytes: r.maxmem,
    memHostBytes: r.memhost,
    diskBytes: r.disk,
    maxDiskBytes: r.maxdisk,
    netInBytes: r.netin,
    netOutBytes: r.netout,
    uptimeSeconds: r.uptime,
    template: r.template,
    tags: r.tags ?? [],
    lock: r.lock,
    pool: r.pool,
    haState: r.hastate,
  }),
);

const storageRowSchema = obj({
  id: name,
  storage: name,
  node: name,
  status: opt(text),
  shared: opt(bool01),
  content: opt(list),
  plugintype: opt(text),
}).transform(
  (r): ClusterStorageResource => ({
    kind: 'storage',
    id: r.id,
    storage: r.storage,
    node: r.node,
    status: r.status,
    shared: r.shared,
    content: r.content ?? [],
    pluginType: r.plugintype,
  }),
);

const otherRowSchema = obj({ id: name, type: name }).transform(
  (r): ClusterOtherResource => ({ kind: 'other', type: r.type, id: r.id }),
);

/** One row of `/cluster/resources`, validated by its `type`. */
export const clusterResourceSchema = z.unknown().transform((row, ctx): ClusterResource => {
  const type = row !== null && typeof row === 'object' ? (row as { type?: unknown }).type : undefined;
  if (typeof type !== 'string') {
    ctx.addIssue({
      code: 'custom',
      message: 'expected a row type string',
      path: row !== null && typeof row === 'object' ? ['type'] : [],
    });
    return z.NEVER;
  }
  const schema =
    type === 'node'
      ? nodeRowSchema
      : type === 'qemu' || type === 'lxc'
        ? guestRowSchema
        : type === 'storage'
          ? storageRowSchema
          : otherRowSchema;
  const parsed = (schema as z.ZodType<ClusterResource>).safeParse(row);
  return parsed.success ? parsed.data : forward(ctx, parsed.error.issues);
});

/** `GET /cluster/resources[?type=…]`. */
export const clusterResourcesSchema = arr(clusterResourceSchema);

// ---------------------------------------------------------------- /cluster/status

const clusterStatusRow = z.unknown().transform((row, ctx): ClusterStatusEntry | undefined => {
  const type = row !== null && typeof row === 'object' ? (row as { type?: unknown }).type : undefined;
  if (type === 'cluster') {
    const p = obj({ name: name, quorate: bool01, nodes: opt(count), version: opt(int) }).safeParse(row);
    return p.success ? { kind: 'cluster', ...p.data } : forward(ctx, p.error.issues);
  }
  if (type === 'node') {
    const p = obj({ name: name, nodeid: opt(int), ip: opt(text), online: bool01, local: opt(bool01) }).safeParse(row);
    return p.success
      ? {
          kind: 'node',
          name: p.data.name,
          nodeId: p.data.nodeid,
          ip: p.data.ip,
          online: p.data.online,
          local: p.data.local ?? false,
        }
      : forward(ctx, p.error.issues);
  }
  return undefined;
});

/** `GET /cluster/status` (rows of other types are dropped). */
export const clusterStatusSchema = arr(clusterStatusRow).transform((rows) =>
  rows.filter((r): r is ClusterStatusEntry => r !== undefined),
);

// ---------------------------------------------------------------- /nodes/{node}/status

const bytesTriple = obj({ total: nonNeg, used: nonNeg, free: nonNeg });

/** `GET /nodes/{node}/status`. */
export const nodeStatusSchema = obj({
  cpu: nonNeg,
  wait: opt(nonNeg),
  loadavg: opt(arr(num)),
  memory: obj({ total: nonNeg, used: nonNeg, free: nonNeg, available: opt(nonNeg) }),
  swap: opt(bytesTriple),
  rootfs: opt(bytesTriple),
  cpuinfo: obj({ cpus: count, cores: opt(count), sockets: opt(count), model: opt(text), mhz: opt(num) }),
  uptime: nonNeg,
  pveversion: opt(text),
  kversion: opt(text),
}).transform(
  (s): NodeStatus => ({
    cpuUsage: s.cpu,
    ioWait: s.wait,
    loadAverage: s.loadavg,
    memory: {
      totalBytes: s.memory.total,
      usedBytes: s.memory.used,
      freeBytes: s.memory.free,
      availableBytes: s.memory.available,
    },
    swap: s.swap && { totalBytes: s.swap.total, usedBytes: s.swap.used, freeBytes: s.swap.free },
    rootfs: s.rootfs && { totalBytes: s.rootfs.total, usedBytes: s.rootfs.used, freeBytes: s.rootfs.free },
    cpuInfo: {
      cpus: s.cpuinfo.cpus,
      cores: s.cpuinfo.cores,
      sockets: s.cpuinfo.sockets,
      model: s.cpuinfo.model,
      mhz: s.cpuinfo.mhz,
    },
    uptimeSeconds: s.uptime,
    pveVersion: s.pveversion,
    kernelVersion: s.kversion,
  }),
);

// ---------------------------------------------------------------- rrddata

const pressureShape = {
  pressurecpusome: opt(percent),
  pressurecpufull: opt(percent),
  pressureiosome: opt(percent),
  pressureiofull: opt(percent),
  pressurememorysome: opt(percent),
  pressurememoryfull: opt(percent),
};

function guestPressure(r: { [K in keyof typeof pressureShape]: number | undefined }): GuestPressure {
  return {
    cpuSome: r.pressurecpusome,
    cpuFull: r.pressurecpufull,
    ioSome: r.pressureiosome,
    ioFull: r.pressureiofull,
    memorySome: r.pressurememorysome,
    memoryFull: r.pressurememoryfull,
  };
}

/** `GET /nodes/{node}/rrddata`: one row per bucket; undefined buckets omit keys. */
export const nodeRrdSchema = arr(
  obj({
    time: count,
    cpu: opt(nonNeg),
    maxcpu: opt(nonNeg),
    iowait: opt(nonNeg),
    loadavg: opt(nonNeg),
    memtotal: opt(nonNeg),
    memused: opt(nonNeg),
    memavailable: opt(nonNeg),
    arcsize: opt(nonNeg),
    swaptotal: opt(nonNeg),
    swapused: opt(nonNeg),
    roottotal: opt(nonNeg),
    rootused: opt(nonNeg),
    netin: opt(nonNeg),
    netout: opt(nonNeg),
    ...pressureShape,
  }).transform((r): NodeRrdPoint => {
    const { cpuFull: _noNodeCpuFull, ...pressure } = guestPressure(r);
    return {
      time: r.time,
      cpuUsage: r.cpu,
      maxCpus: r.maxcpu,
      ioWait: r.iowait,
      loadAverage: r.loadavg,
      memTotalBytes: r.memtotal,
      memUsedBytes: r.memused,
      memAvailableBytes: r.memavailable,
      arcSizeBytes: r.arcsize,
      swapTotalBytes: r.swaptotal,
      swapUsedBytes: r.swapused,
      rootTotalBytes: r.roottotal,
      rootUsedBytes: r.rootused,
      netInBytesPerSecond: r.netin,
      netOutBytesPerSecond: r.netout,
      pressure,
    };
  }),
);

/** `GET /nodes/{node}/{qemu|lxc}/{vmid}/rrddata`. */
export const guestRrdSchema = arr(
  obj({
    time: count,
    cpu: opt(nonNeg),
    maxcpu: opt(nonNeg),
    mem: opt(nonNeg),
    maxmem: opt(nonNeg),
    memhost: opt(nonNeg),
    disk: opt(nonNeg),
    maxdisk: opt(nonNeg),
    netin: opt(nonNeg),
    netout: opt(nonNeg),
    diskread: opt(nonNeg),
    diskwrite: opt(nonNeg),
    ...pressureShape,
  }).transform(
    (r): GuestRrdPoint => ({
      time: r.time,
      cpuUsage: r.cpu,
      maxCpus: r.maxcpu,
      memBytes: r.mem,
      maxMemBytes: r.maxmem,
      memHostBytes: r.memhost,
      diskBytes: r.disk,
      maxDiskBytes: r.maxdisk,
      netInBytesPerSecond: r.netin,
      netOutBytesPerSecond: r.netout,
      diskReadBytesPerSecond: r.diskread,
      diskWriteBytesPerSecond: r.diskwrite,
      pressure: guestPressure(r),
    }),
  ),
);

// ---------------------------------------------------------------- /nodes/{node}/qemu, /lxc

/** `GET /nodes/{node}/qemu` or `/lxc` for one node and type; the rows become {@link NodeGuest}. */
export function nodeGuestsSchema(type: 'qemu' | 'lxc', node: string) {
  return arr(guestRowOf(type, node));
}

/** `GET /nodes/{node}/{qemu|lxc}/{vmid}/status/current` for one guest. */
export function guestStatusSchema(type: 'qemu' | 'lxc', node: string, vmid: number) {
  return z
    .preprocess(
      (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) && !('vmid' in v) ? { ...v, vmid } : v),
      obj({ ha: opt(obj({ managed: opt(bool01) })) }).and(guestRowOf(type, node)),
    )
    .transform(({ ha, ...guest }): GuestStatus => ({ ...guest, haManaged: ha?.managed }));
}

function guestRowOf(type: 'qemu' | 'lxc', node: string) {
  return obj({
    vmid: count,
    name: opt(text),
    status: text,
    qmpstatus: opt(text),
    cpu: opt(nonNeg),
    cpus: opt(nonNeg),
    mem: opt(nonNeg),
    maxmem: opt(nonNeg),
    memhost: opt(nonNeg),
    lock: opt(text),
    tags: opt(list),
    template: opt(bool01),
    uptime: opt(nonNeg),
    ...pressureShape,
  }).transform(
    (r): NodeGuest => ({
      type,
      vmid: r.vmid,
      sid: `${type === 'qemu' ? 'vm' : 'ct'}:${r.vmid}`,
      node,
      name: r.name,
      status: r.status,
      running: r.status === 'running',
      qmpStatus: r.qmpstatus,
      cpuUsage: r.cpu,
      cpus: r.cpus,
      memBytes: r.mem,
      maxMemBytes: r.maxmem,
      memHostBytes: r.memhost,
      pressure: guestPressure(r),
      lock: r.lock,
      tags: r.tags ?? [],
      template: r.template,
      uptimeSeconds: r.uptime,
    }),
  );
}

// ---------------------------------------------------------------- HA

const serviceStatusSchema = objAliased({
  state: name,
  node: name,
  target: opt(text),
  uid: opt(text),
  running: opt(bool01),
  failed_nodes: opt(arr(text)),
  maintenance_node: opt(text),
});

/** `GET /cluster/ha/status/manager_status`. */
export const haManagerStatusSchema = obj({
  manager_status: opt(
    objAliased({
      master_node: opt(name),
      timestamp: opt(nonNeg),
      node_status: opt(mapOf(text)),
      node_request: opt(mapOf(obj({ maintenance: opt(bool01) }))),
      service_status: opt(mapOf(serviceStatusSchema)),
      disarm: opt(obj({ mode: opt(text), state: opt(text) })),
    }),
  ),
  quorum: opt(obj({ node: opt(text), quorate: opt(perlBool) })),
  lrm_status: opt(
    mapOf(
      obj({
        mode: opt(text),
        state: opt(text),
        timestamp: opt(nonNeg),
        results: opt(mapOf(objAliased({ sid: opt(text), state: opt(text), exit_code: opt(int) }))),
      }),
    ),
  ),
}).transform((s): HaManagerStatus => {
  const ms = s.manager_status;
  const services = ms?.service_status;
  return {
    masterNode: ms?.master_node,
    timestamp: ms?.timestamp,
    nodeStatus: ms?.node_status ?? new Map(),
    nodeRequest: new Map([...(ms?.node_request ?? [])].map(([k, v]) => [k, { maintenance: v.maintenance ?? false }])),
    serviceStatus:
      services === undefined
        ? ms?.master_node === undefined
          ? new Map()
          : undefined
        : new Map(
            [...services].map(([sid, v]) => [
              sid,
              {
                state: v.state,
                node: v.node,
                target: v.target,
                uid: v.uid,
                running: v.running,
                failedNodes: v.failed_nodes,
                maintenanceNode: v.maintenance_node,
              },
            ]),
          ),
    disarm: ms?.disarm && { mode: ms.disarm.mode, state: ms.disarm.state },
    quorum: s.quorum && { node: s.quorum.node, quorate: s.quorum.quorate },
    lrmStatus: new Map(
      [...(s.lrm_status ?? [])].map(([n, l]) => [
        n,
        {
          mode: l.mode,
          state: l.state,
          timestamp: l.timestamp,
          results: new Map(
            [...(l.results ?? [])].map(([uid, r]) => [uid, { sid: r.sid, state: r.state, exitCode: r.exit_code }]),
          ),
        },
      ]),
    ),
  };
});

const daemonRow = obj({ node: text, status: text, timestamp: opt(nonNeg) }).transform((r): HaDaemonEntry => {
  const { state, watchdog } = parseDaemonStatus(r.node, r.status);
  return { node: r.node, state, watchdog, timestamp: r.timestamp, statusText: r.status };
});

const serviceRow = objAliased({
  sid: name,
  node: text,
  state: opt(text),
  crm_state: opt(text),
  request_state: opt(text),
  failback: opt(bool01),
  max_restart: opt(count),
  max_relocate: opt(count),
  'auto-rebalance': opt(bool01),
  comment: opt(text),
}).transform(
  (r): HaServiceEntry => ({
    sid: r.sid,
    node: r.node,
    state: r.state,
    crmState: r.crm_state,
    requestState: r.request_state,
    failback: r.failback,
    maxRestart: r.max_restart,
    maxRelocate: r.max_relocate,
    autoRebalance: r['auto-rebalance'],
    comment: r.comment,
  }),
);

type CurrentRow =
  | { t: 'quorum'; v: { node: string; quorate: boolean } }
  | { t: 'master' | 'lrm'; v: HaDaemonEntry }
  | { t: 'service'; v: HaServiceEntry }
  | { t: 'fencing'; v: { node: string | undefined; armedState: string | undefined; resourceMode: string | undefined } }
  | { t: 'other' };

const currentRow = z.unknown().transform((row, ctx): CurrentRow => {
  const type = row !== null && typeof row === 'object' ? (row as { type?: unknown }).type : undefined;
  let parsed: z.ZodSafeParseResult<unknown>;
  switch (type) {
    case 'quorum':
      parsed = obj({ node: text, quorate: bool01 }).safeParse(row);
      return parsed.success
        ? { t: 'quorum', v: parsed.data as { node: string; quorate: boolean } }
        : forward(ctx, parsed.error.issues);
    case 'master':
    case 'lrm':
      parsed = daemonRow.safeParse(row);
      return parsed.success ? { t: type, v: parsed.data as HaDaemonEntry } : forward(ctx, parsed.error.issues);
    case 'service':
      parsed = serviceRow.safeParse(row);
      return parsed.success ? { t: 'service', v: parsed.data as HaServiceEntry } : forward(ctx, parsed.error.issues);
    case 'fencing': {
      const p = objAliased({ node: opt(text), 'armed-state': opt(text), resource_mode: opt(text) }).safeParse(row);
      return p.success
        ? {
            t: 'fencing',
            v: { node: p.data.node, armedState: p.data['armed-state'], resourceMode: p.data.resource_mode },
          }
        : forward(ctx, p.error.issues);
    }
    default:
      if (typeof type !== 'string') {
        ctx.addIssue({ code: 'custom', message: 'expected a row type string', path: ['type'] });
        return z.NEVER;
      }
      return { t: 'other' };
  }
});

/** `GET /cluster/ha/status/current`. */
export const haStatusCurrentSchema = arr(currentRow).transform((rows): HaStatusCurrent => {
  const out: HaStatusCurrent = { quorum: undefined, master: undefined, fencing: undefined, lrm: [], services: [] };
  for (const row of rows) {
    if (row.t === 'quorum') out.quorum = row.v;
    else if (row.t === 'master') out.master = row.v;
    else if (row.t === 'fencing') out.fencing = row.v;
    else if (row.t === 'lrm') out.lrm.push(row.v);
    else if (row.t === 'service') out.services.push(row.v);
  }
  return out;
});

const errorsMap = z
  .record(z.string(), z.union([z.string(), z.array(text)], { error: 'expected a message or a list of messages' }), {
    error: 'expected an object',
  })
  .transform((rec) => new Map(Object.entries(rec).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])));

/** `GET /cluster/ha/resources`. */
export const haResourcesSchema = arr(
  objAliased({
    sid: name,
    type: opt(text),
    state: opt(text),
    failback: opt(bool01),
    max_restart: opt(count),
    max_relocate: opt(count),
    'auto-rebalance': opt(bool01),
    group: opt(text),
    comment: opt(text),
  }).transform(
    (r): HaResource => ({
      sid: r.sid,
      type: r.type ?? r.sid.split(':')[0]!,
      state: r.state === undefined || r.state === 'enabled' ? 'started' : r.state,
      failback: r.failback ?? true,
      maxRestart: r.max_restart ?? 1,
      maxRelocate: r.max_relocate ?? 1,
      autoRebalance: r['auto-rebalance'] ?? true,
      group: r.group,
      comment: r.comment,
    }),
  ),
);

/** A node list `node1:2,node2` (priority default 0), as a string or an array. */
export const nodePriorityList = list.transform((items, ctx): NodePriority[] => {
  const out: NodePriority[] = [];
  for (const item of items) {
    const m = /^([^:\s]+)(?::(-?\d+))?$/.exec(item);
    if (!m) {
      ctx.addIssue({ code: 'custom', message: `expected 'node[:priority]' entries, got '${item}'` });
      return z.NEVER;
    }
    out.push({ node: m[1]!, priority: m[2] === undefined ? 0 : Number(m[2]) });
  }
  return out;
});

/** `GET /cluster/ha/rules` (PVE 9). */
export const haRulesSchema = arr(
  obj({
    rule: name,
    type: name,
    resources: list,
    nodes: opt(nodePriorityList),
    strict: opt(bool01),
    affinity: opt(text),
    disable: opt(bool01),
    comment: opt(text),
    order: opt(int),
    errors: opt(errorsMap),
  }).transform((r): HaRule => {
    const errors = r.errors ?? new Map<string, string[]>();
    const disabled = r.disable ?? false;
    return {
      rule: r.rule,
      type: r.type,
      resources: r.resources,
      nodes: r.nodes,
      strict: r.strict ?? false,
      affinity: r.affinity,
      disabled,
      comment: r.comment,
      order: r.order,
      errors,
      applied: !disabled && errors.size === 0,
    };
  }),
);

/** `GET /cluster/ha/groups` (PVE 8). */
export const haGroupsSchema = arr(
  obj({
    group: name,
    nodes: nodePriorityList,
    restricted: opt(bool01),
    nofailback: opt(bool01),
    comment: opt(text),
  }).transform(
    (g): HaGroup => ({
      group: g.group,
      nodes: g.nodes,
      restricted: g.restricted ?? false,
      nofailback: g.nofailback ?? false,
      comment: g.comment,
    }),
  ),
);

// ---------------------------------------------------------------- /cluster/options

const crsObjectSchema = objAliased({
  ha: opt(text),
  'ha-rebalance-on-start': opt(bool01),
  'ha-auto-rebalance': opt(bool01),
  'ha-auto-rebalance-threshold': opt(nonNeg),
  'ha-auto-rebalance-method': opt(text),
  'ha-auto-rebalance-hold-duration': opt(count),
  'ha-auto-rebalance-margin': opt(nonNeg),
}).transform(
  (c): CrsOptions => ({
    ha: c.ha,
    haRebalanceOnStart: c['ha-rebalance-on-start'],
    haAutoRebalance: c['ha-auto-rebalance'],
    haAutoRebalanceThreshold: c['ha-auto-rebalance-threshold'],
    haAutoRebalanceMethod: c['ha-auto-rebalance-method'],
    haAutoRebalanceHoldDuration: c['ha-auto-rebalance-hold-duration'],
    haAutoRebalanceMargin: c['ha-auto-rebalance-margin'],
  }),
);

/** The `crs` value alone: a parsed object (what the API sends) or a property string (`ha=static,ha-rebalance-on-start=1`). */
export const crsSchema = z
  .union([z.string(), z.record(z.string(), z.unknown())], { error: 'expected a property string or an object' })
  .transform((value, ctx): CrsOptions => {
    let object: unknown = value;
    if (typeof value === 'string') {
      const parsed = parsePropertyString(value, 'ha');
      if (!parsed) {
        ctx.addIssue({
          code: 'custom',
          message: `expected a property string like 'ha=static,ha-rebalance-on-start=1', got '${value}'`,
        });
        return z.NEVER;
      }
      object = Object.fromEntries(parsed);
    }
    const p = crsObjectSchema.safeParse(object);
    return p.success ? p.data : forward(ctx, p.error.issues);
  });

const NO_CRS: CrsOptions = {
  ha: undefined,
  haRebalanceOnStart: undefined,
  haAutoRebalance: undefined,
  haAutoRebalanceThreshold: undefined,
  haAutoRebalanceMethod: undefined,
  haAutoRebalanceHoldDuration: undefined,
  haAutoRebalanceMargin: undefined,
};

/** `GET /cluster/options` (unset options are omitted by the server). */
export const clusterOptionsSchema = objAliased({ crs: opt(crsSchema), max_workers: opt(count) }).transform(
  (o): ClusterOptions => ({ crs: o.crs ?? { ...NO_CRS }, crsSet: o.crs !== undefined, maxWorkers: o.max_workers }),
);

// ---------------------------------------------------------------- guest config and migration

/** `GET /nodes/{node}/{qemu|lxc}/{vmid}/config` for one guest. */
export function guestConfigSchema(type: 'qemu' | 'lxc', vmid: number) {
  return z
    .record(z.string(), z.union([z.string(), z.number()], { error: 'expected a string or a number' }), {
      error: 'expected an object',
    })
    .transform((rec, ctx): GuestConfig => {
      const entries = new Map(Object.entries(rec).map(([k, v]) => [k, String(v)]));
      const intKey = (key: string): number | undefined => {
        const v = entries.get(key);
        if (v === undefined) return undefined;
        const p = count.safeParse(v);
        if (!p.success) ctx.addIssue({ code: 'custom', message: 'expected an integer ≥ 0', path: [key] });
        return p.success ? p.data : undefined;
      };
      let memoryMiB: number | undefined;
      const memory = entries.get('memory');
      if (memory !== undefined) {
        const current = parsePropertyString(memory, 'current')?.get('current');
        const p = count.safeParse(current);
        if (p.success) memoryMiB = p.data;
        else ctx.addIssue({ code: 'custom', message: "expected MiB as a number or 'current=<MiB>'", path: ['memory'] });
      }
      const template = entries.get('template');
      if (template !== undefined && !bool01.safeParse(template).success) {
        ctx.addIssue({ code: 'custom', message: 'expected 0 or 1', path: ['template'] });
      }
      return {
        type,
        vmid,
        entries,
        digest: entries.get('digest'),
        name: entries.get('name') ?? entries.get('hostname'),
        lock: entries.get('lock'),
        template: template === '1' || template === 'true',
        memoryMiB,
        cores: intKey('cores'),
        sockets: intKey('sockets'),
        tags: (entries.get('tags') ?? '').split(/[;,\s]+/).filter((s) => s.length > 0),
        migrationBlockers: migrationBlockers(type, entries),
      };
    });
}

/** `GET /nodes/{node}/{qemu|lxc}/{vmid}/migrate` (qemu underscores, lxc hyphens). */
export const migratePrecheckSchema = objAliased({
  running: bool01,
  allowed_nodes: arr(text),
  not_allowed_nodes: opt(
    mapOf(
      objAliased({
        unavailable_storages: opt(arr(text)),
        'unavailable-resources': opt(arr(text)),
        'blocking-ha-resources': opt(arr(obj({ sid: name, cause: opt(text) }))),
      }),
    ),
  ),
  local_disks: opt(
    arr(
      objAliased({
        volid: text,
        size: opt(nonNeg),
        cdrom: opt(bool01),
        is_unused: opt(bool01),
        shared: opt(bool01),
        drivename: opt(text),
      }),
    ),
  ),
  local_resources: opt(arr(text)),
  'mapped-resources': opt(arr(text)),
  'dependent-ha-resources': opt(arr(text)),
  'has-dbus-vmstate': opt(bool01),
}).transform(
  (m): MigratePrecheck => ({
    running: m.running,
    allowedNodes: m.allowed_nodes,
    notAllowedNodes: new Map(
      [...(m.not_allowed_nodes ?? [])].map(([n, v]) => [
        n,
        {
          unavailableStorages: v.unavailable_storages ?? [],
          unavailableResources: v['unavailable-resources'] ?? [],
          blockingHaResources: (v['blocking-ha-resources'] ?? []).map((b) => ({ sid: b.sid, cause: b.cause })),
        },
      ]),
    ),
    localDisks: (m.local_disks ?? []).map((d) => ({
      volid: d.volid,
      sizeBytes: d.size,
      cdrom: d.cdrom ?? false,
      unused: d.is_unused ?? false,
      shared: d.shared,
      drive: d.drivename,
    })),
    localResources: m.local_resources ?? [],
    mappedResources: m['mapped-resources'] ?? [],
    dependentHaResources: m['dependent-ha-resources'] ?? [],
    hasDbusVmstate: m['has-dbus-vmstate'],
  }),
);

/** Reply of `POST /cluster/ha/resources/{sid}/migrate|relocate`: `null` on PVE 8, an object on PVE 9. */
export const haMotionReplySchema = z.union(
  [
    z.null(),
    objAliased({
      sid: opt(text),
      'requested-node': opt(text),
      'comigrated-resources': opt(arr(text)),
      'blocking-resources': opt(arr(obj({ sid: name, cause: opt(text) }))),
    }),
  ],
  { error: 'expected null or an object' },
);

/** A task id string (`UPID:…`), parsed. */
export const upidSchema = z.string({ error: 'expected a task id string' }).transform((s, ctx): Upid => {
  const upid = parseUpid(s);
  if (!upid) {
    ctx.addIssue({
      code: 'custom',
      message: "expected a task id 'UPID:<node>:<pid>:<pstart>:<starttime>:<type>:<id>:<user>:'",
    });
    return z.NEVER;
  }
  return upid;
});

/** `GET /nodes/{node}/tasks/{upid}/status`. */
export const taskStatusSchema = obj({
  upid: name,
  node: name,
  status: z.enum(['running', 'stopped'], { error: "expected 'running' or 'stopped'" }),
  exitstatus: opt(text),
  type: opt(text),
  id: opt(text),
  user: opt(text),
  starttime: opt(count),
}).transform(
  (t): TaskStatus => ({
    upid: t.upid,
    node: t.node,
    type: t.type,
    id: t.id,
    user: t.user,
    status: t.status,
    exitStatus: t.exitstatus,
    outcome:
      t.status === 'running'
        ? 'running'
        : t.exitstatus === 'OK'
          ? 'ok'
          : /^WARNINGS: \d+$/.test(t.exitstatus ?? '')
            ? 'warnings'
            : 'failed',
    startTime: t.starttime,
  }),
);

// ---------------------------------------------------------------- /access/permissions

/**
 * `GET /access/permissions`: `{"/vms": {"VM.Migrate": 1, …}, …}`, ACL path → privilege → the
 * propagate flag (0/1; read as a boolean). Paths are kept as sent.
 */
export const accessPermissionsSchema = mapOf(mapOf(bool01));

/** `GET /nodes/{node}/tasks` (running tasks have no `status`/`endtime`, or `status: "running"`). */
/** `GET /nodes/{node}/tasks/{upid}/log`: `[{ n, t }]`, line number and text; the lines' texts in order. */
export const taskLogSchema = arr(obj({ n: count, t: z.string() })).transform((rows) =>
  [...rows].sort((a, b) => a.n - b.n).map((r) => r.t),
);

export const taskListSchema = arr(
  obj({
    upid: name,
    node: name,
    type: name,
    id: opt(text),
    user: name,
    starttime: count,
    endtime: opt(count),
    status: opt(text),
  }).transform((t): TaskListEntry => {
    const finished = t.endtime !== undefined || (t.status !== undefined && t.status !== 'running');
    return {
      upid: t.upid,
      node: t.node,
      type: t.type,
      id: t.id,
      user: t.user,
      startTime: t.starttime,
      endTime: t.endtime,
      exitStatus: finished ? t.status : undefined,
      outcome: !finished
        ? 'running'
        : t.status === 'OK'
          ? 'ok'
          : /^WARNINGS: \d+$/.test(t.status ?? '')
            ? 'warnings'
            : 'failed',
    };
  }),
);

/** `GET /nodes/{node}/certificates/info`. */
export const certificatesInfoSchema = arr(
  obj({
    filename: opt(text),
    fingerprint: opt(text),
    subject: opt(text),
    issuer: opt(text),
    notafter: opt(int),
    notbefore: opt(int),
    san: opt(arr(text)),
    pem: opt(text),
  }).transform((c, ctx): CertificateInfo => {
    let fingerprint256: string | undefined;
    if (c.fingerprint !== undefined) {
      try {
        fingerprint256 = normaliseFingerprint(c.fingerprint);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'expected a sha-256 fingerprint', path: ['fingerprint'] });
      }
    }
    return {
      filename: c.filename,
      fingerprint256,
      subject: c.subject,
      issuer: c.issuer,
      notAfter: c.notafter,
      notBefore: c.notbefore,
      san: c.san ?? [],
      pem: c.pem,
    };
  }),
);
