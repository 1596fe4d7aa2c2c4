/** Machine-readable reason of a {@link ContentionError}. */
export type ContentionErrorCode = 'invalid-argument' | 'invalid-state' | 'invalid-options';

/**
 * The one error class of `@poise/contention`: thrown only for invalid input (an argument, a
 * restored model state, options), naming the field and the value; never a NaN prediction.
 */
export class ContentionError extends Error {
  readonly code: ContentionErrorCode;

  constructor(code: ContentionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ContentionError';
    this.code = code;
  }
}

/** A value as a message shows it: strings quoted, objects as JSON (cut) or by kind, the rest as `String`. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'object' && value !== null) {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch {
      // a cycle or a bigint inside: said by its kind
    }
    text ??= Array.isArray(value) ? 'an array' : 'an object';
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  }
  return String(value);
}
