/**
 * The scratch space of the fast scoring paths (`./fast`, `./topsis-separated`): typed arrays
 * reused between calls, so the hot paths allocate nothing.
 */
import { CRITERIA_COUNT } from './kernels';

/** Size of the running statistics of the separated TOPSIS (`Scratch.criteriaAccumulator`). */
const CRITERIA_ACCUMULATOR_SIZE = 14;
/**
 * Per node in `Scratch.targetTerms`: cpu, 1/maxcpu, cpu load², maxcpu, mem, 1/maxmem,
 * mem load², maxmem.
 */
export const TARGET_TERMS = 8;

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
  /** Per node, what a row of the separated TOPSIS reads of its target (`TARGET_TERMS` each). */
  targetTerms = new Float64Array(0);
  matrix = new Float64Array(0);
  /** Per candidate, the minimum of each criterion over its targets (separated TOPSIS). */
  candidateMin = new Float64Array(0);
  /** The criteria of one candidate's rows (separated TOPSIS; a candidate has < n targets). */
  candidateRowBuffer = new Float64Array(0);
  /** Running column statistics of the separated TOPSIS, and a sink for recomputed rows. */
  readonly criteriaAccumulator = new Float64Array(CRITERIA_ACCUMULATOR_SIZE);
  readonly ignoredAccumulator = new Float64Array(CRITERIA_ACCUMULATOR_SIZE);
  /** The criteria of the three rows the separated TOPSIS scan keeps. */
  readonly keptRows = new Float64Array(3 * CRITERIA_COUNT);
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
  readonly columnStats = new Float64Array(18);
  /** The TOPSIS ideal points (best, worst per criterion). */
  readonly ideal = new Float64Array(2 * CRITERIA_COUNT);
  readonly rowScan = new Int32Array(3);

  ensure(n: number, rows: number, candidates = 0): void {
    if (this.candidateMin.length < candidates * CRITERIA_COUNT) {
      this.candidateMin = new Float64Array(
        Math.max(candidates, (this.candidateMin.length / CRITERIA_COUNT) * 2) * CRITERIA_COUNT,
      );
    }
    if (this.cpuLoad.length < n) {
      const size = Math.max(n, this.cpuLoad.length * 2);
      this.cpuLoad = new Float64Array(size);
      this.memLoad = new Float64Array(size);
      this.cpuPrefix = new Float64Array(size + 1);
      this.memPrefix = new Float64Array(size + 1);
      this.targetTerms = new Float64Array(size * TARGET_TERMS);
      this.candidateRowBuffer = new Float64Array(size * CRITERIA_COUNT);
    }
    if (this.scores.length < rows) {
      const size = Math.max(rows, this.scores.length * 2);
      this.scores = new Float64Array(size);
      this.matrix = new Float64Array(size * CRITERIA_COUNT);
    }
  }
}
