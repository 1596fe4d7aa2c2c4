import type { ImbalanceMetric } from '@poise/imbalance';
import { imbalance } from '@poise/imbalance';
import { UsageError } from './errors';
import { type ClusterView, type IndexedCandidates, fastBruteforce, fastTopsis } from './fast';
import { Scratch } from './scratch';
import { compareNames, nodeLoad } from './kernels';
import { type UsageSnapshot, requireLoadAggregation } from './reference';
import {
  START_CPU,
  START_MAXCPU,
  START_MAXMEM,
  START_MEM,
  START_STRIDE,
  StartScratch,
  scoreNodesToStartKernel,
} from './start-kernel';
import {
  candidateErrors,
  checkAggregation,
  checkCandidateShape,
  checkCandidatesArray,
  checkMethodAndLimit,
  checkMetric,
  checkName,
  checkPlacementShape,
  checkState,
  checkStats,
  statFieldsOk,
  statsOk,
} from './validate';
import type {
  Aggregation,
  MigrationCandidate,
  MigrationMethod,
  NodeScore,
  NodeStats,
  Placement,
  ResourceSpec,
  ResourceState,
  ResourceStats,
  ScoredMigration,
} from './types';

/**
 * A cpu contribution keeps every partial sum exact when it is a multiple of 2^-32 and the
 * absolute sum stays below 2^21 (21 + 32 = 53 mantissa bits); memory contributions when they
 * are integers (bytes) and the absolute sum stays below 2^53. Exact sums are order-independent,
 * so they can be updated by add/subtract; other nodes are re-folded in reference order.
 */
const CPU_GRID = 2 ** 32;
const CPU_EXACT_LIMIT = 2 ** 21;
const MEM_EXACT_LIMIT = 2 ** 53;

interface NodeRecord {
  readonly name: string;
  base: NodeStats;
  /**
   * Resources whose current or target node this is: a list through the resource records
   * (`prev0`/`next0` where this is the current node, `prev1`/`next1` where it is the target), so
   * that adding and removing a member allocates nothing; `count` members.
   */
  head: ResourceRecord | undefined;
  tail: ResourceRecord | undefined;
  count: number;
  /** Aggregated (static: all members; dynamic: `starting` members) cpu and mem, folded from the base in seq order. */
  cpu: number;
  mem: number;
  valid: boolean;
  maxSeq: number;
  /** Count of non-grid values (base included) and absolute sums, for the exactness test. */
  cpuInexact: number;
  memInexact: number;
  cpuAbs: number;
  memAbs: number;
  /** Position in byte order of the node names (set by `sortedNodes`, valid while the order is). */
  index: number;
}

interface ResourceRecord {
  readonly sid: string;
  /** The validated copy of the resource's stats, kept in the record (one object per resource). */
  cpu: number;
  maxcpu: number;
  mem: number;
  maxmem: number;
  state: ResourceState;
  current: NodeRecord;
  target: NodeRecord | undefined;
  readonly seq: number;
  /** Candidate stamps of the last `bestBalancingMigrations` call that named it (duplicate checks). */
  leaderMark: number;
  memberMark: number;
  /** Links in the member list of the current node (slot 0) and of the target node (slot 1). */
  prev0: ResourceRecord | undefined;
  next0: ResourceRecord | undefined;
  prev1: ResourceRecord | undefined;
  next1: ResourceRecord | undefined;
}

/** Which links of `r` chain it into `node`'s member list: 0 for its current node, 1 for its target. */
function slotIn(r: ResourceRecord, node: NodeRecord): 0 | 1 {
  return r.current === node ? 0 : 1;
}

/** The member after `r` in `node`'s list. */
function nextIn(r: ResourceRecord, node: NodeRecord): ResourceRecord | undefined {
  return r.current === node ? r.next0 : r.next1;
}

/** Appends `r` to `node`'s member list through its links of `slot`. */
function link(node: NodeRecord, r: ResourceRecord, slot: 0 | 1): void {
  const tail = node.tail;
  if (slot === 0) {
    r.prev0 = tail;
    r.next0 = undefined;
  } else {
    r.prev1 = tail;
    r.next1 = undefined;
  }
  if (tail === undefined) node.head = r;
  else if (slotIn(tail, node) === 0) tail.next0 = r;
  else tail.next1 = r;
  node.tail = r;
  node.count++;
}

/** Takes `r` out of `node`'s member list (chained through its links of `slot`). */
function unlink(node: NodeRecord, r: ResourceRecord, slot: 0 | 1): void {
  const prev = slot === 0 ? r.prev0 : r.prev1;
  const next = slot === 0 ? r.next0 : r.next1;
  if (prev === undefined) node.head = next;
  else if (slotIn(prev, node) === 0) prev.next0 = next;
  else prev.next1 = next;
  if (next === undefined) node.tail = prev;
  else if (slotIn(next, node) === 0) next.prev0 = prev;
  else next.prev1 = prev;
  if (slot === 0) r.prev0 = r.next0 = undefined;
  else r.prev1 = r.next1 = undefined;
  node.count--;
}

function cpuOnGrid(v: number): boolean {
  return Number.isInteger(v * CPU_GRID) && Math.abs(v) < CPU_EXACT_LIMIT;
}

function memOnGrid(v: number): boolean {
  return Number.isInteger(v) && Math.abs(v) < MEM_EXACT_LIMIT;
}

/**
 * Cluster usage with granular updates (each O(1) amortised, never a rebuild) and the scoring
 * of spec §4: start scoring, node imbalance and best balancing migrations. Every result equals
 * the reference functions of `./reference` applied to {@link snapshot}.
 *
 * Order: nodes are iterated in byte order of their names; a node's aggregated stats fold its
 * base stats, then its resources in the order they were added to the usage (`addResource`;
 * re-adding after `removeResource` moves a resource to the end).
 *
 * Input is checked when it arrives (see `./validate`): names are non-empty strings, stats are
 * numbers in [0, 2^64] with node capacities of at least 1, so every result is finite. A rejected
 * call throws a {@link UsageError} naming the node or resource and the field, and leaves the usage
 * exactly as it was.
 */
export class ClusterUsage {
  readonly aggregation: Aggregation;
  readonly metric: ImbalanceMetric;
  private readonly nodes = new Map<string, NodeRecord>();
  private readonly resources = new Map<string, ResourceRecord>();
  private sorted: NodeRecord[] = [];
  private nameIndex = new Map<string, number>();
  private orderDirty = false;
  private seqCounter = 0;
  /** Candidate stamps: every candidate of every call gets a new one (duplicate checks without a set). */
  private markCounter = 0;
  private targetMarks = new Float64Array(0);
  private readonly scratch = new Scratch();
  private readonly startScratch = new StartScratch();
  /** The node names in sorted order for start scoring. */
  private startNames: string[] = [];
  /**
   * Whether the start kernel's node records hold every node's start view in the current sorted
   * order: a start score then reads them as they are, and every change of a node's aggregated
   * stats is written to its record ({@link startRecordChanged}) or makes them stale.
   */
  private startRecordsCurrent = false;
  private candidateBuffers = {
    source: new Int32Array(0),
    bundleCpu: new Float64Array(0),
    bundleMem: new Float64Array(0),
    targetStart: new Int32Array(1),
    targets: new Int32Array(0),
  };
  private view: {
    n: number;
    names: string[];
    cpu: Float64Array;
    maxcpu: Float64Array;
    mem: Float64Array;
    maxmem: Float64Array;
  } = {
    n: 0,
    names: [],
    cpu: new Float64Array(0),
    maxcpu: new Float64Array(0),
    mem: new Float64Array(0),
    maxmem: new Float64Array(0),
  };

  constructor(options: { aggregation: Aggregation; metric: ImbalanceMetric }) {
    if (typeof options !== 'object' || options === null) {
      throw new UsageError('invalid-argument', 'options: expected { aggregation, metric }');
    }
    checkAggregation(options.aggregation);
    checkMetric(options.metric);
    this.aggregation = options.aggregation;
    this.metric = options.metric;
  }

  // ---- nodes ----

  /**
   * Adds a node. Static nodes have cpu 0 / mem 0; dynamic nodes carry the measured usage.
   * Errors: `invalid-argument` (name not a non-empty string), `duplicate-node`, `invalid-stats`.
   */
  addNode(name: string, stats: NodeStats): void {
    checkName('node', name, 'addNode');
    if (this.nodes.has(name)) throw new UsageError('duplicate-node', `node '${name}' already exists`);
    // validate the copy that is kept (a getter cannot hand the check one value and the usage another)
    const base = copyStats(stats);
    if (!statsOk(base, true)) checkStats(() => `node '${name}'`, base, true);
    const node: NodeRecord = {
      name,
      base,
      head: undefined,
      tail: undefined,
      count: 0,
      cpu: 0,
      mem: 0,
      valid: false,
      maxSeq: 0,
      cpuInexact: 0,
      memInexact: 0,
      cpuAbs: 0,
      memAbs: 0,
      index: -1,
    };
    // folded now (no members: the base), so that resources added later extend the fold
    // incrementally instead of re-folding every member when the node is first read
    this.refold(node);
    this.nodes.set(name, node);
    this.orderDirty = true;
    this.startRecordsCurrent = false;
  }

  /** Removes a node; it must carry no resource (remove or move them first). */
  removeNode(name: string): void {
    const node = this.node(name);
    if (node.count > 0) {
      throw new UsageError(
        'node-in-use',
        `node '${name}' still has ${node.count} resource(s), e.g. '${node.head!.sid}'`,
      );
    }
    this.nodes.delete(name);
    this.orderDirty = true;
    this.startRecordsCurrent = false;
  }

  hasNode(name: string): boolean {
    return this.nodes.has(name);
  }

  /** Node names in byte order. */
  nodeNames(): string[] {
    return this.sortedNodes().map((n) => n.name);
  }

  /** Replaces a node's base stats (dynamic: the measured usage). */
  setNodeStats(name: string, stats: NodeStats): void {
    const node = this.node(name);
    const base = copyStats(stats);
    if (!statsOk(base, true)) checkStats(() => `node '${name}'`, base, true);
    node.base = base;
    node.valid = false;
    this.startRecordsCurrent = false;
  }

  /** A node's base stats as given. */
  getNodeStats(name: string): NodeStats {
    return { ...this.node(name).base };
  }

  // ---- resources ----

  /**
   * Adds a resource. Errors: `invalid-argument` (sid, spec or state), `duplicate-resource`,
   * `invalid-stats`, `invalid-placement` (a move to the same node), `unknown-node`.
   */
  addResource(sid: string, spec: ResourceSpec): void {
    checkName('resource', sid, 'addResource');
    if (this.resources.has(sid)) throw new UsageError('duplicate-resource', `resource '${sid}' already exists`);
    if (typeof spec !== 'object' || spec === null) {
      throw new UsageError('invalid-argument', `resource '${sid}': expected { stats, state, placement }`);
    }
    // the validated copy: each field read exactly once (a getter cannot hand the check one value
    // and the usage another), kept in the record
    const given = spec.stats;
    if (typeof given !== 'object' || given === null) checkStats(() => `resource '${sid}'`, given, false);
    const cpu = given.cpu;
    const maxcpu = given.maxcpu;
    const mem = given.mem;
    const maxmem = given.maxmem;
    if (!statFieldsOk(cpu, maxcpu, mem, maxmem))
      checkStats(() => `resource '${sid}'`, { cpu, maxcpu, mem, maxmem }, false);
    const state = spec.state;
    checkState(sid, state);
    const [current, target] = this.placementNodes(sid, spec.placement);
    const r: ResourceRecord = {
      sid,
      cpu,
      maxcpu,
      mem,
      maxmem,
      state,
      current,
      target,
      seq: ++this.seqCounter,
      leaderMark: 0,
      memberMark: 0,
      prev0: undefined,
      next0: undefined,
      prev1: undefined,
      next1: undefined,
    };
    this.resources.set(sid, r);
    this.attach(current, r, 0);
    if (target) this.attach(target, r, 1);
  }

  removeResource(sid: string): void {
    const r = this.resource(sid);
    this.detach(r.current, r, 0);
    if (r.target) this.detach(r.target, r, 1);
    this.resources.delete(sid);
  }

  hasResource(sid: string): boolean {
    return this.resources.has(sid);
  }

  /** A resource as stored. */
  getResource(sid: string): ResourceSpec {
    const r = this.resource(sid);
    return {
      stats: statsOf(r),
      state: r.state,
      placement: r.target ? { current: r.current.name, target: r.target.name } : { current: r.current.name },
    };
  }

  /** A resource's current node (what `getResource(sid).placement.current` says, without building the spec). */
  currentNode(sid: string): string {
    return this.resource(sid).current.name;
  }

  /** A resource's stats (what `getResource(sid).stats` says, without building the rest of the spec). */
  getResourceStats(sid: string): ResourceStats {
    return statsOf(this.resource(sid));
  }

  /**
   * Calls `visit` for every resource in fold order (the order {@link snapshot} lists them) with
   * its sid, current node and stats: what a per-round pass over the guests reads, without the
   * snapshot's three objects per resource.
   */
  forEachResource(
    visit: (sid: string, current: string, cpu: number, maxcpu: number, mem: number, maxmem: number) => void,
  ): void {
    for (const r of this.resources.values()) visit(r.sid, r.current.name, r.cpu, r.maxcpu, r.mem, r.maxmem);
  }

  /** Replaces a resource's stats (keeps its position in the fold order). */
  setResourceStats(sid: string, stats: ResourceStats): void {
    const r = this.resource(sid);
    const copy = copyStats(stats);
    if (!statsOk(copy, false)) checkStats(() => `resource '${sid}'`, copy, false);
    this.detach(r.current, r, 0);
    if (r.target) this.detach(r.target, r, 1);
    r.cpu = copy.cpu;
    r.maxcpu = copy.maxcpu;
    r.mem = copy.mem;
    r.maxmem = copy.maxmem;
    this.attach(r.current, r, 0);
    if (r.target) this.attach(r.target, r, 1);
  }

  setResourceState(sid: string, state: ResourceState): void {
    const r = this.resource(sid);
    checkState(sid, state);
    this.detach(r.current, r, 0);
    if (r.target) this.detach(r.target, r, 1);
    r.state = state;
    this.attach(r.current, r, 0);
    if (r.target) this.attach(r.target, r, 1);
  }

  /**
   * Moves a resource: stationary → moving (`{current, target}`) → stationary on the target
   * (`{current: target}`), or any other placement.
   */
  setPlacement(sid: string, placement: Placement): void {
    const r = this.resource(sid);
    const [current, target] = this.placementNodes(sid, placement);
    const oldCurrent = r.current;
    const oldTarget = r.target;
    // nodes the resource leaves
    if (oldCurrent !== current && oldCurrent !== target) this.detach(oldCurrent, r, 0);
    if (oldTarget !== undefined && oldTarget !== current && oldTarget !== target) this.detach(oldTarget, r, 1);
    // nodes it stays on in the other role: its sums there do not change, only the list links
    const toTarget = oldCurrent === target ? oldCurrent : undefined;
    const toCurrent = oldTarget !== undefined && oldTarget === current ? oldTarget : undefined;
    if (toTarget) unlink(toTarget, r, 0);
    if (toCurrent) unlink(toCurrent, r, 1);
    r.current = current;
    r.target = target;
    if (toTarget) link(toTarget, r, 1);
    if (toCurrent) link(toCurrent, r, 0);
    // nodes it arrives on
    if (current !== oldCurrent && current !== oldTarget) this.attach(current, r, 0);
    if (target !== undefined && target !== oldCurrent && target !== oldTarget) this.attach(target, r, 1);
  }

  /** Number of resources whose current or target node `name` is (`unknown-node` if it does not exist). O(1). */
  nodeResourceCount(name: string): number {
    return this.node(name).count;
  }

  /** Number of resources. */
  get resourceCount(): number {
    return this.resources.size;
  }

  /** A plain snapshot for the reference functions (resources in fold order). */
  snapshot(): UsageSnapshot {
    return {
      aggregation: this.aggregation,
      nodes: this.sortedNodes().map((n) => ({ name: n.name, stats: { ...n.base } })),
      resources: [...this.resources.values()].map((r) => ({
        sid: r.sid,
        stats: statsOf(r),
        state: r.state,
        placement: r.target ? { current: r.current.name, target: r.target.name } : { current: r.current.name },
      })),
    };
  }

  // ---- scoring ----

  /**
   * Start scores for a resource with `stats`, one per node in byte order.
   * - `basic`: the number of resources whose current or target node it is — **lower is better**;
   * - `static` / `dynamic`: the TOPSIS score (0..1) of the cluster with the resource added as
   *   started on that node, over all nodes — **higher is better** (the HA core negates it).
   */
  scoreNodesToStart(stats: ResourceStats): NodeScore[] {
    const scores = this.startScores(stats);
    const n = this.sorted.length;
    const names = this.startNames;
    const result = new Array<NodeScore>(n);
    for (let k = 0; k < n; k++) result[k] = { node: names[k]!, score: scores[k]! };
    return result;
  }

  /**
   * {@link scoreNodesToStart} without allocating: node k's score (k in the order of
   * {@link nodeNames}, byte order) in `out[k]`; returns the node count. For callers scoring many
   * starts (batch placement): the same values, bit for bit, and no object per node. `out` is a
   * `Float64Array` with room for every node.
   */
  scoreNodesToStartInto(stats: ResourceStats, out: Float64Array): number {
    const n = this.nodes.size;
    if (!(out instanceof Float64Array) || out.length < n) {
      const got = out instanceof Float64Array ? `a Float64Array of length ${out.length}` : String(out);
      throw new UsageError(
        'invalid-argument',
        `scoreNodesToStartInto: 'out' must be a Float64Array of length >= ${n} (the node count), got ${got}`,
      );
    }
    const scores = this.startScores(stats);
    for (let k = 0; k < n; k++) out[k] = scores[k]!;
    return n;
  }

  /**
   * The start scores in sorted node order, in a buffer reused between calls (`basic`: the
   * counts), with `startNames` holding the names; `stats` checked first.
   */
  private startScores(stats: ResourceStats): Float64Array {
    if (typeof stats !== 'object' || stats === null) checkStats('resource to start', stats, false);
    // each field read once: the values checked are the values scored
    const cpu = stats.cpu;
    const maxcpu = stats.maxcpu;
    const mem = stats.mem;
    const maxmem = stats.maxmem;
    if (!statFieldsOk(cpu, maxcpu, mem, maxmem)) checkStats('resource to start', { cpu, maxcpu, mem, maxmem }, false);
    if (this.aggregation === 'basic') {
      const nodes = this.sortedNodes();
      const n = nodes.length;
      this.startScratch.records(n);
      const counts = this.startScratch.scores;
      for (let k = 0; k < n; k++) counts[k] = nodes[k]!.count;
      this.nameStart(nodes);
      return counts;
    }
    return scoreNodesToStartKernel(this.gatherStart(), maxcpu, maxmem, this.startScratch);
  }

  /** The node imbalance under the configured metric (static/dynamic only); lower is better. */
  nodeImbalance(): number {
    requireLoadAggregation(this.aggregation, 'nodeImbalance');
    const view = this.gather();
    const loads = new Float64Array(view.n);
    for (let i = 0; i < view.n; i++) loads[i] = nodeLoad(view.cpu[i]!, view.maxcpu[i]!, view.mem[i]!, view.maxmem[i]!);
    return imbalance(loads, this.metric);
  }

  /**
   * The first `limit` balancing migrations (spec §4.4/§4.5), best first. Errors
   * (`invalid-candidate`, naming `candidates[k]...`) when a leader or member is absent, moving,
   * or not on the leader's node, when a leader is the leader of two candidates, when a bundle
   * lists a resource twice or does not list its leader, when a target is the candidate's own
   * node (a self-move is an error, not skipped: a caller that asks for one has a bug) or is
   * listed twice; `unknown-node` for a target that does not exist; `invalid-argument` for the
   * method, a limit that is not an integer >= 0, or candidates that are not an array.
   * Checked in this order: every candidate's leader and members first, then every target.
   */
  bestBalancingMigrations(
    candidates: readonly MigrationCandidate[],
    method: MigrationMethod,
    limit: number,
  ): ScoredMigration[] {
    requireLoadAggregation(this.aggregation, 'bestBalancingMigrations');
    checkMethodAndLimit(method, limit);
    checkCandidatesArray(candidates);
    const view = this.gather();
    const indexed = this.indexCandidates(candidates);
    return method === 'bruteforce'
      ? fastBruteforce(view, indexed, limit, this.metric)
      : fastTopsis(view, indexed, limit, this.metric, this.scratch);
  }

  // ---- internals ----

  /**
   * Validates candidates like `resolveCandidates` of the reference (same checks, same order, same
   * messages: every leader and member first, then the targets) straight from the records, and
   * indexes them flat into reused buffers. Duplicates are found with per-candidate stamps on the
   * records and the node marks, not with sets.
   */
  private indexCandidates(candidates: readonly MigrationCandidate[]): IndexedCandidates {
    const count = candidates.length;
    let buffers = this.candidateBuffers;
    if (buffers.source.length < count) {
      const size = Math.max(count, buffers.source.length * 2);
      buffers = {
        ...buffers,
        source: new Int32Array(size),
        bundleCpu: new Float64Array(size),
        bundleMem: new Float64Array(size),
        targetStart: new Int32Array(size + 1),
      };
      this.candidateBuffers = buffers;
    }
    const { source, bundleCpu, bundleMem, targetStart } = buffers;
    const sids = new Array<string>(count);
    const index = this.nameIndex;
    // candidate k's stamp is base + k + 1, unique over all calls
    const base = this.markCounter;
    this.markCounter += count + 1;
    let rows = 0;
    for (let k = 0; k < count; k++) {
      const c = candidates[k]!;
      checkCandidateShape(c, k);
      const stamp = base + k + 1;
      const leader = this.resources.get(c.leader);
      if (leader === undefined)
        throw new UsageError('invalid-candidate', `candidate leader '${c.leader}' does not exist`);
      if (leader.leaderMark > base) throw candidateErrors.duplicateLeader(k, c.leader, leader.leaderMark - base - 1);
      leader.leaderMark = stamp;
      if (leader.target !== undefined)
        throw new UsageError('invalid-candidate', `candidate leader '${c.leader}' is not stationary`);
      const home = leader.current;
      let cpuSum = 0;
      let memSum = 0;
      const members = c.resources;
      for (let m = 0; m < members.length; m++) {
        const sid = members[m]!;
        // (the leader, usually the only member, was looked up already)
        const member = sid === c.leader ? leader : this.resources.get(sid);
        if (member === undefined)
          throw new UsageError('invalid-candidate', `resource '${sid}' of candidate '${c.leader}' does not exist`);
        if (member.memberMark === stamp) throw candidateErrors.duplicateMember(k, m, sid, c.leader);
        member.memberMark = stamp;
        if (member.target !== undefined) {
          throw new UsageError('invalid-candidate', `resource '${sid}' of candidate '${c.leader}' is not stationary`);
        }
        if (member.current !== home) {
          throw new UsageError(
            'invalid-candidate',
            `resource '${sid}' of candidate '${c.leader}' is on '${member.current.name}', not on '${home.name}'`,
          );
        }
        // the bundle's stats: field-wise sum of its members, folded from 0 in member order
        cpuSum += member.cpu;
        memSum += member.mem;
      }
      if (leader.memberMark !== stamp) throw candidateErrors.leaderNotMember(k, c.leader);
      sids[k] = c.leader;
      source[k] = home.index; // (the view was just gathered: the order is current)
      bundleCpu[k] = cpuSum;
      bundleMem[k] = memSum;
      targetStart[k] = rows;
      rows += c.targets.length;
    }
    targetStart[count] = rows;
    if (buffers.targets.length < rows) {
      buffers = { ...buffers, targets: new Int32Array(Math.max(rows, buffers.targets.length * 2)) };
      this.candidateBuffers = buffers;
    }
    if (this.targetMarks.length < this.view.n) this.targetMarks = new Float64Array(this.view.n);
    const targets = buffers.targets;
    mapTargets(candidates, this.view.names, this.view.n, index, source, base, this.targetMarks, targets);
    return { count, sids, source, bundleCpu, bundleMem, targetStart, targets };
  }

  private node(name: string): NodeRecord {
    const node = this.nodes.get(name);
    if (!node) throw new UsageError('unknown-node', `node '${name}' does not exist`);
    return node;
  }

  private resource(sid: string): ResourceRecord {
    const r = this.resources.get(sid);
    if (!r) throw new UsageError('unknown-resource', `resource '${sid}' does not exist`);
    return r;
  }

  private placementNodes(sid: string, placement: Placement): [NodeRecord, NodeRecord | undefined] {
    checkPlacementShape(sid, placement);
    const { current, target } = placement;
    const c = this.nodes.get(current);
    if (!c) throw new UsageError('unknown-node', `resource '${sid}' is on unknown node '${current}'`);
    if (target === undefined) return [c, undefined];
    const t = this.nodes.get(target);
    if (!t) throw new UsageError('unknown-node', `resource '${sid}' moves to unknown node '${target}'`);
    return [c, t];
  }

  private sortedNodes(): NodeRecord[] {
    if (this.orderDirty) {
      this.sorted = [...this.nodes.values()].sort((a, b) => compareNames(a.name, b.name));
      this.nameIndex = new Map(this.sorted.map((n, i) => [n.name, i]));
      for (let i = 0; i < this.sorted.length; i++) this.sorted[i]!.index = i;
      this.orderDirty = false;
    }
    return this.sorted;
  }

  /** Whether `r` contributes to its nodes' aggregated stats (the start view in dynamic mode). */
  private counted(r: ResourceRecord): boolean {
    return this.aggregation === 'static' || (this.aggregation === 'dynamic' && r.state === 'starting');
  }

  /** Adds `r` to `node` (its current node: `slot` 0; its target: 1). */
  private attach(node: NodeRecord, r: ResourceRecord, slot: 0 | 1): void {
    link(node, r, slot);
    if (!this.counted(r) || !node.valid) {
      node.maxSeq = Math.max(node.maxSeq, r.seq);
      return;
    }
    const c = r.maxcpu === 0 ? node.base.maxcpu : r.maxcpu;
    const m = r.maxmem;
    if (!cpuOnGrid(c)) node.cpuInexact++;
    if (!memOnGrid(m)) node.memInexact++;
    node.cpuAbs += Math.abs(c);
    node.memAbs += Math.abs(m);
    if (r.seq > node.maxSeq || exactNode(node)) {
      // appending at the end of the fold order is the reference's next fold step
      node.cpu += c;
      node.mem += m;
    } else {
      node.valid = false;
    }
    node.maxSeq = Math.max(node.maxSeq, r.seq);
    this.startRecordChanged(node);
  }

  /** Takes `r` off `node` (its current node: `slot` 0; its target: 1). */
  private detach(node: NodeRecord, r: ResourceRecord, slot: 0 | 1): void {
    unlink(node, r, slot);
    if (!this.counted(r) || !node.valid) return;
    const c = r.maxcpu === 0 ? node.base.maxcpu : r.maxcpu;
    const m = r.maxmem;
    if (exactNode(node)) {
      node.cpu -= c;
      node.mem -= m;
      node.cpuAbs -= Math.abs(c);
      node.memAbs -= Math.abs(m);
    } else {
      node.valid = false;
    }
    this.startRecordChanged(node);
  }

  /** After a change of `node`'s aggregated stats: its start record follows, or the records go stale. */
  private startRecordChanged(node: NodeRecord): void {
    if (!this.startRecordsCurrent) return;
    if (node.valid) {
      const records = this.startScratch.nodes;
      const o = node.index * START_STRIDE;
      records[o + START_CPU] = node.cpu;
      records[o + START_MEM] = node.mem;
    } else {
      this.startRecordsCurrent = false;
    }
  }

  /** Re-folds a node's aggregated stats in reference order (base, then counted members by seq). */
  private refold(node: NodeRecord): void {
    const counted: ResourceRecord[] = [];
    let maxSeq = 0;
    for (let r = node.head; r !== undefined; r = nextIn(r, node)) {
      maxSeq = Math.max(maxSeq, r.seq);
      if (this.counted(r)) counted.push(r);
    }
    counted.sort((a, b) => a.seq - b.seq);
    let cpu = node.base.cpu;
    let mem = node.base.mem;
    let cpuInexact = cpuOnGrid(cpu) ? 0 : 1;
    let memInexact = memOnGrid(mem) ? 0 : 1;
    let cpuAbs = Math.abs(cpu);
    let memAbs = Math.abs(mem);
    for (const r of counted) {
      const c = r.maxcpu === 0 ? node.base.maxcpu : r.maxcpu;
      const m = r.maxmem;
      cpu += c;
      mem += m;
      if (!cpuOnGrid(c)) cpuInexact++;
      if (!memOnGrid(m)) memInexact++;
      cpuAbs += Math.abs(c);
      memAbs += Math.abs(m);
    }
    node.cpu = cpu;
    node.mem = mem;
    node.cpuInexact = cpuInexact;
    node.memInexact = memInexact;
    node.cpuAbs = cpuAbs;
    node.memAbs = memAbs;
    node.maxSeq = maxSeq;
    node.valid = true;
  }

  /**
   * The start view (static: all members; dynamic: `starting` members) in sorted order, in the
   * start kernel's node records (written unless they are current), and the names in
   * `startNames`; returns the node count.
   */
  private gatherStart(): number {
    if (this.startRecordsCurrent) return this.sorted.length;
    const nodes = this.sortedNodes();
    const n = nodes.length;
    const records = this.startScratch.records(n);
    this.nameStart(nodes);
    for (let i = 0, o = 0; i < n; i++, o += START_STRIDE) {
      const node = nodes[i]!;
      if (!node.valid) this.refold(node);
      records[o + START_CPU] = node.cpu;
      records[o + START_MAXCPU] = node.base.maxcpu;
      records[o + START_MEM] = node.mem;
      records[o + START_MAXMEM] = node.base.maxmem;
    }
    this.startRecordsCurrent = true;
    return n;
  }

  /** `startNames`: the names of `nodes` (the sorted nodes). */
  private nameStart(nodes: readonly NodeRecord[]): void {
    const n = nodes.length;
    let names = this.startNames;
    if (names.length !== n) names = this.startNames = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      const name = nodes[i]!.name;
      if (names[i] !== name) names[i] = name;
    }
  }

  /**
   * The balance view (static: all members; dynamic: the measured node stats as given) in sorted
   * order (typed arrays reused).
   */
  private gather(): ClusterView {
    const nodes = this.sortedNodes();
    const n = nodes.length;
    let view = this.view;
    if (view.cpu.length < n) {
      const size = Math.max(n, view.cpu.length * 2);
      view = {
        n,
        names: [],
        cpu: new Float64Array(size),
        maxcpu: new Float64Array(size),
        mem: new Float64Array(size),
        maxmem: new Float64Array(size),
      };
      this.view = view;
    }
    view.n = n;
    if (view.names.length !== n) view.names = new Array<string>(n);
    const identity = this.aggregation === 'dynamic';
    for (let i = 0; i < n; i++) {
      const node = nodes[i]!;
      view.names[i] = node.name;
      view.maxcpu[i] = node.base.maxcpu;
      view.maxmem[i] = node.base.maxmem;
      if (identity) {
        view.cpu[i] = node.base.cpu;
        view.mem[i] = node.base.mem;
      } else {
        if (!node.valid) this.refold(node);
        view.cpu[i] = node.cpu;
        view.mem[i] = node.mem;
      }
    }
    return view;
  }
}

/**
 * Writes the node index of every candidate's targets, in order, into `out`, and rejects unknown
 * targets, self-moves and targets listed twice. Targets usually come in byte order, so the index
 * of the next target is guessed as the previous one + 1 and checked by one string comparison
 * before falling back to the name map; while the indices increase no target can repeat, and only
 * a candidate whose targets go out of order stamps them in `marks` (per node index) to find a
 * repeat. Separate from the validation loop so that each loop is optimised on its own (one
 * function holding both was de-optimised at the second loop on every call).
 */
function mapTargets(
  candidates: readonly MigrationCandidate[],
  names: readonly string[],
  n: number,
  index: ReadonlyMap<string, number>,
  source: Int32Array,
  base: number,
  marks: Float64Array,
  out: Int32Array,
): void {
  let row = 0;
  for (let k = 0; k < candidates.length; k++) {
    const list = candidates[k]!.targets;
    const home = source[k]!;
    const first = row;
    // the usual list, every other node in byte order: one comparison and one store per target
    // (valid by construction: increasing, no repeat, not the home node); anything else falls
    // through to the general mapping below, which starts the candidate over
    if (list.length === n - 1) {
      let j = 0;
      while (j < home && list[j] === names[j]) out[row + j] = j++;
      if (j === home) {
        while (j < n - 1 && list[j] === names[j + 1]) {
          out[row + j] = j + 1;
          j++;
        }
      }
      if (j === n - 1) {
        row += n - 1;
        continue;
      }
    }
    const stamp = base + k + 1;
    let guess = 0;
    let previous = -1;
    let marked = false;
    for (let j = 0; j < list.length; j++, row++) {
      const name = list[j]!;
      const i: number | undefined = guess < n && names[guess] === name ? guess : index.get(name);
      if (i === undefined)
        throw new UsageError(
          'unknown-node',
          `target node '${name}' of candidate '${candidates[k]!.leader}' does not exist`,
        );
      if (i === home) throw candidateErrors.selfMove(k, j, name, candidates[k]!.leader);
      if (!marked && i > previous) {
        previous = i;
      } else {
        if (!marked) {
          for (let r = first; r < row; r++) marks[out[r]!] = stamp;
          marked = true;
        }
        if (marks[i] === stamp) throw candidateErrors.duplicateTarget(k, j, name, candidates[k]!.leader);
        marks[i] = stamp;
      }
      out[row] = i;
      guess = i + 1;
    }
  }
}

/**
 * A plain copy of stats to validate and keep (so a getter or a later change of the caller's
 * object cannot make the kept values differ from the checked ones); a non-object is returned as
 * it is, for the check to name.
 */
function copyStats<T extends NodeStats | ResourceStats>(stats: T): T {
  // each field read exactly once, into an object of one fixed shape (cheaper than a spread)
  return typeof stats === 'object' && stats !== null
    ? ({ cpu: stats.cpu, maxcpu: stats.maxcpu, mem: stats.mem, maxmem: stats.maxmem } as T)
    : stats;
}

/** A resource's stats as a fresh object. */
function statsOf(r: ResourceRecord): ResourceStats {
  return { cpu: r.cpu, maxcpu: r.maxcpu, mem: r.mem, maxmem: r.maxmem };
}

/** Whether every partial sum of the node's fold is exact (so add/subtract equals re-folding). */
function exactNode(node: NodeRecord): boolean {
  return (
    node.cpuInexact === 0 && node.memInexact === 0 && node.cpuAbs < CPU_EXACT_LIMIT && node.memAbs < MEM_EXACT_LIMIT
  );
}
