/**
 * - `invalid-config`: a stage or settings value out of range when a stage is built;
 * - `invalid-plugin`: a value given as a policy plug-in is not one (the message names where it
 *   came from and the field), or its keys clash with another's;
 * - `invalid-pipeline`: stages in the wrong order, duplicate names, a missing kind;
 * - `invalid-state`: a restored (persisted) stage state is corrupt (the message names the
 *   stage and the field);
 * - `invalid-context`: the host does not provide a context member a configured stage needs;
 * - `invalid-input`: the host's data for this round is out of range. Thrown by stages and the
 *   round context; the pipeline turns it into a stop decision with that code, so it never
 *   reaches the host from `Pipeline.run`;
 * - `stage-failed`: a stage broke its contract during a round (threw, returned a result of the
 *   wrong shape, or kept state that is not plain JSON): a {@link StageError} naming the plug-in,
 *   the stage, the round and what was wrong. The round is aborted; the host's state stays as it
 *   was before the round.
 */
export type PolicyErrorCode =
  | 'invalid-config'
  | 'invalid-plugin'
  | 'invalid-pipeline'
  | 'invalid-state'
  | 'invalid-context'
  | 'invalid-input'
  | 'stage-failed';

/** Base error of `@poise/policy` and its variant packages. */
export class PolicyError extends Error {
  override readonly name: string = 'PolicyError';
  constructor(
    readonly code: PolicyErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `invalid-input`: host data out of range for this round (becomes a stop decision). */
export function invalidInput(message: string): PolicyError {
  return new PolicyError('invalid-input', message);
}

/** `invalid-context`: a stage needs a context member the host does not provide. */
export function missingContext(stage: string, member: string): PolicyError {
  return new PolicyError('invalid-context', `stage '${stage}' needs 'ctx.${member}', which the host does not provide`);
}

/**
 * Whether `err` is an error with this `code` (a `PolicyError`, or any `Error` carrying the same
 * `code`). Judged by the code, never by `instanceof`: a plug-in loaded from its own folder has
 * no runtime import of this package, so the errors its stages throw are plain `Error`s (e.g.
 * `Object.assign(new Error('…'), { code: 'invalid-input' })`), and two copies of this package
 * would hold two `PolicyError` classes.
 */
export function hasErrorCode(err: unknown, code: PolicyErrorCode): err is Error & { readonly code: PolicyErrorCode } {
  return err instanceof Error && (err as { code?: unknown }).code === code;
}

/** The stage function that broke its contract (see {@link StageError}). */
export type StageHook = 'initialState' | 'validateState' | 'observe' | 'run' | 'breakStreak';

/** What {@link StageError} is made of. */
export interface StageFailure {
  /** The plug-in whose stage it is (its `name`), or `undefined` for a stage of the reference pipeline. */
  readonly plugin: string | undefined;
  readonly stage: string;
  readonly hook: StageHook;
  /**
   * The round it happened in: the host's number of it when the host gives one to `Pipeline.run`,
   * else the pipeline's count of its runs (1 for the first); 0 outside a round.
   */
  readonly round: number;
  /** `ctx.now` of that round (seconds), or `undefined` outside a round. */
  readonly now: number | undefined;
  /** What was wrong, lower-case: `threw: kaboom`, `returned undefined, expected …`, `state.x is a function`. */
  readonly problem: string;
}

/**
 * `stage-failed`: a stage broke its contract (see `Stage`). One type for every way a stage can
 * fail a round, naming the plug-in, the stage, the round and what was wrong:
 * `plug-in 'freeze': stage 'freeze' failed in round 3 (at 60): run() threw: kaboom`. A host
 * judges it by its `code` (as every error of this package family) and logs its message; the
 * exception the stage threw, if any, is the `cause`.
 */
export class StageError extends PolicyError implements StageFailure {
  override readonly name: string = 'StageError';
  readonly plugin: string | undefined;
  readonly stage: string;
  readonly hook: StageHook;
  readonly round: number;
  readonly now: number | undefined;
  readonly problem: string;
  constructor(failure: StageFailure, options?: { cause?: unknown }) {
    const owner = failure.plugin === undefined ? '' : `plug-in '${failure.plugin}': `;
    const when =
      failure.round > 0 ? ` in round ${failure.round}${failure.now === undefined ? '' : ` (at ${failure.now})`}` : '';
    super(
      'stage-failed',
      `${owner}stage '${failure.stage}' failed${when}: ${failure.hook}() ${failure.problem}`,
      options,
    );
    this.plugin = failure.plugin;
    this.stage = failure.stage;
    this.hook = failure.hook;
    this.round = failure.round;
    this.now = failure.now;
    this.problem = failure.problem;
  }
}
