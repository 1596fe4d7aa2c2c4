import { ImbalanceError } from './errors';
import { type ImbalanceMetric, imbalance, imbalanceWithReplaced } from './imbalance';

/** Unit roundoff of binary64. */
const UNIT_ROUNDOFF = 2 ** -53;
/**
 * Safety factor applied to every textbook error bound (γ_k = k·u/(1-k·u)) below. The bounds
 * only decide which alternatives are re-evaluated with the exact fold, so a generous factor
 * costs a few extra exact evaluations and never a wrong answer.
 */
const BOUND_SAFETY = 4;
/**
 * Below this mean load the interval is given up ([0, ∞)): squared deviations of such loads reach
 * the subnormal range, where rounding is absolute rather than relative.
 */
export const TINY_MEAN = 1e-100;

/** Validates one load: a finite, non-negative number. */
function checkLoad(load: number, where: string): void {
  if (!Number.isFinite(load) || load < 0) {
    throw new ImbalanceError('invalid-load', `invalid load ${String(load)} at ${where}: expected a finite number >= 0`);
  }
}

/**
 * Incremental imbalance over node loads: keeps the count, the sum and the sum of squares
 * around a shift (the mean at the last rebase) so that "the imbalance if node i's load
 * becomes li and node j's becomes lj" (e.g. load `d` moves from i to j) is answered in O(1)
 * as an approximation **with a rigorous interval** that contains the value the exact fold
 * ({@link imbalance} over the modified loads, spec §4.3 order) returns. The exact value is
 * available too, in O(n).
 *
 * Callers that must reproduce the reference bit for bit use the interval to discard
 * alternatives that cannot win and re-evaluate only the rest exactly.
 *
 * Loads are ratios (node load, usually 0..1) and must be finite and >= 0.
 */
export class ImbalanceAccumulator {
  private readonly loads: Float64Array;
  private readonly n: number;
  private sumValue = 0;
  private shift = 0;
  private shiftedSquares = 0;
  /** Absolute error bounds of `sumValue` and `shiftedSquares` against the exact real sums. */
  private sumError = 0;
  private squaresError = 0;
  private readonly relative: number;
  private readonly normalizer: number;

  constructor(loads: ArrayLike<number>) {
    this.n = loads.length;
    this.loads = new Float64Array(this.n);
    for (let i = 0; i < this.n; i++) {
      checkLoad(loads[i]!, `index ${i}`);
      this.loads[i] = loads[i]!;
    }
    this.relative = BOUND_SAFETY * (this.n + 16) * UNIT_ROUNDOFF;
    this.normalizer = this.n >= 2 ? Math.sqrt(this.n - 1) : 1;
    this.rebase();
  }

  /** Number of nodes. */
  get count(): number {
    return this.n;
  }

  /** Sum of the loads (exact fold after a rebase, then incrementally updated). */
  get sum(): number {
    return this.sumValue;
  }

  /** The load of node `i`. */
  load(i: number): number {
    this.checkIndex(i);
    return this.loads[i]!;
  }

  /**
   * The state {@link boundsWithReplaced} works from, for callers that inline that computation in
   * a hot loop (hoisting the parts that do not change between calls). Any re-association of its
   * sums stays inside the bounds: `relative` is 4(n+16)·u, far above the rounding of a few
   * re-ordered operations.
   */
  boundState(): { sum: number; sumError: number; shift: number; shiftedSquares: number; squaresError: number; relative: number; normalizer: number } {
    return {
      sum: this.sumValue,
      sumError: this.sumError,
      shift: this.shift,
      shiftedSquares: this.shiftedSquares,
      squaresError: this.squaresError,
      relative: this.relative,
      normalizer: this.normalizer,
    };
  }

  /** Recomputes the sums from the loads (O(n)); resets the accumulated error. */
  rebase(): void {
    let sum = 0;
    for (let i = 0; i < this.n; i++) sum += this.loads[i]!;
    const shift = this.n > 0 ? sum / this.n : 0;
    let squares = 0;
    for (let i = 0; i < this.n; i++) {
      const d = this.loads[i]! - shift;
      squares += d * d;
    }
    this.sumValue = sum;
    this.shift = shift;
    this.shiftedSquares = squares;
    this.sumError = this.relative * sum;
    this.squaresError = this.relative * squares;
  }

  /** Sets node `i`'s load in O(1) (the sums are updated, their error bounds grow). */
  setLoad(i: number, load: number): void {
    this.checkIndex(i);
    checkLoad(load, `index ${i}`);
    const old = this.loads[i]!;
    const dOld = old - this.shift;
    const dNew = load - this.shift;
    this.sumValue = this.sumValue - old + load;
    this.shiftedSquares = this.shiftedSquares - dOld * dOld + dNew * dNew;
    this.sumError += this.relative * (Math.abs(this.sumValue) + old + load);
    this.squaresError += this.relative * (Math.abs(this.shiftedSquares) + dOld * dOld + dNew * dNew);
    this.loads[i] = load;
  }

  /** The exact imbalance of the current loads (direct fold, O(n)). */
  imbalance(metric: ImbalanceMetric): number {
    return imbalance(this.loads, metric);
  }

  /** The exact imbalance if load `d` moves from node `i` to node `j` (direct fold, O(n)). */
  imbalanceWithMove(i: number, j: number, d: number, metric: ImbalanceMetric): number {
    this.checkIndex(i);
    this.checkIndex(j);
    if (i === j) return this.imbalance(metric);
    return imbalanceWithReplaced(this.loads, metric, i, this.loads[i]! - d, j, this.loads[j]! + d);
  }

  /** The exact imbalance with node `i` at `li` and node `j` at `lj` (direct fold, O(n)). */
  imbalanceWithReplaced(i: number, li: number, j: number, lj: number, metric: ImbalanceMetric): number {
    this.checkIndex(i);
    if (j !== -1) this.checkIndex(j);
    return imbalanceWithReplaced(this.loads, metric, i, li, j, lj);
  }

  /** O(1) approximation of {@link imbalanceWithMove}: the midpoint of {@link boundsWithReplaced}. */
  approxImbalanceWithMove(i: number, j: number, d: number, metric: ImbalanceMetric): number {
    const out = new Float64Array(3);
    if (i === j) this.boundsWithReplaced(i, this.loads[i]!, -1, 0, metric, out);
    else this.boundsWithReplaced(i, this.loads[i]! - d, j, this.loads[j]! + d, metric, out);
    return out[2]!;
  }

  /**
   * O(1): writes into `out` `[lo, hi, approx]` such that the exact fold
   * `imbalanceWithReplaced(i, li, j, lj)` lies in `[lo, hi]`. `j = -1` replaces one node only;
   * `j === i` is not allowed (combine the two changes first). No argument checks: hot path.
   */
  boundsWithReplaced(i: number, li: number, j: number, lj: number, metric: ImbalanceMetric, out: Float64Array): void {
    const n = this.n;
    if (n < 2) {
      out[0] = 0;
      out[1] = 0;
      out[2] = 0;
      return;
    }
    const rel = this.relative;
    const shift = this.shift;
    const oi = this.loads[i]!;
    const oj = j === -1 ? 0 : this.loads[j]!;
    const nj = j === -1 ? 0 : lj;
    // sum' = sum - old_i - old_j + li + lj, with its absolute error bound
    const sum = this.sumValue - oi - oj + li + nj;
    const sumError = this.sumError + rel * (this.sumValue + oi + oj + li + nj);
    const doi = oi - shift;
    const dli = li - shift;
    const doj = j === -1 ? 0 : oj - shift;
    const dlj = j === -1 ? 0 : lj - shift;
    // Σ(l - shift)² updated at two positions; Σ(l - mean)² = that - δ²/n with δ = sum - n·shift
    const squares = this.shiftedSquares - doi * doi - doj * doj + dli * dli + dlj * dlj;
    const nShift = n * shift;
    const delta = sum - nShift;
    const absDelta = Math.abs(delta);
    const deltaError = sumError + rel * (nShift + absDelta);
    const deltaSq = (delta * delta) / n;
    const squaresError =
      this.squaresError + rel * (this.shiftedSquares + doi * doi + doj * doj + dli * dli + dlj * dlj + deltaSq);
    const dHi = absDelta + deltaError;
    const dLo = absDelta > deltaError ? absDelta - deltaError : 0;
    let varLo = squares - squaresError - ((dHi * dHi) / n) * (1 + rel);
    if (varLo < 0) varLo = 0;
    let varHi = squares + squaresError - ((dLo * dLo) / n) * (1 - rel);
    if (varHi < 0) varHi = 0;
    const meanLo = ((sum - sumError) / n) * (1 - rel);
    const meanHi = ((sum + sumError) / n) * (1 + rel);
    const scale = metric === 'raw' ? 1 : this.normalizer;
    const approxVar = squares - deltaSq;
    const approx = sum > 0 && approxVar > 0 ? Math.sqrt(approxVar / n) / (sum / n) / scale : 0;
    if (!(meanLo > TINY_MEAN)) {
      // the sum may be 0 (imbalance 0) or tiny (imbalance unbounded, and squares of deviations
      // may underflow to subnormals where the relative error bounds do not hold): no useful bound
      out[0] = 0;
      out[1] = Infinity;
      out[2] = approx;
      return;
    }
    // the direct fold's own mean error adds n·δm² to the variance it sees
    const meanSlack = rel * meanHi;
    const lo = (Math.sqrt(varLo / n) / meanHi / scale) * (1 - 2 * rel);
    const hi = (Math.sqrt((varHi + n * meanSlack * meanSlack) / n) / meanLo / scale) * (1 + 2 * rel);
    out[0] = lo;
    out[1] = hi;
    out[2] = approx;
  }

  private checkIndex(i: number): void {
    if (!Number.isInteger(i) || i < 0 || i >= this.n) {
      throw new ImbalanceError('index-out-of-range', `node index ${String(i)} out of range 0..${this.n - 1}`);
    }
  }
}
