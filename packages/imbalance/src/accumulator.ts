import { ImbalanceError } from './errors';
import { type ImbalanceMetric, checkMetric, imbalance, imbalanceWithReplaced, invalidLoad, isLoad } from './imbalance';

/** Unit roundoff of binary64. */
const UNIT_ROUNDOFF = 2 ** -53;
/**
 * Safety factor applied to every textbook error bound (γ_k = k·u/(1-k·u)) below. The bounds
 * only decide which alternatives are re-evaluated with the exact fold, so a generous factor
 * costs a few extra exact evaluations and never a wrong answer.
 */
const BOUND_SAFETY = 4;
/**
 * Below this mean load the interval is given up ({@link ImbalanceAccumulator.boundsWithReplaced}
 * folds exactly instead): squared deviations of such loads reach the subnormal range, where
 * rounding is absolute rather than relative.
 */
export const TINY_MEAN = 1e-100;
/**
 * The largest load the accumulator holds (2^400 ≈ 2.6e120, far above any real ratio): its sums
 * of squares then stay finite for any count of nodes below 2^200.
 */
export const MAX_ACCUMULATOR_LOAD = 2 ** 400;
/**
 * Above this mean load (reachable only through the unchecked replacements of
 * {@link ImbalanceAccumulator.boundsWithReplaced}) the interval is given up too: squared
 * deviations could overflow.
 */
const HUGE_MEAN = 2 ** 450;

/** Validates one held load: a finite number in [0, `MAX_ACCUMULATOR_LOAD`]. */
function checkLoad(load: number, where: string): void {
  if (!isLoad(load)) throw invalidLoad(load, where);
  if (load > MAX_ACCUMULATOR_LOAD) {
    throw new ImbalanceError(
      'invalid-load',
      `invalid load ${String(load)} at ${where}: the accumulator holds loads up to 2^400 (MAX_ACCUMULATOR_LOAD)`,
    );
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
 * Loads are ratios (node load, usually 0..1) and must be finite numbers in
 * [0, `MAX_ACCUMULATOR_LOAD`] (else {@link ImbalanceError} `invalid-load` naming the
 * index); every result is finite. A rejected call leaves the accumulator as it was.
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
    const n = (loads as { length?: unknown } | null | undefined)?.length;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      throw new ImbalanceError('invalid-argument', 'loads: expected an array of loads');
    }
    this.n = n;
    this.loads = new Float64Array(this.n);
    for (let i = 0; i < this.n; i++) {
      checkLoad(loads[i]!, `loads[${i}]`);
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
  boundState(): {
    sum: number;
    sumError: number;
    shift: number;
    shiftedSquares: number;
    squaresError: number;
    relative: number;
    normalizer: number;
  } {
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
    checkLoad(load, `the new load of index ${i}`);
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

  /**
   * The exact imbalance if load `d` moves from node `i` to node `j` (direct fold, O(n)).
   * `i` and `j` are distinct indices; `d` is finite (negative: the load moves from `j` to `i`)
   * and both loads after the move are valid (>= 0 and finite), else an {@link ImbalanceError}.
   */
  imbalanceWithMove(i: number, j: number, d: number, metric: ImbalanceMetric): number {
    const [li, lj] = this.moved(i, j, d);
    return imbalanceWithReplaced(this.loads, metric, i, li, j, lj);
  }

  /**
   * The exact imbalance with node `i` at `li` and node `j` at `lj` (direct fold, O(n)); the
   * arguments are checked like those of the free {@link imbalanceWithReplaced}.
   */
  imbalanceWithReplaced(i: number, li: number, j: number, lj: number, metric: ImbalanceMetric): number {
    return imbalanceWithReplaced(this.loads, metric, i, li, j, lj);
  }

  /**
   * O(1) approximation of {@link imbalanceWithMove} (same argument checks): the midpoint of
   * {@link boundsWithReplaced}, finite.
   */
  approxImbalanceWithMove(i: number, j: number, d: number, metric: ImbalanceMetric): number {
    checkMetric(metric, 'metric');
    const [li, lj] = this.moved(i, j, d);
    const out = new Float64Array(3);
    this.boundsWithReplaced(i, li, j, lj, metric, out);
    return out[2]!;
  }

  /** The two loads after `d` moves from `i` to `j`, validated. */
  private moved(i: number, j: number, d: number): [number, number] {
    this.checkIndex(i);
    this.checkIndex(j);
    if (i === j) throw new ImbalanceError('invalid-argument', `a move needs two nodes, got i = j = ${i}`);
    if (typeof d !== 'number' || !Number.isFinite(d)) {
      throw new ImbalanceError('invalid-argument', `moved load d must be a finite number, got ${String(d)}`);
    }
    const li = this.loads[i]! - d;
    const lj = this.loads[j]! + d;
    if (!isLoad(li)) throw invalidLoad(li, `index ${i} after moving ${d} away`);
    if (!isLoad(lj)) throw invalidLoad(lj, `index ${j} after receiving ${d}`);
    return [li, lj];
  }

  /**
   * O(1): writes into `out` `[lo, hi, approx]` such that the exact fold
   * `imbalanceWithReplaced(i, li, j, lj)` lies in `[lo, hi]`. `j = -1` replaces one node only;
   * `j === i` is not allowed (combine the two changes first). No argument checks: hot path
   * (`li`, `lj` must be valid loads, `out` of length >= 3). Where the float bound does not hold
   * — a mean load below {@link TINY_MEAN} (subnormal squares) or above 2^450 (overflowing
   * squares) — it computes the exact fold instead (O(n)) and writes it three times.
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
    if (!(meanLo > TINY_MEAN) || !(meanHi < HUGE_MEAN) || !(varLo >= 0) || !(varHi < Infinity)) {
      // the sum may be 0 (imbalance 0) or tiny (imbalance unbounded, and squares of deviations
      // may underflow to subnormals where the relative error bounds do not hold), or so large
      // that squares overflow: no useful bound, the exact fold instead
      const exact = imbalanceWithReplaced(this.loads, metric, i, li, j, lj);
      out[0] = exact;
      out[1] = exact;
      out[2] = exact;
      return;
    }
    const approx = approxVar > 0 ? Math.sqrt(approxVar / n) / (sum / n) / scale : 0;
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
