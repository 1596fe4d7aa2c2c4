import { compareNames } from '@poise/usage';
/**
 * JSON text as Perl's `JSON->new->canonical->pretty->encode` writes it: keys sorted in byte
 * order, 3-space indent, `"key" : value`, empty containers as `{}` / `[]`, a final newline.
 * Non-ASCII characters are written as-is; `undefined` object members are omitted.
 */

const INDENT = '   ';

function encodeString(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (char === '"') out += '\\"';
    else if (char === '\\') out += '\\\\';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (char === '\b') out += '\\b';
    else if (char === '\f') out += '\\f';
    else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += char;
  }
  return `${out}"`;
}

function encodeNumber(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`cannot encode non-finite number ${value} as json`);
  if (Number.isInteger(value)) return String(value);
  // Perl prints NVs with %.15g.
  const text = value.toPrecision(15);
  return text.includes('e') ? String(Number(text)) : text.replace(/\.?0+$/, '');
}

function encode(value: unknown, depth: number): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return encodeNumber(value);
  if (typeof value === 'string') return encodeString(value);
  const inner = INDENT.repeat(depth + 1);
  const outer = INDENT.repeat(depth);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => inner + encode(item, depth + 1)).join(',\n')}\n${outer}]`;
  }
  if (value instanceof Map) return encode(Object.fromEntries(value), depth);
  if (value instanceof Set) return encode([...value], depth);
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort(compareNames);
  if (keys.length === 0) return '{}';
  const members = keys.map((key) => `${inner}${encodeString(key)} : ${encode(record[key], depth + 1)}`);
  return `{\n${members.join(',\n')}\n${outer}}`;
}

/** Canonical pretty JSON of `value`, ending in a newline. */
export function canonicalJson(value: unknown): string {
  return `${encode(value, 0)}\n`;
}
