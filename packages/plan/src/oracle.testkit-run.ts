/**
 * The oracle comparison of one random instance (test support, not exported): the planner
 * against HiGHS on the same objective. Shared by the oracle tests (several files, so that
 * vitest runs them on every core) and the distribution script.
 */
import { type Highs, randomInstance, solveMilp } from './oracle.testkit';
import { planPlacement } from './planner';

/** The instance sizes the oracle covers: up to 6 nodes × 30 guests. */
export const ORACLE_SIZE = { maxNodes: 6, maxGuests: 30 } as const;
/** Seconds HiGHS may spend on one question (an undecided question is counted, never guessed). */
export const ORACLE_TIME_LIMIT = 3;

/** What the oracle found for one instance. */
export interface OracleOutcome {
  readonly seed: number;
  readonly feasible: boolean;
  /** HiGHS agrees about feasibility (`undefined`: undecided in the time limit). */
  readonly feasibilityAgrees: boolean | undefined;
  /** HiGHS evaluates the planner's placement to the planner's objective (and finds it feasible). */
  readonly placementChecks?: boolean;
  /** No placement is below the planner's lower bound (`undefined`: undecided). */
  readonly boundHolds?: boolean | undefined;
  /** No placement is 1 % better than the planner's (`undefined`: undecided). */
  readonly withinOnePercent?: boolean | undefined;
  /** No placement is better at all: the planner found an optimum (`undefined`: undecided). */
  readonly optimal?: boolean | undefined;
  /** At an optimum: no placement as good has fewer migrations (`undefined`: undecided). */
  readonly fewestMoves?: boolean | undefined;
  /** A better placement HiGHS found (objective), when there is one. */
  readonly better?: number;
  readonly objective?: number;
  readonly message?: string;
}

/** Runs the oracle questions for one seed. */
export function oracleCase(highs: Highs, seed: number, timeLimit = ORACLE_TIME_LIMIT): OracleOutcome {
  const { input, drain } = randomInstance(seed, ORACLE_SIZE);
  const plan = planPlacement(input, { drain });
  const decided = (status: string) => (status === 'unknown' ? undefined : status === 'infeasible');
  if (!plan.feasible) {
    const r = solveMilp(highs, input, drain, { feasibilityOnly: true, timeLimit });
    return { seed, feasible: false, feasibilityAgrees: decided(r.status), message: plan.reasons.join('; ') };
  }
  const value = plan.objective.value;
  const tol = 1e-6 * Math.max(1, value);
  const fixed = solveMilp(highs, input, drain, { fixed: plan.placement, timeLimit });
  const placementChecks = fixed.status === 'optimal' && Math.abs(fixed.value - value) <= tol;
  const bound = solveMilp(highs, input, drain, { below: plan.bound - tol, timeLimit });
  const one = solveMilp(highs, input, drain, { below: value / 1.01, timeLimit });
  const base = {
    seed,
    feasible: true,
    feasibilityAgrees: placementChecks,
    placementChecks,
    boundHolds: decided(bound.status),
    withinOnePercent: decided(one.status),
    objective: value,
  };
  if (one.status === 'optimal') return { ...base, better: one.value };
  const opt = solveMilp(highs, input, drain, { below: value - tol, timeLimit });
  if (opt.status !== 'infeasible') return { ...base, optimal: opt.status === 'unknown' ? undefined : false, ...(opt.status === 'optimal' ? { better: opt.value } : {}) };
  const moves = solveMilp(highs, input, drain, { below: value + tol, maxMoves: plan.objective.moves - 1, timeLimit });
  return { ...base, optimal: true, fewestMoves: decided(moves.status) };
}
