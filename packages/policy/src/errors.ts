export type PolicyErrorCode = 'invalid-config' | 'invalid-pipeline';

/** Base error of `@poise/policy`: invalid configuration or pipeline. */
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
