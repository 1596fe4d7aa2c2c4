import { type FlagKeySpec, type PluginSettings, type StagePart, definePlugin } from '@poise/policy';
import { planGuidedSelect } from './plan-guided';

/** `ha-auto-rebalance-plan` (0/1): the balancer takes the first step of a global plan instead of the greedy best move. */
const PLAN_KEY: FlagKeySpec = {
  key: 'ha-auto-rebalance-plan',
  type: 'flag',
  off: false,
  recommended: false,
  description:
    'each round, the first step of a global placement plan (re-planned every round) instead of the best single move',
  why: 'off in the preset: it changes which moves the balancer makes (fewer, towards the placement with the lowest highest utilisation) and is new; the plan-guided-rebalance scenario shows it',
};

/** The key of each setting, by the field of {@link PlanSettings} it fills: the plug-in's keys. */
/** The plug-in's key specs, by setting name (what its settings type is derived from). */
export const PLAN_FIELDS = {
  /** Take the first step of a global plan (off: the greedy best move). */
  plan: PLAN_KEY,
} as const;

/**
 * The plan-guided settings (`plan: false` = off), typed from the key (`PluginSettings` of
 * `@poise/policy`). A host reads them through a `PolicyRegistry`.
 */
export type PlanSettings = PluginSettings<typeof PLAN_FIELDS>;

/** The precedence of `plan-guided` in the select slot: above the cost stage's (0), which it replaces when both are on. */
const PLAN_SELECT_PRECEDENCE = 1;

/**
 * The stage the settings turn on, in its slot, for `composePipeline`: `plan-guided` in the
 * select slot (it replaces `select-best`), planning with the reference's method, with
 * precedence {@link PLAN_SELECT_PRECEDENCE}: a select part of lower precedence, such as the cost
 * stage, is left out when the plan is on (there is one select stage per pipeline).
 */
function planStages(settings: PlanSettings, method: 'bruteforce' | 'topsis'): StagePart[] {
  return settings.plan
    ? [{ slot: 'select', order: 0, precedence: PLAN_SELECT_PRECEDENCE, stage: planGuidedSelect({ method }) }]
    : [];
}

/**
 * This package as a policy plug-in (see `PolicyPlugin` of `@poise/policy`): its key, the
 * `plan-guided` select stage it turns on (with the reference's method), and the whole cluster
 * (`planInput`) from the host. Register it in a `PolicyRegistry`, which reads the settings and
 * composes the pipeline; the HA core and poise-manager have it among their built-in plug-ins.
 */
export const planPlugin = definePlugin({
  name: 'plan',
  keys: PLAN_FIELDS,
  stages: (settings, { reference }) => planStages(settings, reference.method),
  needs: (settings) => ({ planInput: settings.plan }),
  describe: (settings) => (settings.plan ? ['plan-guided'] : []),
});
