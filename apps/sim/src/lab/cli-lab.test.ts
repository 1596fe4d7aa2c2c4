import { mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main, type Io } from '../main';

const SCENARIO = fileURLToPath(new URL('../../scenarios/rebalance-and-failover', import.meta.url));

function capture(): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l), write: (c) => stdout.push(c), progress: { isTTY: false, write: () => undefined } };
}
const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));

describe('poise-sim generate', () => {
  it('writes a case from a parameter file and flags; the same seed gives the same bytes', async () => {
    const dir = tmp('poise-cli-gen-');
    const params = join(dir, 'p.yaml');
    writeFileSync(params, 'duration: 1h\nguests: {count: 9}\nload: {shape: bursty}\n');
    const io = capture();
    expect(await main(['generate', params, '--out', join(dir, 'a'), '--seed', '5'], io)).toBe(0);
    expect(await main(['generate', params, '--out', join(dir, 'b'), '--seed', '5'], io)).toBe(0);
    expect(await main(['generate', params, '--out', join(dir, 'c'), '--seed', '6'], io)).toBe(0);
    expect(io.stdout[0]).toMatch(/^wrote 12 files \(\d+ KiB\) to .*\/a$/);
    for (const f of readdirSync(join(dir, 'a'))) expect(readFileSync(join(dir, 'b', f), 'utf8')).toBe(readFileSync(join(dir, 'a', f), 'utf8'));
    expect(readFileSync(join(dir, 'c', 'cmdlist'), 'utf8')).not.toBe(readFileSync(join(dir, 'a', 'cmdlist'), 'utf8'));
    expect(JSON.parse(readFileSync(join(dir, 'a', 'generator.json'), 'utf8'))).toMatchObject({ seed: 5, duration: 3600, load: { shape: 'bursty' } });
  });
  it('an impossible parameter is an error and nothing is written', async () => {
    const dir = tmp('poise-cli-gen-bad-');
    const io = capture();
    expect(await main(['generate', '--guests', '100000', '--out', join(dir, 'x')], io)).toBe(1);
    expect(io.stderr[0]).toMatch(/^poise-sim: 'command-line parameters' guests\.count: 100000 guests of at least 0\.5 GiB need 50000 GiB; the nodes have 192 GiB$/);
    expect(existsSync(join(dir, 'x'))).toBe(false);
  });
  it('usage errors exit 2', async () => {
    const io = capture();
    expect(await main(['generate'], io)).toBe(2);
    expect(io.stderr[0]).toMatch(/^poise-sim '--out <dir>' is required\nusage:/);
    expect(await main(['generate', '--out', 'x', '--seed', '-1'], io)).toBe(2);
    expect(await main(['compare', 'x', '--bogus'], io)).toBe(2);
  });
});

describe('poise-sim compare (today’s simulator in worker threads)', () => {
  it('runs scenarios × variants × seeds and writes the report and summaries; bad input fails before any run', async () => {
    const dir = tmp('poise-cli-cmp-');
    const variants = join(dir, 'variants.yaml');
    writeFileSync(variants, 'defaults: {}\neager: {ha-auto-rebalance-threshold: 10, ha-auto-rebalance-hold-duration: 0}\n');
    const params = join(dir, 'tiny.yaml');
    writeFileSync(params, 'duration: 40m\nguests: {count: 8, placement: packed}\n');
    const io = capture();
    const out = join(dir, 'out');
    const code = await main(['compare', SCENARIO, params, '--variants', variants, '--seeds', '1,2', '--jobs', '2', '--out', out], io);
    expect(io.stderr.join('\n')).toContain('8 runs (2 scenarios × 2 variants × 2 seeds) on 2 workers');
    expect(code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['report.html', 'runs.csv', 'scenarios', 'summary.csv', 'summary.json']);
    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(s.scenarios).toEqual(['rebalance-and-failover', 'tiny']);
    // the scenario's own run: 3 moves with defaults (see sim-adapter.test.ts)
    expect(s.runs[0]).toMatchObject({ scenario: 'rebalance-and-failover', variant: 'defaults', seed: 1, moves: 3, pingPongs: 1, simSeconds: 1100 });
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('<svg');

    // bad input: each an error before anything runs or is written
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'defaults: {}\nfast: {ha-auto-rebalance-speed: 2}\n');
    const broken = join(dir, 'broken');
    writeFileSync(join(tmp('x'), 'x'), '');
    const cases: [string[], RegExp][] = [
      [['compare', SCENARIO, '--variants', bad, '--out', join(dir, 'o1')], /unknown crs key 'ha-auto-rebalance-speed'/],
      [['compare', broken, '--variants', variants, '--out', join(dir, 'o2')], /no such file or directory '.*broken'/],
      [['compare', SCENARIO, '--variants', variants, '--seeds', 'x', '--out', join(dir, 'o3')], /--seeds 'x'/],
    ];
    for (const [argv, err] of cases) {
      const e = capture();
      expect(await main(argv, e)).toBe(1);
      expect(e.stderr.join('\n')).toMatch(err);
    }
    const unreadable = tmp('poise-cli-unreadable-');
    writeFileSync(join(unreadable, 'cmdlist'), '[["power node1 on"');
    const e = capture();
    expect(await main(['compare', unreadable, '--variants', variants, '--out', join(dir, 'o4')], e)).toBe(1);
    expect(e.stderr[0]).toMatch(/^poise-sim: scenario '.*': invalid JSON in '.*cmdlist'/);
    for (const o of ['o1', 'o2', 'o3', 'o4']) expect(existsSync(join(dir, o))).toBe(false);
  });
});

describe('poise-sim report', () => {
  it('reports one case directory, and a saved trace', async () => {
    const out = tmp('poise-cli-report-');
    const io = capture();
    expect(await main(['report', SCENARIO, '--out', out], io)).toBe(0);
    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(s.runs).toHaveLength(1);
    expect(s.runs[0]).toMatchObject({ moves: 3 });
    const traceFile = join(out, 'bad-trace.json');
    writeFileSync(traceFile, JSON.stringify({ format: 'poise-run-trace/2', scenario: 's', variant: 'v', seed: 1, endTime: 10, nodes: ['a'], rounds: { time: [0], imbalance: [2], cpu: [[0]], mem: [[0]], online: [[true]], pressureCpu: [[null]], pressureMem: [[null]] }, moves: [] }));
    const e = capture();
    expect(await main(['report', traceFile, '--out', join(out, 'x')], e)).toBe(1);
    expect(e.stderr[0]).toBe(`poise-sim: '${traceFile}': rounds.imbalance[0]: expected an imbalance in 0..1`);
  });
});
