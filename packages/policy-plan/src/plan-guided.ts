import { PlanError, planPlacement, type PlanInput, type PlannedMove } from '@poise/plan';
import {
  type BalanceCandidate,
  type BalanceMethod,
  PolicyError,
  type Stage,
  evaluatorOf,
  formatList,
  invalidInput,
  missingContext,
  stateCheck,
} from '@poise/policy';

/** Options of {@link planGuidedSelect}. */
export interface PlanGuidedOptions {
  /** How the selected move's imbalance after is scored for the accept stages (the pipeline's method). */
  readonly method: BalanceMethod;
  /** Seed of the planner's search (default 1): the same cluster gives the same plan. */
  readonly seed?: number;
}

const REASON_GUESTS = 'not a balancing candidate this round';

/**
 * The plan-guided select stage (name `plan-guided`, kind `select`): instead of the scorer's best
 * single move, the first step of a global plan (`@poise/plan`'s `planPlacement`), re-planned
 * every round on the host's `ctx.planInput()`:
 *
 * 1. guests that are not in a candidate bundle this round (filtered by the earlier stages:
 *    cooldown, backoff, migratability, or not movable at all) cannot move in the plan;
 * 2. the plan's target is the placement with the lowest objective (highest cpu and memory
 *    utilisation plus the cost of the migrations); its first step lists the motions that can
 *    run now safely;
 * 3. the first motion of that step that is a candidate (the whole bundle, to one of its
 *    targets) is selected, scored by the host's evaluator so the accept stages (relative margin,
 *    dead band) judge it like any other move. A notice names it and the plan's figures.
 *
 * Stops: `plan-reached` (the current placement is the plan's target: nothing is worth a
 * migration), `plan-infeasible` (the plan's first reason), `plan-step-not-candidate` (no motion
 * of the first step is a candidate), `nothing-scored`. An invalid `planInput` stops the round
 * with `invalid-input`; a host without `planInput` is a broken pipeline (`invalid-context`).
 * Stateless (state `null`). Pure: the planner has no clock and no randomness but its seed.
 */
export function planGuidedSelect(options: PlanGuidedOptions): Stage<null> {
  if (options.method !== 'bruteforce' && options.method !== 'topsis') {
    throw new PolicyError('invalid-config', `unknown method '${String(options.method)}' (bruteforce|topsis)`);
  }
  const seed = options.seed ?? 1;
  const check = stateCheck('plan-guided');
  return {
    name: 'plan-guided',
    kind: 'select',
    initialState: () => null,
    validateState: (value) => check.none(value),
    run: (ctx, plan, state) => {
      if (!ctx.planInput) throw missingContext('plan-guided', 'planInput');
      const candidates = plan.candidates ?? [];
      const raw = ctx.planInput() as PlanInput;
      const movable = new Set(candidates.flatMap((c) => c.resources));
      let input: PlanInput;
      try {
        input = {
          ...raw,
          guests: raw.guests.map((g) => (movable.has(g.id) ? g : { ...g, migratable: false, reason: REASON_GUESTS })),
        };
      } catch (err) {
        throw invalidInput(
          `plan input must have a 'guests' array: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      let result;
      try {
        result = planPlacement(input, { seed });
      } catch (err) {
        if (err instanceof PlanError) throw invalidInput(`plan input: ${err.message}`);
        throw err;
      }
      if (!result.feasible) {
        return {
          stop: `plan: ${result.reasons[0]}`,
          code: 'plan-infeasible',
          key: `plan-guided:plan-infeasible:${result.reasons[0]}`,
          state,
        };
      }
      const figures = `objective ${result.current.value.toFixed(4)} → ${result.objective.value.toFixed(4)}, bound ${result.bound.toFixed(4)}`;
      if (result.steps.length === 0) {
        return {
          stop: `the plan's target is the current placement (${figures})`,
          code: 'plan-reached',
          key: 'plan-guided:plan-reached',
          state,
        };
      }
      const first = result.steps[0]!;
      const pick = firstCandidate(first, candidates);
      if (!pick) {
        const shown = formatList(first.map((m) => `${m.guests.join('+')} to ${m.target}`));
        return {
          stop: `the plan's first step (${shown}) is not among the balancer's candidates`,
          code: 'plan-step-not-candidate',
          key: `plan-guided:plan-step-not-candidate:${shown}`,
          state,
        };
      }
      const { candidate, move } = pick;
      const scored = evaluatorOf(ctx, plan).score(
        [{ leader: candidate.leader, resources: candidate.resources, targets: [move.target] }],
        options.method,
        1,
      );
      const selected = scored[0];
      if (!selected) return { stop: 'no scored migration', code: 'nothing-scored', state };
      const moves = result.steps.reduce((n, s) => n + s.length, 0);
      const notice = {
        code: 'plan-step',
        severity: 'info' as const,
        message: `plan: ${candidate.resources.join('+')} to ${move.target} (step 1 of ${result.steps.length}, ${moves} motion${moves === 1 ? '' : 's'}; ${figures})`,
      };
      return { plan: { ...plan, selected }, state, notices: [notice] };
    },
  };
}

/** The first motion of the step whose guests are exactly a candidate bundle going to one of its targets. */
function firstCandidate(
  step: readonly PlannedMove[],
  candidates: readonly BalanceCandidate[],
): { candidate: BalanceCandidate; move: PlannedMove } | undefined {
  for (const move of step) {
    if (move.kind === 'recover') continue;
    const candidate = candidates.find(
      (c) => c.resources.length === move.guests.length && move.guests.every((g) => c.resources.includes(g)),
    );
    if (
      candidate &&
      candidate.targets.includes(move.target) &&
      (candidate.source === undefined || candidate.source === move.source)
    )
      return { candidate, move };
  }
  return undefined;
}
