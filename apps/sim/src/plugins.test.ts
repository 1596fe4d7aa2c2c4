import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadPluginRegistry } from '@poise/ha';
import { SimError, Simulation, loadCase, simulate, withCrsOverrides } from '@poise/sim';
import { RunRecorder } from '@poise/sim';
import { parseVariants } from './lab/variants';
import { runOne } from './lab/sim-adapter';
import { main } from './main';
import { REPO_ROOT } from './testing/upstream';

// A variant from outside the repository runs through every way the simulator reads variants,
// with no host code knowing it: the fixture plug-in `fixture-move-quota` (tools/test-support)
// caps the moves of `rebalance-and-failover`, which moves 3 times on its own.

const FIXTURE = resolve(REPO_ROOT, 'tools/test-support/quota-plugin.mjs');
const FREEZE = resolve(REPO_ROOT, 'examples/policy-plugin-freeze');
const SCENARIO = resolve(REPO_ROOT, 'apps/sim/scenarios/rebalance-and-failover');
const KEY = 'fixture-move-quota';

const capture = () => {
  const out: string[] = [];
  const err: string[] = [];
  const chunks: string[] = [];
  return {
    out,
    err,
    chunks,
    io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), write: (c: string) => chunks.push(c) },
  };
};
const moves = (summaryLine: string | undefined) => (JSON.parse(summaryLine!) as { moves: number }).moves;

/** The production sources (no tests, fixtures or test kits) of the packages and apps. */
function productionSources(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (name !== '__fixtures__' && name !== 'node_modules' && name !== 'dist') walk(path);
      } else if (/\.[mc]?[jt]s$/.test(name) && !/\.(test|testkit)[.-]/.test(name)) files.push(path);
    }
  };
  for (const top of ['packages', 'apps'])
    for (const pkg of readdirSync(join(REPO_ROOT, top))) walk(join(REPO_ROOT, top, pkg, 'src'));
  return files;
}

describe('adding a variant needs no host edit: a plug-in only a test fixture defines', () => {
  const work = mkdtempSync(join(tmpdir(), 'poise-sim-plugin-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  test('no production source names it', () => {
    const sources = productionSources();
    // the walk sees the hosts (a walk that found nothing would prove nothing)
    expect(sources.map((f) => relative(REPO_ROOT, f))).toEqual(
      expect.arrayContaining(['packages/ha/src/balance.ts', 'packages/sim/src/case.ts', 'apps/sim/src/main.ts']),
    );
    const naming = sources.filter((f) => /fixture-move-quota|move-quota|quota-plugin/.test(readFileSync(f, 'utf8')));
    expect(naming.map((f) => relative(REPO_ROOT, f))).toEqual([]);
  });

  test('the HA core runs it: the quota caps the moves, and without the plug-in the key is unknown', async () => {
    const registry = await loadPluginRegistry([FIXTURE], REPO_ROOT);
    const input = withCrsOverrides(loadCase(SCENARIO, 'q', { registry }), [`${KEY}=2`], registry);
    const sim = new Simulation(input, { profile: 'pve-9.2', registry });
    const recorder = new RunRecorder(sim);
    sim.run();
    expect(recorder.summary().moves).toBe(2);
    // the log explains the stop by the plug-in's stage, once (a variant key is set)
    const { log } = simulate(input, { profile: 'pve-9.2', registry });
    expect(log.split('\n').filter((l) => l.includes('move quota'))).toEqual([
      expect.stringMatching(/node1\/crm: auto rebalance - move quota of 2 reached$/),
    ]);
    expect(() => withCrsOverrides(loadCase(SCENARIO, 'q'), [`${KEY}=2`])).toThrow(SimError);
  });

  test('--set and --plugin: poise-sim summary', async () => {
    const c = capture();
    expect(await main(['summary', SCENARIO, '--plugin', FIXTURE, '--set', `${KEY}=1`], c.io)).toBe(0);
    expect(moves(c.out[0])).toBe(1);
    const bad = capture();
    expect(await main(['summary', SCENARIO, '--plugin', FIXTURE, '--set', `${KEY}=-1`], bad.io)).toBe(2);
    expect(bad.err).toEqual([`'--set ${KEY}=-1': invalid value '-1' for 'crs.${KEY}' (moves, 0 to 1000)`]);
  });

  test("a case's datacenter.cfg: poise-sim run and summary", async () => {
    const dir = join(work, 'case');
    cpSync(SCENARIO, dir, { recursive: true });
    const cfg = JSON.parse(readFileSync(join(dir, 'datacenter.cfg'), 'utf8')) as { crs: Record<string, unknown> };
    writeFileSync(join(dir, 'datacenter.cfg'), JSON.stringify({ crs: { ...cfg.crs, [KEY]: 2 } }));
    const c = capture();
    expect(await main(['summary', dir, '--plugin', FIXTURE], c.io)).toBe(0);
    expect(moves(c.out[0])).toBe(2);
    const run = capture();
    expect(await main(['run', dir, '--plugin', FIXTURE], run.io)).toBe(0);
    expect(run.chunks.join('')).toContain('auto rebalance - move quota of 2 reached');
    // without the plug-in the case does not load: its key is no key of the simulator's
    const without = capture();
    expect(main(['summary', dir], without.io)).toBe(1);
    expect(without.err.join('\n')).toMatch(/crs\.fixture-move-quota|fixture-move-quota/);
  });

  test('a lab variants file: checked with the plug-in keys, run in the workers with the plug-in', async () => {
    const registry = await loadPluginRegistry([FIXTURE], REPO_ROOT);
    const variants = parseVariants(`one:\n  ${KEY}: 1\n`, 'v.yaml', registry);
    expect(variants).toEqual([{ name: 'one', crs: { [KEY]: 1 } }]);
    expect(() => parseVariants(`bad:\n  ${KEY}: lots\n`, 'v.yaml', registry)).toThrow(
      `'v.yaml' bad.${KEY}: invalid value 'lots' for 'crs.${KEY}' (moves, 0 to 1000)`,
    );
    expect(() => parseVariants(`one:\n  ${KEY}: 1\n`, 'v.yaml')).toThrow(`unknown crs key '${KEY}'`);
    const trace = await runOne({ name: 'q', dir: SCENARIO }, variants[0]!, 1, {
      plugins: { modules: [FIXTURE], from: REPO_ROOT },
    });
    expect(trace.moves).toHaveLength(1);
  });

  test('poise-sim compare --plugin: the variants file sets its key, the worker runs it', async () => {
    const file = join(work, 'variants.yaml');
    writeFileSync(file, `defaults: {}\nquota-1:\n  ${KEY}: 1\n`);
    const out = join(work, 'compare');
    const c = capture();
    const code = await main(
      ['compare', SCENARIO, '--variants', file, '--plugin', FIXTURE, '--out', out, '--jobs', '1'],
      { ...c.io, progress: { isTTY: false, write: () => true } },
    );
    expect(c.err.filter((l) => l.startsWith('poise-sim'))).toEqual([]);
    expect(code).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      runs: { variant: string; moves: number }[];
    };
    expect(summary.runs.map((r) => [r.variant, r.moves])).toEqual([
      ['defaults', 3],
      ['quota-1', 1],
    ]);
    // without --plugin the variants file names an unknown key: refused before any run
    const without = capture();
    expect(await main(['compare', SCENARIO, '--variants', file, '--out', join(work, 'x')], without.io)).toBe(1);
    expect(without.err.join('\n')).toContain(`unknown crs key '${KEY}'`);
  });
});

describe('the example plug-in examples/policy-plugin-freeze under poise-sim', () => {
  test('its README commands: no move with freeze=1, the moves of today without', async () => {
    const readme = readFileSync(join(FREEZE, 'README.md'), 'utf8');
    const commands = [...readme.matchAll(/^pnpm poise-sim (summary .*)$/gm)].map((m) => m[1]!.split(' '));
    expect(commands.length).toBeGreaterThanOrEqual(2);
    const results = new Map<string, number>();
    for (const argv of commands) {
      const c = capture();
      // the README runs from the repository's root
      const args = argv.map((a) => (a.startsWith('./') || a.startsWith('apps/') ? resolve(REPO_ROOT, a) : a));
      expect(await main(args, c.io)).toBe(0);
      results.set(argv.join(' '), moves(c.out[0]));
    }
    const frozen = [...results].filter(([command]) => command.includes('freeze=1'));
    const free = [...results].filter(([command]) => !command.includes('freeze=1'));
    expect(frozen.map(([, n]) => n)).toEqual([0]);
    // rebalance-and-failover on its own: 3 moves
    expect(free.map(([, n]) => n)).toEqual([3]);
    const plain = capture();
    expect(main(['summary', SCENARIO], plain.io)).toBe(0);
    expect(moves(plain.out[0])).toBe(3);
  });

  test.each([
    [['--plugin', './no-such-plugin'], /^poise-sim: plug-in '\.\/no-such-plugin': cannot find the module from /],
    [
      ['--plugin', FIXTURE, '--plugin', FIXTURE],
      /^poise-sim: plug-in '.*quota-plugin\.mjs': 'name' 'move-quota' is also the name of plug-in '.*quota-plugin\.mjs'$/,
    ],
    [['--plugin'], /^'--plugin' needs a module/],
  ])('a broken --plugin %j: a clear error, exit 2', async (extra, message) => {
    const c = capture();
    expect(await main(['summary', SCENARIO, ...extra], c.io)).toBe(2);
    expect(c.err.join('\n')).toMatch(message);
  });

  test('a module that is not a plug-in is named with the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-sim-broken-'));
    try {
      writeFileSync(
        join(dir, 'broken.mjs'),
        "export default { name: 'broken', keys: { on: { key: 'on', type: 'switch' } } };",
      );
      const c = capture();
      expect(await main(['run', SCENARIO, '--plugin', join(dir, 'broken.mjs')], c.io)).toBe(2);
      expect(c.err).toEqual([
        `poise-sim: plug-in '${join(dir, 'broken.mjs')}': 'keys.on.description' must be a non-empty string, got undefined`,
      ]);
      expect(c.chunks).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
