/**
 * poise benchmark. `pnpm bench` prints the README tables, `pnpm bench --json` one JSON object of
 * the shape `BenchResult` in `./schema.ts` (the source of every figure in a README: see
 * `pnpm bench:readme`).
 *
 * - kernels (`./kernels.ts`): the fast paths of `@poise/usage` against like-for-like baselines
 *   (`./baselines.ts`), same warm-up, same repetitions, interleaved, same decisions asserted;
 * - start score (`./start-score.ts`, in the `start` section): one `scoreNodesToStart` against the
 *   same kernel in C (`./native/start-score.c`, compiled with `$CC` or `cc` when there is one), same inputs,
 *   interleaved, same decisions and score bits asserted;
 * - system (`./system.ts`): the simulator running the HA core, first and later manager rounds,
 *   the case run and a simulated hour, heap per service, and CPU profiles of two workloads.
 *
 * - page (`./page.ts`, only with `--only page`: it needs Chromium): the status page of a day of
 *   64 nodes in a headless browser, ready time, heap, main-thread busy share and longest task;
 *   its own table (not in the JSON result).
 *
 * Options: `--only start,rebalance,memory,system,profile` (sections; the others are empty),
 * `--quick` (fewer repetitions and no 30,000-service point, for development).
 */
import { cpus } from 'node:os';
import process from 'node:process';
import { rebalanceScoring, startPlacement, usageMemory } from './kernels';
import { nativeStartKernel } from './native';
import { pageBench, pageTable } from './page';
import { mixedWorkload, seed3Workload, startScoring } from './start-score';
import { BENCH_SCHEMA, type BenchResult, README_REGIONS, renderRegion, validateBenchResult } from './schema';
import { type SystemWorkload, profileRow, systemRow } from './system';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const quick = args.includes('--quick');
  const onlyAt = args.indexOf('--only');
  const only = onlyAt === -1 ? undefined : new Set(args[onlyAt + 1]?.split(','));
  const wants = (section: string) => only === undefined || only.has(section);
  if (!(globalThis as { gc?: unknown }).gc) throw new Error('run with --expose-gc (pnpm bench does)');
  const progress = (msg: string) => process.stderr.write(`${msg}\n`);
  if (only?.has('page')) {
    progress('status page (Chromium)');
    process.stdout.write(`${pageTable(await pageBench())}\n\n`);
    if (only.size === 1) return;
  }

  const reps = { kernels: quick ? 3 : 7, system: quick ? 2 : 5, hour: quick ? 1 : 3 };
  const startPlacementRows = wants('start')
    ? [300, 3000, 9000].map((n) => (progress(`start placement ${n}`), startPlacement(n, reps.kernels)))
    : [];
  const startScoreRows = wants('start')
    ? [seed3Workload(3000), mixedWorkload(64, 5000)].map(
        (w) => (progress(`start score ${w.workload} ${w.names.length} × ${w.guests}`), startScoring(w, reps.kernels)),
      )
    : [];
  const rebalanceRows = wants('rebalance')
    ? (progress('rebalance scoring'), rebalanceScoring(10_000, 100, reps.kernels))
    : [];
  const memoryRows = wants('memory') ? (progress('usage memory'), [usageMemory(100_000, 1_000)]) : [];
  const workloads: SystemWorkload[] = [
    ...[300, 3000, 9000, ...(quick ? [] : [30_000])].map((services) => ({
      workload: 'seed-003' as const,
      nodes: 3,
      services,
    })),
    { workload: 'dynamic-rebalance', nodes: 64, services: 5000 },
  ];
  const systemRows = wants('system')
    ? workloads.map(
        (w) => (progress(`system ${w.workload} ${w.nodes} × ${w.services}`), systemRow(w, reps.system, reps.hour)),
      )
    : [];
  const profiles = [];
  if (wants('profile')) {
    progress('profiles');
    profiles.push(
      await profileRow(
        { workload: 'seed-003', nodes: 3, services: 9000 },
        'the seed-003 case at 9,000 services (31 rounds, load included)',
        undefined,
      ),
    );
    profiles.push(
      await profileRow(
        { workload: 'dynamic-rebalance', nodes: 64, services: 5000 },
        'a simulated hour of dynamic-rebalance, 64 nodes × 5,000 services (load included)',
        180,
      ),
    );
  }
  const cpu = cpus();
  const result: BenchResult = validateBenchResult({
    schema: BENCH_SCHEMA,
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown',
      node: process.versions.node,
      platform: `${process.platform} ${process.arch}`,
      date: new Date().toISOString(),
    },
    repetitions: reps,
    nativeCompiler: startScoreRows.length > 0 ? (nativeStartKernel()?.compiler ?? null) : null,
    startPlacement: startPlacementRows,
    startScore: startScoreRows,
    rebalanceScoring: rebalanceRows,
    usageMemory: memoryRows,
    system: systemRows,
    profiles,
  });
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  for (const { region } of README_REGIONS) process.stdout.write(`${renderRegion(region, result)}\n\n`);
}

await main();
