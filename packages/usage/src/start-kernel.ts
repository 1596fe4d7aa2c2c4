/**
 * The start-scoring kernel (spec §4.5, `score_nodes_to_start_service`): the TOPSIS score of
 * every node for a resource started there. It computes what writing the four criteria of every
 * node's state and scoring them with `scoreFlatInPlace` of `@poise/topsis` computes — the same
 * float operations in the same order, so the same bits — fused into four passes over typed
 * arrays reused between calls (the node stats, their squared loads, the TOPSIS matrix, the
 * scores), with no allocation. Its cost is in the package README (Cost);
 * `bench/native/start-score.c` is the same kernel in C, for the benchmark.
 */
import * as topsisModule from '@poise/topsis';
import * as kernels from './kernels';

/* module-local copies of imported bindings used on the hot path (see `./fast`) */
const { scoreFlatInPlace } = topsisModule;
const { CRITERIA_COUNT, schedulerCriteria } = kernels;

/*
 * The caller's side of the kernel's buffers: one record of START_STRIDE doubles per node, node i
 * at i·START_STRIDE, in view order, holding the node's aggregated stats.
 */
export const START_CPU = 0;
export const START_MAXCPU = 1;
export const START_MEM = 2;
export const START_MAXMEM = 3;
export const START_STRIDE = 4;

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
  /** Per node its squared cpu and memory loads. */
  squares = new Float64Array(0);
  /** Per node the criteria of the state with the resource started there: the TOPSIS matrix. */
  rows = new Float64Array(0);
  scores = new Float64Array(0);
  readonly ideal = new Float64Array(2 * CRITERIA_COUNT);

  /** The node records for `n` nodes, for the caller to fill in. */
  records(n: number): Float64Array {
    if (this.scores.length < n) {
      const size = Math.max(n, this.scores.length * 2);
      this.nodes = new Float64Array(size * START_STRIDE);
      this.squares = new Float64Array(size * 2);
      this.rows = new Float64Array(size * CRITERIA_COUNT);
      this.scores = new Float64Array(size);
    }
    return this.nodes;
  }
}

/**
 * Row `k` of the TOPSIS matrix: `1 + √(sum/n)` and `1 + highest` per resource, the highest load
 * being the largest elsewhere or the node's own (the reference folds max from 0 over
 * non-negative loads: the same value).
 */
function startRow(
  rows: Float64Array,
  k: number,
  n: number,
  cpuSquares: number,
  memSquares: number,
  cpuElsewhere: number,
  cpuLoad: number,
  memElsewhere: number,
  memLoad: number,
): void {
  rows[4 * k] = 1 + Math.sqrt(cpuSquares / n);
  rows[4 * k + 1] = 1 + Math.max(0, Math.max(cpuElsewhere, cpuLoad));
  rows[4 * k + 2] = 1 + Math.sqrt(memSquares / n);
  rows[4 * k + 3] = 1 + Math.max(0, Math.max(memElsewhere, memLoad));
}

/**
 * TOPSIS start scores (static/dynamic) of `n` nodes (their stats in `scratch.nodes`, written
 * through {@link StartScratch.records}), one per node in that order, in `scratch.scores[0..n)`
 * (returned), for a resource that adds `addCpu` cores (0: the node's own cpu count, as
 * `add_started_resource` does) and `addMem` bytes to the node it starts on. Higher is better.
 *
 * 1. Per node its squared loads, and the two largest loads per resource (the highest load of a
 *    state that changes one node is the largest elsewhere or its own).
 * 2. Per node k the criteria of "started on k" (a row of the TOPSIS matrix): the sums of squares
 *    as the reference folds them (the squares before k, folded as the rows go, then k's new
 *    square, then the rest term by term: n²/2 additions in all), the highest loads,
 *    `1 + √(sum/n)` and `1 + highest`. Two rows a step: the sums of k and k + 1 fold the same
 *    squares after k + 1, in four independent chains over one load of each square (each chain
 *    adds what it would alone, in the same order).
 * 3. Per column its sum of squares (folded from 0 in row order) and its extremes.
 * 4. Per row its distances to the ideal points and its score. The criteria are minimised, so the
 *    ideal points are each column's minimum and maximum divided by the column's norm: division
 *    by a positive number is monotone under rounding, so these equal the extremes of the divided
 *    values, which is what `scoreFlatInPlace` takes.
 *
 * Every criterion is `1 + a load`, at least 1 and below 2^101 (`MAX_STAT_VALUE`), so every
 * column's sum of squares is at least 1 per row and finite, and a row's squared distances are
 * either exactly 0 (it equals both ideal points: the plain formula gives 0, like the scaled path)
 * or above 2^-400, far inside the plain folds' range. The thresholds are tested all the same: a
 * matrix outside them is scored by `scoreFlatInPlace` itself.
 *
 * Written for the optimising compiler: the constants are read into locals once per call (a
 * module constant is read from the module's context, with a type check, at every use), each pass
 * keeps few values alive (no spills), and every typed-array access counts (each one checks the
 * array and its bounds).
 */
export function scoreNodesToStartKernel(
  n: number,
  addCpu: number,
  addMem: number,
  scratch: StartScratch,
): Float64Array {
  const { nodes, squares, rows, scores } = scratch;
  if (n === 0) return scores;
  // the constants as locals (see above)
  const stride = START_STRIDE;
  const cpuAt = START_CPU;
  const maxcpuAt = START_MAXCPU;
  const memAt = START_MEM;
  const maxmemAt = START_MAXMEM;
  const end = 2 * n;
  // 1. the squared loads; the largest load per resource (its first position) and the next
  let cpuFirst = -Infinity;
  let cpuSecond = -Infinity;
  let cpuFirstAt = -1;
  let memFirst = -Infinity;
  let memSecond = -Infinity;
  let memFirstAt = -1;
  for (let i = 0, o = 0; i < n; i++, o += stride) {
    const cpuLoad = nodes[o + cpuAt]! / nodes[o + maxcpuAt]!;
    const memLoad = nodes[o + memAt]! / nodes[o + maxmemAt]!;
    squares[2 * i] = cpuLoad * cpuLoad;
    squares[2 * i + 1] = memLoad * memLoad;
    if (cpuLoad > cpuFirst) {
      cpuSecond = cpuFirst;
      cpuFirst = cpuLoad;
      cpuFirstAt = i;
    } else if (cpuLoad > cpuSecond) cpuSecond = cpuLoad;
    if (memLoad > memFirst) {
      memSecond = memFirst;
      memFirst = memLoad;
      memFirstAt = i;
    } else if (memLoad > memSecond) memSecond = memLoad;
  }
  // 2. the criteria of every state, two states a step: node k's and node k + 1's sums fold the
  // same squares after k + 1, each in its own chain (the same additions in the same order as
  // one state at a time, with twice the independent work per loaded square)
  let cpuPrefix = 0; // the squares of the nodes before k, folded from 0
  let memPrefix = 0;
  let k = 0;
  for (let o = 0; k + 1 < n; k += 2, o += 2 * stride) {
    // add_started_resource on node k (a) and on node k + 1 (b)
    const maxcpuA = nodes[o + maxcpuAt]!;
    const cpuLoadA = (nodes[o + cpuAt]! + (addCpu === 0 ? maxcpuA : addCpu)) / maxcpuA;
    const memLoadA = (nodes[o + memAt]! + addMem) / nodes[o + maxmemAt]!;
    const maxcpuB = nodes[o + stride + maxcpuAt]!;
    const cpuLoadB = (nodes[o + stride + cpuAt]! + (addCpu === 0 ? maxcpuB : addCpu)) / maxcpuB;
    const memLoadB = (nodes[o + stride + memAt]! + addMem) / nodes[o + stride + maxmemAt]!;
    const cpuSquareA = squares[2 * k]!;
    const memSquareA = squares[2 * k + 1]!;
    const cpuSquareB = squares[2 * k + 2]!;
    const memSquareB = squares[2 * k + 3]!;
    let cpuSquaresA = cpuPrefix + cpuLoadA * cpuLoadA + cpuSquareB;
    let memSquaresA = memPrefix + memLoadA * memLoadA + memSquareB;
    cpuPrefix += cpuSquareA;
    memPrefix += memSquareA;
    let cpuSquaresB = cpuPrefix + cpuLoadB * cpuLoadB;
    let memSquaresB = memPrefix + memLoadB * memLoadB;
    cpuPrefix += cpuSquareB;
    memPrefix += memSquareB;
    // the rest term by term
    for (let i = 2 * k + 4; i < end; i += 2) {
      const cpu = squares[i]!;
      const mem = squares[i + 1]!;
      cpuSquaresA += cpu;
      memSquaresA += mem;
      cpuSquaresB += cpu;
      memSquaresB += mem;
    }
    startRow(
      rows,
      k,
      n,
      cpuSquaresA,
      memSquaresA,
      cpuFirstAt !== k ? cpuFirst : cpuSecond,
      cpuLoadA,
      memFirstAt !== k ? memFirst : memSecond,
      memLoadA,
    );
    startRow(
      rows,
      k + 1,
      n,
      cpuSquaresB,
      memSquaresB,
      cpuFirstAt !== k + 1 ? cpuFirst : cpuSecond,
      cpuLoadB,
      memFirstAt !== k + 1 ? memFirst : memSecond,
      memLoadB,
    );
  }
  if (k < n) {
    // the last node of an odd count: nothing after it
    const o = k * stride;
    const maxcpu = nodes[o + maxcpuAt]!;
    const cpuLoad = (nodes[o + cpuAt]! + (addCpu === 0 ? maxcpu : addCpu)) / maxcpu;
    const memLoad = (nodes[o + memAt]! + addMem) / nodes[o + maxmemAt]!;
    startRow(
      rows,
      k,
      n,
      cpuPrefix + cpuLoad * cpuLoad,
      memPrefix + memLoad * memLoad,
      cpuFirstAt !== k ? cpuFirst : cpuSecond,
      cpuLoad,
      memFirstAt !== k ? memFirst : memSecond,
      memLoad,
    );
  }
  // 3. the columns' sums of squares and extremes
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
  for (let o = 0, rowsEnd = 4 * n; o < rowsEnd; o += 4) {
    const x0 = rows[o]!;
    const x1 = rows[o + 1]!;
    const x2 = rows[o + 2]!;
    const x3 = rows[o + 3]!;
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
    // 4. the ideal points, then every row's distances (folded from 0 over the criteria) and score
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
    for (let k = 0, o = 0; k < n; k++, o += 4) {
      const v0 = rows[o]! / norm0;
      const v1 = rows[o + 1]! / norm1;
      const v2 = rows[o + 2]! / norm2;
      const v3 = rows[o + 3]! / norm3;
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
      scores[k] = divisor === 0 ? 0 : toWorst / divisor;
    }
  }
  if (!plain) {
    // outside the plain folds' range (never with the accepted stats): the matrix as it is
    startKernelCounters.scaled++;
    scoreFlatInPlace(schedulerCriteria, { data: rows, rows: n, cols: CRITERIA_COUNT }, scores, scratch.ideal);
  }
  return scores;
}
