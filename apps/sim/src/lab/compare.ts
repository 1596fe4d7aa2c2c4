import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { METRICS, computeStats, computeVerdicts, metricValue, type RunGroup } from './stats';
import { summaryMarkdown } from './markdown';
import { predictionErrorStats } from './prediction';
import type { LabSummary, RunDigest } from './digest';
import { balanceSummary } from './balance-summary';
import type { Variant } from './variants';

export { digestTrace, type LabSummary, type RunDigest } from './digest';

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
    ...(digests.some((d) => d.predictions)
      ? { prediction: predictionErrorStats(digests.flatMap((d) => d.predictions ?? [])) }
      : {}),
    balance: balanceSummary(digests, scenarios, variants),
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
const SUMMARY_CSV_COLUMNS = [
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
const RUNS_CSV_COLUMNS = [
  'scenario',
  'variant',
  'seed',
  'guestContentionSeconds',
  'migrationSeconds',
  'moves',
  'failedMoves',
  'pingPongs',
  'maxMovesPerSid',
  'imbalanceTimeWeighted',
  'pressureSeconds',
  'simSeconds',
] as const;

/** summary.csv: the statistics, one row per scenario × variant × metric; empty cells for unknown values. */
function summaryCsv(s: LabSummary): string {
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
function runsCsv(s: LabSummary): string {
  return csv([
    [...RUNS_CSV_COLUMNS],
    ...s.runs.map((r) => [
      r.scenario,
      r.variant,
      r.seed,
      r.guestContentionSeconds,
      r.migrationSeconds,
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
