/**
 * The TOPSIS balancing choice (spec §4.5) in O(1) per (candidate, target) pair, proven equal to
 * the reference's choice or declined.
 *
 * The reference builds one alternative per pair with 4 criteria (root mean square and highest of
 * the cpu loads, the same for memory), normalises each column by its 2-norm, scores every row
 * `d_worst / (d_best + d_worst)` and takes the first row of a stable descending sort. Only the
 * winner and its exact imbalance are reported, never the scores. So this module:
 *
 * 1. computes the criteria approximately: the sums of squares are the full fold `P` updated at
 *    the (at most) two changed positions, `P − sq_s − sq_t + new_s² + new_t²` (O(1) instead of
 *    replaying the tail of the fold); the highest loads come from the top-3 maxima and are exact;
 * 2. bounds the error of every criterion against the reference's float value (uniform per
 *    column, `e_j` below) and propagates it through the normalisation, the ideal points and the
 *    distances into an interval that contains the reference's float score of every row;
 * 3. in one pass over the rows, finds the row with the best approximate score and the rows with
 *    the largest upper score bound (overall, and among rows of another state than that one), and
 *    accepts the winner only when the lower end of its interval beats the upper end of every row
 *    that is not the same hypothetical state, by a relative {@link SEPARATION_SLACK} on top of
 *    the bound. Rows of the same state (same source,
 *    target and bundle sums) have bit-identical reference scores, and the stable sort then picks
 *    the earliest, which is the first best approximate row. Otherwise it returns -1 and the caller
 *    runs the exact path; so does anything non-finite or degenerate (a column whose spread is
 *    within its error, `d_best + d_worst` within its error: the intervals then overlap).
 *    The pass looks at a candidate's rows only when its column minima (kept from step 1) could
 *    pass either test; every term of both is monotone in the row's values, so the skipped rows
 *    could not have changed the outcome. The rows are not stored between the passes (a matrix
 *    of every row goes through memory twice): the few candidates looked at are recomputed by
 *    the same code, hence the same bits.
 *
 * The bound, with u = 2⁻⁵³, n nodes, R rows, X the reference criteria and X̃ ours:
 * - sums of squares: the reference folds n non-negative rounded squares, error ≤ γ_{n−1}·Σ;
 *   `P` carries the same; our 4 updates add ≤ 4u·(P + new) where `new` is the sum of the two
 *   replaced squares, and the target's load taken by reciprocal (≤ 2u off) ≤ 5u·new more.
 *   Hence |S̃ − S| ≤ K·(P + new) with K = 4(n + 8)u (about 2× the textbook constant),
 *   uniformly ε = K·(P + max new).
 * - roots: |√(S̃/n) − √(S/n)| ≤ (ε/n)/√(S̃/n) (or √(ε/n) when the smallest root is 0), plus the
 *   rounding of the division (ours: a product with the rounded 1/n), the root and the `1 +` in
 *   both computations (≤ 16u·(1 + max root)):
 *   that is e_j for the two root columns; the two highest columns are exact (e_j = 0).
 * - column norms: both are sums of R positive squares (the reference folds them in row order,
 *   we fold them in the same order while the rows are produced; γ_R each) of values ≥ 1 that
 *   differ by ≤ e_j, so D / D̃ ∈ [1 − κ_j, 1 + κ_j] with κ_j = 2(γ_R + e_j + 4u) + 16u (the 16u
 *   also absorbs the roundings of `v − best`, the weight product, the squares, the 4-term fold
 *   and the roots in the reference's distances).
 * - distances: the reference's `v_i − best` equals `(X_i − X_min)/D` up to 2u·X_max/D, and
 *   X_i − X_min is within 2e_j of X̃_i − X̃_min (likewise for the worst), so with
 *   E_j = 2e_j + 3u·(X̃_max + e_j) every weighted difference lies in
 *   [max(0, Δ̃ − E_j)·w_j/(D̃(1 + κ_j)), (Δ̃ + E_j)·w_j/(D̃(1 − κ_j))], and so do the distances'
 *   components. The score `d_w/(d_b + d_w)` increases in d_w and decreases in d_b, giving
 *   [d_w,lo/(d_b,hi + d_w,lo), d_w,hi/(d_b,lo + d_w,hi)].
 * - our own evaluation of these bounds rounds non-negative quantities only (a few dozen
 *   operations, relative ≤ 100u ≈ 1e-14 in total), far inside {@link SEPARATION_SLACK}.
 * The test `s_hi(i) < σ` (σ = the winner's lower end) is evaluated without roots as
 * `d_w,hi²·(1 − σ)² < σ²·d_b,lo²`, for the row with the smallest ρ = d_b,lo²/d_w,hi² (the
 * largest s_hi) outside the winner's state; an extra 1e-12 covers the rounding of ρ.
 */
import { type Scratch, TARGET_TERMS as TARGET_TERMS_EXPORT } from './scratch';
import { type ClusterView, type IndexedCandidates, candidateOfRow as candidateOfRowExport } from './view';
import { CRITERIA_COUNT as CRITERIA_COUNT_EXPORT, schedulerCriteria } from './kernels';

/**
 * Module-local copy: some loaders (tsx's CommonJS interop) turn every read of an imported binding
 * into a getter call, which costs more than the arithmetic in these loops.
 */
const CRITERIA_COUNT = CRITERIA_COUNT_EXPORT;
const candidateOfRow = candidateOfRowExport;
const TARGET_TERMS = TARGET_TERMS_EXPORT;

/** Unit roundoff of binary64. */
const UNIT_ROUNDOFF = 2 ** -53;

/**
 * Required relative separation of the winner's score from every other state's, on top of the
 * propagated error bound. Generous (the bound's own rounding is ~1e-14): a near-tie within it
 * goes to the exact path, which costs time, never a wrong answer.
 */
const SEPARATION_SLACK = 1e-9;

/**
 * The row (candidate order, then target order) the reference's TOPSIS ranks first, or -1 when
 * the approximation cannot prove it (the caller then runs the exact path). `rows` is the number
 * of (candidate, target) pairs; `scratch` holds the prepared loads (`prepareLoads`) and room for
 * `rows` matrix rows. O(n + rows).
 */
export function separatedTopsisWinner(
  view: ClusterView,
  cands: IndexedCandidates,
  rows: number,
  scratch: Scratch,
): number {
  const n = view.n;
  const weights = schedulerCriteria.weights;
  for (let j = 0; j < CRITERIA_COUNT; j++) if (schedulerCriteria.maximize[j]) return -1; // all minimised here
  const u = UNIT_ROUNDOFF;
  if (rows * u >= 0.25) return -1;
  const cpuTotal = scratch.cpuPrefix[n]!;
  const memTotal = scratch.memPrefix[n]!;

  // ---- 1. approximate criteria, O(1) per pair ----
  const stats = scratch.columnStats;
  approximateCriteria(view, cands, scratch, stats);
  const cpuNewMax = stats[0]!,
    memNewMax = stats[1]!;
  const cpuRootMin = stats[2]!,
    cpuRootMax = stats[3]!,
    memRootMin = stats[4]!,
    memRootMax = stats[5]!;

  // ---- 2. per-column error bounds, norms and ideal points ----
  const K = 4 * (n + 8) * u;
  const rootError = (total: number, newMax: number, rootMin: number, rootMax: number): number => {
    const eps = (K * (total + newMax)) / n;
    const spread = rootMin > 0 ? (eps / rootMin) * (1 + 1e-9) : Math.sqrt(eps) * (1 + 1e-9);
    return spread + 16 * u * (1 + rootMax);
  };
  const errors = [
    rootError(cpuTotal, cpuNewMax, cpuRootMin, cpuRootMax),
    0,
    rootError(memTotal, memNewMax, memRootMin, memRootMax),
    0,
  ];
  const columnSquares = [stats[6]!, stats[7]!, stats[8]!, stats[9]!];
  const columnLows = [stats[10]!, stats[11]!, stats[12]!, stats[13]!];
  const columnHighs = [stats[14]!, stats[15]!, stats[16]!, stats[17]!];
  const gammaR = (rows * u) / (1 - rows * u);
  const lows = scratch.columnMin;
  const highs = scratch.columnMax;
  const bound = scratch.columnBound; // E_j
  const loScale = scratch.columnLoScale;
  const hiScale = scratch.columnHiScale;
  const approxScale = scratch.columnScale;
  for (let j = 0; j < CRITERIA_COUNT; j++) {
    const lo = columnLows[j]!;
    const hi = columnHighs[j]!;
    const norm = Math.sqrt(columnSquares[j]!);
    const e = errors[j]!;
    const kappa = 2 * (gammaR + e + 4 * u) + 16 * u;
    if (!Number.isFinite(norm) || !(norm > 0) || !Number.isFinite(e) || !(kappa < 0.5)) return -1;
    lows[j] = lo;
    highs[j] = hi;
    bound[j] = 2 * e + 3 * u * (hi + e);
    approxScale[j] = weights[j]! / norm;
    loScale[j] = weights[j]! / (norm * (1 + kappa));
    hiScale[j] = weights[j]! / (norm * (1 - kappa));
  }

  // ---- 3. one pass: the best approximate row, and the rows with the largest upper score bounds ----
  const found = scratch.rowScan;
  scanRows(view, cands, scratch, lows, highs, approxScale, bound, loScale, hiScale, found);
  const winner = found[0]!;
  if (winner === -1) return -1;

  // ---- 4. the winner's guaranteed score σ against the largest upper bound of another state ----
  // the criteria of the winner, the first and the second row of the scan, kept by scanRows
  const x = scratch.keptRows;
  const sigma = scoreLowerBound(x, 0, lows, highs, bound, loScale, hiScale) * (1 - SEPARATION_SLACK);
  if (!(sigma > 0)) return -1;
  // rows of the winner's state tie with it exactly and rank after it (stable sort): skip them
  const wc = candidateOfRow(cands, winner);
  const highest = found[1]!;
  const highestIsWinnerState =
    highest !== -1 &&
    sameState(cands, highest, cands.source[wc]!, cands.targets[winner]!, cands.bundleCpu[wc]!, cands.bundleMem[wc]!);
  const competitor = highestIsWinnerState ? found[2]! : highest;
  if (competitor === -1) return winner; // every row is the winner's state
  // s_hi < σ  ⇔  d_w,hi·(1 − σ) < σ·d_b,lo  ⇔  d_w,hi²·(1 − σ)² < σ²·d_b,lo² (all ≥ 0); the
  // extra 1e-12 covers the rounding of the ratio that picked the competitor in scanRows
  const left = (1 - sigma) * (1 - sigma) * (1 + SEPARATION_SLACK) * (1 + 1e-12);
  const right = sigma * sigma * (1 - SEPARATION_SLACK);
  const o = (highestIsWinnerState ? 2 : 1) * CRITERIA_COUNT;
  let worstHi2 = 0;
  let bestLo2 = 0;
  for (let j = 0; j < CRITERIA_COUNT; j++) {
    worstHi2 += sq((highs[j]! - x[o + j]! + bound[j]!) * hiScale[j]!);
    bestLo2 += sq(pos(x[o + j]! - lows[j]! - bound[j]!) * loScale[j]!);
  }
  return worstHi2 * left < bestLo2 * right ? winner : -1;
}

/** The lower end of the interval of the reference score of the row at `x[o..o+4)`: d_w,lo / (d_b,hi + d_w,lo). */
function scoreLowerBound(
  x: Float64Array,
  o: number,
  lows: Float64Array,
  highs: Float64Array,
  bound: Float64Array,
  loScale: Float64Array,
  hiScale: Float64Array,
): number {
  let bestHi2 = 0;
  let worstLo2 = 0;
  for (let j = 0; j < CRITERIA_COUNT; j++) {
    bestHi2 += sq((x[o + j]! - lows[j]! + bound[j]!) * hiScale[j]!);
    worstLo2 += sq(pos(highs[j]! - x[o + j]! - bound[j]!) * loScale[j]!);
  }
  const worstLo = Math.sqrt(worstLo2);
  return worstLo > 0 ? worstLo / (Math.sqrt(bestHi2) + worstLo) : 0;
}

/** Whether row `r` is the hypothetical state (source s, target t, bundle sums bc, bm). */
function sameState(cands: IndexedCandidates, r: number, s: number, t: number, bc: number, bm: number): boolean {
  const c = candidateOfRow(cands, r);
  return cands.source[c] === s && cands.targets[r] === t && cands.bundleCpu[c] === bc && cands.bundleMem[c] === bm;
}

/**
 * One pass over the rows. Writes to `out`: [0] the first row with the smallest approximate
 * d_best²/d_worst² (the best approximate score) or -1; [1] a row A with the smallest
 * ρ = d_b,lo²/d_w,hi² (the largest upper score bound) or -1; [2] the row with the smallest ρ
 * among rows of another state than A, or -1. So the largest upper bound among the rows that are
 * not of state G is A's when A is not of state G, else [2]'s. The criteria of these three rows
 * are copied to `scratch.keptRows` (rows 0, 1, 2). Only candidates that can change one of them
 * are looked at row by row (their rows recomputed by {@link candidateRows}).
 */
function scanRows(
  view: ClusterView,
  cands: IndexedCandidates,
  scratch: Scratch,
  lows: Float64Array,
  highs: Float64Array,
  approxScale: Float64Array,
  bound: Float64Array,
  loScale: Float64Array,
  hiScale: Float64Array,
  out: Int32Array,
): void {
  const { source, bundleCpu, bundleMem, targetStart, targets } = cands;
  const candidateMin = scratch.candidateMin;
  const x = scratch.candidateRowBuffer;
  const kept = scratch.keptRows;
  const ignored = scratch.ignoredAccumulator;
  const b0 = lows[0]!,
    b1 = lows[1]!,
    b2 = lows[2]!,
    b3 = lows[3]!;
  const w0 = highs[0]!,
    w1 = highs[1]!,
    w2 = highs[2]!,
    w3 = highs[3]!;
  const a0 = approxScale[0]!,
    a1 = approxScale[1]!,
    a2 = approxScale[2]!,
    a3 = approxScale[3]!;
  const e0 = bound[0]!,
    e1 = bound[1]!,
    e2 = bound[2]!,
    e3 = bound[3]!;
  const l0 = loScale[0]!,
    l1 = loScale[1]!,
    l2 = loScale[2]!,
    l3 = loScale[3]!;
  const h0 = hiScale[0]!,
    h1 = hiScale[1]!,
    h2 = hiScale[2]!,
    h3 = hiScale[3]!;
  let winner = -1;
  let winnerRatio = Infinity;
  let first = -1;
  let firstRho = Infinity;
  let firstS = -1;
  let firstT = -1;
  let firstBc = 0;
  let firstBm = 0;
  let second = -1;
  let secondRho = Infinity;
  for (let ci = 0; ci < cands.count; ci++) {
    // Skip a candidate none of whose rows can pass either test below. Every term of both tests
    // is monotone in the row's values (rounding is monotone): with m_j the candidate's column
    // minimum, x_j ≥ m_j gives best2 ≥ fl(Σ((m_j − b_j)·a_j)²), worst2 ≤ fl(Σ((w_j − m_j)·a_j)²),
    // bestLo2 ≥ its value at m_j and worstHi2 ≤ its value at m_j; and the thresholds only fall
    // while the scan goes on. So a skipped row would have changed nothing: same result.
    {
      const o = ci * CRITERIA_COUNT;
      const m0 = candidateMin[o]!,
        m1 = candidateMin[o + 1]!,
        m2 = candidateMin[o + 2]!,
        m3 = candidateMin[o + 3]!;
      const p0 = m0 - b0,
        p1 = m1 - b1,
        p2 = m2 - b2,
        p3 = m3 - b3;
      const q0 = w0 - m0,
        q1 = w1 - m1,
        q2 = w2 - m2,
        q3 = w3 - m3;
      const best2 = sq(p0 * a0) + sq(p1 * a1) + sq(p2 * a2) + sq(p3 * a3);
      const worst2 = sq(q0 * a0) + sq(q1 * a1) + sq(q2 * a2) + sq(q3 * a3);
      const worstHi2 = sq((q0 + e0) * h0) + sq((q1 + e1) * h1) + sq((q2 + e2) * h2) + sq((q3 + e3) * h3);
      const bestLo2 = sq(pos(p0 - e0) * l0) + sq(pos(p1 - e1) * l1) + sq(pos(p2 - e2) * l2) + sq(pos(p3 - e3) * l3);
      // (a NaN product, Infinity·0, means no row has worst2 > 0, resp. worstHi2 > 0: skip)
      const mayWin = best2 < winnerRatio * worst2;
      const mayBound = bestLo2 < secondRho * worstHi2 * (1 + 1e-12);
      if (!mayWin && !mayBound) continue;
    }
    const s = source[ci]!;
    const bc = bundleCpu[ci]!;
    const bm = bundleMem[ci]!;
    candidateRows(view, cands, scratch, ci, ci + 1, x, ignored);
    for (let row = targetStart[ci]!, end = targetStart[ci + 1]!, o = 0; row < end; row++, o += CRITERIA_COUNT) {
      const p0 = x[o]! - b0,
        p1 = x[o + 1]! - b1,
        p2 = x[o + 2]! - b2,
        p3 = x[o + 3]! - b3;
      const q0 = w0 - x[o]!,
        q1 = w1 - x[o + 1]!,
        q2 = w2 - x[o + 2]!,
        q3 = w3 - x[o + 3]!;
      const best2 = sq(p0 * a0) + sq(p1 * a1) + sq(p2 * a2) + sq(p3 * a3);
      const worst2 = sq(q0 * a0) + sq(q1 * a1) + sq(q2 * a2) + sq(q3 * a3);
      if (worst2 > 0 && best2 < winnerRatio * worst2) {
        winnerRatio = best2 / worst2;
        winner = row;
        kept.set(x.subarray(o, o + CRITERIA_COUNT), 0);
      }
      const worstHi2 = sq((q0 + e0) * h0) + sq((q1 + e1) * h1) + sq((q2 + e2) * h2) + sq((q3 + e3) * h3);
      if (!(worstHi2 > 0)) continue; // upper bound 0: below any σ > 0
      const bestLo2 = sq(pos(p0 - e0) * l0) + sq(pos(p1 - e1) * l1) + sq(pos(p2 - e2) * l2) + sq(pos(p3 - e3) * l3);
      // division-free pre-test, never stricter than `rho < secondRho`: fl(b/w) < S (S a float)
      // implies b < S·w, and fl(S·w)·(1 + 1e-12) exceeds S·w
      if (!(bestLo2 < secondRho * worstHi2 * (1 + 1e-12))) continue;
      const rho = bestLo2 / worstHi2;
      if (rho < secondRho) {
        const t = targets[row]!;
        const sameAsFirst = s === firstS && t === firstT && bc === firstBc && bm === firstBm;
        if (rho < firstRho) {
          if (!sameAsFirst) {
            second = first;
            secondRho = firstRho;
            kept.copyWithin(2 * CRITERIA_COUNT, CRITERIA_COUNT, 2 * CRITERIA_COUNT);
          }
          kept.set(x.subarray(o, o + CRITERIA_COUNT), CRITERIA_COUNT);
          first = row;
          firstRho = rho;
          firstS = s;
          firstT = t;
          firstBc = bc;
          firstBm = bm;
        } else if (!sameAsFirst) {
          second = row;
          secondRho = rho;
          kept.set(x.subarray(o, o + CRITERIA_COUNT), 2 * CRITERIA_COUNT);
        }
      }
    }
  }
  out[0] = winner;
  out[1] = first;
  out[2] = second;
}

/**
 * Computes the approximate criteria of every row, candidate by candidate, into `out`: the
 * largest replaced-squares sum (cpu, mem), the smallest and largest root (cpu min, max, mem min,
 * max), then per column the sum of squares (folded in row order), the minimum and the maximum;
 * and each candidate's column minima into `scratch.candidateMin`. The rows themselves are not
 * kept (a matrix of every row would be written and read back through memory): the scan
 * recomputes the rows of the few candidates that can matter with {@link candidateRows}, the
 * same arithmetic, hence the same bits.
 */
function approximateCriteria(view: ClusterView, cands: IndexedCandidates, scratch: Scratch, out: Float64Array): void {
  const n = view.n;
  const { cpu, maxcpu, mem, maxmem } = view;
  const { cpuLoad, memLoad, targetTerms } = scratch;
  // what a row reads of its target node, side by side (`TARGET_TERMS` per node)
  for (let i = 0, o = 0; i < n; i++, o += TARGET_TERMS) {
    targetTerms[o] = cpu[i]!;
    targetTerms[o + 1] = 1 / maxcpu[i]!;
    targetTerms[o + 2] = cpuLoad[i]! * cpuLoad[i]!;
    targetTerms[o + 3] = maxcpu[i]!;
    targetTerms[o + 4] = mem[i]!;
    targetTerms[o + 5] = 1 / maxmem[i]!;
    targetTerms[o + 6] = memLoad[i]! * memLoad[i]!;
    targetTerms[o + 7] = maxmem[i]!;
  }
  const acc = scratch.criteriaAccumulator;
  // maxima of non-negative values from 0; minima from Infinity (no rows: they stay infinite,
  // and the caller declines the non-finite bounds); squares from 0
  acc.fill(0);
  acc[ACC_CPU_ROOT_MIN] = acc[ACC_MEM_ROOT_MIN] = acc[ACC_CPU_HIGH_MIN] = acc[ACC_MEM_HIGH_MIN] = Infinity;
  acc[ACC_CPU_HIGH_MAX] = acc[ACC_MEM_HIGH_MAX] = -Infinity;
  const rowBuffer = scratch.candidateRowBuffer;
  candidateRows(view, cands, scratch, 0, cands.count, rowBuffer, acc);
  for (let k = 0; k < 10; k++) out[k] = acc[k]!;
  // column minima and maxima are those of the roots and highest loads: `1 + x` rounds
  // monotonically, so min(1 + x) = 1 + min(x) bit for bit (likewise max, and max(0, ·))
  out[10] = 1 + acc[ACC_CPU_ROOT_MIN];
  out[11] = 1 + Math.max(0, acc[ACC_CPU_HIGH_MIN]);
  out[12] = 1 + acc[ACC_MEM_ROOT_MIN];
  out[13] = 1 + Math.max(0, acc[ACC_MEM_HIGH_MIN]);
  out[14] = 1 + acc[ACC_CPU_ROOT_MAX]!;
  out[15] = 1 + Math.max(0, acc[ACC_CPU_HIGH_MAX]);
  out[16] = 1 + acc[ACC_MEM_ROOT_MAX]!;
  out[17] = 1 + Math.max(0, acc[ACC_MEM_HIGH_MAX]);
}

/* Layout of the running statistics `candidateRows` continues (`Scratch.criteriaAccumulator`). */
const ACC_CPU_NEW_MAX = 0;
const ACC_MEM_NEW_MAX = 1;
const ACC_CPU_ROOT_MIN = 2;
const ACC_CPU_ROOT_MAX = 3;
const ACC_MEM_ROOT_MIN = 4;
const ACC_MEM_ROOT_MAX = 5;
const ACC_SQUARES = 6; // 4 columns
const ACC_CPU_HIGH_MIN = 10;
const ACC_CPU_HIGH_MAX = 11;
const ACC_MEM_HIGH_MIN = 12;
const ACC_MEM_HIGH_MAX = 13;

/**
 * The approximate criteria of the rows of candidates `from` to `to` (exclusive), each
 * candidate's rows in target order into `rowsOut` (4 per row, from 0: a candidate overwrites
 * the previous one's); continues the running statistics in `acc` (the column sums of squares in
 * row order, across candidates) and writes each candidate's column minima to
 * `scratch.candidateMin`. O(1) per row. Needs `scratch.targetTerms` (`approximateCriteria`). One function for the whole pass and for the rows the scan looks at
 * (a range of one), so both compute the same bits; the loop over candidates is in here so that
 * the pass is one call, optimised as a whole.
 */
function candidateRows(
  view: ClusterView,
  cands: IndexedCandidates,
  scratch: Scratch,
  from: number,
  to: number,
  rowsOut: Float64Array,
  acc: Float64Array,
): void {
  const n = view.n;
  const { cpu, maxcpu, mem, maxmem } = view;
  const { cpuLoad, memLoad, cpuTop, memTop, targetTerms } = scratch;
  const cpuTotal = scratch.cpuPrefix[n]!;
  const memTotal = scratch.memPrefix[n]!;
  const nReciprocal = 1 / n;
  const { targets, source, bundleCpu, bundleMem, targetStart } = cands;
  const candidateMin = scratch.candidateMin;
  let cpuNewMax = acc[ACC_CPU_NEW_MAX]!;
  let memNewMax = acc[ACC_MEM_NEW_MAX]!;
  let cpuRootMax = acc[ACC_CPU_ROOT_MAX]!;
  let memRootMax = acc[ACC_MEM_ROOT_MAX]!;
  let cpuHighMax = acc[ACC_CPU_HIGH_MAX]!;
  let memHighMax = acc[ACC_MEM_HIGH_MAX]!;
  let cpuRootMin = acc[ACC_CPU_ROOT_MIN]!;
  let memRootMin = acc[ACC_MEM_ROOT_MIN]!;
  let cpuHighMin = acc[ACC_CPU_HIGH_MIN]!;
  let memHighMin = acc[ACC_MEM_HIGH_MIN]!;
  let squares0 = acc[ACC_SQUARES]!;
  let squares1 = acc[ACC_SQUARES + 1]!;
  let squares2 = acc[ACC_SQUARES + 2]!;
  let squares3 = acc[ACC_SQUARES + 3]!;
  // (declared and initialised out here, not per candidate: the optimised loop keeps them unboxed)
  /* eslint-disable no-useless-assignment -- the initial values are what keeps them unboxed doubles */
  let cpuRootLow = Infinity;
  let memRootLow = Infinity;
  let cpuHighLow = Infinity;
  let memHighLow = Infinity;
  /* eslint-enable no-useless-assignment -- end of the unboxed initialisations */
  for (let ci = from; ci < to; ci++) {
    const s = source[ci]!;
    const bc = bundleCpu[ci]!;
    const bm = bundleMem[ci]!;
    // remove_running_resource on the source (same float operations as the reference)
    const sourceCpu = Math.max(0, cpu[s]! - bc);
    const sourceMem = Math.max(0, mem[s]! - bm);
    const sc = sourceCpu / maxcpu[s]!;
    const sm = sourceMem / maxmem[s]!;
    const scSq = sc * sc;
    const smSq = sm * sm;
    const cpuOld = cpuLoad[s]!;
    const memOld = memLoad[s]!;
    const cpuRest = cpuTotal - cpuOld * cpuOld;
    const memRest = memTotal - memOld * memOld;
    // the two largest loads of nodes other than the source (top-3 minus the source), with the
    // index of the first: "highest except source and target" is then one comparison per pair
    const cpuFirst = cpuTop.i0 !== s ? cpuTop.i0 : cpuTop.i1;
    const cpuFirstValue = cpuTop.i0 !== s ? cpuTop.v0 : cpuTop.v1;
    const cpuSecondValue = cpuTop.i0 !== s && cpuTop.i1 !== s ? cpuTop.v1 : cpuTop.v2;
    const memFirst = memTop.i0 !== s ? memTop.i0 : memTop.i1;
    const memFirstValue = memTop.i0 !== s ? memTop.v0 : memTop.v1;
    const memSecondValue = memTop.i0 !== s && memTop.i1 !== s ? memTop.v1 : memTop.v2;
    // with the source's new load: the highest load except the target, whether or not the target
    // is the first of the others
    const cpuOtherIfNotFirst = Math.max(cpuFirstValue, sc);
    const cpuOtherIfFirst = Math.max(cpuSecondValue, sc);
    const memOtherIfNotFirst = Math.max(memFirstValue, sm);
    const memOtherIfFirst = Math.max(memSecondValue, sm);
    // this candidate's smallest roots and highest loads
    cpuRootLow = memRootLow = cpuHighLow = memHighLow = Infinity;
    const first = targetStart[ci]!;
    const end = targetStart[ci + 1]!;
    for (let row = first, o = 0; row < end; row++, o += CRITERIA_COUNT) {
      const t = targets[row]!;
      // t !== s: self-moves are rejected when the candidates are indexed
      // the target's loads by reciprocal (≤ 2u off the quotient; only the sums of squares use
      // them, where K covers it); the highest loads need the exact quotient only when it can win
      const to = t * TARGET_TERMS;
      const tcpu = targetTerms[to]! + bc;
      const tmem = targetTerms[to + 4]! + bm;
      const tc = tcpu * targetTerms[to + 1]!;
      const tm = tmem * targetTerms[to + 5]!;
      const cpuNew = scSq + tc * tc;
      const memNew = smSq + tm * tm;
      const cpuSquares = cpuRest - targetTerms[to + 2]! + cpuNew;
      const memSquares = memRest - targetTerms[to + 6]! + memNew;
      const cpuOther = cpuFirst !== t ? cpuOtherIfNotFirst : cpuOtherIfFirst;
      const memOther = memFirst !== t ? memOtherIfNotFirst : memOtherIfFirst;
      const cpuHigh = tc * (1 + 1e-12) <= cpuOther ? cpuOther : Math.max(cpuOther, tcpu / targetTerms[to + 3]!);
      const memHigh = tm * (1 + 1e-12) <= memOther ? memOther : Math.max(memOther, tmem / targetTerms[to + 7]!);
      if (cpuNew > cpuNewMax) cpuNewMax = cpuNew;
      if (memNew > memNewMax) memNewMax = memNew;
      // × 1/n instead of / n: one more rounding (≤ 2u in all), inside the 16u of e_j
      const cpuRoot = Math.sqrt(cpuSquares > 0 ? cpuSquares * nReciprocal : 0);
      const memRoot = Math.sqrt(memSquares > 0 ? memSquares * nReciprocal : 0);
      if (cpuRoot < cpuRootLow) cpuRootLow = cpuRoot;
      if (cpuRoot > cpuRootMax) cpuRootMax = cpuRoot;
      if (memRoot < memRootLow) memRootLow = memRoot;
      if (memRoot > memRootMax) memRootMax = memRoot;
      if (cpuHigh < cpuHighLow) cpuHighLow = cpuHigh;
      if (cpuHigh > cpuHighMax) cpuHighMax = cpuHigh;
      if (memHigh < memHighLow) memHighLow = memHigh;
      if (memHigh > memHighMax) memHighMax = memHigh;
      const v0 = 1 + cpuRoot;
      // the reference folds the max from 0: cpuHigh ≥ sc ≥ 0 already (a −0 would add the same)
      const v1 = 1 + cpuHigh;
      const v2 = 1 + memRoot;
      const v3 = 1 + memHigh;
      rowsOut[o] = v0;
      rowsOut[o + 1] = v1;
      rowsOut[o + 2] = v2;
      rowsOut[o + 3] = v3;
      squares0 += v0 * v0;
      squares1 += v1 * v1;
      squares2 += v2 * v2;
      squares3 += v3 * v3;
    }
    if (cpuRootLow < cpuRootMin) cpuRootMin = cpuRootLow;
    if (memRootLow < memRootMin) memRootMin = memRootLow;
    if (cpuHighLow < cpuHighMin) cpuHighMin = cpuHighLow;
    if (memHighLow < memHighMin) memHighMin = memHighLow;
    // the candidate's column minima, bit for bit the minima of its rows' values (`1 + x` and
    // max(0, ·) round monotonically); Infinity for a candidate without targets
    const mo = ci * CRITERIA_COUNT;
    candidateMin[mo] = 1 + cpuRootLow;
    candidateMin[mo + 1] = 1 + Math.max(0, cpuHighLow);
    candidateMin[mo + 2] = 1 + memRootLow;
    candidateMin[mo + 3] = 1 + Math.max(0, memHighLow);
  }
  acc[ACC_CPU_NEW_MAX] = cpuNewMax;
  acc[ACC_MEM_NEW_MAX] = memNewMax;
  acc[ACC_CPU_ROOT_MAX] = cpuRootMax;
  acc[ACC_MEM_ROOT_MAX] = memRootMax;
  acc[ACC_CPU_HIGH_MAX] = cpuHighMax;
  acc[ACC_MEM_HIGH_MAX] = memHighMax;
  acc[ACC_CPU_ROOT_MIN] = cpuRootMin;
  acc[ACC_MEM_ROOT_MIN] = memRootMin;
  acc[ACC_CPU_HIGH_MIN] = cpuHighMin;
  acc[ACC_MEM_HIGH_MIN] = memHighMin;
  acc[ACC_SQUARES] = squares0;
  acc[ACC_SQUARES + 1] = squares1;
  acc[ACC_SQUARES + 2] = squares2;
  acc[ACC_SQUARES + 3] = squares3;
}

function sq(v: number): number {
  return v * v;
}

function pos(v: number): number {
  return v > 0 ? v : 0;
}
