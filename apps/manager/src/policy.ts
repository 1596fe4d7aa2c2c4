import { type BalanceContext, type MigrationCandidate, type Pipeline, referencePipeline, type ScoredMigration } from '@poise/policy';
import type { PolicyConfig } from './config/load';
import type { UsageModel } from './model';
import type { ClusterSnapshot } from './port';
import type { MotionOutcome } from './state';

/** The keys the reference pipeline reads; every other configured key waits for its stage. */
export const REFERENCE_POLICY_KEYS: readonly string[] = [
  'ha-auto-rebalance-hold-duration',
  'ha-auto-rebalance-margin',
  'ha-auto-rebalance-method',
  'ha-auto-rebalance-threshold',
];

/** A policy ready to run, with what the start-up line says about it. */
export interface BuiltPolicy {
  readonly pipeline: Pipeline;
  /** One line: the stages and their settings. */
  readonly description: string;
  /** Configured keys this build does not apply (named in the start-up and reload lines). */
  readonly unusedKeys: readonly string[];
  /** For the round line: the threshold as a fraction of the normalised imbalance, and the hold rounds. */
  readonly thresholdFraction: number;
  readonly holdRounds: number;
}

/**
 * Builds the balancer pipeline from the `crs`-style policy keys (pve-9.2 units: threshold and
 * margin in percent of the normalised imbalance, hence the division by 100).
 *
 * Integration seam: today the reference pipeline only (`@poise/policy` `referencePipeline`). At
 * integration this becomes the variant packages' settings parsers and pipeline builder
 * (`@poise/policy-stable`, `@poise/policy-pressure`: backoff, cooldown, dead band, smoothing,
 * pressure gate, migratability, cost, preset), which validate the other `ha-auto-rebalance-*`
 * keys; `unusedKeys` is then empty.
 */
export function buildPolicy(policy: PolicyConfig): BuiltPolicy {
  const ref = policy.reference;
  const thresholdFraction = ref.thresholdPercent / 100;
  const pipeline = referencePipeline({
    threshold: thresholdFraction,
    holdRounds: ref.holdRounds,
    margin: ref.marginPercent / 100,
    method: ref.method,
  });
  const unusedKeys = [...policy.keys.keys()].filter((k) => !REFERENCE_POLICY_KEYS.includes(k));
  return {
    pipeline,
    description:
      `reference pipeline (${pipeline.stages.map((s) => s.name).join(' → ')}): ` +
      `threshold ${ref.thresholdPercent}%, hold ${ref.holdRounds} rounds, margin ${ref.marginPercent}%, method ${ref.method}`,
    unusedKeys,
    thresholdFraction,
    holdRounds: ref.holdRounds,
  };
}

/** What a round hands to the policy. */
export interface RoundInput {
  /** Seconds (the daemon's clock). */
  readonly now: number;
  readonly snapshot: ClusterSnapshot;
  readonly model: UsageModel;
  readonly candidates: readonly MigrationCandidate[];
  readonly motionInFlight: boolean;
  /** Outcomes of the motions this daemon issued, oldest first (for the backoff stage). */
  readonly outcomes: readonly MotionOutcome[];
  /** Called when scoring throws (bad candidates): the round goes on with no scored migration. */
  readonly onScoreError: (err: unknown) => void;
}

/**
 * The policy's view of a round. The imbalance is computed once, lazily (a gate that stops the
 * round early never pays for candidates or scoring).
 *
 * Integration seam: the extended `BalanceContext` of `@poise/policy` adds node pressure
 * (`snapshot.nodes[].pressure`), motion outcomes (`input.outcomes`), move costs (guest memory)
 * and the adjusted evaluation; this function is where they are filled in from `RoundInput`,
 * which already carries all of them.
 */
export function balanceContext(input: RoundInput): BalanceContext {
  let imbalance: number | undefined;
  return {
    now: input.now,
    motionInFlight: input.motionInFlight,
    imbalance: () => (imbalance ??= input.model.usage.nodeImbalance()),
    candidates: () => [...input.candidates],
    score: (candidates, method, limit): ScoredMigration[] => {
      try {
        return input.model.usage.bestBalancingMigrations(candidates, method, limit);
      } catch (err) {
        input.onScoreError(err);
        return [];
      }
    },
  };
}
