import { PolicyError, type Stage, stateCheck } from '@poise/policy';
import { contentionObjectiveOf } from './objective';
import { settledAt } from './pace';

/** State of {@link contentionHold}: consecutive rounds with contention. */
export interface ContentionHoldState {
  readonly sustainedRounds: number;
}

/**
 * The hold rounds of the contention objective (name `contention-hold`, the objective's `hold`:
 * in its rounds it counts where `threshold-hold`, whose imbalance threshold the objective does
 * not use, would).
 * Counts the rounds that reach it (the `contention` gate let them through: guests wait, not
 * every node is saturated) and stops quietly while fewer than `holdRounds` (code `holding`,
 * `guest contention for 1 of 3 rounds`); when the count reaches `holdRounds` it starts again
 * and the round goes on (0 or 1 = at once). A round an earlier gate stops as not qualifying
 * (`breaksStreak`: no contention, every node saturated, no pressure) starts the count again;
 * a continued series (`plan.continueSeries`, after a failed motion) does not wait again.
 * Within the pace's `settleSeconds` after the last motion landed it does not count (stop
 * `settling`, quiet, e.g. `contention: the move at 3700 shows in the pressure from 3760`): the
 * rounds that decide the next move see the nodes' PSI after the last one.
 * Needs the `contention` gate before it. `holdRounds` is an integer ≥ 0. A round the gate hands
 * on without an objective (no node reports PSI, or the only contention is a rise the load does
 * not explain) is the imbalance's: the pipeline runs `threshold-hold` in its place, with the
 * same counter (`{ sustainedRounds }`, the reference's `HoldState`).
 */
export function contentionHold(options: { holdRounds: number }): Stage<ContentionHoldState> {
  if (!Number.isInteger(options.holdRounds) || options.holdRounds < 0) {
    throw new PolicyError(
      'invalid-config',
      `contention holdRounds must be a non-negative integer, got '${options.holdRounds}'`,
    );
  }
  const check = stateCheck('contention-hold');
  return {
    name: 'contention-hold',
    kind: 'gate',
    initialState: () => ({ sustainedRounds: 0 }),
    validateState: (value) => ({
      sustainedRounds: check.integer(check.object(value, '').sustainedRounds, 'sustainedRounds'),
    }),
    breakStreak: (state) => (state.sustainedRounds === 0 ? state : { sustainedRounds: 0 }),
    run: (ctx, plan, state) => {
      const objective = contentionObjectiveOf(plan, 'contention-hold');
      if (plan.continueSeries) return { plan, state };
      const settled = settledAt(objective.motions, ctx.now, objective.pace);
      if (settled !== null && ctx.now < settled) {
        return {
          stop: `contention: the move at ${settled - objective.pace.settleSeconds} shows in the pressure from ${settled}`,
          code: 'settling',
          quiet: true,
          state: { sustainedRounds: 0 },
        };
      }
      const rounds = state.sustainedRounds + 1;
      if (rounds < options.holdRounds) {
        return {
          stop: `guest contention for ${rounds} of ${options.holdRounds} rounds`,
          code: 'holding',
          quiet: true,
          state: { sustainedRounds: rounds },
        };
      }
      return { plan, state: { sustainedRounds: 0 } };
    },
  };
}
