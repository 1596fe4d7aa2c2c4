/**
 * One shard of the oracle tests (test support): `POISE_ORACLE_INSTANCES` random clusters in all
 * (default {@link ORACLE_INSTANCES}), seeds 1…N split over the shards. Each shard checks, per
 * instance (HiGHS questions limited by branch-and-bound nodes, not time, so that the verdicts are
 * the same on every machine; an undecided one is counted, never guessed):
 *
 * - feasibility agrees: an input the planner calls infeasible has no feasible MILP solution; a
 *   placement the planner returns satisfies the MILP's constraints with the planner's objective;
 * - no placement lies below the planner's lower bound;
 * - no placement is 1 % better than the planner's (objective within 1 % of the optimum);
 * - where the planner is optimal: no placement as good has fewer migrations, in ≥ 95 % of the
 *   decided cases.
 *
 * Prints the tally (`POISE_ORACLE_QUIET=1` silences it).
 */
import { expect } from 'vitest';
import type { Highs } from './oracle.testkit';
import { type OracleTally, runOracle } from './oracle.testkit-run';

/** Random instances over all shards by default. */
export const ORACLE_INSTANCES = 2000;

export function oracleShard(highs: Highs, shard: number, shards: number): OracleTally {
  const total = Number(process.env.POISE_ORACLE_INSTANCES ?? ORACLE_INSTANCES);
  const per = Math.ceil(total / shards);
  const from = (shard - 1) * per + 1;
  const to = Math.min(total, shard * per);
  const started = process.cpuUsage();
  const tally = runOracle(highs, from, to);
  const cpu = process.cpuUsage(started);
  if (!process.env.POISE_ORACLE_QUIET) {
    console.log(
      `oracle seeds ${from}-${to}: ${tally.instances} instances, ${tally.feasible} feasible, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s cpu; ${JSON.stringify(tally.counts)}`,
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
  if (movesDecided > 0) expect((c['fewestMoves=true'] ?? 0) / movesDecided).toBeGreaterThanOrEqual(0.95);
  // the planner's infeasibility is decided by HiGHS almost always (a feasibility MILP is quick)
  expect(c['feasibilityAgrees=undefined'] ?? 0).toBeLessThanOrEqual(Math.ceil(0.01 * tally.instances));
  return tally;
}
