import { PolicyError, type StageError } from './errors';
import {
  type Pipeline,
  type PipelineObjective,
  type ReferenceBalancerConfig,
  type StagePart,
  composePipeline,
} from './pipeline';
import { type HostNeeds, type PluginKeys, type PluginSettings, type PolicyPlugin, checkPlugin } from './plugin';
import {
  type CrsKeySpec,
  type RebalancePreset,
  type SettingProblem,
  crsJsonSchema,
  quoted,
  readCrs,
  readCrsKeys,
} from './settings';
import { showValue } from './state';

/** The settings of every plug-in of a registry, read from one `crs` section ({@link PolicyRegistry.read}). */
export interface PolicySettings {
  /** The preset in force (`ha-auto-rebalance-preset`), if any. */
  readonly preset: RebalancePreset | undefined;
  /** Each plug-in's settings by its name, in the registry's order (plain values: numbers, booleans, words). */
  readonly byPlugin: ReadonlyMap<string, PluginSettings<PluginKeys>>;
  /** Bad values, each naming its key: the preset's first, then each plug-in's in the registry's order. */
  readonly problems: readonly SettingProblem[];
  /**
   * Some key has a value other than its `off` value (explicitly or through the preset): a host
   * then explains its decisions not to act. With every key off the balancer is the reference's.
   */
  readonly active: boolean;
  /** Identifies these settings (equal settings, equal key): a host rebuilds its pipeline when it changes. */
  readonly key: string;
}

/** What every host flag of {@link HostNeeds} is for the settings in force. */
export type HostNeedsInForce = { readonly [K in keyof HostNeeds]-?: boolean };

const NO_NEEDS: HostNeedsInForce = {
  memhost: false,
  nodePressure: false,
  guestConfigs: false,
  planInput: false,
  migrationTasks: false,
};

/**
 * The policy plug-ins a host runs, checked once: every host reads the variants through one
 * (the keys it accepts, the settings, the pipeline, what it must provide, the description and
 * the JSON schema of the keys), so adding a variant touches its own package and the list of
 * built-in plug-ins, nothing else.
 *
 * The order of the plug-ins is the order of their keys, problems and description fragments, and
 * of their stage parts (which matters only between parts of one slot with the same `order`).
 */
export class PolicyRegistry {
  readonly plugins: readonly PolicyPlugin[];
  private readonly byKey = new Map<string, { readonly plugin: PolicyPlugin; readonly spec: CrsKeySpec }>();
  /** Every plug-in's settings when no key is set and no preset applies. */
  readonly off: PolicySettings;
  /** Sees the stage failures of this registry's pipelines (see {@link PolicyRegistry.reporting}). */
  private onStageError: ((err: StageError) => void) | undefined;

  /**
   * Checks each plug-in ({@link checkPlugin}, named by `origins[i]` when given, else by its
   * name) and that no two share a name or a key. Throws `PolicyError` `invalid-plugin`.
   */
  constructor(plugins: readonly unknown[], origins: readonly string[] = []) {
    const checked: PolicyPlugin[] = [];
    const names = new Map<string, string>();
    plugins.forEach((value, i) => {
      const named = (value as { name?: unknown } | null)?.name;
      const origin = origins[i] ?? (typeof named === 'string' && named !== '' ? named : `plug-in ${i + 1}`);
      const plugin = checkPlugin(value, origin);
      const other = names.get(plugin.name);
      if (other !== undefined)
        throw new PolicyError(
          'invalid-plugin',
          `plug-in '${origin}': 'name' '${plugin.name}' is also the name of plug-in '${other}'`,
        );
      names.set(plugin.name, origin);
      for (const [field, spec] of Object.entries(plugin.keys)) {
        const clash = this.byKey.get(spec.key);
        if (clash)
          throw new PolicyError(
            'invalid-plugin',
            `plug-in '${origin}': 'keys.${field}.key' '${spec.key}' is already a key of plug-in '${clash.plugin.name}'`,
          );
        this.byKey.set(spec.key, { plugin, spec });
      }
      checked.push(plugin);
    });
    this.plugins = checked;
    this.off = this.read(undefined);
  }

  /**
   * This registry with more plug-ins after its own (e.g. out-of-tree ones a host loaded), each
   * named by its origin in errors (the module it came from). Throws `PolicyError`
   * `invalid-plugin` for one that is not a plug-in or clashes with a plug-in before it.
   */
  with(plugins: readonly { readonly plugin: unknown; readonly origin: string }[]): PolicyRegistry {
    if (plugins.length === 0) return this;
    const next = new PolicyRegistry(
      [...this.plugins, ...plugins.map((p) => p.plugin)],
      [...this.plugins.map((p) => p.name), ...plugins.map((p) => p.origin)],
    );
    next.onStageError = this.onStageError;
    return next;
  }

  /**
   * This registry (the same plug-ins) with pipelines that show every `StageError` to
   * `listener` before they throw it (`PipelineOptions.onStageError`): for a host that runs the
   * pipeline through code that catches the error (the HA core's manager logs it and carries on,
   * as the reference does) and must still learn that a stage failed (the simulator's command
   * line). The listener is an observer: it must not throw.
   */
  reporting(listener: (err: StageError) => void): PolicyRegistry {
    const next = new PolicyRegistry(
      this.plugins,
      this.plugins.map((p) => p.name),
    );
    next.onStageError = listener;
    return next;
  }

  /** Every key of every plug-in, in the registry's order (for docs, schemas, key lists). */
  keys(): CrsKeySpec[] {
    return [...this.byKey.values()].map((k) => k.spec);
  }

  /** A key's spec, or `undefined` when no plug-in has it. */
  spec(key: string): CrsKeySpec | undefined {
    return this.byKey.get(key)?.spec;
  }

  /** The plug-in a key belongs to, or `undefined`. */
  pluginOf(key: string): PolicyPlugin | undefined {
    return this.byKey.get(key)?.plugin;
  }

  /**
   * Reads every plug-in's settings from a `crs` section (see `readCrs` and `readCrsKeys`):
   * absent keys take the preset's value or off, explicit ones override the preset, a bad value
   * is a problem naming the key and that setting is off. Never throws.
   */
  read(crs: unknown): PolicySettings {
    return this.readSettings(crs, true);
  }

  private readSettings(crs: unknown, withChecks: boolean): PolicySettings {
    const input = readCrs(crs);
    const problems: SettingProblem[] = [...input.problems];
    const byPlugin = new Map<string, PluginSettings<PluginKeys>>();
    let active = false;
    for (const plugin of this.plugins) {
      const read = readCrsKeys(input, plugin.keys);
      byPlugin.set(plugin.name, read.settings);
      problems.push(...read.problems, ...(withChecks ? checked(plugin, read.settings, input.crs) : []));
      for (const [field, spec] of Object.entries(plugin.keys))
        if ((read.settings as Record<string, unknown>)[field] !== spec.off) active = true;
    }
    return { preset: input.preset, byPlugin, problems, active, key: JSON.stringify([...byPlugin]) };
  }

  /** A plug-in's settings, typed by its keys. Throws `PolicyError` `invalid-plugin` for a plug-in not in the registry. */
  settingsOf<K extends PluginKeys>(settings: PolicySettings, plugin: PolicyPlugin<K>): PluginSettings<K> {
    const own = settings.byPlugin.get(plugin.name);
    if (own === undefined || !this.plugins.some((p) => p.name === plugin.name))
      throw new PolicyError('invalid-plugin', `plug-in '${plugin.name}' is not in this registry`);
    return own as PluginSettings<K>;
  }

  /**
   * The balancer for these settings: the reference stages, every plug-in's stage parts and the
   * objective one supplies (see `composePipeline`). Throws `PolicyError` `invalid-pipeline` for
   * two objectives or parts that do not fit, and `invalid-plugin` when a plug-in's function
   * throws or returns something else than its contract says (the message names the plug-in).
   * The pipeline knows the plug-in of each stage: its `StageError`s name it.
   */
  pipeline(settings: PolicySettings, reference: ReferenceBalancerConfig): Pipeline {
    const build = { reference };
    const parts: StagePart[] = [];
    const owners = new Map<string, string>();
    let objective: { readonly plugin: string; readonly value: PipelineObjective } | undefined;
    for (const plugin of this.plugins) {
      const own = this.own(settings, plugin);
      if (plugin.stages) {
        const list = call(plugin, 'stages', () => plugin.stages!(own, build));
        if (!Array.isArray(list)) throw badReturn(plugin, 'stages', 'an array of stage parts', list);
        list.forEach((part: unknown, i) => {
          const stage = (part as { stage?: unknown } | null)?.stage as { name?: unknown; run?: unknown } | undefined;
          if (typeof stage !== 'object' || stage === null || typeof stage.run !== 'function')
            throw badReturn(plugin, 'stages', `stage parts ({slot, order, stage}); part ${i} has no stage`, part);
          if (typeof stage.name === 'string') owners.set(stage.name, plugin.name);
        });
        parts.push(...(list as StagePart[]));
      }
      if (plugin.objective) {
        const value = call(plugin, 'objective', () => plugin.objective!(own, build));
        if (value === undefined) continue;
        if (typeof value !== 'object' || value === null)
          throw badReturn(plugin, 'objective', 'an objective or undefined', value);
        if (objective)
          throw new PolicyError(
            'invalid-pipeline',
            `plug-ins '${objective.plugin}' and '${plugin.name}' both supply an objective ('${objective.value.name}', '${value.name}')`,
          );
        objective = { plugin: plugin.name, value };
        for (const role of ['gate', 'hold', 'score', 'margin'] as const) {
          const name = (value[role] as { name?: unknown } | undefined)?.name;
          if (typeof name === 'string') owners.set(name, plugin.name);
        }
      }
    }
    return composePipeline(reference, parts, objective?.value, {
      owners,
      ...(this.onStageError ? { onStageError: this.onStageError } : {}),
    });
  }

  /** What the host must provide or do for these settings: every plug-in's {@link HostNeeds}, ORed. */
  needs(settings: PolicySettings): HostNeedsInForce {
    const out: { -readonly [K in keyof HostNeedsInForce]: boolean } = { ...NO_NEEDS };
    for (const plugin of this.plugins) {
      if (!plugin.needs) continue;
      const needs = call(plugin, 'needs', () => plugin.needs!(this.own(settings, plugin)));
      if (typeof needs !== 'object' || needs === null) throw badReturn(plugin, 'needs', 'an object', needs);
      for (const flag of Object.keys(NO_NEEDS) as (keyof HostNeedsInForce)[])
        if (needs[flag] === true) out[flag] = true;
    }
    return out;
  }

  /** One fragment per setting that is on, plug-in by plug-in (`backoff 60 s`, `check-migratable`). */
  describe(settings: PolicySettings): string[] {
    const out: string[] = [];
    for (const plugin of this.plugins) {
      if (!plugin.describe) continue;
      const list = call(plugin, 'describe', () => plugin.describe!(this.own(settings, plugin)));
      if (!Array.isArray(list) || !list.every((f) => typeof f === 'string'))
        throw badReturn(plugin, 'describe', 'an array of strings', list);
      out.push(...list);
    }
    return out;
  }

  /**
   * The problem with one value of a key (as {@link read} would report it), or `undefined` when
   * the key takes it or is not a plug-in's key. `value` is as a `crs` section holds it. The value
   * alone: what the plug-ins' checks say of settings together is not asked.
   */
  checkValue(key: string, value: unknown): SettingProblem | undefined {
    const settings = this.readSettings({ [key]: value }, false);
    return settings.problems[0];
  }

  /**
   * Why a host refuses this value of a key, as every host words it after the file and the key
   * (`<file>: policy.<key>: …`, `<file>: crs.<key>: …`, `'--set <key>=<value>': …`):
   * `invalid value 'abc' (seconds, 0 to 3600)`; `undefined` when the key takes it or is none of
   * the plug-ins' keys or the preset. One rule for every host: a bad value is refused where it
   * is loaded, never read as off (the fallback of {@link read} is for a running cluster's
   * `datacenter.cfg`, which a host cannot refuse).
   */
  refusal(key: string, value: unknown): string | undefined {
    const problem = this.checkValue(key, value);
    if (problem === undefined) return undefined;
    return problem.expected === undefined
      ? problem.message.replace(/^datacenter\.cfg: /, '')
      : `invalid value ${quoted(value)} (${problem.expected})`;
  }

  /** The JSON schema of every plug-in's keys and the preset (`crsJsonSchema`). */
  jsonSchema(): Record<string, unknown> {
    return crsJsonSchema(this.keys());
  }

  private own(settings: PolicySettings, plugin: PolicyPlugin): PluginSettings<PluginKeys> {
    const own = settings.byPlugin.get(plugin.name);
    if (own === undefined)
      throw new PolicyError(
        'invalid-plugin',
        `plug-in '${plugin.name}': no settings read for it (another registry's settings?)`,
      );
    return own;
  }
}

/** Runs a plug-in's function; an exception it throws becomes `invalid-plugin` naming it (the cause kept). */
function call<T>(plugin: PolicyPlugin, hook: string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof PolicyError && err.code !== 'invalid-config') throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new PolicyError('invalid-plugin', `plug-in '${plugin.name}': ${hook}() failed: ${message}`, { cause: err });
  }
}

/**
 * A plug-in's `check` of its settings (see `PolicyPlugin.check`). Never throws: reading settings
 * must not stop a round, so a check that throws or returns something else is itself a problem
 * naming the plug-in.
 */
function checked(
  plugin: PolicyPlugin,
  settings: PluginSettings<PluginKeys>,
  crs: Readonly<Record<string, unknown>>,
): SettingProblem[] {
  if (!plugin.check) return [];
  const explicit = (key: string): unknown => {
    const v = Object.hasOwn(crs, key) ? crs[key] : undefined;
    return v === null || v === '' ? undefined : v;
  };
  const fail = (what: string): SettingProblem[] => [
    { key: `plugin:${plugin.name}`, value: undefined, message: `plug-in '${plugin.name}': check() ${what}` },
  ];
  try {
    const list: unknown = plugin.check(settings, explicit);
    if (!Array.isArray(list)) return fail(`must return an array of problems, got ${showValue(list)}`);
    for (const p of list as unknown[]) {
      const ok =
        typeof p === 'object' &&
        p !== null &&
        typeof (p as SettingProblem).key === 'string' &&
        typeof (p as SettingProblem).message === 'string';
      if (!ok) return fail(`must return problems {key, value, message}, got ${showValue(p)}`);
    }
    return list as SettingProblem[];
  } catch (err) {
    return fail(`failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function badReturn(plugin: PolicyPlugin, hook: string, expected: string, got: unknown): PolicyError {
  return new PolicyError(
    'invalid-plugin',
    `plug-in '${plugin.name}': ${hook}() must return ${expected}, got ${showValue(got)}`,
  );
}
