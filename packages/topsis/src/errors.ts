/** Machine-readable reason of a {@link TopsisError}. */
export type TopsisErrorCode = 'no-criteria' | 'zero-weights' | 'invalid-weight' | 'non-finite-value' | 'ragged-matrix';

/** The one error class of `@poise/topsis`: thrown only for invalid input, never a NaN score. */
export class TopsisError extends Error {
  readonly code: TopsisErrorCode;

  constructor(code: TopsisErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TopsisError';
    this.code = code;
  }
}
