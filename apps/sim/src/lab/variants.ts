import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { BUILTIN_REGISTRY } from '@poise/ha';
import type { PolicyRegistry } from '@poise/policy';
import { MAX_SEED, SimError, crsKeys, parseCrsOverride } from '@poise/sim';
import { z } from 'zod';
import { LabError } from './errors';

/** A datacenter.cfg value as the case files carry it. */
export type CrsValue = string | number | boolean;

/** A named set of `crs` overrides applied on top of a scenario's datacenter.cfg. */
export interface Variant {
  name: string;
  crs: Record<string, CrsValue>;
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

const CRS_VALUE = z.union(
  [z.string(), z.number().refine(Number.isFinite, { message: 'expected a finite number' }), z.boolean()],
  {
    error: 'expected a string, number or boolean',
  },
);

/** A value for a message: `1e999` and `.inf` read as Infinity and are said as such. */
function describeValue(v: unknown): string {
  if (v === Infinity) return 'a number too large for a double (1e999 and .inf read as Infinity)';
  if (v === -Infinity) return 'a negative number too large for a double (read as -Infinity)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v === undefined) return String(v);
  return typeof v; // a function or a symbol: no YAML value is one
}

function isPlainMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The problem with one `crs` key and value as the simulator judges it (`parseCrsOverride` of
 * `@poise/sim`, the rules of `poise-sim --set`: the keys a case may set with the plug-ins of
 * `registry`, the case loader's rules for the reference keys, the HA core's ranges for the
 * balancer's variant keys), or undefined.
 */
export function crsProblem(
  key: string,
  value: CrsValue,
  registry: PolicyRegistry = BUILTIN_REGISTRY,
): string | undefined {
  const known = crsKeys(registry);
  if (!known.includes(key)) return `unknown crs key '${key}' (known: ${known.join(', ')})`;
  const text = `${key}=${String(value)}`;
  try {
    parseCrsOverride(text, registry);
    return undefined;
  } catch (err) {
    if (!(err instanceof SimError)) throw err;
    const prefix = `'--set ${text}': `;
    return err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  }
}

/**
 * Parses a variants document (YAML or JSON): a map of variant name → map of `crs` key → value,
 * e.g. `defaults: {}` / `recommended: {ha-auto-rebalance-preset: recommended}`. Variants keep
 * the file's order (the first is listed first in the report). Every key and value is checked
 * as the simulator will apply it ({@link crsProblem}); an empty string removes the scenario's
 * own value of the key (its default applies). The keys are those of the plug-ins of `registry`
 * (default the built-in ones). Throws {@link LabError} `bad-variants` naming `file` and the field.
 */
export function parseVariants(text: string, file: string, registry: PolicyRegistry = BUILTIN_REGISTRY): Variant[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new LabError('bad-variants', `'${file}': invalid YAML: ${(err as Error).message.split('\n')[0]}`, {
      cause: err,
    });
  }
  const fail = (field: string, why: string) => new LabError('bad-variants', `'${file}' ${field}: ${why}`);
  if (!isPlainMap(doc)) throw fail('(top level)', 'expected a map of variant name → crs keys');
  // Object.entries, not a zod record: a record drops keys such as '__proto__', which are valid names
  const variants: Variant[] = [];
  const known = crsKeys(registry);
  for (const [name, crs] of Object.entries(doc)) {
    if (!NAME.test(name)) throw fail(name, 'a variant name is letters, digits, dot, dash or underscore');
    if (!isPlainMap(crs)) throw fail(name, 'expected a map of crs key → value (use {} for none)');
    const copy: Record<string, CrsValue> = Object.create(null) as Record<string, CrsValue>;
    for (const [key, value] of Object.entries(crs)) {
      if (!known.includes(key)) throw fail(name, `unknown crs key '${key}' (known: ${known.join(', ')})`);
      // `1e999` and `.inf` read as Infinity, which is a number, but no finite one
      if (typeof value === 'number' && !Number.isFinite(value))
        throw fail(`${name}.${key}`, `expected a finite number, got ${describeValue(value)}`);
      const res = CRS_VALUE.safeParse(value);
      if (!res.success) throw fail(`${name}.${key}`, `${res.error.issues[0]!.message}, got ${describeValue(value)}`);
      const problem = crsProblem(key, res.data, registry);
      if (problem !== undefined) throw fail(`${name}.${key}`, problem);
      copy[key] = res.data;
    }
    variants.push({ name, crs: copy });
  }
  if (variants.length === 0) throw new LabError('bad-variants', `'${file}': no variants`);
  return variants;
}

/** Reads a variants file (the keys of `registry`'s plug-ins); an unreadable file is a {@link LabError} naming it. */
export function readVariants(file: string, registry: PolicyRegistry = BUILTIN_REGISTRY): Variant[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new LabError('bad-variants', `cannot read '${file}': ${(err as Error).message}`, { cause: err });
  }
  return parseVariants(text, file, registry);
}

/** Largest seed list `parseSeeds` accepts. */
const MAX_SEEDS = 10_000;

/**
 * `1..20` (inclusive range), `1,5,9`, or a mix (`1..3,10`): integers 0..2^32−1 (the
 * simulator's seeds, `MAX_SEED`), unique, returned ascending. Throws {@link LabError} `bad-seeds`.
 */
export function parseSeeds(spec: string): number[] {
  const seeds = new Set<number>();
  const bad = (why: string) =>
    new LabError('bad-seeds', `--seeds '${spec}': ${why} (expected e.g. '1..20' or '1,5,9')`);
  if (spec.trim() === '') throw bad('empty');
  for (const part of spec.split(',')) {
    const p = part.trim();
    const range = /^(\d+)\.\.(\d+)$/.exec(p);
    if (range) {
      const a = Number(range[1]);
      const b = Number(range[2]);
      if (b < a) throw bad(`range '${p}' runs backwards`);
      if (b - a + 1 > MAX_SEEDS) throw bad(`more than ${MAX_SEEDS} seeds`);
      for (let s = a; s <= b; s++) {
        if (seeds.has(s)) throw bad(`seed ${s} given twice`);
        seeds.add(s);
      }
    } else if (/^\d+$/.test(p)) {
      if (seeds.has(Number(p))) throw bad(`seed ${Number(p)} given twice`);
      seeds.add(Number(p));
    } else {
      throw bad(`'${p}' is not a seed or a range`);
    }
    if (seeds.size > MAX_SEEDS) throw bad(`more than ${MAX_SEEDS} seeds`);
  }
  for (const s of seeds)
    if (!Number.isSafeInteger(s) || s > MAX_SEED) throw bad(`seed ${s} is too large (at most ${MAX_SEED})`);
  return [...seeds].sort((a, b) => a - b);
}
