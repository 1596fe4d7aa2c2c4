import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { analyze, digestTrace, writeSummaryFiles, type LabSummary, type RunDigest } from './compare';
import { writeReport } from './report';
import { planRuns, runAll, type PluginModules, type ScenarioRef, type WorkerStats } from './runner';
import type { RunTrace } from './trace';
import type { Variant } from './variants';

export interface ComparisonOptions {
  scenarios: ScenarioRef[];
  variants: Variant[];
  seeds: number[];
  /** Module exporting `runOne` (see runner.ts). */
  module: string | URL;
  /** Out-of-tree policy plug-ins every run loads (`--plugin`). */
  plugins?: PluginModules;
  /** Worker threads; default one per core. */
  jobs?: number;
  /** Output directory: report.html, summary.json, summary.csv, runs.csv, summary.md (and traces/ with `saveTraces`). */
  out: string;
  title?: string;
  command?: string;
  /** Also write every run's trace to `out/traces/<scenario>/<variant>/seed-<n>.json`. */
  saveTraces?: boolean;
  onProgress?: (done: number, total: number) => void;
  /** Each worker's runs and busy share, once all runs are done (see `runAll`). */
  onWorkers?: (workers: WorkerStats[]) => void;
}

/**
 * Runs every scenario × variant × seed and writes the report and the summary files. The output
 * depends only on the inputs, never on the number of workers or the order runs finish in.
 */
export async function runComparison(o: ComparisonOptions): Promise<LabSummary> {
  const jobs = planRuns(o.scenarios, o.variants, o.seeds);
  const firstSeed = Math.min(...o.seeds);
  const digests = await runAll<RunDigest>(jobs, {
    module: o.module,
    jobs: o.jobs,
    onProgress: o.onProgress,
    onWorkers: o.onWorkers,
    ...(o.plugins ? { runOptions: { plugins: o.plugins } } : {}),
    consume: (job, trace) => {
      if (o.saveTraces) saveTrace(o.out, trace);
      return digestTrace(trace, job.seed === firstSeed);
    },
  });
  const descriptions = new Map(o.scenarios.filter((x) => x.description).map((x) => [x.name, x.description!]));
  return writeAll(o.out, digests, o.variants, o.title ?? 'poise policy lab', o.command, descriptions);
}

/** Report and summary files for traces already at hand (`poise-sim report`). */
export async function reportTraces(
  traces: readonly RunTrace[],
  out: string,
  title: string,
  command?: string,
  descriptions?: ReadonlyMap<string, string>,
): Promise<LabSummary> {
  const variants: Variant[] = [];
  for (const t of traces) if (!variants.some((v) => v.name === t.variant)) variants.push({ name: t.variant, crs: {} });
  const firstSeed = new Map<string, number>();
  for (const t of traces) {
    const k = `${t.scenario}\u0000${t.variant}`;
    firstSeed.set(k, Math.min(firstSeed.get(k) ?? Infinity, t.seed));
  }
  const digests = traces.map((t) => digestTrace(t, firstSeed.get(`${t.scenario}\u0000${t.variant}`) === t.seed));
  return writeAll(out, digests, variants, title, command, descriptions);
}

/** Writes the summary files and the report of a comparison's digests (in run order) into `out`. */
export async function writeAll(
  out: string,
  digests: RunDigest[],
  variants: Variant[],
  title: string,
  command?: string,
  descriptions?: ReadonlyMap<string, string>,
): Promise<LabSummary> {
  const summary = analyze(digests, variants);
  writeSummaryFiles(out, summary);
  await writeReport(out, { title, summary, digests, command, ...(descriptions ? { descriptions } : {}) });
  return summary;
}

/** Where `--save-traces` writes a run's trace, relative to the output directory. */
export function tracePath(run: { scenario: string; variant: string; seed: number }): string {
  return join('traces', safe(run.scenario), safe(run.variant), `seed-${run.seed}.json`);
}

/** Writes a run's trace to `out`/{@link tracePath}. */
export function saveTrace(out: string, trace: RunTrace): void {
  const file = join(out, tracePath(trace));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(trace));
}

function safe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}
