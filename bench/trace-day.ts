/**
 * A 24 h trace case of 400 guests, as `poise-sim summary` runs it (issue 27 asks for ≤ 10 s): the
 * guests replay a PlanetLab day (`load: {shape: trace}`), 8 nodes of 32 cores, the load pressure
 * model. Generates the case in process (the trace file parsed once), then times `poise-sim
 * summary` on it as a user runs it — the built CLI (`apps/sim/dist/cli.js`, `pnpm build` first)
 * and, for comparison, the sources through tsx (`pnpm poise-sim`) — under the trace variants'
 * settings (`apps/sim/lab/variants-traces.yaml`). Prints a table; not part of `pnpm bench` (a run takes seconds). Never a test.
 *
 *   pnpm tsx --conditions=poise-source bench/trace-day.ts [guests=400] [hours=24] [--day 20110303] [--reps 1]
 *
 * The trace directory is `$POISE_TRACES/planetlab` (default `../shared/traces/planetlab` beside
 * the repository). `POISE_KEEP_CASE=1` keeps the generated case (its path is printed) for profiling.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { generateCase, writeCase } from '../apps/sim/src/lab/generate/generate';
import { validateParams } from '../apps/sim/src/lab/generate/params';
import { TraceCache, workloadFor } from '../apps/sim/src/lab/generate/workload-trace';
import { readVariants } from '../apps/sim/src/lab/variants';

const ROOT = resolve(import.meta.dirname, '..');
const option = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
const [guests = 400, hours = 24] = positional.map(Number);
const day = option('day', '20110303');
const reps = Number(option('reps', '1'));
const traces = resolve(process.env.POISE_TRACES ?? join(ROOT, '../shared/traces'), 'planetlab');

const params = {
  name: 'trace benchmark',
  duration: `${hours}h`,
  nodes: [{ count: 8, cpu: 32, memGiB: 256 }],
  guests: {
    count: guests,
    placement: 'random',
    headroom: 1,
    cpu: { median: 1.5, sigma: 0.8, min: 1, max: 16 },
    memGiB: { median: 4, sigma: 0.7, min: 1, max: 32 },
    memhost: { min: 1.05, max: 1.3 },
  },
  load: { shape: 'trace', file: join(traces, `${day}.csv`) },
  baseLoad: { cpu: 0.03, mem: 0.05 },
  noise: { cpu: 0.3, memMiB: 1024 },
  loadPressure: { cpu: { family: 'logistic', knee: 0.75, width: 0.06, 'noise-percent': 0.5 } },
};

// the trace corpus's variants (one place: apps/sim/lab/variants-traces.yaml), as `--set` options
const VARIANTS: [string, string[]][] = readVariants(join(ROOT, 'apps/sim/lab/variants-traces.yaml')).map((v) => [
  v.name,
  Object.entries(v.crs).flatMap(([key, value]) => [
    '--set',
    `${key}=${typeof value === 'boolean' ? Number(value) : value}`,
  ]),
]);

const dir = mkdtempSync(join(tmpdir(), 'poise-trace-day-'));
try {
  const t0 = performance.now();
  const checked = validateParams(params, 'bench/trace-day.ts');
  const { params: p, workload } = workloadFor(checked, undefined, {}, new TraceCache());
  const files = generateCase(p, 'bench/trace-day.ts', workload);
  writeCase(join(dir, 'case'), files);
  const generated = (performance.now() - t0) / 1000;
  const use = /Mean cpu use over the run: ([\d.]+) %/.exec(files.get('README')!)?.[1];
  const commands = (files.get('cmdlist')!.match(/set-dynamic-stats cpu/g) ?? []).length;
  process.stdout.write(
    `${guests} guests × ${hours} h replaying ${day}.csv on 8 nodes × 32 cores: generated in ${generated.toFixed(2)} s ` +
      `(${commands} cpu updates, mean cpu use ${use} %), Node ${process.version}\n\n`,
  );
  const runners: [string, string, string[]][] = [];
  const built = join(ROOT, 'apps/sim/dist/cli.js');
  if (existsSync(built)) runners.push(['built CLI', process.execPath, [built]]);
  else process.stdout.write(`(no ${built}: run pnpm build to time the built CLI)\n`);
  runners.push([
    'sources (tsx)',
    process.execPath,
    ['--import', 'tsx', '--conditions=poise-source', join(ROOT, 'apps/sim/src/cli.ts')],
  ]);
  process.stdout.write(
    '| poise-sim | variant | wall (s) | moves | guest contention-seconds |\n|---|---|---|---|---|\n',
  );
  for (const [label, exe, pre] of runners) {
    for (const [variant, sets] of VARIANTS) {
      const times: number[] = [];
      let out = '';
      for (let r = 0; r < reps; r++) {
        const start = performance.now();
        out = execFileSync(exe, [...pre, 'summary', join(dir, 'case'), ...sets], { cwd: ROOT, encoding: 'utf8' });
        times.push((performance.now() - start) / 1000);
      }
      const s = JSON.parse(out) as { moves: number; guestContentionSeconds: number };
      const wall = [...times].sort((a, b) => a - b)[times.length >> 1]!;
      process.stdout.write(
        `| ${label} | ${variant} | ${wall.toFixed(2)} | ${s.moves} | ${Math.round(s.guestContentionSeconds)} |\n`,
      );
    }
  }
} finally {
  if (process.env.POISE_KEEP_CASE) process.stdout.write(`kept ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}
