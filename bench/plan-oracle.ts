/**
 * The planner against the exact optimum (the distribution in `@poise/plan`'s README): for the
 * oracle tests' random instances `--from` … `--to` (default 1 … 400), HiGHS solves the MILP to
 * optimality (at most `--max-nodes` branch-and-bound nodes each, default 100,000: a limit on work,
 * so the table is the same on every machine; an instance it does not finish is counted as
 * undecided), the planner plans, and the ratio planner / optimum is tallied, with the move
 * count at equal objective. Slow (minutes): the MILP of a max objective is hard for branch and
 * bound, which is why the CI tests ask HiGHS cheaper questions. Run:
 * `pnpm tsx --conditions=poise-source bench/plan-oracle.ts [--from 1 --to 400]`.
 */
import process from 'node:process';

import { loadHighs, randomInstance, solveMilp } from '../packages/plan/src/testing/oracle';
import { ORACLE_SIZE } from '../packages/plan/src/testing/oracle-run';
import { planPlacement } from '../packages/plan/src/index';

const argv = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const from = option('from', 1);
const to = option('to', 400);
const maxNodes = option('max-nodes', 100_000);

const highs = await loadHighs();
const ratios: number[] = [];
let undecided = 0;
let infeasible = 0;
let mismatches = 0;
let equal = 0;
let fewerOrEqualMoves = 0;
for (let seed = from; seed <= to; seed++) {
  const { input, drain } = randomInstance(seed, ORACLE_SIZE);
  const exact = solveMilp(highs, input, drain, { maxNodes });
  const plan = planPlacement(input, { drain });
  if (exact.status === 'unknown') {
    undecided++;
    continue;
  }
  if ((exact.status === 'optimal') !== plan.feasible) {
    mismatches++;
    console.error(`seed ${seed}: feasibility differs (MILP ${exact.status}, planner ${plan.feasible})`);
    continue;
  }
  if (exact.status !== 'optimal' || !plan.feasible) {
    infeasible++;
    continue;
  }
  const ratio = plan.objective.value / exact.value;
  ratios.push(ratio);
  if (Math.abs(ratio - 1) <= 1e-6) {
    equal++;
    if (plan.objective.moves <= exact.moves) fewerOrEqualMoves++;
  }
}
ratios.sort((a, b) => a - b);
const q = (f: number) => ((ratios[Math.min(ratios.length - 1, Math.floor(f * ratios.length))]! - 1) * 100).toFixed(3);
const share = (limit: number) => ratios.filter((r) => r <= 1 + limit + 1e-9).length;
console.log(
  `seeds ${from}-${to}: ${to - from + 1} instances, ${undecided} undecided by HiGHS in ${maxNodes} nodes, ${infeasible} infeasible (both agree), ${mismatches} feasibility mismatches, ${ratios.length} feasible`,
);
console.log('| planner above the optimum | instances |');
console.log('| --- | --- |');
console.log(`| 0 (optimal, within 1e-6) | ${share(1e-6)} |`);
console.log(`| ≤ 0.1 % | ${share(0.001)} |`);
console.log(`| ≤ 1 % | ${share(0.01)} |`);
console.log(`| > 1 % | ${ratios.length - share(0.01)} |`);
console.log(`median ${q(0.5)} %, 90th percentile ${q(0.9)} %, 99th ${q(0.99)} %, worst ${q(1)} %`);
console.log(
  `at equal objective (${equal} instances) the planner's migrations ≤ the optimum's in ${fewerOrEqualMoves} (${((100 * fewerOrEqualMoves) / Math.max(1, equal)).toFixed(1)} %)`,
);
