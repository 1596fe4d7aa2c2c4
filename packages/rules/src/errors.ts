/** Error codes of the rules engine; thrown only for invalid input (never for bad file content). */
export type RulesErrorCode =
  | 'invalid-value' // a value cannot be written (line feed, missing required option)
  | 'unknown-type'; // a section type without a registered plugin

/** Base error of the rules engine; `code` is stable, the message is lower-case. */
export class RulesError extends Error {
  readonly code: RulesErrorCode;

  constructor(code: RulesErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RulesError';
    this.code = code;
  }
}
