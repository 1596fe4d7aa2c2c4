/** Error codes of the simulator package. */
export type SimErrorCode = 'bad-case' | 'bad-command' | 'bad-override' | 'command-failed' | 'sim-abort';

/** Base error of `@poise/sim`: bad test cases, bad commands, aborted simulations. */
export class SimError extends Error {
  override readonly name = 'SimError';
  constructor(
    readonly code: SimErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
