import { planRuns, runAll } from './src/lab/runner';
import { digestTrace, analyze } from './src/lab/compare';
import { buildReport } from './src/lab/report';
const scenarios = [{ name: 'rf', dir: 'scenarios/rebalance-and-failover' }, { name: 'pd', dir: '/tmp/lab/scenarios/packed-diurnal' }, { name: 'ba', dir: '/tmp/lab/scenarios/bursty-affinity' }];
const variants = [{ name: 'defaults', crs: {} }, { name: 'eager', crs: { 'ha-auto-rebalance-threshold': 10, 'ha-auto-rebalance-hold-duration': 0 } }, { name: 'topsis', crs: { 'ha-auto-rebalance-method': 'topsis' } }];
const jobs = planRuns(scenarios, variants, [1, 2, 3]);
let digests: any[] = [];
for (const j of [1, 2, 1, 2]) {
  const t0 = Date.now();
  digests = await runAll(jobs, { module: new URL(process.argv[2]!, import.meta.url), jobs: j, consume: (job, t) => digestTrace(t, job.seed === 1) });
  console.log(`runs with ${j} worker(s): ${Date.now() - t0} ms for ${jobs.length} runs`);
}
const t1 = Date.now();
const s = analyze(digests, variants);
const html = await buildReport({ title: 'x', summary: s, digests });
console.log(`analyze + report: ${Date.now() - t1} ms, ${html.length} bytes`);
