import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DrainProgressWriter, drainProgressPath, readDrainProgress } from './drain-progress';

const dir = () => mkdtempSync(join(tmpdir(), 'poise-drain-progress-'));

describe('the drain progress record', () => {
  it('lives beside state.file', () => {
    expect(drainProgressPath('/var/lib/poise-manager/state.json')).toBe('/var/lib/poise-manager/drain-progress.json');
  });

  it('is written at the start, at each request and outcome and at the end, and read back', () => {
    const path = join(dir(), 'drain-progress.json');
    const w = new DrainProgressWriter(path, { nodes: ['node3'], total: 2, at: 100, message: 'draining node3' }, () => {
      throw new Error('no write error expected');
    });
    expect(readDrainProgress(path)).toMatchObject({ kind: 'record', progress: { state: 'running', total: 2 } });
    w.requested({ sid: 'vm:101', source: 'node3', target: 'node1' }, 110, 'step 1: migrate vm:101');
    expect(readDrainProgress(path)).toMatchObject({
      progress: { inFlight: [{ sid: 'vm:101', source: 'node3', target: 'node1', since: 110 }], updatedAt: 110 },
    });
    w.ended('vm:101', true, 150, 'vm:101 node3 → node1 succeeded');
    w.requested({ sid: 'vm:102', source: 'node3', target: 'node2' }, 150, 'step 2');
    w.ended('vm:102', false, 170, 'vm:102 failed');
    w.finished('stopped', 170, 'drain stopped after 1 of 2 motions: …');
    expect(readDrainProgress(path)).toEqual({
      kind: 'record',
      processGone: false,
      progress: {
        format: 'poise-drain-progress',
        version: 1,
        pid: process.pid,
        hostname: hostname(),
        nodes: ['node3'],
        state: 'stopped',
        startedAt: 100,
        updatedAt: 170,
        total: 2,
        succeeded: 1,
        failed: 1,
        inFlight: [],
        message: 'drain stopped after 1 of 2 motions: …',
      },
    });
  });

  it('a running record whose process is gone on this host says so', () => {
    const path = join(dir(), 'drain-progress.json');
    new DrainProgressWriter(path, { nodes: ['node3'], total: 2, at: 100, message: 'm' }, () => undefined);
    expect(readDrainProgress(path, () => false)).toMatchObject({ kind: 'record', processGone: true });
    expect(readDrainProgress(path, () => true)).toMatchObject({ kind: 'record', processGone: false });
  });

  it('no file is no drain; a file that is no record names the file and the field', () => {
    const d = dir();
    expect(readDrainProgress(join(d, 'none.json'))).toEqual({ kind: 'none' });
    const path = join(d, 'drain-progress.json');
    writeFileSync(path, '{"format":"poise-drain-progress"');
    expect(readDrainProgress(path)).toEqual({
      kind: 'invalid',
      problem: expect.stringMatching(new RegExp(`^'${path}' is not valid JSON: `)),
    });
    const good = {
      format: 'poise-drain-progress',
      version: 1,
      pid: 1,
      hostname: 'h',
      nodes: [],
      state: 'running',
      startedAt: 0,
      updatedAt: 0,
      total: 1,
      succeeded: 0,
      failed: 0,
      inFlight: [],
      message: '',
    };
    writeFileSync(path, JSON.stringify({ ...good, total: -1 }));
    expect(readDrainProgress(path)).toEqual({
      kind: 'invalid',
      problem: expect.stringMatching(/is not a drain progress record: field 'total': /),
    });
    writeFileSync(path, JSON.stringify({ ...good, inFlight: [{ sid: 'vm:1', source: 'a', target: 'b', since: 'x' }] }));
    expect(readDrainProgress(path)).toMatchObject({ problem: expect.stringContaining("field 'inFlight.0.since'") });
    writeFileSync(path, JSON.stringify({ ...good, version: 2 }));
    expect(readDrainProgress(path)).toMatchObject({ problem: expect.stringContaining("field 'version'") });
  });

  it('a record that cannot be written is said once; the drain goes on', () => {
    const d = dir();
    // a file where the directory should be: even root cannot write there
    const notADir = join(d, 'state.json');
    writeFileSync(notADir, '{}');
    const problems: string[] = [];
    const w = new DrainProgressWriter(
      join(notADir, 'drain-progress.json'),
      { nodes: ['node3'], total: 1, at: 0, message: 'm' },
      (p) => problems.push(p),
    );
    w.requested({ sid: 'vm:1', source: 'node3', target: 'node1' }, 1, 'step 1');
    w.finished('done', 2, 'drain done: 1 motion');
    expect(problems).toEqual([
      expect.stringMatching(
        /^cannot write the drain's progress to '.*state\.json\/drain-progress\.json': .*(EEXIST|ENOTDIR).*; the drain goes on$/,
      ),
    ]);
    expect(w.current).toMatchObject({ state: 'done', inFlight: [{ sid: 'vm:1' }] });
  });
});
