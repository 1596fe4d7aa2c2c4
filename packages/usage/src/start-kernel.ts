/**
 * The start-scoring kernel (spec §4.5, `score_nodes_to_start_service`): the TOPSIS score of
 * every node for a resource started there. It computes what writing the four criteria of every
 * node's state and scoring them with `scoreFlatInPlace` of `@poise/topsis` computes — the same
 * float operations in the same order, so the same bits — fused into three passes over one
 * interleaved typed array, with no allocation but the returned scores. Its cost is in the
 * package README (Cost); `bench/native/start-score.c` is the same kernel in C, for the benchmark.
 */
import * as topsisModule from '@poise/topsis';
import * as kernels from './kernels';
import type { NodeScore } from './types';

/* module-local copies of imported bindings used on the hot path (see `./fast`) */
const { scoreFlatInPlace } = topsisModule;
const { CRITERIA_COUNT, schedulerCriteria } = kernels;

/*
 * One record of START_STRIDE doubles per node, node i at i·START_STRIDE, in view order. The caller
 * writes the node's aggregated stats (START_CPU .. START_MAXMEM); the kernel keeps its per-node
 * terms in the rest: the squared cpu and memory loads, and the four criteria of the state with
 * the resource started on the node (a row of the TOPSIS matrix; the rows are START_STRIDE apart,
 * which `scoreFlatInPlace` cannot read, so the fallback below copies them).
 */
export const START_CPU = 0;
export const START_MAXCPU = 1;
export const START_MEM = 2;
export const START_MAXMEM = 3;
const CPU_SQUARE = 4;
const MEM_SQUARE = 5;
const CRITERIA_AT = 6;
export const START_STRIDE = 10;

/* the scheduler's weights (the package's own instance: no caller can change it) */
const W_CPU_AVERAGE = schedulerCriteria.weights[0]!;
const W_CPU_HIGHEST = schedulerCriteria.weights[1]!;
const W_MEM_AVERAGE = schedulerCriteria.weights[2]!;
const W_MEM_HIGHEST = schedulerCriteria.weights[3]!;

/**
 * The thresholds below which `scoreFlatInPlace` leaves its plain folds for scaled ones: 2^-969 per
 * value for a column's sum of squares, 2^-900 per criterion for a row's squared distances.
 */
const SAFE_COLUMN_SQUARES_PER_ROW = 2 ** -969;
const SAFE_DISTANCE_SQUARES = CRITERIA_COUNT * 2 ** -900;

/**
 * How often a matrix left the plain folds' range and was scored by `scoreFlatInPlace` (never
 * within the accepted stats, see {@link scoreNodesToStartKernel}). Internal diagnostics for tests;
 * not part of the package API.
 */
export const startKernelCounters = { scaled: 0 };

/** The kernel's buffers, reused between calls (grown, never shrunk). */
export class StartScratch {
  /** The per-node records (see {@link START_STRIDE}). */
  nodes = new Float64Array(0);
  scores = new Float64Array(0);
  /** Only for the fallback to `scoreFlatInPlace`: the rows packed, and its ideal points. */
  matrix = new Float64Array(0);
  readonly ideal = new Float64Array(2 * CRITERIA_COUNT);

  /** The node records for `n` nodes, for the caller to fill in. */
  records(n: number): Float64Array {
    if (this.scores.length < n) {
      const size = Math.max(n, this.scores.length * 2);
      this.nodes = new Float64Array(size * START_STRIDE);
      this.scores = new Float64Array(size);
      this.matrix = new Float64Array(size * CRITERIA_COUNT);
    }
    return this.nodes;
  }
}

/**
 * TOPSIS start scores (static/dynamic) of `n` nodes (`names`, and their stats in
 * `scratch.nodes`, written through {@link StartScratch.records}), one per node in that order,
 * for a resource that adds `addCpu` cores (0: the node's own cpu count, as
 * `add_started_resource` does) and `addMem` bytes to the node it starts on. Higher is better.
 *
 * 1. Per node its squared loads, and the two largest loads per resource (the highest load of a
 *    state that changes one node is the largest elsewhere or its own).
 * 2. Per node k the criteria of "started on k": the sums of squares as the reference folds them
 *    (the squares before k, folded as the rows go, then k's new square, then the rest term by
 *    term: n²/2 additions in all), the highest loads, `1 + √(sum/n)` and `1 + highest`;
 *    meanwhile each column's sum of squares (folded from 0 in row order) and its extremes.
 * 3. Per row its distances to the ideal points and its score. The criteria are minimised, so the
 *    ideal points are each column's minimum and maximum divided by the column's norm: division
 *    by a positive number is monotone under rounding, so these equal the extremes of the divided
 *    values, which is what `scoreFlatInPlace` takes.
 *
 * Every criterion is `1 + a load`, at least 1 and below 2^101 (`MAX_STAT_VALUE`), so every
 * column's sum of squares is at least 1 per row and finite, and a row's squared distances are
 * either exactly 0 (it equals both ideal points: the plain formula gives 0, like the scaled path)
 * or above 2^-400, far inside the plain folds' range. The thresholds are tested all the same: a
 * matrix outside them is scored by `scoreFlatInPlace` itself.
 */
export function scoreNodesToStartKernel(names: readonly string[], n: number, addCpu: number, addMem: number, scratch: StartScratch): NodeScore[] {
  if (n === 0) return [];
  // the constants as locals: optimised code reads a module constant from the module's context at
  // every use (a load and a type check), a local once per call
  const stride = START_STRIDE;
  const cpuAt = START_CPU;
  const maxcpuAt = START_MAXCPU;
  const memAt = START_MEM;
  const maxmemAt = START_MAXMEM;
  const cpuSquareAt = CPU_SQUARE;
  const memSquareAt = MEM_SQUARE;
  const criteriaAt = CRITERIA_AT;
  const work = scratch.nodes;
  const end = n * stride;
  // 1. the squared loads; the largest load per resource (its first position) and the next
  let cpuFirst = -Infinity;
  let cpuSecond = -Infinity;
  let cpuFirstAt = -1;
  let memFirst = -Infinity;
  let memSecond = -Infinity;
  let memFirstAt = -1;
  for (let o = 0; o < end; o += stride) {
    const cpuLoad = work[o + cpuAt]! / work[o + maxcpuAt]!;
    const memLoad = work[o + memAt]! / work[o + maxmemAt]!;
    work[o + cpuSquareAt] = cpuLoad * cpuLoad;
    work[o + memSquareAt] = memLoad * memLoad;
    if (cpuLoad > cpuFirst) {
      cpuSecond = cpuFirst;
      cpuFirst = cpuLoad;
      cpuFirstAt = o;
    } else if (cpuLoad > cpuSecond) cpuSecond = cpuLoad;
    if (memLoad > memFirst) {
      memSecond = memFirst;
      memFirst = memLoad;
      memFirstAt = o;
    } else if (memLoad > memSecond) memSecond = memLoad;
  }
  // 2. the criteria of every state, and their columns' sums of squares and extremes
  let cpuPrefix = 0; // the squares of the nodes before this one, folded from 0
  let memPrefix = 0;
  let squares0 = 0;
  let squares1 = 0;
  let squares2 = 0;
  let squares3 = 0;
  let min0 = Infinity;
  let min1 = Infinity;
  let min2 = Infinity;
  let min3 = Infinity;
  let max0 = -Infinity;
  let max1 = -Infinity;
  let max2 = -Infinity;
  let max3 = -Infinity;
  for (let o = 0; o < end; o += stride) {
    // add_started_resource on this node
    const maxcpu = work[o + maxcpuAt]!;
    const cpuLoad = (work[o + cpuAt]! + (addCpu === 0 ? maxcpu : addCpu)) / maxcpu;
    const memLoad = (work[o + memAt]! + addMem) / work[o + maxmemAt]!;
    let cpuSquares = cpuPrefix + cpuLoad * cpuLoad;
    let memSquares = memPrefix + memLoad * memLoad;
    for (let i = o + stride; i < end; i += stride) {
      cpuSquares += work[i + cpuSquareAt]!;
      memSquares += work[i + memSquareAt]!;
    }
    cpuPrefix += work[o + cpuSquareAt]!;
    memPrefix += work[o + memSquareAt]!;
    // the reference folds max from 0 over non-negative loads: the same value
    const cpuHighest = Math.max(0, Math.max(cpuFirstAt !== o ? cpuFirst : cpuSecond, cpuLoad));
    const memHighest = Math.max(0, Math.max(memFirstAt !== o ? memFirst : memSecond, memLoad));
    const x0 = 1 + Math.sqrt(cpuSquares / n);
    const x1 = 1 + cpuHighest;
    const x2 = 1 + Math.sqrt(memSquares / n);
    const x3 = 1 + memHighest;
    work[o + criteriaAt] = x0;
    work[o + criteriaAt + 1] = x1;
    work[o + criteriaAt + 2] = x2;
    work[o + criteriaAt + 3] = x3;
    squares0 += x0 * x0;
    squares1 += x1 * x1;
    squares2 += x2 * x2;
    squares3 += x3 * x3;
    if (x0 < min0) min0 = x0;
    if (x0 > max0) max0 = x0;
    if (x1 < min1) min1 = x1;
    if (x1 > max1) max1 = x1;
    if (x2 < min2) min2 = x2;
    if (x2 > max2) max2 = x2;
    if (x3 < min3) min3 = x3;
    if (x3 > max3) max3 = x3;
  }
  const safe = n * SAFE_COLUMN_SQUARES_PER_ROW;
  const result: NodeScore[] = new Array(n);
  let plain =
    squares0 >= safe &&
    squares0 < Infinity &&
    squares1 >= safe &&
    squares1 < Infinity &&
    squares2 >= safe &&
    squares2 < Infinity &&
    squares3 >= safe &&
    squares3 < Infinity;
  if (plain) {
    // 3. the ideal points, then every row's distances (folded from 0 over the criteria) and score
    const wCpuAverage = W_CPU_AVERAGE;
    const wCpuHighest = W_CPU_HIGHEST;
    const wMemAverage = W_MEM_AVERAGE;
    const wMemHighest = W_MEM_HIGHEST;
    const safeDistance = SAFE_DISTANCE_SQUARES;
    const norm0 = Math.sqrt(squares0);
    const norm1 = Math.sqrt(squares1);
    const norm2 = Math.sqrt(squares2);
    const norm3 = Math.sqrt(squares3);
    const best0 = min0 / norm0;
    const best1 = min1 / norm1;
    const best2 = min2 / norm2;
    const best3 = min3 / norm3;
    const worst0 = max0 / norm0;
    const worst1 = max1 / norm1;
    const worst2 = max2 / norm2;
    const worst3 = max3 / norm3;
    for (let o = criteriaAt, k = 0; k < n; o += stride, k++) {
      const v0 = work[o]! / norm0;
      const v1 = work[o + 1]! / norm1;
      const v2 = work[o + 2]! / norm2;
      const v3 = work[o + 3]! / norm3;
      const b0 = wCpuAverage * (v0 - best0);
      const b1 = wCpuHighest * (v1 - best1);
      const b2 = wMemAverage * (v2 - best2);
      const b3 = wMemHighest * (v3 - best3);
      const w0 = wCpuAverage * (v0 - worst0);
      const w1 = wCpuHighest * (v1 - worst1);
      const w2 = wMemAverage * (v2 - worst2);
      const w3 = wMemHighest * (v3 - worst3);
      const toBestSquared = b0 * b0 + b1 * b1 + b2 * b2 + b3 * b3;
      const toWorstSquared = w0 * w0 + w1 * w1 + w2 * w2 + w3 * w3;
      const total = toBestSquared + toWorstSquared;
      if (!(total >= safeDistance) && total !== 0) {
        plain = false;
        break;
      }
      const toBest = Math.sqrt(toBestSquared);
      const toWorst = Math.sqrt(toWorstSquared);
      const divisor = toBest + toWorst;
      result[k] = { node: names[k]!, score: divisor === 0 ? 0 : toWorst / divisor };
    }
  }
  if (!plain) {
    const scores = scoreRowsScaled(n, scratch);
    for (let k = 0; k < n; k++) result[k] = { node: names[k]!, score: scores[k]! };
  }
  return result;
}

/** The rows (criteria) of `scratch.nodes` scored by `scoreFlatInPlace`, into `scratch.scores`. */
function scoreRowsScaled(n: number, scratch: StartScratch): Float64Array {
  startKernelCounters.scaled++;
  const { nodes, matrix } = scratch;
  for (let k = 0; k < n; k++) matrix.set(nodes.subarray(k * START_STRIDE + CRITERIA_AT, k * START_STRIDE + CRITERIA_AT + CRITERIA_COUNT), k * CRITERIA_COUNT);
  return scoreFlatInPlace(schedulerCriteria, { data: matrix, rows: n, cols: CRITERIA_COUNT }, scratch.scores, scratch.ideal);
}
