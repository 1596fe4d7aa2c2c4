import { type CrsInput, type FlagKeySpec, type SettingProblem, type StagePart, readCrsKeys } from '@poise/policy';
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

/**
 * The stage the settings turn on, in its slot, for `composePipeline`: `plan-guided` in the
 * select slot (it replaces `select-best`; a host that also has a select part, such as the cost
 * stage, drops that one when the plan is on: there is one select stage per pipeline).
 */
export function planStages(
  settings: PlanSettings,
  options: { method: 'bruteforce' | 'topsis'; seed?: number },
): StagePart[] {
  return settings.plan ? [{ slot: 'select', order: 0, stage: planGuidedSelect(options) }] : [];
}
