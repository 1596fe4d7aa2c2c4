/** Machine-readable reason of an {@link ImbalanceError}. */
export type ImbalanceErrorCode = 'invalid-load' | 'index-out-of-range' | 'invalid-metric' | 'invalid-argument';

/** The one error class of `@poise/imbalance`: thrown only for invalid input. */
export class ImbalanceError extends Error {
  readonly code: ImbalanceErrorCode;

  constructor(code: ImbalanceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ImbalanceError';
    this.code = code;
  }
}
