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
 *   reaches the host from `Pipeline.run`.
 */
export type PolicyErrorCode =
  | 'invalid-config'
  | 'invalid-plugin'
  | 'invalid-pipeline'
  | 'invalid-state'
  | 'invalid-context'
  | 'invalid-input';

/** Base error of `@poise/policy` and its variant packages. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
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
