/**
 * - `invalid-config`: a stage or settings value out of range when a stage is built;
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
