import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadCase, simulate } from '@poise/sim';
import { main, type Io } from '../main';
import { estimateEndTime } from './cli-lab';

const SCENARIO = fileURLToPath(new URL('../../scenarios/rebalance-and-failover', import.meta.url));

function capture(): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (l) => stdout.push(l),
    err: (l) => stderr.push(l),
    write: (c) => stdout.push(c),
    progress: { isTTY: false, write: () => undefined },
  };
}
const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));
/** The SVG charts of the scenario sections (the balance section's regret chart left out). */
const scenarioCharts = (html: string) => html.slice(html.indexOf('<section class="scenario"')).match(/<svg/g) ?? [];

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
    for (const f of readdirSync(join(dir, 'a')))
      expect(readFileSync(join(dir, 'b', f), 'utf8')).toBe(readFileSync(join(dir, 'a', f), 'utf8'));
    expect(readFileSync(join(dir, 'c', 'cmdlist'), 'utf8')).not.toBe(readFileSync(join(dir, 'a', 'cmdlist'), 'utf8'));
    expect(JSON.parse(readFileSync(join(dir, 'a', 'generator.json'), 'utf8'))).toMatchObject({
      seed: 5,
      duration: 3600,
      load: { shape: 'bursty' },
    });
  });
  it('an impossible parameter is an error and nothing is written', async () => {
    const dir = tmp('poise-cli-gen-bad-');
    const io = capture();
    expect(await main(['generate', '--guests', '100000', '--out', join(dir, 'x')], io)).toBe(1);
    expect(io.stderr[0]).toMatch(
      /^poise-sim: 'command-line parameters' guests\.count: 100000 guests of at least 0\.5 GiB need 50000 GiB; the nodes have 192 GiB$/,
    );
    expect(existsSync(join(dir, 'x'))).toBe(false);
  });
  it('a trace case reads its day file; --trace-day and --trace-dir read another', async () => {
    const dir = tmp('poise-cli-gen-trace-');
    const row = (name: string, v: number) => `${name},${Array.from({ length: 288 }, () => v).join(',')}\n`;
    mkdirSync(join(dir, 'days'));
    mkdirSync(join(dir, 'elsewhere'));
    writeFileSync(join(dir, 'days', 'd1.csv'), row('a', 10) + row('b', 10));
    writeFileSync(join(dir, 'days', 'd2.csv'), row('a', 50) + row('b', 50));
    writeFileSync(join(dir, 'elsewhere', 'd2.csv'), row('a', 100) + row('b', 100));
    const params = join(dir, 'p.yaml');
    writeFileSync(
      params,
      'duration: 1h\nnodes: [{count: 2, cpu: 8, memGiB: 32}]\nguests: {count: 2, headroom: 1, cpu: {median: 2, sigma: 0, min: 2, max: 2}}\nload: {shape: trace, file: days/d1.csv}\n',
    );
    const io = capture();
    const cpu = (out: string) =>
      Object.values(JSON.parse(readFileSync(join(dir, out, 'dynamic_service_stats'), 'utf8')) as { cpu: number }[]).map(
        (x) => x.cpu,
      );
    const file = (out: string) =>
      (JSON.parse(readFileSync(join(dir, out, 'generator.json'), 'utf8')) as { load: { file: string } }).load.file;
    expect(await main(['generate', params, '--out', join(dir, 'a')], io)).toBe(0);
    expect(cpu('a')).toEqual([0.2, 0.2]);
    expect(file('a')).toBe('days/d1.csv');
    expect(await main(['generate', params, '--out', join(dir, 'b'), '--trace-day', 'd2'], io)).toBe(0);
    expect(cpu('b')).toEqual([1, 1]);
    expect(file('b')).toBe('days/d2.csv');
    const elsewhere = join(dir, 'elsewhere');
    expect(
      await main(['generate', params, '--out', join(dir, 'c'), '--trace-day', 'd2.csv', '--trace-dir', elsewhere], io),
    ).toBe(0);
    expect(cpu('c')).toEqual([2, 2]);
    expect(file('c')).toBe(join(elsewhere, 'd2.csv'));
    const bad = capture();
    expect(await main(['generate', params, '--out', join(dir, 'd'), '--trace-day', 'x/d2'], bad)).toBe(2);
    expect(bad.stderr[0]).toMatch(
      /^poise-sim '--trace-day' expects a file name such as 20110303 \(no directory\), got 'x\/d2'/,
    );
    expect(await main(['generate', params, '--out', join(dir, 'd'), '--trace-day', 'd9'], bad)).toBe(1);
    expect(bad.stderr[1]).toMatch(/^poise-sim: trace file '.*days\/d9\.csv': no such file$/);
    expect(existsSync(join(dir, 'd'))).toBe(false);
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
    writeFileSync(
      variants,
      'defaults: {}\neager: {ha-auto-rebalance-threshold: 10, ha-auto-rebalance-hold-duration: 0}\n',
    );
    const params = join(dir, 'tiny.yaml');
    writeFileSync(params, 'duration: 40m\nguests: {count: 8, placement: packed}\n');
    const io = capture();
    const out = join(dir, 'out');
    const code = await main(
      ['compare', SCENARIO, params, '--variants', variants, '--seeds', '1,2', '--jobs', '2', '--out', out],
      io,
    );
    expect(io.stderr.join('\n')).toContain('8 runs (2 scenarios × 2 variants × 2 seeds) on 2 workers');
    expect(code).toBe(0);
    expect(readdirSync(out).sort()).toEqual([
      'report.html',
      'runs.csv',
      'scenarios',
      'summary.csv',
      'summary.json',
      'summary.md',
    ]);
    // a parameter file is generated once per seed: another cluster of the same kind per seed
    expect(readdirSync(join(out, 'scenarios', 'tiny')).sort()).toEqual(['seed-1', 'seed-2']);
    expect(JSON.parse(readFileSync(join(out, 'scenarios', 'tiny', 'seed-2', 'sim_options'), 'utf8'))).toMatchObject({
      seed: 2,
    });
    expect(readFileSync(join(out, 'scenarios', 'tiny', 'seed-2', 'dynamic_service_stats'), 'utf8')).not.toBe(
      readFileSync(join(out, 'scenarios', 'tiny', 'seed-1', 'dynamic_service_stats'), 'utf8'),
    );
    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(s.scenarios).toEqual(['rebalance-and-failover', 'tiny']);
    // the scenario's own run: 3 moves with defaults (see sim-adapter.test.ts)
    expect(s.runs[0]).toMatchObject({
      scenario: 'rebalance-and-failover',
      variant: 'defaults',
      seed: 1,
      moves: 3,
      pingPongs: 1,
      simSeconds: 1100,
    });
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('<svg');
    // one line per decided verdict on stdout; a lead inside the noise says so
    const verdictLines = io.stdout.filter((l) => / better than /.test(l));
    const decided = s.verdicts.filter((v: { next: string | null }) => v.next !== null);
    expect(verdictLines).toHaveLength(decided.length);
    decided.forEach((v: { clear?: boolean | null }, i: number) =>
      expect(verdictLines[i]!.endsWith('within the seed-to-seed noise')).toBe(v.clear === false),
    );

    // bad input: each an error before anything runs or is written
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'defaults: {}\nfast: {ha-auto-rebalance-speed: 2}\n');
    const broken = join(dir, 'broken');
    writeFileSync(join(tmp('x'), 'x'), '');
    const badValue = join(dir, 'bad-value.yaml');
    writeFileSync(badValue, 'defaults: {}\nslow: {ha-auto-rebalance-backoff: 99999}\n');
    const impossible = join(dir, 'impossible.yaml');
    writeFileSync(impossible, 'nodes: [{count: 2, cpu: 8, memGiB: 16}]\nguests: {count: 200}\n');
    mkdirSync(join(dir, 'unreadable-case'));
    writeFileSync(join(dir, 'unreadable-case', 'cmdlist'), '[["power node1 on"');
    const cases: [string[], RegExp][] = [
      [['compare', SCENARIO, '--variants', bad, '--out', join(dir, 'o1')], /unknown crs key 'ha-auto-rebalance-speed'/],
      [
        ['compare', SCENARIO, '--variants', badValue, '--out', join(dir, 'o5')],
        /^poise-sim: '.*bad-value\.yaml' slow\.ha-auto-rebalance-backoff: invalid value '99999' for 'crs\.ha-auto-rebalance-backoff' \(seconds, 0 to 3600\)/,
      ],
      // the good parameter file before it is not written either
      [
        ['compare', params, impossible, '--variants', variants, '--out', join(dir, 'o6')],
        /^poise-sim: '.*impossible\.yaml' guests\.count: 200 guests of at least 0\.5 GiB need 100 GiB; the nodes have 32 GiB$/,
      ],
      // a case that does not load, after a parameter file: checked before anything is generated
      [
        ['compare', params, join(dir, 'unreadable-case'), '--variants', variants, '--out', join(dir, 'o7')],
        /^poise-sim: scenario 'unreadable-case': invalid JSON in '.*cmdlist'/,
      ],
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
    for (const o of ['o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7']) expect(existsSync(join(dir, o)), o).toBe(false);

    // the same --out again: the generated cases are reused (same bytes); other content is refused
    const again = capture();
    expect(
      await main(['compare', params, '--variants', variants, '--seeds', '1,2', '--jobs', '1', '--out', out], again),
    ).toBe(0);
    writeFileSync(join(dir, 'tiny2.yaml'), 'duration: 40m\nguests: {count: 9, placement: packed}\n');
    mkdirSync(join(dir, 'o8', 'scenarios', 'tiny2', 'seed-2'), { recursive: true });
    writeFileSync(join(dir, 'o8', 'scenarios', 'tiny2', 'seed-2', 'cmdlist'), '[]');
    const clash = capture();
    expect(
      await main(
        ['compare', join(dir, 'tiny2.yaml'), '--variants', variants, '--seeds', '1,2', '--out', join(dir, 'o8')],
        clash,
      ),
    ).toBe(1);
    expect(clash.stderr[0]).toMatch(/^poise-sim: '.*seed-2' exists with other content/);
    // seed-1, written by this call before the clash, is removed again; the clashing one stays
    expect(readdirSync(join(dir, 'o8', 'scenarios', 'tiny2'))).toEqual(['seed-2']);
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
    writeFileSync(
      traceFile,
      JSON.stringify({
        format: 'poise-run-trace/3',
        scenario: 's',
        variant: 'v',
        seed: 1,
        endTime: 10,
        nodes: ['a'],
        rounds: {
          time: [0],
          imbalance: [2],
          cpu: [[0]],
          mem: [[0]],
          online: [[true]],
          pressureCpu: [[null]],
          pressureMem: [[null]],
        },
        moves: [],
      }),
    );
    const e = capture();
    expect(await main(['report', traceFile, '--out', join(out, 'x')], e)).toBe(1);
    expect(e.stderr[0]).toBe(`poise-sim: '${traceFile}': rounds.imbalance[0]: expected an imbalance in 0..1`);
  });
});

describe('names that are also JavaScript object keys (scenario js-key-names)', () => {
  const JS_KEYS = fileURLToPath(new URL('../../scenarios/js-key-names', import.meta.url));
  const NODES = ['__proto__', 'constructor', 'toString', 'valueOf'];
  /** The SVG texts of the report that are node names. */
  const nodeTexts = (html: string) =>
    [...html.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!).filter((t) => NODES.includes(t));

  it('report and compare draw their charts (node and variant names reach the charts only as data)', async () => {
    const out = tmp('poise-cli-js-keys-');
    const io = capture();
    expect(await main(['report', JS_KEYS, '--out', join(out, 'report')], io), io.stderr.join('\n')).toBe(0);
    const report = readFileSync(join(out, 'report', 'report.html'), 'utf8');
    expect(scenarioCharts(report)).toHaveLength(3);
    // the node load chart's legend: every node, in byte order
    expect(nodeTexts(report)).toEqual(NODES);

    const variants = join(out, 'variants.yaml');
    writeFileSync(variants, 'constructor: {}\n__proto__: {ha-auto-rebalance-method: topsis}\n');
    expect(
      await main(
        ['compare', JS_KEYS, '--variants', variants, '--seeds', '1', '--jobs', '1', '--out', join(out, 'compare')],
        io,
      ),
      io.stderr.join('\n'),
    ).toBe(0);
    const compared = readFileSync(join(out, 'compare', 'report.html'), 'utf8');
    // imbalance, moves, and one node load chart per variant
    expect(scenarioCharts(compared)).toHaveLength(4);
    expect([...compared.matchAll(/data-variant="([^"]+)"/g)].map((m) => m[1])).toEqual(['constructor', '__proto__']);
    expect(
      JSON.parse(readFileSync(join(out, 'compare', 'summary.json'), 'utf8')).runs.map(
        (r: { variant: string }) => r.variant,
      ),
    ).toEqual(['constructor', '__proto__']);
  });
});

describe('estimateEndTime (the cost of a run, for ordering)', () => {
  it.each<[string, string[][], number]>([
    // lists at 20 and 120; the first slot more than 500 s after 120 is 720
    ['two lists', [['power node1 on'], ['service vm:101 migrate node2']], 720],
    // 'delay 900' at 120: the next slot at 120 + 900 + 80 = 1100, already > 500 s after 120
    ['a delay at the end', [['power node1 on'], ['delay 900']], 1100],
    // 'delay 50' at 20: the next list at 20 + 60 + 80 = 160; the end at 160 + 600
    ['a short delay', [['power node1 on', 'delay 50'], ['x']], 760],
  ])('%s', (_name, cmdlist, end) => expect(estimateEndTime(cmdlist)).toBe(end));
  it('is exact for 20 s rounds: the committed scenarios end where the estimate says', () => {
    for (const name of ['rebalance-and-failover', 'failing-migration-local-cdrom', 'noisy-dominant-guest']) {
      const input = loadCase(fileURLToPath(new URL(`../../scenarios/${name}`, import.meta.url)));
      const log = simulate(input, { profile: 'pve-9.2' }).log;
      const end = Number(/^info +(\d+) +hardware: exit simulation - done$/m.exec(log)![1]);
      expect(estimateEndTime(input.cmdlist), name).toBe(end);
    }
  });
});
