/**
 * The scenario table of the policy packages' READMEs: every balancer scenario of
 * `apps/sim/scenarios` run with the reference balancer (every variant key removed), with each
 * variant key alone at its recommended value, and with the `recommended` preset; one
 * `poise-sim summary` per cell (a {@link RunRecorder} on the {@link Simulation}).
 *
 *   pnpm scenario-table            print the tables
 *   pnpm scenario-table --write    also rewrite them in the READMEs (between the markers)
 *   pnpm scenario-table --seed 3 --set ha-auto-rebalance-smoothing=600
 *                                  another noise seed; extra overrides on every run (tuning)
 *
 * It runs for minutes: on a terminal a progress bar on stderr counts the runs; piped or
 * redirected, only the tables are printed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRESET_KEY, PolicyRegistry } from '@poise/policy';
import { BUILTIN_REGISTRY } from '@poise/ha';
import { stablePlugin } from '@poise/policy-stable';
import { pressurePlugin } from '@poise/policy-pressure';
import {
  MAX_SEED,
  RunRecorder,
  Simulation,
  VARIANT_CRS_KEYS,
  loadCase,
  parseCrsOverride,
  withCrsOverrides,
  type RunSummary,
} from '@poise/sim';
import { progressBar, type ProgressStream } from './lab/progress';
import { emptySetProblem } from './policy-values';

/** The repository root (above apps/sim/src): the READMEs this script rewrites. */
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The balancer scenarios of the table, in table order, with a short label. */
export const TABLE_SCENARIOS: ReadonlyArray<{ name: string; label: string }> = [
  { name: 'failing-migration-local-cdrom', label: 'symptom 1: a guest with a local cd-rom (20 min)' },
  { name: 'failing-migration-series-fa109', label: "review's fa:109 (fails 9×, 20 min)" },
  { name: 'crs-dynamic-auto-rebalance5', label: 'seed 004 test case (fa:102 fails 2×)' },
  { name: 'noisy-dominant-guest', label: 'symptom 2: dominant guest, ±0.5 pp noise (27 min)' },
  { name: 'noisy-dominant-guest-24h', label: 'symptom 2, 24 h' },
  { name: 'idle-cluster-pressure', label: 'symptom 3: idle 8 h, pressure, all under pressure (9 h)' },
  { name: 'rebalance-and-failover', label: 'six guests spread out, then a node fails' },
];

/** A column of the table: a name and the `--set` overrides on top of the reference balancer. */
export interface TableVariant {
  readonly name: string;
  readonly sets: readonly string[];
}

/** The plug-ins whose keys have a column of their own: the tables of their READMEs. */
const TABLE_PLUGINS = new PolicyRegistry([stablePlugin, pressurePlugin]);

/** The overrides that remove every variant key: the reference balancer. */
export const REFERENCE_SETS: readonly string[] = VARIANT_CRS_KEYS.map((key) => `${key}=`);

/**
 * The columns: defaults (the reference balancer), each variant key alone at its recommended
 * value (keys whose recommended value is their default, such as `pressure-missing`, have no
 * column of their own), and the preset.
 */
export function tableVariants(): TableVariant[] {
  const columns: TableVariant[] = [{ name: 'defaults', sets: [] }];
  for (const spec of TABLE_PLUGINS.keys()) {
    if (spec.recommended === spec.off) continue;
    const value = spec.type === 'flag' ? (spec.recommended ? 1 : 0) : spec.recommended;
    const short = spec.key.replace(/^ha-auto-rebalance-/, '');
    columns.push({ name: `${short} ${spec.type === 'flag' ? '1' : String(value)}`, sets: [`${spec.key}=${value}`] });
  }
  columns.push({ name: 'recommended', sets: [`${PRESET_KEY}=recommended`] });
  return columns;
}

/**
 * Runs one scenario (pve-9.2) with the reference balancer (every variant key of its
 * datacenter.cfg removed, {@link REFERENCE_SETS}) plus the overrides `sets`; returns its
 * summary, the recorder (motions, samples) and the log.
 */
export function runScenario(
  name: string,
  sets: readonly string[],
  options: { seed?: number } = {},
): { summary: RunSummary; recorder: RunRecorder; log: string } {
  const dir = resolve(REPO_ROOT, 'apps/sim/scenarios', name);
  const input = withCrsOverrides(loadCase(dir, name), [...REFERENCE_SETS, ...sets]);
  const sim = new Simulation(input, {
    profile: 'pve-9.2',
    ...(options.seed === undefined ? {} : { seed: options.seed }),
  });
  const recorder = new RunRecorder(sim);
  const { log, error } = sim.run();
  if (error !== undefined) throw new Error(`scenario '${name}' aborted: ${error}`);
  return { summary: recorder.summary(), recorder, log };
}

/**
 * Runs every scenario × column ({@link runScenario} with `extra` overrides after the column's)
 * and returns the summaries by scenario and column name. `progress` (stderr) gets a bar
 * counting the runs when it is a terminal, nothing otherwise.
 */
export function runTable(
  scenarios: ReadonlyArray<{ name: string }>,
  columns: readonly TableVariant[],
  options: { extra?: readonly string[]; seed?: number; progress?: ProgressStream } = {},
): Map<string, Map<string, RunSummary>> {
  const bar = progressBar(options.progress ?? { isTTY: false, write: () => undefined });
  const total = scenarios.length * columns.length;
  const results = new Map<string, Map<string, RunSummary>>();
  bar.update(0, total);
  for (const { name } of scenarios) {
    const row = new Map<string, RunSummary>();
    for (const c of columns) {
      row.set(c.name, runScenario(name, [...c.sets, ...(options.extra ?? [])], { seed: options.seed }).summary);
      bar.update(results.size * columns.length + row.size, total);
    }
    results.set(name, row);
  }
  bar.done();
  return results;
}

/** The two tables (moves, imbalance) as markdown. */
export function renderTables(
  results: ReadonlyMap<string, ReadonlyMap<string, RunSummary>>,
  columns: readonly TableVariant[],
): string {
  const header = `| scenario | ${columns.map((c) => c.name).join(' | ')} |\n|---|${columns.map(() => '---').join('|')}|\n`;
  const rows = (cell: (s: RunSummary) => string) =>
    TABLE_SCENARIOS.map(
      ({ name, label }) => `| ${label} | ${columns.map((c) => cell(results.get(name)!.get(c.name)!)).join(' | ')} |`,
    ).join('\n');
  const moves = (s: RunSummary) =>
    `${s.moves}${s.failedMoves > 0 ? ` (${s.failedMoves} failed)` : ''}${s.pingPongs > 0 ? `, ${s.pingPongs} pp` : ''}`;
  const imbalance = (s: RunSummary) =>
    s.imbalanceTimeWeighted === null ? '–' : `${(s.imbalanceTimeWeighted * 100).toFixed(1)}`;
  return [
    'Balancer moves (failed ones; pp = ping-pongs, a guest moved back to a node it left within 30 min):',
    '',
    header + rows(moves),
    '',
    'Time-weighted node imbalance (%, normalised, measured loads):',
    '',
    header + rows(imbalance),
  ].join('\n');
}

/** Replaces the text between `<!-- scenario-table -->` and `<!-- /scenario-table -->` in a README. */
export function replaceTable(readme: string, table: string): string {
  const start = '<!-- scenario-table -->';
  const end = '<!-- /scenario-table -->';
  const i = readme.indexOf(start);
  const j = readme.indexOf(end);
  if (i < 0 || j < i) throw new Error(`no '${start}' … '${end}' markers`);
  return `${readme.slice(0, i + start.length)}\n${table}\n${readme.slice(j)}`;
}

/** The READMEs that carry the table. */
export const TABLE_READMES = ['packages/policy-stable/README.md', 'packages/policy-pressure/README.md'];

/** The command line: `[--write] [--seed <n>] [--set <crs-key>=<value>]...`, checked before anything runs. */
export function parseTableArgs(argv: readonly string[]): { write: boolean; seed?: number; extra: string[] } {
  let write = false;
  let seed: number | undefined;
  const extra: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--write') write = true;
    else if (a === '--seed') {
      const v = argv[++i];
      if (v === undefined || !/^\d+$/.test(v) || Number(v) > MAX_SEED)
        throw new TableUsageError(`'--seed' needs an integer from 0 to ${MAX_SEED}, got '${v ?? ''}'`);
      seed = Number(v);
    } else if (a === '--set') {
      const v = argv[++i];
      if (v === undefined) throw new TableUsageError("'--set' needs <crs-key>=<value>");
      const empty = emptySetProblem(v, BUILTIN_REGISTRY);
      if (empty !== undefined) throw new TableUsageError(empty);
      try {
        parseCrsOverride(v);
      } catch (err) {
        throw new TableUsageError(err instanceof Error ? err.message : String(err));
      }
      extra.push(v);
    } else throw new TableUsageError(`unknown argument '${a}' (--write, --seed <n>, --set <crs-key>=<value>)`);
  }
  if (write && (seed !== undefined || extra.length > 0))
    throw new TableUsageError("'--write' writes the committed configuration only (no --seed or --set)");
  return { write, ...(seed === undefined ? {} : { seed }), extra };
}

/** A bad command line of `pnpm scenario-table` (exit 2). */
export class TableUsageError extends Error {
  override readonly name = 'TableUsageError';
}

function main(argv: string[]): number {
  let args;
  try {
    args = parseTableArgs(argv);
  } catch (err) {
    if (!(err instanceof TableUsageError)) throw err;
    console.error(`scenario-table: ${err.message}`);
    return 2;
  }
  const columns = tableVariants();
  const results = runTable(TABLE_SCENARIOS, columns, { extra: args.extra, seed: args.seed, progress: process.stderr });
  const table = renderTables(results, columns);
  console.log(table);
  if (args.write) {
    for (const file of TABLE_READMES) {
      const path = join(REPO_ROOT, file);
      writeFileSync(path, replaceTable(readFileSync(path, 'utf8'), table));
      console.error(`wrote ${file}`);
    }
  }
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exitCode = main(process.argv.slice(2));
