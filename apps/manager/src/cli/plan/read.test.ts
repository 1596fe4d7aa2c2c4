import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CONFIG, EXIT_OK, main } from '../main';
import { captureIo, GIB } from '../../testing/support';
import { parseReadPoint } from './args';
import { readMoment, SIM_READ_END_MAX_SECONDS } from './source';

async function run(argv: string[]) {
  const c = captureIo();
  const code = await main(argv, c.io, {});
  return { code, out: c.out.join('\n'), err: c.err.join('\n') };
}

function writeText(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'poise-plan-read-')), 'cluster.json');
  writeFileSync(file, text);
  return file;
}

describe('--at: when a simulated cluster is read', () => {
  it.each([
    ['start', 'start'],
    ['end', 'end'],
    ['600', { seconds: 600 }],
    ['90m', { seconds: 5400 }],
    ['2h', { seconds: 7200 }],
    ['01:02:03', { seconds: 3723 }],
  ])('%s', (text, expected) => {
    expect(parseReadPoint(text)).toEqual(expected);
  });

  // lists at 20 s, 120 s, then every 100 s: the 37th at 20 + 36·100 = 3620 s, past the hour
  const short = [['power node1 on'], ['x']];
  const long = Array.from({ length: 37 }, () => ['x']);
  it('defaults to the end of a short timeline and the start of a long one, and says so', () => {
    expect(readMoment(short, undefined)).toEqual({ seconds: 120, why: "after the case's command lists" });
    expect(readMoment(long, undefined).seconds).toBe(20);
    expect(3620).toBeGreaterThan(SIM_READ_END_MAX_SECONDS);
    expect(readMoment(long, undefined).why).toBe(
      'at the start of the case: its command lists run until 01:00:20; --at end|<time> reads later',
    );
    expect(readMoment(long, 'end')).toEqual({ seconds: 3620, why: "--at end: after the case's last command list" });
    expect(readMoment(short, 'start').seconds).toBe(20);
    expect(readMoment(short, { seconds: 90 })).toEqual({ seconds: 90, why: '--at 00:01:30' });
  });

  it('plan --sim --at start reads the bundled scenario before its load is set, and the line says which moment', async () => {
    const r = await run(['plan', '--sim', '--at', 'start']);
    expect(r.code).toBe(EXIT_OK);
    expect(r.out).toMatch(/^cluster: .* read at sim 00:0\d:\d\d \(--at start: after the case's first command list\)/m);
    const end = await run(['plan', '--sim']);
    expect(end.out).toMatch(/read at sim 00:02:20 \(after the case's command lists\)/);
  });
});

describe('the plan JSON holds the starting placement', () => {
  it('node per guest and the time of the reading', async () => {
    const doc = JSON.parse((await run(['plan', '--sim', '--json'])).out) as {
      start: { readAt: string; placement: Record<string, string> };
      placement: Record<string, string>;
    };
    expect(doc.start.readAt).toBe('2026-01-01T00:02:20.000Z');
    expect(Object.keys(doc.start.placement)).toEqual(['ct:105', 'ct:106', 'vm:101', 'vm:102', 'vm:103', 'vm:104']);
    expect(new Set(Object.values(doc.start.placement))).toEqual(new Set(['node1']));
    expect(Object.keys(doc.placement).sort()).toEqual(Object.keys(doc.start.placement));
  });
});

describe('--snapshot refuses a key given twice', () => {
  const cluster = (guests: string) =>
    `{"nodes": [{"name": "node1", "cpuCores": 16, "memBytes": ${64 * GIB}}],\n "guests": [],\n "guests": ${guests}}`;
  it('"guests" twice: exit 78, the key, line and column named', async () => {
    const file = writeText(cluster('[{"id": "vm:1", "kind": "vm", "node": "node1", "cpu": 1, "mem": 1}]'));
    const r = await run(['plan', '--snapshot', file]);
    expect(r.code).toBe(EXIT_CONFIG);
    expect(r.err).toContain(`${file}: not valid JSON: line 3, column 2: duplicate key 'guests'`);
  });
  it('a valid file still plans, with the file time as the reading time', async () => {
    const file = writeText(`{"nodes": [{"name": "node1", "cpuCores": 16, "memBytes": ${64 * GIB}}], "guests": []}`);
    const r = await run(['plan', '--snapshot', file, '--json']);
    expect(r.code).toBe(EXIT_OK);
    expect(JSON.parse(r.out).start).toMatchObject({ placement: {} });
  });
});
