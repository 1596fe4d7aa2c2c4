/**
 * `poise-manager plan --sim` on a generated case, whole process, against `plan --snapshot` of
 * the same cluster:
 *
 *   pnpm tsx --conditions=poise-source bench/plan-sim.ts [--case <dir>] [--reps 3] [--with-end]
 *
 * Without `--case` it generates one from apps/sim/lab/corpus/large/large-64x5000.yaml (seed 1).
 * Each row is the median of `--reps` runs of the real command line (tsx, from source): wall
 * time and, where /usr/bin/time exists, the process's CPU time (user + system). The default
 * reading point is timed; `--with-end` also times `--at end` (the whole 24 h timeline: minutes).
 * The last table checks that the plan read from the simulator is the plan of the same cluster
 * written as a snapshot file (placement and steps equal).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readCluster } from '../apps/manager/src/cli/plan/source';
import { median, type TimedRun, timedProcess } from './clock';

const ROOT = resolve(import.meta.dirname, '..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

function run(args: string[]): TimedRun {
  return timedProcess([TSX, '--conditions=poise-source', ...args], ROOT);
}

const reps = Number(arg('--reps') ?? 3);
let caseDir = arg('--case');
if (caseDir === undefined) {
  caseDir = join(mkdtempSync(join(tmpdir(), 'poise-bench-plan-sim-')), 'case');
  run([
    'apps/sim/src/cli.ts',
    'generate',
    'apps/sim/lab/corpus/large/large-64x5000.yaml',
    '--out',
    caseDir,
    '--seed',
    '1',
  ]);
}

const rows: string[] = [];
const modes: [string, string[]][] = [['default (start of a long timeline)', []]];
if (process.argv.includes('--with-end')) modes.push(['--at end (after the 24 h timeline)', ['--at', 'end']]);
let simDoc: { placement: Record<string, string>; steps: unknown; source: string } | undefined;
for (const [label, extra] of modes) {
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < (extra.length > 0 ? 1 : reps); i++) {
    const r = run(['apps/manager/src/cli.ts', 'plan', '--sim', caseDir, '--json', ...extra]);
    walls.push(r.wallMs);
    if (r.cpuS !== undefined) cpus.push(r.cpuS);
    if (extra.length === 0) simDoc = JSON.parse(r.stdout) as typeof simDoc;
  }
  rows.push(
    `| ${label} | ${walls.length} | ${(median(walls) / 1000).toFixed(2)} | ${cpus.length > 0 ? median(cpus).toFixed(2) : '—'} |`,
  );
}
console.log(`plan --sim ${caseDir}\n`);
console.log('| reading point | runs | wall s (median) | cpu s (median) |');
console.log('| --- | --- | --- | --- |');
for (const row of rows) console.log(row);

// the same cluster as a snapshot file: the same plan
const read = await readCluster({ kind: 'sim', dir: caseDir }, { capacity: {}, drain: [], mode: 'observe' });
const file = join(mkdtempSync(join(tmpdir(), 'poise-bench-snapshot-')), 'cluster.json');
writeFileSync(file, JSON.stringify(read.input));
const snap = run(['apps/manager/src/cli.ts', 'plan', '--snapshot', file, '--json']);
const snapDoc = JSON.parse(snap.stdout) as { placement: Record<string, string>; steps: unknown };
const samePlacement = JSON.stringify(snapDoc.placement) === JSON.stringify(simDoc!.placement);
const sameSteps = JSON.stringify(snapDoc.steps) === JSON.stringify(simDoc!.steps);
console.log('\n| compared with plan --snapshot of the same cluster | equal |');
console.log('| --- | --- |');
console.log(`| placement (${Object.keys(simDoc!.placement).length} guests) | ${samePlacement ? 'yes' : 'NO'} |`);
console.log(`| steps (${(simDoc!.steps as unknown[]).length}) | ${sameSteps ? 'yes' : 'NO'} |`);
console.log(
  `| plan --snapshot: wall s / cpu s | ${(snap.wallMs / 1000).toFixed(2)} / ${snap.cpuS?.toFixed(2) ?? '—'} |`,
);
process.exit(samePlacement && sameSteps ? 0 : 1);
