/**
 * The placement planner at scale (`@poise/plan`): generated clusters (heterogeneous nodes,
 * guests piled unevenly, node-affinity, positive and negative rules), planned with the default
 * options. Prints, per size, the wall-clock and CPU medians of `--reps` warm runs (default 5)
 * after a first (cold) run, the CPU time of that first run, its heap growth and the process's
 * peak RSS, the objective,
 * the lower bound and the gap, moves and steps. Then the cost as it grows with guests (64 nodes)
 * and with nodes (5,000 guests). `--json` prints the rows as JSON; `--quick` runs the two
 * headline sizes only. Run: `pnpm bench:plan`.
 */
import { performance } from 'node:perf_hooks';
import process from 'node:process';

import { planPlacement } from '../packages/plan/src/index';
import { generatedCluster } from '../packages/plan/src/testing/index';
const argv = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const reps = option('reps', 5);
const json = argv.includes('--json');
const quick = argv.includes('--quick');

interface Row {
  readonly nodes: number;
  readonly guests: number;
  readonly rules: number;
  readonly medianMs: number;
  readonly cpuMs: number;
  readonly coldCpuMs: number;
  readonly heapMB: number;
  readonly rssMB: number;
  readonly objective: number;
  readonly current: number;
  readonly bound: number;
  readonly gapPercent: number;
  readonly moves: number;
  readonly steps: number;
}

function measure(nodeCount: number, guestCount: number, ruleCount: number): Row {
  const input = generatedCluster(nodeCount * 100_003 + guestCount, nodeCount, guestCount, ruleCount);
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  // the first run (cold: the JIT compiles as it goes), then `reps` warm runs
  const coldBefore = process.cpuUsage();
  let plan = planPlacement(input);
  const cold = process.cpuUsage(coldBefore);
  const heapMB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  const times: number[] = [];
  const cpus: number[] = [];
  for (let r = 0; r < reps; r++) {
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    plan = planPlacement(input);
    times.push(performance.now() - start);
    const cpu = process.cpuUsage(cpuBefore);
    cpus.push((cpu.user + cpu.system) / 1000);
  }
  if (!plan.feasible)
    throw new Error(`generated cluster ${nodeCount} x ${guestCount} is infeasible: ${plan.reasons.join('; ')}`);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  return {
    nodes: nodeCount,
    guests: guestCount,
    rules: ruleCount,
    medianMs: median(times),
    cpuMs: median(cpus),
    coldCpuMs: (cold.user + cold.system) / 1000,
    heapMB,
    rssMB: process.resourceUsage().maxRSS / 1024,
    objective: plan.objective.value,
    current: plan.current.value,
    bound: plan.bound,
    gapPercent: plan.gap * 100,
    moves: plan.objective.moves,
    steps: plan.steps.length,
  };
}

const headline: Array<[number, number, number]> = [
  [8, 200, 20],
  [64, 5000, 500],
];
const growth: Array<[number, number, number]> = quick
  ? []
  : [
      [64, 1250, 125],
      [64, 2500, 250],
      [64, 10000, 1000],
      [16, 5000, 500],
      [32, 5000, 500],
      [128, 5000, 500],
    ];
const rows = [...headline, ...growth].map(([n, g, r]) => measure(n, g, r));
if (json) console.log(JSON.stringify(rows, null, 2));
else {
  console.log(
    `planPlacement, default options; medians of ${reps} warm runs (wall, CPU), CPU of the first (cold) run, heap growth of the first run, peak RSS of the process so far (Node ${process.version})`,
  );
  console.log(
    '| nodes × guests (rules) | wall ms | cpu ms | cold cpu ms | heap MB | peak RSS MB | objective now → plan | bound | gap | moves | steps |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    console.log(
      `| ${r.nodes} × ${r.guests.toLocaleString('en-US')} (${r.rules}) | ${r.medianMs.toFixed(1)} | ${r.cpuMs.toFixed(0)} | ${r.coldCpuMs.toFixed(0)} | ${r.heapMB.toFixed(1)} | ${r.rssMB.toFixed(0)} | ${r.current.toFixed(4)} → ${r.objective.toFixed(4)} | ${r.bound.toFixed(4)} | ${r.gapPercent.toFixed(2)} % | ${r.moves} | ${r.steps} |`,
    );
  }
}
