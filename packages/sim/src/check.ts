import { SimError } from './errors';
import type { JsonObject, JsonValue } from './json';
import { SID_PATTERN } from './commands';

/** A field path for messages: `node1.maxcpu`, `"vm:101".node`, `["a b"].power`. */
export function fieldPath(parts: readonly string[]): string {
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
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(field, `expected a JSON object, got ${describe(v)}`);
    return v;
  }

  keys(obj: JsonObject, allowed: readonly string[], field: readonly string[]): void {
    for (const key of Object.keys(obj)) {
      if (!allowed.includes(key)) this.fail([...field, key], `unknown key (expected one of ${allowed.join(', ')})`);
    }
  }

  string(v: JsonValue | undefined, field: readonly string[], nonEmpty = true): string {
    if (typeof v !== 'string' || (nonEmpty && v === '')) this.fail(field, `expected a ${nonEmpty ? 'non-empty ' : ''}string, got ${describe(v)}`);
    return v;
  }

  oneOf(v: JsonValue | undefined, values: readonly string[], field: readonly string[]): string {
    if (typeof v !== 'string' || !values.includes(v)) this.fail(field, `expected one of ${values.join(', ')}, got ${describe(v)}`);
    return v;
  }

  /** A flag: 0, 1, true or false (also "0" and "1", as the PVE API sends them). */
  flag(v: JsonValue | undefined, field: readonly string[]): void {
    if (v === 0 || v === 1 || v === true || v === false || v === '0' || v === '1') return;
    this.fail(field, `expected a flag (0, 1, true or false), got ${describe(v)}`);
  }

  /** A whole number >= 0, as a JSON number or a string of digits. */
  count(v: JsonValue | undefined, field: readonly string[]): void {
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return;
    if (typeof v === 'string' && /^\d+$/.test(v)) return;
    this.fail(field, `expected a whole number >= 0, got ${describe(v)}`);
  }

  /** A finite number >= `min` (> `min` when `exclusive`), as a JSON number or a numeric string. */
  number(v: JsonValue | undefined, field: readonly string[], min = 0, exclusive = false): void {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(v) ? Number(v) : NaN;
    if (Number.isFinite(n) && (exclusive ? n > min : n >= min)) return;
    this.fail(field, `expected a finite number ${exclusive ? '>' : '>='} ${min}, got ${describe(v)}`);
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
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return JSON.stringify(v);
}

