import {
  type CompiledRules,
  compileRules,
  getBalancingCandidates,
  type NodePriorities,
  type RulesConfig,
  type ServiceStatus,
  type SidSet,
  transformRules,
} from '@poise/rules';
import { TELEMETRY_MAX } from '@poise/policy';
import { ClusterUsage, compareNames, type MigrationCandidate, MIN_NODE_CAPACITY, nodeLoad } from '@poise/usage';
import { errorMessage } from '../errors';
import type { ClusterSnapshot, GuestSnapshot, NodeSnapshot, PortSnapshot } from '../cluster/port';

/**
 * The one range of a usage value the daemon balances with (cores, bytes): finite, ≥ 0 and at
 * most `@poise/policy`'s `TELEMETRY_MAX` (2^53: byte counts are exact integers up to it, and the
 * policy refuses telemetry above it), node capacities at least `@poise/usage`'s
 * `MIN_NODE_CAPACITY`. The reader passes every finite number on; this model is where a value
 * out of range is found, named and left out — the same rule for every port.
 */
export const USAGE_VALUE_MAX = TELEMETRY_MAX;
/** {@link USAGE_VALUE_MAX} in words, for the messages. */
const USAGE_VALUE_MAX_TEXT = '2^53';

/** A usage value out of range (see {@link USAGE_VALUE_MAX}). */
interface OutOfRange {
  /** `node 'node3'` or `guest 'vm:101'`. */
  readonly owner: string;
  readonly field: string;
  readonly value: number;
  /** The range it should be in (`0..2^53 bytes`). */
  readonly range: string;
}

/** A usable node (online, not in maintenance) that is not in the model, and why. */
export interface LeftOutNode {
  readonly node: string;
  readonly reason: string;
}

/** A guest whose node is not in the snapshot's node list (not counted anywhere). */
interface StrayGuest {
  readonly sid: string;
  readonly node: string;
}

/**
 * The usage model of one round: `@poise/usage` with dynamic aggregation (the measured node
 * stats as given) and the normalised imbalance metric (0..1, the pve-9.2 profile), so the
 * threshold and margin are the datacenter.cfg percentages divided by 100.
 */
export interface UsageModel {
  readonly usage: ClusterUsage;
  /** Nodes in the model: online, not in maintenance, with valid stats; byte order. */
  readonly nodes: readonly string[];
  /** Per node in the model: `load` = (cpu/maxcpu + mem/maxmem)/2 and the two ratios. */
  readonly loads: ReadonlyMap<string, { readonly load: number; readonly cpu: number; readonly mem: number }>;
  /**
   * Per node in the model, the part of its measured usage the guests in the model account for
   * (cores, bytes): the sum of the stats of the guests whose current node it is — the values a
   * scored migration moves. The rest is load the balancer cannot act on.
   */
  readonly services: ReadonlyMap<string, { readonly cpu: number; readonly mem: number }>;
  /** Items left out, one line each (a node or guest with unusable stats); the round goes on without them. */
  readonly problems: readonly string[];
  /**
   * Usable nodes not in the model: a value out of range, stats `@poise/usage` refused, or a
   * node the port could not read whole (`PortSnapshot.nodesLeftOut`). Non-empty = the model is
   * a partial view of the cluster: its imbalance is not the cluster's.
   */
  readonly leftOut: readonly LeftOutNode[];
  /** Every usage value out of range, nodes and guests, in snapshot order (said each round it lasts). */
  readonly outOfRange: readonly OutOfRange[];
  /** Guests on a node the snapshot does not list (said each round it lasts). */
  readonly strays: readonly StrayGuest[];
}

/** How the model is built. */
export interface UsageModelOptions {
  /**
   * `ha-auto-rebalance-memhost`: a guest's memory is its host-side footprint (`memhost`) when
   * the snapshot has it, else the guest-reported `mem`.
   */
  readonly memhost?: boolean;
  /** Node usage to use instead of the measured one (cores, bytes), for the policy's adjusted views. */
  readonly nodeUsage?: ReadonlyMap<string, { readonly cpu: number; readonly mem: number }>;
}

/** A node balancing may use: online in the HA sense and not in maintenance. */
function isUsableNode(node: NodeSnapshot): boolean {
  return node.online && !node.maintenance;
}

/** Whether a guest occupies a node in the model as a resource (running, or an HA resource started or moving). */
function occupies(guest: GuestSnapshot): boolean {
  if (guest.ha) return guest.ha.state === 'started' || guest.ha.state === 'migrate' || guest.ha.state === 'relocate';
  return guest.running;
}

/** Memory of a guest in the model, bytes: `memhost` when asked for and reported, else `mem`. */
function guestMemory(guest: GuestSnapshot, memhost: boolean): number {
  return memhost && guest.stats.memhost !== undefined ? guest.stats.memhost : guest.stats.mem;
}

/** Units of the usage fields, for the messages. */
const FIELD_UNITS: Readonly<Record<string, string>> = {
  cpu: 'cores',
  maxcpu: 'cores',
  mem: 'bytes',
  maxmem: 'bytes',
  memhost: 'bytes',
};

/** The values of `fields` out of range: finite, ≥ `min` (per field) and ≤ {@link USAGE_VALUE_MAX}. */
function outOfRangeValues(
  owner: string,
  fields: readonly (readonly [field: string, value: number | undefined, min: number])[],
): OutOfRange[] {
  const out: OutOfRange[] = [];
  for (const [field, value, min] of fields) {
    if (value === undefined) continue;
    if (!(Number.isFinite(value) && value >= min && value <= USAGE_VALUE_MAX))
      out.push({ owner, field, value, range: `${min}..${USAGE_VALUE_MAX_TEXT} ${FIELD_UNITS[field] ?? ''}`.trim() });
  }
  return out;
}

/** `'maxmem' 1e+30 (not in 1..2^53 bytes)`. */
function describeOutOfRange(v: OutOfRange): string {
  return `'${v.field}' ${String(v.value)} (not in ${v.range})`;
}

/** Named in one line at most; the rest are counted. */
const MAX_NAMED_ITEMS = 4;

/** `a, b, c, d and 3 more`. */
function namedList(items: readonly string[]): string {
  const named = items.slice(0, MAX_NAMED_ITEMS).join('; ');
  return items.length > MAX_NAMED_ITEMS ? `${named}; and ${items.length - MAX_NAMED_ITEMS} more` : named;
}

/**
 * The lines a round says at warn level for each round they last (not once: a value that stays
 * out of range keeps the round's view partial): one for the values out of range, naming owner,
 * field and value, one for the guests on nodes not in the node list. Empty when the read is
 * clean.
 */
export function modelWarnings(model: UsageModel): string[] {
  const lines: string[] = [];
  if (model.outOfRange.length > 0) {
    const items = model.outOfRange.map((v) => `${v.owner} ${describeOutOfRange(v)}`);
    lines.push(`usage values out of range, left out: ${namedList(items)}`);
  }
  if (model.strays.length > 0) {
    const items = model.strays.map((g) => `guest '${g.sid}' on '${g.node}'`);
    lines.push(`guests on a node that is not in the cluster's node list, left out: ${namedList(items)}`);
  }
  return lines;
}

/** Why a round with a partial view decides nothing: `node 'node3' left out ('maxmem' …); …`. */
export function describeLeftOut(leftOut: readonly LeftOutNode[]): string {
  return namedList(leftOut.map((n) => `node '${n.node}' left out (${n.reason})`));
}

/**
 * Builds the usage model from a snapshot. Nodes that are not usable are left out, and with
 * them their guests; a node or guest with a value out of range ({@link USAGE_VALUE_MAX}) or
 * whose stats `@poise/usage` refuses is left out and named (`outOfRange`, `problems`; one bad
 * value never stops the round, but a usable node left out makes the view partial: `leftOut`).
 * A guest on a node the snapshot does not list is named in `strays`. A moving HA resource
 * counts on its source and its target.
 */
export function buildUsageModel(snapshot: PortSnapshot, options: UsageModelOptions = {}): UsageModel {
  const usage = new ClusterUsage({ aggregation: 'dynamic', metric: 'normalized' });
  const problems: string[] = [];
  const loads = new Map<string, { load: number; cpu: number; mem: number }>();
  const services = new Map<string, { cpu: number; mem: number }>();
  const leftOut: LeftOutNode[] = (snapshot.nodesLeftOut ?? []).map((n) => ({ node: n.node, reason: n.reason }));
  const outOfRange: OutOfRange[] = [];
  const strays: StrayGuest[] = [];
  for (const node of snapshot.nodes) {
    if (!isUsableNode(node)) continue;
    const given = options.nodeUsage?.get(node.name);
    const cpu = given ? given.cpu : node.cpu;
    const mem = given ? given.mem : node.mem;
    const bad = outOfRangeValues(`node '${node.name}'`, [
      ['cpu', cpu, 0],
      ['maxcpu', node.maxcpu, MIN_NODE_CAPACITY],
      ['mem', mem, 0],
      ['maxmem', node.maxmem, MIN_NODE_CAPACITY],
    ]);
    if (bad.length > 0) {
      outOfRange.push(...bad);
      leftOut.push({ node: node.name, reason: bad.map(describeOutOfRange).join(', ') });
      continue;
    }
    try {
      usage.addNode(node.name, { cpu, maxcpu: node.maxcpu, mem, maxmem: node.maxmem });
      loads.set(node.name, {
        load: nodeLoad(cpu, node.maxcpu, mem, node.maxmem),
        cpu: cpu / node.maxcpu,
        mem: mem / node.maxmem,
      });
      services.set(node.name, { cpu: 0, mem: 0 });
    } catch (err) {
      problems.push(`node '${node.name}' left out: ${errorMessage(err)}`);
      leftOut.push({ node: node.name, reason: errorMessage(err) });
    }
  }
  const listed = new Set(snapshot.nodes.map((n) => n.name));
  for (const guest of snapshot.guests) {
    if (!listed.has(guest.node)) {
      strays.push({ sid: guest.sid, node: guest.node });
      continue;
    }
    if (!occupies(guest) || !usage.hasNode(guest.node)) continue;
    const target = guest.ha?.target;
    const moving =
      target !== undefined &&
      target !== guest.node &&
      usage.hasNode(target) &&
      (guest.ha?.state === 'migrate' || guest.ha?.state === 'relocate');
    const { cpu, maxcpu, maxmem } = guest.stats;
    const mem = guestMemory(guest, options.memhost === true);
    const bad = outOfRangeValues(`guest '${guest.sid}'`, [
      ['cpu', cpu, 0],
      ['maxcpu', maxcpu, 0],
      ['mem', guest.stats.mem, 0],
      ['maxmem', maxmem, 0],
      ['memhost', guest.stats.memhost, 0],
    ]);
    if (bad.length > 0) {
      outOfRange.push(...bad);
      continue;
    }
    try {
      usage.addResource(guest.sid, {
        stats: { cpu, maxcpu, mem, maxmem },
        state: 'started',
        placement: moving ? { current: guest.node, target } : { current: guest.node },
      });
      const sum = services.get(guest.node)!;
      services.set(guest.node, { cpu: sum.cpu + cpu, mem: sum.mem + mem });
    } catch (err) {
      problems.push(`guest '${guest.sid}' left out: ${errorMessage(err)}`);
    }
  }
  return { usage, nodes: usage.nodeNames(), loads, services, problems, leftOut, outOfRange, strays };
}

function targetsFrom(snapshot: ClusterSnapshot, source: string): string[] {
  return snapshot.nodes
    .filter((n) => isUsableNode(n) && n.name !== source)
    .map((n) => n.name)
    .sort(compareNames);
}

function movable(guest: GuestSnapshot, snapshot: ClusterSnapshot): boolean {
  if (guest.lock !== undefined || guest.template) return false;
  const node = snapshot.nodes.find((n) => n.name === guest.node);
  return node !== undefined && isUsableNode(node);
}

/** The snapshot's HA rules compiled for the placement queries, and what the checks dropped. */
export interface SnapshotRules {
  readonly compiled: CompiledRules;
  /** One line per rule dropped by the feasibility checks (the cluster reports such rules with `errors`). */
  readonly dropped: readonly string[];
}

/**
 * Compiles the snapshot's rules the way the HA manager does every round (`@poise/rules`:
 * feasibility checks, merge of positive groups, implicit negatives, node affinity for positive
 * groups, then compile) over every cluster node.
 */
export function compileSnapshotRules(snapshot: ClusterSnapshot): SnapshotRules {
  const config: RulesConfig = {
    ids: Object.create(null) as RulesConfig['ids'],
    order: Object.create(null) as RulesConfig['order'],
    digest: '',
  };
  snapshot.rules.forEach((rule, i) => {
    const resources = Object.create(null) as SidSet;
    for (const sid of rule.resources) resources[sid] = 1;
    if (rule.type === 'node-affinity') {
      const nodes = Object.create(null) as NodePriorities;
      for (const n of rule.nodes) nodes[n.node] = { priority: n.priority };
      config.ids[rule.id] = { type: 'node-affinity', resources, nodes, strict: rule.strict ? 1 : 0 };
    } else {
      config.ids[rule.id] = { type: 'resource-affinity', resources, affinity: rule.affinity };
    }
    config.order[rule.id] = i + 1;
  });
  const nodes = snapshot.nodes.map((n) => n.name);
  const dropped = transformRules(config, nodes);
  return { compiled: compileRules(config, nodes), dropped };
}

/**
 * The balancing candidates among HA resources, with the HA rules applied (`@poise/rules`
 * `getBalancingCandidates`, the same query the HA manager's own balancer uses): bundles of
 * started, co-located, positively affine resources with no member moving; targets = the
 * leader's highest-priority allowed usable nodes (strict and non-strict node affinity) minus
 * the nodes of its negative partners minus its own node. Usable = online and not in
 * maintenance, so a node in maintenance is never a target. On top of the rules, a bundle is
 * not a candidate when any member is opted out (`auto-rebalance: 0`), locked, a template, or
 * on a node that is not usable. Leaders and targets in byte order.
 */
export function migrationCandidates(
  snapshot: ClusterSnapshot,
  rules: SnapshotRules = compileSnapshotRules(snapshot),
): MigrationCandidate[] {
  const status = Object.create(null) as ServiceStatus;
  const bySid = new Map<string, GuestSnapshot>();
  for (const guest of snapshot.guests) {
    if (!guest.ha) continue;
    bySid.set(guest.sid, guest);
    status[guest.sid] =
      guest.ha.target === undefined
        ? { state: guest.ha.state, node: guest.node }
        : { state: guest.ha.state, node: guest.node, target: guest.ha.target };
  }
  const online = snapshot.nodes.filter(isUsableNode).map((n) => n.name);
  const out: MigrationCandidate[] = [];
  for (const c of getBalancingCandidates(rules.compiled, status, online)) {
    const members = c.resources.map((sid) => bySid.get(sid)!);
    if (!members.every((g) => g.ha!.autoRebalance && movable(g, snapshot))) continue;
    out.push({ leader: c.leader, resources: c.resources, targets: c.targets });
  }
  return out;
}

/**
 * The balancing candidates among guests that are not HA resources (balanced only when
 * `guests.non-ha` is on): running, not locked, not templates, on a usable node; each alone,
 * every other usable node a target. The guest migrate endpoint's precondition check runs on
 * the chosen one before it is moved.
 */
export function nonHaCandidates(snapshot: ClusterSnapshot): MigrationCandidate[] {
  const out: MigrationCandidate[] = [];
  for (const guest of [...snapshot.guests].sort((a, b) => compareNames(a.sid, b.sid))) {
    if (guest.ha || !guest.running || !movable(guest, snapshot)) continue;
    const targets = targetsFrom(snapshot, guest.node);
    if (targets.length === 0) continue;
    out.push({ leader: guest.sid, resources: [guest.sid], targets });
  }
  return out;
}

/**
 * Candidates restricted to what the usage model holds (a node or guest left out for bad stats
 * cannot be scored); a candidate without a remaining target is dropped.
 */
export function restrictToModel(candidates: readonly MigrationCandidate[], model: UsageModel): MigrationCandidate[] {
  const out: MigrationCandidate[] = [];
  for (const c of candidates) {
    if (!c.resources.every((sid) => model.usage.hasResource(sid))) continue;
    const targets = c.targets.filter((t) => model.usage.hasNode(t));
    if (targets.length > 0) out.push(targets.length === c.targets.length ? c : { ...c, targets });
  }
  return out;
}

/**
 * Whether a motion is queued or running anywhere in the cluster (an HA resource in
 * `migrate`/`relocate`, or a guest locked by a migration). Queued CRM commands are not
 * visible through the API; the daemon's own motion record covers those it issued.
 */
export function clusterMotionInFlight(snapshot: ClusterSnapshot): boolean {
  return snapshot.guests.some((g) => g.ha?.state === 'migrate' || g.ha?.state === 'relocate' || g.lock === 'migrate');
}
