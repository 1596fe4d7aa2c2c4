import { SimError } from './errors';
import { SID_PATTERN } from './commands';
import type { JsonObject, JsonValue } from './json';

/** A field path for messages: `node1.maxcpu`, `"vm:101".node`, `["a b"].power`. */
function fieldPath(parts: readonly string[]): string {
  let out = '';
  for (const p of parts) {
    if (/^[A-Za-z0-9_:-]+$/.test(p)) out += out ? `.${p}` : p;
    else out += `[${JSON.stringify(p)}]`;
  }
  return out;
}

/** Checks of one JSON file, with the file's path for messages. */
export class FileCheck {
  constructor(readonly path: string) {}

  fail(field: readonly string[], problem: string): never {
    const where = field.length ? ` ${fieldPath(field)}` : '';
    throw new SimError('bad-case', `'${this.path}'${where}: ${problem}`);
  }

  object(v: JsonValue | undefined, field: readonly string[]): JsonObject {
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      this.fail(field, `expected a JSON object, got ${describe(v)}`);
    return v;
  }

  keys(obj: JsonObject, allowed: readonly string[], field: readonly string[]): void {
    for (const key of Object.keys(obj)) {
      if (!allowed.includes(key)) this.fail([...field, key], `unknown key (expected one of ${allowed.join(', ')})`);
    }
  }

  string(v: JsonValue | undefined, field: readonly string[], nonEmpty = true): string {
    if (typeof v !== 'string' || (nonEmpty && v === ''))
      this.fail(field, `expected a ${nonEmpty ? 'non-empty ' : ''}string, got ${describe(v)}`);
    return v;
  }

  oneOf(v: JsonValue | undefined, values: readonly string[], field: readonly string[]): string {
    if (typeof v !== 'string' || !values.includes(v))
      this.fail(field, `expected one of ${values.join(', ')}, got ${describe(v)}`);
    return v;
  }

  /** A flag: 0, 1, true or false (also "0" and "1", as the PVE API sends them). */
  flag(v: JsonValue | undefined, field: readonly string[]): void {
    if (v === 0 || v === 1 || v === true || v === false || v === '0' || v === '1') return;
    this.fail(field, `expected a flag (0, 1, true or false), got ${describe(v)}`);
  }

  /** A whole number from 0 to 2^53−1 (exact in a double), as a JSON number or a string of digits. */
  count(v: JsonValue | undefined, field: readonly string[]): void {
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return;
    if (typeof v === 'string' && /^\d+$/.test(v) && Number.isSafeInteger(Number(v))) return;
    this.fail(field, `expected a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got ${describe(v)}`);
  }

  /** A finite number >= `min` (and <= `max` when given), as a JSON number or a numeric string. */
  number(v: JsonValue | undefined, field: readonly string[], min = 0, max?: number): void {
    const n =
      typeof v === 'number'
        ? v
        : typeof v === 'string' && /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(v)
          ? Number(v)
          : NaN;
    if (Number.isFinite(n) && n >= min && (max === undefined || n <= max)) return;
    this.fail(
      field,
      `expected a finite number ${max === undefined ? `>= ${min}` : `from ${min} to ${max}`}, got ${describe(v)}`,
    );
  }

  node(v: JsonValue | undefined, field: readonly string[], nodes: ReadonlySet<string>): string {
    const name = this.string(v, field);
    if (!nodes.has(name)) this.fail(field, `node '${name}' does not exist in hardware_status`);
    return name;
  }

  sid(sid: string, field: readonly string[]): void {
    if (!SID_PATTERN.test(sid)) this.fail(field, `invalid service id '${sid}' (vm|ct|fa:<number>)`);
  }
}

export function describe(v: JsonValue | undefined): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  // a literal such as 1e999 reads as Infinity, which JSON.stringify would print as `null`
  if (v === Infinity) return 'a number too large for a double (beyond 1.8e308)';
  if (v === -Infinity) return 'a negative number too large for a double (beyond -1.8e308)';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return JSON.stringify(v);
}
