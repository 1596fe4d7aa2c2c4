import { PolicyError } from './errors';
import {
  hostCandidates,
  motionInFlightGate,
  relativeMarginAccept,
  selectBest,
  thresholdHoldGate,
  usageScorer,
} from './stages';
import type { BalanceContext, BalanceMethod, Decision, PipelineState, Plan, Stage, StageKind } from './types';

const KIND_ORDER: StageKind[] = ['gate', 'candidates', 'filter', 'score', 'select', 'accept'];

/** An ordered, validated list of stages. */
export class Pipeline {
  readonly stages: readonly Stage[];

  constructor(stages: readonly Stage[]) {
    const names = new Set<string>();
    let last = 0;
    for (const stage of stages) {
      if (names.has(stage.name)) throw new PolicyError('invalid-pipeline', `duplicate stage name '${stage.name}'`);
      names.add(stage.name);
      const rank = KIND_ORDER.indexOf(stage.kind);
      if (rank < 0) throw new PolicyError('invalid-pipeline', `stage '${stage.name}' has unknown kind '${stage.kind}'`);
      if (rank < last) {
        throw new PolicyError('invalid-pipeline', `stage '${stage.name}' (${stage.kind}) must come before the ${KIND_ORDER[last]} stages`);
      }
      last = rank;
    }
    for (const kind of ['candidates', 'score', 'select'] as const) {
      if (!stages.some((s) => s.kind === kind)) throw new PolicyError('invalid-pipeline', `pipeline has no '${kind}' stage`);
    }
    this.stages = stages;
  }

  initialState(): PipelineState {
    return Object.fromEntries(this.stages.map((s) => [s.name, s.initialState()]));
  }

  /** Runs one balancing round; returns the decision and the new state (the input is not mutated). */
  run(ctx: BalanceContext, state: PipelineState): { decision: Decision; state: PipelineState } {
    const next: Record<string, unknown> = { ...state };
    let plan: Plan = {};
    for (const stage of this.stages) {
      const before = stage.name in next ? next[stage.name] : stage.initialState();
      const out = stage.run(ctx, plan, before);
      next[stage.name] = out.state;
      if ('stop' in out) return { decision: { action: 'none', stage: stage.name, reason: out.stop }, state: next };
      plan = out.plan;
    }
    const selected = plan.selected;
    if (!selected) throw new PolicyError('invalid-pipeline', 'pipeline ended without a selected migration');
    return {
      decision: {
        action: 'move',
        migration: selected,
        imbalanceBefore: plan.imbalance ?? ctx.imbalance(),
        imbalanceAfter: selected.imbalance,
      },
      state: next,
    };
  }
}

/** The reference balancer's settings (`ha-auto-rebalance-*`), as fractions of the imbalance. */
export interface ReferenceBalancerConfig {
  threshold: number;
  holdRounds: number;
  margin: number;
  method: BalanceMethod;
}

/**
 * The reference balancer, stage by stage: skip while a motion is in flight → threshold with
 * hold rounds → candidates → score (bruteforce or TOPSIS, best one) → select → relative margin.
 */
export function referencePipeline(config: ReferenceBalancerConfig): Pipeline {
  return new Pipeline([
    motionInFlightGate(),
    thresholdHoldGate({ threshold: config.threshold, holdRounds: config.holdRounds }),
    hostCandidates(),
    usageScorer({ method: config.method, limit: 1 }),
    selectBest(),
    relativeMarginAccept({ margin: config.margin }),
  ]);
}
