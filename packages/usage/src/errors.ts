/** Machine-readable reason of a {@link UsageError}. */
export type UsageErrorCode =
  | 'duplicate-node'
  | 'duplicate-resource'
  | 'unknown-node'
  | 'unknown-resource'
  | 'invalid-placement'
  | 'invalid-stats'
  | 'node-in-use'
  | 'invalid-candidate'
  | 'unsupported-aggregation'
  | 'invalid-argument';

/** The one error class of `@poise/usage`: thrown only for invalid input. */
export class UsageError extends Error {
  readonly code: UsageErrorCode;

  constructor(code: UsageErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UsageError';
    this.code = code;
  }
}
