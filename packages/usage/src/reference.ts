/**
 * The direct reference implementation (the oracle): rebuilds the aggregated node stats from a
 * plain snapshot and evaluates every alternative with the spec's operation order literally
 * (spec §4). Slow on purpose — O(resources + nodes²) per start score, O(nodes) per migration
 * pair — and obviously correct; the fast {@link ClusterUsage} is tested against it.
 */
import { type ImbalanceMetric, imbalance } from '@poise/imbalance';
import { rankScores, scoreAlternatives } from '@poise/topsis';
import { UsageError } from './errors';
import { compareNames, compareScoredMigrations, nodeLoad, schedulerCriteria, truncateImbalance } from './kernels';
import {
  candidateErrors,
  checkAggregatedStats,
  checkAggregation,
  checkCandidateShape,
  checkCandidatesArray,
  checkMethodAndLimit,
  checkMetric,
  checkName,
  checkPlacementShape,
  checkState,
  checkStats,
  placementOk,
  statsOk,
} from './validate';
import type {
  Aggregation,
  MigrationCandidate,
  MigrationMethod,
  NodeScore,
  NodeStats,
  ResourceSpec,
  ResourceStats,
  ScoredMigration,
} from './types';

/**
 * A plain usage snapshot. Node order does not matter (nodes are sorted by name); the order of
 * `resources` is the order their stats are added to a node's stats.
 */
export interface UsageSnapshot {
  readonly aggregation: Aggregation;
  readonly nodes: ReadonlyArray<{ readonly name: string; readonly stats: NodeStats }>;
  readonly resources: ReadonlyArray<ResourceSpec & { readonly sid: string }>;
}

/** Mutable node stats (the reference mutates copies, like the Rust `NodeStats`). */
export interface MutableNodeStats {
  cpu: number;
  maxcpu: number;
  mem: number;
  maxmem: number;
}

/**
 * Checks the node stats a reference mutator is given and the resource fields it reads (finite,
 * >= 0, capacities >= 1), so that a rejected call leaves `node` as it was.
 */
function checkMutation(
  node: MutableNodeStats,
  r: Partial<ResourceStats>,
  fields: readonly ('cpu' | 'maxcpu' | 'mem' | 'maxmem')[],
  what: string,
): void {
  checkAggregatedStats([node], `${what}: node`);
  if (typeof r !== 'object' || r === null)
    throw new UsageError('invalid-stats', `${what}: resource stats must be an object`);
  for (const field of fields) {
    const v = r[field];
    if (typeof v !== 'number' || !(v >= 0 && v < Infinity)) {
      throw new UsageError(
        'invalid-stats',
        `${what}: resource '${field}' must be a finite number >= 0, got ${String(v)}`,
      );
    }
  }
}

/** Assigns cpu and mem unless the result overflows (then an error, and `node` is unchanged). */
function assignFinite(node: MutableNodeStats, cpu: number, mem: number, what: string): void {
  if (!(cpu < Infinity && mem < Infinity) || !(cpu / node.maxcpu + mem / node.maxmem < Infinity)) {
    throw new UsageError('invalid-stats', `${what}: the node's usage overflows`);
  }
  node.cpu = cpu;
  node.mem = mem;
}

/**
 * `add_started_resource`: cpu += (maxcpu 0 ? node maxcpu : maxcpu), mem += maxmem. The node's
 * stats must be finite and >= 0 with capacities >= 1, the resource's `maxcpu`/`maxmem` finite and
 * >= 0, and the result finite (`invalid-stats` otherwise; the node is then unchanged).
 */
export function addStartedResource(node: MutableNodeStats, r: ResourceStats): void {
  checkMutation(node, r, ['maxcpu', 'maxmem'], 'addStartedResource');
  assignFinite(node, node.cpu + (r.maxcpu === 0 ? node.maxcpu : r.maxcpu), node.mem + r.maxmem, 'addStartedResource');
}

/** `add_running_resource`: cpu += cpu, mem += mem (checked like {@link addStartedResource}). */
export function addRunningResource(node: MutableNodeStats, r: { cpu: number; mem: number }): void {
  checkMutation(node, r, ['cpu', 'mem'], 'addRunningResource');
  assignFinite(node, node.cpu + r.cpu, node.mem + r.mem, 'addRunningResource');
}

/** `remove_running_resource`: cpu = max(0, cpu − r.cpu), mem saturating at 0 (checked like {@link addStartedResource}). */
export function removeRunningResource(node: MutableNodeStats, r: { cpu: number; mem: number }): void {
  checkMutation(node, r, ['cpu', 'mem'], 'removeRunningResource');
  node.cpu = Math.max(0, node.cpu - r.cpu);
  node.mem = Math.max(0, node.mem - r.mem);
}

/** The same three operations on stats already validated (the reference's inner loops). */
function addStarted(node: MutableNodeStats, r: ResourceStats): void {
  node.cpu += r.maxcpu === 0 ? node.maxcpu : r.maxcpu;
  node.mem += r.maxmem;
}
function addRunning(node: MutableNodeStats, r: { cpu: number; mem: number }): void {
  node.cpu += r.cpu;
  node.mem += r.mem;
}
function removeRunning(node: MutableNodeStats, r: { cpu: number; mem: number }): void {
  node.cpu = Math.max(0, node.cpu - r.cpu);
  node.mem = Math.max(0, node.mem - r.mem);
}

/**
 * Checks a snapshot as {@link ClusterUsage} checks its input: a known aggregation, distinct
 * non-empty node names with valid node stats, distinct sids with valid stats, state and a
 * placement on existing nodes. Errors name `snapshot.nodes[i]` / `snapshot.resources[i]`.
 */
export function validateSnapshot(snapshot: UsageSnapshot): void {
  if (typeof snapshot !== 'object' || snapshot === null)
    throw new UsageError('invalid-argument', 'snapshot: expected { aggregation, nodes, resources }');
  checkAggregation(snapshot.aggregation);
  // checked through `unknown` copies: Array.isArray would narrow the typed arrays themselves to any[]
  const givenNodes: unknown = snapshot.nodes;
  const givenResources: unknown = snapshot.resources;
  if (!Array.isArray(givenNodes)) throw new UsageError('invalid-argument', 'snapshot.nodes: expected an array');
  if (!Array.isArray(givenResources)) throw new UsageError('invalid-argument', 'snapshot.resources: expected an array');
  const nodes = new Set<string>();
  const nodeList = snapshot.nodes;
  for (let i = 0; i < nodeList.length; i++) {
    const n = nodeList[i]!;
    if (typeof n?.name !== 'string' || n.name === '') checkName('node', n?.name, `snapshot.nodes[${i}].name`);
    if (nodes.has(n.name))
      throw new UsageError('duplicate-node', `snapshot.nodes[${i}]: node '${n.name}' already exists`);
    nodes.add(n.name);
    if (!statsOk(n.stats, true)) checkStats(`snapshot.nodes[${i}]: node '${n.name}'`, n.stats, true);
  }
  // one pass, nothing built unless a check fails (the reference functions validate on every call)
  const sids = new Set<string>();
  const resources = snapshot.resources;
  for (let i = 0; i < resources.length; i++) {
    const r = resources[i]!;
    const sid = r?.sid;
    if (typeof sid !== 'string' || sid === '') checkName('resource', sid, `snapshot.resources[${i}].sid`);
    if (sids.size === sids.add(sid).size)
      throw new UsageError('duplicate-resource', `snapshot.resources[${i}]: resource '${sid}' already exists`);
    if (!statsOk(r.stats, false)) checkStats(`snapshot.resources[${i}]: resource '${sid}'`, r.stats, false);
    const state = r.state;
    if (state !== 'started' && state !== 'starting' && state !== 'stopped') checkState(sid, state);
    const placement = r.placement;
    if (!placementOk(placement)) checkPlacementShape(sid, placement);
    if (!nodes.has(placement.current))
      throw new UsageError('unknown-node', `resource '${sid}' is on unknown node '${placement.current}'`);
    if (placement.target !== undefined && !nodes.has(placement.target)) {
      throw new UsageError('unknown-node', `resource '${sid}' is on unknown node '${placement.target}'`);
    }
  }
}

/** Which view of the cluster is aggregated: balancing/imbalance, or start scoring. */
export type AggregationPurpose = 'balance' | 'start';

/**
 * Aggregated node stats in sorted node order (spec §4.2): static adds every assigned resource
 * as started; dynamic adds `starting` resources as started only for start scoring. The snapshot
 * is validated first ({@link validateSnapshot}).
 */
export function referenceAggregate(
  snapshot: UsageSnapshot,
  purpose: AggregationPurpose,
): { names: string[]; stats: MutableNodeStats[] } {
  validateSnapshot(snapshot);
  if (purpose !== 'balance' && purpose !== 'start')
    throw new UsageError('invalid-argument', `unknown aggregation purpose '${String(purpose)}'`);
  return aggregate(snapshot, purpose);
}

function aggregate(
  snapshot: UsageSnapshot,
  purpose: AggregationPurpose,
): { names: string[]; stats: MutableNodeStats[] } {
  const names = snapshot.nodes.map((n) => n.name).sort(compareNames);
  const byName = new Map<string, MutableNodeStats>();
  for (const n of snapshot.nodes) byName.set(n.name, { ...n.stats });
  const stats = names.map((name) => byName.get(name)!);
  for (const r of snapshot.resources) {
    const counted =
      snapshot.aggregation === 'static' ||
      (snapshot.aggregation === 'dynamic' && purpose === 'start' && r.state === 'starting');
    for (const side of placementNodes(r)) {
      const node = byName.get(side);
      if (node === undefined) throw new UsageError('unknown-node', `resource '${r.sid}' is on unknown node '${side}'`);
      if (counted) addStarted(node, r.stats);
    }
  }
  return { names, stats };
}

function placementNodes(r: ResourceSpec & { readonly sid: string }): string[] {
  const { current, target } = r.placement;
  if (target === undefined) return [current];
  if (target === current) {
    throw new UsageError('invalid-placement', `resource '${r.sid}' moves from '${current}' to itself`);
  }
  return [current, target];
}

/**
 * The 4 scheduler criteria of a cluster state (spec §4.5), folded over the nodes in order.
 * `stats`: at least one node, each with finite stats >= 0, capacities >= 1 and a finite load
 * (`invalid-argument` / `invalid-stats` otherwise). Where a sum of squared loads would overflow
 * (loads near 1e154, beyond any {@link ClusterUsage} state) the root mean square is taken over
 * the loads divided by the largest instead, so the criteria are always finite.
 */
export function referenceCriteria(stats: readonly MutableNodeStats[]): number[] {
  checkAggregatedStats(stats, 'stats');
  if (stats.length === 0) throw new UsageError('invalid-argument', 'stats: the criteria need at least one node');
  return criteria(stats);
}

function criteria(stats: readonly MutableNodeStats[]): number[] {
  const n = stats.length;
  let cpuSquares = 0;
  let memSquares = 0;
  let cpuHighest = 0;
  let memHighest = 0;
  for (const node of stats) {
    const cpuLoad = node.cpu / node.maxcpu;
    const memLoad = node.mem / node.maxmem;
    cpuSquares += cpuLoad * cpuLoad;
    memSquares += memLoad * memLoad;
    cpuHighest = Math.max(cpuHighest, cpuLoad);
    memHighest = Math.max(memHighest, memLoad);
  }
  const cpuRms =
    cpuSquares < Infinity
      ? Math.sqrt(cpuSquares / n)
      : scaledRms(
          stats.map((s) => s.cpu / s.maxcpu),
          cpuHighest,
        );
  const memRms =
    memSquares < Infinity
      ? Math.sqrt(memSquares / n)
      : scaledRms(
          stats.map((s) => s.mem / s.maxmem),
          memHighest,
        );
  return [1 + cpuRms, 1 + cpuHighest, 1 + memRms, 1 + memHighest];
}

/** Root mean square of non-negative loads whose squares overflow: highest·√(Σ(l/highest)²/n). */
function scaledRms(loads: readonly number[], highest: number): number {
  let squares = 0;
  for (const l of loads) squares += (l / highest) * (l / highest);
  return highest * Math.sqrt(squares / loads.length);
}

/**
 * Imbalance of a cluster state under `metric` (spec §4.3); `stats` checked like
 * {@link referenceCriteria}'s (an empty array is allowed: imbalance 0).
 */
export function referenceImbalanceOf(stats: readonly MutableNodeStats[], metric: ImbalanceMetric): number {
  checkAggregatedStats(stats, 'stats');
  checkMetric(metric);
  return imbalanceOf(stats, metric);
}

function imbalanceOf(stats: readonly MutableNodeStats[], metric: ImbalanceMetric): number {
  return imbalance(
    stats.map((s) => nodeLoad(s.cpu, s.maxcpu, s.mem, s.maxmem)),
    metric,
  );
}

/** Node imbalance of the balancing view (static: started aggregation; dynamic: measured stats). */
export function referenceNodeImbalance(snapshot: UsageSnapshot, metric: ImbalanceMetric): number {
  checkMetric(metric);
  validateSnapshot(snapshot);
  requireLoadAggregation(snapshot.aggregation, 'nodeImbalance');
  return imbalanceOf(aggregate(snapshot, 'balance').stats, metric);
}

/**
 * Start scores, one per node in sorted order. `basic`: the number of resources whose current or
 * target node it is (**lower is better**). `static`/`dynamic`: the TOPSIS score of the state
 * with the resource added as started on that node, over all nodes (**higher is better**, 0..1).
 */
export function referenceScoreNodesToStart(snapshot: UsageSnapshot, stats: ResourceStats): NodeScore[] {
  validateSnapshot(snapshot);
  checkStats('resource to start', stats, false);
  if (snapshot.aggregation === 'basic') {
    const names = snapshot.nodes.map((n) => n.name).sort(compareNames);
    const counts = new Map(names.map((name) => [name, 0]));
    for (const r of snapshot.resources) {
      for (const side of placementNodes(r)) {
        const count = counts.get(side);
        if (count === undefined)
          throw new UsageError('unknown-node', `resource '${r.sid}' is on unknown node '${side}'`);
        counts.set(side, count + 1);
      }
    }
    return names.map((node) => ({ node, score: counts.get(node)! }));
  }
  const { names, stats: base } = aggregate(snapshot, 'start');
  const rows = names.map((_, k) => {
    const state = base.map((s) => ({ ...s }));
    addStarted(state[k]!, stats);
    return criteria(state);
  });
  const scores = scoreAlternatives(schedulerCriteria, rows);
  return names.map((node, k) => ({ node, score: scores[k]! }));
}

/** A validated candidate: its source node, bundle stats sum and targets. */
interface ResolvedCandidate {
  readonly sid: string;
  readonly source: string;
  readonly bundleCpu: number;
  readonly bundleMem: number;
  readonly targets: readonly string[];
}

/**
 * Validates candidates against the snapshot like `decompose_compact_migration_candidates`:
 * the leader and every member must exist, be stationary, and sit on the leader's node; and, as
 * {@link ClusterUsage.bestBalancingMigrations} documents, no leader twice, no member twice in a
 * bundle, the leader in its own bundle, no target that is the source or is listed twice. Every
 * leader and member first, then every target (same order and words as the fast path). The
 * bundle's stats are the field-wise sum of its members, folded from 0 in member order.
 */
function resolveCandidates(
  candidates: readonly MigrationCandidate[],
  lookup: (sid: string) => ResourceSpec | undefined,
  hasNode: (name: string) => boolean,
): ResolvedCandidate[] {
  checkCandidatesArray(candidates);
  const leaders = new Map<string, number>();
  const resolved = candidates.map((c, k) => {
    checkCandidateShape(c, k);
    const leader = lookup(c.leader);
    if (leader === undefined)
      throw new UsageError('invalid-candidate', `candidate leader '${c.leader}' does not exist`);
    const first = leaders.get(c.leader);
    if (first !== undefined) throw candidateErrors.duplicateLeader(k, c.leader, first);
    leaders.set(c.leader, k);
    if (leader.placement.target !== undefined) {
      throw new UsageError('invalid-candidate', `candidate leader '${c.leader}' is not stationary`);
    }
    const source = leader.placement.current;
    let bundleCpu = 0;
    let bundleMem = 0;
    const members = new Set<string>();
    c.resources.forEach((sid, m) => {
      const member = lookup(sid);
      if (member === undefined) {
        throw new UsageError('invalid-candidate', `resource '${sid}' of candidate '${c.leader}' does not exist`);
      }
      if (members.has(sid)) throw candidateErrors.duplicateMember(k, m, sid, c.leader);
      members.add(sid);
      if (member.placement.target !== undefined) {
        throw new UsageError('invalid-candidate', `resource '${sid}' of candidate '${c.leader}' is not stationary`);
      }
      if (member.placement.current !== source) {
        throw new UsageError(
          'invalid-candidate',
          `resource '${sid}' of candidate '${c.leader}' is on '${member.placement.current}', not on '${source}'`,
        );
      }
      bundleCpu += member.stats.cpu;
      bundleMem += member.stats.mem;
    });
    if (!members.has(c.leader)) throw candidateErrors.leaderNotMember(k, c.leader);
    return { sid: c.leader, source, bundleCpu, bundleMem, targets: c.targets };
  });
  resolved.forEach((c, k) => {
    const seen = new Set<string>();
    c.targets.forEach((t, j) => {
      if (!hasNode(t))
        throw new UsageError('unknown-node', `target node '${t}' of candidate '${c.sid}' does not exist`);
      if (t === c.source) throw candidateErrors.selfMove(k, j, t, c.sid);
      if (seen.has(t)) throw candidateErrors.duplicateTarget(k, j, t, c.sid);
      seen.add(t);
    });
  });
  return resolved;
}

/**
 * Best balancing migrations (spec §4.4, §4.5), first `limit`:
 * - `bruteforce`: every (candidate, target) by truncated imbalance, then (sid, source, target);
 * - `topsis`: one alternative per (candidate, target) in input order, stable rank by score.
 * The reported imbalance is always the truncated imbalance after the move under `metric`.
 */
export function referenceBestBalancingMigrations(
  snapshot: UsageSnapshot,
  candidates: readonly MigrationCandidate[],
  method: MigrationMethod,
  limit: number,
  metric: ImbalanceMetric,
): ScoredMigration[] {
  validateSnapshot(snapshot);
  requireLoadAggregation(snapshot.aggregation, 'bestBalancingMigrations');
  checkMethodAndLimit(method, limit);
  checkMetric(metric);
  const bySid = new Map(snapshot.resources.map((r) => [r.sid, r]));
  const { names, stats: base } = aggregate(snapshot, 'balance');
  const nameSet = new Set(names);
  const resolved = resolveCandidates(
    candidates,
    (sid) => bySid.get(sid),
    (name) => nameSet.has(name),
  );
  // one scratch copy of the cluster state, reset before every pair (no per-pair allocation)
  const state = base.map((s) => ({ ...s }));
  const stateAfter = (c: ResolvedCandidate, target: string): MutableNodeStats[] => {
    for (let i = 0; i < base.length; i++) Object.assign(state[i]!, base[i]!);
    const bundle = { cpu: c.bundleCpu, mem: c.bundleMem };
    removeRunning(state[names.indexOf(c.source)]!, bundle);
    addRunning(state[names.indexOf(target)]!, bundle);
    return state;
  };
  const scored = (c: ResolvedCandidate, target: string): ScoredMigration => ({
    sid: c.sid,
    source: c.source,
    target,
    imbalance: truncateImbalance(imbalanceOf(stateAfter(c, target), metric)),
  });
  if (method === 'bruteforce') {
    const all: ScoredMigration[] = [];
    for (const c of resolved) for (const target of c.targets) all.push(scored(c, target));
    return all.sort(compareScoredMigrations).slice(0, Math.max(0, limit));
  }
  const pairs: [ResolvedCandidate, string][] = [];
  const rows: number[][] = [];
  for (const c of resolved) {
    for (const target of c.targets) {
      pairs.push([c, target]);
      rows.push(criteria(stateAfter(c, target)));
    }
  }
  return rankScores(scoreAlternatives(schedulerCriteria, rows))
    .slice(0, Math.max(0, limit))
    .map((i) => scored(...pairs[i]!));
}

/** Throws unless the aggregation carries loads (static or dynamic). */
export function requireLoadAggregation(aggregation: Aggregation, operation: string): void {
  if (aggregation === 'basic') {
    throw new UsageError(
      'unsupported-aggregation',
      `'${operation}' needs the 'static' or 'dynamic' aggregation, not 'basic'`,
    );
  }
}
