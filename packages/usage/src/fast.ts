/**
 * Fast scoring over a cluster view in sorted node order. Every function returns exactly what
 * the reference ({@link ./reference}) returns: the shared kernels compute the per-node values,
 * sums are folded in the same order, and O(1) approximations are only used — with rigorous
 * error bounds — to discard alternatives that cannot be chosen.
 */
import * as imbalanceModule from '@poise/imbalance';
import type { ImbalanceMetric } from '@poise/imbalance';
import * as topsisModule from '@poise/topsis';
import * as kernels from './kernels';
import * as separated from './topsis-separated';

/*
 * Module-local copies of the imported bindings used on hot paths: some loaders (tsx's CommonJS
 * interop) turn every read of an imported binding into a getter call, which costs more than the
 * arithmetic around it (it was a quarter of the migration scoring time).
 */
const { ImbalanceAccumulator } = imbalanceModule;
type ImbalanceAccumulator = imbalanceModule.ImbalanceAccumulator;
const { imbalanceWithReplaced } = imbalanceModule;
const { rankScores, scoreFlatInPlace } = topsisModule;
const { CRITERIA_COUNT, SCHEDULER_CRITERIA, compareNames, nodeLoad, truncateImbalance } = kernels;
const { separatedTopsisWinner } = separated;
import type { NodeScore, ResourceStats, ScoredMigration } from './types';

/**
 * How often the O(1) TOPSIS choice was proven or declined (then the exact path ran). Internal
 * diagnostics for tests and the benchmark; not part of the package API.
 */
export const topsisPathCounters = { separated: 0, exact: 0 };

/** Aggregated node stats in sorted node order (typed arrays may be longer than `n`). */
export interface ClusterView {
  readonly n: number;
  readonly names: readonly string[];
  readonly cpu: Float64Array;
  readonly maxcpu: Float64Array;
  readonly mem: Float64Array;
  readonly maxmem: Float64Array;
}

/** A validated candidate with node indices into the view. */
export interface IndexedCandidate {
  readonly sid: string;
  readonly source: number;
  readonly bundleCpu: number;
  readonly bundleMem: number;
  readonly targets: Int32Array;
}

/** The three largest values of an array with their indices (for "max excluding ≤ 2 positions"). */
class TopThree {
  v0 = -Infinity;
  v1 = -Infinity;
  v2 = -Infinity;
  i0 = -1;
  i1 = -1;
  i2 = -1;

  reset(values: Float64Array, n: number): void {
    this.v0 = this.v1 = this.v2 = -Infinity;
    this.i0 = this.i1 = this.i2 = -1;
    for (let i = 0; i < n; i++) {
      const v = values[i]!;
      if (v > this.v0) {
        this.v2 = this.v1;
        this.i2 = this.i1;
        this.v1 = this.v0;
        this.i1 = this.i0;
        this.v0 = v;
        this.i0 = i;
      } else if (v > this.v1) {
        this.v2 = this.v1;
        this.i2 = this.i1;
        this.v1 = v;
        this.i1 = i;
      } else if (v > this.v2) {
        this.v2 = v;
        this.i2 = i;
      }
    }
  }

  /** Max over all positions except `a` and `b` (-Infinity if none is left). */
  maxExcept(a: number, b: number): number {
    if (this.i0 !== a && this.i0 !== b) return this.v0;
    if (this.i1 !== a && this.i1 !== b) return this.v1;
    if (this.i2 !== a && this.i2 !== b) return this.v2;
    return -Infinity;
  }
}

/** Per-call scratch space, reused between calls to avoid allocation on the hot path. */
export class Scratch {
  cpuLoad = new Float64Array(0);
  memLoad = new Float64Array(0);
  cpuPrefix = new Float64Array(1);
  memPrefix = new Float64Array(1);
  matrix = new Float64Array(0);
  scores = new Float64Array(0);
  readonly cpuTop = new TopThree();
  readonly memTop = new TopThree();
  /** Per-column work space of the separated TOPSIS test (min, max, error bound, scales). */
  readonly columnMin = new Float64Array(CRITERIA_COUNT);
  readonly columnMax = new Float64Array(CRITERIA_COUNT);
  readonly columnBound = new Float64Array(CRITERIA_COUNT);
  readonly columnScale = new Float64Array(CRITERIA_COUNT);
  readonly columnLoScale = new Float64Array(CRITERIA_COUNT);
  readonly columnHiScale = new Float64Array(CRITERIA_COUNT);

  ensure(n: number, rows: number): void {
    if (this.cpuLoad.length < n) {
      const size = Math.max(n, this.cpuLoad.length * 2);
      this.cpuLoad = new Float64Array(size);
      this.memLoad = new Float64Array(size);
      this.cpuPrefix = new Float64Array(size + 1);
      this.memPrefix = new Float64Array(size + 1);
    }
    if (this.scores.length < rows) {
      const size = Math.max(rows, this.scores.length * 2);
      this.scores = new Float64Array(size);
      this.matrix = new Float64Array(size * CRITERIA_COUNT);
    }
  }
}

/** Fills per-node cpu/mem loads, the prefix folds of their squares and the top-3 maxima. */
function prepareLoads(view: ClusterView, scratch: Scratch): void {
  const { n, cpu, maxcpu, mem, maxmem } = view;
  const { cpuLoad, memLoad, cpuPrefix, memPrefix } = scratch;
  let cs = 0;
  let ms = 0;
  cpuPrefix[0] = 0;
  memPrefix[0] = 0;
  for (let i = 0; i < n; i++) {
    const c = cpu[i]! / maxcpu[i]!;
    const m = mem[i]! / maxmem[i]!;
    cpuLoad[i] = c;
    memLoad[i] = m;
    cs += c * c;
    ms += m * m;
    cpuPrefix[i + 1] = cs;
    memPrefix[i + 1] = ms;
  }
  scratch.cpuTop.reset(cpuLoad, n);
  scratch.memTop.reset(memLoad, n);
}

/**
 * Sum of squared loads with positions `a` (value `va`) and `b` (value `vb`, or -1) replaced,
 * folded exactly like the reference: the shared prefix, then the rest term by term.
 */
function foldSquares(loads: Float64Array, prefix: Float64Array, n: number, a: number, va: number, b: number, vb: number): number {
  const start = b === -1 || a < b ? a : b;
  let sum = prefix[start]!;
  for (let i = start; i < n; i++) {
    const x = i === a ? va : i === b ? vb : loads[i]!;
    sum += x * x;
  }
  return sum;
}

/** Writes the 4 criteria of the state with nodes a and b (b may be -1) at the given loads. */
function writeCriteria(
  scratch: Scratch,
  n: number,
  out: Float64Array,
  offset: number,
  a: number,
  cpuA: number,
  memA: number,
  b: number,
  cpuB: number,
  memB: number,
): void {
  const cpuSquares = foldSquares(scratch.cpuLoad, scratch.cpuPrefix, n, a, cpuA, b, cpuB);
  const memSquares = foldSquares(scratch.memLoad, scratch.memPrefix, n, a, memA, b, memB);
  let cpuHighest = Math.max(scratch.cpuTop.maxExcept(a, b), cpuA);
  let memHighest = Math.max(scratch.memTop.maxExcept(a, b), memA);
  if (b !== -1) {
    cpuHighest = Math.max(cpuHighest, cpuB);
    memHighest = Math.max(memHighest, memB);
  }
  // the reference folds max from 0 over non-negative loads: same value
  cpuHighest = Math.max(0, cpuHighest);
  memHighest = Math.max(0, memHighest);
  out[offset] = 1 + Math.sqrt(cpuSquares / n);
  out[offset + 1] = 1 + cpuHighest;
  out[offset + 2] = 1 + Math.sqrt(memSquares / n);
  out[offset + 3] = 1 + memHighest;
}

/** TOPSIS start scores (static/dynamic), one per node in view order. */
export function fastScoreNodesToStart(view: ClusterView, stats: ResourceStats, scratch: Scratch): NodeScore[] {
  const n = view.n;
  if (n === 0) return [];
  scratch.ensure(n, n);
  prepareLoads(view, scratch);
  const { cpu, maxcpu, mem, maxmem } = view;
  const matrix = scratch.matrix;
  for (let k = 0; k < n; k++) {
    // add_started_resource on node k
    const c = cpu[k]! + (stats.maxcpu === 0 ? maxcpu[k]! : stats.maxcpu);
    const m = mem[k]! + stats.maxmem;
    writeCriteria(scratch, n, matrix, k * CRITERIA_COUNT, k, c / maxcpu[k]!, m / maxmem[k]!, -1, 0, 0);
  }
  const scores = scoreFlatInPlace(SCHEDULER_CRITERIA, { data: matrix, rows: n, cols: CRITERIA_COUNT }, scratch.scores);
  const result: NodeScore[] = new Array(n);
  for (let k = 0; k < n; k++) result[k] = { node: view.names[k]!, score: scores[k]! };
  return result;
}

/** Hypothetical node stats after a bundle leaves `s` and arrives at `t` (s may equal t). */
function movedLoads(view: ClusterView, s: number, t: number, bc: number, bm: number, out: Float64Array): void {
  const { cpu, maxcpu, mem, maxmem } = view;
  // remove_running_resource on the source
  let sc = Math.max(0, cpu[s]! - bc);
  let sm = Math.max(0, mem[s]! - bm);
  if (s === t) {
    sc += bc;
    sm += bm;
  }
  out[0] = sc;
  out[1] = sm;
  if (s !== t) {
    out[2] = cpu[t]! + bc;
    out[3] = mem[t]! + bm;
  }
}

/** Exact imbalance after a move, through the accumulator's direct fold. */
function exactMoveImbalance(view: ClusterView, acc: ImbalanceAccumulator, s: number, t: number, st: Float64Array, metric: ImbalanceMetric): number {
  const ls = nodeLoad(st[0]!, view.maxcpu[s]!, st[1]!, view.maxmem[s]!);
  if (s === t) return acc.imbalanceWithReplaced(s, ls, -1, 0, metric);
  const lt = nodeLoad(st[2]!, view.maxcpu[t]!, st[3]!, view.maxmem[t]!);
  return acc.imbalanceWithReplaced(s, ls, t, lt, metric);
}

function loadsOf(view: ClusterView): Float64Array {
  const loads = new Float64Array(view.n);
  for (let i = 0; i < view.n; i++) loads[i] = nodeLoad(view.cpu[i]!, view.maxcpu[i]!, view.mem[i]!, view.maxmem[i]!);
  return loads;
}

/** Keeps the `limit` smallest migrations by (imbalance, sid, source, target). */
function insertBest(best: ScoredMigration[], m: ScoredMigration, limit: number): void {
  let i = best.length;
  while (i > 0 && compareMigration(m, best[i - 1]!) < 0) i--;
  if (i >= limit) return;
  best.splice(i, 0, m);
  if (best.length > limit) best.pop();
}

function compareMigration(a: ScoredMigration, b: ScoredMigration): number {
  if (a.imbalance !== b.imbalance) return a.imbalance < b.imbalance ? -1 : 1;
  return compareNames(a.sid, b.sid) || compareNames(a.source, b.source) || compareNames(a.target, b.target);
}

/**
 * Bruteforce: O(1) bounds per (candidate, target) from the imbalance accumulator; only pairs
 * whose lower bound's truncated key can reach the `limit`-th best upper bound are evaluated with
 * the exact fold (cached per identical hypothetical state). The result equals the reference.
 */
export function fastBruteforce(view: ClusterView, candidates: readonly IndexedCandidate[], limit: number, metric: ImbalanceMetric): ScoredMigration[] {
  if (limit <= 0) return [];
  const acc = new ImbalanceAccumulator(loadsOf(view));
  const bounds = new Float64Array(3);
  const st = new Float64Array(4);
  // the `limit` smallest truncated upper bounds seen so far (ascending)
  const his: number[] = [];
  let threshold = Infinity;
  let survivorCandidate: number[] = [];
  let survivorTarget: number[] = [];
  let survivorLo: number[] = [];
  let pruneAt = 1024;
  const { cpu, maxcpu, mem, maxmem } = view;
  for (let ci = 0; ci < candidates.length; ci++) {
    const c = candidates[ci]!;
    const s = c.source;
    const bc = c.bundleCpu;
    const bm = c.bundleMem;
    // remove_running_resource on the source, once per candidate
    const sourceCpu = Math.max(0, cpu[s]! - bc);
    const sourceMem = Math.max(0, mem[s]! - bm);
    const ls = nodeLoad(sourceCpu, maxcpu[s]!, sourceMem, maxmem[s]!);
    const targets = c.targets;
    for (let ti = 0; ti < targets.length; ti++) {
      const t = targets[ti]!;
      if (s === t) acc.boundsWithReplaced(s, nodeLoad(sourceCpu + bc, maxcpu[s]!, sourceMem + bm, maxmem[s]!), -1, 0, metric, bounds);
      else acc.boundsWithReplaced(s, ls, t, nodeLoad(cpu[t]! + bc, maxcpu[t]!, mem[t]! + bm, maxmem[t]!), metric, bounds);
      const loKey = truncateImbalance(bounds[0]!);
      if (loKey > threshold) continue;
      const hiKey = truncateImbalance(bounds[1]!);
      if (his.length < limit || hiKey < his[his.length - 1]!) {
        let i = his.length;
        while (i > 0 && his[i - 1]! > hiKey) i--;
        his.splice(i, 0, hiKey);
        if (his.length > limit) his.pop();
        if (his.length === limit) threshold = his[limit - 1]!;
      }
      survivorCandidate.push(ci);
      survivorTarget.push(ti);
      survivorLo.push(loKey);
      if (survivorLo.length >= pruneAt) {
        const keepC: number[] = [];
        const keepT: number[] = [];
        const keepLo: number[] = [];
        for (let k = 0; k < survivorLo.length; k++) {
          if (survivorLo[k]! <= threshold) {
            keepC.push(survivorCandidate[k]!);
            keepT.push(survivorTarget[k]!);
            keepLo.push(survivorLo[k]!);
          }
        }
        survivorCandidate = keepC;
        survivorTarget = keepT;
        survivorLo = keepLo;
        pruneAt = Math.max(1024, survivorLo.length * 2);
      }
    }
  }
  const best: ScoredMigration[] = [];
  const cache = new Map<string, number>();
  for (let k = 0; k < survivorLo.length; k++) {
    if (survivorLo[k]! > threshold) continue;
    const c = candidates[survivorCandidate[k]!]!;
    const t = c.targets[survivorTarget[k]!]!;
    const key = `${c.source}:${t}:${c.bundleCpu}:${c.bundleMem}`;
    let value = cache.get(key);
    if (value === undefined) {
      movedLoads(view, c.source, t, c.bundleCpu, c.bundleMem, st);
      value = truncateImbalance(exactMoveImbalance(view, acc, c.source, t, st, metric));
      cache.set(key, value);
    }
    insertBest(best, { sid: c.sid, source: view.names[c.source]!, target: view.names[t]!, imbalance: value }, limit);
  }
  return best;
}

/**
 * TOPSIS migrations: the 4 criteria of every (candidate, target) state computed exactly (shared
 * prefix folds for the sums of squares, top-3 maxima for the highest loads; identical states are
 * computed once), then TOPSIS and a stable rank; the first `limit` get their exact imbalance.
 */
export function fastTopsis(
  view: ClusterView,
  candidates: readonly IndexedCandidate[],
  limit: number,
  metric: ImbalanceMetric,
  scratch: Scratch,
): ScoredMigration[] {
  if (limit <= 0) return [];
  const n = view.n;
  let rows = 0;
  for (const c of candidates) rows += c.targets.length;
  if (rows === 0) return [];
  scratch.ensure(n, rows);
  prepareLoads(view, scratch);
  const st = new Float64Array(4);
  if (limit === 1) {
    // O(1) approximate criteria per pair; proven winner or -1 (then the exact path below)
    const winner = separatedTopsisWinner(view, candidates, rows, scratch);
    if (winner !== -1) {
      topsisPathCounters.separated++;
      return [scoredRow(view, candidates, winner, metric, st)];
    }
  }
  topsisPathCounters.exact++;
  const matrix = scratch.matrix;
  const { maxcpu, maxmem } = view;
  // identical bundles on the same source give identical states per target: compute once
  const bundleRow = new Map<string, Int32Array>();
  let row = 0;
  for (const c of candidates) {
    const s = c.source;
    const bundleKey = `${s}:${c.bundleCpu}:${c.bundleMem}`;
    let known = bundleRow.get(bundleKey);
    if (known === undefined) {
      known = new Int32Array(n).fill(-1);
      bundleRow.set(bundleKey, known);
    }
    for (let ti = 0; ti < c.targets.length; ti++, row++) {
      const t = c.targets[ti]!;
      const offset = row * CRITERIA_COUNT;
      const earlier = known[t]!;
      if (earlier !== -1) {
        matrix.copyWithin(offset, earlier * CRITERIA_COUNT, earlier * CRITERIA_COUNT + CRITERIA_COUNT);
        continue;
      }
      known[t] = row;
      movedLoads(view, s, t, c.bundleCpu, c.bundleMem, st);
      if (s === t) {
        writeCriteria(scratch, n, matrix, offset, s, st[0]! / maxcpu[s]!, st[1]! / maxmem[s]!, -1, 0, 0);
      } else {
        writeCriteria(scratch, n, matrix, offset, s, st[0]! / maxcpu[s]!, st[1]! / maxmem[s]!, t, st[2]! / maxcpu[t]!, st[3]! / maxmem[t]!);
      }
    }
  }
  const scores = scoreFlatInPlace(SCHEDULER_CRITERIA, { data: matrix, rows, cols: CRITERIA_COUNT }, scratch.scores);
  return rankTop(scores, rows, limit).map((r) => scoredRow(view, candidates, r, metric, st));
}

/** The scored migration of row `r` (candidate order, then target order) with its exact imbalance. */
function scoredRow(view: ClusterView, candidates: readonly IndexedCandidate[], r: number, metric: ImbalanceMetric, st: Float64Array): ScoredMigration {
  let ci = 0;
  let base = 0;
  while (base + candidates[ci]!.targets.length <= r) base += candidates[ci++]!.targets.length;
  const c = candidates[ci]!;
  const t = c.targets[r - base]!;
  movedLoads(view, c.source, t, c.bundleCpu, c.bundleMem, st);
  const ls = nodeLoad(st[0]!, view.maxcpu[c.source]!, st[1]!, view.maxmem[c.source]!);
  const loads = loadsOf(view);
  const imbalance =
    c.source === t
      ? imbalanceWithReplaced(loads, metric, c.source, ls, -1, 0)
      : imbalanceWithReplaced(loads, metric, c.source, ls, t, nodeLoad(st[2]!, view.maxcpu[t]!, st[3]!, view.maxmem[t]!));
  return { sid: c.sid, source: view.names[c.source]!, target: view.names[t]!, imbalance: truncateImbalance(imbalance) };
}

/** The first `limit` indices of a stable descending sort of `scores[0..rows)`. */
function rankTop(scores: Float64Array, rows: number, limit: number): number[] {
  if (limit >= rows || limit > 16) return rankScores(scores.subarray(0, rows)).slice(0, limit);
  const top: number[] = [];
  for (let i = 0; i < rows; i++) {
    const v = scores[i]!;
    if (top.length === limit && !(v > scores[top[limit - 1]!]!)) continue;
    let k = top.length;
    while (k > 0 && v > scores[top[k - 1]!]!) k--;
    top.splice(k, 0, i);
    if (top.length > limit) top.pop();
  }
  return top;
}
