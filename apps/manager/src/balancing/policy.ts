import {
  type BalanceCandidate,
  type BalanceContext,
  type BalanceEvaluator,
  type BalanceMethod,
  composePipeline,
  percentReasonFormat,
  type MigrationCandidate,
  type MotionOutcome,
  type NodeTelemetry,
  type Pipeline,
  PolicyError,
  PRESET_KEY,
  readCrs,
  type ScoredMigration,
} from '@poise/policy';
import { type PressureSettings, parsePressureSettings, pressureStages } from '@poise/policy-pressure';
import { parseStableSettings, type StableSettings, stableStages } from '@poise/policy-stable';
import { parsePlanSettings, type PlanSettings, planStages } from '@poise/policy-plan';
import { planInputFromSnapshot } from '@poise/plan';
import {
  type ContentionSettings,
  MIN_GAIN_KEY,
  contentionStages,
  parseContentionSettings,
} from '@poise/policy-contention';
import type { PolicyConfig, PolicySource } from '../config/load';
import { REFERENCE_POLICY_KEYS } from '../config/schema';
import { buildUsageModel, guestMemory, isUsableNode, type UsageModel } from './model';
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
   * One line per bad setting, naming the key (`policy.ha-auto-rebalance-backoff: invalid value
   * 'abc' (seconds, 0 to 3600), falling back to 0 (off)`); that stage is off, as the variant
   * packages decide.
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
  /** `ha-auto-rebalance-memhost`: the usage model takes the guests' host-side memory (`memhost`) when reported. */
  readonly memhost: boolean;
  /** `ha-auto-rebalance-check-migratable`: the round needs the guest configurations. */
  readonly checkMigratable: boolean;
  /** A pressure stage is on (`min-pressure-cpu` or `-mem` > 0): decisions read node PSI. */
  readonly readsPressure: boolean;
  readonly stable: StableSettings;
  readonly pressure: PressureSettings;
  readonly contention: ContentionSettings;
  /** `ha-auto-rebalance-plan`: the select stage takes the first step of a global plan. */
  readonly plan: PlanSettings;
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

function describeSettings(
  stable: StableSettings,
  pressure: PressureSettings,
  contention: ContentionSettings,
  planned: PlanSettings,
  preset: string,
): string {
  const on: string[] = [`preset ${preset}`];
  if (contention.objective !== 'imbalance') {
    on.push(`objective ${contention.objective}`);
    if (contention.minGainSeconds !== MIN_GAIN_KEY.off)
      on.push(`contention-min-gain ${contention.minGainSeconds} guest-seconds`);
  }
  if (planned.plan) on.push('plan-guided');
  if (stable.backoffSeconds > 0) on.push(`backoff ${stable.backoffSeconds} s`);
  if (stable.cooldownSeconds > 0) on.push(`cooldown ${stable.cooldownSeconds} s`);
  if (stable.minImprovementPoints > 0) on.push(`min-improvement ${stable.minImprovementPoints} pp`);
  if (stable.smoothingHalfLifeSeconds > 0) on.push(`smoothing ${stable.smoothingHalfLifeSeconds} s`);
  if (stable.costWeight > 0) on.push(`cost-weight ${stable.costWeight}`);
  if (stable.memhost) on.push('memhost');
  if (pressure.minPressureCpuPercent > 0) on.push(`min-pressure-cpu ${pressure.minPressureCpuPercent}%`);
  if (pressure.minPressureMemPercent > 0) on.push(`min-pressure-mem ${pressure.minPressureMemPercent}%`);
  if (pressure.minPressureCpuPercent > 0 || pressure.minPressureMemPercent > 0)
    on.push(`pressure-missing ${pressure.pressureMissing}`);
  if (pressure.checkMigratable) on.push('check-migratable');
  return on.length > 1 ? on.join(', ') : `${on[0]}: no variant stage`;
}

/** `threshold 30` for `ha-auto-rebalance-threshold: 30`. */
function shortKey(key: string, value: unknown): string {
  return `${key.replace(/^ha-auto-rebalance-/, '')} ${String(value)}`;
}

/** The keys in force grouped by where they come from, lowest layer first. */
export function describeSources(policy: PolicyConfig): string {
  const groups = new Map<PolicySource, string[]>();
  for (const layer of policy.layers) groups.set(layer.source, []);
  for (const [key, value] of policy.keys) groups.get(policy.origins.get(key)!)?.push(shortKey(key, value));
  const parts = [...groups]
    .filter(([, keys]) => keys.length > 0)
    .map(([source, keys]) => `from ${source.label}: ${keys.join(', ')}`);
  return `policy keys: ${parts.join('; ')}`;
}

/**
 * Builds the balancer pipeline from the `crs`-style policy keys, the way `@poise/policy`
 * documents it for a host: `readCrs` (the preset), `parseStableSettings` and
 * `parsePressureSettings` (each bad value a problem naming its key, that stage off), then
 * `composePipeline` with the reference keys in the pve-9.2 units (threshold and margin in
 * percent of the normalised imbalance, hence the division by 100, as `@poise/ha` does).
 * Never throws for a bad variant value; the reference keys are checked by the config schema.
 */
export function buildPolicy(policy: PolicyConfig, options: { holdMet?: boolean } = {}): BuiltPolicy {
  const ref = policy.reference;
  const raw: Record<string, string | number | boolean> = Object.create(null) as Record<
    string,
    string | number | boolean
  >;
  for (const [key, value] of policy.keys) if (!REFERENCE_POLICY_KEYS.includes(key)) raw[key] = value;
  // `reference` and `none` are poise-manager's words for no preset: every variant stage off unless set
  if (policy.preset !== 'recommended') delete raw[PRESET_KEY];
  const input = readCrs(raw);
  const stable = parseStableSettings(input);
  const pressure = parsePressureSettings(input);
  const contention = parseContentionSettings(input);
  const planned = parsePlanSettings(input);
  const problems = [
    ...input.problems,
    ...stable.problems,
    ...pressure.problems,
    ...contention.problems,
    ...planned.problems,
  ].map((p) => settingProblemLine(policy, p));
  const thresholdFraction = ref.thresholdPercent / 100;
  const reference = {
    threshold: thresholdFraction,
    holdRounds: options.holdMet ? 0 : ref.holdRounds,
    margin: ref.marginPercent / 100,
    method: ref.method,
  };
  let parts = [...stableStages(stable.settings), ...pressureStages(pressure.settings)];
  // one select stage per pipeline: the plan replaces the cost stage's choice when both are on (as @poise/ha composes it)
  if (planned.settings.plan)
    parts = [...parts.filter((p) => p.slot !== 'select'), ...planStages(planned.settings, { method: ref.method })];
  const pipeline = composePipeline(reference, [...parts, ...contentionStages(contention.settings, reference)]);
  return {
    pipeline,
    description:
      `${pipeline.stages.map((s) => s.name).join(' → ')}: ` +
      `threshold ${ref.thresholdPercent}%, hold ${ref.holdRounds} rounds, margin ${ref.marginPercent}%, method ${ref.method}; ` +
      describeSettings(stable.settings, pressure.settings, contention.settings, planned.settings, policy.preset),
    problems,
    sources: describeSources(policy),
    thresholdFraction,
    holdRounds: ref.holdRounds,
    holdCountedMet: options.holdMet === true,
    memhost: stable.settings.memhost,
    checkMigratable: pressure.settings.checkMigratable,
    readsPressure: pressure.settings.minPressureCpuPercent > 0 || pressure.settings.minPressureMemPercent > 0,
    stable: stable.settings,
    pressure: pressure.settings,
    contention: contention.settings,
    plan: planned.settings,
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
      if (!(err instanceof PolicyError) || err.code !== 'invalid-state') throw err;
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
  readonly model: UsageModel;
  /** The candidates, already restricted to the model (`restrictToModel`). */
  readonly candidates: readonly MigrationCandidate[];
  readonly motionInFlight: boolean;
  /** Outcomes of the daemon's motions not yet reported to the policy (each reported once). */
  readonly outcomes: readonly MotionOutcome[];
  /** Whether the model uses the guests' host-side memory (`ha-auto-rebalance-memhost`). */
  readonly memhost: boolean;
  /** Called when scoring throws (bad candidates): the round goes on with no scored migration. */
  readonly onScoreError: (err: unknown) => void;
}

function evaluator(usage: UsageModel['usage'], onScoreError: (err: unknown) => void): BalanceEvaluator {
  return {
    imbalance: () => usage.nodeImbalance(),
    score: (candidates: MigrationCandidate[], method: BalanceMethod, limit: number): ScoredMigration[] => {
      try {
        return usage.bestBalancingMigrations(candidates, method, limit);
      } catch (err) {
        onScoreError(err);
        return [];
      }
    },
  };
}

/**
 * The candidates with the facts the variant stages read: `source` (the node the bundle runs
 * on) and `transferBytes` (the members' memory in use: `memhost` when the model uses it and
 * the guest reports it, else `mem`).
 */
export function withMotionFacts(
  candidates: readonly MigrationCandidate[],
  snapshot: ClusterSnapshot,
  memhost: boolean,
): BalanceCandidate[] {
  const guests = new Map(snapshot.guests.map((g) => [g.sid, g]));
  return candidates.map((c) => {
    const members = c.resources.map((sid) => guests.get(sid));
    const leader = guests.get(c.leader);
    const bytes = members.every((g) => g !== undefined)
      ? members.reduce((sum, g) => sum + guestMemory(g, memhost), 0)
      : undefined;
    return { ...c, source: leader?.node, transferBytes: bytes };
  });
}

/**
 * The policy's view of a round (`@poise/policy`'s `BalanceContext`, every member filled):
 * - `imbalance()`, `score()`: the usage model of the measured stats;
 * - `candidates()`: with `source` and `transferBytes` (see {@link withMotionFacts});
 * - `nodes()`: each node of the model with its measured cpu (cores) and memory (bytes), the
 *   part its guests account for (`services*`, the values a migration moves) and its PSI
 *   (`undefined` when the node does not report it);
 * - `guests()`: each guest on a node of the model (the values the model moves with it);
 * - `adjust()`: a second usage model with the given node stats, built on its first use;
 * - `outcomes`: the daemon's motion outcomes not reported before (see `RoundInput`);
 * - `guestConfig()`, `sharedStorage()`: from the snapshot (`undefined` = unknown).
 * The imbalance is computed once, lazily (a gate that stops the round early never pays for
 * candidates or scoring).
 */
export function balanceContext(input: RoundInput): BalanceContext {
  const measured = evaluator(input.model.usage, input.onScoreError);
  let imbalance: number | undefined;
  const { snapshot, model } = input;
  return {
    now: input.now,
    motionInFlight: input.motionInFlight,
    outcomes: input.outcomes,
    imbalance: () => (imbalance ??= measured.imbalance()),
    score: (candidates, method, limit) => measured.score(candidates, method, limit),
    candidates: () => withMotionFacts(input.candidates, snapshot, input.memhost),
    nodes: (): NodeTelemetry[] => {
      const inModel = new Set(model.nodes);
      return snapshot.nodes
        .filter((n) => isUsableNode(n) && inModel.has(n.name))
        .map((n) => {
          const services = model.services.get(n.name) ?? { cpu: 0, mem: 0 };
          return {
            node: n.name,
            cpu: n.cpu,
            maxcpu: n.maxcpu,
            mem: n.mem,
            maxmem: n.maxmem,
            servicesCpu: services.cpu,
            servicesMem: services.mem,
            pressureCpu: n.pressure.cpuSome,
            pressureMem: n.pressure.memSome,
          };
        });
    },
    adjust: (nodes) => {
      let adjusted: BalanceEvaluator | undefined;
      const build = () =>
        (adjusted ??= evaluator(
          buildUsageModel(snapshot, {
            memhost: input.memhost,
            nodeUsage: new Map(nodes.map((n) => [n.node, { cpu: n.cpu, mem: n.mem }])),
          }).usage,
          input.onScoreError,
        ));
      return { imbalance: () => build().imbalance(), score: (c, m, l) => build().score(c, m, l) };
    },
    guests: () => {
      const inModel = new Set(model.nodes);
      return snapshot.guests
        .filter((g) => inModel.has(g.node))
        .map((g) => ({
          sid: g.sid,
          node: g.node,
          cpu: g.stats.cpu,
          maxcpu: g.stats.maxcpu,
          mem: guestMemory(g, input.memhost),
        }));
    },
    // the cluster as @poise/plan sees it (the plan-guided stage marks non-candidates unmovable itself)
    planInput: () =>
      planInputFromSnapshot(snapshot, { usage: snapshot.crs.ha === 'static' ? 'configured' : 'measured' }).input,
    guestConfig: (sid) => snapshot.guestConfigs?.get(sid),
    sharedStorage: (storage) => snapshot.storageShared?.get(storage),
    format: REASON_FORMAT,
  };
}
