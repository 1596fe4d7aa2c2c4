/** Machine-readable reason of a {@link PlanError}. */
export type PlanErrorCode =
  /** The cluster description is malformed (the message names the field and value). */
  | 'invalid-input'
  /** An option of a call is malformed (the message names the option). */
  | 'invalid-options'
  /** A JSON input is not JSON (the message names the position). */
  | 'invalid-json';

/**
 * The one error class of `@poise/plan`: thrown only for invalid input, before anything is
 * planned. An infeasible cluster is not an error: the planner answers it with reasons.
 */
export class PlanError extends Error {
  readonly code: PlanErrorCode;

  constructor(code: PlanErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PlanError';
    this.code = code;
  }
}
