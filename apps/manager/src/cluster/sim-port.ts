import {
  cloneRulesConfig,
  compileRules,
  enabledRules,
  findNegativeAffinityConflict,
  getPositivePartnersToMove,
  migrateGroupsToRules,
  parseGroupsConfig,
  parseRulesConfig,
  transformRules,
  type CompiledRules,
} from '@poise/rules';
import type { CaseInput, ClusterView, Simulation } from '@poise/sim';
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
  type NodeSnapshot,
  type SnapshotNeeds,
  type SnapshotProblem,
} from './port';

/**
 * The embedded simulator as the balancer sees it: the one module that maps `@poise/sim`'s
 * {@link ClusterView} (and the parts of the case the view does not show: rules, groups, the
 * datacenter `crs`, guest configurations) to the balancer port's {@link ClusterSnapshot}, and
 * the daemon's motion requests to the simulated CRM's command queue (what `ha-manager migrate`
 * and the API's HA migrate endpoint do on a real cluster).
 *
 * The view's typed fields carry the simulator's additions: node PSI (`pressurecpusome`,
 * `pressurememorysome` of the node measurement, from `node <n> set-dynamic-stats`), a guest's
 * `memhost` (its measured stats), a service `lock`, the case's `guest_config`.
 */

/** 2026-01-01T00:00:00Z: simulated time 0 on the daemon's clock (epoch seconds), so logs are reproducible. */
export const SIM_EPOCH_SECONDS = 1_767_225_600;

/** What of a case the view does not show, read once from the case (it does not change during a run). */
export interface SimCaseFacts {
  /** HA rules in force: the rules config and the groups migrated to `ha-group-<name>` rules, disabled ones left out. */
  readonly rules: readonly HaRule[];
  /** The same rules compiled for the motion checks (negative partners on the target, positive partners moved along). */
  readonly compiled: CompiledRules;
  readonly crs: CrsOptions;
  /** The case's datacenter.cfg `max_workers`, when set. */
  readonly maxWorkers?: number | undefined;
  /** `guest_config` of the case (when the simulator has one), values as strings; a guest left out has an empty config. */
  readonly guestConfigs: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** Lines about the case worth saying once (rules that failed to parse). */
  readonly notes: readonly string[];
}

/** A flag of the case as the loader accepts it: `1`, `"1"`, `true` are on. */
function flag(value: unknown): boolean {
  return value === 1 || value === '1' || value === true || value === 'true';
}

function finiteNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A finite number ≥ 0, else undefined. */
function measure(value: unknown): number | undefined {
  const n = finiteNumber(value);
  return n !== undefined && n >= 0 ? n : undefined;
}

/** Pressure in percent 0..100, else undefined. */
function percentValue(value: unknown): number | undefined {
  const n = finiteNumber(value);
  return n !== undefined && n >= 0 && n <= 100 ? n : undefined;
}

/** The case's `crs` as the port has it (the simulator runs the pve-9.2 profile: threshold and margin in percent). */
export function simCrs(crs: Readonly<Record<string, unknown>>): CrsOptions {
  const settings: { thresholdPercent?: number; marginPercent?: number; holdRounds?: number; method?: string } = {};
  const threshold = finiteNumber(crs['ha-auto-rebalance-threshold']);
  const margin = finiteNumber(crs['ha-auto-rebalance-margin']);
  const hold = finiteNumber(crs['ha-auto-rebalance-hold-duration']);
  const method = crs['ha-auto-rebalance-method'];
  if (threshold !== undefined) settings.thresholdPercent = threshold;
  if (margin !== undefined) settings.marginPercent = margin;
  if (hold !== undefined) settings.holdRounds = hold;
  if (typeof method === 'string') settings.method = method;
  const ha = typeof crs.ha === 'string' && crs.ha !== '' ? crs.ha : 'basic';
  return { ha, autoRebalance: flag(crs['ha-auto-rebalance']), settings };
}

/**
 * Reads the case's rules (`rules_config`), groups (`groups`, migrated in memory to
 * `ha-group-<name>` node-affinity rules as the HA manager does, strict = restricted), `crs`
 * and `guest_config` once.
 */
export function simCaseFacts(input: CaseInput): SimCaseFacts {
  const notes: string[] = [];
  const parsed = parseRulesConfig(input.rulesConfig, 'rules_config');
  const groups = parseGroupsConfig(input.groups, 'groups');
  for (const w of [...parsed.warnings, ...groups.warnings]) notes.push(`case: ${w.message}`);
  const config = parsed.config;
  migrateGroupsToRules(config, groups.config, input.serviceConfig);
  const rules: HaRule[] = [];
  for (const [id, rule] of enabledRules(config)) {
    const resources = Object.keys(rule.resources).sort(compareNames);
    if (rule.type === 'node-affinity') {
      const nodes = Object.keys(rule.nodes)
        .sort(compareNames)
        .map((node) => ({ node, priority: rule.nodes[node]!.priority }));
      rules.push({ type: 'node-affinity', id, resources, nodes, strict: rule.strict === 1 });
    } else {
      rules.push({ type: 'resource-affinity', id, resources, affinity: rule.affinity });
    }
  }
  // the motion checks ask the rules as the HA manager compiles them (transforms on a copy)
  const nodes = Object.keys(input.hardwareStatus).sort(compareNames);
  const transformed = cloneRulesConfig(config);
  transformRules(transformed, nodes);
  const compiled = compileRules(transformed, nodes);

  const guestConfigs = new Map<string, Record<string, string>>();
  const given = input.guestConfig;
  if (given) {
    for (const sid of Object.keys(given).sort(compareNames)) {
      const entries = Object.create(null) as Record<string, string>;
      for (const [key, value] of Object.entries(given[sid]!)) {
        entries[key] = typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
      }
      guestConfigs.set(sid, entries);
    }
  }
  return {
    rules,
    compiled,
    crs: simCrs(input.datacenterCfg.crs),
    maxWorkers: input.datacenterCfg.max_workers,
    guestConfigs,
    notes,
  };
}

function guestType(sid: string): 'vm' | 'ct' {
  return sid.startsWith('ct:') ? 'ct' : 'vm';
}

/**
 * One round's snapshot from the simulator's view. Nodes: online = powered, networked, in the
 * quorate partition and `online` in the HA manager's node status (once the manager has one);
 * usage = the simulator's measurement (cores, bytes: the running services' measured usage, plus
 * base load when the simulator models it); pressure when the view reports it. Guests: every
 * configured service (all are HA resources in the simulator), on the node the HA manager has
 * it on, with its HA state and `uid`, measured usage while running (0 otherwise), configured
 * maxima from the static stats. A node or guest whose numbers are not finite (a bad stat in the
 * case) is left out and named in `problems`.
 */
export function simSnapshot(
  view: ClusterView,
  facts: SimCaseFacts,
  options: { time: number; needs?: SnapshotNeeds },
): ClusterSnapshot {
  const problems: SnapshotProblem[] = [];
  const ms = view.managerStatus;
  const nodeStatus = (ms.node_status ?? {}) as Readonly<Record<string, string>>;
  const nodeRequest = (ms.node_request ?? {}) as Readonly<Record<string, { readonly maintenance?: number }>>;
  const services = (ms.service_status ?? {}) as Readonly<
    Record<
      string,
      { readonly state?: unknown; readonly node?: unknown; readonly target?: unknown; readonly uid?: unknown }
    >
  >;
  const haKnown = ms.master_node !== undefined || Object.keys(nodeStatus).length > 0;

  const nodes: NodeSnapshot[] = [];
  for (const name of [...view.nodes.keys()].sort(compareNames)) {
    const nv = view.nodes.get(name)!;
    const stats = view.nodeStats.get(name);
    const haNode = Object.hasOwn(nodeStatus, name) ? nodeStatus[name] : undefined;
    const maintenance =
      haNode === 'maintenance' ||
      (Object.hasOwn(nodeRequest, name) && nodeRequest[name]!.maintenance === 1) ||
      view.lrmModes.get(name) === 'maintenance';
    let online = nv.online && (haKnown ? haNode === 'online' : true);
    const maxcpu = measure(stats?.maxcpu);
    const maxmem = measure(stats?.maxmem);
    const cpu = measure(stats?.cpu);
    const mem = measure(stats?.mem);
    const valid =
      maxcpu !== undefined &&
      maxcpu > 0 &&
      maxmem !== undefined &&
      maxmem > 0 &&
      cpu !== undefined &&
      mem !== undefined;
    if (online && !valid) {
      problems.push({
        message: `node '${name}': the simulator measures no valid usage for it (cpu ${String(stats?.cpu)}, mem ${String(stats?.mem)}): left out`,
      });
      online = false;
    }
    nodes.push({
      name,
      online,
      condition: nodeCondition(nv.online, haKnown ? (haNode ?? 'unknown') : undefined, maintenance),
      maintenance,
      maxcpu: maxcpu ?? 0,
      maxmem: maxmem ?? 0,
      cpu: valid ? cpu : 0,
      mem: valid ? mem : 0,
      pressure: { cpuSome: percentValue(stats?.pressurecpusome), memSome: percentValue(stats?.pressurememorysome) },
    });
  }

  const guests: GuestSnapshot[] = [];
  for (const sid of [...view.services.keys()].sort(compareNames)) {
    const sv = view.services.get(sid)!;
    const svc = Object.hasOwn(services, sid) ? services[sid] : undefined;
    const maxcpu = measure(sv.staticStats?.maxcpu);
    const maxmem = measure(sv.staticStats?.maxmem);
    const dyn = sv.dynamicStats;
    let cpu = 0;
    let mem = 0;
    let memhost: number | undefined;
    if (maxcpu === undefined || maxmem === undefined) {
      problems.push({
        message: `guest '${sid}': the simulator has no valid configured maxima for it (static stats): left out`,
      });
      continue;
    }
    if (sv.running) {
      const c = measure(dyn?.cpu);
      const m = measure(dyn?.mem);
      if (c === undefined || m === undefined) {
        problems.push({
          message: `guest '${sid}' is running but the simulator has no valid measured usage for it (dynamic stats): left out`,
        });
        continue;
      }
      cpu = c;
      mem = m;
      memhost = measure(dyn?.memhost);
    }
    const state =
      svc === undefined ? (sv.state === 'started' ? 'request_start' : 'stopped') : haServiceState(svc.state);
    const lock = typeof sv.lock === 'string' && sv.lock !== '' ? sv.lock : undefined;
    guests.push({
      sid,
      vmid: Number(sid.slice(sid.indexOf(':') + 1)),
      type: guestType(sid),
      node: typeof svc?.node === 'string' ? svc.node : sv.node,
      running: sv.running,
      lock,
      template: false,
      ha: {
        state,
        target: typeof svc?.target === 'string' ? svc.target : undefined,
        requestState: sv.state,
        // the case format has no per-resource opt-out of the balancer
        autoRebalance: true,
        uid: typeof svc?.uid === 'string' ? svc.uid : undefined,
      },
      stats: { cpu, maxcpu, mem, maxmem, memhost },
    });
  }

  let guestConfigs: Map<string, Readonly<Record<string, string>>> | undefined;
  if (options.needs?.guestConfigs) {
    guestConfigs = new Map();
    for (const g of guests) guestConfigs.set(g.sid, facts.guestConfigs.get(g.sid) ?? {});
  }
  return {
    time: options.time,
    quorate: [...view.nodes.values()].some((n) => n.online),
    haDisarmed: ms.disarm !== undefined,
    nodes,
    guests,
    rules: facts.rules,
    crs: facts.crs,
    ...(facts.maxWorkers !== undefined ? { maxWorkers: facts.maxWorkers } : {}),
    ...(guestConfigs ? { guestConfigs } : {}),
    problems,
  };
}

/**
 * What the HA migrate endpoint answers for a motion (spec §4.1), judged on the simulated
 * cluster: refused for an unknown service or one in `error`; `blocking` names the
 * negative-affinity partner on (or moving to) the target, which the PVE 9 API reports as
 * `blocking-resources` instead of queueing; otherwise the command is for the CRM, and
 * `comigrated` are the positive partners it moves along.
 */
export function judgeMotion(
  view: ClusterView,
  compiled: CompiledRules,
  request: MotionRequest,
): { ok: true; comigrated: string[] } | { ok: false; reason: string; blocking?: string } {
  const ss = view.managerStatus.service_status ?? {};
  if (!view.services.has(request.sid)) return { ok: false, reason: `no such resource '${request.sid}'` };
  if (!view.nodes.has(request.target)) return { ok: false, reason: `no such node '${request.target}'` };
  if (Object.hasOwn(ss, request.sid) && ss[request.sid]!.state === 'error') {
    return { ok: false, reason: `service '${request.sid}' in error state, must be disabled and fixed first` };
  }
  const conflict = findNegativeAffinityConflict(compiled, request.sid, request.target, ss);
  if (conflict !== undefined)
    return { ok: false, reason: `blocked by '${conflict}' (resource-affinity)`, blocking: conflict };
  return {
    ok: true,
    comigrated: getPositivePartnersToMove(compiled, request.sid, request.target, ss).sort(compareNames),
  };
}

/** Options of {@link SimPort}. */
export interface SimPortOptions {
  /** Epoch seconds of simulated time 0 (default {@link SIM_EPOCH_SECONDS}). */
  readonly epoch?: number;
  /** `limits.pickup-timeout`. */
  readonly pickupTimeoutSeconds: number;
  /** For the start-up line (the case directory). */
  readonly description: string;
}

/**
 * The balancer port over an embedded {@link Simulation}: `readSnapshot` maps its view
 * ({@link simSnapshot}), `requestMotion` queues `migrate|relocate <sid> <node>` for the CRM
 * master (after the checks of {@link judgeMotion}), `followMotion` judges HA motions with the
 * shared {@link followHaMotion}. Every simulated service is an HA resource, so the guest
 * (non-HA) calls refuse. Never throws a PortError: the simulator cannot fail a read.
 */
export class SimPort implements BalancerPort {
  readonly description: string;
  private readonly epoch: number;
  private readonly pickupTimeoutSeconds: number;

  constructor(
    private readonly sim: Simulation,
    private readonly facts: SimCaseFacts,
    options: SimPortOptions,
  ) {
    this.epoch = options.epoch ?? SIM_EPOCH_SECONDS;
    this.pickupTimeoutSeconds = options.pickupTimeoutSeconds;
    this.description = options.description;
  }

  /** The daemon's clock reading of the simulation's time. */
  now(): number {
    return this.epoch + this.sim.time;
  }

  async readSnapshot(needs?: SnapshotNeeds): Promise<ClusterSnapshot> {
    return simSnapshot(this.sim.view(), this.facts, { time: this.now(), needs });
  }

  async requestMotion(request: MotionRequest): Promise<MotionReply> {
    if (this.sim.ended) return { accepted: false, reason: 'the simulation has ended' };
    const verdict = judgeMotion(this.sim.view(), this.facts.compiled, request);
    if (!verdict.ok) return { accepted: false, reason: verdict.reason };
    this.sim.queueCrmCommand(`${request.kind} ${request.sid} ${request.target}`);
    return { accepted: true, task: undefined, comigrated: verdict.comigrated };
  }

  async checkGuestMigration(request: MotionRequest): Promise<GuestMigrationCheck> {
    return { allowed: false, reason: `'${request.sid}': the simulator has only HA resources` };
  }

  async requestGuestMigration(request: MotionRequest): Promise<MotionReply> {
    return { accepted: false, reason: `'${request.sid}': the simulator has only HA resources` };
  }

  async followMotion(
    motion: MotionRecord,
    snapshot: ClusterSnapshot,
    options?: FollowOptions,
  ): Promise<MotionProgress> {
    const pickupTimeoutSeconds = options?.pickupTimeoutSeconds ?? this.pickupTimeoutSeconds;
    if (motion.via !== 'ha')
      return { status: 'failed', reason: `'${motion.sid}': the simulator has only HA resources` };
    return followHaMotion(motion, snapshot, { now: snapshot.time, pickupTimeoutSeconds });
  }
}
