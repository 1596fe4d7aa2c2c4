import { PolicyError } from './errors';

/** A value for an error message: strings quoted, numbers as they print (`NaN`), shapes by kind. */
export function showValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'object':
      return value === null ? 'null' : Array.isArray(value) ? 'an array' : 'an object';
    case 'function':
      return 'a function';
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'symbol':
    case 'undefined':
      return String(value);
  }
}

/**
 * Checks for restored stage state (see `Stage.validateState`): each throws `PolicyError`
 * `invalid-state` with a message naming the stage and the field's dot path, e.g.
 * `stage 'backoff': state field 'pairs.0.until' must be a finite number, got "x"`.
 */
export interface StateCheck {
  /** A plain object (not null, not an array). `path` '' is the stage's state itself. */
  object(value: unknown, path: string): Readonly<Record<string, unknown>>;
  array(value: unknown, path: string): readonly unknown[];
  /** A finite number in [min, max] (defaults: any finite number). */
  number(value: unknown, path: string, range?: { min?: number; max?: number }): number;
  /** A finite number, or `null`. */
  numberOrNull(value: unknown, path: string): number | null;
  /** An integer from `min` (default 0) to 2^53−1 (a count beyond it no longer counts: `n + 1 === n`). */
  integer(value: unknown, path: string, min?: number): number;
  boolean(value: unknown, path: string): boolean;
  /** A non-empty string. */
  string(value: unknown, path: string): string;
  /** A non-empty array of non-empty strings without duplicates. */
  names(value: unknown, path: string): string[];
  /** `null` (the state of a stateless stage). */
  none(value: unknown): null;
}

/** The {@link StateCheck} of one stage. */
export function stateCheck(stage: string): StateCheck {
  const fail = (path: string, expected: string, value: unknown): never => {
    const what = path === '' ? 'state' : `state field '${path}'`;
    throw new PolicyError('invalid-state', `stage '${stage}': ${what} must be ${expected}, got ${showValue(value)}`);
  };
  const check: StateCheck = {
    object(value, path) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(path, 'an object', value);
      return value as Record<string, unknown>;
    },
    array(value, path) {
      if (!Array.isArray(value)) return fail(path, 'an array', value);
      return value as readonly unknown[];
    },
    number(value, path, range = {}) {
      const min = range.min ?? -Infinity;
      const max = range.max ?? Infinity;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
        const bounds =
          range.min !== undefined && range.max !== undefined
            ? ` in ${min}..${max}`
            : range.min !== undefined
              ? ` >= ${min}`
              : range.max !== undefined
                ? ` <= ${max}`
                : '';
        return fail(path, `a finite number${bounds}`, value);
      }
      return value;
    },
    numberOrNull(value, path) {
      if (value === null) return null;
      if (typeof value !== 'number' || !Number.isFinite(value)) return fail(path, 'a finite number or null', value);
      return value;
    },
    integer(value, path, min = 0) {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
        return fail(path, `an integer from ${min} to ${Number.MAX_SAFE_INTEGER}`, value);
      return value;
    },
    boolean(value, path) {
      if (typeof value !== 'boolean') return fail(path, 'a boolean', value);
      return value;
    },
    string(value, path) {
      if (typeof value !== 'string' || value === '') return fail(path, 'a non-empty string', value);
      return value;
    },
    names(value, path) {
      const list = check.array(value, path);
      if (list.length === 0) return fail(path, 'a non-empty array of names', value);
      const seen = new Set<string>();
      return list.map((item, i) => {
        const name = check.string(item, `${path}.${i}`);
        if (seen.has(name)) fail(`${path}.${i}`, 'a name not listed before', item);
        seen.add(name);
        return name;
      });
    },
    none(value) {
      if (value !== null) return fail('', 'null (the stage keeps no state)', value);
      return null;
    },
  };
  return check;
}
