/**
 * zod building blocks for Proxmox VE replies and their quirks: numbers that arrive as strings,
 * 0/1 (or "0"/"1") booleans, keys that are omitted or `null` when unset, names that arrive as
 * numbers. Every block rejects what it cannot read exactly (no NaN, no Infinity, no guessing).
 */
import { z } from 'zod';
import { PveApiError } from './errors';

const NUMERIC = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/** A finite number, sent as a JSON number or a numeric string (`"800.000"`). */
export const num = z
  .union([z.number(), z.string().regex(NUMERIC).transform(Number)], { error: 'expected a number' })
  .pipe(z.number({ error: 'expected a finite number' }));

/** A finite number ≥ 0. */
export const nonNeg = num.refine((v) => v >= 0, { error: 'expected a number ≥ 0' });

/** An integer (JSON number or integer string). */
export const int = num.refine((v) => Number.isInteger(v), { error: 'expected an integer' });

/** An integer ≥ 0. */
export const count = int.refine((v) => v >= 0, { error: 'expected an integer ≥ 0' });

/** A PSI avg10 value in percent, 0..100. */
export const percent = num.refine((v) => v >= 0 && v <= 100, { error: 'expected a percentage 0..100' });

/** A boolean sent as 0/1, "0"/"1" or true/false. */
export const bool01 = z
  .union([z.literal(0), z.literal(1), z.literal('0'), z.literal('1'), z.boolean()], { error: 'expected 0 or 1' })
  .transform((v) => v === 1 || v === '1' || v === true);

/**
 * A Perl boolean passed through as it is (`JSON::XS` of a `PVE::Cluster` check): `"1"` (or 1,
 * true) is true; `""`, `"0"`, 0, false are false; `null` (or a missing key) is `undefined`:
 * the check itself failed (spec §3.5, `quorum.quorate`).
 */
export const perlBool = z
  .union(
    [z.literal(0), z.literal(1), z.literal('0'), z.literal('1'), z.literal(''), z.boolean(), z.null(), z.undefined()],
    {
      error: 'expected a Perl boolean ("1", "", 0, 1 or null)',
    },
  )
  .transform((v) => (v === null || v === undefined ? undefined : v === 1 || v === '1' || v === true));

/** A string (a JSON number is accepted and turned into its decimal text, as Perl may send names like `100`). */
export const text = z.union([z.string(), z.number().transform((v) => String(v))], { error: 'expected a string' });

/** A non-empty string. */
export const name = text.refine((v) => v.length > 0, { error: 'expected a non-empty string' });

/** `schema`, or `undefined` when the key is absent or `null`. */
export function opt<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => (v ?? undefined) as z.output<T> | undefined);
}

/** An object (unknown extra keys are accepted and dropped). */
export function obj<S extends z.ZodRawShape>(shape: S) {
  return z.object(shape, { error: 'expected an object' });
}

/** An array. */
export function arr<T extends z.ZodType>(item: T) {
  return z.array(item, { error: 'expected an array' });
}

/** A JSON object used as a map (keys from input, e.g. node names) → `Map`, in key order of the reply. */
export function mapOf<T extends z.ZodType>(value: T) {
  return z
    .record(z.string(), value, { error: 'expected an object' })
    .transform((rec) => new Map<string, z.output<T>>(Object.entries(rec) as [string, z.output<T>][]));
}

/** A comma/semicolon/space separated list (`tags`, `resources`), or an array of strings. */
export const list = z
  .union([z.string(), z.array(text)], { error: 'expected a list' })
  .transform((v) => (Array.isArray(v) ? v : v.split(/[;,\s]+/)).filter((s) => s.length > 0));

function preview(value: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** `data[3].maxmem` from a zod path under `prefix`. */
function dotPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_][\w-]*$/.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let v = data;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** `(qemu/213)` when the first path element indexes a row that has an `id`, `sid` or `vmid`. */
function rowLabel(data: unknown, path: readonly PropertyKey[]): string {
  if (!Array.isArray(data) || typeof path[0] !== 'number') return '';
  const row = data[path[0]] as Record<string, unknown> | undefined;
  if (!row || typeof row !== 'object') return '';
  const id = row.id ?? row.sid ?? row.vmid ?? row.rule ?? row.group;
  return typeof id === 'string' || typeof id === 'number' ? ` (${String(id)})` : '';
}

/**
 * Parse a reply's `data` with `schema`, or throw a `bad-reply` error naming the endpoint and the
 * dot path of the first bad field (and how many more there are).
 */
export function decode<T extends z.ZodType>(
  schema: T,
  data: unknown,
  where: { endpoint: string; baseUrl?: string },
): z.output<T> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  throw replyError(result.error.issues, data, where);
}

/** Build the `bad-reply` error for zod issues found in `data`. */
function replyError(
  issues: readonly z.core.$ZodIssue[],
  data: unknown,
  where: { endpoint: string; baseUrl?: string },
): PveApiError {
  const issue = issues[0]!;
  const path = issue.path;
  const field = dotPath('data', path);
  const value = valueAt(data, path);
  const expected = issue.message.replace(/^Invalid input: /, '');
  const what = value === undefined ? `is missing (${expected})` : `${expected}, got ${preview(value)}`;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  const via = where.baseUrl ? ` via ${where.baseUrl}` : '';
  return new PveApiError(
    'bad-reply',
    `${where.endpoint}${via}: reply field '${field}'${rowLabel(data, path)} ${what}${more}`,
    {
      endpoint: where.endpoint,
      baseUrl: where.baseUrl,
      field,
    },
  );
}

/**
 * Parse a Proxmox VE property string (`ha=dynamic,ha-rebalance-on-start=1`). A part without `=`
 * is the value of `defaultKey`. Returns `undefined` for a malformed string (empty key, a key
 * twice, two default values).
 */
export function parsePropertyString(value: string, defaultKey?: string): Map<string, string> | undefined {
  const out = new Map<string, string>();
  for (const part of value.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    const key = eq < 0 ? defaultKey : item.slice(0, eq).trim();
    const val = eq < 0 ? item : item.slice(eq + 1).trim();
    if (!key || out.has(key)) return undefined;
    out.set(key, val);
  }
  return out;
}
