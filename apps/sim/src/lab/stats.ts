import { mean, quantileSeq, std } from 'mathjs';
import type { RunSummary } from './summary';

/** Which way a metric is better. `none`: reported, never judged. */
type Better = 'lower' | 'higher' | 'none';

/** A metric of the lab: a number per run, its unit and which way is better. */
export interface MetricDef {
  key: MetricKey;
  label: string;
  /** Unit of the values in summary.json / summary.csv. */
  unit: string;
  better: Better;
  /** The report shows value × `displayScale` in `displayUnit` (the imbalance as a percentage). */
  displayScale: number;
  displayUnit: string;
  /** One line for the report and the README. */
  description: string;
}

export type MetricKey =
  | 'guestContentionSeconds'
  | 'migrationSeconds'
  | 'moves'
  | 'failedMoves'
  | 'pingPongs'
  | 'maxMovesPerSid'
  | 'imbalanceTimeWeighted'
  | 'pressureSeconds'
  | 'simSeconds';

/**
 * The metrics compared across variants, with the direction of "better" declared next to each.
 * All but `simSeconds` are better lower: a policy that reaches the same balance with fewer,
 * surer, steadier moves and less pressure is the better one. `simSeconds` is context only.
 * The first is what the guests felt (known only under the simulator's load pressure model);
 * the others are what the cluster and the balancer did.
 */
export const METRICS: readonly MetricDef[] = [
  {
    key: 'guestContentionSeconds',
    label: 'guest contention-seconds',
    unit: 'guest·s',
    better: 'lower',
    displayScale: 1,
    displayUnit: 'guest·s',
    description:
      'time guests wanted cpu and waited, stalled on memory or in their own migration (the load pressure model’s ground truth)',
  },
  {
    key: 'migrationSeconds',
    label: 'of which migrations',
    unit: 'guest·s',
    better: 'none',
    displayScale: 1,
    displayUnit: 'guest·s',
    description:
      'the part of guest contention-seconds migrations caused: the migrated guests’ own cost and the other guests’ wait behind the transfers (context: judged within the total)',
  },
  {
    key: 'moves',
    label: 'moves',
    unit: 'count',
    better: 'lower',
    displayScale: 1,
    displayUnit: '',
    description: 'motions the balancer issued (per resource)',
  },
  {
    key: 'failedMoves',
    label: 'failed moves',
    unit: 'count',
    better: 'lower',
    displayScale: 1,
    displayUnit: '',
    description: 'motions that failed or were refused',
  },
  {
    key: 'pingPongs',
    label: 'ping-pongs',
    unit: 'count',
    better: 'lower',
    displayScale: 1,
    displayUnit: '',
    description: 'moves back to a node the resource left ≤ 30 min before',
  },
  {
    key: 'maxMovesPerSid',
    label: 'most moves of one resource',
    unit: 'count',
    better: 'lower',
    displayScale: 1,
    displayUnit: '',
    description: 'the largest count in movesBySid (0 without moves)',
  },
  {
    key: 'imbalanceTimeWeighted',
    label: 'time-weighted imbalance',
    unit: 'fraction 0..1',
    better: 'lower',
    displayScale: 100,
    displayUnit: '%',
    description: 'mean node imbalance over the run, each sample weighted by how long it held',
  },
  {
    key: 'pressureSeconds',
    label: 'pressure node-seconds',
    unit: 'node·s',
    better: 'lower',
    displayScale: 1,
    displayUnit: 'node·s',
    description: 'seconds × online nodes with PSI cpu ≥ 10 % or memory ≥ 5 %',
  },
  {
    key: 'simSeconds',
    label: 'simulated time',
    unit: 's',
    better: 'none',
    displayScale: 1,
    displayUnit: 's',
    description: 'length of the run',
  },
];

/** The value of a metric for one run; null when the run cannot tell (no samples, no pressure telemetry). */
export function metricValue(s: RunSummary, key: MetricKey): number | null {
  switch (key) {
    case 'maxMovesPerSid': {
      let m = 0;
      for (const v of Object.values(s.movesBySid)) if (v > m) m = v;
      return m;
    }
    default:
      return s[key];
  }
}

/** Descriptive statistics of one metric across seeds. */
export interface Stats {
  /** Number of runs (seeds). */
  n: number;
  mean: number;
  /** Sample standard deviation (n − 1 in the denominator); null for a single run. */
  sd: number | null;
  /** Median and 95th percentile, linear interpolation between closest ranks (see {@link describeValues}). */
  p50: number;
  p95: number;
  min: number;
  max: number;
}

/**
 * Mean, sample standard deviation, p50/p95, min and max of a non-empty list, with mathjs.
 *
 * Quantile definition (mathjs `quantileSeq`, Hyndman & Fan type 7, the default of R and
 * NumPy): sort the n values x₀ ≤ … ≤ xₙ₋₁, h = (n − 1)·p, result = x⌊h⌋ + (h − ⌊h⌋)·(x⌊h⌋₊₁ − x⌊h⌋).
 * For n = 20, p95 = x₁₈ + 0.05·(x₁₉ − x₁₈).
 */
export function describeValues(values: readonly number[]): Stats {
  if (values.length === 0) throw new RangeError('describeValues: no values');
  for (const v of values) if (!Number.isFinite(v)) throw new RangeError(`describeValues: not a finite number: ${v}`);
  // Sorted here with an exact comparison: mathjs compares with a tolerance (relTol 1e-12), so
  // its own sort, min and max would treat nearly equal values as equal.
  const xs = [...values].sort((a, b) => a - b);
  return {
    n: xs.length,
    mean: Number(mean(xs)),
    sd: xs.length < 2 ? null : Number(std(xs, 'unbiased')),
    p50: Number(quantileSeq(xs, 0.5, true)),
    p95: Number(quantileSeq(xs, 0.95, true)),
    min: xs[0]!,
    max: xs[xs.length - 1]!,
  };
}

/** Statistics of one metric of one variant in one scenario; `stats` null when a run could not tell. */
export interface MetricStats {
  scenario: string;
  variant: string;
  metric: MetricKey;
  stats: Stats | null;
  /** Why `stats` is null. */
  reason?: string;
}

/** Runs of one (scenario, variant): their summaries in seed order. */
export interface RunGroup {
  scenario: string;
  variant: string;
  summaries: readonly RunSummary[];
  /** The seed of each summary (same order); needed for the paired comparison of verdicts. */
  seeds?: readonly number[];
}

/** Statistics of every metric for every (scenario, variant) group, in the groups' order then METRICS order. */
export function computeStats(groups: readonly RunGroup[]): MetricStats[] {
  const out: MetricStats[] = [];
  for (const g of groups) {
    for (const m of METRICS) {
      const values = g.summaries.map((s) => metricValue(s, m.key));
      if (values.length === 0) {
        out.push({ scenario: g.scenario, variant: g.variant, metric: m.key, stats: null, reason: 'no runs' });
      } else if (values.some((v) => v === null)) {
        const why =
          m.key === 'pressureSeconds'
            ? 'no pressure telemetry'
            : m.key === 'guestContentionSeconds' || m.key === 'migrationSeconds'
              ? 'no load pressure model'
              : 'no samples in some runs';
        out.push({ scenario: g.scenario, variant: g.variant, metric: m.key, stats: null, reason: why });
      } else {
        out.push({
          scenario: g.scenario,
          variant: g.variant,
          metric: m.key,
          stats: describeValues(values as number[]),
        });
      }
    }
  }
  return out;
}

/**
 * Which variants are best on one metric of one scenario, judged on the mean across seeds, and by
 * how much they lead the next variant. `best` is empty when the metric is not judged or
 * statistics are missing (see `note`); several variants share `best` when their means are equal.
 */
export interface Verdict {
  scenario: string;
  metric: MetricKey;
  /** The variants with the best mean (in the variants' order); empty when not judged. */
  best: string[];
  /** The first variant behind them; null when every variant ties or nothing is judged. */
  next: string | null;
  bestMean: number | null;
  nextMean: number | null;
  /** |nextMean − bestMean|, in the metric's unit. */
  difference: number | null;
  /** difference / |nextMean|; null when nextMean is 0 or not known. */
  relative: number | null;
  /**
   * Standard error of the mean per-seed difference (next − best, seed by seed: the same seed is
   * the same cluster and noise for every variant); null with fewer than two common seeds.
   */
  pairedSe?: number | null;
  /**
   * Whether the lead is clear of the seed-to-seed noise: |mean per-seed difference| > 2 ×
   * `pairedSe` (about a paired t-test at 5 % for 20 seeds). null when it cannot be told.
   */
  clear?: boolean | null;
  note?: string;
}

/** Mean per-seed difference of `metric` (b − a) over the seeds both groups ran, its standard error, and n. */
export function pairedDifference(
  a: RunGroup,
  b: RunGroup,
  metric: MetricKey,
): { mean: number; se: number | null; n: number } | null {
  if (!a.seeds || !b.seeds) return null;
  const byseed = new Map<number, number | null>();
  a.seeds.forEach((seed, i) => byseed.set(seed, metricValue(a.summaries[i]!, metric)));
  const d: number[] = [];
  b.seeds.forEach((seed, i) => {
    const x = byseed.get(seed);
    const y = metricValue(b.summaries[i]!, metric);
    if (x !== undefined && x !== null && y !== null) d.push(y - x);
  });
  if (d.length === 0) return null;
  const m = Number(mean(d));
  return { mean: m, se: d.length < 2 ? null : Number(std(d, 'unbiased')) / Math.sqrt(d.length), n: d.length };
}

/**
 * Verdicts per scenario and metric: the variants with the best mean against the next one
 * (e.g. defaults 0 and topsis 0 moves are best, 16 fewer than eager). All equal: a tie.
 */
export function computeVerdicts(
  stats: readonly MetricStats[],
  scenarios: readonly string[],
  variants: readonly string[],
  groups?: readonly RunGroup[],
): Verdict[] {
  const group = (scenario: string, variant: string) =>
    groups?.find((g) => g.scenario === scenario && g.variant === variant);
  const byKey = new Map<string, MetricStats>();
  for (const s of stats) byKey.set(`${s.scenario}\u0000${s.variant}\u0000${s.metric}`, s);
  const out: Verdict[] = [];
  for (const scenario of scenarios) {
    for (const m of METRICS) {
      const base: Verdict = {
        scenario,
        metric: m.key,
        best: [],
        next: null,
        bestMean: null,
        nextMean: null,
        difference: null,
        relative: null,
      };
      if (m.better === 'none') {
        out.push({ ...base, note: 'not judged' });
        continue;
      }
      if (variants.length < 2) {
        out.push({ ...base, note: 'one variant' });
        continue;
      }
      const ranked: { variant: string; mean: number }[] = [];
      let missing: string | undefined;
      for (const v of variants) {
        const s = byKey.get(`${scenario}\u0000${v}\u0000${m.key}`);
        if (!s?.stats) {
          missing = s?.reason ?? 'no runs';
          break;
        }
        ranked.push({ variant: v, mean: s.stats.mean });
      }
      if (missing !== undefined) {
        out.push({ ...base, note: missing });
        continue;
      }
      // stable sort: equal means keep the variants' order
      ranked.sort((a, b) => (m.better === 'lower' ? a.mean - b.mean : b.mean - a.mean));
      const first = ranked[0]!;
      const best = ranked.filter((r) => r.mean === first.mean).map((r) => r.variant);
      const nxt = ranked.find((r) => r.mean !== first.mean);
      if (!nxt) {
        out.push({ ...base, best, bestMean: first.mean, nextMean: null, difference: 0, note: 'tie' });
        continue;
      }
      const difference = Math.abs(nxt.mean - first.mean);
      const verdict: Verdict = {
        scenario,
        metric: m.key,
        best,
        next: nxt.variant,
        bestMean: first.mean,
        nextMean: nxt.mean,
        difference,
        relative: nxt.mean === 0 ? null : difference / Math.abs(nxt.mean),
      };
      const ga = group(scenario, first.variant);
      const gb = group(scenario, nxt.variant);
      const paired = ga && gb ? pairedDifference(ga, gb, m.key) : null;
      if (paired) {
        verdict.pairedSe = paired.se;
        verdict.clear = paired.se === null ? null : Math.abs(paired.mean) > 2 * paired.se;
      }
      out.push(verdict);
    }
  }
  return out;
}
