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
export const ORACLE_TIME_LIMIT = 1;

/** Guests up to which the oracle also asks whether the planner is optimal and move-minimal. */
export const EXACT_QUESTION_GUESTS = 15;

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
  // optimality and move-count proofs are the expensive questions: asked on the smaller instances
  if (input.guests.length > EXACT_QUESTION_GUESTS) return base;
  const opt = solveMilp(highs, input, drain, { below: value - tol, timeLimit });
  if (opt.status !== 'infeasible') {
    return opt.status === 'optimal' ? { ...base, optimal: false, better: opt.value } : { ...base, optimal: undefined };
  }
  const moves = solveMilp(highs, input, drain, { below: value + tol, maxMoves: plan.objective.moves - 1, timeLimit });
  return { ...base, optimal: true, fewestMoves: decided(moves.status) };
}

/** `key` present with `undefined` means undecided; absent means not asked. */
export function asked(o: OracleOutcome, key: keyof OracleOutcome): boolean {
  return key in o;
}

/** Totals over a range of seeds. */
export interface OracleTally {
  readonly instances: number;
  readonly feasible: number;
  readonly counts: Readonly<Record<string, number>>;
  /** Outcomes that contradict the planner (must stay empty). */
  readonly failures: readonly OracleOutcome[];
}

/**
 * Runs {@link oracleCase} for seeds `from` … `to` (inclusive) and tallies each question's answers
 * (`withinOnePercent=true`, `optimal=undefined`, …).
 */
export function runOracle(highs: Highs, from: number, to: number, timeLimit = ORACLE_TIME_LIMIT): OracleTally {
  const counts: Record<string, number> = {};
  const failures: OracleOutcome[] = [];
  let feasible = 0;
  for (let seed = from; seed <= to; seed++) {
    const o = oracleCase(highs, seed, timeLimit);
    if (o.feasible) feasible++;
    for (const key of [
      'feasibilityAgrees',
      'placementChecks',
      'boundHolds',
      'withinOnePercent',
      'optimal',
      'fewestMoves',
    ] as const) {
      if (!(key in o)) continue;
      const name = `${key}=${String(o[key])}`;
      counts[name] = (counts[name] ?? 0) + 1;
    }
    if (
      o.feasibilityAgrees === false ||
      o.placementChecks === false ||
      o.boundHolds === false ||
      o.withinOnePercent === false
    )
      failures.push(o);
  }
  return { instances: to - from + 1, feasible, counts, failures };
}
