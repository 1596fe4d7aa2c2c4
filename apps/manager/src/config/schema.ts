import { isIP } from 'node:net';
import { BUILTIN_REGISTRY } from '@poise/ha';
import { PRESET_KEY, type PolicyRegistry } from '@poise/policy';
import { z } from 'zod';

// The one definition of poise-manager's config file: keys, defaults, ranges and descriptions.
// The JSON schema (config.schema.json) is generated from it (`poise-manager --print-schema`).
// Error messages are written here so that every bad value reads the same way:
// `<dot.path>: expected <what>, got <value>` (see ./load.ts).

/** Seconds between two rounds by default (the reference CRM works in ~10 s rounds). */
const DEFAULT_INTERVAL_SECONDS = 10;
/** The shortest and longest round interval accepted. */
const MIN_INTERVAL_SECONDS = 1;
const MAX_INTERVAL_SECONDS = 3600;
/** Reference balancer defaults in the pve-9.2 units (percent of the normalised imbalance). */
export const DEFAULT_THRESHOLD_PERCENT = 30;
export const DEFAULT_MARGIN_PERCENT = 10;
export const DEFAULT_HOLD_ROUNDS = 3;
export const DEFAULT_METHOD = 'bruteforce';
/** Motions the daemon issues per sliding hour at most. */
const DEFAULT_MAX_MOTIONS_PER_HOUR = 10;
/** After this long without an outcome a motion is reported failed and no longer followed. */
const DEFAULT_MOTION_TIMEOUT_SECONDS = 3600;
/**
 * An HA motion not seen moving this long after the request was dropped by the CRM (it reads
 * `crm_commands` every ~10 s round; a few rounds of slack).
 */
const DEFAULT_PICKUP_TIMEOUT_SECONDS = 120;
/**
 * After a node failed or came back, or an HA service went through fencing, recovery or another
 * change poise did not make, no motion is requested for this long after the last change (the
 * HA manager's own moves settle, fresh telemetry arrives).
 */
const DEFAULT_SETTLE_SECONDS = 120;
const MAX_SETTLE_SECONDS = 3600;
/**
 * Rounds in a row whose policy stage failed (a plug-in's stage threw, returned something else
 * than its contract says, or kept state that is not JSON) before the daemon stops balancing
 * until a reload or a restart: a few, so that one bad round is not the end, but a broken stage
 * does not fill the log for hours.
 */
const DEFAULT_MAX_FAILING_ROUNDS = 5;
const MAX_FAILING_ROUNDS = 1000;
/** Per-request timeout of the Proxmox VE API client. */
const DEFAULT_API_TIMEOUT_SECONDS = 10;
const DEFAULT_METRICS_LISTEN = '127.0.0.1:9879';
export const DEFAULT_STATE_FILE = '/var/lib/poise-manager/state.json';
/** Where pmxcfs keeps cluster-wide locks (the reference CRM's `ha_manager_lock` lives there). */
const DEFAULT_LOCK_DIR = '/etc/pve/priv/lock';
const DEFAULT_LOCK_NAME = 'poise-manager';
/** Prefix of the datacenter.cfg `crs` balancer keys accepted under `policy`. */
const POLICY_KEY_PREFIX = 'ha-auto-rebalance-';
export const POLICY_KEY_PATTERN = /^ha-auto-rebalance-[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** The keys the reference pipeline reads (checked by this schema). */
export const REFERENCE_POLICY_KEYS: readonly string[] = [
  'ha-auto-rebalance-hold-duration',
  'ha-auto-rebalance-margin',
  'ha-auto-rebalance-method',
  'ha-auto-rebalance-threshold',
];
/**
 * `ha-auto-rebalance-preset` values: `recommended` (every variant stage on at its recommended
 * value), `reference` or its alias `none` (no preset: every variant stage off unless its key is
 * set, i.e. exactly the reference balancer of Proxmox VE 9.2).
 */
const PRESET_CHOICES = ['recommended', 'reference', 'none'] as const;
export type PresetChoice = (typeof PRESET_CHOICES)[number];
/** poise-manager balances with the best policy the project knows unless told otherwise. */
export const DEFAULT_PRESET: PresetChoice = 'recommended';
/**
 * `policy.plugins`: the out-of-tree policy plug-ins to load (modules, paths relative to the config
 * file). A name under `policy` that is not a policy key.
 */
export const PLUGINS_KEY = 'plugins';
/**
 * Every policy key a registry's plug-ins apply, with the reference's and the preset, in byte
 * order. Any other key under `policy` (but `plugins`) is an error.
 */
function knownPolicyKeys(registry: PolicyRegistry = BUILTIN_REGISTRY): string[] {
  return [...REFERENCE_POLICY_KEYS, PRESET_KEY, ...registry.keys().map((k) => k.key)].sort();
}
/** Every policy key this build applies with its built-in plug-ins (see {@link knownPolicyKeys}). */
export const KNOWN_POLICY_KEYS: readonly string[] = knownPolicyKeys();
/** A misspelt key is named with the known key at most this many edits away. */
const SUGGESTION_MAX_EDITS = 3;

const HTTP_URL = /^https?:\/\/[^\s/]+(?::\d+)?(?:\/[^\s]*)?$/;
const FINGERPRINT = /^(?:[0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$|^[0-9A-Fa-f]{64}$/;
const LOCK_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `host:port` of a listener: a name or IPv4 address, or an IPv6 address in brackets. */
export const LISTEN_ADDRESS = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;

/** A mapping of settings (unknown keys are errors). */
function section<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.strictObject(shape, { error: 'expected a mapping of settings' });
}

function num(what: string) {
  return z.number({ error: `expected ${what}` });
}

function bool() {
  return z.boolean({ error: 'expected true or false' });
}

function str(what = 'a string') {
  return z.string({ error: `expected ${what}` }).min(1, { error: `expected ${what}, not empty` });
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `expected one of ${values.map((v) => `'${v}'`).join(', ')}` });
}

const tlsSchema = section({
  'ca-file': str('a file path')
    .optional()
    .describe('PEM file of the CA that signed the node certificates; on a cluster node /etc/pve/pve-root-ca.pem.'),
  fingerprint: z
    .string({ error: 'expected a SHA-256 fingerprint' })
    .regex(FINGERPRINT, { error: 'expected a SHA-256 fingerprint (64 hex digits, colons allowed)' })
    .optional()
    .describe(
      'SHA-256 fingerprint of the node certificate to pin (as `pvenode cert info` or GET /nodes/{node}/certificates/info gives it). With ca-file both are checked; alone, exactly this certificate is accepted (self-signed clusters: the chain is not checked, the pin names the certificate).',
    ),
  'insecure-skip-verify': bool()
    .default(false)
    .describe(
      'Do not verify the certificate chain. Without a fingerprint nothing is verified (logged loudly at start); with one, only the pin is checked, as with the fingerprint alone.',
    ),
  'allow-plain-http': bool()
    .default(false)
    .describe('Allow http:// URLs (no TLS at all; the token travels in clear). Logged loudly at start.'),
}).describe('TLS verification of the Proxmox VE API. Verified against the system CAs by default.');

const pveSchema = section({
  urls: z
    .array(
      z
        .string({ error: 'expected a URL' })
        .regex(HTTP_URL, { error: 'expected an https:// URL like https://node1:8006' }),
      {
        error: 'expected a list of URLs',
      },
    )
    .default([])
    .describe('API base URLs of one or more cluster nodes (https://<node>:8006), tried in order for failover.'),
  'token-file': str('a file path')
    .optional()
    .describe(
      'File holding the API token as USER@REALM!TOKENID=SECRET (mode 0600). Exactly one of token-file and token-env.',
    ),
  'token-env': z
    .string({ error: 'expected an environment variable name' })
    .regex(ENV_NAME, { error: 'expected an environment variable name' })
    .optional()
    .describe('Name of the environment variable holding the API token (USER@REALM!TOKENID=SECRET).'),
  timeout: num('a number of seconds > 0')
    .positive({ error: 'expected a number of seconds > 0' })
    .max(300, { error: 'expected a number of seconds ≤ 300' })
    .default(DEFAULT_API_TIMEOUT_SECONDS)
    .describe('Per-request timeout in seconds.'),
  tls: tlsSchema.prefault({}),
}).describe('The Proxmox VE cluster (env: pve).');

const simSchema = section({
  'case-dir': str('a directory path')
    .optional()
    .describe('Simulator test-case directory (the poise-sim format) to run the daemon against.'),
  speed: num('a number ≥ 0')
    .min(0, { error: 'expected a number ≥ 0' })
    .default(0)
    .describe('Time acceleration: simulated seconds per real second; 0 runs as fast as possible.'),
}).describe('The embedded simulator (env: sim).');

/** Edits (insert, delete, substitute) between two strings. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** The known policy key closest to a misspelt one, if one is close. */
function closestPolicyKey(key: string, registry: PolicyRegistry = BUILTIN_REGISTRY): string | undefined {
  let best: { key: string; edits: number } | undefined;
  for (const known of knownPolicyKeys(registry)) {
    const edits = editDistance(key, known);
    if (edits <= SUGGESTION_MAX_EDITS && (best === undefined || edits < best.edits)) best = { key: known, edits };
  }
  return best?.key;
}

/** Whether `key` is a policy key of this build and the plug-ins of `registry`. */
export function isKnownPolicyKey(key: string, registry: PolicyRegistry = BUILTIN_REGISTRY): boolean {
  return REFERENCE_POLICY_KEYS.includes(key) || key === PRESET_KEY || registry.spec(key) !== undefined;
}

/** Why a key under `policy` is refused (the keys of `registry`'s plug-ins are known). */
export function policyKeyMessage(key: string, registry: PolicyRegistry = BUILTIN_REGISTRY): string {
  if (key === 'ha-auto-rebalance') {
    return "unknown policy key: 'ha-auto-rebalance' switches the cluster's own balancer; poise balances by running (mode: observe|act)";
  }
  const suggestion = closestPolicyKey(key, registry);
  if (suggestion !== undefined) return `unknown policy key (did you mean '${suggestion}'?)`;
  if (POLICY_KEY_PATTERN.test(key))
    return `unknown policy key (this build applies ${knownPolicyKeys(registry)
      .map((k) => `'${k}'`)
      .join(', ')})`;
  // keys of out-of-tree plug-ins need not start with the prefix: name them beside it
  const other = registry
    .keys()
    .map((k) => k.key)
    .filter((k) => !POLICY_KEY_PATTERN.test(k));
  return other.length === 0
    ? `unknown policy key (expected a datacenter.cfg crs key '${POLICY_KEY_PREFIX}*')`
    : `unknown policy key (expected a datacenter.cfg crs key '${POLICY_KEY_PREFIX}*' or a plug-in's key: ${other.map((k) => `'${k}'`).join(', ')})`;
}

/** A value of a policy key the variant packages validate later (datacenter.cfg values are strings). */
const policyValue = z.union([z.string(), z.number(), z.boolean()], {
  error: 'expected a string, number or boolean',
});

/**
 * The `policy` section for the plug-ins of `registry`: the reference keys and the preset
 * checked here, `plugins` (modules), and every plug-in key as a datacenter.cfg value (its
 * plug-in judges it when the policy is built); any other key is an error.
 */
export function policySchemaFor(registry: PolicyRegistry) {
  return z
    .object(
      {
        'ha-auto-rebalance-threshold': num('a number from 0 to 100')
          .min(0, { error: 'expected a number from 0 to 100' })
          .max(100, { error: 'expected a number from 0 to 100' })
          .default(DEFAULT_THRESHOLD_PERCENT)
          .describe(
            'Balance only while the node imbalance is above this, in percent of the normalised imbalance (pve-9.2 units).',
          ),
        'ha-auto-rebalance-method': oneOf(['bruteforce', 'topsis'])
          .default(DEFAULT_METHOD)
          .describe(
            'How migrations are scored: the lowest imbalance after the move (bruteforce) or TOPSIS over 4 criteria.',
          ),
        'ha-auto-rebalance-hold-duration': num('an integer ≥ 0')
          .int({ error: 'expected an integer ≥ 0' })
          .min(0, { error: 'expected an integer ≥ 0' })
          .default(DEFAULT_HOLD_ROUNDS)
          .describe('Rounds the imbalance must stay above the threshold before a motion (0 or 1: at once).'),
        'ha-auto-rebalance-margin': num('a number from 0 to 100')
          .min(0, { error: 'expected a number from 0 to 100' })
          .max(100, { error: 'expected a number from 0 to 100' })
          .default(DEFAULT_MARGIN_PERCENT)
          .describe('Move only when the imbalance improves by at least this, in percent of the current imbalance.'),
        [PLUGINS_KEY]: z
          .array(str('a module (a path relative to this file, or a package name)'), {
            error: 'expected a list of modules',
          })
          .optional()
          .describe(
            'Out-of-tree policy plug-ins to load at start: modules by path (relative to this file) or package name. Their keys are policy keys like the built-in ones; changing the list needs a restart.',
          ),
        [PRESET_KEY]: oneOf(PRESET_CHOICES)
          .default(DEFAULT_PRESET)
          .describe(
            'recommended: every variant stage on at its recommended value (explicit keys override it); reference or none: no preset, every variant stage off unless its key is set (exactly the reference balancer of Proxmox VE 9.2).',
          ),
      },
      { error: 'expected a mapping of settings' },
    )
    .catchall(policyValue)
    .superRefine((value, ctx) => {
      for (const key of Object.keys(value)) {
        if (key === PLUGINS_KEY) continue;
        if (!isKnownPolicyKey(key, registry)) {
          ctx.addIssue({ code: 'custom', path: [key], input: undefined, message: policyKeyMessage(key, registry) });
          continue;
        }
        // a plug-in's key: its value judged by its plug-in, and refused here (never read as off)
        const refusal = registry.spec(key) === undefined ? undefined : registry.refusal(key, value[key]);
        if (refusal !== undefined) ctx.addIssue({ code: 'custom', path: [key], input: value[key], message: refusal });
      }
    })
    .describe(
      "The balancer policy, keyed like the datacenter.cfg 'crs' options (pve-9.2 units). The reference keys and the preset are checked here, the variant keys (backoff, cooldown, …) by their plug-ins; a bad value or an unknown key is an error.",
    );
}

/** The `policy` section with the built-in plug-ins. */
export const policySchema = policySchemaFor(BUILTIN_REGISTRY);

const limitsSchema = section({
  'max-motions-in-flight': z
    .literal(1, { error: 'expected 1 (one motion at a time is all that is supported)' })
    .default(1)
    .describe('Motions in flight at once; only 1 is supported.'),
  'max-motions-per-hour': num('an integer ≥ 1')
    .int({ error: 'expected an integer ≥ 1' })
    .min(1, { error: 'expected an integer ≥ 1' })
    .default(DEFAULT_MAX_MOTIONS_PER_HOUR)
    .describe('Motions issued per sliding hour at most; further decisions are logged and skipped.'),
  'motion-timeout': num('a number of seconds > 0')
    .positive({ error: 'expected a number of seconds > 0' })
    .default(DEFAULT_MOTION_TIMEOUT_SECONDS)
    .describe('A motion without an outcome after this many seconds is reported failed and no longer followed.'),
  'pickup-timeout': num('a number of seconds > 0')
    .positive({ error: 'expected a number of seconds > 0' })
    .default(DEFAULT_PICKUP_TIMEOUT_SECONDS)
    .describe('An HA motion not seen moving this many seconds after the request was dropped by the HA manager.'),
  'settle-time': num(`a number of seconds from 0 to ${MAX_SETTLE_SECONDS}`)
    .min(0, { error: `expected a number of seconds from 0 to ${MAX_SETTLE_SECONDS}` })
    .max(MAX_SETTLE_SECONDS, { error: `expected a number of seconds from 0 to ${MAX_SETTLE_SECONDS}` })
    .default(DEFAULT_SETTLE_SECONDS)
    .describe(
      'While a node is not online (offline, unknown, fenced, gone) or an HA service is being fenced, recovered, frozen, started or stopped, no motion is requested; nor for this many seconds after the last such change.',
    ),
  'max-failing-rounds': num(`an integer from 1 to ${MAX_FAILING_ROUNDS}`)
    .int({ error: `expected an integer from 1 to ${MAX_FAILING_ROUNDS}` })
    .min(1, { error: `expected an integer from 1 to ${MAX_FAILING_ROUNDS}` })
    .max(MAX_FAILING_ROUNDS, { error: `expected an integer from 1 to ${MAX_FAILING_ROUNDS}` })
    .default(DEFAULT_MAX_FAILING_ROUNDS)
    .describe(
      'After this many rounds in a row in which a policy stage failed (threw, returned a wrong result, kept state that is not JSON), the daemon stops balancing with one error naming the plug-in and the stage, until a reload (SIGHUP) or a restart; it still follows a motion in flight, holds or yields the lock and reads the cluster every round.',
    ),
}).describe('Safety limits on what the daemon does.');

/** A host name: labels of letters, digits and `-` between dots, a trailing dot allowed (an IPv4 address is one too). */
const HOST_NAME =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** An entry of `metrics.allowed-hosts`: a host name, an IPv4 address, or an IPv6 address (bare or in brackets). */
function isHostName(value: string): boolean {
  return HOST_NAME.test(value) || isIP(value.replace(/^\[(.*)\]$/, '$1')) === 6;
}

const metricsTlsSchema = section({
  'cert-file': str('a file path')
    .optional()
    .describe(
      'PEM file of the certificate (and its chain) the listener presents; with key-file, it serves HTTPS only.',
    ),
  'key-file': str('a file path').optional().describe('PEM file of the private key of cert-file (mode 0600).'),
}).describe('TLS for the listener (both files or neither). Off by default: plain HTTP.');

const metricsSchema = section({
  enabled: bool().default(true).describe('Serve Prometheus metrics (/metrics) and a JSON status (/status).'),
  listen: z
    .string({ error: 'expected host:port' })
    .regex(LISTEN_ADDRESS, { error: 'expected host:port, e.g. 127.0.0.1:9879 or [::1]:9879' })
    .default(DEFAULT_METRICS_LISTEN)
    .describe(
      'Address to listen on; loopback by default. Beyond loopback set bearer-token-file or basic-auth-file (a warning at start otherwise).',
    ),
  'allowed-hosts': z
    .array(
      z.string({ error: 'expected a host name or address' }).refine(isHostName, {
        error: (issue) =>
          `expected a host name or address without a port, e.g. poise.example.org, got ${JSON.stringify(issue.input)}`,
      }),
      { error: 'expected a list of host names' },
    )
    .default([])
    .describe(
      "Names (and addresses) besides the listen address that a request's Host header may carry: the names the page and Prometheus reach this daemon by. Any other Host is refused (421): a page of another origin cannot read the listener through DNS rebinding.",
    ),
  'bearer-token-file': str('a file path')
    .optional()
    .describe(
      'File holding a token (one line, mode 0600) every request must send as `Authorization: Bearer <token>` (Prometheus: authorization.credentials_file). At most one of bearer-token-file and basic-auth-file.',
    ),
  'basic-auth-file': str('a file path')
    .optional()
    .describe(
      'htpasswd-style file of `user:hash` lines ({SHA} or $scrypt$ hashes) every request must match with HTTP basic authentication (browsers, Prometheus basic_auth).',
    ),
  tls: metricsTlsSchema.prefault({}),
}).describe('The listener: the status page, its JSON endpoints, /status and Prometheus /metrics.');

const stateSchema = section({
  file: str('a file path')
    .default(DEFAULT_STATE_FILE)
    .describe(
      'State file (stage state, the motion in flight), written atomically after each change. For active/standby put it on the cluster file system, e.g. /etc/pve/priv/poise-manager/state.json.',
    ),
}).describe('Persistent state.');

const lockSchema = section({
  enabled: bool().default(true).describe('Take the active/standby lock before acting (env: pve).'),
  dir: str('a directory path')
    .default(DEFAULT_LOCK_DIR)
    .describe(
      'Lock directory; on pmxcfs (/etc/pve/...) a lock is a directory, taken over after 120 s without refresh.',
    ),
  name: z
    .string({ error: 'expected a lock name' })
    .regex(LOCK_NAME, { error: 'expected a lock name of letters, digits, _ . - (no slash)' })
    .default(DEFAULT_LOCK_NAME)
    .describe('Name of the lock directory.'),
}).describe('Active/standby: one instance acts at a time.');

const logSchema = section({
  format: oneOf(['auto', 'json', 'text'])
    .default('auto')
    .describe('auto: readable text on a terminal, JSON lines otherwise.'),
  level: oneOf(['debug', 'info', 'warn', 'error']).default('info').describe('Lowest level written.'),
}).describe('Logging (to stdout).');

const guestsSchema = section({
  'non-ha': bool()
    .default(false)
    .describe(
      'Also balance running guests that are not HA resources (through the guest migrate endpoint and its precondition check).',
    ),
}).describe('Which guests are balanced.');

const balancingSchema = section({
  'allow-partial-view': bool()
    .default(false)
    .describe(
      'Decide motions even when a usable node was left out of the round (a value out of range, stats missing): the imbalance is then that of the other nodes. Off: such a round decides nothing and says why.',
    ),
}).describe('How balancing treats an incomplete read of the cluster.');

/** The config file's definition for the policy plug-ins of `registry` (see {@link policySchemaFor}). */
export function configSchemaFor(registry: PolicyRegistry, policy = policySchemaFor(registry)) {
  return section({
    env: oneOf(['sim', 'pve'])
      .default('sim')
      .describe('Where the cluster is: the embedded simulator or a Proxmox VE cluster.'),
    mode: oneOf(['observe', 'act'])
      .default('observe')
      .describe('observe: log what would be done and change nothing; act: request the motions.'),
    interval: num(`a number of seconds from ${MIN_INTERVAL_SECONDS} to ${MAX_INTERVAL_SECONDS}`)
      .min(MIN_INTERVAL_SECONDS, {
        error: `expected a number of seconds from ${MIN_INTERVAL_SECONDS} to ${MAX_INTERVAL_SECONDS}`,
      })
      .max(MAX_INTERVAL_SECONDS, {
        error: `expected a number of seconds from ${MIN_INTERVAL_SECONDS} to ${MAX_INTERVAL_SECONDS}`,
      })
      .default(DEFAULT_INTERVAL_SECONDS)
      .describe('Seconds between rounds (hold-duration counts these rounds).'),
    pve: pveSchema.prefault({}),
    sim: simSchema.prefault({}),
    policy: policy.prefault({}),
    guests: guestsSchema.prefault({}),
    balancing: balancingSchema.prefault({}),
    limits: limitsSchema.prefault({}),
    metrics: metricsSchema.prefault({}),
    state: stateSchema.prefault({}),
    lock: lockSchema.prefault({}),
    log: logSchema.prefault({}),
  }).describe('poise-manager configuration (YAML).');
}

/** The config file's definition with the built-in plug-ins. */
export const configSchema = configSchemaFor(BUILTIN_REGISTRY, policySchema);

/** The config file as parsed (kebab-case keys, defaults filled in). */
export type ConfigFile = z.output<typeof configSchema>;

/**
 * The JSON schema of the config file, generated from {@link configSchemaFor} for the plug-ins of
 * `registry` (default the built-in ones): under `policy`, every key those plug-ins apply with its
 * range, default and description (`PolicyRegistry.jsonSchema`), and no other.
 */
export function configJsonSchema(registry: PolicyRegistry = BUILTIN_REGISTRY): Record<string, unknown> {
  const policy = registry === BUILTIN_REGISTRY ? policySchema : policySchemaFor(registry);
  const variants = registry.jsonSchema() as { properties: Record<string, unknown> };
  const schema = z.toJSONSchema(configSchemaFor(registry, policy), {
    io: 'input',
    target: 'draft-2020-12',
    override: (ctx) => {
      if (ctx.zodSchema === policy) {
        const properties = ctx.jsonSchema.properties as Record<string, unknown>;
        for (const [key, property] of Object.entries(variants.properties))
          if (!Object.hasOwn(properties, key)) properties[key] = property;
        ctx.jsonSchema.additionalProperties = false;
      }
    },
  }) as Record<string, unknown>;
  return { ...schema, title: 'poise-manager configuration' };
}
