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
 * 3. picks the row with the best approximate score and accepts it only when the lower end of its
 *    interval beats the upper end of every row that is not the same hypothetical state, by a
 *    relative {@link SEPARATION_SLACK} on top of the bound. Rows of the same state (same source,
 *    target and bundle sums) have bit-identical reference scores, and the stable sort then picks
 *    the earliest, which is the first best approximate row. Otherwise it returns -1 and the caller
 *    runs the exact path; so does anything non-finite or degenerate (a column whose spread is
 *    within its error, `d_best + d_worst` within its error: the intervals then overlap).
 *
 * The bound, with u = 2⁻⁵³, n nodes, R rows, X the reference criteria and X̃ ours:
 * - sums of squares: the reference folds n non-negative rounded squares, error ≤ γ_{n−1}·Σ;
 *   `P` carries the same; our 4 updates add ≤ 4u·(P + new) where `new` is the sum of the two
 *   replaced squares. Hence |S̃ − S| ≤ K·(P + new) with K = 4(n + 8)u (about 2× the textbook
 *   constant), uniformly ε = K·(P + max new).
 * - roots: |√(S̃/n) − √(S/n)| ≤ (ε/n)/√(S̃/n) (or √(ε/n) when the smallest root is 0), plus the
 *   rounding of the division, the root and the `1 +` in both computations (≤ 16u·(1 + max root)):
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
 * The test `s_hi(i) < σ` (σ = the winner's lower end) is evaluated without roots or divisions
 * as `d_w,hi²·(1 − σ)² < σ²·d_b,lo²`.
 */
import type { ClusterView, IndexedCandidate, Scratch } from './fast';
import { CRITERIA_COUNT as CRITERIA_COUNT_EXPORT, SCHEDULER_CRITERIA } from './kernels';

/**
 * Module-local copy: some loaders (tsx's CommonJS interop) turn every read of an imported binding
 * into a getter call, which costs more than the arithmetic in these loops.
 */
const CRITERIA_COUNT = CRITERIA_COUNT_EXPORT;

/** Unit roundoff of binary64. */
const UNIT_ROUNDOFF = 2 ** -53;

/**
 * Required relative separation of the winner's score from every other state's, on top of the
 * propagated error bound. Generous (the bound's own rounding is ~1e-14): a near-tie within it
 * goes to the exact path, which costs time, never a wrong answer.
 */
export const SEPARATION_SLACK = 1e-9;

/**
 * The row (candidate order, then target order) the reference's TOPSIS ranks first, or -1 when
 * the approximation cannot prove it (the caller then runs the exact path). `rows` is the number
 * of (candidate, target) pairs; `scratch` holds the prepared loads (`prepareLoads`) and room for
 * `rows` matrix rows. O(n + rows).
 */
export function separatedTopsisWinner(view: ClusterView, candidates: readonly IndexedCandidate[], rows: number, scratch: Scratch): number {
  const n = view.n;
  const weights = SCHEDULER_CRITERIA.weights;
  for (let j = 0; j < CRITERIA_COUNT; j++) if (SCHEDULER_CRITERIA.maximize[j]) return -1; // all minimised here
  const u = UNIT_ROUNDOFF;
  if (rows * u >= 0.25) return -1;
  const { cpu, maxcpu, mem, maxmem } = view;
  const { cpuLoad, memLoad, cpuTop, memTop } = scratch;
  const cpuTotal = scratch.cpuPrefix[n]!;
  const memTotal = scratch.memPrefix[n]!;
  const x = scratch.matrix;

  // ---- 1. approximate criteria, O(1) per pair ----
  let cpuNewMax = 0;
  let memNewMax = 0;
  let cpuRootMin = Infinity;
  let memRootMin = Infinity;
  let cpuRootMax = 0;
  let memRootMax = 0;
  // column sums of squares (any order: D̃ only has to be within its bound), minima and maxima
  let squares0 = 0, squares1 = 0, squares2 = 0, squares3 = 0;
  let min0 = Infinity, min1 = Infinity, min2 = Infinity, min3 = Infinity;
  let max0 = -Infinity, max1 = -Infinity, max2 = -Infinity, max3 = -Infinity;
  let row = 0;
  for (let ci = 0; ci < candidates.length; ci++) {
    const c = candidates[ci]!;
    const s = c.source;
    const bc = c.bundleCpu;
    const bm = c.bundleMem;
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
    const targets = c.targets;
    for (let ti = 0; ti < targets.length; ti++, row++) {
      const t = targets[ti]!;
      let cpuNew: number;
      let memNew: number;
      let cpuSquares: number;
      let memSquares: number;
      let cpuHigh: number;
      let memHigh: number;
      if (t === s) {
        const bcl = (sourceCpu + bc) / maxcpu[s]!;
        const bml = (sourceMem + bm) / maxmem[s]!;
        cpuNew = bcl * bcl;
        memNew = bml * bml;
        cpuSquares = cpuRest + cpuNew;
        memSquares = memRest + memNew;
        cpuHigh = Math.max(cpuTop.maxExcept(s, -1), bcl);
        memHigh = Math.max(memTop.maxExcept(s, -1), bml);
      } else {
        const tc = (cpu[t]! + bc) / maxcpu[t]!;
        const tm = (mem[t]! + bm) / maxmem[t]!;
        const cpuT = cpuLoad[t]!;
        const memT = memLoad[t]!;
        cpuNew = scSq + tc * tc;
        memNew = smSq + tm * tm;
        cpuSquares = cpuRest - cpuT * cpuT + cpuNew;
        memSquares = memRest - memT * memT + memNew;
        cpuHigh = Math.max(cpuTop.maxExcept(s, t), sc, tc);
        memHigh = Math.max(memTop.maxExcept(s, t), sm, tm);
      }
      if (cpuNew > cpuNewMax) cpuNewMax = cpuNew;
      if (memNew > memNewMax) memNewMax = memNew;
      const cpuRoot = Math.sqrt(cpuSquares > 0 ? cpuSquares / n : 0);
      const memRoot = Math.sqrt(memSquares > 0 ? memSquares / n : 0);
      if (cpuRoot < cpuRootMin) cpuRootMin = cpuRoot;
      if (cpuRoot > cpuRootMax) cpuRootMax = cpuRoot;
      if (memRoot < memRootMin) memRootMin = memRoot;
      if (memRoot > memRootMax) memRootMax = memRoot;
      const v0 = 1 + cpuRoot;
      const v1 = 1 + Math.max(0, cpuHigh); // the reference folds the max from 0
      const v2 = 1 + memRoot;
      const v3 = 1 + Math.max(0, memHigh);
      const o = row * CRITERIA_COUNT;
      x[o] = v0;
      x[o + 1] = v1;
      x[o + 2] = v2;
      x[o + 3] = v3;
      squares0 += v0 * v0;
      squares1 += v1 * v1;
      squares2 += v2 * v2;
      squares3 += v3 * v3;
      if (v0 < min0) min0 = v0;
      if (v0 > max0) max0 = v0;
      if (v1 < min1) min1 = v1;
      if (v1 > max1) max1 = v1;
      if (v2 < min2) min2 = v2;
      if (v2 > max2) max2 = v2;
      if (v3 < min3) min3 = v3;
      if (v3 > max3) max3 = v3;
    }
  }

  // ---- 2. per-column error bounds, norms and ideal points ----
  const K = 4 * (n + 8) * u;
  const rootError = (total: number, newMax: number, rootMin: number, rootMax: number): number => {
    const eps = (K * (total + newMax)) / n;
    const spread = rootMin > 0 ? (eps / rootMin) * (1 + 1e-9) : Math.sqrt(eps) * (1 + 1e-9);
    return spread + 16 * u * (1 + rootMax);
  };
  const errors = [rootError(cpuTotal, cpuNewMax, cpuRootMin, cpuRootMax), 0, rootError(memTotal, memNewMax, memRootMin, memRootMax), 0];
  const columnSquares = [squares0, squares1, squares2, squares3];
  const columnLows = [min0, min1, min2, min3];
  const columnHighs = [max0, max1, max2, max3];
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

  // ---- 3. the best approximate row: minimal d_best² / d_worst² (maximal score), first wins ----
  const b0 = lows[0]!, b1 = lows[1]!, b2 = lows[2]!, b3 = lows[3]!;
  const w0 = highs[0]!, w1 = highs[1]!, w2 = highs[2]!, w3 = highs[3]!;
  const a0 = approxScale[0]!, a1 = approxScale[1]!, a2 = approxScale[2]!, a3 = approxScale[3]!;
  let winner = 0;
  let winnerRatio = Infinity;
  for (let r = 0, o = 0; r < rows; r++, o += CRITERIA_COUNT) {
    const p0 = (x[o]! - b0) * a0, p1 = (x[o + 1]! - b1) * a1, p2 = (x[o + 2]! - b2) * a2, p3 = (x[o + 3]! - b3) * a3;
    const q0 = (w0 - x[o]!) * a0, q1 = (w1 - x[o + 1]!) * a1, q2 = (w2 - x[o + 2]!) * a2, q3 = (w3 - x[o + 3]!) * a3;
    const best2 = p0 * p0 + p1 * p1 + p2 * p2 + p3 * p3;
    const worst2 = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3;
    const ratio = worst2 > 0 ? best2 / worst2 : Infinity;
    if (ratio < winnerRatio) {
      winnerRatio = ratio;
      winner = r;
    }
  }
  if (winnerRatio === Infinity) return -1;

  // ---- 4. the winner's guaranteed score σ, then every other state must stay below it ----
  const e0 = bound[0]!, e1 = bound[1]!, e2 = bound[2]!, e3 = bound[3]!;
  const l0 = loScale[0]!, l1 = loScale[1]!, l2 = loScale[2]!, l3 = loScale[3]!;
  const h0 = hiScale[0]!, h1 = hiScale[1]!, h2 = hiScale[2]!, h3 = hiScale[3]!;
  const wo = winner * CRITERIA_COUNT;
  const bestHi = Math.sqrt(
    sq((x[wo]! - b0 + e0) * h0) + sq((x[wo + 1]! - b1 + e1) * h1) + sq((x[wo + 2]! - b2 + e2) * h2) + sq((x[wo + 3]! - b3 + e3) * h3),
  );
  const worstLo = Math.sqrt(
    sq(pos(w0 - x[wo]! - e0) * l0) + sq(pos(w1 - x[wo + 1]! - e1) * l1) + sq(pos(w2 - x[wo + 2]! - e2) * l2) + sq(pos(w3 - x[wo + 3]! - e3) * l3),
  );
  if (!(worstLo > 0)) return -1;
  const sigma = (worstLo / (bestHi + worstLo)) * (1 - SEPARATION_SLACK);
  if (!(sigma > 0)) return -1;
  const left = (1 - sigma) * (1 - sigma) * (1 + SEPARATION_SLACK);
  const right = sigma * sigma * (1 - SEPARATION_SLACK);
  // the winner's state: rows of the same state tie exactly and rank after it (stable sort)
  let ws = -1;
  let wt = -1;
  let wbc = 0;
  let wbm = 0;
  row = 0;
  for (let ci = 0; ci < candidates.length; ci++) {
    const len = candidates[ci]!.targets.length;
    if (winner < row + len) {
      const c = candidates[ci]!;
      ws = c.source;
      wt = c.targets[winner - row]!;
      wbc = c.bundleCpu;
      wbm = c.bundleMem;
      break;
    }
    row += len;
  }
  row = 0;
  for (let ci = 0; ci < candidates.length; ci++) {
    const c = candidates[ci]!;
    const sameBundle = c.source === ws && c.bundleCpu === wbc && c.bundleMem === wbm;
    const targets = c.targets;
    for (let ti = 0; ti < targets.length; ti++, row++) {
      if (sameBundle && targets[ti] === wt) continue;
      const o = row * CRITERIA_COUNT;
      const v0 = x[o]!, v1 = x[o + 1]!, v2 = x[o + 2]!, v3 = x[o + 3]!;
      const worstHi2 = sq((w0 - v0 + e0) * h0) + sq((w1 - v1 + e1) * h1) + sq((w2 - v2 + e2) * h2) + sq((w3 - v3 + e3) * h3);
      const bestLo2 = sq(pos(v0 - b0 - e0) * l0) + sq(pos(v1 - b1 - e1) * l1) + sq(pos(v2 - b2 - e2) * l2) + sq(pos(v3 - b3 - e3) * l3);
      if (!(worstHi2 * left < bestLo2 * right)) return -1;
    }
  }
  return winner;
}

function sq(v: number): number {
  return v * v;
}

function pos(v: number): number {
  return v > 0 ? v : 0;
}
