import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { binSteps, binWidth, type Bins } from './series';
import {
  METRICS,
  computeStats,
  computeVerdicts,
  metricValue,
  type MetricStats,
  type RunGroup,
  type Verdict,
} from './stats';
import { summaryMarkdown } from './markdown';
import { summarize, type RunSummary } from './summary';
import { hasPressure, type RunTrace, type TraceMove } from './trace';
import type { Variant } from './variants';

/** Bins kept per run series (the report merges them further). */
export const DIGEST_MAX_BINS = 1000;

/** Node series of one run, binned. */
export interface NodeDigest {
  names: string[];
  cpu: Bins[];
  mem: Bins[];
  pressureCpu?: Bins[];
  pressureMem?: Bins[];
}

/** What the lab keeps of a run: its summary, binned imbalance, its moves, and (for one seed) node series. */
export interface RunDigest {
  scenario: string;
  variant: string;
  seed: number;
  endTime: number;
  summary: RunSummary;
  imbalance: Bins;
  moves: TraceMove[];
  nodes?: NodeDigest;
}

/** Reduces a trace to a {@link RunDigest}; node series only when `keepNodes`. */
export function digestTrace(trace: RunTrace, keepNodes: boolean): RunDigest {
  const width = binWidth(trace.endTime, DIGEST_MAX_BINS);
  const { time } = trace.rounds;
  const bin = (values: readonly (number | null)[]) => binSteps(time, values, trace.endTime, width);
  const digest: RunDigest = {
    scenario: trace.scenario,
    variant: trace.variant,
    seed: trace.seed,
    endTime: trace.endTime,
    summary: summarize(trace),
    imbalance: bin(trace.rounds.imbalance),
    moves: trace.moves,
  };
  if (keepNodes) {
    const r = trace.rounds;
    digest.nodes = {
      names: trace.nodes,
      cpu: r.cpu.map(bin),
      mem: r.mem.map(bin),
      ...(hasPressure(r) ? { pressureCpu: r.pressureCpu.map(bin), pressureMem: r.pressureMem.map(bin) } : {}),
    };
  }
  return digest;
}

/** The numbers of a comparison, as written to summary.json. */
export interface LabSummary {
  format: 'poise-lab-summary/1';
  scenarios: string[];
  variants: Variant[];
  seeds: number[];
  metrics: typeof METRICS;
  runs: ({ scenario: string; variant: string; seed: number } & RunSummary)[];
  stats: MetricStats[];
  verdicts: Verdict[];
}

/**
 * Statistics and verdicts of a set of runs. `digests` in (scenario, variant order, seed) order;
 * `variants` in the order given (the report lists them so).
 */
export function analyze(digests: readonly RunDigest[], variants: readonly Variant[]): LabSummary {
  const scenarios: string[] = [];
  for (const d of digests) if (!scenarios.includes(d.scenario)) scenarios.push(d.scenario);
  const seeds = [...new Set(digests.map((d) => d.seed))].sort((a, b) => a - b);
  const groups: RunGroup[] = [];
  for (const scenario of scenarios) {
    for (const v of variants) {
      const runs = digests.filter((d) => d.scenario === scenario && d.variant === v.name);
      groups.push({ scenario, variant: v.name, summaries: runs.map((d) => d.summary), seeds: runs.map((d) => d.seed) });
    }
  }
  const stats = computeStats(groups);
  return {
    format: 'poise-lab-summary/1',
    scenarios,
    variants: variants.map((v) => ({ name: v.name, crs: { ...v.crs } })),
    seeds,
    metrics: METRICS,
    runs: digests.map((d) => ({
      scenario: d.scenario,
      variant: d.variant,
      seed: d.seed,
      ...d.summary,
      movesBySid: { ...d.summary.movesBySid },
    })),
    stats,
    verdicts: computeVerdicts(
      stats,
      scenarios,
      variants.map((v) => v.name),
      groups,
    ),
  };
}

function csvField(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csv(rows: (string | number | null | undefined)[][]): string {
  return rows.map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}

/** Columns of summary.csv (one row per scenario × variant × metric). */
export const SUMMARY_CSV_COLUMNS = [
  'scenario',
  'variant',
  'metric',
  'unit',
  'better',
  'n',
  'mean',
  'sd',
  'p50',
  'p95',
  'min',
  'max',
  'note',
] as const;
/** Columns of runs.csv (one row per run). */
export const RUNS_CSV_COLUMNS = [
  'scenario',
  'variant',
  'seed',
  'moves',
  'failedMoves',
  'pingPongs',
  'maxMovesPerSid',
  'imbalanceTimeWeighted',
  'pressureSeconds',
  'simSeconds',
] as const;

/** summary.csv: the statistics, one row per scenario × variant × metric; empty cells for unknown values. */
export function summaryCsv(s: LabSummary): string {
  const unit = new Map(METRICS.map((m) => [m.key, m]));
  return csv([
    [...SUMMARY_CSV_COLUMNS],
    ...s.stats.map((x) => {
      const m = unit.get(x.metric)!;
      const st = x.stats;
      return [
        x.scenario,
        x.variant,
        x.metric,
        m.unit,
        m.better,
        st?.n,
        st?.mean,
        st?.sd,
        st?.p50,
        st?.p95,
        st?.min,
        st?.max,
        x.reason,
      ];
    }),
  ]);
}

/** runs.csv: every run's metrics (movesBySid only in summary.json). */
export function runsCsv(s: LabSummary): string {
  return csv([
    [...RUNS_CSV_COLUMNS],
    ...s.runs.map((r) => [
      r.scenario,
      r.variant,
      r.seed,
      r.moves,
      r.failedMoves,
      r.pingPongs,
      metricValue(r, 'maxMovesPerSid'),
      r.imbalanceTimeWeighted,
      r.pressureSeconds,
      r.simSeconds,
    ]),
  ]);
}

/** Writes summary.json, summary.csv, runs.csv and summary.md into `out` (created if needed). */
export function writeSummaryFiles(out: string, s: LabSummary): void {
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'summary.json'), `${JSON.stringify(s, null, 2)}\n`);
  writeFileSync(join(out, 'summary.csv'), summaryCsv(s));
  writeFileSync(join(out, 'runs.csv'), runsCsv(s));
  writeFileSync(join(out, 'summary.md'), summaryMarkdown(s));
}
