import {
  type ClusterGuestResource,
  type ClusterNodeResource,
  type CrsOptions as PveCrsOptions,
  type GuestType,
  type HaManagerStatus,
  type HaResource,
  type HaServiceStatus,
  type HaRule as PveHaRule,
  type HaGroup,
  actionPrivilege,
  grantsPrivilege,
  type PveClient,
  PveApiError,
  type PveVersion,
  parseMigrationLog,
  requireServiceStatus,
  type TaskListEntry,
} from '@poise/pve-api';
import type { FinishedMigrationTask } from '@poise/env';
import { groupRuleId } from '@poise/rules';
import { compareNames } from '@poise/usage';
import { nodeCondition } from './condition';
import { followHaMotion } from './motion';
import {
  type BalancerPort,
  type ClusterSnapshot,
  type CrsOptions,
  type FollowOptions,
  type GuestMigrationCheck,
  type GuestSnapshot,
  type HaRule,
  haServiceState,
  type MotionProgress,
  type MotionRecord,
  type MotionReply,
  type MotionRequest,
  type NodeLeftOut,
  type NodeSnapshot,
  PortError,
  type PortSnapshot,
  type PrivilegeNeed,
  type PortErrorKind,
  type SnapshotNeeds,
  type SnapshotProblem,
} from './port';

/**
 * How often the slowly changing or per-node parts are read again, seconds: the version, the
 * HA rules (or groups) and each node's RRD row (pressure). The RRD's step is 60 s (spec §3.3),
 * so reading it more often returns the same row.
 */
const SLOW_REFRESH_SECONDS = 60;
/** A node's newest complete RRD row older than this, seconds, gives no pressure (telemetry missing). */
const PRESSURE_MAX_AGE_SECONDS = 300;
/** A cached guest configuration is read again after this many seconds. */
const CONFIG_REFRESH_SECONDS = 600;
/** Cached guest configurations refreshed per round at most (the oldest first); new guests are read at once. */
const CONFIG_REFRESHES_PER_ROUND = 4;
/** Finished migrations listed per node at most (`GET /nodes/{node}/tasks?typefilter=qmigrate`). */
const MIGRATION_TASKS_LISTED = 20;
/** New migration task logs read per refresh at most (each log is read once, then cached). */
const MIGRATION_LOGS_PER_READ = 5;
/** Lines of a migration task log read (a live migration's log runs to a few hundred). */
const MIGRATION_LOG_LINES = 2000;
/** Finished migrations handed to the policy at most, the newest. */
const MIGRATION_TASKS_KEPT = 20;
/** Task readings cached at most (the newest by start time). */
const MIGRATION_CACHE_MAX = 200;
/** Requests of one kind in flight at once (per-node RRD rows, guest configurations). */
const PARALLEL_REQUESTS = 4;
/** Characters of the server's message quoted when a motion request is refused with a bare error reply. */
const REFUSAL_EXCERPT_CHARS = 160;
/** pve-manager release from which the cluster stores the balancer threshold and margin in percent (spec §3.6). */
const PERCENT_CRS_RELEASE = { major: 9, minor: 2 } as const;

/** The failure kind of a client error, for `poise_api_errors_total{kind}`. */
export function portErrorKind(err: PveApiError): PortErrorKind {
  switch (err.code) {
    case 'timeout':
      return 'timeout';
    case 'connection':
      return 'network';
    case 'unauthorized':
    case 'forbidden':
      return 'auth';
    case 'bad-reply':
      return 'invalid-reply';
    case 'tls-untrusted':
    case 'tls-pin-mismatch':
      return 'tls';
    case 'server-error':
    case 'refused':
    case 'bad-request':
    case 'not-implemented':
    case 'http-error':
      return 'http';
    default:
      return 'other';
  }
}

/**
 * The endpoint templates of the calls the adapter makes (as `@poise/pve-api` names them in its
 * errors), hence every `endpoint` its {@link PortError}s name: `poise_api_errors_total` counts
 * each of them from 0. A call to a new endpoint names it here (`call` and `toPortError` take
 * only these).
 */
export const PVE_ADAPTER_ENDPOINTS = [
  'GET /version',
  'GET /cluster/resources',
  'GET /cluster/status',
  'GET /cluster/options',
  'GET /cluster/ha/status/manager_status',
  'GET /cluster/ha/resources',
  'GET /cluster/ha/rules',
  'GET /cluster/ha/groups',
  'GET /nodes/{node}/rrddata',
  'GET /nodes/{node}/{type}/{vmid}/config',
  'GET /nodes/{node}/{type}/{vmid}/migrate',
  'POST /nodes/{node}/{type}/{vmid}/migrate',
  'POST /cluster/ha/resources/{sid}/migrate',
  'POST /cluster/ha/resources/{sid}/relocate',
  'GET /nodes/{node}/tasks',
  'GET /nodes/{node}/tasks/{upid}/status',
  'GET /nodes/{node}/tasks/{upid}/log',
  'GET /access/permissions',
] as const;

/** One of {@link PVE_ADAPTER_ENDPOINTS}. */
type AdapterEndpoint = (typeof PVE_ADAPTER_ENDPOINTS)[number];

/** Maps a client error to a {@link PortError} naming the endpoint template; anything else is re-thrown (a bug). */
function toPortError(err: unknown, fallbackEndpoint: AdapterEndpoint): PortError {
  if (err instanceof PortError) return err;
  if (!(err instanceof PveApiError)) throw err;
  return new PortError(err.endpoint ?? fallbackEndpoint, portErrorKind(err), err.message, { cause: err });
}

async function call<T>(endpoint: AdapterEndpoint, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw toPortError(err, endpoint);
  }
}

/** Runs `tasks` with at most `limit` in flight; results in order. */
async function inParallel<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** `release` ≥ `PERCENT_CRS_RELEASE`. */
function percentCrs(version: PveVersion): boolean {
  return (
    version.major > PERCENT_CRS_RELEASE.major ||
    (version.major === PERCENT_CRS_RELEASE.major && version.minor >= PERCENT_CRS_RELEASE.minor)
  );
}

/**
 * The cluster's `crs` as the port has it. Threshold and margin: percent on pve-manager ≥ 9.2
 * (pve-cluster ≥ 9.1.5 stores percent), a fraction before (multiplied by 100 here). The unit
 * follows the version, not the value: 0.5 on a 9.2 cluster is half a percent.
 */
export function crsOptions(crs: PveCrsOptions, version: PveVersion | undefined): CrsOptions {
  const scale = version === undefined || percentCrs(version) ? 1 : 100;
  const settings: { thresholdPercent?: number; marginPercent?: number; holdRounds?: number; method?: string } = {};
  if (crs.haAutoRebalanceThreshold !== undefined) settings.thresholdPercent = crs.haAutoRebalanceThreshold * scale;
  if (crs.haAutoRebalanceMargin !== undefined) settings.marginPercent = crs.haAutoRebalanceMargin * scale;
  if (crs.haAutoRebalanceHoldDuration !== undefined) settings.holdRounds = crs.haAutoRebalanceHoldDuration;
  if (crs.haAutoRebalanceMethod !== undefined) settings.method = crs.haAutoRebalanceMethod;
  return { ha: crs.ha ?? 'basic', autoRebalance: crs.haAutoRebalance === true, settings };
}

/** API rules in force (not disabled, no feasibility errors) as the port's rules, in rule order. */
export function portRules(rules: readonly PveHaRule[]): HaRule[] {
  const out: HaRule[] = [];
  const ordered = [...rules].sort(
    (a, b) =>
      (a.order ?? Number.MAX_SAFE_INTEGER) - (b.order ?? Number.MAX_SAFE_INTEGER) || compareNames(a.rule, b.rule),
  );
  for (const r of ordered) {
    if (!r.applied) continue;
    if (r.type === 'node-affinity' && r.nodes !== undefined) {
      out.push({
        type: 'node-affinity',
        id: r.rule,
        resources: [...r.resources],
        nodes: r.nodes.map((n) => ({ node: n.node, priority: n.priority })),
        strict: r.strict,
      });
    } else if (r.type === 'resource-affinity' && (r.affinity === 'positive' || r.affinity === 'negative')) {
      out.push({ type: 'resource-affinity', id: r.rule, resources: [...r.resources], affinity: r.affinity });
    }
  }
  return out;
}

/**
 * HA groups as the node-affinity rules PVE 9 migrates them to (`ha-group-<name>`, strict =
 * `restricted`, resources = the HA resources in the group), as the HA manager does in memory
 * every round before the persistent migration. Groups without resources give no rule.
 */
export function groupRules(groups: readonly HaGroup[], resources: readonly HaResource[]): HaRule[] {
  const out: HaRule[] = [];
  for (const g of [...groups].sort((a, b) => compareNames(a.group, b.group))) {
    const members = resources
      .filter((r) => r.group === g.group)
      .map((r) => r.sid)
      .sort(compareNames);
    if (members.length === 0) continue;
    out.push({
      type: 'node-affinity',
      id: groupRuleId(g.group),
      resources: members,
      nodes: g.nodes.map((n) => ({ node: n.node, priority: n.priority })),
      strict: g.restricted,
    });
  }
  return out;
}

interface Timed<T> {
  readonly value: T;
  /** Seconds (the adapter's clock) when read. */
  readonly at: number;
}

interface PressureRow {
  /** Bucket start of the newest complete RRD row, epoch seconds. */
  readonly time: number;
  readonly cpuSome: number | undefined;
  readonly memSome: number | undefined;
}

interface CachedConfig {
  readonly entries: Readonly<Record<string, string>>;
  readonly digest: string | undefined;
  readonly at: number;
}

/** Where a guest is, for the calls that need its node and type. */
interface GuestPlace {
  readonly node: string;
  readonly type: GuestType;
  readonly vmid: number;
  readonly running: boolean;
}

/** Options of {@link PveAdapter}. */
export interface PveAdapterOptions {
  readonly client: PveClient;
  /** Epoch seconds (the daemon's clock). */
  readonly now: () => number;
  /** `limits.pickup-timeout`: an HA motion not seen moving this long after the request was dropped. */
  readonly pickupTimeoutSeconds: number;
  /** A short description without secrets (`pve https://node1:8006, https://node2:8006`). */
  readonly description: string;
}

/**
 * The balancer port over the Proxmox VE API (`@poise/pve-api`).
 *
 * Reads per round (each a single cheap cluster-wide call, run in parallel):
 * `GET /cluster/resources` (nodes, guests with usage, storage `shared`),
 * `GET /cluster/ha/status/manager_status` (service and node states, quorum, disarm),
 * `GET /cluster/ha/resources` (request state, `auto-rebalance`, group), `GET /cluster/options`
 * (`crs`: the cluster's own balancer must be seen at once). Every {@link SLOW_REFRESH_SECONDS}:
 * `GET /version`, `GET /cluster/ha/rules` (PVE 9, groups not yet migrated included; on PVE 8
 * `GET /cluster/ha/groups` instead), and `GET /nodes/{node}/rrddata` per online node (pressure).
 * With `needs.guestConfigs`: `GET /nodes/{node}/{qemu|lxc}/{vmid}/config` for each movable
 * guest not cached yet, and {@link CONFIG_REFRESHES_PER_ROUND} refreshes of the oldest ones.
 * Only when `manager_status` has no quorum entry (no HA configured): `GET /cluster/status`.
 *
 * A failed call of the per-round set fails the read (the round says so and nothing is done); a
 * failed slow or per-item call leaves that item unknown (or its last value while fresh) and is
 * a {@link SnapshotProblem}: one node's RRD never stops the round.
 */
export class PveAdapter implements BalancerPort {
  readonly description: string;
  readonly errorEndpoints: readonly string[] = PVE_ADAPTER_ENDPOINTS;
  private readonly client: PveClient;
  private readonly now: () => number;
  private readonly pickupTimeoutSeconds: number;
  private version: Timed<PveVersion> | undefined;
  private rules: Timed<{ rules: HaRule[]; from: string }> | undefined;
  private readonly pressure = new Map<string, Timed<PressureRow | undefined>>();
  /** Nodes whose pressure must come from an RRD row that starts at or after this time (a motion changed them). */
  private readonly pressureSince = new Map<string, number>();
  private readonly configs = new Map<string, CachedConfig>();
  private places = new Map<string, GuestPlace>();
  /** Each finished migration task read so far, by UPID: its start and what its log says (`undefined`: nothing usable). */
  private readonly migrationLogs = new Map<string, { start: number; task: FinishedMigrationTask | undefined }>();
  private migrationList: Timed<FinishedMigrationTask[]> | undefined;

  constructor(options: PveAdapterOptions) {
    this.client = options.client;
    this.now = options.now;
    this.pickupTimeoutSeconds = options.pickupTimeoutSeconds;
    this.description = options.description;
  }

  private fresh(entry: { at: number } | undefined, now: number, seconds = SLOW_REFRESH_SECONDS): boolean {
    return entry !== undefined && now - entry.at < seconds && now >= entry.at;
  }

  async readSnapshot(needs: SnapshotNeeds = { guestConfigs: false, nonHa: false }): Promise<PortSnapshot> {
    const now = this.now();
    const problems: SnapshotProblem[] = [];
    const nodesLeftOut: NodeLeftOut[] = [];
    const [resources, manager, haResources, options] = await Promise.all([
      call('GET /cluster/resources', () => this.client.clusterResources()),
      call('GET /cluster/ha/status/manager_status', () => this.client.haManagerStatus()),
      call('GET /cluster/ha/resources', () => this.client.haResources()),
      call('GET /cluster/options', () => this.client.clusterOptions()),
    ]);
    const version = await this.readVersion(now, problems);
    const rules = await this.readRules(now, version, haResources, problems);
    const quorum = await this.readQuorum(manager);
    const services: ReadonlyMap<string, HaServiceStatus> =
      haResources.length > 0 || manager.masterNode !== undefined
        ? await call('GET /cluster/ha/status/manager_status', async () => requireServiceStatus(manager))
        : new Map<string, HaServiceStatus>();

    const nodeRows = resources
      .filter((r): r is ClusterNodeResource => r.kind === 'node')
      .sort((a, b) => compareNames(a.node, b.node));
    const haKnown = manager.masterNode !== undefined || manager.nodeStatus.size > 0;
    const nodes: NodeSnapshot[] = [];
    const online: string[] = [];
    for (const row of nodeRows) {
      const haState = manager.nodeStatus.get(row.node);
      const maintenance =
        haState === 'maintenance' ||
        manager.nodeRequest.get(row.node)?.maintenance === true ||
        row.haState === 'maintenance';
      let up = row.online && (haKnown ? haState === 'online' : true);
      const { cpuUsage, maxCpus, memBytes, maxMemBytes } = row;
      const stats =
        cpuUsage !== undefined && maxCpus !== undefined && memBytes !== undefined && maxMemBytes !== undefined;
      if (up && !stats) {
        problems.push({
          message: `node '${row.node}' is online but GET /cluster/resources has no usage stats for it (is 'Sys.Audit' on '/nodes/${row.node}' granted?): left out`,
        });
        if (!maintenance)
          nodesLeftOut.push({ node: row.node, reason: 'GET /cluster/resources has no usage stats for it' });
        up = false;
      }
      if (up && !maintenance) online.push(row.node);
      nodes.push({
        name: row.node,
        online: up,
        condition: nodeCondition(row.online, haKnown ? (haState ?? 'unknown') : undefined, maintenance),
        maintenance,
        maxcpu: maxCpus ?? 0,
        maxmem: maxMemBytes ?? 0,
        cpu: stats ? cpuUsage * maxCpus : 0,
        mem: stats ? memBytes : 0,
        pressure: { cpuSome: undefined, memSome: undefined },
      });
    }
    await this.readPressure(online, now, problems);
    const stalePressure: string[] = [];
    for (const n of nodes) {
      const row = this.pressure.get(n.name)?.value;
      const since = this.pressureSince.get(n.name);
      if (since !== undefined) {
        // fresh enough: a row from after the motion, or a node that reports no PSI at all
        const noPsi = row !== undefined && row.cpuSome === undefined && row.memSome === undefined;
        if (!n.online || noPsi || (row !== undefined && row.time >= since)) this.pressureSince.delete(n.name);
        else stalePressure.push(n.name);
      }
      if (!n.online || row === undefined) continue;
      if (now - row.time > PRESSURE_MAX_AGE_SECONDS) {
        problems.push({
          message: `node '${n.name}': its RRD has no complete row of the last ${PRESSURE_MAX_AGE_SECONDS} s: pressure unknown`,
        });
        continue;
      }
      (n as { pressure: NodeSnapshot['pressure'] }).pressure = { cpuSome: row.cpuSome, memSome: row.memSome };
    }

    const haBySid = new Map(haResources.map((r) => [r.sid, r]));
    const guests: GuestSnapshot[] = [];
    const places = new Map<string, GuestPlace>();
    const seen = new Set<string>();
    for (const row of resources
      .filter((r): r is ClusterGuestResource => r.kind === 'guest')
      .sort((a, b) => compareNames(a.sid, b.sid))) {
      seen.add(row.sid);
      const haConfig = haBySid.get(row.sid);
      const svc = services.get(row.sid);
      const ha =
        haConfig === undefined && svc === undefined
          ? undefined
          : {
              state:
                svc === undefined
                  ? haConfig!.state === 'started'
                    ? ('request_start' as const)
                    : ('stopped' as const)
                  : haServiceState(svc.state),
              target: svc?.target,
              requestState: haConfig?.state ?? 'started',
              autoRebalance: haConfig?.autoRebalance ?? true,
              uid: svc?.uid,
            };
      const node = svc?.node ?? row.node;
      let cpu = 0;
      let mem = 0;
      if (row.running) {
        if (row.cpuUsage === undefined || row.memBytes === undefined) {
          problems.push({
            message: `guest '${row.sid}' is running but GET /cluster/resources has no usage stats for it: left out`,
          });
          continue;
        }
        cpu = row.cpuUsage * row.maxCpus;
        mem = row.memBytes;
      }
      places.set(row.sid, { node: row.node, type: row.type, vmid: row.vmid, running: row.running });
      guests.push({
        sid: row.sid,
        vmid: row.vmid,
        type: row.type === 'qemu' ? 'vm' : 'ct',
        node,
        running: row.running,
        lock: row.lock,
        template: row.template === true,
        ha,
        stats: {
          cpu,
          maxcpu: row.maxCpus,
          mem,
          maxmem: row.maxMemBytes,
          // PVE 9 qemu only: lxc rows carry 0 and stopped VMs 0 (spec §3.1)
          memhost: row.type === 'qemu' && row.running ? row.memHostBytes : undefined,
        },
      });
    }
    for (const r of haResources) {
      if (!seen.has(r.sid)) {
        problems.push({
          message: `HA resource '${r.sid}' has no guest in GET /cluster/resources (deleted, or 'VM.Audit' on '/vms/${r.sid.slice(r.sid.indexOf(':') + 1)}' missing?): left out`,
        });
      }
    }
    this.places = places;

    const storageShared = new Map<string, boolean>();
    for (const r of resources) {
      if (r.kind === 'storage' && r.shared !== undefined)
        storageShared.set(r.storage, (storageShared.get(r.storage) ?? false) || r.shared);
    }
    const guestConfigs = needs.guestConfigs ? await this.readConfigs(guests, needs, now, problems) : undefined;
    const migrationTasks = needs.migrationTasks ? await this.readMigrationTasks(online, now, problems) : undefined;

    return {
      time: now,
      ...quorum,
      haDisarmed: manager.disarm !== undefined,
      nodes,
      guests,
      rules,
      crs: crsOptions(options.crs, version),
      ...(options.maxWorkers !== undefined ? { maxWorkers: options.maxWorkers } : {}),
      storageShared,
      ...(guestConfigs ? { guestConfigs } : {}),
      ...(migrationTasks ? { migrationTasks } : {}),
      ...(stalePressure.length > 0 ? { stalePressure } : {}),
      problems,
      ...(nodesLeftOut.length > 0 ? { nodesLeftOut } : {}),
    };
  }

  /**
   * A motion ended at `since` and changed these nodes: their RRD is read again at the next
   * snapshot, and every snapshot after that lists them in `stalePressure` until their newest
   * complete RRD row starts at or after `since` (a row of the minute the motion ended mixes
   * samples from before it). A node whose rows carry no PSI (PVE 8) is never waited for.
   */
  refreshTelemetry(nodes: readonly string[], since: number): void {
    for (const node of nodes) this.pressureSince.set(node, Math.max(since, this.pressureSince.get(node) ?? since));
  }

  /**
   * The finished live migrations (`ha-auto-rebalance-contention-cost-benefit`), every
   * {@link SLOW_REFRESH_SECONDS}: each online node's newest {@link MIGRATION_TASKS_LISTED}
   * `qmigrate` tasks (`GET /nodes/{node}/tasks`), and the log of each successful one not read
   * before (`GET /nodes/{node}/tasks/{upid}/log`, at most {@link MIGRATION_LOGS_PER_READ} per
   * refresh; `parseMigrationLog`). A log that says nothing usable is a problem naming the task,
   * once; a failed call leaves that node's or task's migrations out (a problem) until the next
   * refresh. Returns the newest {@link MIGRATION_TASKS_KEPT} by start time, oldest first.
   */
  private async readMigrationTasks(
    online: readonly string[],
    now: number,
    problems: SnapshotProblem[],
  ): Promise<FinishedMigrationTask[]> {
    if (this.fresh(this.migrationList, now)) return this.migrationList!.value;
    const listed: TaskListEntry[] = [];
    for (const node of online) {
      try {
        listed.push(
          ...(await this.client.tasks(node, {
            typefilter: 'qmigrate',
            source: 'archive',
            limit: MIGRATION_TASKS_LISTED,
          })),
        );
      } catch (err) {
        const error = toPortError(err, 'GET /nodes/{node}/tasks');
        problems.push({
          message: `the finished migrations of node '${node}' could not be read (${error.kind}): left out of the migration link rate`,
          error,
        });
      }
    }
    const seen = new Set<string>();
    const fresh = listed
      .filter((e) => e.type === 'qmigrate' && e.outcome === 'ok' && !this.migrationLogs.has(e.upid))
      .filter((e) => !seen.has(e.upid) && seen.add(e.upid))
      .sort((a, b) => a.startTime - b.startTime || compareNames(a.upid, b.upid))
      .slice(-MIGRATION_LOGS_PER_READ);
    for (const e of fresh) {
      try {
        const summary = parseMigrationLog(await this.client.taskLog(e.upid, { limit: MIGRATION_LOG_LINES }));
        if (summary.ok) {
          const { durationSeconds, transferredBytes } = summary;
          this.migrationLogs.set(e.upid, { start: e.startTime, task: { durationSeconds, transferredBytes } });
        } else {
          this.migrationLogs.set(e.upid, { start: e.startTime, task: undefined });
          problems.push({
            message: `migration task ${e.upid}: ${summary.reason}: left out of the migration link rate`,
          });
        }
      } catch (err) {
        const error = toPortError(err, 'GET /nodes/{node}/tasks/{upid}/log');
        problems.push({
          message: `the log of migration task ${e.upid} could not be read (${error.kind}): left out of the migration link rate`,
          error,
        });
      }
    }
    const byStart = [...this.migrationLogs.entries()].sort(
      (a, b) => a[1].start - b[1].start || compareNames(a[0], b[0]),
    );
    for (const [upid] of byStart.slice(0, Math.max(0, byStart.length - MIGRATION_CACHE_MAX)))
      this.migrationLogs.delete(upid);
    const tasks = byStart
      .filter(([, v]) => v.task !== undefined)
      .slice(-MIGRATION_TASKS_KEPT)
      .map(([, v]) => v.task!);
    this.migrationList = { value: tasks, at: now };
    return tasks;
  }

  private async readVersion(now: number, problems: SnapshotProblem[]): Promise<PveVersion | undefined> {
    if (this.fresh(this.version, now)) return this.version!.value;
    try {
      this.version = { value: await this.client.version(), at: now };
    } catch (err) {
      const error = toPortError(err, 'GET /version');
      if (this.version === undefined) throw error;
      problems.push({
        message: `the cluster version could not be read again (${error.kind}): using ${this.version.value.version}`,
        error,
      });
    }
    return this.version.value;
  }

  /**
   * PVE 9: `/cluster/ha/rules` alone — it already holds the groups not yet migrated as
   * `ha-group-<name>` rules (its GET handler runs `migrate_groups_to_rules` on what it returns,
   * spec §3.5), so reading the groups as well would count them twice. PVE 8 (or
   * `/cluster/ha/rules` answering 501): the groups as those rules.
   */
  private async readRules(
    now: number,
    version: PveVersion | undefined,
    haResources: readonly HaResource[],
    problems: SnapshotProblem[],
  ): Promise<HaRule[]> {
    if (this.fresh(this.rules, now)) return this.rules!.value.rules;
    try {
      let rules: HaRule[] = [];
      let from = 'groups';
      let rulesEndpoint = version === undefined || version.major >= 9;
      if (rulesEndpoint) {
        try {
          rules = portRules(await this.client.haRules());
          from = 'rules';
        } catch (err) {
          if (!(err instanceof PveApiError) || err.code !== 'not-implemented') throw err;
          rulesEndpoint = false;
        }
      }
      if (!rulesEndpoint) rules = groupRules((await this.client.haGroups()).groups, haResources);
      this.rules = { value: { rules, from }, at: now };
    } catch (err) {
      const error = toPortError(err, 'GET /cluster/ha/rules');
      if (this.rules === undefined) throw error;
      problems.push({
        message: `the HA rules could not be read again (${error.kind}, ${error.endpoint}): using the last ones read`,
        error,
      });
    }
    return this.rules.value.rules;
  }

  /**
   * `manager_status.quorum.quorate` (a Perl boolean: `"1"`, `""`, or `null` when the answering
   * node could not check it: not quorate either); without a quorum entry (no HA configured),
   * the cluster row of `/cluster/status`.
   */
  private async readQuorum(manager: HaManagerStatus): Promise<Pick<ClusterSnapshot, 'quorate' | 'quorumUnknown'>> {
    if (manager.quorum !== undefined) {
      const quorate = manager.quorum.quorate;
      return quorate === undefined ? { quorate: false, quorumUnknown: true } : { quorate };
    }
    const status = await call('GET /cluster/status', () => this.client.clusterStatus());
    const cluster = status.find((e) => e.kind === 'cluster');
    // a single node without a cluster has no cluster row: it is its own quorum
    return { quorate: cluster === undefined ? true : cluster.quorate };
  }

  /** The newest complete RRD row of each online node, read every SLOW_REFRESH_SECONDS. */
  private async readPressure(online: readonly string[], now: number, problems: SnapshotProblem[]): Promise<void> {
    for (const node of [...this.pressure.keys()]) if (!online.includes(node)) this.pressure.delete(node);
    const due = online.filter((n) => !this.fresh(this.pressure.get(n), now) || this.pressureSince.has(n));
    await inParallel(
      due.map((node) => async () => {
        try {
          const rows = await this.client.nodeRrd(node, { timeframe: 'hour', cf: 'AVERAGE' });
          // a complete bucket has its cpu; the current one may hold only some keys (spec §3.3)
          const last = [...rows].reverse().find((r) => r.cpuUsage !== undefined);
          this.pressure.set(node, {
            value:
              last === undefined
                ? undefined
                : { time: last.time, cpuSome: last.pressure.cpuSome, memSome: last.pressure.memorySome },
            at: now,
          });
        } catch (err) {
          const error = toPortError(err, 'GET /nodes/{node}/rrddata');
          problems.push({
            message: `node '${node}': its RRD could not be read (${error.kind}): pressure unknown until it can`,
            error,
          });
          const old = this.pressure.get(node);
          // keep the last row while it is recent; a failed read is tried again next round
          if (old !== undefined) this.pressure.set(node, { value: old.value, at: now - SLOW_REFRESH_SECONDS });
        }
      }),
      PARALLEL_REQUESTS,
    );
  }

  /**
   * Guest configurations of the guests that could be moved: every one not cached is read now,
   * and at most CONFIG_REFRESHES_PER_ROUND cached ones older than CONFIG_REFRESH_SECONDS (the
   * oldest first). A failed read leaves that guest's config as it was (or unknown).
   */
  private async readConfigs(
    guests: readonly GuestSnapshot[],
    needs: SnapshotNeeds,
    now: number,
    problems: SnapshotProblem[],
  ): Promise<Map<string, Readonly<Record<string, string>>>> {
    const wanted = guests.filter(
      (g) => (g.ha ? g.ha.state === 'started' : needs.nonHa && g.running) && g.lock === undefined && !g.template,
    );
    const wantedSids = new Set(wanted.map((g) => g.sid));
    for (const sid of [...this.configs.keys()]) if (!wantedSids.has(sid)) this.configs.delete(sid);
    const missing = wanted.filter((g) => !this.configs.has(g.sid));
    const stale = wanted
      .filter((g) => this.configs.has(g.sid) && !this.fresh(this.configs.get(g.sid), now, CONFIG_REFRESH_SECONDS))
      .sort((a, b) => this.configs.get(a.sid)!.at - this.configs.get(b.sid)!.at || compareNames(a.sid, b.sid))
      .slice(0, CONFIG_REFRESHES_PER_ROUND);
    await inParallel(
      [...missing, ...stale].map((g) => async () => {
        const place = this.places.get(g.sid);
        if (!place) return;
        try {
          const config = await this.client.guestConfig(place.node, place.type, place.vmid);
          this.configs.set(g.sid, { entries: Object.fromEntries(config.entries), digest: config.digest, at: now });
        } catch (err) {
          const error = toPortError(err, 'GET /nodes/{node}/{type}/{vmid}/config');
          problems.push({
            message: `guest '${g.sid}': its configuration could not be read (${error.kind}): migratability unknown until it can`,
            error,
          });
        }
      }),
      PARALLEL_REQUESTS,
    );
    const out = new Map<string, Readonly<Record<string, string>>>();
    for (const g of wanted) {
      const c = this.configs.get(g.sid);
      if (c) out.set(g.sid, c.entries);
    }
    return out;
  }

  /**
   * `POST /cluster/ha/resources/{sid}/migrate|relocate`. Certainly not applied — a 4xx reply,
   * `blocking-resources` in the reply, a connection that failed before a byte was sent — is a
   * refusal; anything else that fails (5xx, timeout, a connection dropped after sending, a reply
   * that does not parse) may have been applied: it throws, and the daemon follows the motion
   * through the HA manager status instead of sending it again.
   */
  async requestMotion(request: MotionRequest): Promise<MotionReply> {
    const endpoint = `POST /cluster/ha/resources/{sid}/${request.kind}` as const;
    try {
      const reply =
        request.kind === 'migrate'
          ? await this.client.haMigrate(request.sid, request.target)
          : await this.client.haRelocate(request.sid, request.target);
      if (!reply.accepted) {
        return {
          accepted: false,
          reason: `blocked by ${reply.blocking.map((b) => `'${b.sid}'${b.cause ? ` (${b.cause})` : ''}`).join(', ')}`,
        };
      }
      return { accepted: true, task: undefined, comigrated: reply.comigrated };
    } catch (err) {
      return refusalOrThrow(err, endpoint, actionPrivilege(endpoint));
    }
  }

  /**
   * `GET /nodes/{node}/{qemu|lxc}/{vmid}/migrate?target=` on the guest's node: refused when the
   * target is not allowed, lacks a storage or resource, or the guest has local resources or
   * local disks (poise never migrates disks: it does not pass `with-local-disks`).
   */
  async checkGuestMigration(request: MotionRequest): Promise<GuestMigrationCheck> {
    const place = this.placeOf(request.sid);
    const check = await call('GET /nodes/{node}/{type}/{vmid}/migrate', () =>
      this.client.migratePrecheck(place.node, place.type, place.vmid, request.target),
    );
    const reasons: string[] = [];
    const blocked = check.notAllowedNodes.get(request.target);
    if (!check.allowedNodes.includes(request.target) && blocked === undefined)
      reasons.push(`'${request.target}' is not an allowed node`);
    if (blocked) {
      if (blocked.unavailableStorages.length > 0)
        reasons.push(
          `storage ${blocked.unavailableStorages.map((s) => `'${s}'`).join(', ')} not available on '${request.target}'`,
        );
      if (blocked.unavailableResources.length > 0)
        reasons.push(
          `${blocked.unavailableResources.map((s) => `'${s}'`).join(', ')} not available on '${request.target}'`,
        );
      if (blocked.blockingHaResources.length > 0)
        reasons.push(`blocked by HA resource ${blocked.blockingHaResources.map((b) => `'${b.sid}'`).join(', ')}`);
    }
    if (check.localResources.length > 0)
      reasons.push(`local resources ${check.localResources.map((r) => `'${r}'`).join(', ')}`);
    const disks = check.localDisks.filter((d) => d.shared !== true);
    if (disks.length > 0)
      reasons.push(`local disks ${disks.map((d) => `'${d.volid}'${d.cdrom ? ' (cd-rom)' : ''}`).join(', ')}`);
    return reasons.length === 0 ? { allowed: true } : { allowed: false, reason: reasons.join('; ') };
  }

  /**
   * `POST /nodes/{node}/{qemu|lxc}/{vmid}/migrate`: live for a running VM, a restart migration
   * for a running container. Its reply is the task id; an error reply carries none, so no task
   * was started: a refusal (same rules as {@link requestMotion}).
   */
  async requestGuestMigration(request: MotionRequest): Promise<MotionReply> {
    const place = this.placeOf(request.sid);
    const endpoint = 'POST /nodes/{node}/{type}/{vmid}/migrate' as const;
    try {
      const upid = await this.client.migrateGuest(place.node, place.type, place.vmid, {
        target: request.target,
        online: place.type === 'qemu' ? place.running : undefined,
        restart: place.type === 'lxc' && place.running ? true : undefined,
      });
      return { accepted: true, task: upid.upid, comigrated: [] };
    } catch (err) {
      return refusalOrThrow(err, endpoint, actionPrivilege(endpoint, { vmid: place.vmid }));
    }
  }

  /**
   * `GET /access/permissions?path=<need.path>`: the token's effective privileges on that one
   * path (the server applies inheritance and privilege separation), so the grant is learned
   * without sending the action again.
   */
  async checkPrivilege(need: PrivilegeNeed): Promise<boolean> {
    const permissions = await call('GET /access/permissions', () => this.client.permissions(need.path));
    return grantsPrivilege(permissions, need);
  }

  async followMotion(
    motion: MotionRecord,
    snapshot: ClusterSnapshot,
    options?: FollowOptions,
  ): Promise<MotionProgress> {
    const pickupTimeoutSeconds = options?.pickupTimeoutSeconds ?? this.pickupTimeoutSeconds;
    if (motion.via === 'ha') return followHaMotion(motion, snapshot, { now: snapshot.time, pickupTimeoutSeconds });
    if (motion.task !== undefined) {
      const task = await call('GET /nodes/{node}/tasks/{upid}/status', () => this.client.taskStatus(motion.task!));
      return taskProgress(task.outcome, task.exitStatus);
    }
    // the request's reply never arrived (or never left): find its task, never send it again
    const guest = snapshot.guests.find((g) => g.sid === motion.sid);
    if (guest?.node === motion.target && guest.lock !== 'migrate') return { status: 'succeeded' };
    const vmid = Number(motion.sid.slice(motion.sid.indexOf(':') + 1));
    const tasks = await call('GET /nodes/{node}/tasks', () =>
      this.client.tasks(motion.source, {
        typefilter: motion.sid.startsWith('ct:') ? 'vzmigrate' : 'qmigrate',
        vmid,
        since: Math.max(0, Math.floor(motion.issuedAt) - 5),
        source: 'all',
      }),
    );
    const task: TaskListEntry | undefined = [...tasks].sort((a, b) => b.startTime - a.startTime)[0];
    if (task) return taskProgress(task.outcome, task.exitStatus);
    if (snapshot.time - motion.issuedAt > pickupTimeoutSeconds) {
      return {
        status: 'failed',
        reason: `no migration task of '${motion.sid}' was started within ${pickupTimeoutSeconds} s`,
      };
    }
    return { status: 'pending', phase: 'queued' };
  }

  private placeOf(sid: string): GuestPlace {
    const place = this.places.get(sid);
    if (!place)
      throw new PortError('GET /cluster/resources', 'other', `guest '${sid}' was not in the last read of the cluster`);
    return place;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

function taskProgress(
  outcome: 'running' | 'ok' | 'warnings' | 'failed',
  exitStatus: string | undefined,
): MotionProgress {
  if (outcome === 'running') return { status: 'pending', phase: 'moving' };
  if (outcome === 'ok' || outcome === 'warnings') return { status: 'succeeded' };
  return { status: 'failed', reason: `migration task ended: ${exitStatus ?? 'unknown exit status'}` };
}

/** The server's message cut to {@link REFUSAL_EXCERPT_CHARS}, on one line. */
function excerpt(message: string): string {
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > REFUSAL_EXCERPT_CHARS ? `${line.slice(0, REFUSAL_EXCERPT_CHARS - 1)}…` : line;
}

/**
 * A POST error: a refusal when certainly not applied, else a thrown PortError (followed, never
 * re-sent). Certainly not applied: a 4xx; an HTTP 500 — pveproxy's answer when the handler
 * `die`s, before it queued a command or started a task (spec §4.1), whether its message is one
 * of the known refusals (`isActionRefusal`) or not; a connection that failed before a byte was
 * sent. A bare 500 is reported as what it is: `the cluster refused the request: HTTP 500 <its
 * message>`. A 401 or 403 is a fault of the token, not of the motion: `authFault` says what is
 * missing and `privilege` what to ask for (`need`, the action's privilege).
 */
function refusalOrThrow(err: unknown, endpoint: AdapterEndpoint, need: PrivilegeNeed): MotionReply {
  const error = toPortError(err, endpoint);
  const api = err instanceof PveApiError ? err : undefined;
  const status = api?.status;
  const certainlyNot =
    api !== undefined && (api.mayHaveBeenApplied === false || (status !== undefined && status >= 400 && status <= 500));
  if (!certainlyNot) throw error;
  if (api.code === 'forbidden') {
    const grant = 'with privilege separation, grant it to the user and to the token';
    return {
      accepted: false,
      reason: api.message,
      error,
      authFault: `the API token lacks ${api.privilege ?? 'a privilege'} (${grant})`,
      privilege: need,
    };
  }
  if (api.code === 'unauthorized') {
    return {
      accepted: false,
      reason: api.message,
      error,
      authFault: 'the API token was refused (wrong, expired or revoked token, or disabled user)',
    };
  }
  if (api.code === 'refused' && api.serverMessage !== undefined)
    return { accepted: false, reason: `${api.serverMessage} (http ${status})`, error };
  if (status === 500)
    return {
      accepted: false,
      reason: `the cluster refused the request: HTTP 500 ${excerpt(api.serverMessage ?? 'without a message')}`,
      error,
    };
  return { accepted: false, reason: api.message, error };
}
