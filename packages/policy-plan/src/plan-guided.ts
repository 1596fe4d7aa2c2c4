import { PlanError, planPlacement, type PlanInput, type PlannedMove } from '@poise/plan';
import {
  type BalanceCandidate,
  type BalanceMethod,
  PolicyError,
  type Stage,
  compareNames,
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
  /**
   * Seconds after a successful motion during which the stage does not move a guest back to the
   * node it left (default {@link PLAN_REVERSAL_SECONDS}); finite ≥ 0, 0 = no guard.
   */
  readonly reversalSeconds?: number;
}

/**
 * A plan is re-made every round on the cluster as measured. On a quiet cluster the measured
 * noise shifts the plan's target from one round to the next, and a plan that sent a guest away
 * last round can send it back the next: a planned balancer that followed each plan blindly would
 * oscillate (vm:110 between two nodes every round on an idle cluster). A guest is not moved back
 * to the node it left by a successful motion within this many seconds.
 */
export const PLAN_REVERSAL_SECONDS = 3600;

/** A guest that left `node` by a successful motion; not sent back there while `now < until`. */
interface PlanLeftEntry {
  readonly sid: string;
  readonly node: string;
  readonly until: number;
}

/** State of {@link planGuidedSelect}: the outcome watermark and the guests' recent departures (sorted by sid). */
export interface PlanGuidedState {
  readonly lastOutcomeAt: number | null;
  readonly left: readonly PlanLeftEntry[];
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
 * `plan-reversal`: every candidate motion of the first step would send a guest back to the node
 * it left by a successful motion less than `reversalSeconds` ago (see {@link PLAN_REVERSAL_SECONDS}).
 * State: the recent departures ({@link PlanGuidedState}), from the motion outcomes. Pure: the
 * planner has no clock and no randomness but its seed.
 */
export function planGuidedSelect(options: PlanGuidedOptions): Stage<PlanGuidedState> {
  if (options.method !== 'bruteforce' && options.method !== 'topsis') {
    throw new PolicyError('invalid-config', `unknown method '${String(options.method)}' (bruteforce|topsis)`);
  }
  const seed = options.seed ?? 1;
  const window = options.reversalSeconds ?? PLAN_REVERSAL_SECONDS;
  if (!Number.isFinite(window) || window < 0) {
    throw new PolicyError(
      'invalid-config',
      `plan-guided reversalSeconds must be a finite number ≥ 0, got '${String(window)}'`,
    );
  }
  const check = stateCheck('plan-guided');
  return {
    name: 'plan-guided',
    kind: 'select',
    initialState: () => ({ lastOutcomeAt: null, left: [] }),
    validateState: (value) => {
      const s = check.object(value, '');
      return {
        lastOutcomeAt: check.numberOrNull(s.lastOutcomeAt, 'lastOutcomeAt'),
        left: check.array(s.left, 'left').map((v, i) => {
          const e = check.object(v, `left.${i}`);
          return {
            sid: check.string(e.sid, `left.${i}.sid`),
            node: check.string(e.node, `left.${i}.node`),
            until: check.number(e.until, `left.${i}.until`),
          };
        }),
      };
    },
    observe: (facts, state) => {
      const fresh =
        state.lastOutcomeAt === null ? facts.outcomes : facts.outcomes.filter((o) => o.at > state.lastOutcomeAt!);
      const live = state.left.filter((e) => e.until > facts.now);
      if (fresh.length === 0 && live.length === state.left.length) return { state };
      let lastOutcomeAt = state.lastOutcomeAt;
      const left = new Map(live.map((e) => [e.sid, e]));
      for (const o of fresh) {
        if (lastOutcomeAt === null || o.at > lastOutcomeAt) lastOutcomeAt = o.at;
        if (!o.ok || window === 0 || o.at + window <= facts.now) continue;
        for (const sid of o.resources) left.set(sid, { sid, node: o.source, until: o.at + window });
      }
      return { state: { lastOutcomeAt, left: [...left.values()].sort((a, b) => compareNames(a.sid, b.sid)) } };
    },
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
      const leftAt = new Map(state.left.filter((e) => e.until > ctx.now).map((e) => [e.sid, e]));
      const reversal = (move: PlannedMove) => move.guests.find((sid) => leftAt.get(sid)?.node === move.target);
      const pick = firstCandidate(
        first.filter((m) => reversal(m) === undefined),
        candidates,
      );
      if (!pick && first.some((m) => reversal(m) !== undefined)) {
        const back = first
          .filter((m) => reversal(m) !== undefined)
          .map((m) => {
            const e = leftAt.get(reversal(m)!)!;
            return `${m.guests.join('+')} back to ${m.target} (left it, not sent back before ${e.until})`;
          });
        const shown = formatList(back);
        return {
          stop: `the plan's first step would reverse a recent motion: ${shown}`,
          code: 'plan-reversal',
          key: `plan-guided:plan-reversal:${shown}`,
          state,
        };
      }
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
