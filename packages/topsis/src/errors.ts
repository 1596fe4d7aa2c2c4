/** Machine-readable reason of a {@link TopsisError}. */
export type TopsisErrorCode =
  | 'no-criteria'
  | 'zero-weights'
  | 'invalid-weight'
  | 'invalid-criteria'
  | 'duplicate-criterion'
  | 'non-finite-value'
  | 'ragged-matrix'
  | 'invalid-argument';

/** The one error class of `@poise/topsis`: thrown only for invalid input, never a NaN score. */
export class TopsisError extends Error {
  readonly code: TopsisErrorCode;

  constructor(code: TopsisErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TopsisError';
    this.code = code;
  }
}
