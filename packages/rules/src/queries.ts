/**
 * Placement queries over compiled rules, used by `select_service_node`, the auto-rebalance
 * bundles and `queue_resource_motion` (spec §3.6, §3.7). All functions are pure except the two
 * `apply*` functions, which narrow the `pri` set they are given in place (like the reference)
 * and also return it.
 */
import { getOwn } from './records';
import type { CompiledRules, ServiceStatus, ServiceStatusEntry } from './types';
import { sortNames } from '@poise/usage';

/** Node sets from node affinity: `allowed` may run the resource, `pri` are the preferred ones. */
export interface NodeAffinityResult {
  allowed: Set<string>;
  pri: Set<string>;
}

/**
 * Node affinity of `sid` among `onlineNodes` (get_node_affinity):
 * - no rule: `allowed` and `pri` are both all online nodes (two distinct sets);
 * - otherwise `allowed` = the rule's online nodes (including -1 entries of non-strict rules) and
 *   `pri` = the online nodes with the highest priority among them (both empty if none is online).
 */
export function getNodeAffinity(
  compiled: CompiledRules,
  sid: string,
  onlineNodes: Iterable<string>,
): NodeAffinityResult {
  const online = new Set(onlineNodes);
  const rule = getOwn(compiled['node-affinity'], sid);
  if (!rule) return { allowed: new Set(online), pri: new Set(online) };

  const allowed = new Set<string>();
  let highest = Number.NEGATIVE_INFINITY;
  for (const node of sortNames(Object.keys(rule.nodes))) {
    if (!online.has(node)) continue;
    allowed.add(node);
    highest = Math.max(highest, (rule.nodes[node] as { priority: number }).priority);
  }
  const pri = new Set([...allowed].filter((node) => (rule.nodes[node] as { priority: number }).priority === highest));
  return { allowed, pri };
}

/** States in which a resource uses its current node (Usage.pm get_used_service_nodes). */
export const CURRENT_NODE_STATES: ReadonlySet<string> = new Set([
  'started',
  'request_stop',
  'fence',
  'freeze',
  'error',
  'recovery',
  'migrate',
  'relocate',
]);

/** States in which a resource also uses its target node. */
export const TARGET_NODE_STATES: ReadonlySet<string> = new Set(['migrate', 'relocate', 'request_start_balance']);

/** Nodes a resource occupies; nodes outside `onlineNodes` (when given) do not count. */
export interface UsedServiceNodes {
  current?: string;
  target?: string;
}

/**
 * Which nodes a resource in `entry` occupies (spec §3.6 "Which nodes a service puts load on"):
 * the current node in started/request_stop/fence/freeze/error/recovery/migrate/relocate, the
 * target node in migrate/relocate/request_start_balance; each only if online. `stopped` and
 * `request_start` occupy nothing. Without `onlineNodes` every node counts as online.
 */
export function getUsedServiceNodes(entry: ServiceStatusEntry, onlineNodes?: Iterable<string>): UsedServiceNodes {
  const online = onlineNodes === undefined || onlineNodes instanceof Set ? onlineNodes : new Set(onlineNodes);
  const isOnline = (node: string | undefined): node is string =>
    node !== undefined && node !== '' && (online === undefined || online.has(node));
  const used: UsedServiceNodes = {};
  if (CURRENT_NODE_STATES.has(entry.state) && isOnline(entry.node)) used.current = entry.node;
  if (TARGET_NODE_STATES.has(entry.state) && isOnline(entry.target)) used.target = entry.target;
  return used;
}

/** Counts of partners per node: `together` (positive), `separate` (negative). */
export interface ResourceAffinityResult {
  together: Map<string, number>;
  separate: Map<string, number>;
}

/**
 * Where the affinity partners of `sid` are (get_resource_affinity). For every positive partner
 * in `serviceStatus`, its used target node if any, else its used current node, counts once in
 * `together`; for every negative partner, both its used current and target node count in
 * `separate`. Only presence in `separate` matters to the callers. Partners without a status
 * entry are ignored. Maps are keyed in byte order of node names.
 */
export function getResourceAffinity(
  compiled: CompiledRules,
  sid: string,
  serviceStatus: ServiceStatus,
  onlineNodes?: Iterable<string>,
): ResourceAffinityResult {
  // one set for all partners (getUsedServiceNodes reuses a Set it is given)
  const online = onlineNodes === undefined ? undefined : new Set(onlineNodes);
  const together = new Map<string, number>();
  const separate = new Map<string, number>();
  const bump = (map: Map<string, number>, node: string) => map.set(node, (map.get(node) ?? 0) + 1);

  for (const csid of getPositivePartners(compiled, sid)) {
    const entry = getOwn(serviceStatus, csid);
    if (!entry) continue;
    const used = getUsedServiceNodes(entry, online);
    const node = used.target ?? used.current;
    if (node !== undefined) bump(together, node);
  }
  for (const csid of getNegativePartners(compiled, sid)) {
    const entry = getOwn(serviceStatus, csid);
    if (!entry) continue;
    const used = getUsedServiceNodes(entry, online);
    if (used.current !== undefined) bump(separate, used.current);
    if (used.target !== undefined && used.target !== used.current) bump(separate, used.target);
  }
  return { together: sortMap(together), separate: sortMap(separate) };
}

function sortMap(map: Map<string, number>): Map<string, number> {
  return new Map(sortNames(map.keys()).map((node) => [node, map.get(node) as number]));
}

/**
 * Whether a resource may stay on `node` given its partners (is_allowed_on_node): a positive
 * partner is there, or no negative partner is there.
 */
export function isAllowedOnNode(
  together: ReadonlyMap<string, number>,
  separate: ReadonlyMap<string, number>,
  node: string,
): boolean {
  return (together.get(node) ?? 0) > 0 || !separate.has(node);
}

/**
 * Removes every node of `separate` from `pri` (apply_negative_resource_affinity).
 * Mutates `pri` in place and returns it.
 */
export function applyNegativeResourceAffinity(separate: ReadonlyMap<string, number>, pri: Set<string>): Set<string> {
  for (const node of separate.keys()) pri.delete(node);
  return pri;
}

/**
 * Keeps only the majority node of `together ∩ pri` in `pri` (apply_positive_resource_affinity):
 * candidates sorted by node name (byte order), then stable by count descending; the first wins.
 * Without a candidate `pri` is left unchanged. Mutates `pri` in place and returns it.
 *
 * Example: together {node1: 1, node3: 2, node2: 2}, pri {node1, node2, node3}
 * → by name node1, node2, node3 → by count node2 (2), node3 (2), node1 (1) → pri {node2}.
 */
export function applyPositiveResourceAffinity(together: ReadonlyMap<string, number>, pri: Set<string>): Set<string> {
  const candidates = sortNames([...together.keys()].filter((node) => pri.has(node)));
  if (candidates.length === 0) return pri;
  candidates.sort((a, b) => (together.get(b) as number) - (together.get(a) as number));
  const majority = candidates[0] as string;
  for (const node of [...pri]) if (node !== majority) pri.delete(node);
  return pri;
}

/** Resources that must share a node with `sid`, sorted (empty if none). */
export function getPositivePartners(compiled: CompiledRules, sid: string): string[] {
  return sortNames(Object.keys(getOwn(compiled['resource-affinity'].positive, sid) ?? {}));
}

/** Resources that must not share a node with `sid`, sorted (empty if none). */
export function getNegativePartners(compiled: CompiledRules, sid: string): string[] {
  return sortNames(Object.keys(getOwn(compiled['resource-affinity'].negative, sid) ?? {}));
}

/** States in which a resource is in motion; a bundle with such a member is not stationary. */
const MOVING_STATES: ReadonlySet<string> = new Set(['migrate', 'relocate']);

/**
 * Bundles of started, co-located resources that can be moved together by auto-rebalance
 * (get_active_stationary_resource_bundles, spec §3.7 step 4). For each started sid in sorted
 * order: its positive partners join it; a partner in migrate/relocate drops the whole bundle;
 * partners in other non-started states (or without status) are skipped; a bundle spanning
 * several nodes is dropped. The key is the leader (first sid in byte order); the value the
 * sorted members. Map iteration is in leader order.
 */
export function getActiveStationaryResourceBundles(
  compiled: CompiledRules,
  serviceStatus: ServiceStatus,
): Map<string, string[]> {
  const bundles = new Map<string, string[]>();
  for (const sid of sortNames(Object.keys(serviceStatus))) {
    const entry = serviceStatus[sid] as ServiceStatusEntry;
    if (entry.state !== 'started') continue;
    const members = [sid];
    const nodes = new Set([entry.node]);
    let moving = false;
    for (const csid of getPositivePartners(compiled, sid)) {
      const partner = getOwn(serviceStatus, csid);
      if (!partner) continue;
      if (MOVING_STATES.has(partner.state)) {
        moving = true;
        break;
      }
      if (partner.state !== 'started') continue;
      members.push(csid);
      nodes.add(partner.node);
    }
    if (moving || nodes.size > 1) continue;
    const sorted = sortNames(members);
    bundles.set(sorted[0] as string, sorted);
  }
  return new Map(sortNames(bundles.keys()).map((leader) => [leader, bundles.get(leader) as string[]]));
}

/**
 * First negative partner of `sid` (sorted) that is on `target` or moving to it, which makes a
 * motion of `sid` to `target` illegal (queue_resource_motion); undefined if there is none.
 */
export function findNegativeAffinityConflict(
  compiled: CompiledRules,
  sid: string,
  target: string,
  serviceStatus: ServiceStatus,
): string | undefined {
  return getNegativePartners(compiled, sid).find((csid) => {
    const entry = getOwn(serviceStatus, csid);
    return entry !== undefined && (entry.node === target || entry.target === target);
  });
}

/**
 * Positive partners of `sid` (sorted) that must follow it to `target`: those with a status
 * entry that are neither on `target` nor moving to it (queue_resource_motion).
 */
export function getPositivePartnersToMove(
  compiled: CompiledRules,
  sid: string,
  target: string,
  serviceStatus: ServiceStatus,
): string[] {
  return getPositivePartners(compiled, sid).filter((csid) => {
    const entry = getOwn(serviceStatus, csid);
    return entry !== undefined && entry.node !== target && entry.target !== target;
  });
}

/** A movable bundle and the nodes it may go to (the shape of `@poise/usage`'s `MigrationCandidate`). */
export interface BalancingCandidate {
  /** The bundle's first sid in byte order; scored migrations name it. */
  leader: string;
  /** The members, sorted (leader included). */
  resources: string[];
  /** Allowed targets, sorted. */
  targets: string[];
}

/**
 * The auto-rebalance candidates (spec §3.7 step 4): every movable bundle
 * (`getActiveStationaryResourceBundles`: started, co-located, positively affine resources
 * with no member moving), with as targets the leader's highest-priority allowed nodes among
 * `onlineNodes` ({@link getNodeAffinity} `pri`: strict and non-strict node affinity), minus
 * the nodes its negative partners use or move to ({@link applyNegativeResourceAffinity}),
 * minus the node it is on. A bundle left without a target is not listed. Leaders in byte
 * order. This is what the HA manager's balancer offers; a daemon balancing a real cluster
 * offers the same so that HA never moves a balanced resource back (failback).
 */
export function getBalancingCandidates(
  compiled: CompiledRules,
  serviceStatus: ServiceStatus,
  onlineNodes: Iterable<string>,
): BalancingCandidate[] {
  const online = [...onlineNodes];
  const bundles = getActiveStationaryResourceBundles(compiled, serviceStatus);
  const candidates: BalancingCandidate[] = [];
  for (const [leader, members] of bundles) {
    const entry = serviceStatus[leader] as ServiceStatusEntry;
    const { pri } = getNodeAffinity(compiled, leader, online);
    const { separate } = getResourceAffinity(compiled, leader, serviceStatus, online);
    applyNegativeResourceAffinity(separate, pri);
    pri.delete(entry.node);
    if (pri.size === 0) continue;
    candidates.push({ leader, resources: [...members], targets: sortNames(pri) });
  }
  return candidates;
}

/** {@link getBalancingCandidates}, remembering its last answer (see {@link balancingCandidatesCache}). */
export type CachedBalancingCandidates = (
  compiled: CompiledRules,
  serviceStatus: ServiceStatus,
  onlineNodes: readonly string[],
) => readonly Readonly<BalancingCandidate>[];

/**
 * {@link getBalancingCandidates} for a caller that asks every round (the balancer): the same
 * answer, worked out again only when something the query reads changed since the last call —
 * the compiled rules (by identity: compiling makes new rules, it never changes them), the
 * online nodes, the set of services, or any service's `state`, `node` or `target`. A round of
 * a cluster that stands still costs one pass over the service status instead of the rules of
 * every bundle. The candidates are frozen: they may be the ones the previous call returned.
 */
export function balancingCandidatesCache(): CachedBalancingCandidates {
  let last:
    | {
        compiled: CompiledRules;
        online: readonly string[];
        sids: string[];
        fields: (string | undefined)[];
        candidates: readonly Readonly<BalancingCandidate>[];
      }
    | undefined;
  return (compiled, serviceStatus, onlineNodes) => {
    const sids = Object.keys(serviceStatus);
    const fields = new Array<string | undefined>(sids.length * 3);
    for (let i = 0; i < sids.length; i++) {
      const entry = serviceStatus[sids[i]!]!;
      fields[3 * i] = entry.state;
      fields[3 * i + 1] = entry.node;
      fields[3 * i + 2] = entry.target;
    }
    if (
      last &&
      last.compiled === compiled &&
      sameList(last.online, onlineNodes) &&
      sameList(last.sids, sids) &&
      sameList(last.fields, fields)
    )
      return last.candidates;
    const candidates = Object.freeze(
      getBalancingCandidates(compiled, serviceStatus, onlineNodes).map((c) =>
        Object.freeze({ ...c, resources: Object.freeze(c.resources), targets: Object.freeze(c.targets) }),
      ),
    ) as readonly Readonly<BalancingCandidate>[];
    last = { compiled, online: [...onlineNodes], sids, fields, candidates };
    return candidates;
  };
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
