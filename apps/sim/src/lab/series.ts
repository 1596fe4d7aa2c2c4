/**
 * Time bins of step series, for charts: a sample holds until the next one (the last until the
 * run's end), and a bin holds the time-weighted sum and the covered seconds, so bins of width w
 * merge exactly into bins of any multiple of w.
 */

/** Bin widths, seconds; each divides every later one, so bins can always be merged. */
const BIN_LADDER: readonly number[] = [20, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 172800, 345600, 691200];

/** The smallest ladder width w with span / w ≤ maxBins (and ≥ `atLeast`). */
export function binWidth(span: number, maxBins: number, atLeast = 0): number {
  for (const w of BIN_LADDER) if (w >= atLeast && span / w <= maxBins) return w;
  return BIN_LADDER[BIN_LADDER.length - 1]! * Math.ceil(span / maxBins / BIN_LADDER[BIN_LADDER.length - 1]!);
}

/** Bins [k·width, (k+1)·width): Σ value·seconds and seconds covered (0 = no data in the bin). */
export interface Bins {
  width: number;
  sum: number[];
  dur: number[];
}

/**
 * Integrates a step series into bins. `values[r]` holds over [times[r], times[r+1]) (the last
 * until `end`); a null value is no data for its interval.
 */
export function binSteps(
  times: readonly number[],
  values: readonly (number | null)[],
  end: number,
  width: number,
): Bins {
  const n = Math.max(0, Math.ceil(end / width));
  const sum = new Array<number>(n).fill(0);
  const dur = new Array<number>(n).fill(0);
  for (let r = 0; r < times.length; r++) {
    const v = values[r];
    if (v === null || v === undefined) continue;
    let a = times[r]!;
    const b = r + 1 < times.length ? times[r + 1]! : end;
    while (a < b) {
      const k = Math.floor(a / width);
      const edge = Math.min(b, (k + 1) * width);
      sum[k]! += v * (edge - a);
      dur[k]! += edge - a;
      a = edge;
    }
  }
  return { width, sum, dur };
}

/** Merges bins into bins of `width` (a multiple of `bins.width`). */
export function rebin(bins: Bins, width: number): Bins {
  if (width === bins.width) return bins;
  const f = width / bins.width;
  if (!Number.isInteger(f) || f < 1) throw new RangeError(`rebin: ${width} is not a multiple of ${bins.width}`);
  const n = Math.ceil(bins.sum.length / f);
  const sum = new Array<number>(n).fill(0);
  const dur = new Array<number>(n).fill(0);
  for (let k = 0; k < bins.sum.length; k++) {
    sum[Math.floor(k / f)]! += bins.sum[k]!;
    dur[Math.floor(k / f)]! += bins.dur[k]!;
  }
  return { width, sum, dur };
}

/** Mean per bin (time-weighted); null where the bin has no data. */
export function binMeans(bins: Bins): (number | null)[] {
  return bins.sum.map((s, k) => (bins.dur[k]! > 0 ? s / bins.dur[k]! : null));
}
