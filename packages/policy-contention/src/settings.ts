import { CONTENTION_DEFAULTS, type ContentionOptions, MIGRATION_DEFAULTS } from '@poise/contention';
import {
  type ChoiceKeySpec,
  type FlagKeySpec,
  type NumberKeySpec,
  type PipelineObjective,
  type PluginSettings,
  PolicyError,
  type PolicyPlugin,
  type ReferenceBalancerConfig,
  type SettingProblem,
  definePlugin,
} from '@poise/policy';
import { checkedGateOptions, contentionGate } from './gate';
import { contentionHold } from './hold';
import { CONTENTION_SCORE_LIMIT, MIN_GAIN_SECONDS } from './limits';
import { contentionMarginAccept } from './margin';
import { contentionScorer } from './score';
import type { ContentionPace } from './pace';

/** What the balancer minimises: the reference's node imbalance, or the guests' predicted contention. */
export type RebalanceObjective = 'imbalance' | 'contention';

/** `ha-auto-rebalance-objective`: `imbalance` (the reference) or `contention`. */
export const OBJECTIVE_KEY: ChoiceKeySpec<RebalanceObjective> = {
  key: 'ha-auto-rebalance-objective',
  type: 'choice',
  choices: ['imbalance', 'contention'],
  off: 'imbalance',
  recommended: 'contention',
  description:
    "what the balancer minimises: 'imbalance' (the reference: node load spread) or 'contention' (the guests' predicted waiting for cpu and memory, learned from each node's PSI against its load)",
  why: 'chosen by measurement (issue 27, apps/sim/README.md, *Migrations priced*), migrations priced by the pre-copy model: on real PlanetLab traces it cuts guest contention-seconds 14-83 % below the reference balancer (45 % averaged over the five scenarios) where the imbalance preset makes no move, and 33-97 % below the imbalance preset on the contention corpus; on the existing corpus it moves as the imbalance preset does. While no node reports PSI it balances the imbalance as the reference does',
};

/**
 * `ha-auto-rebalance-contention-min-gain`: the guest-seconds a move must spare over the
 * horizon, net of its cost, before the node's hot spell has seen a move (see `ContentionPace`:
 * each motion of the spell doubles it). It matters only with the `contention` objective.
 */
export const MIN_GAIN_KEY: NumberKeySpec = {
  key: 'ha-auto-rebalance-contention-min-gain',
  type: 'number',
  unit: 'guest-seconds',
  min: 0,
  max: 86_400,
  off: MIN_GAIN_SECONDS,
  recommended: MIN_GAIN_SECONDS,
  description:
    "with 'contention': the guest-seconds a move must spare over the next 600 s, net of what the migration costs; doubled for each move of the node's hot spell. Higher: fewer moves, more waiting",
  why: "5 % of one guest's time over the horizon: below it the prediction's own error would decide. Raised to 120 on the lab's contention corpus the objective moves 42 % less (12.2 moves a run over the six scenarios against 20.9) and the guests wait 14 % more (still 26 % below the preset); at 480 it barely moves and gains nothing (apps/sim/README.md)",
};

/**
 * `ha-auto-rebalance-contention-cost-benefit`: with the `contention` objective, price each
 * move by the migration model of `@poise/contention` (pre-copy rounds, the transfer's cpu on
 * both nodes, the guest's slowdown; the link rate learned from the cluster's finished
 * migrations when the host reports them) and count its saving over each source node's own
 * hot spells (the median of its last spells once it has shown three, 600 s before), instead of
 * the fixed price and the fixed 600 s.
 */
export const COST_BENEFIT_KEY: FlagKeySpec = {
  key: 'ha-auto-rebalance-contention-cost-benefit',
  type: 'flag',
  off: false,
  recommended: false,
  description:
    "with 'contention': price each move as the cluster pays it (pre-copy migration model, the transfer's cpu on both nodes, the link rate learned from finished migrations) and count its saving over how long the source node's hot spells last",
  why: 'the fixed price of a migration (5 s + memory / 512 MiB/s, 10 % of the guest) ignores the transfer’s cpu on both nodes and busy guests that dirty memory; the fixed 600 s ignores that hot spells last minutes on one node and hours on another (apps/sim/README.md, issue 27)',
};

/**
 * The key of each setting, by the field of {@link ContentionSettings} it fills: the plug-in's
 * keys (see `PolicyPlugin.keys` of `@poise/policy`), in the order of the keys, problems and schema.
 */
/** The plug-in's key specs, by setting name (what its settings type is derived from). */
export const CONTENTION_FIELDS = {
  /** What the balancer minimises. */
  objective: OBJECTIVE_KEY,
  /** `ha-auto-rebalance-contention-min-gain`, guest-seconds (finite, ≥ 0). */
  minGainSeconds: MIN_GAIN_KEY,
  /** `ha-auto-rebalance-contention-cost-benefit`. */
  costBenefit: COST_BENEFIT_KEY,
} as const;

/**
 * The settings of this package, in the keys' units: one field per key, typed from the keys
 * (`PluginSettings` of `@poise/policy`). A host reads them through a `PolicyRegistry`
 * (`registry.settingsOf(registry.read(crs), contentionPlugin)`); with every key absent the
 * objective is `imbalance` (the reference's) and the minimum `MIN_GAIN_SECONDS`.
 */
export type ContentionSettings = PluginSettings<typeof CONTENTION_FIELDS>;

/** The minimum gain and cost–benefit are the contention objective's: set beside `imbalance` they do nothing (a problem naming each). */
function contentionChecks(settings: ContentionSettings, explicit: (key: string) => unknown): SettingProblem[] {
  if (settings.objective !== 'imbalance') return [];
  const problems: SettingProblem[] = [];
  for (const spec of [MIN_GAIN_KEY, COST_BENEFIT_KEY]) {
    const value = explicit(spec.key);
    if (value === undefined) continue;
    problems.push({
      key: `crs.${spec.key}`,
      value,
      message: `datacenter.cfg: value ${typeof value === 'string' ? `'${value}'` : JSON.stringify(value)} for 'crs.${spec.key}' has no effect while the objective is 'imbalance' (it applies with ${OBJECTIVE_KEY.key} contention)`,
    });
  }
  return problems;
}

/** Options of {@link createContentionPlugin} that are not datacenter.cfg keys. */
export interface ContentionPluginOptions {
  /** The contention model's horizon and migration costs (default `CONTENTION_DEFAULTS` of `@poise/contention`). */
  readonly model?: Partial<ContentionOptions>;
  /** How sparingly the objective moves (default `CONTENTION_PACE`). */
  readonly pace?: Partial<ContentionPace>;
}

/**
 * The objective the settings select, for `composePipeline` (the plug-in's `objective`): with
 * `contention`, guest contention
 * (the `contention` gate, `contention-hold` counting `reference.holdRounds`, `contention-score`
 * scoring with `reference.method` for the imbalance the log shows and keeping moves within
 * `reference.threshold`, and `contention-margin` applying the relative margin `reference.margin`,
 * a fraction, to the contention the move relieves); `undefined` with `imbalance` (the
 * reference's objective). The rounds the gate hands on without an objective (no node reports
 * PSI, or the only contention is a pressure rise the load does not explain) the pipeline judges
 * by the imbalance with the same reference settings (the registry passes the same to both).
 * Throws `PolicyError` `invalid-config` for a bad setting or option.
 */
function contentionObjective(
  settings: ContentionSettings,
  reference: ReferenceBalancerConfig,
  options: ContentionPluginOptions,
): PipelineObjective | undefined {
  if (settings.objective !== 'contention') {
    if (settings.objective !== 'imbalance')
      throw new PolicyError(
        'invalid-config',
        `contention setting 'objective' must be 'imbalance' or 'contention', got '${String(settings.objective)}'`,
      );
    return undefined;
  }
  const { minGainSeconds } = settings;
  const costBenefit = settings.costBenefit;
  const model = { ...CONTENTION_DEFAULTS, ...(costBenefit ? { migration: MIGRATION_DEFAULTS } : {}), ...options.model };
  return {
    name: 'contention',
    gate: contentionGate({ model, pace: options.pace ?? {}, costBenefit }),
    hold: contentionHold({ holdRounds: reference.holdRounds }),
    score: contentionScorer({
      method: reference.method,
      limit: CONTENTION_SCORE_LIMIT,
      threshold: reference.threshold,
      minGainSeconds,
    }),
    margin: contentionMarginAccept({ margin: reference.margin, minGainSeconds }),
    scoreLimit: CONTENTION_SCORE_LIMIT,
  };
}

/**
 * This package as a policy plug-in (see `PolicyPlugin` of `@poise/policy`), with options that
 * are not datacenter.cfg keys (the model's horizon and migration costs, the pace; a lab or a
 * test tunes them): its keys (`ha-auto-rebalance-objective`,
 * `ha-auto-rebalance-contention-min-gain`, `ha-auto-rebalance-contention-cost-benefit`) and, with
 * the `contention` objective, the objective of the pipeline. Register it in a `PolicyRegistry`
 * in place of {@link contentionPlugin} (its name is the same). Throws `PolicyError`
 * `invalid-config` for a bad option, naming the field (`contention pace factor must be a finite
 * number >= 1, got '0.5'`).
 */
export function createContentionPlugin(options: ContentionPluginOptions = {}): PolicyPlugin<typeof CONTENTION_FIELDS> {
  checkedGateOptions(options);
  return definePlugin({
    name: 'contention',
    keys: CONTENTION_FIELDS,
    objective: (settings, { reference }) => contentionObjective(settings, reference, options),
    // cost–benefit learns the migration link's rate from the cluster's finished migrations
    needs: (settings) => ({ migrationTasks: settings.objective === 'contention' && settings.costBenefit }),
    check: contentionChecks,
    describe: describeContention,
  });
}

/** `objective contention`, `contention-min-gain 120 guest-seconds`, `contention-cost-benefit`: the settings that are on. */
function describeContention(settings: ContentionSettings): string[] {
  return settings.objective === 'imbalance'
    ? []
    : [
        `objective ${settings.objective}`,
        ...(settings.minGainSeconds === MIN_GAIN_KEY.off
          ? []
          : [`contention-min-gain ${settings.minGainSeconds} guest-seconds`]),
        ...(settings.costBenefit ? ['contention-cost-benefit'] : []),
      ];
}

/**
 * This package as a policy plug-in with the default options ({@link createContentionPlugin}):
 * the one the HA core and poise-manager register among their built-in plug-ins.
 */
export const contentionPlugin = createContentionPlugin();
