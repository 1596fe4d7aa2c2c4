import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { main } from './main';
import { parseTableArgs } from './scenario-table';
import { REPO_ROOT } from './testing/upstream';

// What poise-sim says of a plug-in whose stage breaks its contract (it throws, returns
// undefined, keeps state that is not JSON): the case log's line and summary/compare name the
// plug-in, the stage and the round, and the command exits 1. And the one rule for a bad policy
// value: refused at load naming the file, the key and the value (a case's datacenter.cfg, an
// empty --set), as poise-manager refuses it.

const SCENARIO = resolve(REPO_ROOT, 'apps/sim/scenarios/rebalance-and-failover');
const QUOTA = resolve(REPO_ROOT, 'tools/test-support/quota-plugin.mjs');
const work = mkdtempSync(join(tmpdir(), 'poise-sim-stage-failures-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A plug-in module whose gate (key `broken`, stage `broken-gate`) runs `run` (JavaScript source). */
function brokenPlugin(name: string, run: string): string {
  const file = join(work, `${name}.mjs`);
  writeFileSync(
    file,
    `const KEY = { key: 'broken', type: 'flag', off: false, recommended: false, description: 'a broken gate', why: 'a test' };
const gate = { name: 'broken-gate', kind: 'gate', initialState: () => ({ n: 0 }), run: ${run} };
export default { name: '${name}', keys: { on: KEY }, stages: (s) => (s.on ? [{ slot: 'gate', order: 0, stage: gate }] : []) };
`,
  );
  return file;
}

const capture = () => {
  const out: string[] = [];
  const err: string[] = [];
  const chunks: string[] = [];
  return {
    out,
    err,
    chunks,
    io: {
      out: (l: string) => out.push(l),
      err: (l: string) => err.push(l),
      write: (c: string) => chunks.push(c),
      progress: { isTTY: false, write: () => true },
    },
  };
};

const KINDS = [
  { name: 'throws', run: '() => { throw new Error("kaboom"); }', problem: 'run() threw: kaboom' },
  {
    name: 'returns-undefined',
    run: '() => undefined',
    problem: 'run() returned undefined, expected {plan, state} or {stop, state}',
  },
  {
    name: 'keeps-a-function',
    run: '(_ctx, plan, state) => ({ plan, state: { n: state.n + 1, at: () => 1 } })',
    problem: 'run() returned a state that is not plain JSON: state.at is a function',
  },
];

describe('a plug-in stage that breaks its contract', () => {
  for (const kind of KINDS) {
    test(`${kind.name}: summary and run name the plug-in, the stage and the round, and exit 1`, async () => {
      const plugin = brokenPlugin(kind.name, kind.run);
      const first = `plug-in '${kind.name}': stage 'broken-gate' failed in round 1 (at 20): ${kind.problem}`;
      const summary = capture();
      expect(await main(['summary', SCENARIO, '--plugin', plugin, '--set', 'broken=1'], summary.io)).toBe(1);
      expect(summary.err).toEqual([
        expect.stringMatching(
          new RegExp(`^poise-sim: a policy stage failed in \\d+ rounds of the balancer; the first: `),
        ),
      ]);
      expect(summary.err[0]!.endsWith(first)).toBe(true);
      // the case log's line names it too
      const run = capture();
      expect(await main(['run', SCENARIO, '--plugin', plugin, '--set', 'broken=1'], run.io)).toBe(1);
      expect(run.chunks.join('').split('\n')).toContain(`err      20    node1/crm: got unexpected error - ${first}`);
      // without the key set the stage is not in the pipeline: the scenario's own three moves
      const off = capture();
      expect(await main(['summary', SCENARIO, '--plugin', plugin], off.io)).toBe(0);
      expect((JSON.parse(off.out[0]!) as { moves: number }).moves).toBe(3);
    });
  }

  test('compare: the run fails naming the plug-in, the stage and the round; exit 1', async () => {
    const plugin = brokenPlugin('compare-broken', KINDS[0]!.run);
    const variants = join(work, 'broken-variants.yaml');
    writeFileSync(variants, 'defaults: {}\nbroken:\n  broken: 1\n');
    const c = capture();
    const code = await main(
      ['compare', SCENARIO, '--variants', variants, '--plugin', plugin, '--out', join(work, 'cmp'), '--jobs', '1'],
      c.io,
    );
    expect(code).toBe(1);
    expect(c.err.join('\n')).toMatch(
      /poise-sim: run of .*broken.* failed: a policy stage failed in \d+ rounds of the balancer; the first: plug-in 'compare-broken': stage 'broken-gate' failed in round 1 \(at 20\): run\(\) threw: kaboom/,
    );
  }, 120_000);
});

/** Every file under `dir`, relative, sorted. */
function files(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

describe('compare --shard i/n --plugin', () => {
  const dir = join(work, 'shards');
  const variants = join(dir, 'variants.yaml');
  const args = (out: string, extra: string[] = []) => [
    'compare',
    SCENARIO,
    '--variants',
    variants,
    '--plugin',
    QUOTA,
    '--seeds',
    '1,2',
    '--jobs',
    '1',
    '--out',
    out,
    ...extra,
  ];
  const io = capture();
  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(variants, 'defaults: {}\nquota-1:\n  fixture-move-quota: 1\n');
    expect(await main(args(join(dir, 'full')), io.io), io.err.join('\n')).toBe(0);
    for (const i of [1, 2]) expect(await main(args(join(dir, `shard-${i}`), ['--shard', `${i}/2`]), io.io)).toBe(0);
    expect(await main(['merge', join(dir, 'shard-1'), join(dir, 'shard-2'), '--out', join(dir, 'merged')], io.io)).toBe(
      0,
    );
  }, 180_000);

  test('the shards load the plug-in: their union is the unsharded comparison, byte for byte', () => {
    const names = files(join(dir, 'full'));
    expect(names).toEqual(expect.arrayContaining(['summary.json', 'runs.csv', 'report.html']));
    for (const n of names.filter((f) => f !== 'report.html'))
      expect(readFileSync(join(dir, 'merged', n), 'utf8'), n).toBe(readFileSync(join(dir, 'full', n), 'utf8'));
    const summary = JSON.parse(readFileSync(join(dir, 'merged', 'summary.json'), 'utf8')) as {
      runs: { variant: string; moves: number }[];
    };
    // the plug-in's key ran in the shards: the quota caps the moves
    expect(summary.runs.map((r) => [r.variant, r.moves])).toEqual([
      ['defaults', 3],
      ['defaults', 3],
      ['quota-1', 1],
      ['quota-1', 1],
    ]);
  });
});

describe('one rule for a bad policy value: refused at load, naming the file, the key and the value', () => {
  test("a case's datacenter.cfg: run and summary refuse it (exit 2); a --set of the key replaces it", async () => {
    const dir = join(work, 'bad-case');
    cpSync(SCENARIO, dir, { recursive: true });
    const cfg = JSON.parse(readFileSync(join(dir, 'datacenter.cfg'), 'utf8')) as { crs: Record<string, unknown> };
    writeFileSync(
      join(dir, 'datacenter.cfg'),
      JSON.stringify({ crs: { ...cfg.crs, 'ha-auto-rebalance-backoff': 'abc' } }),
    );
    for (const command of ['run', 'summary']) {
      const c = capture();
      expect(await main([command, dir], c.io)).toBe(2);
      expect(c.err).toEqual([
        `poise-sim: ${join(dir, 'datacenter.cfg')}: crs.ha-auto-rebalance-backoff: invalid value 'abc' (seconds, 0 to 3600)`,
      ]);
      expect(c.out).toEqual([]);
    }
    const fixed = capture();
    expect(await main(['summary', dir, '--set', 'ha-auto-rebalance-backoff=60'], fixed.io)).toBe(0);
  });

  test.each([
    ['ha-auto-rebalance-objective=', 'it takes one of imbalance, contention'],
    ['ha-auto-rebalance-backoff=', 'it takes seconds, 0 to 3600'],
    ['ha-auto-rebalance-memhost=', 'it takes 0 or 1'],
    ['ha-auto-rebalance-threshold=', 'it takes a value'],
  ])('an empty --set %s is refused naming the key (exit 2)', async (set, takes) => {
    const key = set.slice(0, -1);
    const c = capture();
    expect(await main(['summary', SCENARIO, '--set', set], c.io)).toBe(2);
    expect(c.err).toEqual([
      `'--set ${set}': no value for '${key}' (${takes}; leave the --set out to keep the case's own value)`,
    ]);
    expect(() => parseTableArgs(['--set', set])).toThrow(`'--set ${set}': no value for '${key}'`);
  });
});
