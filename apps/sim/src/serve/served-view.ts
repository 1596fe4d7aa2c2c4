/**
 * The simulated cluster as the Proxmox VE API shows it: the one module that maps `@poise/sim`'s
 * `ClusterView` (and the parts of the case the view does not show: rules, groups, the
 * datacenter `crs`, node versions, guest configurations) to `@poise/pve-api/server`'s
 * `ServedCluster`, which `clusterReadRoutes` writes with the real API's shapes and quirks.
 *
 * The view's typed fields carry the simulator's additions: node PSI (`pressurecpusome`,
 * `pressurememorysome` of the node measurement, from `node <n> set-dynamic-stats`), a guest's
 * `memhost` (its measured stats), a service `lock`, the case's `guest_config`.
 */
import type { ServedCluster, ServedGuest, ServedNode, ServedRule } from '@poise/pve-api/server';
import {
  cloneRulesConfig,
  compileRules,
  enabledRules,
  findNegativeAffinityConflict,
  findRuleConflicts,
  getPositivePartnersToMove,
  migrateGroupsToRules,
  parseGroupsConfig,
  parseRulesConfig,
  serviceGroup,
  transformRules,
  type CompiledRules,
} from '@poise/rules';
import type { CaseInput, ClusterView } from '@poise/sim';
import { compareNames } from '@poise/usage';

/** The simulator's default maxima of a service without static stats (cores, bytes), as its loader uses them. */
const DEFAULT_GUEST_MAXCPU = 4;
const DEFAULT_GUEST_MAXMEM = 4 * 1024 ** 3;

/** What of a case the view does not show, read once. */
export interface ServedCaseFacts {
  /** `/version` (`9.2.2` unless asked otherwise); below 9 the API is a PVE 8 one. */
  readonly version: string;
  /** PVE 9: the rules config plus the groups migrated to `ha-group-<name>` rules, infeasible ones with `errors`. */
  readonly rules: readonly ServedRule[];
  /** PVE 8: the groups as configured (and the resources name them). */
  readonly groups: ServedCluster['groups'];
  /** sid → its group (PVE 8). */
  readonly groupOf: ReadonlyMap<string, string>;
  /** The rules as the HA manager compiles them, for the motion checks. */
  readonly compiled: CompiledRules;
  readonly crs: Readonly<Record<string, string | number>>;
  /** Nodes whose `pve-manager-version` in `hardware_status` is below 9: PVE 8 RRD and resource formats. */
  readonly pve8Nodes: ReadonlySet<string>;
  readonly guestConfigs: ReadonlyMap<string, Readonly<Record<string, string | number>>>;
  /** Lines worth saying once (config lines that did not parse). */
  readonly notes: readonly string[];
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function percent(value: unknown): number | undefined {
  const n = finite(value);
  return n !== undefined && n <= 100 ? n : undefined;
}

/** Reads the case once: rules and groups (as the API of `version` shows them), `crs`, node versions, guest configs. */
export function servedCaseFacts(input: CaseInput, version: string): ServedCaseFacts {
  const notes: string[] = [];
  const nodes = Object.keys(input.hardwareStatus).sort(compareNames);
  const parsedRules = parseRulesConfig(input.rulesConfig, 'rules_config');
  const parsedGroups = parseGroupsConfig(input.groups, 'groups');
  for (const w of [...parsedRules.warnings, ...parsedGroups.warnings]) notes.push(`case: ${w.message}`);
  const pve9 = Number.parseInt(version, 10) >= 9;
  const config = parsedRules.config;
  const groupOf = new Map<string, string>();
  for (const sid of Object.keys(input.serviceConfig).sort(compareNames)) {
    const group = serviceGroup(input.serviceConfig[sid]);
    if (group !== undefined) groupOf.set(sid, group);
  }
  if (pve9) migrateGroupsToRules(config, parsedGroups.config, input.serviceConfig);
  const errors = new Map<string, string[]>();
  for (const c of findRuleConflicts(config, nodes)) errors.set(c.ruleId, [...(errors.get(c.ruleId) ?? []), c.reason]);
  const rules: ServedRule[] = [];
  for (const [id, rule] of enabledRules(config, true)) {
    const base = {
      id,
      resources: Object.keys(rule.resources).sort(compareNames),
      ...(rule.disable !== undefined ? { disabled: true } : {}),
      ...(errors.has(id) ? { errors: { resources: errors.get(id)! } } : {}),
    };
    if (rule.type === 'node-affinity') {
      const list = Object.keys(rule.nodes)
        .sort(compareNames)
        .map((node) => ({ node, priority: rule.nodes[node]!.priority }));
      rules.push({ ...base, type: 'node-affinity', nodes: list, strict: rule.strict === 1 });
    } else {
      rules.push({ ...base, type: 'resource-affinity', affinity: rule.affinity });
    }
  }
  const transformed = cloneRulesConfig(config);
  transformRules(transformed, nodes);
  const compiled = compileRules(transformed, nodes);
  const groups = pve9
    ? []
    : Object.keys(parsedGroups.config.ids)
        .sort(compareNames)
        .map((group) => {
          const g = parsedGroups.config.ids[group]!;
          const list = Object.keys(g.nodes)
            .sort(compareNames)
            .map((node) => ({ node, priority: g.nodes[node]!.priority }));
          return { group, nodes: list, restricted: g.restricted === 1, nofailback: g.nofailback === 1 };
        });
  const crs: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(input.datacenterCfg.crs)) {
    if (typeof value === 'number' || typeof value === 'string') crs[key] = value;
    else if (typeof value === 'boolean') crs[key] = value ? 1 : 0;
  }
  const pve8Nodes = new Set(
    nodes.filter((n) => {
      const v = input.hardwareStatus[n]!['pve-manager-version'];
      return typeof v === 'string' && Number.parseInt(v, 10) < 9;
    }),
  );
  const guestConfigs = new Map<string, Record<string, string | number>>();
  const given = input.guestConfig;
  if (given) {
    for (const sid of Object.keys(given)) {
      const entries: Record<string, string | number> = {};
      for (const [k, v] of Object.entries(given[sid]!))
        entries[k] = typeof v === 'boolean' ? (v ? 1 : 0) : typeof v === 'number' ? v : String(v);
      guestConfigs.set(sid, entries);
    }
  }
  return { version, rules, groups, groupOf: pve9 ? new Map() : groupOf, compiled, crs, pve8Nodes, guestConfigs, notes };
}

/**
 * The cluster now as the API shows it. `time` is the wall clock (epoch seconds: timestamps and
 * RRD buckets a client compares with its own clock), not the simulated time. Nodes: online
 * = powered, networked and quorate; the HA node state from the manager status. Guests: every
 * configured service (an HA resource), on the node the HA manager has it on, with its measured
 * usage while running (a value that is not a finite number ≥ 0 is sent as 0) and its static
 * maxima (the simulator's defaults when it has none).
 */
export function servedCluster(view: ClusterView, facts: ServedCaseFacts, time: number): ServedCluster {
  const ms = view.managerStatus;
  const nodeStatus = (ms.node_status ?? {}) as Readonly<Record<string, string>>;
  const nodeRequest = (ms.node_request ?? {}) as Readonly<Record<string, { readonly maintenance?: number }>>;
  const ss = ms.service_status ?? {};
  const nodes: ServedNode[] = [...view.nodes.keys()].sort(compareNames).map((name) => {
    const nv = view.nodes.get(name)!;
    const st = view.nodeStats.get(name);
    const haState = Object.hasOwn(nodeStatus, name) ? nodeStatus[name]! : nv.online ? 'online' : 'unknown';
    return {
      name,
      online: nv.online,
      haState,
      maintenanceRequest: Object.hasOwn(nodeRequest, name) && nodeRequest[name]!.maintenance === 1,
      maxcpu: finite(st?.maxcpu) ?? 0,
      maxmem: finite(st?.maxmem) ?? 0,
      cpu: finite(st?.cpu) ?? 0,
      mem: finite(st?.mem) ?? 0,
      pressureCpu: percent(st?.pressurecpusome),
      pressureMem: percent(st?.pressurememorysome),
      format: facts.pve8Nodes.has(name) ? 'pve8' : 'pve9',
    };
  });
  const guests: ServedGuest[] = [];
  const resources: ServedCluster['ha']['resources'][number][] = [];
  for (const sid of [...view.services.keys()].sort(compareNames)) {
    const sv = view.services.get(sid)!;
    const svc = Object.hasOwn(ss, sid) ? ss[sid] : undefined;
    const dyn = sv.dynamicStats;
    const config = facts.guestConfigs.get(sid);
    guests.push({
      sid,
      node: svc?.node ?? sv.node,
      running: sv.running,
      cpu: sv.running ? (finite(dyn?.cpu) ?? 0) : 0,
      maxcpu: finite(sv.staticStats?.maxcpu) ?? DEFAULT_GUEST_MAXCPU,
      mem: sv.running ? (finite(dyn?.mem) ?? 0) : 0,
      maxmem: finite(sv.staticStats?.maxmem) ?? DEFAULT_GUEST_MAXMEM,
      memhost: finite(dyn?.memhost),
      lock: typeof sv.lock === 'string' && sv.lock !== '' ? sv.lock : undefined,
      // the CRM's state, or the requested one while the CRM has not added the service yet
      hastate: svc?.state ?? sv.state,
      ...(config ? { config } : {}),
    });
    resources.push({
      sid,
      state: sv.state,
      ...(facts.groupOf.has(sid) ? { group: facts.groupOf.get(sid) } : {}),
    });
  }
  return {
    version: facts.version,
    time,
    quorate: [...view.nodes.values()].some((n) => n.online),
    nodes,
    guests,
    ha: {
      master: ms.master_node,
      services: Object.keys(ss)
        .sort(compareNames)
        .map((sid) => {
          const e = ss[sid]!;
          return { sid, state: e.state, node: e.node, target: e.target, uid: e.uid ?? '0' };
        }),
      resources,
      disarm: ms.disarm ? { mode: ms.disarm.mode, state: ms.disarm.state } : undefined,
      lrmModes: Object.fromEntries(view.lrmModes),
    },
    rules: facts.rules,
    groups: facts.groups,
    crs: facts.crs,
  };
}

/** What the HA migrate/relocate endpoint does with a request (see {@link judgeHaMotion}). */
export type HaMotionVerdict =
  | { readonly kind: 'unknown'; readonly message: string }
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'blocked'; readonly blocking: string[] }
  | { readonly kind: 'queue'; readonly comigrated: string[] };

/**
 * What the HA migrate/relocate endpoint does with a request (spec §4.1), on the simulated
 * cluster: `unknown` (not an HA resource: a 500 like the real `die`), `error` (the service is in
 * the error state: a 500), `blocked` (a negative-affinity partner is on or moving to the
 * target: PVE 9 answers `blocking-resources` and queues nothing), or `queue` (the command goes
 * to the CRM; `comigrated` are the positive partners it moves along).
 */
export function judgeHaMotion(
  view: ClusterView,
  compiled: CompiledRules,
  sid: string,
  target: string,
): HaMotionVerdict {
  if (!view.services.has(sid)) return { kind: 'unknown', message: `service '${sid}' is not HA managed` };
  const ss = view.managerStatus.service_status ?? {};
  if (Object.hasOwn(ss, sid) && ss[sid]!.state === 'error')
    return { kind: 'error', message: `service '${sid}' in error state, must be disabled and fixed first` };
  const conflict = findNegativeAffinityConflict(compiled, sid, target, ss);
  if (conflict !== undefined) return { kind: 'blocked', blocking: [conflict] };
  return { kind: 'queue', comigrated: getPositivePartnersToMove(compiled, sid, target, ss).sort(compareNames) };
}

/** `vm:101`, or a bare `101` resolved to the configured `vm:` or `ct:` service (the API accepts both). */
export function resolveSid(view: ClusterView, sid: string): string {
  if (!/^\d+$/.test(sid)) return sid;
  for (const prefix of ['vm', 'ct']) if (view.services.has(`${prefix}:${sid}`)) return `${prefix}:${sid}`;
  return `vm:${sid}`;
}
