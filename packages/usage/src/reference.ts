/**
 * The direct reference implementation (the oracle): rebuilds the aggregated node stats from a
 * plain snapshot and evaluates every alternative with the spec's operation order literally
 * (spec §4). Slow on purpose — O(resources + nodes²) per start score, O(nodes) per migration
 * pair — and obviously correct; the fast {@link ClusterUsage} is tested against it.
 */
import { type ImbalanceMetric, imbalance } from '@poise/imbalance';
import { rankScores, scoreAlternatives } from '@poise/topsis';
import { UsageError } from './errors';
import { SCHEDULER_CRITERIA, compareNames, compareScoredMigrations, nodeLoad, truncateImbalance } from './kernels';
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

/** `add_started_resource`: cpu += (maxcpu 0 ? node maxcpu : maxcpu), mem += maxmem. */
export function addStartedResource(node: MutableNodeStats, r: ResourceStats): void {
  node.cpu += r.maxcpu === 0 ? node.maxcpu : r.maxcpu;
  node.mem += r.maxmem;
}

/** `add_running_resource`: cpu += cpu, mem += mem. */
export function addRunningResource(node: MutableNodeStats, r: { cpu: number; mem: number }): void {
  node.cpu += r.cpu;
  node.mem += r.mem;
}

/** `remove_running_resource`: cpu = max(0, cpu − r.cpu), mem saturating at 0. */
export function removeRunningResource(node: MutableNodeStats, r: { cpu: number; mem: number }): void {
  node.cpu = Math.max(0, node.cpu - r.cpu);
  node.mem = Math.max(0, node.mem - r.mem);
}

/** Which view of the cluster is aggregated: balancing/imbalance, or start scoring. */
export type AggregationPurpose = 'balance' | 'start';

/**
 * Aggregated node stats in sorted node order (spec §4.2): static adds every assigned resource
 * as started; dynamic adds `starting` resources as started only for start scoring.
 */
export function referenceAggregate(
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
      if (counted) addStartedResource(node, r.stats);
    }
  }
  return { names, stats };
}

function placementNodes(r: ResourceSpec & { sid: string }): string[] {
  const { current, target } = r.placement;
  if (target === undefined) return [current];
  if (target === current) {
    throw new UsageError('invalid-placement', `resource '${r.sid}' moves from '${current}' to itself`);
  }
  return [current, target];
}

/** The 4 scheduler criteria of a cluster state (spec §4.5), folded over the nodes in order. */
export function referenceCriteria(stats: readonly MutableNodeStats[]): number[] {
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
  return [1 + Math.sqrt(cpuSquares / n), 1 + cpuHighest, 1 + Math.sqrt(memSquares / n), 1 + memHighest];
}

/** Imbalance of a cluster state under `metric` (spec §4.3). */
export function referenceImbalanceOf(stats: readonly MutableNodeStats[], metric: ImbalanceMetric): number {
  return imbalance(
    stats.map((s) => nodeLoad(s.cpu, s.maxcpu, s.mem, s.maxmem)),
    metric,
  );
}

/** Node imbalance of the balancing view (static: started aggregation; dynamic: measured stats). */
export function referenceNodeImbalance(snapshot: UsageSnapshot, metric: ImbalanceMetric): number {
  requireLoadAggregation(snapshot.aggregation, 'nodeImbalance');
  return referenceImbalanceOf(referenceAggregate(snapshot, 'balance').stats, metric);
}

/**
 * Start scores, one per node in sorted order. `basic`: the number of resources whose current or
 * target node it is (**lower is better**). `static`/`dynamic`: the TOPSIS score of the state
 * with the resource added as started on that node, over all nodes (**higher is better**, 0..1).
 */
export function referenceScoreNodesToStart(snapshot: UsageSnapshot, stats: ResourceStats): NodeScore[] {
  if (snapshot.aggregation === 'basic') {
    const names = snapshot.nodes.map((n) => n.name).sort(compareNames);
    const counts = new Map(names.map((name) => [name, 0]));
    for (const r of snapshot.resources) {
      for (const side of placementNodes(r)) {
        const count = counts.get(side);
        if (count === undefined) throw new UsageError('unknown-node', `resource '${r.sid}' is on unknown node '${side}'`);
        counts.set(side, count + 1);
      }
    }
    return names.map((node) => ({ node, score: counts.get(node)! }));
  }
  const { names, stats: base } = referenceAggregate(snapshot, 'start');
  const rows = names.map((_, k) => {
    const state = base.map((s) => ({ ...s }));
    addStartedResource(state[k]!, stats);
    return referenceCriteria(state);
  });
  const scores = scoreAlternatives(SCHEDULER_CRITERIA, rows);
  return names.map((node, k) => ({ node, score: scores[k]! }));
}

/** A validated candidate: its source node, bundle stats sum and targets. */
export interface ResolvedCandidate {
  readonly sid: string;
  readonly source: string;
  readonly bundleCpu: number;
  readonly bundleMem: number;
  readonly targets: readonly string[];
}

/**
 * Validates candidates against the snapshot like `decompose_compact_migration_candidates`:
 * the leader and every member must exist, be stationary, and sit on the leader's node. The
 * bundle's stats are the field-wise sum of its members, folded from 0 in member order.
 */
export function resolveCandidates(
  candidates: readonly MigrationCandidate[],
  lookup: (sid: string) => ResourceSpec | undefined,
  hasNode: ((name: string) => boolean) | undefined,
): ResolvedCandidate[] {
  return candidates.map((c) => {
    const leader = lookup(c.leader);
    if (leader === undefined) throw new UsageError('invalid-candidate', `candidate leader '${c.leader}' does not exist`);
    if (leader.placement.target !== undefined) {
      throw new UsageError('invalid-candidate', `candidate leader '${c.leader}' is not stationary`);
    }
    const source = leader.placement.current;
    let bundleCpu = 0;
    let bundleMem = 0;
    for (const sid of c.resources) {
      const member = lookup(sid);
      if (member === undefined) {
        throw new UsageError('invalid-candidate', `resource '${sid}' of candidate '${c.leader}' does not exist`);
      }
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
    }
    if (hasNode) for (const t of c.targets) {
      if (!hasNode(t)) throw new UsageError('unknown-node', `target node '${t}' of candidate '${c.leader}' does not exist`);
    }
    return { sid: c.leader, source, bundleCpu, bundleMem, targets: c.targets };
  });
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
  requireLoadAggregation(snapshot.aggregation, 'bestBalancingMigrations');
  const bySid = new Map(snapshot.resources.map((r) => [r.sid, r]));
  const { names, stats: base } = referenceAggregate(snapshot, 'balance');
  const nameSet = new Set(names);
  const resolved = resolveCandidates(candidates, (sid) => bySid.get(sid), (name) => nameSet.has(name));
  // one scratch copy of the cluster state, reset before every pair (no per-pair allocation)
  const state = base.map((s) => ({ ...s }));
  const stateAfter = (c: ResolvedCandidate, target: string): MutableNodeStats[] => {
    for (let i = 0; i < base.length; i++) Object.assign(state[i]!, base[i]!);
    const bundle = { cpu: c.bundleCpu, mem: c.bundleMem };
    removeRunningResource(state[names.indexOf(c.source)]!, bundle);
    addRunningResource(state[names.indexOf(target)]!, bundle);
    return state;
  };
  const scored = (c: ResolvedCandidate, target: string): ScoredMigration => ({
    sid: c.sid,
    source: c.source,
    target,
    imbalance: truncateImbalance(referenceImbalanceOf(stateAfter(c, target), metric)),
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
      rows.push(referenceCriteria(stateAfter(c, target)));
    }
  }
  return rankScores(scoreAlternatives(SCHEDULER_CRITERIA, rows))
    .slice(0, Math.max(0, limit))
    .map((i) => scored(...pairs[i]!));
}

/** Throws unless the aggregation carries loads (static or dynamic). */
export function requireLoadAggregation(aggregation: Aggregation, operation: string): void {
  if (aggregation === 'basic') {
    throw new UsageError('unsupported-aggregation', `'${operation}' needs the 'static' or 'dynamic' aggregation, not 'basic'`);
  }
}
