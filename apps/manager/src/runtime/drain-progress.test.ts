import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DrainProgressWriter, drainProgressPath, readDrainProgress, unfinishedDrain } from './drain-progress';

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
        ended: [
          { sid: 'vm:101', source: 'node3', target: 'node1', since: 110, endedAt: 150, ok: true },
          { sid: 'vm:102', source: 'node3', target: 'node2', since: 150, endedAt: 170, ok: false },
        ],
        message: 'drain stopped after 1 of 2 motions: …',
      },
    });
  });

  it('a drain run again after it stopped continues the record: its start, counts and ended motions', () => {
    const path = join(dir(), 'drain-progress.json');
    const first = new DrainProgressWriter(path, { nodes: ['node3', 'node4'], total: 5, at: 100, message: 'm' }, () => {
      throw new Error('no write error expected');
    });
    first.requested({ sid: 'vm:101', source: 'node3', target: 'node1' }, 110, 'step 1');
    first.requested({ sid: 'vm:102', source: 'node3', target: 'node1' }, 111, 'step 1');
    first.ended('vm:101', true, 150, 'done');
    // killed here: still running, vm:102 in flight; another drain's nodes, or a finished one, is not continued
    expect(unfinishedDrain(path, ['node3'])).toBeUndefined();
    const earlier = unfinishedDrain(path, ['node4', 'node3']);
    expect(earlier).toMatchObject({ state: 'running', succeeded: 1, startedAt: 100 });
    // the run after it followed vm:102 to success, and plans 2 more motions
    const second = new DrainProgressWriter(
      path,
      {
        nodes: ['node3', 'node4'],
        total: 2,
        at: 300,
        message: 'm',
        carried: { record: earlier, succeeded: 1, failed: 0 },
      },
      () => undefined,
    );
    expect(second.carriedSucceeded).toBe(2);
    expect(second.current).toMatchObject({ startedAt: 100, total: 4, succeeded: 2, failed: 0, inFlight: [] });
    expect(second.current.ended).toHaveLength(1);
    second.requested({ sid: 'vm:103', source: 'node4', target: 'node2' }, 310, 'step 1');
    second.ended('vm:103', true, 350, 'done');
    second.finished('done', 350, 'drain done');
    expect(second.carriedSucceeded).toBe(2);
    expect(readDrainProgress(path)).toMatchObject({ progress: { state: 'done', total: 4, succeeded: 3 } });
    expect(unfinishedDrain(path, ['node3', 'node4'])).toBeUndefined();
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
