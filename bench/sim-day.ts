/**
 * A simulated day of the 64 nodes × 5,000 guests case (`poise-sim summary`, whole process), the
 * code of a baseline git ref against the working tree, in the same run (issue 28):
 *
 *   pnpm tsx --conditions=poise-source bench/sim-day.ts [--baseline <git-ref>] [--case <dir>]
 *     [--duration <d>] [--reps 1] [--keep]
 *
 * The baseline is the tree of `--baseline` (default `main`; after this work is merged, pass the
 * commit before it), unpacked with `git archive` into a temporary directory with its own
 * `pnpm install --frozen-lockfile --offline`; nothing in the repository or its worktrees
 * changes. Without `--case` the case is generated from
 * apps/sim/lab/corpus/large/large-64x5000.yaml (seed 1; `--duration` shortens it for a quick
 * look, e.g. `3h`). Runs alternate baseline, current, baseline, ... (`--reps` each; one day
 * takes minutes), from source through tsx as `pnpm poise-sim` does; each row is the median wall
 * time and, where /usr/bin/time exists, the median CPU time (user + system) of the process.
 * The last table checks that both print the same summary, byte for byte, or, when a baseline
 * predates a summary field (57344c6 has no `migrationSeconds`), the same value under every key
 * both print (the keys only one prints are named); exit 1 if not.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { median, timedProcess } from './clock';

const ROOT = resolve(import.meta.dirname, '..');

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

function sh(command: string, args: string[], cwd: string): string {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/**
 * The two summaries (JSON objects) compared on the keys both have: whether each such value is
 * the same (as JSON text), and the keys only one of them has.
 */
function sharedKeyCheck(
  baseline: string,
  current: string,
): { same: boolean; onlyBaseline: string[]; onlyCurrent: string[] } {
  const b = JSON.parse(baseline) as Record<string, unknown>;
  const c = JSON.parse(current) as Record<string, unknown>;
  const onlyBaseline = Object.keys(b).filter((k) => !Object.hasOwn(c, k));
  const onlyCurrent = Object.keys(c).filter((k) => !Object.hasOwn(b, k));
  const same = Object.keys(b)
    .filter((k) => Object.hasOwn(c, k))
    .every((k) => JSON.stringify(b[k]) === JSON.stringify(c[k]));
  return { same, onlyBaseline, onlyCurrent };
}

interface Timed {
  wallS: number;
  cpuS: number | undefined;
  stdout: string;
}

/** `poise-sim <args>` from the source of the tree at `root`, timed. */
function poiseSim(root: string, args: string[]): Timed {
  const r = timedProcess(
    [join(root, 'node_modules/.bin/tsx'), '--conditions=poise-source', 'apps/sim/src/cli.ts', ...args],
    root,
  );
  return { wallS: r.wallMs / 1000, cpuS: r.cpuS, stdout: r.stdout };
}

const baselineRef = arg('--baseline') ?? 'main';
const reps = Number(arg('--reps') ?? 1);
if (!Number.isInteger(reps) || reps < 1) throw new Error(`--reps must be an integer >= 1, got '${arg('--reps')}'`);
const work = mkdtempSync(join(tmpdir(), 'poise-bench-sim-day-'));
try {
  // the baseline: the ref's tree, with its own dependencies (from the store, offline)
  const commit = sh('git', ['rev-parse', '--short', `${baselineRef}^{commit}`], ROOT).trim();
  const head = sh('git', ['rev-parse', '--short', 'HEAD'], ROOT).trim();
  const dirty = sh('git', ['status', '--porcelain', '--untracked-files=no'], ROOT).trim() !== '';
  const base = join(work, 'baseline');
  sh('sh', ['-c', `mkdir -p '${base}' && git archive '${commit}' | tar -x -C '${base}'`], ROOT);
  sh('pnpm', ['install', '--frozen-lockfile', '--offline', '--silent'], base);

  let caseDir = arg('--case');
  if (caseDir === undefined) {
    caseDir = join(work, 'case');
    const duration = arg('--duration');
    poiseSim(ROOT, [
      'generate',
      'apps/sim/lab/corpus/large/large-64x5000.yaml',
      '--out',
      caseDir,
      '--seed',
      '1',
      ...(duration === undefined ? [] : ['--duration', duration]),
    ]);
  }
  caseDir = resolve(caseDir);

  const runs: Record<'baseline' | 'current', Timed[]> = { baseline: [], current: [] };
  for (let i = 0; i < reps; i++) {
    runs.baseline.push(poiseSim(base, ['summary', caseDir]));
    runs.current.push(poiseSim(ROOT, ['summary', caseDir]));
  }

  const row = (label: string, list: Timed[]) => {
    const cpus = list.map((r) => r.cpuS).filter((c): c is number => c !== undefined);
    return { label, wall: median(list.map((r) => r.wallS)), cpu: cpus.length > 0 ? median(cpus) : undefined };
  };
  const b = row(`baseline (${baselineRef} = ${commit})`, runs.baseline);
  const c = row(`current (${head}${dirty ? ' + uncommitted changes' : ''})`, runs.current);
  console.log(`poise-sim summary ${caseDir}\n`);
  console.log('| code | runs | wall s (median) | cpu s (median) |');
  console.log('| --- | --- | --- | --- |');
  for (const r of [b, c]) console.log(`| ${r.label} | ${reps} | ${r.wall.toFixed(1)} | ${r.cpu?.toFixed(1) ?? '—'} |`);
  const cpuSpeedup = b.cpu !== undefined && c.cpu !== undefined ? `${(b.cpu / c.cpu).toFixed(2)}×` : '—';
  console.log(`| speed-up (baseline / current) | | ${(b.wall / c.wall).toFixed(2)}× | ${cpuSpeedup} |`);

  const summaries = [...runs.baseline, ...runs.current].map((r) => r.stdout);
  const same = summaries.every((s) => s === summaries[0]);
  console.log('\n| check | result |');
  console.log('| --- | --- |');
  console.log(`| summary byte-identical (all ${summaries.length} runs) | ${same ? 'yes' : 'NO'} |`);
  let sameShared = same;
  if (!same) {
    // a baseline from before a summary field was added prints fewer keys: compare the values of
    // the keys both print, in the baseline's order, and name the keys only one side prints
    const shared = sharedKeyCheck(runs.baseline[0]!.stdout, runs.current[0]!.stdout);
    sameShared =
      shared.same &&
      runs.baseline.every((r) => r.stdout === runs.baseline[0]!.stdout) &&
      runs.current.every((r) => r.stdout === runs.current[0]!.stdout);
    console.log(
      `| the keys both print, value for value (only in baseline: ${shared.onlyBaseline.join(', ') || 'none'}; only in current: ${shared.onlyCurrent.join(', ') || 'none'}) | ${sameShared ? 'yes' : 'NO'} |`,
    );
  }
  for (const [label, list] of [
    ['baseline', runs.baseline],
    ['current', runs.current],
  ] as const)
    console.log(`| summary (${label}) | \`${list[0]!.stdout.trim()}\` |`);
  process.exitCode = sameShared ? 0 : 1;
} finally {
  if (process.argv.includes('--keep')) console.log(`\nkept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
