import type { BalanceContext, BalanceEvaluator, BalanceMethod, Plan, Stage } from './types';
import { FRACTION_REASON_FORMAT, type ReasonFormat } from './explain';
import { PolicyError } from './errors';
import { stateCheck } from './state';

/**
 * The view a stage evaluates on: the adjusted one when an earlier gate set it (smoothing),
 * else the context's measured one.
 */
export function evaluatorOf(ctx: BalanceContext, plan: Plan): BalanceEvaluator {
  return plan.evaluator ?? ctx;
}

/**
 * How the stage's reasons print imbalances and improvements: the host's format
 * ({@link BalanceContext.format}), else fractions (`FRACTION_REASON_FORMAT`).
 */
export function reasonFormatOf(ctx: BalanceContext): ReasonFormat {
  return ctx.format ?? FRACTION_REASON_FORMAT;
}

/** A stateless stage's state check: the value must be `null`. */
function noState(name: string): (value: unknown) => null {
  const check = stateCheck(name);
  return (value) => check.none(value);
}

/**
 * Never balance while a motion is queued or running; leaves every other stage's state alone
 * (the reference does not touch its hold counter then). Stop code `motion-in-flight`.
 */
export function motionInFlightGate(): Stage<null> {
  return {
    name: 'motion-in-flight',
    kind: 'gate',
    initialState: () => null,
    validateState: noState('motion-in-flight'),
    run: (ctx, plan, state) =>
      ctx.motionInFlight ? { stop: 'a motion is queued or running', code: 'motion-in-flight', state } : { plan, state },
  };
}

/** State of {@link thresholdHoldGate}: consecutive rounds above the threshold. */
export interface HoldState {
  readonly sustainedRounds: number;
}

/**
 * Acts only after the imbalance stayed above `threshold` for `holdRounds` consecutive rounds:
 * at or below the threshold the count resets (code `below-threshold`); above it the count
 * grows (code `holding`, a quiet stop, while it is below `holdRounds`), and when it reaches `holdRounds` it
 * resets and the round goes on (0 or 1 = at once).
 *
 * Variants: when an earlier gate continues a rebalancing series (`plan.continueSeries`), the
 * threshold is still checked but the hold rounds are not waited again (the count is left as
 * it is, i.e. 0 after the firing round). When an earlier gate stops a round as not
 * qualifying (`breaksStreak`), the count resets, as at or below the threshold. Options:
 * `threshold` a finite number ≥ 0 (a fraction of the imbalance, which is never negative: a
 * negative threshold would let a perfectly balanced cluster through), `holdRounds` an integer
 * from 0 to 2^53−1.
 */
export function thresholdHoldGate(options: { threshold: number; holdRounds: number }): Stage<HoldState> {
  if (typeof options.threshold !== 'number' || !(options.threshold >= 0 && options.threshold < Infinity)) {
    throw new PolicyError(
      'invalid-config',
      `threshold must be a finite number >= 0, got '${String(options.threshold)}'`,
    );
  }
  if (!Number.isSafeInteger(options.holdRounds) || options.holdRounds < 0) {
    throw new PolicyError(
      'invalid-config',
      `holdRounds must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}, got '${String(options.holdRounds)}'`,
    );
  }
  const check = stateCheck('threshold-hold');
  return {
    name: 'threshold-hold',
    kind: 'gate',
    initialState: () => ({ sustainedRounds: 0 }),
    validateState: (value) => ({
      sustainedRounds: check.integer(check.object(value, '').sustainedRounds, 'sustainedRounds'),
    }),
    breakStreak: () => ({ sustainedRounds: 0 }),
    run: (ctx, plan, state) => {
      const imbalance = evaluatorOf(ctx, plan).imbalance();
      if (imbalance <= options.threshold) {
        const format = reasonFormatOf(ctx);
        return {
          stop: `imbalance ${format.value('imbalance', imbalance, options.threshold)} at or below threshold ${format.bound('imbalance', options.threshold)}`,
          code: 'below-threshold',
          state: { sustainedRounds: 0 },
        };
      }
      if (plan.continueSeries) return { plan: { ...plan, imbalance }, state };
      const rounds = state.sustainedRounds + 1;
      if (rounds < options.holdRounds) {
        return {
          stop: `imbalance above threshold for ${rounds} of ${options.holdRounds} rounds`,
          code: 'holding',
          quiet: true,
          state: { sustainedRounds: rounds },
        };
      }
      return { plan: { ...plan, imbalance }, state: { sustainedRounds: 0 } };
    },
  };
}

/** Collects the movable bundles and their targets from the host. Stop code `no-candidates`. */
export function hostCandidates(): Stage<null> {
  return {
    name: 'candidates',
    kind: 'candidates',
    initialState: () => null,
    validateState: noState('candidates'),
    run: (ctx, plan, state) => {
      const candidates = ctx.candidates();
      return candidates.length === 0
        ? { stop: 'no migration candidates', code: 'no-candidates', state }
        : { plan: { ...plan, candidates }, state };
    },
  };
}

/** Validates a scoring limit: an integer ≥ 1. */
function checkLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1)
    throw new PolicyError('invalid-config', `limit must be an integer >= 1, got '${limit}'`);
  return limit;
}

/**
 * Scores the candidates with the usage model (bruteforce or TOPSIS), best first, on the
 * adjusted view when there is one. `limit` (default 1, the reference's) is an integer ≥ 1.
 * Stop code `nothing-scored`.
 */
export function usageScorer(options: { method: BalanceMethod; limit?: number }): Stage<null> {
  if (options.method !== 'bruteforce' && options.method !== 'topsis') {
    throw new PolicyError('invalid-config', `unknown method '${String(options.method)}' (bruteforce|topsis)`);
  }
  const limit = checkLimit(options.limit ?? 1);
  const name = `score-${options.method}`;
  return {
    name,
    kind: 'score',
    initialState: () => null,
    validateState: noState(name),
    run: (ctx, plan, state) => {
      const scored = evaluatorOf(ctx, plan).score(plan.candidates ?? [], options.method, limit);
      return scored.length === 0
        ? { stop: 'no scored migration', code: 'nothing-scored', state }
        : { plan: { ...plan, scored }, state };
    },
  };
}

/** Takes the best-ranked migration. Stop code `nothing-selected`. */
export function selectBest(): Stage<null> {
  return {
    name: 'select-best',
    kind: 'select',
    initialState: () => null,
    validateState: noState('select-best'),
    run: (_ctx, plan, state) => {
      const selected = plan.scored?.[0];
      return selected
        ? { plan: { ...plan, selected }, state }
        : { stop: 'nothing to select', code: 'nothing-selected', state };
    },
  };
}

/** The selected migration; a broken pipeline (an accept stage without a selection) throws. */
export function selectedOf(plan: Plan, stage: string) {
  if (!plan.selected) throw new PolicyError('invalid-pipeline', `stage '${stage}' ran without a selected migration`);
  return plan.selected;
}

/**
 * Accepts the selected move only if it improves the imbalance by at least `margin`, relative to
 * the current imbalance: `(before - after) / before >= margin` (code `below-margin`). When the
 * relative improvement is not a number (before = 0: `0 / 0`) the round stops with code
 * `invalid-improvement`, never moves. `margin` is a finite number ≥ 0 (a fraction; a negative
 * one would accept moves that make the imbalance worse).
 */
export function relativeMarginAccept(options: { margin: number }): Stage<null> {
  if (typeof options.margin !== 'number' || !(options.margin >= 0 && options.margin < Infinity)) {
    throw new PolicyError('invalid-config', `margin must be a finite number >= 0, got '${String(options.margin)}'`);
  }
  return {
    name: 'relative-margin',
    kind: 'accept',
    initialState: () => null,
    validateState: noState('relative-margin'),
    run: (ctx, plan, state) => {
      const before = plan.imbalance ?? evaluatorOf(ctx, plan).imbalance();
      const after = selectedOf(plan, 'relative-margin').imbalance;
      const relative = (before - after) / before;
      const format = reasonFormatOf(ctx);
      if (Number.isNaN(relative)) {
        const from = format.value('imbalance', before);
        return {
          stop: `relative improvement undefined (imbalance ${from} to ${format.value('imbalance', after)})`,
          code: 'invalid-improvement',
          state,
        };
      }
      if (relative >= options.margin) return { plan: { ...plan, imbalance: before }, state };
      const shown = format.value('relative-improvement', relative, options.margin);
      return {
        stop: `relative improvement ${shown} below margin ${format.bound('relative-improvement', options.margin)}`,
        code: 'below-margin',
        state,
      };
    },
  };
}
