import { inspect } from 'node:util';
import type { z } from 'zod';
import { PveApiError } from './errors';
import { privilegeFor, type EndpointName } from './privileges';
import { isActionRefusal } from './refusals';
import {
  accessPermissionsSchema,
  certificatesInfoSchema,
  clusterOptionsSchema,
  clusterResourcesSchema,
  clusterStatusSchema,
  guestConfigSchema,
  guestRrdSchema,
  guestStatusSchema,
  haGroupsSchema,
  haManagerStatusSchema,
  haMotionReplySchema,
  haResourcesSchema,
  haRulesSchema,
  haStatusCurrentSchema,
  migratePrecheckSchema,
  nodeGuestsSchema,
  nodeRrdSchema,
  nodeStatusSchema,
  taskListSchema,
  taskLogSchema,
  taskStatusSchema,
  upidSchema,
  versionSchema,
} from './schemas';
import type { TransportSecurity } from './tls';
import { Transport, type CallSpec, type TransportOptions } from './transport';
import type {
  AccessPermissions,
  CertificateInfo,
  ClusterOptions,
  ClusterResource,
  ClusterStatusEntry,
  GuestConfig,
  GuestRrdPoint,
  GuestStatus,
  HaGroups,
  HaManagerStatus,
  HaMotionResult,
  HaResource,
  HaRule,
  HaServiceStatus,
  HaStatusCurrent,
  MigratePrecheck,
  NodeGuest,
  NodeRrdPoint,
  NodeStatus,
  PveVersion,
  RrdConsolidation,
  RrdTimeframe,
  TaskListEntry,
  TaskStatus,
  Upid,
} from './types';
import { parseUpid } from './upid';
import { decode } from './wire';

/** Options of {@link PveClient}: those of the transport (URLs, token, TLS, timeouts, retries, signal). */
export type PveClientOptions = TransportOptions;

/** Per-call options. */
export interface CallOptions {
  /** Aborts this call (the client's own `signal` applies too). */
  signal?: AbortSignal;
}

/** Guest type in paths. */
export type GuestType = 'qemu' | 'lxc';

/** Parameters of `POST /nodes/{node}/{qemu|lxc}/{vmid}/migrate`. `force`, `migration_type`, `migration_network` are root-only and not offered. */
export interface GuestMigrateParams {
  /** Target node. */
  target: string;
  /** Live migration (qemu) / online (lxc). A running qemu guest needs it. */
  online?: boolean;
  /** qemu: migrate local disks too. */
  withLocalDisks?: boolean;
  /** qemu `targetstorage` (`storage-pair-list`: one id, `src:dst,…`, or `1` for identity). */
  targetStorage?: string;
  /** Bandwidth limit, KiB/s. */
  bwlimitKiB?: number;
  /** qemu, PVE 9: carry the conntrack state. */
  withConntrackState?: boolean;
  /** lxc: restart migration (stop, move, start). */
  restart?: boolean;
  /** lxc: shutdown timeout for a restart migration, seconds (default 180). */
  timeoutSeconds?: number;
}

interface GetExtra {
  query?: CallSpec['query'];
  node?: string;
  vmid?: number;
  isAnswer?: CallSpec['isAnswer'];
  endpointLabel?: string;
}

const NODE_NAME = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;

function checkNode(node: string, what = 'node'): string {
  if (typeof node !== 'string' || !NODE_NAME.test(node)) {
    throw new PveApiError('bad-option', `${what} name '${String(node)}' is not a valid node name`);
  }
  return node;
}

function checkVmid(vmid: number): number {
  if (!Number.isSafeInteger(vmid) || vmid < 1)
    throw new PveApiError('bad-option', `vmid '${String(vmid)}' must be a positive integer`);
  return vmid;
}

function checkType(type: GuestType): GuestType {
  if (type !== 'qemu' && type !== 'lxc')
    throw new PveApiError('bad-option', `guest type '${String(type)}' must be 'qemu' or 'lxc'`);
  return type;
}

function checkSid(sid: string): string {
  if (typeof sid !== 'string' || !/^((vm|ct):)?\d+$/.test(sid)) {
    throw new PveApiError(
      'bad-option',
      `ha resource id '${String(sid)}' must be 'vm:<vmid>', 'ct:<vmid>' or a bare vmid`,
    );
  }
  return sid;
}

function seg(value: string | number): string {
  return encodeURIComponent(String(value));
}

/**
 * The service table of a manager status, or a `bad-reply` error naming
 * `manager_status.service_status` when the reply had none — motions cannot be followed without it.
 */
export function requireServiceStatus(status: HaManagerStatus): ReadonlyMap<string, HaServiceStatus> {
  if (status.serviceStatus) return status.serviceStatus;
  throw new PveApiError(
    'bad-reply',
    "GET /cluster/ha/status/manager_status: reply field 'data.manager_status.service_status' is missing although a master is set; motions cannot be followed",
    { endpoint: 'GET /cluster/ha/status/manager_status', field: 'data.manager_status.service_status' },
  );
}

/**
 * A typed Proxmox VE 8/9 API client for a balancing daemon. Every reply is validated; every
 * method returns poise's units (see `types.ts`) or throws a {@link PveApiError}.
 *
 * ```ts
 * const client = new PveClient({ baseUrls: ['https://pve1:8006', 'https://pve2:8006'], token: readTokenFile('/etc/poise/token'), tls: { caFile: '/etc/pve/pve-root-ca.pem' } });
 * for (const w of client.security.warnings) console.warn(w);
 * const nodes = (await client.clusterResources('node')).filter((r) => r.kind === 'node');
 * ```
 */
export class PveClient {
  readonly #transport: Transport;

  /** @throws PveApiError `bad-option` for bad URLs, plain http without `allowPlainHttp`, bad TLS options */
  constructor(options: PveClientOptions) {
    this.#transport = new Transport(options);
  }

  /** What the transport verifies; log `warnings` loudly at start when `insecure`. */
  get security(): TransportSecurity {
    return this.#transport.security;
  }

  /** Base URLs (`https://host:port`). */
  get baseUrls(): string[] {
    return this.#transport.baseUrls;
  }

  /** Close idle connections. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  async #get<T extends z.ZodType>(
    endpoint: EndpointName,
    path: string,
    schema: T,
    options: CallOptions | undefined,
    extra: GetExtra = {},
  ): Promise<{ value: z.output<T> | undefined; status: number; message: string }> {
    const label = extra.endpointLabel ?? endpoint;
    const result = await this.#transport.call({
      method: 'GET',
      endpoint: label,
      path,
      query: extra.query,
      privilege: privilegeFor(endpoint, { node: extra.node, vmid: extra.vmid }),
      signal: options?.signal,
      isAnswer: extra.isAnswer,
    });
    if (result.status < 200 || result.status >= 300)
      return { value: undefined, status: result.status, message: result.message };
    return {
      value: decode(schema, result.data, { endpoint: label, baseUrl: result.baseUrl }),
      status: result.status,
      message: result.message,
    };
  }

  async #read<T extends z.ZodType>(
    endpoint: EndpointName,
    path: string,
    schema: T,
    options: CallOptions | undefined,
    extra: GetExtra = {},
  ) {
    return (await this.#get(endpoint, path, schema, options, extra)).value as z.output<T>;
  }

  /** `GET /version`: version and release (detect PVE 8 vs 9). */
  async version(options?: CallOptions): Promise<PveVersion> {
    return this.#read('GET /version', '/version', versionSchema, options);
  }

  /**
   * `GET /cluster/resources[?type=…]`: every node, guest and storage of the cluster in one cheap
   * call (refreshed by pvestatd every 10 s). `type` `vm` returns qemu and lxc rows only.
   */
  async clusterResources(type?: 'vm' | 'node' | 'storage', options?: CallOptions): Promise<ClusterResource[]> {
    if (type !== undefined && type !== 'vm' && type !== 'node' && type !== 'storage') {
      throw new PveApiError('bad-option', `resource type '${String(type)}' must be 'vm', 'node' or 'storage'`);
    }
    return this.#read('GET /cluster/resources', '/cluster/resources', clusterResourcesSchema, options, {
      query: { type },
      endpointLabel: type ? `GET /cluster/resources?type=${type}` : undefined,
    });
  }

  /** `GET /cluster/status`: quorum, and each node's corosync online state and address. */
  async clusterStatus(options?: CallOptions): Promise<ClusterStatusEntry[]> {
    return this.#read('GET /cluster/status', '/cluster/status', clusterStatusSchema, options);
  }

  /** `GET /nodes/{node}/status` (proxied to that node). */
  async nodeStatus(node: string, options?: CallOptions): Promise<NodeStatus> {
    return this.#read('GET /nodes/{node}/status', `/nodes/${seg(checkNode(node))}/status`, nodeStatusSchema, options, {
      node,
    });
  }

  /** `GET /nodes/{node}/rrddata`: node history incl. PSI (PVE 9). Default `hour`, `AVERAGE`. */
  async nodeRrd(
    node: string,
    range: { timeframe?: RrdTimeframe; cf?: RrdConsolidation } = {},
    options?: CallOptions,
  ): Promise<NodeRrdPoint[]> {
    return this.#read('GET /nodes/{node}/rrddata', `/nodes/${seg(checkNode(node))}/rrddata`, nodeRrdSchema, options, {
      node,
      query: { timeframe: range.timeframe ?? 'hour', cf: range.cf ?? 'AVERAGE' },
    });
  }

  /** `GET /nodes/{node}/{qemu|lxc}/{vmid}/rrddata`: guest history incl. memhost and PSI (PVE 9). No `decade`. */
  async guestRrd(
    node: string,
    type: GuestType,
    vmid: number,
    range: { timeframe?: Exclude<RrdTimeframe, 'decade'>; cf?: RrdConsolidation } = {},
    options?: CallOptions,
  ): Promise<GuestRrdPoint[]> {
    return this.#read(
      'GET /nodes/{node}/{type}/{vmid}/rrddata',
      `/nodes/${seg(checkNode(node))}/${checkType(type)}/${checkVmid(vmid)}/rrddata`,
      guestRrdSchema,
      options,
      {
        node,
        vmid,
        query: { timeframe: range.timeframe ?? 'hour', cf: range.cf ?? 'AVERAGE' },
      },
    );
  }

  /** `GET /nodes/{node}/{qemu|lxc}`: the node's guests with live stats (memhost, PSI) in one call. */
  async nodeGuests(node: string, type: GuestType, options?: CallOptions): Promise<NodeGuest[]> {
    return this.#read(
      'GET /nodes/{node}/{type}',
      `/nodes/${seg(checkNode(node))}/${checkType(type)}`,
      nodeGuestsSchema(type, node),
      options,
      { node },
    );
  }

  /** `GET /nodes/{node}/{qemu|lxc}/{vmid}/status/current`: one guest's live stats and whether HA manages it. */
  async guestStatus(node: string, type: GuestType, vmid: number, options?: CallOptions): Promise<GuestStatus> {
    return this.#read(
      'GET /nodes/{node}/{type}/{vmid}/status/current',
      `/nodes/${seg(checkNode(node))}/${checkType(type)}/${checkVmid(vmid)}/status/current`,
      guestStatusSchema(type, node, vmid),
      options,
      { node, vmid },
    );
  }

  /**
   * `GET /nodes/{node}/tasks`: e.g. the `qmigrate` task the HA LRM started after a `hamigrate`
   * (`{ typefilter: 'qmigrate', vmid, since, source: 'all' }`).
   */
  async tasks(
    node: string,
    filter: {
      typefilter?: string;
      vmid?: number;
      since?: number;
      until?: number;
      userfilter?: string;
      source?: 'archive' | 'active' | 'all';
      errors?: boolean;
      start?: number;
      limit?: number;
    } = {},
    options?: CallOptions,
  ): Promise<TaskListEntry[]> {
    if (filter.vmid !== undefined) checkVmid(filter.vmid);
    for (const key of ['since', 'until', 'start', 'limit'] as const) {
      const v = filter[key];
      if (v !== undefined && !(Number.isInteger(v) && v >= 0))
        throw new PveApiError('bad-option', `'${key}' must be an integer ≥ 0, got ${String(v)}`);
    }
    return this.#read('GET /nodes/{node}/tasks', `/nodes/${seg(checkNode(node))}/tasks`, taskListSchema, options, {
      node,
      query: { ...filter },
    });
  }

  /** `GET /cluster/ha/status/manager_status`: the CRM's state (service states, node states, LRMs). */
  async haManagerStatus(options?: CallOptions): Promise<HaManagerStatus> {
    return this.#read(
      'GET /cluster/ha/status/manager_status',
      '/cluster/ha/status/manager_status',
      haManagerStatusSchema,
      options,
    );
  }

  /** `GET /cluster/ha/status/current`: quorum, master, fencing, LRM and service rows; daemon states read from the free text. */
  async haStatusCurrent(options?: CallOptions): Promise<HaStatusCurrent> {
    return this.#read('GET /cluster/ha/status/current', '/cluster/ha/status/current', haStatusCurrentSchema, options);
  }

  /** `GET /cluster/ha/resources`: HA resources with their config defaults applied. */
  async haResources(options?: CallOptions): Promise<HaResource[]> {
    return this.#read('GET /cluster/ha/resources', '/cluster/ha/resources', haResourcesSchema, options);
  }

  /** `GET /cluster/ha/rules` (PVE 9; PVE 8 answers 501 → `not-implemented`). */
  async haRules(options?: CallOptions): Promise<HaRule[]> {
    return this.#read('GET /cluster/ha/rules', '/cluster/ha/rules', haRulesSchema, options);
  }

  /** `GET /cluster/ha/groups` (PVE 8). On PVE 9 after the migration to rules: `{ groups: [], migratedToRules: true }`. */
  async haGroups(options?: CallOptions): Promise<HaGroups> {
    const r = await this.#get('GET /cluster/ha/groups', '/cluster/ha/groups', haGroupsSchema, options, {
      isAnswer: (status, message) => status === 500 && /migrated to rules/i.test(message),
    });
    return r.value === undefined ? { groups: [], migratedToRules: true } : { groups: r.value, migratedToRules: false };
  }

  /** `GET /cluster/options`: `crs` (object or property string) and `max_workers`. */
  async clusterOptions(options?: CallOptions): Promise<ClusterOptions> {
    return this.#read('GET /cluster/options', '/cluster/options', clusterOptionsSchema, options);
  }

  /** `GET /nodes/{node}/{qemu|lxc}/{vmid}/config` (proxied), with the config's migration blockers. */
  async guestConfig(node: string, type: GuestType, vmid: number, options?: CallOptions): Promise<GuestConfig> {
    return this.#read(
      'GET /nodes/{node}/{type}/{vmid}/config',
      `/nodes/${seg(checkNode(node))}/${checkType(type)}/${checkVmid(vmid)}/config`,
      guestConfigSchema(type, vmid),
      options,
      {
        node,
        vmid,
      },
    );
  }

  /** `GET /nodes/{node}/{qemu|lxc}/{vmid}/migrate[?target=]`: the precondition check, on the guest's current node. */
  async migratePrecheck(
    node: string,
    type: GuestType,
    vmid: number,
    target?: string,
    options?: CallOptions,
  ): Promise<MigratePrecheck> {
    return this.#read(
      'GET /nodes/{node}/{type}/{vmid}/migrate',
      `/nodes/${seg(checkNode(node))}/${checkType(type)}/${checkVmid(vmid)}/migrate`,
      migratePrecheckSchema,
      options,
      {
        node,
        vmid,
        query: { target: target === undefined ? undefined : checkNode(target, 'target') },
      },
    );
  }

  /** `POST /cluster/ha/resources/{sid}/migrate`: queue a live migration with the CRM (no task id; follow `manager_status`). */
  async haMigrate(sid: string, node: string, options?: CallOptions): Promise<HaMotionResult> {
    return this.#haMotion('migrate', sid, node, options);
  }

  /** `POST /cluster/ha/resources/{sid}/relocate`: queue a stop–move–start with the CRM. */
  async haRelocate(sid: string, node: string, options?: CallOptions): Promise<HaMotionResult> {
    return this.#haMotion('relocate', sid, node, options);
  }

  async #haMotion(
    kind: 'migrate' | 'relocate',
    sid: string,
    node: string,
    options?: CallOptions,
  ): Promise<HaMotionResult> {
    checkSid(sid);
    checkNode(node, 'target');
    const endpoint: EndpointName =
      kind === 'migrate' ? 'POST /cluster/ha/resources/{sid}/migrate' : 'POST /cluster/ha/resources/{sid}/relocate';
    const result = await this.#transport.call({
      method: 'POST',
      endpoint,
      path: `/cluster/ha/resources/${seg(sid)}/${kind}`,
      form: { node },
      privilege: privilegeFor(endpoint),
      signal: options?.signal,
      isRefusal: isActionRefusal,
    });
    const reply = decode(haMotionReplySchema, result.data, { endpoint, baseUrl: result.baseUrl });
    const canonicalSid = /^\d+$/.test(sid) ? `vm:${sid}` : sid;
    if (reply === null)
      return { sid: canonicalSid, requestedNode: node, accepted: true, comigrated: [], blocking: [], detailed: false };
    const blocking = (reply['blocking-resources'] ?? []).map((b) => ({ sid: b.sid, cause: b.cause }));
    return {
      sid: reply.sid ?? canonicalSid,
      requestedNode: reply['requested-node'] ?? node,
      accepted: blocking.length === 0,
      comigrated: reply['comigrated-resources'] ?? [],
      blocking,
      detailed: true,
    };
  }

  /**
   * `POST /nodes/{node}/{qemu|lxc}/{vmid}/migrate` on the guest's current node; returns the task
   * id. For an HA-managed guest the task is `hamigrate`, which ends once the command is queued.
   */
  async migrateGuest(
    node: string,
    type: GuestType,
    vmid: number,
    params: GuestMigrateParams,
    options?: CallOptions,
  ): Promise<Upid> {
    checkNode(node);
    checkType(type);
    checkVmid(vmid);
    checkNode(params?.target, 'target');
    if (params.bwlimitKiB !== undefined && !(Number.isInteger(params.bwlimitKiB) && params.bwlimitKiB >= 0)) {
      throw new PveApiError('bad-option', `'bwlimitKiB' must be an integer ≥ 0, got ${String(params.bwlimitKiB)}`);
    }
    if (
      params.timeoutSeconds !== undefined &&
      !(Number.isInteger(params.timeoutSeconds) && params.timeoutSeconds >= 0)
    ) {
      throw new PveApiError(
        'bad-option',
        `'timeoutSeconds' must be an integer ≥ 0, got ${String(params.timeoutSeconds)}`,
      );
    }
    const endpoint: EndpointName = 'POST /nodes/{node}/{type}/{vmid}/migrate';
    const form: CallSpec['form'] =
      type === 'qemu'
        ? {
            target: params.target,
            online: params.online,
            'with-local-disks': params.withLocalDisks,
            targetstorage: params.targetStorage,
            bwlimit: params.bwlimitKiB,
            'with-conntrack-state': params.withConntrackState,
          }
        : {
            target: params.target,
            online: params.online,
            restart: params.restart,
            timeout: params.timeoutSeconds,
            bwlimit: params.bwlimitKiB,
          };
    const result = await this.#transport.call({
      method: 'POST',
      endpoint,
      path: `/nodes/${seg(node)}/${type}/${vmid}/migrate`,
      form,
      privilege: privilegeFor(endpoint, { node, vmid }),
      signal: options?.signal,
      isRefusal: isActionRefusal,
    });
    return decode(upidSchema, result.data, { endpoint, baseUrl: result.baseUrl });
  }

  /** `GET /nodes/{node}/tasks/{upid}/status` (the node is taken from the UPID). */
  async taskStatus(upid: string | Upid, options?: CallOptions): Promise<TaskStatus> {
    const parsed = typeof upid === 'string' ? parseUpid(upid) : upid;
    if (!parsed) throw new PveApiError('bad-option', `${inspect(upid)} is not a task id (UPID:…)`);
    return this.#read(
      'GET /nodes/{node}/tasks/{upid}/status',
      `/nodes/${seg(parsed.node)}/tasks/${seg(parsed.upid)}/status`,
      taskStatusSchema,
      options,
      {
        node: parsed.node,
      },
    );
  }

  /**
   * `GET /nodes/{node}/tasks/{upid}/log` (the node is taken from the UPID): the task's log lines
   * in order, from line `start` (default 0), at most `limit` (default PVE's 50; a `qmigrate`
   * log of a large guest runs to a few hundred). {@link parseMigrationLog} reads a migration's.
   */
  async taskLog(
    upid: string | Upid,
    range: { start?: number; limit?: number } = {},
    options?: CallOptions,
  ): Promise<string[]> {
    const parsed = typeof upid === 'string' ? parseUpid(upid) : upid;
    if (!parsed) throw new PveApiError('bad-option', `${inspect(upid)} is not a task id (UPID:…)`);
    for (const key of ['start', 'limit'] as const) {
      const v = range[key];
      if (v !== undefined && !(Number.isInteger(v) && v >= 0))
        throw new PveApiError('bad-option', `'${key}' must be an integer ≥ 0, got ${String(v)}`);
    }
    return this.#read(
      'GET /nodes/{node}/tasks/{upid}/log',
      `/nodes/${seg(parsed.node)}/tasks/${seg(parsed.upid)}/log`,
      taskLogSchema,
      options,
      { node: parsed.node, query: { ...range } },
    );
  }

  /** `GET /nodes/{node}/certificates/info`: the node's certificates with SHA-256 fingerprints (to bootstrap pins). */
  async certificatesInfo(node: string, options?: CallOptions): Promise<CertificateInfo[]> {
    return this.#read(
      'GET /nodes/{node}/certificates/info',
      `/nodes/${seg(checkNode(node))}/certificates/info`,
      certificatesInfoSchema,
      options,
      { node },
    );
  }

  /**
   * `GET /access/permissions[?path=]`: the token's own effective privileges, without trying an
   * action (a refused action is a request sent; this is a read). With `path`, that path's
   * privileges only (one entry, the cheap form). Read it with `grantsPrivilege`.
   * Older Proxmox VE releases answer 501 (`not-implemented`).
   */
  async permissions(path?: string, options?: CallOptions): Promise<AccessPermissions> {
    if (path !== undefined && !/^\/[^\s]*$/.test(path))
      throw new PveApiError('bad-option', `ACL path ${inspect(path)} must start with '/' and hold no spaces`);
    return this.#read('GET /access/permissions', '/access/permissions', accessPermissionsSchema, options, {
      query: { path },
    });
  }

  /** Shows URLs and TLS mode; never the token secret. */
  [inspect.custom](): string {
    return `PveClient(${inspect(this.#transport)})`;
  }

  /** Same as `inspect`. */
  toString(): string {
    return `PveClient(${this.baseUrls.join(', ')}; tls ${this.security.mode})`;
  }
}
