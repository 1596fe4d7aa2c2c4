import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { BUILTIN_REGISTRY, loadPluginRegistry } from '@poise/ha';
import { PolicyError, type PolicyRegistry } from '@poise/policy';
import { ManagerError } from '../errors';
import { loadListenerSecurity } from './listener-security';
import {
  type ConfigFile,
  configSchema,
  configSchemaFor,
  DEFAULT_HOLD_ROUNDS,
  DEFAULT_MARGIN_PERCENT,
  DEFAULT_METHOD,
  DEFAULT_PRESET,
  DEFAULT_THRESHOLD_PERCENT,
  isKnownPolicyKey,
  POLICY_KEY_PATTERN,
  PLUGINS_KEY,
  policyKeyMessage,
  policySchema,
  policySchemaFor,
  type PresetChoice,
} from './schema';
import { compareNames } from '@poise/usage';

/** The reference balancer's keys (checked by the config schema). */
interface ReferencePolicy {
  /** Percent of the normalised imbalance (0..100). */
  readonly thresholdPercent: number;
  readonly method: 'bruteforce' | 'topsis';
  readonly holdRounds: number;
  /** Percent of the current imbalance. */
  readonly marginPercent: number;
}

/** A policy key's value as configured (variant values are checked later by their packages). */
type PolicyValue = string | number | boolean;

/**
 * Where policy keys come from, lowest first: poise-manager's defaults, the datacenter.cfg `crs`
 * of the simulator's case (`--sim`), the config file.
 */
export interface PolicySource {
  readonly kind: 'default' | 'case' | 'config';
  /** For messages: `poise-manager's defaults`, `the crs of '<case>/datacenter.cfg'`, `'<config file>'`. */
  readonly label: string;
  /**
   * How a message names a key of this source, before the key: `policy.` (the config file's
   * `policy` section; also the defaults), `'<case>/datacenter.cfg': crs.` (a case's).
   */
  readonly keyPath?: string;
}

/** A layer of policy keys: what one source sets. */
export interface PolicyLayer {
  readonly source: PolicySource;
  readonly values: ReadonlyMap<string, PolicyValue>;
}

/** The policy keys in force, each from the highest layer that sets it. */
export interface PolicyConfig {
  readonly reference: ReferencePolicy;
  /** `ha-auto-rebalance-preset` in force (`recommended` unless a layer says otherwise). */
  readonly preset: PresetChoice;
  /** Every key in force (reference keys, the preset, variant keys), by name in byte order. */
  readonly keys: ReadonlyMap<string, PolicyValue>;
  /** Where each key in force came from. */
  readonly origins: ReadonlyMap<string, PolicySource>;
  /** The layers it was resolved from, lowest first (the config file's is last). */
  readonly layers: readonly PolicyLayer[];
  /** `policy.plugins` as the config file names them (loaded at start; see {@link loadConfigPlugins}). */
  readonly plugins: readonly string[];
  /** The policy plug-ins in force: the built-in ones and those of `plugins`. */
  readonly registry: PolicyRegistry;
}

/** poise-manager's own policy defaults: the reference keys' defaults and the recommended preset. */
const DEFAULT_POLICY_LAYER: PolicyLayer = {
  source: { kind: 'default', label: "poise-manager's defaults" },
  values: new Map<string, PolicyValue>([
    ['ha-auto-rebalance-hold-duration', DEFAULT_HOLD_ROUNDS],
    ['ha-auto-rebalance-margin', DEFAULT_MARGIN_PERCENT],
    ['ha-auto-rebalance-method', DEFAULT_METHOD],
    ['ha-auto-rebalance-preset', DEFAULT_PRESET],
    ['ha-auto-rebalance-threshold', DEFAULT_THRESHOLD_PERCENT],
  ]),
};

/**
 * The policy of a stack of layers (lowest first): each key from the highest layer that sets it.
 * Layers are checked before they are stacked (see {@link policyLayer}).
 */
function resolvePolicy(
  layers: readonly PolicyLayer[],
  registry: PolicyRegistry = BUILTIN_REGISTRY,
  plugins: readonly string[] = [],
): PolicyConfig {
  const keys = new Map<string, PolicyValue>();
  const origins = new Map<string, PolicySource>();
  for (const layer of layers) {
    for (const [key, value] of layer.values) {
      keys.set(key, value);
      origins.set(key, layer.source);
    }
  }
  const sorted = new Map([...keys].sort(([a], [b]) => compareNames(a, b)));
  const ref = (key: string) => keys.get(key);
  return {
    reference: {
      thresholdPercent: ref('ha-auto-rebalance-threshold') as number,
      method: ref('ha-auto-rebalance-method') as ReferencePolicy['method'],
      holdRounds: ref('ha-auto-rebalance-hold-duration') as number,
      marginPercent: ref('ha-auto-rebalance-margin') as number,
    },
    preset: ref('ha-auto-rebalance-preset') as PresetChoice,
    keys: sorted,
    origins,
    layers: [...layers],
    plugins: [...plugins],
    registry,
  };
}

/**
 * Checks the `ha-auto-rebalance-*` keys and the plug-ins' keys (of `registry`) of one source (a
 * case's datacenter.cfg `crs`) as the config file's `policy` is checked, and makes a layer of
 * them; other keys (`ha`, `ha-auto-rebalance` itself) are not policy keys and are left out.
 * Throws `invalid-config` naming `<where>: <prefix><key>` for each bad value or unknown key.
 */
export function policyLayer(
  source: PolicySource,
  values: Readonly<Record<string, unknown>>,
  where: { file: string; prefix: string },
  registry: PolicyRegistry = BUILTIN_REGISTRY,
): PolicyLayer {
  const picked: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(values))
    if (POLICY_KEY_PATTERN.test(key) || registry.spec(key) !== undefined) picked[key] = values[key];
  const schema = registry === BUILTIN_REGISTRY ? policySchema : policySchemaFor(registry);
  const result = schema.safeParse({ ...picked }, { reportInput: true });
  const problems = [
    ...(result.success ? [] : formatIssues(result.error.issues)),
    ...Object.keys(picked)
      .filter((key) => !isKnownPolicyKey(key, registry))
      .map((key) => `${key}: ${policyKeyMessage(key, registry)}`),
  ];
  if (problems.length > 0)
    throw invalid(
      where.file,
      [...new Set(problems)].map((p) => `${where.prefix}${p}`),
    );
  return {
    source,
    values: new Map(
      Object.keys(picked)
        .sort()
        .map((key) => [key, picked[key] as PolicyValue]),
    ),
  };
}

/** The config with one more policy layer under the config file's (the case's datacenter.cfg of `--sim`). */
export function withPolicyLayer(config: ManagerConfig, layer: PolicyLayer | undefined): ManagerConfig {
  if (layer === undefined || layer.values.size === 0) return config;
  const layers = config.policy.layers;
  const file = layers.filter((l) => l.source.kind === 'config');
  const below = layers.filter((l) => l.source.kind !== 'config');
  return {
    ...config,
    policy: resolvePolicy([...below, layer, ...file], config.policy.registry, config.policy.plugins),
  };
}

/** The validated, normalised configuration the daemon runs with. */
export interface ManagerConfig {
  /** The file it came from (absolute), or `undefined` for the built-in defaults. */
  readonly file: string | undefined;
  readonly env: 'sim' | 'pve';
  readonly mode: 'observe' | 'act';
  readonly intervalSeconds: number;
  readonly pve: {
    readonly urls: readonly string[];
    readonly tokenFile: string | undefined;
    readonly tokenEnv: string | undefined;
    readonly timeoutSeconds: number;
    readonly tls: {
      readonly caFile: string | undefined;
      /** Upper-case, colon-separated. */
      readonly fingerprint: string | undefined;
      readonly insecureSkipVerify: boolean;
      readonly allowPlainHttp: boolean;
    };
  };
  readonly sim: { readonly caseDir: string | undefined; readonly speed: number };
  readonly policy: PolicyConfig;
  readonly guests: { readonly nonHa: boolean };
  /** `balancing.allow-partial-view`: decide even when a usable node was left out of the round. */
  readonly balancing: { readonly allowPartialView: boolean };
  readonly limits: {
    readonly maxMotionsInFlight: 1;
    readonly maxMotionsPerHour: number;
    readonly motionTimeoutSeconds: number;
    readonly pickupTimeoutSeconds: number;
    /** `limits.settle-time`. */
    readonly settleSeconds: number;
    /** `limits.max-failing-rounds`: rounds in a row with a failed policy stage before balancing stops. */
    readonly maxFailingRounds: number;
  };
  readonly metrics: {
    readonly enabled: boolean;
    readonly host: string;
    readonly port: number;
    /** `metrics.allowed-hosts`: lower-case, without a trailing dot or brackets. */
    readonly allowedHosts: readonly string[];
    /** `metrics.bearer-token-file` (absolute). At most one of it and `basicAuthFile`. */
    readonly bearerTokenFile: string | undefined;
    /** `metrics.basic-auth-file` (absolute). */
    readonly basicAuthFile: string | undefined;
    /** `metrics.tls`: both files, or `undefined` for plain HTTP. */
    readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
  };
  readonly statePath: string;
  readonly lock: { readonly enabled: boolean; readonly dir: string; readonly name: string };
  readonly log: { readonly format: 'auto' | 'json' | 'text'; readonly level: 'debug' | 'info' | 'warn' | 'error' };
}

/** A value that looks like a Proxmox VE API token (`user@realm!id=secret`) or a bare UUID. */
const TOKEN_LIKE = /[^\s@]+@[^\s!]+![^\s=]+=|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** How a bad value is shown in an error: short, quoted, and never something token-like. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    if (TOKEN_LIKE.test(value)) return 'a value that looks like an API token (not shown)';
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  return 'a mapping';
}

function dotPath(path: readonly PropertyKey[]): string {
  return path.length === 0
    ? '(top level)'
    : path
        .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
        .join('.')
        .replace(/\.\[/g, '[');
}

const TOKEN_HINT =
  "the API token goes in a file ('pve.token-file') or an environment variable ('pve.token-env'), never in this file";
/** Hints for keys people put in the wrong place (a Map: keys come from the file). */
const KEY_HINTS: ReadonlyMap<string, string> = new Map([
  ['token', TOKEN_HINT],
  ['secret', TOKEN_HINT],
  ['password', 'poise-manager authenticates with an API token only'],
]);

/** The `policy` mapping of the document itself, if it is one (the parsed output loses `__proto__`). */
function rawPolicy(doc: unknown): Record<string, unknown> | undefined {
  if (doc === null || typeof doc !== 'object' || !Object.hasOwn(doc, 'policy')) return undefined;
  const policy = (doc as { policy: unknown }).policy;
  return policy === null || typeof policy !== 'object' || Array.isArray(policy)
    ? undefined
    : (policy as Record<string, unknown>);
}

/** Policy keys this build and the plug-ins of `registry` do not apply, read from the document itself. */
function policyKeyProblems(doc: unknown, registry: PolicyRegistry): string[] {
  return Object.keys(rawPolicy(doc) ?? {})
    .filter((key) => key !== PLUGINS_KEY && !isKnownPolicyKey(key, registry))
    .map((key) => `policy.${key}: ${policyKeyMessage(key, registry)}`);
}

/** One line per problem: `<dot.path>: <what was expected>, got <value>`. */
function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const hint = KEY_HINTS.get(key.toLowerCase()) ?? KEY_HINTS.get(key.replace(/^.*-/, '').toLowerCase());
        lines.push(`${dotPath([...issue.path, key])}: unknown key${hint ? ` (${hint})` : ''}`);
      }
      continue;
    }
    if (issue.code === 'custom') {
      lines.push(`${dotPath(issue.path)}: ${issue.message}`);
      continue;
    }
    lines.push(`${dotPath(issue.path)}: ${issue.message}, got ${describeValue(issue.input)}`);
  }
  return [...new Set(lines)];
}

function normaliseFingerprint(fp: string): string {
  const hex = fp.replace(/:/g, '').toUpperCase();
  return hex.match(/../g)!.join(':');
}

/** `127.0.0.1:9879`, `[::1]:9879` → host and port (the form `LISTEN_ADDRESS` checks). */
export function parseListen(listen: string): { host: string; port: number } {
  const colon = listen.lastIndexOf(':');
  let host = listen.slice(0, colon);
  if (host.startsWith('[')) host = host.slice(1, -1);
  return { host, port: Number(listen.slice(colon + 1)) };
}

/** A host name as the Host header check compares it: lower-case, no trailing dot, no brackets. */
export function normaliseHostName(name: string): string {
  const lower = name.toLowerCase().replace(/\.$/, '');
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}

/** Cross-field rules on a parsed file; one message per problem, with dot paths. */
function crossFieldProblems(file: ConfigFile): string[] {
  const problems: string[] = [];
  const port = parseListen(file.metrics.listen).port;
  if (port > 65535) problems.push(`metrics.listen: expected a port from 0 to 65535, got ${port}`);
  if (file.metrics['bearer-token-file'] !== undefined && file.metrics['basic-auth-file'] !== undefined)
    problems.push(
      "metrics.bearer-token-file: expected at most one of 'metrics.bearer-token-file' and 'metrics.basic-auth-file', got both",
    );
  const tls = file.metrics.tls;
  if ((tls['cert-file'] === undefined) !== (tls['key-file'] === undefined)) {
    const [given, missing] = tls['cert-file'] === undefined ? ['key-file', 'cert-file'] : ['cert-file', 'key-file'];
    problems.push(`metrics.tls.${missing}: expected with 'metrics.tls.${given}' (both or neither), got nothing`);
  }
  if (file.env === 'pve') {
    if (file.pve.urls.length === 0) problems.push("pve.urls: expected at least one URL when env is 'pve', got nothing");
    const sources = [file.pve['token-file'], file.pve['token-env']].filter((v) => v !== undefined).length;
    if (sources !== 1) {
      problems.push(
        `pve.token-file: expected exactly one of 'pve.token-file' and 'pve.token-env' when env is 'pve', got ${sources === 0 ? 'neither' : 'both'}`,
      );
    }
  }
  file.pve.urls.forEach((url, i) => {
    if (url.startsWith('http://') && !file.pve.tls['allow-plain-http']) {
      problems.push(
        `pve.urls[${i}]: plain http:// sends the API token in clear; use https:// or set 'pve.tls.allow-plain-http: true'`,
      );
    }
  });
  if (file.pve.tls['insecure-skip-verify'] && file.pve.tls['ca-file'] !== undefined) {
    problems.push(
      "pve.tls.insecure-skip-verify: cannot be combined with 'pve.tls.ca-file' (either verify against the CA or do not verify)",
    );
  }
  return problems;
}

function resolvePath(base: string | undefined, path: string): string {
  return isAbsolute(path) || base === undefined ? path : resolve(dirname(base), path);
}

/** Normalises a parsed file: camelCase, parsed addresses, resolved relative paths (relative to the file). */
function normalise(
  file: ConfigFile,
  path: string | undefined,
  givenPolicyKeys: readonly string[],
  registry: PolicyRegistry,
): ManagerConfig {
  const policy = file.policy;
  const given = new Map<string, PolicyValue>();
  for (const key of [...givenPolicyKeys].sort())
    if (key !== PLUGINS_KEY && Object.hasOwn(policy, key)) given.set(key, policy[key] as PolicyValue);
  const fileLayer: PolicyLayer = {
    source: { kind: 'config', label: path === undefined ? 'the config' : `'${path}'` },
    values: given,
  };
  const listen = parseListen(file.metrics.listen);
  const fileRel = (p: string | undefined) => (p === undefined ? undefined : resolvePath(path, p));
  return {
    file: path,
    env: file.env,
    mode: file.mode,
    intervalSeconds: file.interval,
    pve: {
      urls: file.pve.urls.map((u) => u.replace(/\/+$/, '')),
      tokenFile: fileRel(file.pve['token-file']),
      tokenEnv: file.pve['token-env'],
      timeoutSeconds: file.pve.timeout,
      tls: {
        caFile: fileRel(file.pve.tls['ca-file']),
        fingerprint:
          file.pve.tls.fingerprint === undefined ? undefined : normaliseFingerprint(file.pve.tls.fingerprint),
        insecureSkipVerify: file.pve.tls['insecure-skip-verify'],
        allowPlainHttp: file.pve.tls['allow-plain-http'],
      },
    },
    sim: { caseDir: fileRel(file.sim['case-dir']), speed: file.sim.speed },
    policy: resolvePolicy([DEFAULT_POLICY_LAYER, fileLayer], registry, policy.plugins ?? []),
    guests: { nonHa: file.guests['non-ha'] },
    balancing: { allowPartialView: file.balancing['allow-partial-view'] },
    limits: {
      maxMotionsInFlight: file.limits['max-motions-in-flight'],
      maxMotionsPerHour: file.limits['max-motions-per-hour'],
      motionTimeoutSeconds: file.limits['motion-timeout'],
      pickupTimeoutSeconds: file.limits['pickup-timeout'],
      settleSeconds: file.limits['settle-time'],
      maxFailingRounds: file.limits['max-failing-rounds'],
    },
    metrics: {
      enabled: file.metrics.enabled,
      host: listen.host,
      port: listen.port,
      allowedHosts: [...new Set(file.metrics['allowed-hosts'].map(normaliseHostName))],
      bearerTokenFile: fileRel(file.metrics['bearer-token-file']),
      basicAuthFile: fileRel(file.metrics['basic-auth-file']),
      tls:
        file.metrics.tls['cert-file'] === undefined || file.metrics.tls['key-file'] === undefined
          ? undefined
          : {
              certFile: resolvePath(path, file.metrics.tls['cert-file']),
              keyFile: resolvePath(path, file.metrics.tls['key-file']),
            },
    },
    statePath: resolvePath(path, file.state.file),
    lock: { enabled: file.lock.enabled, dir: resolvePath(path, file.lock.dir), name: file.lock.name },
    log: file.log,
  };
}

/** Overrides applied after the file (command-line flags such as `--sim <dir>`). */
export interface ConfigOverrides {
  readonly env?: 'sim' | 'pve';
  readonly mode?: 'observe' | 'act';
  readonly simCaseDir?: string;
  /**
   * The case of `env: sim` when neither the file (`sim.case-dir`) nor `simCaseDir` names one:
   * the bundled scenario, as `--sim` without a directory runs it (resolved from the working
   * directory, as `simCaseDir`).
   */
  readonly defaultSimCaseDir?: string;
  /** `--speed`: `sim.speed`. */
  readonly simSpeed?: number;
  /** `--listen <host:port>`: `metrics.listen`, and the listener on (`metrics.enabled: true`). */
  readonly listen?: string;
}

/**
 * Validates a config document (the parsed YAML): parse → normalise → cross-field rules. The
 * policy keys are those of `registry`'s plug-ins (default the built-in ones; a document naming
 * `policy.plugins` is parsed with the registry {@link loadConfigPlugins} loaded for it).
 * Throws a {@link ManagerError} `invalid-config` whose message lists every problem, one per
 * line, as `<file>: <dot.path>: expected …, got …`.
 */
export function parseConfig(
  doc: unknown,
  source: string | undefined,
  overrides: ConfigOverrides = {},
  registry: PolicyRegistry = BUILTIN_REGISTRY,
): ManagerConfig {
  const label = source ?? '(defaults)';
  const raw = doc === null || doc === undefined ? {} : doc;
  const schema = registry === BUILTIN_REGISTRY ? configSchema : configSchemaFor(registry);
  const result = schema.safeParse(raw, { reportInput: true });
  const keyProblems = policyKeyProblems(raw, registry);
  if (!result.success || keyProblems.length > 0) {
    throw invalid(label, [...new Set([...formatIssues(result.success ? [] : result.error.issues), ...keyProblems])]);
  }
  const file: ConfigFile = {
    ...result.data,
    env: overrides.env ?? result.data.env,
    mode: overrides.mode ?? result.data.mode,
    sim: {
      ...result.data.sim,
      ...(overrides.simCaseDir === undefined ? {} : { 'case-dir': overrides.simCaseDir }),
      ...(overrides.simSpeed === undefined ? {} : { speed: overrides.simSpeed }),
      ...(overrides.simCaseDir === undefined &&
      result.data.sim['case-dir'] === undefined &&
      overrides.defaultSimCaseDir !== undefined
        ? { 'case-dir': overrides.defaultSimCaseDir }
        : {}),
    },
    metrics:
      overrides.listen === undefined
        ? result.data.metrics
        : { ...result.data.metrics, enabled: true, listen: overrides.listen },
  };
  const problems = crossFieldProblems(file);
  if (file.env === 'sim' && file.sim['case-dir'] === undefined) {
    problems.push("sim.case-dir: expected a case directory when env is 'sim', got nothing");
  }
  if (problems.length > 0) throw invalid(label, problems);
  const config = normalise(
    file,
    source === undefined ? undefined : resolve(source),
    Object.keys(rawPolicy(raw) ?? {}),
    registry,
  );
  // a --sim directory (or the bundled case) is relative to the working directory, not to the config file
  const given =
    overrides.simCaseDir ?? (result.data.sim['case-dir'] === undefined ? overrides.defaultSimCaseDir : undefined);
  if (given !== undefined) return { ...config, sim: { ...config.sim, caseDir: resolve(given) } };
  return config;
}

function invalid(label: string, problems: string[]): ManagerError {
  return new ManagerError('invalid-config', problems.map((p) => `${label}: ${p}`).join('\n'));
}

/** Reads and parses (YAML) a config file; throws `invalid-config` naming the file and the line. */
function readConfigDocument(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ManagerError('invalid-config', `${path}: cannot read the config file (${code ?? String(err)})`, {
      cause: err,
    });
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const lines = doc.errors.map((e) => {
      const pos = e.linePos?.[0];
      return `${path}:${pos ? `${pos.line}:${pos.col}` : '?'}: YAML: ${e.message.split('\n')[0]}`;
    });
    throw new ManagerError('invalid-config', lines.join('\n'));
  }
  return doc.toJS();
}

/**
 * Reads, parses (YAML) and validates a config file; see {@link parseConfig}. `registry`: the
 * plug-ins loaded for it ({@link loadConfigPlugins}; default the built-in ones). With the
 * listener on, the files its authentication and TLS name are read and checked too
 * (`loadListenerSecurity`).
 */
export function loadConfig(
  path: string,
  overrides: ConfigOverrides = {},
  registry: PolicyRegistry = BUILTIN_REGISTRY,
): ManagerConfig {
  const config = parseConfig(readConfigDocument(path), path, overrides, registry);
  // the listener's files are read at start: a file that cannot work is a config error here too
  // (--check-config, a reload), named with its key
  if (config.metrics.enabled) {
    try {
      loadListenerSecurity(config.metrics);
    } catch (err) {
      if (err instanceof ManagerError && err.code === 'invalid-config') throw invalid(path, err.message.split('\n'));
      throw err;
    }
  }
  return config;
}

/**
 * The modules a config file's `policy.plugins` names, as given (`[]` when it names none).
 * Throws `invalid-config` naming the file and the field for a value that is not a list of
 * module names (the rest of the file is checked by {@link loadConfig}).
 */
export function configPluginModules(path: string): string[] {
  const plugins = rawPolicy(readConfigDocument(path))?.[PLUGINS_KEY];
  if (plugins === undefined || plugins === null) return [];
  if (!Array.isArray(plugins))
    throw new ManagerError(
      'invalid-config',
      `${path}: policy.plugins: expected a list of modules, got ${describeValue(plugins)}`,
    );
  return plugins.map((m: unknown, i) => {
    if (typeof m !== 'string' || m === '')
      throw new ManagerError(
        'invalid-config',
        `${path}: policy.plugins[${i}]: expected a module (a path relative to this file, or a package name), got ${describeValue(m)}`,
      );
    return m;
  });
}

/**
 * Loads the policy plug-ins a config file names (`policy.plugins`: paths relative to the file,
 * or package names resolved from its directory) into a registry after the built-in ones. Throws
 * a {@link ManagerError} `invalid-config` naming the file, the field and the module for one that
 * cannot be loaded or is not a plug-in (`<file>: policy.plugins[0]: plug-in './x.js': 'keys.on.type' must be …`).
 */
export async function loadConfigPlugins(path: string): Promise<PolicyRegistry> {
  const modules = configPluginModules(path);
  const from = dirname(resolve(path));
  let registry = BUILTIN_REGISTRY;
  for (const [i, module] of modules.entries()) {
    try {
      registry = await loadPluginRegistry([module], from, registry);
    } catch (err) {
      if (err instanceof PolicyError && err.code === 'invalid-plugin')
        throw new ManagerError('invalid-config', `${path}: policy.plugins[${i}]: ${err.message}`, { cause: err });
      throw err;
    }
  }
  return registry;
}

/** The built-in defaults with overrides (no config file given). */
export function defaultConfig(overrides: ConfigOverrides = {}): ManagerConfig {
  return parseConfig({}, undefined, overrides);
}
