/**
 * The baselines the benchmark measures the fast paths of `@poise/usage` against: the same work
 * done the straightforward way, as a competent engineer would write it — typed arrays, scratch
 * buffers reused between calls (no allocation per decision or per pair, like the fast paths),
 * the library's own kernels (`imbalanceWithReplaced` of `@poise/imbalance`, `scoreFlatInPlace`
 * of `@poise/topsis`) — but without the fast paths' incremental state and error-bound tricks:
 *
 * - start placement: the reference's structure, the node stats rebuilt from every placed
 *   resource before each decision (O(resources)), then the n alternatives' criteria folded
 *   directly (O(n²)) and TOPSIS;
 * - bruteforce migrations: the exact imbalance of every (candidate, target) pair by one O(n)
 *   fold with the two changed loads replaced;
 * - TOPSIS migrations: the 4 criteria of every pair by one O(n) fold, TOPSIS over all pairs, a
 *   stable first-`limit` choice, the exact imbalance of the chosen ones.
 *
 * They return exactly what the oracle (`reference*` of `@poise/usage`) returns — the same float
 * operations in the same order — which `baselines.test.ts` checks on small random clusters and
 * the benchmark asserts on every measured workload. Input is trusted (the benchmark builds it):
 * ordinary stats (no values near 1e154, where the oracle switches to scaled folds), known names.
 */
import { type ImbalanceMetric, imbalanceWithReplaced } from '../packages/imbalance/src/index';
import { defineCriteria, scoreFlatInPlace } from '../packages/topsis/src/index';
import {
  type MigrationCandidate,
  type MigrationMethod,
  type NodeStats,
  type ResourceStats,
  type ScoredMigration,
  compareNames,
  compareScoredMigrations,
  nodeLoad,
  truncateImbalance,
} from '../packages/usage/src/index';

/** The scheduler's criteria (spec §4.5), defined like `@poise/usage` defines them. */
const CRITERIA = defineCriteria([
  { name: 'average cpu', weight: -1 },
  { name: 'highest cpu', weight: -2 },
  { name: 'average memory', weight: -5 },
  { name: 'highest memory', weight: -10 },
]);
const COLS = 4;

/** A node as the baselines take it. */
export interface BaselineNode {
  readonly name: string;
  readonly stats: NodeStats;
}

/**
 * Start placement the reference's way, lean: resources are appended to typed arrays (node
 * index, configured maxima, whether they count), and every {@link scoreStart} rebuilds the
 * node stats from all of them in the order they were added — O(resources + n²) per decision.
 * Aggregation `static` (every resource counts as started) or `dynamic` (the node stats are the
 * measured ones, plus resources in state `starting`).
 */
export class LeanStartBaseline {
  readonly names: readonly string[];
  private readonly n: number;
  private readonly baseCpu: Float64Array;
  private readonly baseMem: Float64Array;
  private readonly maxcpu: Float64Array;
  private readonly maxmem: Float64Array;
  private readonly cpu: Float64Array;
  private readonly mem: Float64Array;
  private readonly index = new Map<string, number>();
  private count = 0;
  private resNode = new Int32Array(1024);
  private resTarget = new Int32Array(1024);
  private resMaxcpu = new Float64Array(1024);
  private resMaxmem = new Float64Array(1024);
  private resCounted = new Uint8Array(1024);
  private readonly matrix: Float64Array;
  private readonly scores: Float64Array;
  private readonly ideal = new Float64Array(2 * COLS);

  constructor(
    readonly aggregation: 'static' | 'dynamic',
    nodes: readonly BaselineNode[],
  ) {
    const sorted = [...nodes].sort((a, b) => compareNames(a.name, b.name));
    this.n = sorted.length;
    this.names = sorted.map((x) => x.name);
    sorted.forEach((x, i) => this.index.set(x.name, i));
    this.baseCpu = Float64Array.from(sorted, (x) => x.stats.cpu);
    this.baseMem = Float64Array.from(sorted, (x) => x.stats.mem);
    this.maxcpu = Float64Array.from(sorted, (x) => x.stats.maxcpu);
    this.maxmem = Float64Array.from(sorted, (x) => x.stats.maxmem);
    this.cpu = new Float64Array(this.n);
    this.mem = new Float64Array(this.n);
    this.matrix = new Float64Array(this.n * COLS);
    this.scores = new Float64Array(this.n);
  }

  get resourceCount(): number {
    return this.count;
  }

  /** Places a resource (stationary on `current`, or moving to `target`). */
  add(stats: ResourceStats, state: 'started' | 'starting' | 'stopped', current: string, target?: string): void {
    if (this.count === this.resNode.length) this.grow();
    const k = this.count++;
    this.resNode[k] = this.index.get(current)!;
    this.resTarget[k] = target === undefined ? -1 : this.index.get(target)!;
    this.resMaxcpu[k] = stats.maxcpu;
    this.resMaxmem[k] = stats.maxmem;
    this.resCounted[k] = this.aggregation === 'static' || state === 'starting' ? 1 : 0;
  }

  /**
   * TOPSIS start scores (higher is better) of a resource with `stats`, one per node in byte
   * order of the names, written to (and returned as) a reused array valid until the next call.
   */
  scoreStart(stats: ResourceStats): Float64Array {
    const { n, cpu, mem, maxcpu, maxmem } = this;
    // rebuild: base stats, then every counted resource in the order it was added
    cpu.set(this.baseCpu);
    mem.set(this.baseMem);
    const { resNode, resTarget, resMaxcpu, resMaxmem, resCounted } = this;
    for (let k = 0; k < this.count; k++) {
      if (resCounted[k] === 0) continue;
      const a = resNode[k]!;
      cpu[a] = cpu[a]! + (resMaxcpu[k] === 0 ? maxcpu[a]! : resMaxcpu[k]!);
      mem[a] = mem[a]! + resMaxmem[k]!;
      const b = resTarget[k]!;
      if (b !== -1) {
        cpu[b] = cpu[b]! + (resMaxcpu[k] === 0 ? maxcpu[b]! : resMaxcpu[k]!);
        mem[b] = mem[b]! + resMaxmem[k]!;
      }
    }
    // alternative k: the resource added as started on node k, the criteria folded over all nodes
    const matrix = this.matrix;
    for (let k = 0; k < n; k++) {
      const addCpu = cpu[k]! + (stats.maxcpu === 0 ? maxcpu[k]! : stats.maxcpu);
      const addMem = mem[k]! + stats.maxmem;
      let cpuSquares = 0;
      let memSquares = 0;
      let cpuHighest = 0;
      let memHighest = 0;
      for (let i = 0; i < n; i++) {
        const c = (i === k ? addCpu : cpu[i]!) / maxcpu[i]!;
        const m = (i === k ? addMem : mem[i]!) / maxmem[i]!;
        cpuSquares += c * c;
        memSquares += m * m;
        cpuHighest = Math.max(cpuHighest, c);
        memHighest = Math.max(memHighest, m);
      }
      const o = k * COLS;
      matrix[o] = 1 + Math.sqrt(cpuSquares / n);
      matrix[o + 1] = 1 + cpuHighest;
      matrix[o + 2] = 1 + Math.sqrt(memSquares / n);
      matrix[o + 3] = 1 + memHighest;
    }
    return scoreFlatInPlace(CRITERIA, { data: matrix, rows: n, cols: COLS }, this.scores, this.ideal);
  }

  private grow(): void {
    const size = this.resNode.length * 2;
    const widen = <T extends Int32Array | Float64Array | Uint8Array>(a: T, b: T): T => (b.set(a), b);
    this.resNode = widen(this.resNode, new Int32Array(size));
    this.resTarget = widen(this.resTarget, new Int32Array(size));
    this.resMaxcpu = widen(this.resMaxcpu, new Float64Array(size));
    this.resMaxmem = widen(this.resMaxmem, new Float64Array(size));
    this.resCounted = widen(this.resCounted, new Uint8Array(size));
  }
}

/** A resource of the balancing baseline: where it is and its (running) usage. */
export interface BaselineResource {
  readonly sid: string;
  readonly stats: ResourceStats;
  readonly current: string;
  /** Set while the resource moves (it then cannot be a candidate). */
  readonly target?: string;
}

/**
 * Balancing migrations the straightforward way: the balancing view of the node stats (static:
 * base + every resource's maxima on its nodes; dynamic: the measured node stats), then every
 * (candidate, target) pair evaluated by an O(n) fold. Scratch buffers are reused between calls.
 */
export class LeanMigrationBaseline {
  readonly names: readonly string[];
  private readonly n: number;
  private readonly index = new Map<string, number>();
  private readonly cpu: Float64Array;
  private readonly mem: Float64Array;
  private readonly maxcpu: Float64Array;
  private readonly maxmem: Float64Array;
  private readonly resources = new Map<string, { node: number; cpu: number; mem: number }>();
  private readonly loads: Float64Array;
  private readonly cpuLoad: Float64Array;
  private readonly memLoad: Float64Array;
  private bundleCpu = 0;
  private bundleMem = 0;
  private matrix = new Float64Array(0);
  private scores = new Float64Array(0);
  /** Per row of the TOPSIS matrix: its candidate and target (scratch, reused). */
  private rowCandidate = new Int32Array(0);
  private rowTarget = new Int32Array(0);
  private readonly ideal = new Float64Array(2 * COLS);

  constructor(
    aggregation: 'static' | 'dynamic',
    nodes: readonly BaselineNode[],
    resources: readonly BaselineResource[],
    readonly metric: ImbalanceMetric,
  ) {
    const sorted = [...nodes].sort((a, b) => compareNames(a.name, b.name));
    this.n = sorted.length;
    this.names = sorted.map((x) => x.name);
    sorted.forEach((x, i) => this.index.set(x.name, i));
    this.cpu = Float64Array.from(sorted, (x) => x.stats.cpu);
    this.mem = Float64Array.from(sorted, (x) => x.stats.mem);
    this.maxcpu = Float64Array.from(sorted, (x) => x.stats.maxcpu);
    this.maxmem = Float64Array.from(sorted, (x) => x.stats.maxmem);
    for (const r of resources) {
      const node = this.index.get(r.current)!;
      this.resources.set(r.sid, { node, cpu: r.stats.cpu, mem: r.stats.mem });
      if (aggregation !== 'static') continue;
      for (const side of r.target === undefined ? [node] : [node, this.index.get(r.target)!]) {
        this.cpu[side] = this.cpu[side]! + (r.stats.maxcpu === 0 ? this.maxcpu[side]! : r.stats.maxcpu);
        this.mem[side] = this.mem[side]! + r.stats.maxmem;
      }
    }
    this.loads = new Float64Array(this.n);
    this.cpuLoad = new Float64Array(this.n);
    this.memLoad = new Float64Array(this.n);
  }

  /** The first `limit` migrations, best first, like `referenceBestBalancingMigrations`. */
  best(candidates: readonly MigrationCandidate[], method: MigrationMethod, limit: number): ScoredMigration[] {
    if (limit <= 0) return [];
    const { n, cpu, mem, maxcpu, maxmem, loads } = this;
    for (let i = 0; i < n; i++) loads[i] = nodeLoad(cpu[i]!, maxcpu[i]!, mem[i]!, maxmem[i]!);
    return method === 'bruteforce' ? this.bruteforce(candidates, limit) : this.topsis(candidates, limit);
  }

  /** Bundle sums of a candidate (its members summed from 0 in member order) into `bundleCpu`/`bundleMem`. */
  private bundle(c: MigrationCandidate): void {
    let bc = 0;
    let bm = 0;
    for (const sid of c.resources) {
      const r = this.resources.get(sid)!;
      bc += r.cpu;
      bm += r.mem;
    }
    this.bundleCpu = bc;
    this.bundleMem = bm;
  }

  /** Exact imbalance after moving a bundle from `s` to `t`: one O(n) fold. */
  private moveImbalance(s: number, t: number, bc: number, bm: number): number {
    const { cpu, mem, maxcpu, maxmem } = this;
    const ls = nodeLoad(Math.max(0, cpu[s]! - bc), maxcpu[s]!, Math.max(0, mem[s]! - bm), maxmem[s]!);
    const lt = nodeLoad(cpu[t]! + bc, maxcpu[t]!, mem[t]! + bm, maxmem[t]!);
    return truncateImbalance(imbalanceWithReplaced(this.loads, this.metric, s, ls, t, lt));
  }

  private bruteforce(candidates: readonly MigrationCandidate[], limit: number): ScoredMigration[] {
    const best: ScoredMigration[] = [];
    for (const c of candidates) {
      const s = this.resources.get(c.leader)!.node;
      this.bundle(c);
      const bc = this.bundleCpu;
      const bm = this.bundleMem;
      for (const target of c.targets) {
        const t = this.index.get(target)!;
        const imbalance = this.moveImbalance(s, t, bc, bm);
        // keep the `limit` smallest by (imbalance, sid, source, target); allocate only on entry
        if (best.length === limit) {
          const last = best[limit - 1]!;
          if (imbalance > last.imbalance) continue;
          if (imbalance === last.imbalance && compareKey(c.leader, this.names[s]!, target, last) >= 0) continue;
        }
        const m = { sid: c.leader, source: this.names[s]!, target, imbalance };
        let i = best.length;
        while (i > 0 && compareScoredMigrations(m, best[i - 1]!) < 0) i--;
        best.splice(i, 0, m);
        if (best.length > limit) best.pop();
      }
    }
    return best;
  }

  private topsis(candidates: readonly MigrationCandidate[], limit: number): ScoredMigration[] {
    const { n, cpu, mem, maxcpu, maxmem, cpuLoad, memLoad } = this;
    let rows = 0;
    for (const c of candidates) rows += c.targets.length;
    if (rows === 0) return [];
    if (this.scores.length < rows) {
      this.scores = new Float64Array(rows);
      this.matrix = new Float64Array(rows * COLS);
      this.rowCandidate = new Int32Array(rows);
      this.rowTarget = new Int32Array(rows);
    }
    for (let i = 0; i < n; i++) {
      cpuLoad[i] = cpu[i]! / maxcpu[i]!;
      memLoad[i] = mem[i]! / maxmem[i]!;
    }
    const { matrix, rowCandidate, rowTarget } = this;
    let row = 0;
    for (let ci = 0; ci < candidates.length; ci++) {
      const c = candidates[ci]!;
      const s = this.resources.get(c.leader)!.node;
      this.bundle(c);
      const bc = this.bundleCpu;
      const bm = this.bundleMem;
      const cs = Math.max(0, cpu[s]! - bc) / maxcpu[s]!;
      const ms = Math.max(0, mem[s]! - bm) / maxmem[s]!;
      for (const target of c.targets) {
        const t = this.index.get(target)!;
        const ct = (cpu[t]! + bc) / maxcpu[t]!;
        const mt = (mem[t]! + bm) / maxmem[t]!;
        let cpuSquares = 0;
        let memSquares = 0;
        let cpuHighest = 0;
        let memHighest = 0;
        for (let i = 0; i < n; i++) {
          const cl = i === s ? cs : i === t ? ct : cpuLoad[i]!;
          const ml = i === s ? ms : i === t ? mt : memLoad[i]!;
          cpuSquares += cl * cl;
          memSquares += ml * ml;
          cpuHighest = Math.max(cpuHighest, cl);
          memHighest = Math.max(memHighest, ml);
        }
        const o = row * COLS;
        matrix[o] = 1 + Math.sqrt(cpuSquares / n);
        matrix[o + 1] = 1 + cpuHighest;
        matrix[o + 2] = 1 + Math.sqrt(memSquares / n);
        matrix[o + 3] = 1 + memHighest;
        rowCandidate[row] = ci;
        rowTarget[row] = t;
        row++;
      }
    }
    const scores = scoreFlatInPlace(CRITERIA, { data: matrix, rows, cols: COLS }, this.scores, this.ideal);
    // the first `limit` rows of a stable descending sort: repeatedly the earliest highest score
    const chosen: number[] = [];
    const taken = new Uint8Array(rows);
    for (let k = 0; k < Math.min(limit, rows); k++) {
      let top = -1;
      for (let i = 0; i < rows; i++) if (taken[i] === 0 && (top === -1 || scores[i]! > scores[top]!)) top = i;
      taken[top] = 1;
      chosen.push(top);
    }
    return chosen.map((i) => {
      const c = candidates[rowCandidate[i]!]!;
      const s = this.resources.get(c.leader)!.node;
      const t = rowTarget[i]!;
      this.bundle(c);
      return {
        sid: c.leader,
        source: this.names[s]!,
        target: this.names[t]!,
        imbalance: this.moveImbalance(s, t, this.bundleCpu, this.bundleMem),
      };
    });
  }
}

/** (sid, source, target) against a scored migration, by byte order. */
function compareKey(sid: string, source: string, target: string, m: ScoredMigration): number {
  return compareNames(sid, m.sid) || compareNames(source, m.source) || compareNames(target, m.target);
}

/** The node a start decision picks: highest score, then the first in name order. */
export function bestStartNode(names: readonly string[], scores: ArrayLike<number>): string {
  let top = 0;
  for (let k = 1; k < names.length; k++) if (scores[k]! > scores[top]!) top = k;
  return names[top]!;
}
