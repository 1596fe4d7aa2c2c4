/** What went wrong, for callers that branch on it. */
export type LabErrorCode =
  | 'bad-trace'
  | 'bad-variants'
  | 'bad-seeds'
  | 'bad-params'
  | 'bad-scenario'
  | 'run-failed'
  | 'bad-argument';

/**
 * The one error class of the lab (trace files, variants, seeds, generator parameters, runs).
 * Messages are lower-case and name the file and the field (dot path) at fault.
 */
export class LabError extends Error {
  override readonly name = 'LabError';
  constructor(
    readonly code: LabErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
