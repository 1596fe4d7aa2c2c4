import { PolicyError } from './errors';
import { showValue } from './state';

/**
 * Settings of the variant stages come from the datacenter.cfg `crs` section (keys
 * `ha-auto-rebalance-*`, units of the `pve-9.2` profile), declared by each plug-in as key specs
 * ({@link NumberKeySpec}, {@link FlagKeySpec}, {@link ChoiceKeySpec}). Reading never throws for a
 * bad value: the value is reported as a {@link SettingProblem} naming the key, and the stage it
 * configures falls back to off. A host reads every plug-in's keys through a `PolicyRegistry`
 * (see `registry.ts`), which uses the readers of this file:
 *
 * ```ts
 * const registry = new PolicyRegistry([stablePlugin, pressurePlugin]); // the plug-ins it runs
 * const settings = registry.read(datacenterCfg.crs);  // the preset, then each plug-in's keys
 * for (const p of settings.problems) log(p.message);  // each naming its key
 * const pipeline = registry.pipeline(settings, reference);
 * ```
 */

/**
 * The `crs` keys the reference (Proxmox VE's HA manager) reads: the scheduler mode, its
 * balancing switches and the reference balancer's settings. No variant may use them.
 */
export const REFERENCE_CRS_KEYS: readonly string[] = [
  'ha',
  'ha-rebalance-on-start',
  'ha-auto-rebalance',
  'ha-auto-rebalance-threshold',
  'ha-auto-rebalance-method',
  'ha-auto-rebalance-hold-duration',
  'ha-auto-rebalance-margin',
];

/** The key selecting a preset of values for every variant stage. */
export const PRESET_KEY = 'ha-auto-rebalance-preset';
/** Known presets: `recommended` turns every variant stage on with the values each package documents. */
export const PRESETS = ['recommended'] as const;
export type RebalancePreset = (typeof PRESETS)[number];

/** A bad settings value: the key (dot path from datacenter.cfg), the raw value, and a log line. */
export interface SettingProblem {
  /** e.g. `crs.ha-auto-rebalance-backoff`. */
  readonly key: string;
  readonly value: unknown;
  /** e.g. `datacenter.cfg: invalid value 'x' for 'crs.ha-auto-rebalance-backoff' (...), falling back to 0 (off)`. */
  readonly message: string;
  /**
   * For a bad value of a key: what the key takes, e.g. `seconds, 0 to 3600` or `one of
   * imbalance, contention` (the text in parentheses of `message`). Absent for other problems.
   */
  readonly expected?: string;
}

/** The `crs` section, read once: the raw keys, the preset and the problems found so far. */
export interface CrsInput {
  /** The section as given; empty when it is missing or not an object. Read with `Object.hasOwn`. */
  readonly crs: Readonly<Record<string, unknown>>;
  readonly preset: RebalancePreset | undefined;
  readonly problems: readonly SettingProblem[];
}

/** A numeric key: a finite number (or a decimal string) in `min..max`, inclusive. */
export interface NumberKeySpec {
  readonly key: string;
  readonly type: 'number';
  /** Unit as a word for messages and docs, e.g. `seconds`, `percentage points`. */
  readonly unit: string;
  readonly min: number;
  readonly max: number;
  /** The value when the key is absent and no preset applies, and after a bad value: off. */
  readonly off: number;
  /** The value under `ha-auto-rebalance-preset: recommended`. */
  readonly recommended: number;
  readonly description: string;
  /** One line: why the recommended value (the evidence from the simulator scenarios, where there is some). */
  readonly why: string;
}

/** A 0/1 key: `0`, `1`, `'0'`, `'1'`, `false` or `true`. */
export interface FlagKeySpec {
  readonly key: string;
  readonly type: 'flag';
  readonly off: boolean;
  readonly recommended: boolean;
  readonly description: string;
  readonly why: string;
}

/** A key with a fixed set of words. */
export interface ChoiceKeySpec<C extends string = string> {
  readonly key: string;
  readonly type: 'choice';
  readonly choices: readonly C[];
  readonly off: C;
  readonly recommended: C;
  readonly description: string;
  readonly why: string;
}

export type CrsKeySpec = NumberKeySpec | FlagKeySpec | ChoiceKeySpec;

/** A strict decimal number: no hex, no blanks, no empty string (which `Number` would accept). */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A value as the messages of bad values quote it: `'abc'`, `'-1'`, `(an object)`. */
export function quoted(raw: unknown): string {
  return typeof raw === 'object' && raw !== null ? `(${showValue(raw)})` : `'${String(raw)}'`;
}

/** Reads the `crs` section and its preset. Never throws. */
export function readCrs(raw: unknown): CrsInput {
  const problems: SettingProblem[] = [];
  if (raw === undefined || raw === null) return { crs: {}, preset: undefined, problems };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({
      key: 'crs',
      value: raw,
      message: `datacenter.cfg: 'crs' must be an object, got ${showValue(raw)}; the balancer stages are off`,
    });
    return { crs: {}, preset: undefined, problems };
  }
  const crs = raw as Record<string, unknown>;
  const value = Object.hasOwn(crs, PRESET_KEY) ? crs[PRESET_KEY] : undefined;
  let preset: RebalancePreset | undefined;
  if (value !== undefined && value !== null && value !== '') {
    if ((PRESETS as readonly unknown[]).includes(value)) preset = value as RebalancePreset;
    else {
      problems.push({
        key: `crs.${PRESET_KEY}`,
        value,
        expected: `one of ${PRESETS.join(', ')}`,
        message: `datacenter.cfg: invalid value ${quoted(value)} for 'crs.${PRESET_KEY}' (one of ${PRESETS.join(', ')}), using no preset`,
      });
    }
  }
  return { crs, preset, problems };
}

/** The raw value of a key, or `undefined` when absent (`undefined`, `null` and `''` count as absent). */
function rawValue(input: CrsInput, key: string): unknown {
  const v = Object.hasOwn(input.crs, key) ? input.crs[key] : undefined;
  return v === null || v === '' ? undefined : v;
}

function problem(spec: CrsKeySpec, raw: unknown, expected: string, problems: SettingProblem[]): void {
  const fallback =
    spec.type === 'choice'
      ? `'${spec.off}' (the default)`
      : spec.type === 'flag'
        ? `${spec.off ? 1 : 0} (off)`
        : spec.off === 0
          ? '0 (off)'
          : `${spec.off} (the default)`;
  problems.push({
    key: `crs.${spec.key}`,
    value: raw,
    expected,
    message: `datacenter.cfg: invalid value ${quoted(raw)} for 'crs.${spec.key}' (${expected}), falling back to ${fallback}`,
  });
}

/** Reads a numeric key: absent → the preset's value or off; bad → off and a problem. */
export function readNumberKey(input: CrsInput, spec: NumberKeySpec, problems: SettingProblem[]): number {
  const raw = rawValue(input, spec.key);
  if (raw === undefined) return input.preset === 'recommended' ? spec.recommended : spec.off;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && DECIMAL.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(value) || value < spec.min || value > spec.max) {
    problem(spec, raw, `${spec.unit}, ${spec.min} to ${spec.max}`, problems);
    return spec.off;
  }
  return value;
}

/** Reads a 0/1 key: absent → the preset's value or off; bad → off and a problem. */
export function readFlagKey(input: CrsInput, spec: FlagKeySpec, problems: SettingProblem[]): boolean {
  const raw = rawValue(input, spec.key);
  if (raw === undefined) return input.preset === 'recommended' ? spec.recommended : spec.off;
  if (raw === 1 || raw === '1' || raw === true) return true;
  if (raw === 0 || raw === '0' || raw === false) return false;
  problem(spec, raw, '0 or 1', problems);
  return spec.off;
}

/** Reads a choice key: absent → the preset's value or the default; bad → the default and a problem. */
export function readChoiceKey<C extends string>(
  input: CrsInput,
  spec: ChoiceKeySpec<C>,
  problems: SettingProblem[],
): C {
  // an empty choice is no choice: said, not read as absent (a number or flag key left empty is unset)
  if (Object.hasOwn(input.crs, spec.key) && input.crs[spec.key] === '') {
    problem(spec, '', `one of ${spec.choices.join(', ')}`, problems);
    return spec.off;
  }
  const raw = rawValue(input, spec.key);
  if (raw === undefined) return input.preset === 'recommended' ? spec.recommended : spec.off;
  if ((spec.choices as readonly unknown[]).includes(raw)) return raw as C;
  problem(spec, raw, `one of ${spec.choices.join(', ')}`, problems);
  return spec.off;
}

/** The value a key spec reads to: a number, a flag, or one of its choices. */
export type CrsKeyValue<S extends CrsKeySpec> = S extends NumberKeySpec
  ? number
  : S extends FlagKeySpec
    ? boolean
    : S extends ChoiceKeySpec<infer C>
      ? C
      : never;

/** Reads one key by its spec's type ({@link readNumberKey}, {@link readFlagKey}, {@link readChoiceKey}). */
export function readKey<S extends CrsKeySpec>(input: CrsInput, spec: S, problems: SettingProblem[]): CrsKeyValue<S> {
  const value =
    spec.type === 'number'
      ? readNumberKey(input, spec, problems)
      : spec.type === 'flag'
        ? readFlagKey(input, spec, problems)
        : readChoiceKey(input, spec, problems);
  return value as CrsKeyValue<S>;
}

/**
 * Reads a plug-in's keys into its settings object, one field per key, in the order given: an
 * absent key takes the preset's value or off, an explicit one overrides the preset, a bad value
 * is a problem naming the key (in the order of the fields) and that field is off. Never throws.
 * How the registry reads each plug-in's settings (`PluginSettings` types them from the keys):
 *
 * ```ts
 * const { settings, problems } = readCrsKeys(input, { backoffSeconds: BACKOFF_KEY, memhost: MEMHOST_KEY });
 * // settings: { backoffSeconds: number; memhost: boolean }
 * ```
 */
export function readCrsKeys<F extends Readonly<Record<string, CrsKeySpec>>>(
  input: CrsInput,
  fields: F,
): { settings: { [K in keyof F]: CrsKeyValue<F[K]> }; problems: SettingProblem[] } {
  const problems: SettingProblem[] = [];
  const settings: Record<string, unknown> = {};
  for (const field of Object.keys(fields)) settings[field] = readKey(input, fields[field]!, problems);
  return { settings: settings as { [K in keyof F]: CrsKeyValue<F[K]> }, problems };
}

/**
 * Checks a number setting that a plug-in's `stages` receives against its key's range, as a
 * library argument (reading the keys never yields one outside it):
 * throws `PolicyError` `invalid-config`, e.g. `stable setting 'backoffSeconds' must be a finite
 * number in 0..3600 (seconds), got 'NaN'`. `what` names the setting.
 */
export function checkSettingRange(what: string, value: number, spec: NumberKeySpec): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < spec.min || value > spec.max) {
    throw new PolicyError(
      'invalid-config',
      `${what} must be a finite number in ${spec.min}..${spec.max} (${spec.unit}), got '${String(value)}'`,
    );
  }
}

/**
 * A JSON schema (draft 2020-12) of the given keys, for config validators and docs: each key
 * with its description, range and default (off). Numbers may also be decimal strings, as
 * datacenter.cfg stores them.
 */
export function crsJsonSchema(specs: readonly CrsKeySpec[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    [PRESET_KEY]: {
      description: 'preset of values for every variant stage; explicit keys override it',
      enum: [...PRESETS],
    },
  };
  for (const spec of specs) {
    if (spec.type === 'number') {
      properties[spec.key] = {
        description: `${spec.description} (${spec.unit}; ${spec.off} = off; recommended ${spec.recommended})`,
        anyOf: [
          { type: 'number', minimum: spec.min, maximum: spec.max },
          { type: 'string', pattern: DECIMAL.source },
        ],
        default: spec.off,
      };
    } else if (spec.type === 'flag') {
      properties[spec.key] = {
        description: `${spec.description} (0/1; recommended ${spec.recommended ? 1 : 0})`,
        enum: [0, 1, '0', '1', false, true],
        default: spec.off ? 1 : 0,
      };
    } else {
      properties[spec.key] = {
        description: `${spec.description} (recommended '${spec.recommended}')`,
        enum: [...spec.choices],
        default: spec.off,
      };
    }
  }
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties };
}
