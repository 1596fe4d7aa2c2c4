import type { PolicyRegistry, StageError } from '@poise/policy';

/**
 * The policy stage failures of a simulation (`StageError` of `@poise/policy`: a stage that threw,
 * returned a result of the wrong shape or kept state that is not plain JSON). The HA core's
 * manager logs such an error in the case log (`got unexpected error - plug-in '…': stage '…'
 * failed in round …`) and carries on, as the reference does with any error of a round; the
 * commands learn of it here, to say so and exit 1 (a run whose balancer failed measures nothing).
 */
export interface StageFailures {
  /** `registry` whose pipelines report to this watch: the one to run the case with. */
  readonly registry: PolicyRegistry;
  /** Every failure seen, in order. */
  readonly errors: readonly StageError[];
  /**
   * `undefined` when no stage failed; else one line: how many rounds failed and the first
   * failure's message (it names the plug-in, the stage, the round and what was wrong).
   */
  message(): string | undefined;
}

/** Watches the stage failures of the pipelines of `registry` (see {@link StageFailures}). */
export function watchStageFailures(registry: PolicyRegistry): StageFailures {
  const errors: StageError[] = [];
  const watched = registry.reporting((err) => errors.push(err));
  return {
    registry: watched,
    errors,
    message: () => {
      const first = errors[0];
      if (first === undefined) return undefined;
      const n = errors.length;
      return `a policy stage failed in ${n} ${n === 1 ? 'round' : 'rounds'} of the balancer; the first: ${first.message}`;
    },
  };
}
