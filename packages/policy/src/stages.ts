import type { BalanceMethod, Stage } from './types';
import { PolicyError } from './errors';

/**
 * Never balance while a motion is queued or running; leaves every other stage's state alone
 * (the reference does not touch its hold counter then).
 */
export function motionInFlightGate(): Stage<null> {
  return {
    name: 'motion-in-flight',
    kind: 'gate',
    initialState: () => null,
    run: (ctx, plan, state) => (ctx.motionInFlight ? { stop: 'a motion is queued or running', state } : { plan, state }),
  };
}

/** State of {@link thresholdHoldGate}: consecutive rounds above the threshold. */
export interface HoldState {
  readonly sustainedRounds: number;
}

/**
 * Acts only after the imbalance stayed above `threshold` for `holdRounds` consecutive rounds:
 * at or below the threshold the count resets; above it the count grows, and when it reaches
 * `holdRounds` it resets and the round goes on (0 = at once).
 */
export function thresholdHoldGate(options: { threshold: number; holdRounds: number }): Stage<HoldState> {
  if (!Number.isFinite(options.threshold)) throw new PolicyError('invalid-config', `threshold must be a finite number, got '${options.threshold}'`);
  if (!Number.isInteger(options.holdRounds) || options.holdRounds < 0) {
    throw new PolicyError('invalid-config', `holdRounds must be a non-negative integer, got '${options.holdRounds}'`);
  }
  return {
    name: 'threshold-hold',
    kind: 'gate',
    initialState: () => ({ sustainedRounds: 0 }),
    run: (ctx, plan, state) => {
      const imbalance = ctx.imbalance();
      if (imbalance <= options.threshold) {
        return { stop: `imbalance ${imbalance} at or below threshold ${options.threshold}`, state: { sustainedRounds: 0 } };
      }
      const rounds = state.sustainedRounds + 1;
      if (rounds < options.holdRounds) {
        return { stop: `imbalance above threshold for ${rounds} of ${options.holdRounds} rounds`, state: { sustainedRounds: rounds } };
      }
      return { plan: { ...plan, imbalance }, state: { sustainedRounds: 0 } };
    },
  };
}

/** Collects the movable bundles and their targets from the host. */
export function hostCandidates(): Stage<null> {
  return {
    name: 'candidates',
    kind: 'candidates',
    initialState: () => null,
    run: (ctx, plan, state) => {
      const candidates = ctx.candidates();
      return candidates.length === 0 ? { stop: 'no migration candidates', state } : { plan: { ...plan, candidates }, state };
    },
  };
}

/** Scores the candidates with the usage model (bruteforce or TOPSIS), best first. */
export function usageScorer(options: { method: BalanceMethod; limit?: number }): Stage<null> {
  if (options.method !== 'bruteforce' && options.method !== 'topsis') {
    throw new PolicyError('invalid-config', `unknown method '${String(options.method)}' (bruteforce|topsis)`);
  }
  const limit = options.limit ?? 1;
  return {
    name: `score-${options.method}`,
    kind: 'score',
    initialState: () => null,
    run: (ctx, plan, state) => {
      const scored = ctx.score(plan.candidates ?? [], options.method, limit);
      return scored.length === 0 ? { stop: 'no scored migration', state } : { plan: { ...plan, scored }, state };
    },
  };
}

/** Takes the best-ranked migration. */
export function selectBest(): Stage<null> {
  return {
    name: 'select-best',
    kind: 'select',
    initialState: () => null,
    run: (_ctx, plan, state) => {
      const selected = plan.scored?.[0];
      return selected ? { plan: { ...plan, selected }, state } : { stop: 'nothing to select', state };
    },
  };
}

/**
 * Accepts the selected move only if it improves the imbalance by at least `margin`, relative to
 * the current imbalance: `(before - after) / before >= margin`.
 */
export function relativeMarginAccept(options: { margin: number }): Stage<null> {
  if (!Number.isFinite(options.margin)) throw new PolicyError('invalid-config', `margin must be a finite number, got '${options.margin}'`);
  return {
    name: 'relative-margin',
    kind: 'accept',
    initialState: () => null,
    run: (ctx, plan, state) => {
      const before = plan.imbalance ?? ctx.imbalance();
      const after = plan.selected!.imbalance;
      const relative = (before - after) / before;
      return relative < options.margin
        ? { stop: `relative improvement ${relative} below margin ${options.margin}`, state }
        : { plan: { ...plan, imbalance: before }, state };
    },
  };
}
