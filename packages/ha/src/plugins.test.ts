import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { PolicyError } from '@poise/policy';
import { contentionPlugin } from '@poise/policy-contention';
import { planPlugin } from '@poise/policy-plan';
import { pressurePlugin } from '@poise/policy-pressure';
import { stablePlugin } from '@poise/policy-stable';
import { BUILTIN_REGISTRY, loadPluginRegistry, loadPolicyPlugins } from './plugins';

describe('the built-in plug-ins', () => {
  test("are the four variant packages, their keys in each package's order", () => {
    expect(BUILTIN_REGISTRY.plugins.map((p) => p.name)).toEqual(['contention', 'plan', 'stable', 'pressure']);
    expect(BUILTIN_REGISTRY.keys()).toEqual(
      [contentionPlugin, planPlugin, stablePlugin, pressurePlugin].flatMap((p) => Object.values(p.keys)),
    );
    expect(BUILTIN_REGISTRY.keys().map((k) => k.key.replace(/^ha-auto-rebalance-/, ''))).toEqual([
      'objective',
      'contention-min-gain',
      'contention-cost-benefit',
      'plan',
      'backoff',
      'cooldown',
      'min-improvement',
      'smoothing',
      'cost-weight',
      'memhost',
      'min-pressure-cpu',
      'min-pressure-mem',
      'pressure-missing',
      'check-migratable',
    ]);
  });

  test('with every key off the pipeline is the reference; the preset turns the stages on', () => {
    const reference = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
    expect(BUILTIN_REGISTRY.pipeline(BUILTIN_REGISTRY.off, reference).stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'threshold-hold',
      'candidates',
      'score-bruteforce',
      'select-best',
      'relative-margin',
    ]);
    const recommended = BUILTIN_REGISTRY.read({ 'ha-auto-rebalance-preset': 'recommended' });
    expect(BUILTIN_REGISTRY.pipeline(recommended, reference).stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'contention',
      'smoothing',
      'backoff-series',
      'pressure',
      'contention-hold',
      'candidates',
      'pressure-source',
      'cooldown',
      'backoff',
      'migratable',
      'contention-score',
      'select-cost',
      'contention-margin',
      'min-improvement',
    ]);
    expect(BUILTIN_REGISTRY.needs(recommended)).toEqual({
      memhost: true,
      nodePressure: true,
      guestConfigs: true,
      planInput: false,
      migrationTasks: false,
    });
  });

  test('the plan takes the select slot over the cost stage; the contention objective its roles', () => {
    const reference = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'topsis' as const };
    const settings = BUILTIN_REGISTRY.read({
      'ha-auto-rebalance-cost-weight': 0.2,
      'ha-auto-rebalance-plan': 1,
      'ha-auto-rebalance-objective': 'contention',
    });
    expect(BUILTIN_REGISTRY.pipeline(settings, reference).stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'contention',
      'contention-hold',
      'candidates',
      'contention-score',
      'plan-guided',
      'contention-margin',
    ]);
    expect(BUILTIN_REGISTRY.needs(settings).planInput).toBe(true);
    expect(BUILTIN_REGISTRY.describe(settings)).toEqual(['objective contention', 'plan-guided', 'cost-weight 0.2']);
  });
});

describe('loading plug-ins from modules', () => {
  const dir = mkdtempSync(join(tmpdir(), 'poise-plugins-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  const PLUGIN = `{ name: 'freeze', keys: { freeze: { key: 'freeze', type: 'flag', off: false, recommended: false, description: 'd', why: 'w' } } }`;
  write('default.mjs', `export default ${PLUGIN};`);
  write('named.mjs', `export const plugin = ${PLUGIN};`);
  write('folder/package.json', JSON.stringify({ name: 'folder', type: 'module', main: './index.js' }));
  write('folder/index.js', `export default ${PLUGIN};`);
  write(
    'node_modules/poise-plugin-freeze/package.json',
    JSON.stringify({ name: 'poise-plugin-freeze', main: 'main.mjs' }),
  );
  write('node_modules/poise-plugin-freeze/main.mjs', `export default ${PLUGIN};`);
  write('throws.mjs', `throw new Error('boom at import');`);
  write('other-exports.mjs', 'export const a = 1; export const b = 2;');
  write('not-a-plugin.mjs', `export default { name: 'broken', keys: { on: { key: 'on', type: 'bool' } } };`);
  write(
    'clash.mjs',
    `export default { name: 'clash', keys: { backoff: { key: 'ha-auto-rebalance-backoff', type: 'flag', off: false, recommended: false, description: 'd', why: 'w' } } };`,
  );

  test.each(['./default.mjs', './named.mjs', './folder', 'poise-plugin-freeze', join(dir, 'default.mjs')])(
    '%s: by path or module name, the default export or `plugin`',
    async (specifier) => {
      const [loaded] = await loadPolicyPlugins([specifier], dir);
      expect(loaded!.origin).toBe(specifier);
      const registry = await loadPluginRegistry([specifier], dir);
      expect(registry.keys().map((k) => k.key)).toContain('freeze');
      expect(registry.keys().slice(0, BUILTIN_REGISTRY.keys().length)).toEqual(BUILTIN_REGISTRY.keys());
    },
  );

  test('no module: the built-in registry itself', async () => {
    expect(await loadPluginRegistry([], dir)).toBe(BUILTIN_REGISTRY);
  });

  test.each([
    [
      './missing.mjs',
      /^plug-in '\.\/missing\.mjs': cannot find the module from '.*' \(Cannot find module '.*missing\.mjs'\)$/,
    ],
    [
      'no-such-package',
      /^plug-in 'no-such-package': cannot find the module from '.*' \(Cannot find module 'no-such-package'/,
    ],
    ['./throws.mjs', /^plug-in '\.\/throws\.mjs': importing '.*throws\.mjs' failed: boom at import$/],
    [
      './other-exports.mjs',
      /^plug-in '\.\/other-exports\.mjs': no default export and no export named 'plugin' \(its exports: a, b\)$/,
    ],
    [
      './not-a-plugin.mjs',
      /^plug-in '\.\/not-a-plugin\.mjs': 'keys\.on\.description' must be a non-empty string, got undefined$/,
    ],
    [
      './clash.mjs',
      /^plug-in '\.\/clash\.mjs': 'keys\.backoff\.key' 'ha-auto-rebalance-backoff' is already a key of plug-in 'stable'$/,
    ],
  ])('%s: a clear error naming the module', async (specifier, message) => {
    const error = await loadPluginRegistry([specifier], dir).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).code).toBe('invalid-plugin');
    expect((error as PolicyError).message).toMatch(message);
  });
});
