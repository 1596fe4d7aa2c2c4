/**
 * A simulated day (or any number of hours) of the dynamic-rebalance workload, in process — the
 * issue-10 check that 64 nodes × 5,000 guests × 24 h run in minutes (`pve-9.2`, so the
 * concurrent round model). Not part of `pnpm bench` (it takes minutes); prints one line.
 *
 *   pnpm tsx --conditions=poise-source bench/day.ts [nodes=64] [services=5000] [hours=24]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { Simulation, loadCase } from '../packages/sim/src/index';
import { writeDynamicCase } from './sim-case';

const [nodes = 64, services = 5000, hours = 24] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), 'poise-day-'));
try {
  writeDynamicCase(dir, services, nodes, hours * 3600);
  const t0 = performance.now();
  const sim = new Simulation(loadCase(dir), { profile: 'pve-9.2', maxTimeSeconds: Infinity });
  let rounds = 0;
  while (sim.time < hours * 3600 && sim.step()) rounds++;
  const seconds = (performance.now() - t0) / 1000;
  const moves = (sim.log().match(/auto rebalance - /g) ?? []).length;
  if (sim.error !== undefined) throw new Error(`the simulation aborted: ${sim.error}`);
  process.stdout.write(
    `${nodes} nodes × ${services} services × ${hours} h (${sim.roundModel} rounds): ${rounds} rounds in ${seconds.toFixed(1)} s, ` +
      `${moves} auto-rebalance moves, heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
