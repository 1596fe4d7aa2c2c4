import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunRecorder, Simulation, loadCase, simulate } from '@poise/sim';
import { generateCase } from './generate';
import { validateParams } from './params';
import {
  TRACE_VALUES,
  TraceCache,
  parseWorkloadTrace,
  readWorkloadTrace,
  traceFilePath,
  workloadFor,
  type WorkloadTrace,
} from './workload-trace';

const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));
/** Row r's value at step k: 1..98, different for every (r mod 98, k) pair a test looks at. */
const value = (r: number, k: number) => 1 + ((r * 13 + k * 7) % 98);
const row = (name: string, values: readonly (number | string)[]) => `${name},${values.join(',')}`;
const day = (rows: number, f: (r: number, k: number) => number | string = value) =>
  `${Array.from({ length: rows }, (_, r) =>
    row(
      `vm-${r}`,
      Array.from({ length: TRACE_VALUES }, (_, k) => f(r, k)),
    ),
  ).join('\n')}\n`;

describe('parseWorkloadTrace: the file format', () => {
  it('reads names and 288 values per row; \\r\\n line ends and a missing last newline are fine', () => {
    const text = day(3).replace(/\n/g, '\r\n').trimEnd();
    const t = parseWorkloadTrace(text, 'd.csv');
    expect(t.names).toEqual(['vm-0', 'vm-1', 'vm-2']);
    expect(t.values).toHaveLength(3);
    expect(Array.from(t.values[2]!.slice(0, 3))).toEqual([value(2, 0), value(2, 1), value(2, 2)]);
    expect(
      parseWorkloadTrace(
        day(1, () => '12.5'),
        'd.csv',
      ).values[0]![287],
    ).toBe(12.5);
  });

  const ok = Array.from({ length: TRACE_VALUES }, () => 10);
  const cases: { name: string; text: string; error: RegExp }[] = [
    { name: 'an empty file', text: '', error: /^'d\.csv': no rows/ },
    {
      name: 'a row with 287 values',
      text: `${row('a', ok)}\n${row('b', ok.slice(1))}\n`,
      error: /^'d\.csv' line 2, row 'b': 287 values, expected 288 \(one day at 300 s\)$/,
    },
    {
      name: 'a row with 289 values',
      text: `${row('a', [...ok, 1])}\n`,
      error: /^'d\.csv' line 1, row 'a': 289 values, expected 288/,
    },
    {
      name: "a value 'x'",
      text: `${row('a', ok)}\n${row(
        'b',
        ok.map((v, k) => (k === 5 ? 'x' : v)),
      )}\n`,
      error: /^'d\.csv' line 2, v5: "x" is not a cpu utilisation in percent \(a number in 0\.\.100\)$/,
    },
    {
      name: 'a value −1',
      text: `${row(
        'a',
        ok.map((v, k) => (k === 0 ? -1 : v)),
      )}\n`,
      error: /^'d\.csv' line 1, v0: "-1" is not a cpu utilisation/,
    },
    {
      name: 'a value 100.5',
      text: `${row(
        'a',
        ok.map((v, k) => (k === 287 ? 100.5 : v)),
      )}\n`,
      error: /^'d\.csv' line 1, v287: "100\.5" is not a cpu utilisation/,
    },
    {
      name: 'an empty value',
      text: `${row(
        'a',
        ok.map((v, k) => (k === 3 ? '' : v)),
      )}\n`,
      error: /^'d\.csv' line 1, v3: "" is not a cpu utilisation/,
    },
    {
      name: 'a value with spaces',
      text: `${row(
        'a',
        ok.map((v, k) => (k === 3 ? ' 4' : v)),
      )}\n`,
      error: /^'d\.csv' line 1, v3: " 4" is not/,
    },
    {
      name: 'a duplicate name',
      text: `${row('a', ok)}\n${row('b', ok)}\n${row('a', ok)}\n`,
      error: /^'d\.csv' line 3, name: 'a' again \(first on line 1\)$/,
    },
    { name: 'an empty name', text: `${row('', ok)}\n`, error: /^'d\.csv' line 1, name: empty$/ },
    {
      name: 'a blank line',
      text: `${row('a', ok)}\n\n${row('b', ok)}\n`,
      error: /^'d\.csv' line 2, name: a blank line/,
    },
    { name: 'a byte-order mark', text: `\ufeff${row('a', ok)}\n`, error: /^'d\.csv' line 1, name: a byte-order mark/ },
  ];
  for (const c of cases) it(c.name, () => expect(() => parseWorkloadTrace(c.text, 'd.csv')).toThrow(c.error));

  it('a missing file, a directory and a file that is not UTF-8 are errors naming the file', () => {
    const dir = tmp('poise-trace-files-');
    expect(() => readWorkloadTrace(join(dir, 'nope.csv'))).toThrow(/^trace file '.*nope\.csv': no such file$/);
    expect(() => readWorkloadTrace(dir)).toThrow(/^trace file '.*': not a regular file$/);
    writeFileSync(join(dir, 'bin.csv'), Buffer.from([0x61, 0xff, 0xfe, 0x0a]));
    expect(() => readWorkloadTrace(join(dir, 'bin.csv'))).toThrow(/^trace file '.*bin\.csv': not UTF-8 text$/);
    writeFileSync(join(dir, 'ok.csv'), day(2));
    const t = readWorkloadTrace(join(dir, 'ok.csv'));
    expect(t.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(t.file).toBe(join(dir, 'ok.csv'));
  });

  it('the cache reads a file once', () => {
    const dir = tmp('poise-trace-cache-');
    writeFileSync(join(dir, 'a.csv'), day(2));
    const cache = new TraceCache();
    const first = cache.get(join(dir, 'a.csv'));
    writeFileSync(join(dir, 'a.csv'), day(5));
    expect(cache.get(join(dir, 'a.csv'))).toBe(first);
    expect(new TraceCache().get(join(dir, 'a.csv')).values).toHaveLength(5);
  });
});

describe('traceFilePath: where a trace file is read, and the override', () => {
  it('relative to the parameter file, absolute as it is; --trace-day swaps the name, --trace-dir the directory', () => {
    expect(traceFilePath('../t/20110303.csv', '/p/corpus/a.yaml')).toEqual({
      path: '/p/t/20110303.csv',
      shown: '../t/20110303.csv',
    });
    expect(traceFilePath('/data/x.csv', '/p/a.yaml')).toEqual({ path: '/data/x.csv', shown: '/data/x.csv' });
    expect(traceFilePath('../t/20110303.csv', '/p/corpus/a.yaml', { day: '20110420' })).toEqual({
      path: '/p/t/20110420.csv',
      shown: '../t/20110420.csv',
    });
    expect(traceFilePath('../t/20110303.csv', '/p/corpus/a.yaml', { day: 'other.csv', dir: '/mnt/days' })).toEqual({
      path: '/mnt/days/other.csv',
      shown: '/mnt/days/other.csv',
    });
    expect(traceFilePath('../t/20110303.csv', '/p/corpus/a.yaml', { dir: '/mnt/days' }).path).toBe(
      '/mnt/days/20110303.csv',
    );
  });
});

/** Each guest's cpu in use at the trace's steps, replayed from the case's files and slot times. */
function replay(files: Map<string, string>, steps: number): Map<string, number[]> {
  const dyn = JSON.parse(files.get('dynamic_service_stats')!) as Record<string, { cpu: number }>;
  const now = new Map(Object.entries(dyn).map(([sid, s]) => [sid, s.cpu]));
  const out = new Map([...now.keys()].map((sid) => [sid, [now.get(sid)!]]));
  const lists = JSON.parse(files.get('cmdlist')!) as string[][];
  const timed: [number, string][] = [];
  let t = 20;
  for (const list of lists) {
    let next = t + 100;
    for (const c of list) {
      const m = /^delay (\d+)$/.exec(c);
      if (m && Number(m[1]) > 20) next = t + Math.ceil(Number(m[1]) / 20) * 20 + 80;
      timed.push([t, c]);
    }
    t = next;
  }
  let i = 0;
  for (let k = 1; k < steps; k++) {
    // a value for [300k, 300(k+1)) is set at the slot 300k + 20
    for (; i < timed.length && timed[i]![0] <= 300 * k + 20; i++) {
      const m = /^service (\S+) set-dynamic-stats cpu ([\d.]+)$/.exec(timed[i]![1]);
      if (m) now.set(m[1]!, Number(m[2]));
    }
    for (const [sid, cpu] of now) out.get(sid)!.push(cpu);
  }
  return out;
}

describe('load: {shape: trace}: each guest replays a row', () => {
  const dir = tmp('poise-trace-gen-');
  const file = join(dir, 'day.csv');
  writeFileSync(file, day(10));
  const base = {
    duration: '6h',
    nodes: [{ count: 3, cpu: 32, memGiB: 128 }],
    guests: { count: 8, headroom: 1, cpu: { median: 2, sigma: 0.8, min: 1, max: 8 } },
    load: { shape: 'trace', file: 'day.csv' },
  };
  const params = join(dir, 'p.yaml');
  const gen = (p: object, trace?: WorkloadTrace) => {
    const checked = validateParams(p, params);
    const { params: q, workload } = workloadFor(checked, params, {}, new TraceCache());
    return generateCase(q, params, trace ?? workload);
  };
  const cores = (files: Map<string, string>) =>
    new Map(
      Object.entries(JSON.parse(files.get('static_service_stats')!) as Record<string, { maxcpu: number }>).map(
        ([sid, s]) => [sid, s.maxcpu],
      ),
    );
  /** The row a guest's replayed cpu matches (value % × scale × cores, at most its cores), from step `first`. */
  const rowOf = (cpu: number[], maxcpu: number, first = 0, scale = 1) => {
    const rows: number[] = [];
    for (let r = 0; r < 10; r++) {
      const want = cpu.map((_, k) =>
        Math.max(
          0.01,
          Math.round(Math.min(maxcpu, (value(r, (first + k) % TRACE_VALUES) / 100) * scale * maxcpu) * 100) / 100,
        ),
      );
      if (want.every((w, k) => w === cpu[k])) rows.push(r);
    }
    return rows;
  };

  it('cpu in use = value % × its cores every 300 s, one distinct row per guest while rows last', () => {
    const files = gen(base);
    const steps = Math.floor((6 * 3600 - 600) / 300);
    const got = replay(files, steps);
    const maxcpu = cores(files);
    const rows = [...got].map(([sid, cpu]) => {
      const r = rowOf(cpu, maxcpu.get(sid)!);
      expect(r, sid).toHaveLength(1);
      return r[0]!;
    });
    expect(new Set(rows).size).toBe(8);
    // and the simulator runs it: the case loads and its guests' cpu is what the trace says
    const out = join(dir, 'case');
    mkdirSync(out);
    for (const [name, text] of files) writeFileSync(join(out, name), text);
    const { error } = simulate(loadCase(out), { profile: 'pve-9.2' });
    expect(error).toBeUndefined();
    expect(readFileSync(join(out, 'README'), 'utf8')).toMatch(
      /replay rows of the trace file 'day\.csv' \(sha256 [0-9a-f]{64}, 10 rows\): 8 distinct rows, from 0 h into the day, cpu in use = value % × 1 × the guest's cores/,
    );
  });

  it('more guests than rows: every row first, then drawn again (with replacement)', () => {
    const files = gen({ ...base, guests: { ...base.guests, count: 25 } });
    const got = replay(files, 12);
    const maxcpu = cores(files);
    const rowBySid = new Map([...got].map(([sid, cpu]) => [sid, rowOf(cpu, maxcpu.get(sid)!)[0]!]));
    const firstTen = [...rowBySid].filter(([sid]) => Number(sid.slice(3)) < 110).map(([, r]) => r);
    expect(new Set(firstTen).size).toBe(10);
    expect(new Set(rowBySid.values()).size).toBe(10);
    expect(readFileSync(file, 'utf8')).toBe(day(10));
    expect(files.get('README')).toMatch(/10 distinct rows \(more guests than rows: the rest drawn again\)/);
  });

  it('offset, scale (capped at the cores) and the wrap past the end of the day', () => {
    const files = gen({ ...base, duration: '3h', load: { ...base.load, offset: '23h', scale: 3 } });
    const got = replay(files, 20);
    const maxcpu = cores(files);
    for (const [sid, cpu] of got) expect(rowOf(cpu, maxcpu.get(sid)!, 276, 3), sid).toHaveLength(1);
    // ×3 of values up to 98 %: some steps at the guest's cores, none above
    const all = [...got].flatMap(([sid, cpu]) => cpu.map((c) => c / maxcpu.get(sid)!));
    expect(Math.max(...all)).toBe(1);
    expect(JSON.parse(files.get('generator.json')!).load).toMatchObject({
      shape: 'trace',
      file: 'day.csv',
      offset: 82800,
      scale: 3,
    });
  });

  it('an unchanged value writes no command; the same seed gives the same bytes, another seed other rows', () => {
    const flat = join(dir, 'flat.csv');
    writeFileSync(
      flat,
      day(10, (r) => 10 + r),
    );
    const files = gen({ ...base, load: { ...base.load, file: 'flat.csv' } });
    expect(files.get('cmdlist')).not.toMatch(/set-dynamic-stats/);
    const a = gen(base);
    expect([...gen(base)]).toEqual([...a]);
    expect(gen({ ...base, seed: 2 }).get('cmdlist')).not.toBe(a.get('cmdlist'));
  });

  it("the README's mean cpu use is what the simulator measures on the nodes", () => {
    const files = gen({ ...base, duration: '4h', baseLoad: { cpu: 0.03 }, load: { ...base.load, scale: 2 } });
    const said = Number(/Mean cpu use over the run: ([\d.]+) % of the cores/.exec(files.get('README')!)![1]);
    const out = join(dir, 'use-case');
    mkdirSync(out);
    for (const [name, text] of files) writeFileSync(join(out, name), text);
    const sim = new Simulation(loadCase(out), { profile: 'pve-9.2' });
    const rec = new RunRecorder(sim);
    sim.run();
    const { time, cpu } = rec.rounds;
    // time-weighted cluster use: node i's share × its 32 cores, each sample holding to the next
    let area = 0;
    for (let r = 0; r < time.length; r++) {
      const until = r + 1 < time.length ? time[r + 1]! : rec.endTime;
      area += cpu.reduce((a, col) => a + col[r]! * 32, 0) * (until - time[r]!);
    }
    const measured = (100 * area) / rec.endTime / (3 * 32);
    expect(said).toBeGreaterThan(10);
    expect(Math.abs(measured - said)).toBeLessThan(0.5);
  });

  const bad: { name: string; load: object; error: RegExp }[] = [
    {
      name: 'no file',
      load: { shape: 'trace' },
      error: /^'.*p\.yaml' load\.file: the 'trace' shape needs a trace file$/,
    },
    {
      name: 'a file for another shape',
      load: { shape: 'bursty', file: 'day.csv' },
      error: /^'.*p\.yaml' load\.file: only the 'trace' shape reads it \(shape 'bursty'\)$/,
    },
    {
      name: 'a scale for another shape',
      load: { shape: 'idle', scale: 2 },
      error: /^'.*p\.yaml' load\.scale: only the 'trace' shape reads it/,
    },
    {
      name: 'an offset off the trace’s interval',
      load: { shape: 'trace', file: 'day.csv', offset: 100 },
      error: /^'.*p\.yaml' load\.offset: expected a multiple of 300 s below 24 h \(86400 s\), got 100 s$/,
    },
    {
      name: 'an offset of a day',
      load: { shape: 'trace', file: 'day.csv', offset: '24h' },
      error: /^'.*p\.yaml' load\.offset: expected a multiple of 300 s below 24 h/,
    },
    {
      name: 'a scale of 0',
      load: { shape: 'trace', file: 'day.csv', scale: 0 },
      error: /^'.*p\.yaml' load\.scale: expected a factor > 0 and ≤ 100$/,
    },
    {
      name: 'a missing trace file',
      load: { shape: 'trace', file: 'nope.csv' },
      error: /^trace file '.*nope\.csv': no such file$/,
    },
    {
      name: 'an empty file name',
      load: { shape: 'trace', file: '' },
      error: /^'.*p\.yaml' load\.file: expected a file name$/,
    },
  ];
  for (const c of bad) it(c.name, () => expect(() => gen({ ...base, load: c.load })).toThrow(c.error));
  it('a bad row in the trace file is an error naming the file and line', () => {
    writeFileSync(join(dir, 'bad.csv'), `${day(2)}vm-x,${'5,'.repeat(286)}5\n`);
    expect(() => gen({ ...base, load: { shape: 'trace', file: 'bad.csv' } })).toThrow(
      /^'.*bad\.csv' line 3, row 'vm-x': 287 values, expected 288/,
    );
  });
  it('generateCase without the trace read is an error, not an idle case', () => {
    expect(() => generateCase(validateParams(base, params), params)).toThrow(
      /load\.file: the 'trace' shape needs its trace file read/,
    );
  });
});
