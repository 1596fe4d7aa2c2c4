import {
  type BalanceContext,
  type HostNeedsInForce,
  hasErrorCode,
  percentReasonFormat,
  type MigrationCandidate,
  type MotionOutcome,
  type Pipeline,
  PolicyError,
  type PolicySettings,
  PRESET_KEY,
  type ScoredMigration,
  usageContext,
} from '@poise/policy';
import { planInputFromSnapshot } from '@poise/plan';
import type { PolicyConfig, PolicySource } from '../config/load';
import { ManagerError } from '../errors';
import { REFERENCE_POLICY_KEYS } from '../config/schema';
import type { UsageModel } from './model';
import type { ClusterSnapshot } from '../cluster/port';

/**
 * How the policy's reasons and notices, and the daemon's own round lines, print imbalances and
 * improvements: percent and percentage points, the units of the policy keys
 * (`imbalance 27.4% at or below threshold 30.0%`, `improvement 18.4 pp`).
 */
export const REASON_FORMAT = percentReasonFormat();

/** A policy ready to run, with what the start-up line says about it. */
export interface BuiltPolicy {
  readonly pipeline: Pipeline;
  /** One line: the stages and their settings. */
  readonly description: string;
  /**
   * One line per setting that means nothing beside the others, naming the key
   * (`policy.ha-auto-rebalance-contention-min-gain: value 60 has no effect while the objective is
   * 'imbalance' …`): logged as a warning at start. A bad value is no such line: the config
   * refuses it at load (`<file>: policy.<key>: invalid value 'abc' (seconds, 0 to 3600)`), and
   * {@link buildPolicy} refuses one that got past it.
   */
  readonly problems: readonly string[];
  /**
   * Where the keys in force come from, one line (`policy keys: from poise-manager's defaults:
   * threshold 30, …; from the crs of '<case>/datacenter.cfg': hold-duration 6`).
   */
  readonly sources: string;
  /** For the round line: the threshold as a fraction of the normalised imbalance, and the hold rounds. */
  readonly thresholdFraction: number;
  readonly holdRounds: number;
  /** Built for `--once`: the hold counts as met (the pipeline holds 0 rounds), so one round answers. */
  readonly holdCountedMet: boolean;
  /**
   * What the plug-ins in force need from the round (`PolicyRegistry.needs`): `memhost` (the usage
   * model takes the guests' host-side memory when reported), `guestConfigs` (the snapshot reads
   * the guest configurations), `nodePressure` (decisions read node PSI: after a motion the round
   * waits for pressure from after it), `planInput` (the whole cluster for the plan).
   */
  readonly needs: HostNeedsInForce;
  /** Every plug-in's settings (`policy.registry`'s), as the variant packages read them. */
  readonly settings: PolicySettings;
}

/**
 * `datacenter.cfg: invalid value 'x' for 'crs.<key>' (…), falling back …` → `policy.<key>: invalid
 * value 'x' (…), falling back …`, the key named where it was set (`'<case>/datacenter.cfg':
 * crs.<key>` for a `--sim` case's).
 */
function settingProblemLine(policy: PolicyConfig, problem: { key: string; message: string }): string {
  const key = problem.key.replace(/^crs\./, '');
  const text = problem.message.replace(/^datacenter\.cfg: /, '').replace(` for '${problem.key}'`, '');
  return `${policy.origins.get(key)?.keyPath ?? 'policy.'}${key}: ${text}`;
}

/** `threshold 30` for `ha-auto-rebalance-threshold: 30`. */
function shortKey(key: string, value: unknown): string {
  return `${key.replace(/^ha-auto-rebalance-/, '')} ${String(value)}`;
}

/** The keys in force grouped by where they come from, lowest layer first. */
function describeSources(policy: PolicyConfig): string {
  const groups = new Map<PolicySource, string[]>();
  for (const layer of policy.layers) groups.set(layer.source, []);
  for (const [key, value] of policy.keys) groups.get(policy.origins.get(key)!)?.push(shortKey(key, value));
  const parts = [...groups]
    .filter(([, keys]) => keys.length > 0)
    .map(([source, keys]) => `from ${source.label}: ${keys.join(', ')}`);
  return `policy keys: ${parts.join('; ')}`;
}

/**
 * Builds the balancer pipeline from the `crs`-style policy keys through the policy registry in
 * force (`policy.registry`: the built-in plug-ins and those of `policy.plugins`), the way
 * `@poise/policy` documents it for a host: every plug-in's settings read from the keys, then the
 * pipeline with the reference keys in the pve-9.2 units (threshold and margin in percent of the
 * normalised imbalance, hence the division by 100, as `@poise/ha` does). A bad value is refused,
 * never read as off: the config schema refuses it at load (naming the file, the key and the
 * value) and this refuses one that got past it the same way; so is a balancer the plug-ins
 * cannot build (two objectives, a plug-in function that throws). Throws {@link ManagerError}
 * `invalid-config`.
 */
export function buildPolicy(policy: PolicyConfig, options: { holdMet?: boolean } = {}): BuiltPolicy {
  const ref = policy.reference;
  const registry = policy.registry;
  const raw: Record<string, string | number | boolean> = Object.create(null) as Record<
    string,
    string | number | boolean
  >;
  for (const [key, value] of policy.keys) if (!REFERENCE_POLICY_KEYS.includes(key)) raw[key] = value;
  // `reference` and `none` are poise-manager's words for no preset: every variant stage off unless set
  if (policy.preset !== 'recommended') delete raw[PRESET_KEY];
  const settings = registry.read(raw);
  const refused = Object.keys(raw).flatMap((key) => {
    const refusal = registry.refusal(key, raw[key]);
    if (refusal === undefined) return [];
    const source = policy.origins.get(key);
    const where =
      source?.kind === 'config' ? `${source.label.replace(/^'|'$/g, '')}: policy.` : (source?.keyPath ?? 'policy.');
    return [`${where}${key}: ${refusal}`];
  });
  if (refused.length > 0) throw new ManagerError('invalid-config', refused.join('\n'));
  const problems = settings.problems.map((p) => settingProblemLine(policy, p));
  const thresholdFraction = ref.thresholdPercent / 100;
  const reference = {
    threshold: thresholdFraction,
    holdRounds: options.holdMet ? 0 : ref.holdRounds,
    margin: ref.marginPercent / 100,
    method: ref.method,
  };
  let pipeline: Pipeline;
  try {
    pipeline = registry.pipeline(settings, reference);
  } catch (err) {
    if (!(err instanceof PolicyError)) throw err;
    throw new ManagerError('invalid-config', `policy: the balancer cannot be built: ${err.message}`, { cause: err });
  }
  const described = [`preset ${policy.preset}`, ...registry.describe(settings)];
  return {
    pipeline,
    description:
      `${pipeline.stages.map((s) => s.name).join(' → ')}: ` +
      `threshold ${ref.thresholdPercent}%, hold ${ref.holdRounds} rounds, margin ${ref.marginPercent}%, method ${ref.method}; ` +
      (described.length > 1 ? described.join(', ') : `${described[0]}: no variant stage`),
    problems,
    sources: describeSources(policy),
    thresholdFraction,
    holdRounds: ref.holdRounds,
    holdCountedMet: options.holdMet === true,
    needs: registry.needs(settings),
    settings,
  };
}

/** A stage state that `pipeline.restore` refused, named by stage. */
export interface StageStateProblem {
  readonly stage: string;
  readonly message: string;
}

/**
 * Checks a persisted pipeline state stage by stage (`pipeline.restore` of each stage's value
 * alone), so that every corrupt stage is named, not only the first. Returns the restored state
 * when all are valid.
 */
export function checkPipelineState(
  pipeline: Pipeline,
  state: unknown,
): { state: Readonly<Record<string, unknown>> } | { problems: StageStateProblem[] } {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    return { problems: [{ stage: '(all)', message: 'the pipeline state is not an object' }] };
  }
  const problems: StageStateProblem[] = [];
  for (const stage of pipeline.stages) {
    if (!Object.hasOwn(state, stage.name)) continue;
    try {
      pipeline.restore({ [stage.name]: (state as Record<string, unknown>)[stage.name] });
    } catch (err) {
      // by its code: a plug-in's stage throws a plain Error with it
      if (!hasErrorCode(err, 'invalid-state')) throw err;
      problems.push({ stage: stage.name, message: err.message });
    }
  }
  return problems.length > 0 ? { problems } : { state: pipeline.restore(state) };
}

/** What a round hands to the policy. */
export interface RoundInput {
  /** Seconds (the daemon's clock: epoch seconds on a real cluster). */
  readonly now: number;
  readonly snapshot: ClusterSnapshot;
  /** The round's usage model (memhost already applied when the policy needs it). */
  readonly model: UsageModel;
  /** The candidates, already restricted to the model (`restrictToModel`). */
  readonly candidates: readonly MigrationCandidate[];
  readonly motionInFlight: boolean;
  /** Outcomes of the daemon's motions not yet reported to the policy (each reported once). */
  readonly outcomes: readonly MotionOutcome[];
  /** Called when scoring throws (bad candidates): the round goes on with no scored migration. */
  readonly onScoreError: (err: unknown) => void;
}

/**
 * The policy's view of a round (`@poise/policy`'s `BalanceContext`, every member filled), the
 * usage model's members from the policy's host kit (`usageContext`), as the HA core builds
 * them:
 * - `imbalance()`, `score()`: the usage model of the measured stats;
 * - `candidates()`: with `source` and `transferBytes` (the members' memory in the model:
 *   `memhost` when the model uses it and the guest reports it, else `mem`);
 * - `nodes()`: each node of the model with its measured cpu (cores) and memory (bytes), the
 *   part its guests account for (`services*`, the values a migration moves) and its PSI
 *   (`undefined` when the node does not report it);
 * - `guests()`: each guest of the model (the values the model moves with it);
 * - `adjust()`: the model with the given node stats, built on its first use;
 * - `outcomes`: the daemon's motion outcomes not reported before (see `RoundInput`);
 * - `guestConfig()`, `sharedStorage()`, `planInput()`: from the snapshot (`undefined` = unknown).
 * The imbalance is computed once, lazily (a gate that stops the round early never pays for
 * candidates or scoring).
 */
export function balanceContext(input: RoundInput): BalanceContext {
  const { snapshot, model } = input;
  const pressure = new Map(snapshot.nodes.map((n) => [n.name, { cpu: n.pressure.cpuSome, mem: n.pressure.memSome }]));
  const kit = usageContext(model.usage, {
    pressure: (node) => pressure.get(node),
    guardScore: (score: () => ScoredMigration[]) => {
      try {
        return score();
      } catch (err) {
        input.onScoreError(err);
        return [];
      }
    },
  });
  let imbalance: number | undefined;
  return {
    now: input.now,
    motionInFlight: input.motionInFlight,
    outcomes: input.outcomes,
    imbalance: () => (imbalance ??= kit.imbalance()),
    score: kit.score,
    candidates: () => kit.describe(input.candidates),
    nodes: kit.nodes,
    guests: kit.guests,
    adjust: kit.adjust,
    // the cluster as @poise/plan sees it (the plan-guided stage marks non-candidates unmovable itself)
    planInput: () =>
      planInputFromSnapshot(snapshot, { usage: snapshot.crs.ha === 'static' ? 'configured' : 'measured' }).input,
    guestConfig: (sid) => snapshot.guestConfigs?.get(sid),
    ...(snapshot.migrationTasks ? { migrationTasks: () => snapshot.migrationTasks! } : {}),
    sharedStorage: (storage) => snapshot.storageShared?.get(storage),
    format: REASON_FORMAT,
  };
}
