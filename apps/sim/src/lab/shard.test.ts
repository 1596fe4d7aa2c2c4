import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { main, type Io } from '../main';
import type { RunJob, ScenarioRef } from './runner';
import {
  commandLine,
  commandTemplate,
  decodeExact,
  encodeExact,
  parseShard,
  readShardFile,
  shardJobs,
  type Shard,
} from './shard';

const SCENARIO = fileURLToPath(new URL('../../scenarios/rebalance-and-failover', import.meta.url));
const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));

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

describe('--shard i/n', () => {
  it('parses 1-based shares and says what is wrong with the rest', () => {
    expect(parseShard('1/3')).toEqual({ index: 1, count: 3 });
    expect(parseShard('3/3')).toEqual({ index: 3, count: 3 });
    expect(parseShard('0/3')).toMatch(
      /^expected 1 ≤ i ≤ n \(shares are numbered from 1; a 0-based index .* needs \+ 1\), got '0\/3'$/,
    );
    expect(parseShard('4/3')).toMatch(/^expected 1 ≤ i ≤ n .*got '4\/3'$/);
    expect(parseShard('x')).toMatch(/^expected i\/n such as 2\/8 .*got 'x'$/);
    expect(parseShard('1/0')).toMatch(/^expected n from 1 to 100000 shares, got '1\/0'$/);
    expect(parseShard('2/3/4')).toMatch(/^expected i\/n/);
    expect(parseShard('1.5/3')).toMatch(/^expected i\/n/);
  });

  it('the shares partition the runs, costliest spread first, the same on every machine', () => {
    const scenario = (name: string, cost: number): ScenarioRef => ({ name, dir: name, cost });
    const costs = [9, 1, 1, 5, 4, 3, 3, 2, 8, 1, 7];
    const jobs: RunJob[] = costs.map((c, index) => ({
      index,
      scenario: scenario(`s${index}`, c),
      variant: { name: 'v', crs: {} },
      seed: 1,
    }));
    const shares = [1, 2, 3].map((index) => shardJobs(jobs, { index, count: 3 }));
    const indices = shares.flatMap((s) => s.map((j) => j.index)).sort((a, b) => a - b);
    expect(indices).toEqual(jobs.map((j) => j.index));
    // longest-processing-time: 9 → 1, 8 → 2, 7 → 3, 5 → 3, 4 → 2, 3 → 1, 3 → 1, 2 → 2, 1 → 3, 1 → 3, 1 → 2
    const cost = (s: RunJob[]) => s.reduce((a, j) => a + j.scenario.cost!, 0);
    expect(shares.map(cost)).toEqual([15, 15, 14]);
    for (const s of shares) expect(s.map((j) => j.index)).toEqual([...s.map((j) => j.index)].sort((a, b) => a - b));
    expect(shardJobs(jobs, { index: 2, count: 3 })).toEqual(shares[1]);
    expect(shardJobs(jobs, { index: 1, count: 1 })).toEqual(jobs);
    // more shares than runs: the last ones are empty
    expect(shardJobs(jobs.slice(0, 2), { index: 3, count: 3 })).toEqual([]);
  });

  it('a digest survives the shard file exactly: −0, ±Infinity, NaN and undefined keys', () => {
    const value = {
      a: -0,
      b: Infinity,
      c: -Infinity,
      d: Number.NaN,
      e: undefined,
      f: [1, undefined, -0],
      g: { h: 0.1 + 0.2 },
    };
    const back = decodeExact(encodeExact(value)) as typeof value;
    expect(Object.is(back.a, -0)).toBe(true);
    expect(back.b).toBe(Infinity);
    expect(back.c).toBe(-Infinity);
    expect(back.d).toBeNaN();
    expect('e' in back && back.e === undefined).toBe(true);
    expect(back.f).toHaveLength(3);
    expect(back.f[1]).toBeUndefined();
    expect(Object.is(back.f[2], -0)).toBe(true);
    expect(back.g.h).toBe(0.1 + 0.2);
    expect(Object.keys(back)).toEqual(Object.keys(value));
  });

  it('the report’s command line: --shard left out, --out the merge’s', () => {
    const argv = ['a.yaml', '--variants', 'v.yaml', '--out', 'shard-2', '--shard', '2/4', '--jobs', '1'];
    const t = commandTemplate(`poise-sim compare ${argv.join(' ')}`, argv);
    expect(t).toEqual({
      prefix: 'poise-sim compare',
      args: ['a.yaml', '--variants', 'v.yaml', '--out', 'shard-2', '--jobs', '1'],
      outAt: 4,
    });
    expect(commandLine(t, '/tmp/all')).toBe('poise-sim compare a.yaml --variants v.yaml --out /tmp/all --jobs 1');
  });
});

describe('compare --shard + merge = one compare, byte for byte', () => {
  const dir = tmp('poise-shard-');
  const variants = join(dir, 'variants.yaml');
  const trace = join(dir, 'days');
  const io = capture();
  // a trace case (read through --trace-dir), a generated case with the load pressure model, a case directory
  const args = (out: string, extra: string[] = []) => [
    'compare',
    join(dir, 'trace.yaml'),
    join(dir, 'tiny.yaml'),
    SCENARIO,
    '--variants',
    variants,
    '--seeds',
    '1,2',
    '--jobs',
    '1',
    '--save-traces',
    '--trace-dir',
    trace,
    '--out',
    out,
    ...extra,
  ];
  const full = join(dir, 'full');
  const shards = [1, 2, 3].map((i) => join(dir, `shard-${i}`));

  beforeAll(async () => {
    writeFileSync(
      variants,
      'defaults: {}\neager: {ha-auto-rebalance-threshold: 10, ha-auto-rebalance-hold-duration: 0}\n',
    );
    writeFileSync(
      join(dir, 'tiny.yaml'),
      'duration: 40m\nguests: {count: 8, placement: packed}\nloadPressure: {cpu: {family: queue}}\n',
    );
    writeFileSync(
      join(dir, 'trace.yaml'),
      'duration: 40m\nnodes: [{count: 2, cpu: 8, memGiB: 64}]\nguests: {count: 12, headroom: 1, cpu: {median: 2, min: 1, max: 4}}\n' +
        'load: {shape: trace, file: nowhere/day.csv, scale: 3}\nloadPressure: {cpu: {family: logistic}}\n',
    );
    const rows = Array.from(
      { length: 5 },
      (_, r) => `vm${r},${Array.from({ length: 288 }, (_, k) => (r * 17 + k * 11) % 100).join(',')}`,
    );
    mkdirSync(trace);
    writeFileSync(join(trace, 'day.csv'), `${rows.join('\n')}\n`);
    expect(await main(args(full), io)).toBe(0);
    renameSync(full, join(dir, 'reference'));
    for (const [i, out] of shards.entries()) expect(await main(args(out, ['--shard', `${i + 1}/3`]), io)).toBe(0);
    expect(await main(['merge', ...shards, '--out', full], io)).toBe(0);
  }, 60_000);

  it('every output file is the same bytes', () => {
    const reference = join(dir, 'reference');
    const names = files(reference);
    expect(names).toEqual(
      expect.arrayContaining(['report.html', 'summary.json', 'summary.csv', 'runs.csv', 'summary.md']),
    );
    expect(names.filter((n) => n.startsWith('traces/'))).toHaveLength(12);
    expect(names.filter((n) => n.startsWith('scenarios/trace/seed-'))).not.toHaveLength(0);
    expect(files(full)).toEqual(names);
    for (const n of names) expect(readFileSync(join(full, n)).equals(readFileSync(join(reference, n))), n).toBe(true);
    // and the shards did share the work: 12 runs, each in one shard
    const counts = shards.map((s) => readShardFile(join(s, 'shard.json')).runs.length);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(12);
    expect(Math.min(...counts)).toBeGreaterThan(0);
    expect(readFileSync(join(full, 'report.html'), 'utf8')).toContain(`--out ${full}`);
    expect(readFileSync(join(full, 'report.html'), 'utf8')).not.toContain('--shard');
  });

  it('bad shares are usage errors before anything runs', async () => {
    for (const s of ['0/3', '4/3', 'x']) {
      const e = capture();
      const out = join(dir, `bad-${s.replace('/', '-')}`);
      expect(await main(args(out, ['--shard', s]), e)).toBe(2);
      expect(e.stderr[0]).toMatch(new RegExp(`^poise-sim '--shard' expected .*got '${s}'`));
      expect(existsSync(out)).toBe(false);
    }
  });

  it('a missing or duplicate shard, shards of another sweep or split, a used --out: clear errors, nothing written', async () => {
    const merge = async (dirs: string[], out: string) => {
      const e = capture();
      const code = await main(['merge', ...dirs, '--out', out], e);
      return { code, message: e.stderr.join('\n') };
    };
    const out = join(dir, 'never');
    expect(await merge(shards.slice(0, 2), out)).toEqual({
      code: 1,
      message: 'poise-sim: shard 3/3 missing (given: 1, 2)',
    });
    expect(await merge([shards[0]!, shards[1]!, shards[1]!], out)).toEqual({
      code: 1,
      message: `poise-sim: shard 2/3 given twice ('${shards[1]}' and '${shards[1]}')`,
    });
    // another sweep: the same split of other seeds
    const other = join(dir, 'other-seeds');
    const runOther = [...args(other, ['--shard', '3/3'])];
    runOther[runOther.indexOf('1,2')] = '3';
    expect(await main(runOther, capture())).toBe(0);
    const m = await merge([shards[0]!, shards[1]!, other], out);
    expect(m.code).toBe(1);
    expect(m.message).toBe(
      `poise-sim: '${join(other, 'shard.json')}' is a shard of another sweep than '${join(shards[0]!, 'shard.json')}': the scenarios (names or generated cases: another corpus, generator or trace file), the seeds differ`,
    );
    // another split of the same sweep
    const split = join(dir, 'split');
    expect(await main(args(split, ['--shard', '1/2']), capture())).toBe(0);
    expect((await merge([shards[0]!, split], out)).message).toMatch(
      /is shard 1\/2, .* shard 1\/3: not the same split$/,
    );
    expect((await merge(shards, full)).message).toBe(`poise-sim: '${full}' exists and is not an empty directory`);
    expect((await merge([...shards.slice(0, 2), dir], out)).message).toMatch(/holds no shard\.json/);
    // a shard whose generated cases were changed after the run
    writeFileSync(join(shards[0]!, 'scenarios', 'tiny', 'seed-1', 'README'), 'edited\n');
    expect((await merge(shards, out)).message).toMatch(
      /scenarios\/tiny' does not hold the generated cases its shard\.json names/,
    );
    expect(existsSync(out)).toBe(false);
    // a damaged shard file names the file and the field
    const broken = JSON.parse(readFileSync(join(shards[1]!, 'shard.json'), 'utf8')) as { shard: Shard };
    broken.shard.index = 'two' as unknown as number;
    writeFileSync(join(shards[1]!, 'shard.json'), JSON.stringify(broken));
    expect((await merge(shards, out)).message).toMatch(/shard-2\/shard\.json' shard\.index: /);
  });

  it('merge usage: shard directories and --out are needed', async () => {
    const e = capture();
    expect(await main(['merge', '--out', join(dir, 'x')], e)).toBe(2);
    expect(e.stderr[0]).toMatch(/^poise-sim 'merge' needs the shard directories/);
    expect(await main(['merge', shards[0]!], capture())).toBe(2);
  });
});
