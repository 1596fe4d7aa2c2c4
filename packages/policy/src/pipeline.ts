import { PolicyError, StageError, hasErrorCode, type StageHook } from './errors';
import { jsonProblem } from './json';
import { checkOutcomes, isHostError, isReasonFormat, roundContext } from './round';
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
  Observed,
  PipelineState,
  Plan,
  Stage,
  StageKind,
  StageOutcome,
  StageStop,
  StopDecision,
} from './types';
import type { HoldState } from './stages';
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- MoveObjective is named by {@link} in a doc comment: typedoc resolves it through this import
import type { MoveObjective } from './types';

const KIND_ORDER: StageKind[] = ['gate', 'candidates', 'filter', 'score', 'select', 'accept'];

/** The stage name of decisions about the context itself (an invalid `now` or `motionInFlight`). */
export const PIPELINE_STAGE = 'pipeline';

/** What a {@link Pipeline} knows beside its stages. */
export interface PipelineOptions {
  /**
   * The plug-in each stage comes from (its `name`), by stage name, for the {@link StageError}s
   * of its stages; a stage not listed is the reference pipeline's. `PolicyRegistry.pipeline`
   * fills it.
   */
  readonly owners?: ReadonlyMap<string, string>;
  /**
   * Sees every {@link StageError} just before the pipeline throws it: for a host that cannot
   * catch it itself (the HA core's manager logs the errors of a round and carries on, as the
   * reference does; the simulator's command line still has to say that a stage failed). An
   * observer: it must not throw.
   */
  readonly onStageError?: (err: StageError) => void;
}

/** Ways a stage's outcome can be wrong, checked every round (see {@link outcomeProblem}). */
const OUTCOME_SHAPE = 'expected {plan, state} or {stop, state}';

/** The first problem with the shape of an outcome of `Stage.run`, or `undefined`. */
function outcomeProblem(out: unknown): string | undefined {
  if (typeof out !== 'object' || out === null || Array.isArray(out))
    return `returned ${showValue(out)}, ${OUTCOME_SHAPE}`;
  const o = out as Record<string, unknown>;
  if (!('state' in o)) return `returned no 'state', ${OUTCOME_SHAPE}`;
  const notices = noticesProblem(o.notices);
  if (notices !== undefined) return notices;
  if ('stop' in o) {
    if (typeof o.stop !== 'string' || o.stop === '')
      return `returned 'stop' ${showValue(o.stop)}, expected a non-empty string (the reason)`;
    for (const field of ['code', 'key'] as const)
      if (o[field] !== undefined && (typeof o[field] !== 'string' || o[field] === ''))
        return `returned '${field}' ${showValue(o[field])}, expected a non-empty string or nothing`;
    for (const field of ['quiet', 'breaksStreak'] as const)
      if (o[field] !== undefined && typeof o[field] !== 'boolean')
        return `returned '${field}' ${showValue(o[field])}, expected a boolean or nothing`;
    return undefined;
  }
  if (typeof o.plan !== 'object' || o.plan === null || Array.isArray(o.plan))
    return `returned 'plan' ${showValue(o.plan)} and no 'stop', ${OUTCOME_SHAPE}`;
  return planProblem(o.plan as Record<string, unknown>);
}

/** The first problem with the fields of a plan a stage passed on (their types; the values are the stages'). */
function planProblem(plan: Record<string, unknown>): string | undefined {
  const bad = (field: string, expected: string) =>
    `returned 'plan.${field}' ${showValue(plan[field])}, expected ${expected}`;
  const { imbalance, candidates, scored, selected, evaluator, continueSeries, objective } = plan;
  if (imbalance !== undefined && (typeof imbalance !== 'number' || !Number.isFinite(imbalance) || imbalance < 0))
    return bad('imbalance', 'a finite number >= 0');
  if (candidates !== undefined && !Array.isArray(candidates)) return bad('candidates', 'an array');
  if (scored !== undefined && !Array.isArray(scored)) return bad('scored', 'an array');
  if (selected !== undefined && (typeof selected !== 'object' || selected === null || Array.isArray(selected)))
    return bad('selected', 'a scored migration (an object)');
  const functions = (value: unknown, names: readonly string[]) =>
    typeof value === 'object' &&
    value !== null &&
    names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function');
  if (evaluator !== undefined && !functions(evaluator, ['imbalance', 'score']))
    return bad('evaluator', 'an object with imbalance() and score()');
  if (continueSeries !== undefined && typeof continueSeries !== 'boolean') return bad('continueSeries', 'a boolean');
  if (
    objective !== undefined &&
    (!functions(objective, ['gain', 'formatGain']) || typeof (objective as { name?: unknown }).name !== 'string')
  )
    return bad('objective', "a move objective (a 'name', gain() and formatGain())");
  return undefined;
}

/** The first problem with the notices of an outcome (an array of {code, severity, message}, or nothing). */
function noticesProblem(notices: unknown): string | undefined {
  if (notices === undefined) return undefined;
  if (!Array.isArray(notices)) return `returned 'notices' ${showValue(notices)}, expected an array or nothing`;
  for (let i = 0; i < notices.length; i++) {
    const n: unknown = notices[i];
    const ok =
      typeof n === 'object' &&
      n !== null &&
      typeof (n as NoticeInit).code === 'string' &&
      ((n as NoticeInit).severity === 'info' || (n as NoticeInit).severity === 'warning') &&
      typeof (n as NoticeInit).message === 'string';
    if (!ok) return `returned 'notices.${i}' ${showValue(n)}, expected {code, severity: info|warning, message}`;
  }
  return undefined;
}

/** An ordered, validated list of stages. */
export class Pipeline {
  readonly stages: readonly Stage[];
  readonly #owners: ReadonlyMap<string, string>;
  readonly #onStageError: ((err: StageError) => void) | undefined;
  /** Rounds this pipeline ran (`run` calls), for {@link StageError.round} when the host numbers none. */
  #rounds = 0;
  /** The round running, as its {@link StageError}s name it. */
  #round = 0;
  /** `ctx.now` of the round running, if one is. */
  #now: number | undefined;
  /**
   * The stage states (objects) this pipeline's own rounds returned, with the stage that made
   * each: handed back as they are, they are not checked again (a host keeps the state a round
   * returned; a persisted one comes back as new objects and is checked). A large learned state
   * (the contention model's) would otherwise be walked whole every round.
   */
  readonly #made = new WeakMap<object, Stage>();

  /**
   * Checks the stages: unique non-empty names, known kinds in the order gate < candidates < filter <
   * score < select < accept, at least one `candidates`, `score` and `select` stage. Throws
   * `PolicyError` `invalid-pipeline`.
   */
  constructor(stages: readonly Stage[], options: PipelineOptions = {}) {
    this.#owners = options.owners ?? new Map();
    this.#onStageError = options.onStageError;
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

  /**
   * Every stage's initial state. Throws {@link StageError} for a stage whose `initialState`
   * throws or is not plain JSON.
   */
  initialState(): PipelineState {
    return Object.fromEntries(this.stages.map((s) => [s.name, this.#initial(s)]));
  }

  /** The plug-in of a stage (`undefined`: the reference pipeline's), as its {@link StageError}s name it. */
  pluginOf(stage: string): string | undefined {
    return this.#owners.get(stage);
  }

  /**
   * The {@link StageError} of `stage` (named with its plug-in and the round running), shown to
   * the observer of {@link PipelineOptions.onStageError}; the caller throws it.
   */
  #failure(stage: Stage, hook: StageHook, problem: string, cause?: unknown): StageError {
    const err = new StageError(
      {
        plugin: this.#owners.get(stage.name),
        stage: stage.name,
        hook,
        round: this.#round,
        now: this.#now,
        problem,
      },
      cause === undefined ? undefined : { cause },
    );
    this.#onStageError?.(err);
    return err;
  }

  /**
   * Runs a stage function: what it throws becomes its {@link StageError} (`threw: <message>`),
   * except the errors it may throw by contract (`pass` says which) and the host's own errors
   * passing through it (thrown by a member of the context: not the stage's).
   */
  #call<T>(stage: Stage, hook: StageHook, run: () => T, pass: (err: unknown) => boolean = () => false): T {
    try {
      return run();
    } catch (err) {
      if (pass(err) || hasErrorCode(err, 'stage-failed') || isHostError(err)) throw err;
      throw this.#failure(stage, hook, `threw: ${err instanceof Error ? err.message : String(err)}`, err);
    }
  }

  /** `state` as a stage returned it from `hook`, checked to be plain JSON (else its {@link StageError}). */
  #json<S>(stage: Stage, hook: StageHook, state: S): S {
    const problem = jsonProblem(state);
    if (problem !== undefined) throw this.#failure(stage, hook, `returned a state that is not plain JSON: ${problem}`);
    return state;
  }

  #initial(stage: Stage): unknown {
    return this.#json(
      stage,
      'initialState',
      this.#call(stage, 'initialState', () => stage.initialState()),
    );
  }

  /**
   * The state after an earlier stage stopped the round as not qualifying, for a host that
   * breaks the streaks itself on a round it does not run (e.g. an unsettled cluster): every
   * stage's `breakStreak` on its state (the input is not mutated). Throws {@link StageError}
   * for a stage whose `breakStreak` throws or returns a state that is not plain JSON (naming
   * `round`, the host's number of the round, when given).
   */
  breakStreaks(state: PipelineState, round?: number): PipelineState {
    this.#round = round ?? 0;
    try {
      const next: Record<string, unknown> = { ...state };
      for (const stage of this.stages) {
        if (stage.breakStreak && Object.hasOwn(state, stage.name))
          next[stage.name] = this.#broken(stage, state[stage.name]);
      }
      return next;
    } finally {
      this.#round = 0;
    }
  }

  #broken(stage: Stage, state: unknown): unknown {
    return this.#json(
      stage,
      'breakStreak',
      this.#call(stage, 'breakStreak', () => stage.breakStreak!(state)),
    );
  }

  /**
   * Checks a restored (e.g. persisted, `JSON.parse`d) pipeline state and returns it with every
   * stage's state validated (`Stage.validateState`) and missing ones filled with their initial
   * state. States of names no stage has are kept untouched (e.g. from an older pipeline).
   * Throws `PolicyError` `invalid-state` naming the stage and field (and {@link StageError}
   * when `validateState` throws anything else, or `initialState` fails). `run` does the same at
   * the start of every round, except for a stage state that is the very object a round of this
   * pipeline returned for that stage (its stage made it; states are not to be mutated).
   */
  restore(state: unknown): PipelineState {
    if (typeof state !== 'object' || state === null || Array.isArray(state)) {
      throw new PolicyError('invalid-state', `pipeline state must be an object, got ${showValue(state)}`);
    }
    const next: Record<string, unknown> = { ...(state as Record<string, unknown>) };
    for (const stage of this.stages) {
      const value = Object.hasOwn(next, stage.name) ? next[stage.name] : undefined;
      next[stage.name] =
        value === undefined
          ? this.#initial(stage)
          : stage.validateState && !(typeof value === 'object' && value !== null && this.#made.get(value) === stage)
            ? this.#call(
                stage,
                'validateState',
                () => stage.validateState!(value),
                (err) => hasErrorCode(err, 'invalid-state'),
              )
            : value;
    }
    return next;
  }

  /** `result`, its stage states remembered as made by this pipeline (see `restore`). */
  #returned<T extends { state: PipelineState }>(result: T): T {
    for (const stage of this.stages) {
      const value = result.state[stage.name];
      if (typeof value === 'object' && value !== null) this.#made.set(value, stage);
    }
    return result;
  }

  /**
   * Runs one balancing round; returns the decision and the new state (the input is not
   * mutated). Order: validate the state (throws `invalid-state`), check `now`,
   * `motionInFlight` and `format` (else a stop of stage `pipeline`, code `invalid-input`), check the
   * reported outcomes (invalid ones dropped with a notice), let every stage `observe`, then
   * run the stages until one stops or the last one passes.
   *
   * A stage that breaks its contract aborts the round with a {@link StageError} naming its
   * plug-in, the stage, the round and what was wrong: `observe`, `run` or `breakStreak` threw
   * (other than `invalid-input` from `run`, which stops the round, `invalid-context`, which
   * names the host's missing member, and the host's own errors passing through the stage), a
   * result not of the shape its type says (`returned undefined`), or a state that is not plain
   * JSON (`state.x is a function`, NaN, Infinity, a BigInt, a Map, a cycle, an `undefined`
   * field). The host's state stays as before the round. The error names the round by `round`,
   * the host's number of it, when given (the daemon's round), else by this pipeline's count of
   * its runs (1 for the first).
   */
  run(ctx: BalanceContext, state: PipelineState, round?: number): { decision: Decision; state: PipelineState } {
    this.#rounds++;
    this.#round = round ?? this.#rounds;
    this.#now = typeof ctx.now === 'number' ? ctx.now : undefined;
    try {
      return this.#returned(this.#runRound(ctx, state));
    } finally {
      this.#now = undefined;
      this.#round = 0;
    }
  }

  #runRound(ctx: BalanceContext, state: PipelineState): { decision: Decision; state: PipelineState } {
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
      const before = next[stage.name];
      const seen: unknown = this.#call(stage, 'observe', () => stage.observe!(facts, before));
      const problem =
        typeof seen !== 'object' || seen === null || Array.isArray(seen)
          ? `returned ${showValue(seen)}, expected {state}`
          : !('state' in seen)
            ? "returned no 'state', expected {state}"
            : noticesProblem((seen as Observed<unknown>).notices);
      if (problem !== undefined) throw this.#failure(stage, 'observe', problem);
      const observed = seen as Observed<unknown>;
      next[stage.name] = observed.state === before ? before : this.#json(stage, 'observe', observed.state);
      collect(stage.name, observed.notices);
    }

    const round = roundContext(ctx, reported.outcomes);
    let plan: Plan = {};
    for (let i = 0; i < this.stages.length; i++) {
      const stage = this.stages[i]!;
      const before = next[stage.name];
      let out: StageOutcome<unknown>;
      try {
        out = this.#call(
          stage,
          'run',
          () => stage.run(round, plan, before),
          (err) => hasErrorCode(err, 'invalid-input') || hasErrorCode(err, 'invalid-context'),
        );
      } catch (err) {
        if (hasErrorCode(err, 'invalid-input')) {
          return { decision: stopped(stage.name, { stop: err.message, code: 'invalid-input' }), state: next };
        }
        throw err;
      }
      const problem = outcomeProblem(out);
      if (problem !== undefined) throw this.#failure(stage, 'run', problem);
      next[stage.name] = out.state === before ? before : this.#json(stage, 'run', out.state);
      collect(stage.name, out.notices);
      if ('stop' in out) {
        if (out.breaksStreak) {
          for (const later of this.stages.slice(i + 1))
            if (later.breakStreak) next[later.name] = this.#broken(later, next[later.name]);
        }
        return { decision: stopped(stage.name, out), state: next };
      }
      if (stage.kind === 'select' && out.plan.selected === undefined)
        throw this.#failure(
          stage,
          'run',
          "passed on a plan without 'selected' (a select stage selects a move or stops the round)",
        );
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
 * Where a variant stage goes in a composed pipeline: `gate`, `filter` and `accept` add stages
 * of that kind; `select` replaces `select-best` (one part takes it, see
 * {@link StagePart.precedence}). What the pipeline minimises is not a slot but its
 * {@link PipelineObjective}.
 */
export type StageSlot = 'gate' | 'filter' | 'select' | 'accept';

/** The kind of stage each slot takes. */
const SLOT_KIND: Readonly<Record<StageSlot, StageKind>> = {
  gate: 'gate',
  filter: 'filter',
  select: 'select',
  accept: 'accept',
};

/**
 * A variant stage and its place: `slot` (whose kind the stage must have, see {@link StageSlot})
 * and `order` within the slot (ascending; the variant packages document theirs). `scoreLimit`
 * asks the objective's scorer for more than its single best migration (the largest request
 * of the parts in the pipeline wins).
 */
export interface StagePart {
  readonly slot: StageSlot;
  readonly order: number;
  readonly stage: Stage;
  readonly scoreLimit?: number;
  /**
   * The `select` slot takes one stage: when several parts claim it, the one with the highest
   * precedence takes it and the others are left out, with their score limits (e.g.
   * `plan-guided` of `@poise/policy-plan`, precedence 1, over `select-cost` of
   * `@poise/policy-stable`, 0). Two parts at the same highest precedence: `invalid-pipeline`.
   * Default 0; other slots ignore it.
   */
  readonly precedence?: number;
}

/**
 * What a pipeline minimises, as a parameter of {@link composePipeline}: the stages that judge a
 * round by it. The hold rounds (`hold`, a gate after the variant gates), the scoring of the
 * candidates (`score`) and the margin a move must clear (`margin`, an accept stage before the
 * variant accept stages). {@link imbalanceObjective} is the reference's: `threshold-hold`,
 * `score-<method>`, `relative-margin`.
 *
 * An objective with a `gate` runs it first in every round (after `motion-in-flight`): it learns
 * what it needs and marks the rounds it judges by setting `plan.objective` (a
 * {@link MoveObjective}). A round it hands on without `plan.objective` (e.g. a cluster without
 * the telemetry the objective reads) is the imbalance's: the pipeline runs the imbalance
 * objective's stage in place of each of the three, with the same reference settings. The two
 * holds share one count (`hold` keeps the reference's {@link HoldState}), so the hold rounds
 * carry over between rounds judged by either; the imbalance's scorer and margin keep no state,
 * the objective's keep theirs. Without a `gate` the objective judges every round.
 */
export interface PipelineObjective {
  /** What is minimised, as the `ha-auto-rebalance-objective` key names it: `imbalance`, `contention`. */
  readonly name: string;
  /** Learns and marks the rounds the objective judges (see above); a gate. */
  readonly gate?: Stage;
  /** The hold rounds: a gate, with the reference's hold state. */
  readonly hold: Stage<HoldState>;
  /** Scores the candidates into `plan.scored`, best first: a score stage. */
  readonly score: Stage;
  /** Accepts the selected move or stops the round: an accept stage. */
  readonly margin: Stage;
  /**
   * How many scored moves the imbalance's scorer hands on in the rounds handed to it (default
   * 1; the parts' `scoreLimit` may ask for more).
   */
  readonly scoreLimit?: number;
}

/**
 * The reference's objective, the node imbalance: `threshold-hold` (threshold and hold rounds),
 * `score-<method>` (its best `scoreLimit` moves, default 1) and `relative-margin`. Throws
 * `PolicyError` `invalid-config` for a bad setting.
 */
export function imbalanceObjective(reference: ReferenceBalancerConfig, scoreLimit = 1): PipelineObjective {
  return {
    name: 'imbalance',
    hold: thresholdHoldGate({ threshold: reference.threshold, holdRounds: reference.holdRounds }),
    score: usageScorer({ method: reference.method, limit: scoreLimit }),
    margin: relativeMarginAccept({ margin: reference.margin }),
  };
}

/** Checks an objective's stages: each of the kind its role takes. Throws `invalid-pipeline`. */
function checkObjective(objective: PipelineObjective): void {
  if (typeof objective.name !== 'string' || objective.name === '')
    throw new PolicyError(
      'invalid-pipeline',
      `objective name must be a non-empty string, got ${showValue(objective.name)}`,
    );
  const roles = [
    ['gate', objective.gate, 'gate'],
    ['hold', objective.hold, 'gate'],
    ['score', objective.score, 'score'],
    ['margin', objective.margin, 'accept'],
  ] as const;
  for (const [role, stage, kind] of roles) {
    if (stage === undefined && role === 'gate') continue;
    if (typeof stage !== 'object' || stage === null || typeof stage.run !== 'function')
      throw new PolicyError('invalid-pipeline', `objective '${objective.name}': '${role}' must be a stage`);
    if (stage.kind !== kind)
      throw new PolicyError(
        'invalid-pipeline',
        `objective '${objective.name}': its ${role} stage '${stage.name}' (${stage.kind}) must be a ${kind} stage`,
      );
  }
}

/**
 * The stage of an objective that hands rounds to the imbalance (see {@link PipelineObjective}):
 * named and stateful as `own`; in a round without `plan.objective` the imbalance's stage judges,
 * with the same state when `shared` (the hold count), else with its own initial (stateless) one.
 */
function byRound<S>(own: Stage<S>, imbalance: Stage, shared: boolean): Stage<S> {
  return {
    ...own,
    run: (ctx, plan, state) => {
      if (plan.objective !== undefined) return own.run(ctx, plan, state);
      if (shared) return imbalance.run(ctx, plan, state) as StageOutcome<S>;
      return { ...imbalance.run(ctx, plan, imbalance.initialState()), state };
    },
  };
}

/**
 * The balancer: the reference stages with variant stages in their slots and the objective's
 * stages in theirs, in this order:
 *
 * 1. `motion-in-flight` — first: nothing else is looked at while a motion is in flight;
 * 2. the objective's gate, if it has one (e.g. `contention`) — it learns in every round another
 *    gate stops;
 * 3. slot `gate` (e.g. smoothing 10, backoff-series 20, pressure 30) — before the hold, so an
 *    adjusted imbalance is what the threshold judges, a continued series skips the hold, and a
 *    round without pressure never counts towards the hold;
 * 4. the objective's hold (`threshold-hold`), then `candidates`;
 * 5. slot `filter` (pressure-source 10, cooldown 20, backoff 30, migratable 40) — cheap and
 *    decisive first; the host's guest configurations are read only for survivors;
 * 6. the objective's scorer (`score-<method>` with limit max(1, scoreLimit of the parts));
 * 7. slot `select` (the part of highest precedence, e.g. cost) or `select-best`;
 * 8. the objective's margin (`relative-margin`), then slot `accept` (min-improvement 10).
 *
 * `objective` defaults to {@link imbalanceObjective}; with no parts and no objective this is
 * exactly {@link referencePipeline}. Throws `PolicyError` `invalid-pipeline` for a part in the
 * wrong slot, two select parts of the same precedence, a non-finite order or an objective stage
 * of the wrong kind, and `invalid-config` for a bad reference setting or score limit.
 */
export function composePipeline(
  reference: ReferenceBalancerConfig,
  parts: readonly StagePart[] = [],
  objective?: PipelineObjective,
  options: PipelineOptions = {},
): Pipeline {
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
    if (part.precedence !== undefined && !Number.isFinite(part.precedence))
      throw new PolicyError(
        'invalid-pipeline',
        `stage '${part.stage.name}' has a non-finite precedence '${String(part.precedence)}'`,
      );
    if (part.scoreLimit !== undefined && (!Number.isInteger(part.scoreLimit) || part.scoreLimit < 1)) {
      throw new PolicyError(
        'invalid-config',
        `stage '${part.stage.name}' asks for score limit '${part.scoreLimit}' (an integer >= 1)`,
      );
    }
  }
  // the select slot takes one part: the one of highest precedence
  const selects = parts.filter((p) => p.slot === 'select');
  const top = Math.max(...selects.map((p) => p.precedence ?? 0));
  const chosen = selects.filter((p) => (p.precedence ?? 0) === top);
  if (chosen.length > 1)
    throw new PolicyError(
      'invalid-pipeline',
      `more than one select stage: ${chosen.map((p) => `'${p.stage.name}'`).join(', ')}`,
    );
  const kept = parts.filter((p) => p.slot !== 'select' || p === chosen[0]);
  const bySlot = (slot: StageSlot) =>
    kept
      .map((part, index) => ({ part, index }))
      .filter(({ part }) => part.slot === slot)
      .sort((a, b) => a.part.order - b.part.order || a.index - b.index)
      .map(({ part }) => part.stage);
  let scoreLimit = objective?.scoreLimit ?? 1;
  if (!Number.isInteger(scoreLimit) || scoreLimit < 1)
    throw new PolicyError('invalid-config', `objective asks for score limit '${scoreLimit}' (an integer >= 1)`);
  for (const part of kept) if (part.scoreLimit !== undefined) scoreLimit = Math.max(scoreLimit, part.scoreLimit);
  const imbalance = imbalanceObjective(reference, scoreLimit);
  let judge = imbalance;
  if (objective !== undefined) {
    checkObjective(objective);
    judge = objective.gate
      ? {
          name: objective.name,
          gate: objective.gate,
          hold: byRound(objective.hold, imbalance.hold, true),
          score: byRound(objective.score, imbalance.score, false),
          margin: byRound(objective.margin, imbalance.margin, false),
        }
      : objective;
  }
  return new Pipeline(
    [
      motionInFlightGate(),
      ...(judge.gate ? [judge.gate] : []),
      ...bySlot('gate'),
      judge.hold,
      hostCandidates(),
      ...bySlot('filter'),
      judge.score,
      chosen[0]?.stage ?? selectBest(),
      judge.margin,
      ...bySlot('accept'),
    ],
    options,
  );
}

/**
 * The reference balancer, stage by stage: skip while a motion is in flight → threshold with
 * hold rounds → candidates → score (bruteforce or TOPSIS, best one) → select → relative margin.
 */
export function referencePipeline(config: ReferenceBalancerConfig): Pipeline {
  return composePipeline(config, []);
}
