import { createHash, createPrivateKey } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateCertificates } from '@poise/pve-api/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManagerError } from '../errors';
import { loadListenerSecurity } from './listener-security';
import { defaultConfig, describeValue, loadConfig, parseConfig, policyLayer, withPolicyLayer } from './load';
import { configJsonSchema, DEFAULT_STATE_FILE, KNOWN_POLICY_KEYS } from './schema';

const APP = resolve(__dirname, '../..');
const PVE_MIN = { env: 'pve', pve: { urls: ['https://node1:8006'], 'token-env': 'POISE_TOKEN' } };

function problems(doc: unknown): string[] {
  try {
    parseConfig(doc, 'test.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(ManagerError);
    expect((err as ManagerError).code).toBe('invalid-config');
    return (err as Error).message.split('\n');
  }
  throw new Error('expected the config to be refused');
}

describe('config defaults', () => {
  it('fills in every default, with threshold and margin in percent (pve-9.2 units)', () => {
    const c = parseConfig(PVE_MIN, undefined);
    expect(c.mode).toBe('observe');
    expect(c.intervalSeconds).toBe(10);
    expect(c.policy.reference).toEqual({
      thresholdPercent: 30,
      method: 'bruteforce',
      holdRounds: 3,
      marginPercent: 10,
    });
    expect(c.limits).toEqual({
      maxMotionsInFlight: 1,
      maxMotionsPerHour: 10,
      motionTimeoutSeconds: 3600,
      pickupTimeoutSeconds: 120,
      settleSeconds: 120,
      maxFailingRounds: 5,
    });
    expect(c.metrics).toEqual({
      enabled: true,
      host: '127.0.0.1',
      port: 9879,
      allowedHosts: [],
      bearerTokenFile: undefined,
      basicAuthFile: undefined,
      tls: undefined,
    });
    expect(c.statePath).toBe(DEFAULT_STATE_FILE);
    expect(c.lock).toEqual({ enabled: true, dir: '/etc/pve/priv/lock', name: 'poise-manager' });
    expect(c.guests.nonHa).toBe(false);
    expect(c.pve.tls).toEqual({
      caFile: undefined,
      fingerprint: undefined,
      insecureSkipVerify: false,
      allowPlainHttp: false,
    });
  });

  it('keeps every known policy key as given, and says where each came from', () => {
    const c = parseConfig(
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-backoff': '90', 'ha-auto-rebalance-preset': 'reference' } },
      '/etc/poise/c.yaml',
    );
    expect(c.policy.keys.get('ha-auto-rebalance-backoff')).toBe('90');
    expect(c.policy.preset).toBe('reference');
    expect(c.policy.keys.get('ha-auto-rebalance-threshold')).toBe(30);
    expect(c.policy.origins.get('ha-auto-rebalance-threshold')).toEqual({
      kind: 'default',
      label: "poise-manager's defaults",
    });
    expect(c.policy.origins.get('ha-auto-rebalance-backoff')).toEqual({ kind: 'config', label: "'/etc/poise/c.yaml'" });
  });

  it('the default preset is recommended', () => {
    const c = parseConfig(PVE_MIN, undefined);
    expect(c.policy.preset).toBe('recommended');
    expect(c.policy.origins.get('ha-auto-rebalance-preset')?.kind).toBe('default');
  });

  it("a case's crs keys go between the defaults and the config file; other crs keys are not policy keys", () => {
    const c = parseConfig({ ...PVE_MIN, policy: { 'ha-auto-rebalance-margin': 20 } }, '/etc/c.yaml');
    const layer = policyLayer(
      { kind: 'case', label: 'the case' },
      { ha: 'dynamic', 'ha-auto-rebalance': 1, 'ha-auto-rebalance-margin': 5, 'ha-auto-rebalance-hold-duration': 6 },
      { file: 'dc.cfg', prefix: 'crs.' },
    );
    expect([...layer.values.keys()]).toEqual(['ha-auto-rebalance-hold-duration', 'ha-auto-rebalance-margin']);
    const layered = withPolicyLayer(c, layer);
    expect(layered.policy.reference).toMatchObject({ holdRounds: 6, marginPercent: 20 });
    expect(layered.policy.origins.get('ha-auto-rebalance-hold-duration')?.kind).toBe('case');
    expect(layered.policy.origins.get('ha-auto-rebalance-margin')?.kind).toBe('config');
    expect(withPolicyLayer(layered, undefined)).toBe(layered);
  });

  it.each([
    [
      { 'ha-auto-rebalance-hold-duration': -2 },
      'dc.cfg: crs.ha-auto-rebalance-hold-duration: expected an integer ≥ 0, got -2',
    ],
    [
      { 'ha-auto-rebalance-cooldwn': 60 },
      "dc.cfg: crs.ha-auto-rebalance-cooldwn: unknown policy key (did you mean 'ha-auto-rebalance-cooldown'?)",
    ],
    [
      { 'ha-auto-rebalance-preset': 'best' },
      "dc.cfg: crs.ha-auto-rebalance-preset: expected one of 'recommended', 'reference', 'none', got \"best\"",
    ],
  ])("a bad key of a case's crs (%j) is named with its file", (crs, line) => {
    expect(() => policyLayer({ kind: 'case', label: 'the case' }, crs, { file: 'dc.cfg', prefix: 'crs.' })).toThrow(
      line,
    );
  });

  it('normalises a fingerprint to upper-case pairs with colons, an IPv6 listen address, paths relative to the file', () => {
    const c = parseConfig(
      {
        ...PVE_MIN,
        pve: { ...PVE_MIN.pve, tls: { fingerprint: 'ab'.repeat(32) } },
        metrics: { listen: '[::1]:0' },
        state: { file: 'state/state.json' },
      },
      '/etc/poise/manager.yaml',
    );
    expect(c.pve.tls.fingerprint).toBe(Array(32).fill('AB').join(':'));
    expect(c.metrics).toMatchObject({ enabled: true, host: '::1', port: 0 });
    expect(c.statePath).toBe('/etc/poise/state/state.json');
  });

  it('--sim sets env sim, the case directory (relative to the working directory) and its mode', () => {
    const c = defaultConfig({ env: 'sim', simCaseDir: 'cases/x', mode: 'act' });
    expect(c.env).toBe('sim');
    expect(c.mode).toBe('act');
    expect(c.sim.caseDir).toBe(resolve('cases/x'));
  });
});

describe('config errors name the field by dot path and show the bad value', () => {
  it.each([
    // [document, expected line]
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-threshold': 'abc' } },
      'test.yaml: policy.ha-auto-rebalance-threshold: expected a number from 0 to 100, got "abc"',
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-threshold': 130 } },
      'test.yaml: policy.ha-auto-rebalance-threshold: expected a number from 0 to 100, got 130',
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-hold-duration': 1.5 } },
      'test.yaml: policy.ha-auto-rebalance-hold-duration: expected an integer ≥ 0, got 1.5',
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-margin': -1 } },
      'test.yaml: policy.ha-auto-rebalance-margin: expected a number from 0 to 100, got -1',
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-method': 'best' } },
      "test.yaml: policy.ha-auto-rebalance-method: expected one of 'bruteforce', 'topsis', got \"best\"",
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-backoff': { a: 1 } } },
      'test.yaml: policy.ha-auto-rebalance-backoff: expected a string, number or boolean, got a mapping',
    ],
    [{ ...PVE_MIN, mode: 'dry-run' }, "test.yaml: mode: expected one of 'observe', 'act', got \"dry-run\""],
    [{ ...PVE_MIN, interval: 0 }, 'test.yaml: interval: expected a number of seconds from 1 to 3600, got 0'],
    [{ ...PVE_MIN, interval: '10s' }, 'test.yaml: interval: expected a number of seconds from 1 to 3600, got "10s"'],
    [
      { ...PVE_MIN, limits: { 'max-motions-in-flight': 2 } },
      'test.yaml: limits.max-motions-in-flight: expected 1 (one motion at a time is all that is supported), got 2',
    ],
    [
      { ...PVE_MIN, limits: { 'max-motions-per-hour': 0 } },
      'test.yaml: limits.max-motions-per-hour: expected an integer ≥ 1, got 0',
    ],
    [
      { ...PVE_MIN, limits: { 'settle-time': -5 } },
      'test.yaml: limits.settle-time: expected a number of seconds from 0 to 3600, got -5',
    ],
    [
      { ...PVE_MIN, limits: { 'settle-time': 'soon' } },
      'test.yaml: limits.settle-time: expected a number of seconds from 0 to 3600, got "soon"',
    ],
    [
      { ...PVE_MIN, limits: { 'max-failing-rounds': 0 } },
      'test.yaml: limits.max-failing-rounds: expected an integer from 1 to 1000, got 0',
    ],
    [
      { ...PVE_MIN, limits: { 'max-failing-rounds': 2.5 } },
      'test.yaml: limits.max-failing-rounds: expected an integer from 1 to 1000, got 2.5',
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-backoff': 'abc' } },
      "test.yaml: policy.ha-auto-rebalance-backoff: invalid value 'abc' (seconds, 0 to 3600)",
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-objective': 'fastest' } },
      "test.yaml: policy.ha-auto-rebalance-objective: invalid value 'fastest' (one of imbalance, contention)",
    ],
    [
      { ...PVE_MIN, metrics: { 'allowed-hosts': 'poise.example.org' } },
      'test.yaml: metrics.allowed-hosts: expected a list of host names, got "poise.example.org"',
    ],
    [
      { ...PVE_MIN, metrics: { 'allowed-hosts': ['poise.example.org:9879'] } },
      'test.yaml: metrics.allowed-hosts[0]: expected a host name or address without a port, e.g. poise.example.org, got "poise.example.org:9879"',
    ],
    [
      { ...PVE_MIN, metrics: { 'allowed-hosts': ['*'] } },
      'test.yaml: metrics.allowed-hosts[0]: expected a host name or address without a port, e.g. poise.example.org, got "*"',
    ],
    [
      { ...PVE_MIN, metrics: { 'allowed-hosts': [42] } },
      'test.yaml: metrics.allowed-hosts[0]: expected a host name or address, got 42',
    ],
    [
      { ...PVE_MIN, metrics: { 'bearer-token-file': '' } },
      'test.yaml: metrics.bearer-token-file: expected a file path, not empty, got ""',
    ],
    [
      { ...PVE_MIN, metrics: { 'basic-auth-file': true } },
      'test.yaml: metrics.basic-auth-file: expected a file path, got true',
    ],
    [
      { ...PVE_MIN, metrics: { 'bearer-token-file': '/t', 'basic-auth-file': '/u' } },
      "test.yaml: metrics.bearer-token-file: expected at most one of 'metrics.bearer-token-file' and 'metrics.basic-auth-file', got both",
    ],
    [
      { ...PVE_MIN, metrics: { tls: { 'cert-file': '/c.pem' } } },
      "test.yaml: metrics.tls.key-file: expected with 'metrics.tls.cert-file' (both or neither), got nothing",
    ],
    [
      { ...PVE_MIN, metrics: { tls: { 'key-file': '/k.pem', ca: '/ca.pem' } } },
      'test.yaml: metrics.tls.ca: unknown key',
    ],
    [
      { ...PVE_MIN, metrics: { listen: 'localhost' } },
      'test.yaml: metrics.listen: expected host:port, e.g. 127.0.0.1:9879 or [::1]:9879, got "localhost"',
    ],
    [
      { ...PVE_MIN, metrics: { listen: '127.0.0.1:70000' } },
      'test.yaml: metrics.listen: expected a port from 0 to 65535, got 70000',
    ],
    [
      { ...PVE_MIN, pve: { ...PVE_MIN.pve, urls: ['node1:8006'] } },
      'test.yaml: pve.urls[0]: expected an https:// URL like https://node1:8006, got "node1:8006"',
    ],
    [
      { ...PVE_MIN, pve: { ...PVE_MIN.pve, tls: { fingerprint: 'abc' } } },
      'test.yaml: pve.tls.fingerprint: expected a SHA-256 fingerprint (64 hex digits, colons allowed), got "abc"',
    ],
    [
      { ...PVE_MIN, lock: { name: '../x' } },
      'test.yaml: lock.name: expected a lock name of letters, digits, _ . - (no slash), got "../x"',
    ],
    [
      { ...PVE_MIN, log: { level: 'trace' } },
      "test.yaml: log.level: expected one of 'debug', 'info', 'warn', 'error', got \"trace\"",
    ],
    [{ ...PVE_MIN, guests: { 'non-ha': 'yes' } }, 'test.yaml: guests.non-ha: expected true or false, got "yes"'],
    [{ ...PVE_MIN, intervall: 5 }, 'test.yaml: intervall: unknown key'],
    [
      { ...PVE_MIN, policy: { threshold: 30 } },
      "test.yaml: policy.threshold: unknown policy key (expected a datacenter.cfg crs key 'ha-auto-rebalance-*')",
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance': 1 } },
      "test.yaml: policy.ha-auto-rebalance: unknown policy key: 'ha-auto-rebalance' switches the cluster's own balancer; poise balances by running (mode: observe|act)",
    ],
    [{ ...PVE_MIN, env: 'proxmox' }, "test.yaml: env: expected one of 'sim', 'pve', got \"proxmox\""],
    // a misspelt or unknown key anywhere is an error naming its dot path, never a warning
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-thresold': 20 } },
      "test.yaml: policy.ha-auto-rebalance-thresold: unknown policy key (did you mean 'ha-auto-rebalance-threshold'?)",
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-cooldwn': 60 } },
      "test.yaml: policy.ha-auto-rebalance-cooldwn: unknown policy key (did you mean 'ha-auto-rebalance-cooldown'?)",
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-frobnicate': 1 } },
      expect.stringMatching(
        /^test\.yaml: policy\.ha-auto-rebalance-frobnicate: unknown policy key \(this build applies 'ha-auto-rebalance-backoff', /,
      ),
    ],
    [
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-preset': 'fast' } },
      "test.yaml: policy.ha-auto-rebalance-preset: expected one of 'recommended', 'reference', 'none', got \"fast\"",
    ],
    [{ ...PVE_MIN, lock: { dirr: '/tmp' } }, 'test.yaml: lock.dirr: unknown key'],
    [{ ...PVE_MIN, pve: { ...PVE_MIN.pve, tls: { 'ca-fil': '/x' } } }, 'test.yaml: pve.tls.ca-fil: unknown key'],
    [[1, 2], 'test.yaml: (top level): expected a mapping of settings, got a list'],
  ])('%j', (doc, line) => {
    expect(problems(doc)).toEqual(expect.arrayContaining([line]));
  });

  it('lists every problem of a file, one per line', () => {
    const lines = problems({ ...PVE_MIN, interval: -1, mode: 'x', policy: { 'ha-auto-rebalance-margin': 'y' } });
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => l.split(':')[1]!.trim())).toEqual(['mode', 'interval', 'policy.ha-auto-rebalance-margin']);
  });
});

describe('keys that are names of Object.prototype', () => {
  it('are refused like any unknown key, wherever they appear', () => {
    const doc = JSON.parse(
      '{"env":"sim","sim":{"case-dir":"/tmp"},"__proto__":{"mode":"act"},"constructor":1,"policy":{"__proto__":{"x":1},"toString":2}}',
    );
    expect(problems(doc).sort()).toEqual([
      'test.yaml: __proto__: unknown key',
      'test.yaml: constructor: unknown key',
      "test.yaml: policy.__proto__: unknown policy key (expected a datacenter.cfg crs key 'ha-auto-rebalance-*')",
      "test.yaml: policy.toString: unknown policy key (expected a datacenter.cfg crs key 'ha-auto-rebalance-*')",
    ]);
  });
});

describe('cross-field rules', () => {
  it.each([
    [{ env: 'pve' }, "test.yaml: pve.urls: expected at least one URL when env is 'pve', got nothing"],
    [
      { env: 'pve', pve: { urls: ['https://a:8006'] } },
      "test.yaml: pve.token-file: expected exactly one of 'pve.token-file' and 'pve.token-env' when env is 'pve', got neither",
    ],
    [
      { env: 'pve', pve: { urls: ['https://a:8006'], 'token-file': '/t', 'token-env': 'T' } },
      "test.yaml: pve.token-file: expected exactly one of 'pve.token-file' and 'pve.token-env' when env is 'pve', got both",
    ],
    [
      { ...PVE_MIN, pve: { ...PVE_MIN.pve, urls: ['http://a:8006'] } },
      "test.yaml: pve.urls[0]: plain http:// sends the API token in clear; use https:// or set 'pve.tls.allow-plain-http: true'",
    ],
    [
      { ...PVE_MIN, pve: { ...PVE_MIN.pve, tls: { 'ca-file': '/ca.pem', 'insecure-skip-verify': true } } },
      "test.yaml: pve.tls.insecure-skip-verify: cannot be combined with 'pve.tls.ca-file' (either verify against the CA or do not verify)",
    ],
    [{ env: 'sim' }, "test.yaml: sim.case-dir: expected a case directory when env is 'sim', got nothing"],
  ])('%j', (doc, line) => {
    expect(problems(doc)).toEqual(expect.arrayContaining([line]));
  });

  it('accepts plain http only with allow-plain-http', () => {
    const c = parseConfig(
      { ...PVE_MIN, pve: { ...PVE_MIN.pve, urls: ['http://a:8006'], tls: { 'allow-plain-http': true } } },
      undefined,
    );
    expect(c.pve.urls).toEqual(['http://a:8006']);
  });
});

describe('secrets in config errors', () => {
  it('never shows a value that looks like an API token, wherever it was put', () => {
    const secret = 'root@pam!poise=aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
    const lines = problems({ ...PVE_MIN, pve: { ...PVE_MIN.pve, tls: { fingerprint: secret } }, token: secret });
    expect(lines.join('\n')).not.toContain('aaaaaaaa');
    expect(lines).toContain(
      'test.yaml: pve.tls.fingerprint: expected a SHA-256 fingerprint (64 hex digits, colons allowed), got a value that looks like an API token (not shown)',
    );
    expect(lines).toContain(
      "test.yaml: token: unknown key (the API token goes in a file ('pve.token-file') or an environment variable ('pve.token-env'), never in this file)",
    );
  });

  it.each([
    ['abc', '"abc"'],
    [undefined, 'nothing'],
    [null, 'null'],
    [3, '3'],
    [[1], 'a list'],
    [{}, 'a mapping'],
    ['x'.repeat(100), `"${'x'.repeat(57)}..."`],
    ['12345678-1234-1234-1234-123456789abc', 'a value that looks like an API token (not shown)'],
  ])('describeValue(%j) = %s', (value, shown) => {
    expect(describeValue(value)).toBe(shown);
  });
});

describe('config files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'poise-config-'));

  it('reports YAML syntax errors with file, line and column', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'env: pve\nmode: [observe\n');
    expect(() => loadConfig(file)).toThrow(/bad\.yaml:\d+:\d+: YAML: /);
  });

  it('reports duplicate keys', () => {
    const file = join(dir, 'dup.yaml');
    writeFileSync(file, 'mode: act\nmode: observe\n');
    expect(() => loadConfig(file)).toThrow(/dup\.yaml:2:1: YAML: Map keys must be unique/);
  });

  it('names a missing file', () => {
    expect(() => loadConfig(join(dir, 'none.yaml'))).toThrow(/none\.yaml: cannot read the config file \(ENOENT\)/);
  });

  it('treats an empty file as all defaults', () => {
    const file = join(dir, 'empty.yaml');
    writeFileSync(file, '');
    expect(() => loadConfig(file)).toThrow(/sim\.case-dir: expected a case directory/); // env defaults to sim
    expect(loadConfig(file, { env: 'sim', simCaseDir: dir }).env).toBe('sim');
  });

  it('the example config in the app is valid', () => {
    const c = loadConfig(join(APP, 'poise-manager.example.yaml'));
    expect(c.env).toBe('pve');
    expect(c.mode).toBe('observe');
    expect(c.pve.urls).toHaveLength(2);
  });

  it('the committed JSON schema is the one generated from the config definition (regenerate: pnpm poise-manager --print-schema > apps/manager/config.schema.json)', () => {
    const committed = JSON.parse(readFileSync(join(APP, 'config.schema.json'), 'utf8'));
    expect(committed).toEqual(configJsonSchema());
  });

  it('the JSON schema carries defaults and descriptions, and lists every policy key the plug-ins apply, no other', () => {
    const schema = configJsonSchema() as {
      properties: Record<
        string,
        { default?: unknown; description?: string; properties?: Record<string, unknown>; propertyNames?: unknown }
      >;
    };
    expect(schema.properties.mode!.default).toBe('observe');
    expect(schema.properties.mode!.description).toMatch(/observe/);
    const policy = schema.properties.policy as { properties: Record<string, unknown>; additionalProperties: unknown };
    expect(policy.additionalProperties).toBe(false);
    expect(Object.keys(policy.properties).sort()).toEqual([...KNOWN_POLICY_KEYS, 'plugins'].sort());
    expect(policy.properties['ha-auto-rebalance-cooldown']).toMatchObject({ default: 0 });
    expect(schema.properties.policy!.properties!['ha-auto-rebalance-threshold']).toMatchObject({
      default: 30,
      minimum: 0,
      maximum: 100,
    });
  });
});

describe("the listener's files (metrics.bearer-token-file, basic-auth-file, tls)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'poise-listener-files-'));
  let certs: Awaited<ReturnType<typeof generateCertificates>>;
  let other: Awaited<ReturnType<typeof generateCertificates>>;
  beforeAll(async () => {
    [certs, other] = await Promise.all([generateCertificates(), generateCertificates()]);
  });
  const file = (name: string, text: string, mode = 0o600) => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode });
    chmodSync(path, mode);
    return path;
  };
  /** Loads a config file with these `metrics` keys; the message of the error, or 'valid'. */
  const load = (metrics: Record<string, unknown>): string => {
    const path = join(dir, 'poise-manager.yaml');
    writeFileSync(path, JSON.stringify({ ...PVE_MIN, metrics }));
    try {
      loadConfig(path);
      return 'valid';
    } catch (err) {
      expect(err).toMatchObject({ code: 'invalid-config' });
      return (err as Error).message.replaceAll(`${dir}/`, '');
    }
  };
  const sha = (password: string) => `{SHA}${createHash('sha1').update(password).digest('base64')}`;

  it('accepts a token file, a basic-auth file and a certificate with its key, relative to the config file', () => {
    expect(load({ 'bearer-token-file': file('token', 'abcdefghijklmnopqrstuvwxyz012345\n') })).toBe('valid');
    expect(load({ 'basic-auth-file': file('users', `# comment\n\nprom:${sha('x')}\r\n`) })).toBe('valid');
    file('cert.pem', certs.certPem);
    file('key.pem', certs.keyPem);
    expect(load({ tls: { 'cert-file': 'cert.pem', 'key-file': 'key.pem' } })).toBe('valid');
    const c = parseConfig(
      { ...PVE_MIN, metrics: { tls: { 'cert-file': 'cert.pem', 'key-file': 'key.pem' } } },
      join(dir, 'c.yaml'),
    );
    expect(c.metrics.tls).toEqual({ certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') });
    const security = loadListenerSecurity(c.metrics);
    expect(security.tls?.cert).toBe(certs.certPem);
    expect(security.warnings).toEqual([]);
  });

  it.each([
    [
      { 'bearer-token-file': 'missing' },
      "poise-manager.yaml: metrics.bearer-token-file: cannot read 'missing' (ENOENT)",
    ],
    [{ 'bearer-token-file': 'a-dir' }, "poise-manager.yaml: metrics.bearer-token-file: 'a-dir' is not a regular file"],
    [
      { 'bearer-token-file': 'token-empty' },
      "poise-manager.yaml: metrics.bearer-token-file: 'token-empty' is empty; expected one line holding the token",
    ],
    [
      { 'bearer-token-file': 'token-two' },
      "poise-manager.yaml: metrics.bearer-token-file: 'token-two' holds more than one word; expected one line holding the token",
    ],
    [
      { 'bearer-token-file': 'token-odd' },
      "poise-manager.yaml: metrics.bearer-token-file: 'token-odd' holds characters a bearer token cannot carry; expected letters, digits and - . _ ~ + / (then = padding)",
    ],
    [
      { 'basic-auth-file': 'users-empty' },
      "poise-manager.yaml: metrics.basic-auth-file: 'users-empty' holds no user; expected lines of 'user:hash'",
    ],
    [
      { 'basic-auth-file': 'users-bcrypt' },
      "poise-manager.yaml: metrics.basic-auth-file: 'users-bcrypt':2: user 'bob': bcrypt ('$2y$', htpasswd -B) is not accepted (node:crypto cannot verify it); accepted: '{SHA}' (htpasswd -s) and '$scrypt$ln=…,r=…,p=…$<salt>$<hash>'",
    ],
    [
      { 'basic-auth-file': 'users-apr1' },
      "poise-manager.yaml: metrics.basic-auth-file: 'users-apr1':1: user 'al': Apache MD5 ('$apr1$', the default of htpasswd) is not accepted (node:crypto cannot verify it); accepted: '{SHA}' (htpasswd -s) and '$scrypt$ln=…,r=…,p=…$<salt>$<hash>'",
    ],
    [
      { 'basic-auth-file': 'users-plain' },
      "poise-manager.yaml: metrics.basic-auth-file: 'users-plain':1: user 'al': not a hash this daemon verifies (plain text or DES crypt?); accepted: '{SHA}' (htpasswd -s) and '$scrypt$ln=…,r=…,p=…$<salt>$<hash>'",
    ],
    [
      { 'basic-auth-file': 'users-noline' },
      "poise-manager.yaml: metrics.basic-auth-file: 'users-noline':1: expected 'user:hash'",
    ],
    [
      { 'basic-auth-file': 'users-twice' },
      "poise-manager.yaml: metrics.basic-auth-file: 'users-twice':2: user 'al' is given twice",
    ],
    [
      { 'basic-auth-file': 'users-shortsha' },
      "poise-manager.yaml: metrics.basic-auth-file: 'users-shortsha':1: user 'al': a '{SHA}' hash is the base64 of 20 bytes (htpasswd -s)",
    ],
    [
      { 'basic-auth-file': 'users-scrypt-cost' },
      "poise-manager.yaml: metrics.basic-auth-file: 'users-scrypt-cost':1: user 'al': scrypt ln must be 10 to 20, got 30",
    ],
    [
      { 'basic-auth-file': 'users-scrypt-form' },
      "poise-manager.yaml: metrics.basic-auth-file: 'users-scrypt-form':1: user 'al': expected '$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt base64>$<hash base64>'",
    ],
    [
      { tls: { 'cert-file': 'not-pem', 'key-file': 'key.pem' } },
      "poise-manager.yaml: metrics.tls.cert-file: 'not-pem' holds no PEM certificate",
    ],
    [
      { tls: { 'cert-file': 'bad-pem', 'key-file': 'key.pem' } },
      /^poise-manager\.yaml: metrics\.tls\.cert-file: 'bad-pem' holds no valid PEM certificate \(.+\)$/,
    ],
    [
      { tls: { 'cert-file': 'cert.pem', 'key-file': 'cert.pem' } },
      "poise-manager.yaml: metrics.tls.key-file: 'cert.pem' holds no PEM private key",
    ],
    [
      { tls: { 'cert-file': 'cert.pem', 'key-file': 'other-key.pem' } },
      "poise-manager.yaml: metrics.tls.key-file: 'other-key.pem' is not the private key of the certificate in 'cert.pem'",
    ],
    [
      { tls: { 'cert-file': 'cert.pem', 'key-file': 'encrypted-key.pem' } },
      "poise-manager.yaml: metrics.tls.key-file: 'encrypted-key.pem' holds an encrypted private key; expected one without a passphrase",
    ],
    [
      { tls: { 'cert-file': 'missing.pem', 'key-file': 'token-empty/key.pem' } },
      "poise-manager.yaml: metrics.tls.cert-file: cannot read 'missing.pem' (ENOENT)\npoise-manager.yaml: metrics.tls.key-file: cannot read 'token-empty/key.pem' (ENOTDIR)",
    ],
  ])('%j: %s', (metrics, message) => {
    mkdirSync(join(dir, 'a-dir'), { recursive: true });
    file('token-empty', ' \n');
    file('token-two', 'abc def\n');
    file('token-odd', 'tøken\n');
    file('users-empty', '# nobody yet\n');
    file('users-bcrypt', `al:${sha('a')}\nbob:$2y$05$abcdefghijklmnopqrstuu5Sx3JHhXyG1Q9qfR6Zl7n2v3V1g4hS\n`);
    file('users-apr1', 'al:$apr1$salt$hash\n');
    file('users-plain', 'al:secret\n');
    file('users-noline', 'al\n');
    file('users-twice', `al:${sha('a')}\nal:${sha('b')}\n`);
    file('users-shortsha', 'al:{SHA}abcd\n');
    file('users-scrypt-cost', 'al:$scrypt$ln=30,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA\n');
    file('users-scrypt-form', 'al:$scrypt$N=16384$x$y\n');
    file('not-pem', 'hello\n');
    file('bad-pem', '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n');
    file('cert.pem', certs.certPem);
    file('key.pem', certs.keyPem);
    file('other-key.pem', other.keyPem);
    file(
      'encrypted-key.pem',
      createPrivateKey(certs.keyPem).export({
        type: 'pkcs8',
        format: 'pem',
        cipher: 'aes-256-cbc',
        passphrase: 'pw',
      }) as string,
    );
    const got = load(metrics);
    if (typeof message === 'string') expect(got).toBe(message);
    else expect(got).toMatch(message);
  });

  it('never shows the token, even when it is malformed', () => {
    file('token-secret', 'very secret value\n');
    expect(load({ 'bearer-token-file': 'token-secret' })).not.toMatch(/very|secret value/);
  });

  it('warns about a secret readable by others, a short token and an unsalted {SHA} hash', () => {
    const c = parseConfig(
      { ...PVE_MIN, metrics: { 'bearer-token-file': file('token-short', 'abc\n', 0o644) } },
      join(dir, 'c.yaml'),
    );
    expect(loadListenerSecurity(c.metrics).warnings).toEqual([
      `metrics.bearer-token-file: the token in '${join(dir, 'token-short')}' has 3 characters; one of at least 16 (e.g. openssl rand -hex 32) is harder to guess`,
      `metrics.bearer-token-file: bearer token file '${join(dir, 'token-short')}' is readable by group or others (mode 0644); use chmod 600`,
    ]);
  });

  it('are not read when the listener is off', () => {
    expect(load({ enabled: false, 'bearer-token-file': 'missing' })).toBe('valid');
  });
});
