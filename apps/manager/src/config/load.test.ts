import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManagerError } from '../errors';
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
    });
    expect(c.metrics).toEqual({ enabled: true, host: '127.0.0.1', port: 9879 });
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

  it('keeps every known policy key as given, for the policy stages to check, and says where each came from', () => {
    const c = parseConfig(
      { ...PVE_MIN, policy: { 'ha-auto-rebalance-backoff': 'abc', 'ha-auto-rebalance-preset': 'reference' } },
      '/etc/poise/c.yaml',
    );
    expect(c.policy.keys.get('ha-auto-rebalance-backoff')).toBe('abc');
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
    expect(c.metrics).toEqual({ enabled: true, host: '::1', port: 0 });
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
