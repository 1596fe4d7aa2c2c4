/**
 * The oracle tests (test support): the planner against HiGHS on random clusters, seeds 1…N
 * (`POISE_ORACLE_INSTANCES`, default {@link ORACLE_INSTANCES}).
 *
 * - The full sweep (slow tier, `oracle-<k>.slow.test.ts`): every seed, split over shards so that
 *   vitest runs them on every core.
 * - The sample (fast tier, `oracle-sample.test.ts`): {@link ORACLE_SAMPLE} seeds spread evenly
 *   over the same range, so every run of `pnpm test` checks the planner against the exact
 *   oracle in a few seconds; the sweep checks them all.
 *
 * Both check, per instance (HiGHS questions limited by branch-and-bound nodes, not time, so that
 * the verdicts are the same on every machine; an undecided one is counted, never guessed):
 *
 * - feasibility agrees: an input the planner calls infeasible has no feasible MILP solution; a
 *   placement the planner returns satisfies the MILP's constraints with the planner's objective;
 * - no placement lies below the planner's lower bound;
 * - no placement is 1 % better than the planner's (objective within 1 % of the optimum);
 * - where the planner is optimal: no placement as good has fewer migrations, in ≥ 95 % of the
 *   decided cases (a rate: asserted over a shard of the sweep, only printed for the sample, where
 *   one miss in twenty would be noise).
 *
 * Prints the tally (`POISE_ORACLE_QUIET=1` silences it).
 */
import { expect } from 'vitest';
import type { Highs } from './oracle';
import { type OracleTally, runOracle } from './oracle-run';

/** Random instances over all shards by default. */
const ORACLE_INSTANCES = 2000;
/** Instances of the fast tier's sample. */
export const ORACLE_SAMPLE = 20;

function total(): number {
  const raw = process.env.POISE_ORACLE_INSTANCES;
  if (raw === undefined || raw === '') return ORACLE_INSTANCES;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`POISE_ORACLE_INSTANCES: expected a whole number ≥ 1, got '${raw}'`);
  return n;
}

/** Shard `shard` of `shards` (1-based) of the full sweep. */
export function oracleShard(highs: Highs, shard: number, shards: number): OracleTally {
  const all = total();
  const per = Math.ceil(all / shards);
  const from = (shard - 1) * per + 1;
  const to = Math.min(all, shard * per);
  const seeds = Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
  return checked(highs, `seeds ${from}-${to}`, seeds, true);
}

/** `count` seeds spread evenly over the sweep's range (the same seeds on every run). */
export function oracleSample(highs: Highs, count = ORACLE_SAMPLE): OracleTally {
  const all = total();
  const n = Math.min(count, all);
  const seeds = Array.from({ length: n }, (_, i) => 1 + Math.floor((i * all) / n));
  return checked(highs, `sample of ${n} seeds in 1-${all}`, seeds, false);
}

function checked(highs: Highs, label: string, seeds: readonly number[], rates: boolean): OracleTally {
  const started = process.cpuUsage();
  const tally = runOracle(highs, seeds);
  const cpu = process.cpuUsage(started);
  if (!process.env.POISE_ORACLE_QUIET) {
    console.log(
      `oracle ${label}: ${tally.instances} instances, ${tally.feasible} feasible, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s cpu; ${JSON.stringify(tally.counts)}`,
    );
  }
  for (const o of tally.aboveOnePercent) {
    console.log(
      `oracle seed ${o.seed}: the planner's ${o.objective} is ${(100 * (o.objective! / o.better! - 1)).toFixed(2)} % above a placement HiGHS found (${o.better})`,
    );
  }
  const c = tally.counts;
  // every instance within 1 % of the optimum (the seeds above it are printed above)
  expect(tally.aboveOnePercent.map((o) => o.seed)).toEqual([]);
  const movesDecided = (c['fewestMoves=true'] ?? 0) + (c['fewestMoves=false'] ?? 0);
  if (rates && movesDecided > 0) expect((c['fewestMoves=true'] ?? 0) / movesDecided).toBeGreaterThanOrEqual(0.95);
  // the planner's infeasibility is decided by HiGHS almost always (a feasibility MILP is quick)
  expect(c['feasibilityAgrees=undefined'] ?? 0).toBeLessThanOrEqual(Math.ceil(0.01 * tally.instances));
  return tally;
}
