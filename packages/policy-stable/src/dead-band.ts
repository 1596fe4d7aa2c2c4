import { PolicyError, type Stage, evaluatorOf, reasonFormatOf, selectedOf, stateCheck } from '@poise/policy';

/**
 * An absolute dead band on top of the relative margin (name `min-improvement`, an accept
 * stage): the selected move must lower the imbalance by at least `minImprovement`, i.e.
 * `before − after ≥ minImprovement`, in the imbalance's own unit (a fraction: 5 percentage
 * points = 0.05). Otherwise the round stops with code `below-min-improvement`, e.g.
 * `improvement 0.02 below min-improvement 0.05` (in the host's units, `BalanceContext.format`:
 * `2.0 pp below min-improvement 5.0 pp`). `minImprovement` is a finite number ≥ 0. When the
 * round minimises another objective than the imbalance (`plan.objective`), the dead band does
 * not apply: that objective's own accept stage judges the gain.
 */
export function minImprovementAccept(options: { minImprovement: number }): Stage<null> {
  const min = options.minImprovement;
  if (!Number.isFinite(min) || min < 0)
    throw new PolicyError('invalid-config', `minImprovement must be a finite number >= 0, got '${min}'`);
  const check = stateCheck('min-improvement');
  return {
    name: 'min-improvement',
    kind: 'accept',
    initialState: () => null,
    validateState: (value) => check.none(value),
    run: (ctx, plan, state) => {
      if (plan.objective) return { plan, state };
      const before = plan.imbalance ?? evaluatorOf(ctx, plan).imbalance();
      const improvement = before - selectedOf(plan, 'min-improvement').imbalance;
      if (improvement >= min) return { plan, state };
      const format = reasonFormatOf(ctx);
      const shown = format.value('improvement', improvement, min);
      return {
        stop: `improvement ${shown} below min-improvement ${format.bound('improvement', min)}`,
        code: 'below-min-improvement',
        state,
      };
    },
  };
}
