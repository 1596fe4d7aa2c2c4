import { PolicyError } from './errors';
import { checkOutcomes, isReasonFormat, roundContext } from './round';
import { showValue } from './state';
import {
  evaluatorOf,
  hostCandidates,
  motionInFlightGate,
  relativeMarginAccept,
  selectBest,
  thresholdHoldGate,
  usageScorer,
} from './stages';
import type {
  BalanceContext,
  BalanceMethod,
  Decision,
  Notice,
  NoticeInit,
  PipelineState,
  Plan,
  Stage,
  StageKind,
  StageStop,
  StopDecision,
} from './types';

const KIND_ORDER: StageKind[] = ['gate', 'candidates', 'filter', 'score', 'select', 'accept'];

/** The stage name of decisions about the context itself (an invalid `now` or `motionInFlight`). */
export const PIPELINE_STAGE = 'pipeline';

/** An ordered, validated list of stages. */
export class Pipeline {
  readonly stages: readonly Stage[];

  /**
   * Checks the stages: unique non-empty names, known kinds in the order gate < candidates < filter <
   * score < select < accept, at least one `candidates`, `score` and `select` stage. Throws
   * `PolicyError` `invalid-pipeline`.
   */
  constructor(stages: readonly Stage[]) {
    const names = new Set<string>();
    let last = 0;
    for (const stage of stages) {
      if (typeof stage.name !== 'string' || stage.name === '')
        throw new PolicyError(
          'invalid-pipeline',
          `stage name must be a non-empty string, got ${showValue(stage.name)}`,
        );
      if (stage.name === PIPELINE_STAGE)
        throw new PolicyError('invalid-pipeline', `stage name '${PIPELINE_STAGE}' is reserved`);
      if (names.has(stage.name)) throw new PolicyError('invalid-pipeline', `duplicate stage name '${stage.name}'`);
      names.add(stage.name);
      const rank = KIND_ORDER.indexOf(stage.kind);
      if (rank < 0) throw new PolicyError('invalid-pipeline', `stage '${stage.name}' has unknown kind '${stage.kind}'`);
      if (rank < last) {
        throw new PolicyError(
          'invalid-pipeline',
          `stage '${stage.name}' (${stage.kind}) must come before the ${KIND_ORDER[last]} stages`,
        );
      }
      last = rank;
    }
    for (const kind of ['candidates', 'score', 'select'] as const) {
      if (!stages.some((s) => s.kind === kind))
        throw new PolicyError('invalid-pipeline', `pipeline has no '${kind}' stage`);
    }
    this.stages = stages;
  }

  initialState(): PipelineState {
    return Object.fromEntries(this.stages.map((s) => [s.name, s.initialState()]));
  }

  /**
   * Checks a restored (e.g. persisted, `JSON.parse`d) pipeline state and returns it with every
   * stage's state validated (`Stage.validateState`) and missing ones filled with their initial
   * state. States of names no stage has are kept untouched (e.g. from an older pipeline).
   * Throws `PolicyError` `invalid-state` naming the stage and field. `run` does the same at
   * the start of every round.
   */
  restore(state: unknown): PipelineState {
    if (typeof state !== 'object' || state === null || Array.isArray(state)) {
      throw new PolicyError('invalid-state', `pipeline state must be an object, got ${showValue(state)}`);
    }
    const next: Record<string, unknown> = { ...(state as Record<string, unknown>) };
    for (const stage of this.stages) {
      const value = Object.hasOwn(next, stage.name) ? next[stage.name] : undefined;
      next[stage.name] =
        value === undefined ? stage.initialState() : stage.validateState ? stage.validateState(value) : value;
    }
    return next;
  }

  /**
   * Runs one balancing round; returns the decision and the new state (the input is not
   * mutated). Order: validate the state (throws `invalid-state`), check `now`,
   * `motionInFlight` and `format` (else a stop of stage `pipeline`, code `invalid-input`), check the
   * reported outcomes (invalid ones dropped with a notice), let every stage `observe`, then
   * run the stages until one stops or the last one passes.
   */
  run(ctx: BalanceContext, state: PipelineState): { decision: Decision; state: PipelineState } {
    const restored = this.restore(state);
    const notices: Notice[] = [];
    const collect = (stage: string, list: readonly NoticeInit[] | undefined) => {
      if (list) for (const n of list) notices.push({ stage, code: n.code, severity: n.severity, message: n.message });
    };
    const stopped = (stage: string, stop: Omit<StageStop<unknown>, 'state'>): StopDecision => {
      const code = stop.code ?? 'stopped';
      return {
        action: 'none',
        stage,
        code,
        reason: stop.stop,
        key: stop.key ?? `${stage}:${code}`,
        quiet: stop.quiet ?? false,
        notices,
      };
    };

    if (typeof ctx.now !== 'number' || !Number.isFinite(ctx.now)) {
      return {
        decision: stopped(PIPELINE_STAGE, {
          stop: `ctx.now must be a finite number, got ${showValue(ctx.now)}`,
          code: 'invalid-input',
        }),
        state: restored,
      };
    }
    if (typeof ctx.motionInFlight !== 'boolean') {
      const stop = `ctx.motionInFlight must be a boolean, got ${showValue(ctx.motionInFlight)}`;
      return { decision: stopped(PIPELINE_STAGE, { stop, code: 'invalid-input' }), state: restored };
    }
    if (ctx.format !== undefined && !isReasonFormat(ctx.format)) {
      const stop = `ctx.format must be an object with value() and bound() functions, got ${showValue(ctx.format)}`;
      return { decision: stopped(PIPELINE_STAGE, { stop, code: 'invalid-input' }), state: restored };
    }
    const reported = checkOutcomes(ctx.outcomes, ctx.now);
    collect(PIPELINE_STAGE, reported.notices);

    const next: Record<string, unknown> = { ...restored };
    const facts = { now: ctx.now, outcomes: reported.outcomes };
    for (const stage of this.stages) {
      if (!stage.observe) continue;
      const seen = stage.observe(facts, next[stage.name]);
      next[stage.name] = seen.state;
      collect(stage.name, seen.notices);
    }

    const round = roundContext(ctx, reported.outcomes);
    let plan: Plan = {};
    for (let i = 0; i < this.stages.length; i++) {
      const stage = this.stages[i]!;
      let out;
      try {
        out = stage.run(round, plan, next[stage.name]);
      } catch (err) {
        if (err instanceof PolicyError && err.code === 'invalid-input') {
          return { decision: stopped(stage.name, { stop: err.message, code: 'invalid-input' }), state: next };
        }
        throw err;
      }
      next[stage.name] = out.state;
      collect(stage.name, out.notices);
      if ('stop' in out) {
        if (out.breaksStreak) {
          for (const later of this.stages.slice(i + 1))
            if (later.breakStreak) next[later.name] = later.breakStreak(next[later.name]);
        }
        return { decision: stopped(stage.name, out), state: next };
      }
      plan = out.plan;
    }
    const selected = plan.selected;
    if (!selected) throw new PolicyError('invalid-pipeline', 'pipeline ended without a selected migration');
    const candidate = plan.candidates?.find((c) => c.leader === selected.sid);
    return {
      decision: {
        action: 'move',
        migration: selected,
        resources: candidate ? [...candidate.resources] : [selected.sid],
        imbalanceBefore: plan.imbalance ?? evaluatorOf(round, plan).imbalance(),
        imbalanceAfter: selected.imbalance,
        notices,
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
 * Where a variant stage goes in a composed pipeline: `gate`, `filter`, `select` and `accept`
 * add stages of that kind; `hold`, `score` and `margin` replace a reference stage
 * (`threshold-hold` by a gate, `score-<method>` by a score stage, `relative-margin` by an
 * accept stage), as an objective other than the imbalance does. `select` also replaces
 * `select-best`.
 */
export type StageSlot = 'gate' | 'filter' | 'select' | 'accept' | 'hold' | 'score' | 'margin';

/** The kind of stage each slot takes. */
const SLOT_KIND: Readonly<Record<StageSlot, StageKind>> = {
  gate: 'gate',
  filter: 'filter',
  select: 'select',
  accept: 'accept',
  hold: 'gate',
  score: 'score',
  margin: 'accept',
};

/**
 * A variant stage and its place: `slot` (whose kind the stage must have, see {@link StageSlot})
 * and `order` within the slot (ascending; the variant packages document theirs). `scoreLimit`
 * asks the reference scorer for more than its single best migration (the largest request
 * wins); a stage in the `score` slot has its own limit.
 */
export interface StagePart {
  readonly slot: StageSlot;
  readonly order: number;
  readonly stage: Stage;
  readonly scoreLimit?: number;
}

/**
 * The balancer: the reference stages with variant stages in their slots, in this order:
 *
 * 1. `motion-in-flight` — first: nothing else is looked at while a motion is in flight;
 * 2. slot `gate` (e.g. smoothing 10, backoff-series 20, pressure 30) — before the threshold,
 *    so an adjusted imbalance is what the threshold judges, a continued series skips the hold,
 *    and a round without pressure never counts towards the hold;
 * 3. `threshold-hold`, then `candidates`;
 * 4. slot `filter` (pressure-source 10, cooldown 20, backoff 30, migratable 40) — cheap and
 *    decisive first; the host's guest configurations are read only for survivors;
 * 5. `score-<method>` with limit max(1, scoreLimit of the parts), or slot `score`;
 * 6. slot `select` (at most one part, e.g. cost) or `select-best`;
 * 7. `relative-margin` or slot `margin`, then slot `accept` (min-improvement 10).
 *
 * `threshold-hold` is step 3 unless a part takes slot `hold` (e.g. `contention-hold` of
 * `@poise/policy-contention`, which counts the hold rounds without the imbalance threshold). The
 * slots `hold`, `score`, `select` and `margin` take at most one part each. With no parts this
 * is exactly {@link referencePipeline}. Throws `PolicyError` `invalid-pipeline` for a part in
 * the wrong slot, two parts in a replacing slot or a non-finite order, and `invalid-config`
 * for a bad reference setting or score limit.
 */
export function composePipeline(reference: ReferenceBalancerConfig, parts: readonly StagePart[] = []): Pipeline {
  const bySlot = (slot: StageSlot) =>
    parts
      .map((part, index) => ({ part, index }))
      .filter(({ part }) => part.slot === slot)
      .sort((a, b) => a.part.order - b.part.order || a.index - b.index)
      .map(({ part }) => part.stage);
  let scoreLimit = 1;
  for (const part of parts) {
    if (!Object.hasOwn(SLOT_KIND, part.slot)) {
      throw new PolicyError('invalid-pipeline', `stage '${part.stage.name}' has unknown slot '${String(part.slot)}'`);
    }
    if (part.stage.kind !== SLOT_KIND[part.slot]) {
      throw new PolicyError(
        'invalid-pipeline',
        `stage '${part.stage.name}' (${part.stage.kind}) cannot go in the '${part.slot}' slot`,
      );
    }
    if (!Number.isFinite(part.order))
      throw new PolicyError('invalid-pipeline', `stage '${part.stage.name}' has a non-finite order '${part.order}'`);
    if (part.scoreLimit !== undefined) {
      if (!Number.isInteger(part.scoreLimit) || part.scoreLimit < 1) {
        throw new PolicyError(
          'invalid-config',
          `stage '${part.stage.name}' asks for score limit '${part.scoreLimit}' (an integer >= 1)`,
        );
      }
      scoreLimit = Math.max(scoreLimit, part.scoreLimit);
    }
  }
  /** The one part of a replacing slot, if any. */
  const replacing = (slot: 'hold' | 'score' | 'select' | 'margin'): Stage | undefined => {
    const stages = bySlot(slot);
    if (stages.length > 1)
      throw new PolicyError(
        'invalid-pipeline',
        `more than one ${slot} stage: ${stages.map((s) => `'${s.name}'`).join(', ')}`,
      );
    return stages[0];
  };
  const hold = replacing('hold');
  const score = replacing('score');
  const select = replacing('select');
  const margin = replacing('margin');
  return new Pipeline([
    motionInFlightGate(),
    ...bySlot('gate'),
    hold ?? thresholdHoldGate({ threshold: reference.threshold, holdRounds: reference.holdRounds }),
    hostCandidates(),
    ...bySlot('filter'),
    score ?? usageScorer({ method: reference.method, limit: scoreLimit }),
    select ?? selectBest(),
    margin ?? relativeMarginAccept({ margin: reference.margin }),
    ...bySlot('accept'),
  ]);
}

/**
 * The reference balancer, stage by stage: skip while a motion is in flight → threshold with
 * hold rounds → candidates → score (bruteforce or TOPSIS, best one) → select → relative margin.
 */
export function referencePipeline(config: ReferenceBalancerConfig): Pipeline {
  return composePipeline(config, []);
}
