import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_REGISTRY } from '@poise/ha';
import { bundledSimCase } from '../cluster/host';
import { captureIo } from '../testing/support';
import { loadConfig, loadConfigPlugins } from '../config/load';
import { EXIT_CONFIG, EXIT_OK, main, parseArgs, reloadedConfig } from './main';

// Policy plug-ins in the daemon: `policy.plugins` of the config file loads them (paths relative
// to the file), their keys are policy keys (the config's and a simulator case's crs), the
// pipeline runs their stages, the start-up line describes them and `--print-schema --config`
// lists their keys. The fixture `fixture-move-quota` is a plug-in no host code knows; the
// bundled scenario moves 3 times on its own.

const ROOT = resolve(__dirname, '../../../..');
const FIXTURE = join(ROOT, 'tools/test-support/quota-plugin.mjs');
const FREEZE = join(ROOT, 'examples/policy-plugin-freeze');

const work = mkdtempSync(join(tmpdir(), 'poise-manager-plugins-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let files = 0;
/** A config file for the embedded simulator with these lines under `policy`. */
function config(policyLines: string[], dir = work): string {
  const file = join(dir, `config-${++files}.yaml`);
  writeFileSync(
    file,
    [
      'env: sim',
      'interval: 20',
      'metrics: {enabled: false}',
      'log: {format: json}',
      'policy:',
      ...policyLines.map((l) => `  ${l}`),
    ].join('\n'),
  );
  return file;
}

/** Runs `poise-manager --sim` with a config; the JSON log records and the stderr lines. */
async function simRun(file: string, extra: string[] = []) {
  const c = captureIo();
  const code = await main(['--sim', ...extra, '--config', file], c.io);
  const records = c.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
  const requested = /motions this run: (\d+) requested/.exec(
    records.map((r) => String(r.msg)).find((m) => m.includes('motions this run')) ?? '',
  )?.[1];
  return { code, records, err: c.err, requested: requested === undefined ? undefined : Number(requested) };
}

describe('poise-manager runs a plug-in only a test fixture defines', () => {
  it("the config's policy key: the quota caps the daemon's motions; the start-up line names it", async () => {
    const free = await simRun(config([`plugins: ['${FIXTURE}']`]));
    expect([free.code, free.requested]).toEqual([EXIT_OK, 3]);
    const capped = await simRun(config([`plugins: ['${FIXTURE}']`, 'fixture-move-quota: 1']));
    expect([capped.code, capped.requested]).toEqual([EXIT_OK, 1]);
    const start = capped.records.map((r) => String(r.msg)).find((m) => m.includes('→ min-improvement → move-quota'));
    expect(start).toMatch(/preset recommended, .*check-migratable, move-quota 1$/);
    expect(capped.records.some((r) => /move quota of 1 reached/.test(String(r.msg)))).toBe(true);
  });

  it("a path relative to the config file, and the key in the simulator case's datacenter.cfg", async () => {
    const dir = mkdtempSync(join(work, 'case-'));
    cpSync(bundledSimCase(), join(dir, 'case'), { recursive: true });
    writeFileSync(
      join(dir, 'case', 'datacenter.cfg'),
      JSON.stringify({ crs: { ha: 'dynamic', 'fixture-move-quota': 2 } }),
    );
    cpSync(FIXTURE, join(dir, 'quota.mjs'));
    const run = await simRun(config(['plugins: [./quota.mjs]'], dir), [join(dir, 'case')]);
    expect([run.code, run.requested]).toEqual([EXIT_OK, 2]);
    expect(run.records.map((r) => String(r.msg)).find((m) => m.startsWith('policy keys:'))).toMatch(
      /from the crs of '.*datacenter\.cfg': fixture-move-quota 2/,
    );
  });

  it('a bad value of its key is refused at load like a built-in one, naming the file, the key and the value', async () => {
    const file = config([`plugins: ['${FIXTURE}']`, 'fixture-move-quota: lots']);
    const run = await simRun(file);
    expect([run.code, run.requested, run.records]).toEqual([EXIT_CONFIG, undefined, []]);
    expect(run.err.join('\n')).toContain(`${file}: policy.fixture-move-quota: invalid value 'lots' (moves, 0 to 1000)`);
  });

  it('--print-schema --config lists its key; without the plug-in the key is unknown', async () => {
    const file = config([`plugins: ['${FIXTURE}']`, 'fixture-move-quota: 1']);
    const c = captureIo();
    expect(await main(['--print-schema', '--config', file], c.io)).toBe(EXIT_OK);
    const schema = JSON.parse(c.out.join('\n')) as {
      properties: { policy: { properties: Record<string, { default?: unknown; description?: string }> } };
    };
    expect(schema.properties.policy.properties['fixture-move-quota']).toMatchObject({
      default: 0,
      description: expect.stringContaining('after this many moves the balancer moves no more'),
    });
    const plain = captureIo();
    expect(await main(['--print-schema'], plain.io)).toBe(EXIT_OK);
    expect(plain.out.join('\n')).not.toContain('fixture-move-quota');
    const without = await simRun(config(['fixture-move-quota: 1']));
    expect(without.code).toBe(EXIT_CONFIG);
    expect(without.err.join('\n')).toContain(
      "policy.fixture-move-quota: unknown policy key (expected a datacenter.cfg crs key 'ha-auto-rebalance-*')",
    );
  });
});

describe('the example plug-in examples/policy-plugin-freeze under poise-manager', () => {
  it("its README config: no motion with freeze on, the scenario's motions without", async () => {
    const readme = readFileSync(join(FREEZE, 'README.md'), 'utf8');
    const yaml = /cat > (\S+) <<EOF\n([\s\S]*?)\nEOF/.exec(readme)!;
    expect(/pnpm poise-manager (.*)$/m.exec(readme)![1]).toBe(`--sim --config ${yaml[1]}`);
    // the README runs from the repository's root ($PWD)
    const frozen = join(work, 'freeze.yaml');
    writeFileSync(frozen, `${yaml[2]!.replaceAll('$PWD', ROOT)}\nmetrics: {enabled: false}\nlog: {format: json}\n`);
    const run = await simRun(frozen);
    expect([run.code, run.requested]).toEqual([EXIT_OK, 0]);
    const msgs = run.records.map((r) => String(r.msg));
    expect(msgs).toContainEqual(
      expect.stringMatching(
        /^policy: motion-in-flight → contention → freeze → smoothing → .*; preset recommended, .*, freeze$/,
      ),
    );
    expect(msgs).toContainEqual(expect.stringContaining('freeze: balancer moves are frozen (policy key freeze)'));
    const free = await simRun(config([`plugins: ['${FREEZE}']`, 'freeze: 0']));
    expect([free.code, free.requested]).toEqual([EXIT_OK, 3]);
  });

  it.each([
    [
      ['plugins: [./no-such-plugin.mjs]'],
      /^.*config-\d+\.yaml: policy\.plugins\[0\]: plug-in '\.\/no-such-plugin\.mjs': cannot find the module from /,
    ],
    [['plugins: ./freeze'], /^.*config-\d+\.yaml: policy\.plugins: expected a list of modules, got "\.\/freeze"$/],
    [
      [`plugins: ['${FIXTURE}', '${FIXTURE}']`],
      /^.*config-\d+\.yaml: policy\.plugins\[1\]: plug-in '.*quota-plugin\.mjs': 'name' 'move-quota' is also the name of plug-in 'move-quota'$/,
    ],
  ])(
    'a broken policy.plugins %j: an invalid configuration naming the file, the field and the module',
    async (lines, message) => {
      const run = await simRun(config(lines));
      expect(run.code).toBe(EXIT_CONFIG);
      expect(run.err.join('\n').split('\n')).toContainEqual(expect.stringMatching(message));
    },
  );

  it('a module that is not a plug-in: the field of the plug-in is named', async () => {
    writeFileSync(
      join(work, 'broken.mjs'),
      "export default { name: 'broken', keys: { on: { key: 'on', type: 'switch' } } };",
    );
    const run = await simRun(config(['plugins: [./broken.mjs]']));
    expect(run.code).toBe(EXIT_CONFIG);
    expect(run.err.join('\n')).toMatch(
      /config-\d+\.yaml: policy\.plugins\[0\]: plug-in '\.\/broken\.mjs': 'keys\.on\.description' must be a non-empty string, got undefined/,
    );
  });
});

describe('a reload keeps the plug-ins loaded at start', () => {
  it('the same list: the new keys apply with the running registry; another list: refused, needs a restart', async () => {
    const file = config([`plugins: ['${FIXTURE}']`, 'fixture-move-quota: 1']);
    const args = parseArgs(['--sim', '--config', file]);
    const registry = await loadConfigPlugins(file);
    const running = loadConfig(file, { simCaseDir: bundledSimCase() }, registry).policy;
    writeFileSync(file, readFileSync(file, 'utf8').replace('fixture-move-quota: 1', 'fixture-move-quota: 2'));
    const next = reloadedConfig(args, running);
    expect(next.policy.registry).toBe(registry);
    expect(next.policy.keys.get('fixture-move-quota')).toBe(2);
    writeFileSync(file, readFileSync(file, 'utf8').replace(`plugins: ['${FIXTURE}']`, `plugins: ['${FREEZE}']`));
    expect(() => reloadedConfig(args, running)).toThrow(
      `${file}: policy.plugins: changing the plug-ins needs a restart (running with '${FIXTURE}')`,
    );
  });
});

describe("the README's policy key table is the built-in registry's", () => {
  it('one row per key, with its off and recommended values', () => {
    const readme = readFileSync(join(ROOT, 'apps/manager/README.md'), 'utf8');
    const rows = new Map(
      // a cell may hold an escaped `\|`
      [...readme.matchAll(/^\| `([a-z0-9-]+)` \| (?:[^|\\]|\\.)+ \| ((?:[^|\\]|\\.)+) \| ((?:[^|\\]|\\.)+) \|/gm)].map(
        (m) => [m[1]!, { off: m[2]!.trim(), recommended: m[3]!.trim() }],
      ),
    );
    const shown = (value: number | boolean | string) =>
      typeof value === 'boolean' ? String(value ? 1 : 0) : typeof value === 'string' ? `\`${value}\`` : String(value);
    const keys = BUILTIN_REGISTRY.keys();
    expect(keys.length).toBeGreaterThan(10);
    for (const spec of keys) {
      expect(rows.get(spec.key), spec.key).toEqual({ off: shown(spec.off), recommended: shown(spec.recommended) });
    }
  });
});
