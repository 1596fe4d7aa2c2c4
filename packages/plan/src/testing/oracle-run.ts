/**
 * The oracle comparison of one random instance (test support, not exported): the planner
 * against HiGHS on the same objective. Shared by the oracle tests (several files, so that
 * vitest runs them on every core) and the distribution script.
 */
import { type Highs, MILP_MAX_NODES, type MilpQuery, randomInstance, solveMilp } from './oracle';
import { planPlacement } from '../planner';

/** The instance sizes the oracle covers: up to 6 nodes × 30 guests. */
export const ORACLE_SIZE = { maxNodes: 6, maxGuests: 30 } as const;
/**
 * Branch-and-bound nodes HiGHS may process per question: a deterministic limit on work (an
 * undecided question is counted, never guessed), so that every verdict is the same on every
 * machine, however fast or loaded.
 */
const ORACLE_MAX_NODES = MILP_MAX_NODES;

/** Guests up to which the oracle also asks whether the planner is optimal and move-minimal. */
const EXACT_QUESTION_GUESTS = 15;

/** What the oracle found for one instance. */
interface OracleOutcome {
  readonly seed: number;
  readonly feasible: boolean;
  /** HiGHS agrees about feasibility (`undefined`: undecided within the node limit). */
  readonly feasibilityAgrees: boolean | undefined;
  /** HiGHS evaluates the planner's placement to the planner's objective (and finds it feasible). */
  readonly placementChecks?: boolean;
  /** No placement is below the planner's lower bound (`undefined`: undecided). */
  readonly boundHolds?: boolean | undefined;
  /** No placement is 1 % better than the planner's (`undefined`: undecided). */
  readonly withinOnePercent?: boolean | undefined;
  /** Asked when a placement 1 % better exists: none is 2 % better (`undefined`: undecided). */
  readonly withinTwoPercent?: boolean | undefined;
  /** No placement is better at all: the planner found an optimum (`undefined`: undecided). */
  readonly optimal?: boolean | undefined;
  /** At an optimum: no placement as good has fewer migrations (`undefined`: undecided). */
  readonly fewestMoves?: boolean | undefined;
  /** A better placement HiGHS found (objective), when there is one. */
  readonly better?: number;
  readonly objective?: number;
  readonly message?: string;
}

/**
 * Runs the oracle questions for one seed. Each question is whether a solution exists (of the
 * feasibility MILP, below a value, with fewer migrations), so HiGHS stops at the first one it
 * finds; on instances of up to {@link EXACT_QUESTION_GUESTS} guests optimality is asked first
 * (no placement better at all implies none 1 % better).
 */
function oracleCase(highs: Highs, seed: number, maxNodes = ORACLE_MAX_NODES): OracleOutcome {
  const { input, drain } = randomInstance(seed, ORACLE_SIZE);
  const plan = planPlacement(input, { drain });
  const decided = (status: string) => (status === 'unknown' ? undefined : status === 'infeasible');
  const exists = (query: Omit<MilpQuery, 'maxNodes' | 'anySolution'>) =>
    solveMilp(highs, input, drain, { ...query, maxNodes, anySolution: true });
  if (!plan.feasible) {
    const r = exists({ feasibilityOnly: true });
    return { seed, feasible: false, feasibilityAgrees: decided(r.status), message: plan.reasons.join('; ') };
  }
  const value = plan.objective.value;
  const tol = 1e-6 * Math.max(1, value);
  const fixed = solveMilp(highs, input, drain, { fixed: plan.placement, maxNodes });
  const placementChecks = fixed.status === 'optimal' && Math.abs(fixed.value - value) <= tol;
  const bound = exists({ below: plan.bound - tol });
  const base = {
    seed,
    feasible: true,
    feasibilityAgrees: placementChecks,
    placementChecks,
    boundHolds: decided(bound.status),
    objective: value,
  };
  const withinOnePercent = (): OracleOutcome => {
    const one = exists({ below: value / 1.01 });
    const found = one.status === 'solution' || one.status === 'optimal';
    return {
      ...base,
      withinOnePercent: decided(one.status),
      ...(found ? { better: one.value, withinTwoPercent: decided(exists({ below: value / 1.02 }).status) } : {}),
    };
  };
  // optimality and move-count proofs are the expensive questions: asked on the smaller instances
  if (input.guests.length > EXACT_QUESTION_GUESTS) return withinOnePercent();
  const opt = exists({ below: value - tol });
  if (opt.status !== 'infeasible') {
    const within = withinOnePercent();
    return opt.status === 'unknown'
      ? { ...within, optimal: undefined }
      : { ...within, optimal: false, better: within.better ?? opt.value };
  }
  const moves = exists({ below: value + tol, maxMoves: plan.objective.moves - 1 });
  return { ...base, withinOnePercent: true, optimal: true, fewestMoves: decided(moves.status) };
}

/** Totals over a range of seeds. */
export interface OracleTally {
  readonly instances: number;
  readonly feasible: number;
  readonly counts: Readonly<Record<string, number>>;
  /** Outcomes that contradict the planner (must stay empty): feasibility, the placement's value, the bound, 2 %. */
  readonly failures: readonly OracleOutcome[];
  /** Instances where a placement more than 1 % better exists (the planner's misses: must stay empty too). */
  readonly aboveOnePercent: readonly OracleOutcome[];
}

/**
 * Runs {@link oracleCase} for each seed and tallies each question's answers
 * (`withinOnePercent=true`, `optimal=undefined`, …).
 */
export function runOracle(highs: Highs, seeds: readonly number[], maxNodes = ORACLE_MAX_NODES): OracleTally {
  const counts: Record<string, number> = {};
  const failures: OracleOutcome[] = [];
  const aboveOnePercent: OracleOutcome[] = [];
  let feasible = 0;
  for (const seed of seeds) {
    const o = oracleCase(highs, seed, maxNodes);
    if (o.feasible) feasible++;
    for (const key of [
      'feasibilityAgrees',
      'placementChecks',
      'boundHolds',
      'withinOnePercent',
      'withinTwoPercent',
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
      o.withinTwoPercent === false
    )
      failures.push(o);
    if (o.withinOnePercent === false) aboveOnePercent.push(o);
  }
  return { instances: seeds.length, feasible, counts, failures, aboveOnePercent };
}
