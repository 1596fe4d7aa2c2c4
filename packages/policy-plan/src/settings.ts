import {
  type CrsInput,
  type FlagKeySpec,
  type SettingProblem,
  type StagePart,
  definePlugin,
  readCrsKeys,
} from '@poise/policy';
import { planGuidedSelect } from './plan-guided';

/** `ha-auto-rebalance-plan` (0/1): the balancer takes the first step of a global plan instead of the greedy best move. */
export const PLAN_KEY: FlagKeySpec = {
  key: 'ha-auto-rebalance-plan',
  type: 'flag',
  off: false,
  recommended: false,
  description:
    'each round, the first step of a global placement plan (re-planned every round) instead of the best single move',
  why: 'off in the preset: it changes which moves the balancer makes (fewer, towards the placement with the lowest highest utilisation) and is new; the plan-guided-rebalance scenario shows it',
};

/** Every key this package reads. */
export const PLAN_KEYS = [PLAN_KEY] as const;

/** The plan-guided settings; `plan: false` = off. */
export interface PlanSettings {
  readonly plan: boolean;
}

/** Every stage of this package off. */
export const PLAN_OFF: PlanSettings = { plan: false };

/** Reads `ha-auto-rebalance-plan` from the `crs` section (see `readCrs` of `@poise/policy`); never throws. */
export function parsePlanSettings(input: CrsInput): { settings: PlanSettings; problems: SettingProblem[] } {
  return readCrsKeys(input, { plan: PLAN_KEY });
}

/** The precedence of `plan-guided` in the select slot: above the cost stage's (0), which it replaces when both are on. */
export const PLAN_SELECT_PRECEDENCE = 1;

/**
 * The stage the settings turn on, in its slot, for `composePipeline`: `plan-guided` in the
 * select slot (it replaces `select-best`), with precedence {@link PLAN_SELECT_PRECEDENCE}: a
 * select part of lower precedence, such as the cost stage, is left out when the plan is on
 * (there is one select stage per pipeline).
 */
export function planStages(
  settings: PlanSettings,
  options: { method: 'bruteforce' | 'topsis'; seed?: number },
): StagePart[] {
  return settings.plan
    ? [{ slot: 'select', order: 0, precedence: PLAN_SELECT_PRECEDENCE, stage: planGuidedSelect(options) }]
    : [];
}

/**
 * This package as a policy plug-in (see `PolicyPlugin` of `@poise/policy`): its key, the
 * `plan-guided` select stage it turns on ({@link planStages}, with the reference's method), and
 * the whole cluster (`planInput`) from the host.
 */
export const planPlugin = definePlugin({
  name: 'plan',
  keys: { plan: PLAN_KEY },
  stages: (settings, { reference }) => planStages(settings, { method: reference.method }),
  needs: (settings) => ({ planInput: settings.plan }),
  describe: (settings) => (settings.plan ? ['plan-guided'] : []),
});
