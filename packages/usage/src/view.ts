/** The data the fast paths work on: aggregated node stats and indexed candidates, flat. */

/** Aggregated node stats in sorted node order (typed arrays may be longer than `n`). */
export interface ClusterView {
  readonly n: number;
  readonly names: readonly string[];
  readonly cpu: Float64Array;
  readonly maxcpu: Float64Array;
  readonly mem: Float64Array;
  readonly maxmem: Float64Array;
}

/**
 * Validated candidates with node indices into the view, flat (struct of arrays, buffers reused
 * between calls, so they may be longer than `count`). Candidate k's targets are
 * `targets[targetStart[k] .. targetStart[k + 1])`; so row r of the (candidate, target) pairs in
 * input order is `targets[r]`, and there are `targetStart[count]` rows.
 */
export interface IndexedCandidates {
  readonly count: number;
  readonly sids: readonly string[];
  readonly source: Int32Array;
  readonly bundleCpu: Float64Array;
  readonly bundleMem: Float64Array;
  readonly targetStart: Int32Array;
  readonly targets: Int32Array;
}

/** The candidate a row (flat target position) belongs to: binary search over `targetStart`. */
export function candidateOfRow(c: IndexedCandidates, row: number): number {
  let lo = 0;
  let hi = c.count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (c.targetStart[mid]! <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
