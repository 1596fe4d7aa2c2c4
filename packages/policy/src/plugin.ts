import { PolicyError } from './errors';
import { showValue } from './state';
import { PRESET_KEY, REFERENCE_CRS_KEYS, type CrsKeySpec, type CrsKeyValue, type SettingProblem } from './settings';
import type { PipelineObjective, ReferenceBalancerConfig, StagePart } from './pipeline';

/**
 * A policy variant as a plug-in: a plain object, as ESLint, Rollup and Vite plug-ins are. It
 * names its keys (datacenter.cfg `crs` keys, or poise-manager `policy` keys), the stages its
 * settings turn on, the objective it supplies, and what a host must know to run it. Hosts (the
 * HA core in the simulator, poise-manager, `poise-sim --set`, case files, lab variants files,
 * the config schema, the man page) read every variant through a {@link PolicyRegistry}; none
 * knows a variant by name.
 *
 * A plug-in needs this package for its types only (`import type`; a peer dependency): a host
 * loads one by path with nothing installed in the plug-in's folder, so it must not rely on
 * `instanceof` of this package's classes. A stage signals invalid host data by throwing an
 * `Error` whose `code` is `invalid-input` (see `Stage`).
 *
 * ```ts
 * import type { PolicyPlugin } from '@poise/policy';
 * const FREEZE = { key: 'freeze', type: 'flag', off: false, recommended: false, description: '…', why: '…' } as const;
 * export default {
 *   name: 'freeze',
 *   keys: { freeze: FREEZE },
 *   stages: (settings) => (settings.freeze ? [{ slot: 'gate', order: 0, stage: freezeGate }] : []),
 *   describe: (settings) => (settings.freeze ? ['freeze'] : []),
 * } satisfies PolicyPlugin<{ freeze: typeof FREEZE }>;
 * ```
 */
export interface PolicyPlugin<K extends PluginKeys = PluginKeys> {
  /** Unique among the plug-ins a host runs, e.g. `stable` or the npm package name; for messages. */
  readonly name: string;
  /**
   * Its keys by the field of its settings each fills. The settings are read from them (see
   * `readCrsKeys`): an absent key takes the preset's value (`recommended`) or `off`, an explicit
   * one overrides the preset, a bad value is a problem naming the key and the field is `off`.
   * Key names are lower-case words joined by `-` (e.g. `ha-auto-rebalance-backoff`, `freeze`),
   * unique across the plug-ins and none of the reference's `crs` keys ({@link REFERENCE_CRS_KEYS},
   * the preset).
   */
  readonly keys: K;
  /**
   * The stages the settings turn on, in their slots (see `composePipeline`); none when every
   * setting is off. Throws only for settings the reading never yields.
   */
  stages?(settings: PluginSettings<K>, build: PluginBuild): readonly StagePart[];
  /**
   * The objective the settings select, or `undefined` for the imbalance (the reference's). At
   * most one plug-in supplies one in a pipeline.
   */
  objective?(settings: PluginSettings<K>, build: PluginBuild): PipelineObjective | undefined;
  /** What a host must provide or do for these settings (see {@link HostNeeds}); default nothing. */
  needs?(settings: PluginSettings<K>): HostNeeds;
  /**
   * The settings for a one-line description of the policy in force, one fragment per setting
   * that is on (`backoff 60 s`, `check-migratable`); none when every setting is off.
   */
  describe?(settings: PluginSettings<K>): readonly string[];
  /**
   * Problems of the settings together that no single key shows: a key set where it has no
   * effect (`contention-min-gain` beside the `imbalance` objective). `explicit` says whether a
   * key was written in the section (not taken from the preset or its default). Each problem is
   * logged like a bad value's, naming the key; the settings stay as read. Default: none.
   */
  check?(settings: PluginSettings<K>, explicit: (key: string) => unknown): readonly SettingProblem[];
}

/** A plug-in's keys, by the field of its settings each fills. */
export type PluginKeys = Readonly<Record<string, CrsKeySpec>>;

/** A plug-in's settings: one field per key, of the key's type (number, boolean, or one of its choices). */
export type PluginSettings<K extends PluginKeys> = { readonly [F in keyof K]: CrsKeyValue<K[F]> };

/** What a plug-in's stages and objective are built with. */
export interface PluginBuild {
  /** The reference settings in force, as fractions of the imbalance (`composePipeline`'s). */
  readonly reference: ReferenceBalancerConfig;
}

/**
 * What a host must provide or do for a plug-in's settings, beyond the reference's context.
 * Every flag defaults to `false`; a host ORs them over the plug-ins.
 */
export interface HostNeeds {
  /**
   * The usage model takes a guest's host-side memory footprint (`memhost`) where the guest
   * reports one, instead of the memory the guest sees (a host concern: which value it feeds).
   */
  readonly memhost?: boolean;
  /**
   * Decisions read node pressure (PSI): after a motion a host that caches telemetry waits for
   * the pressure from after it.
   */
  readonly nodePressure?: boolean;
  /** Stages read guest configurations (`BalanceContext.guestConfig`): a host fetches them. */
  readonly guestConfigs?: boolean;
  /** Stages read the whole cluster (`BalanceContext.planInput`): a host builds it. */
  readonly planInput?: boolean;
  /** Stages read finished migrations (`BalanceContext.migrationTasks`): a host fetches them. */
  readonly migrationTasks?: boolean;
}

/**
 * Types a plug-in: returns it as given (an identity, as `defineConfig` of Vite). The settings
 * its functions receive are typed from its keys.
 */
export function definePlugin<const K extends PluginKeys>(plugin: PolicyPlugin<K>): PolicyPlugin<K> {
  return plugin;
}

/** A key name: lower-case letters and digits, words joined by `-`. */
export const PLUGIN_KEY_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const HOOKS = ['stages', 'objective', 'needs', 'describe', 'check'] as const;

/**
 * Checks that `value` is a policy plug-in, and returns it typed. Throws `PolicyError`
 * `invalid-plugin` naming `origin` (the module it came from, or the plug-in's name) and the
 * field: `plug-in './freeze.js': 'keys.freeze.type' must be 'number', 'flag' or 'choice', got
 * "bool"`. Checks the shape only: clashes between plug-ins are the registry's.
 */
export function checkPlugin(value: unknown, origin: string): PolicyPlugin {
  const fail = (field: string, expected: string, got: unknown): never => {
    throw new PolicyError(
      'invalid-plugin',
      `plug-in '${origin}': '${field}' must be ${expected}, got ${showValue(got)}`,
    );
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new PolicyError('invalid-plugin', `plug-in '${origin}': expected an object, got ${showValue(value)}`);
  const plugin = value as Record<string, unknown>;
  if (typeof plugin.name !== 'string' || plugin.name === '') fail('name', 'a non-empty string', plugin.name);
  const keys = plugin.keys;
  if (typeof keys !== 'object' || keys === null || Array.isArray(keys))
    fail('keys', 'an object of key specs by settings field', keys);
  for (const [field, spec] of Object.entries(keys as Record<string, unknown>))
    checkKeySpec(spec, `keys.${field}`, fail);
  for (const hook of HOOKS) {
    if (plugin[hook] !== undefined && typeof plugin[hook] !== 'function') fail(hook, 'a function', plugin[hook]);
  }
  return value as PolicyPlugin;
}

type Fail = (field: string, expected: string, got: unknown) => never;

/** Checks one key spec (see `CrsKeySpec`), naming the field `at` (e.g. `keys.backoffSeconds`). */
function checkKeySpec(value: unknown, at: string, fail: Fail): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(at, 'a key spec (an object)', value);
  const spec = value as Record<string, unknown>;
  const key = spec.key;
  if (typeof key !== 'string' || !PLUGIN_KEY_PATTERN.test(key))
    fail(`${at}.key`, 'a key name of lower-case words joined by - (e.g. freeze)', key);
  if (key === PRESET_KEY || REFERENCE_CRS_KEYS.includes(key))
    fail(`${at}.key`, "a key of the plug-in's own (not one of the reference's crs keys or the preset)", key);
  for (const text of ['description', 'why'] as const)
    if (typeof spec[text] !== 'string' || spec[text] === '') fail(`${at}.${text}`, 'a non-empty string', spec[text]);
  if (spec.type === 'number') {
    if (typeof spec.unit !== 'string' || spec.unit === '') fail(`${at}.unit`, 'a non-empty string', spec.unit);
    const number = (name: 'min' | 'max' | 'off' | 'recommended') => {
      const v = spec[name];
      if (typeof v !== 'number' || !Number.isFinite(v)) fail(`${at}.${name}`, 'a finite number', v);
      return v;
    };
    const min = number('min');
    const max = number('max');
    if (max < min) fail(`${at}.max`, `a number >= min (${min})`, max);
    for (const name of ['off', 'recommended'] as const) {
      const v = number(name);
      if (v < min || v > max) fail(`${at}.${name}`, `a number in ${min}..${max}`, v);
    }
  } else if (spec.type === 'flag') {
    for (const name of ['off', 'recommended'] as const)
      if (typeof spec[name] !== 'boolean') fail(`${at}.${name}`, 'a boolean', spec[name]);
  } else if (spec.type === 'choice') {
    const choices = spec.choices;
    if (!Array.isArray(choices) || choices.length === 0) fail(`${at}.choices`, 'a non-empty array of words', choices);
    const seen = new Set<string>();
    (choices as unknown[]).forEach((c, i) => {
      if (typeof c !== 'string' || c === '' || seen.has(c))
        fail(`${at}.choices.${i}`, 'a non-empty word not listed before', c);
      seen.add(c);
    });
    for (const name of ['off', 'recommended'] as const)
      if (typeof spec[name] !== 'string' || !seen.has(spec[name]))
        fail(`${at}.${name}`, 'one of its choices', spec[name]);
  } else {
    fail(`${at}.type`, "'number', 'flag' or 'choice'", spec.type);
  }
}
