import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planRuns, runAll, type RunJob } from './runner';
import { summarize } from './summary';
import type { RunTrace } from './trace';

const MODEL = new URL('../testing/synthetic-model.ts', import.meta.url);

function scenarioDir(opts: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'poise-lab-runner-'));
  writeFileSync(join(dir, 'synthetic.json'), JSON.stringify(opts));
  return dir;
}

describe('planRuns', () => {
  it('orders by scenario name (byte order), then the variants as given, then seed', () => {
    const jobs = planRuns(
      [
        { name: 'b', dir: '/b' },
        { name: 'B', dir: '/B' },
        { name: 'a', dir: '/a' },
      ],
      [
        { name: 'zz', crs: {} },
        { name: 'aa', crs: {} },
      ],
      [2, 1],
    );
    expect(jobs.map((j) => `${j.scenario.name}/${j.variant.name}/${j.seed}`)).toEqual([
      'B/zz/1',
      'B/zz/2',
      'B/aa/1',
      'B/aa/2',
      'a/zz/1',
      'a/zz/2',
      'a/aa/1',
      'a/aa/2',
      'b/zz/1',
      'b/zz/2',
      'b/aa/1',
      'b/aa/2',
    ]);
    expect(jobs.map((j) => j.index)).toEqual(jobs.map((_, i) => i));
  });
  it('rejects two scenarios or two variants with the same name', () => {
    expect(() =>
      planRuns(
        [
          { name: 'x', dir: '/1/x' },
          { name: 'x', dir: '/2/x' },
        ],
        [{ name: 'v', crs: {} }],
        [1],
      ),
    ).toThrow("two scenarios are named 'x' ('/1/x' and '/2/x')");
    expect(() =>
      planRuns(
        [{ name: 'x', dir: '/x' }],
        [
          { name: 'v', crs: {} },
          { name: 'v', crs: {} },
        ],
        [1],
      ),
    ).toThrow("two variants are named 'v'");
  });
});

describe('runAll', () => {
  const dir = scenarioDir({ busy: 20_000 });
  const jobs = planRuns(
    [
      { name: 's1', dir },
      { name: 's2', dir },
    ],
    [
      { name: 'defaults', crs: {} },
      { name: 'calm', crs: { 'ha-auto-rebalance-threshold': 60 } },
    ],
    [1, 2, 3],
  );
  const keep = (job: RunJob, t: RunTrace) => ({
    key: `${job.scenario.name}/${job.variant.name}/${job.seed}`,
    summary: summarize(t),
    trace: JSON.stringify(t),
  });

  it('returns results in job order whatever the finishing order; 2 workers = 1 worker, byte for byte', async () => {
    const progress: number[] = [];
    const one = await runAll(jobs, { module: MODEL, jobs: 1, consume: keep, onProgress: (d) => progress.push(d) });
    let workers: { runs: number; utilization: number }[] = [];
    const two = await runAll(jobs, { module: MODEL, jobs: 2, consume: keep, onWorkers: (ws) => (workers = ws) });
    // every run done by one of the two workers; each busy a share 0..1 of its life
    expect(workers).toHaveLength(2);
    expect(workers.reduce((a, w) => a + w.runs, 0)).toBe(jobs.length);
    for (const w of workers) {
      expect(w.utilization).toBeGreaterThan(0);
      expect(w.utilization).toBeLessThanOrEqual(1);
    }
    expect(one.map((r) => r.key)).toEqual(jobs.map((j) => `${j.scenario.name}/${j.variant.name}/${j.seed}`));
    expect(JSON.stringify(two)).toBe(JSON.stringify(one));
    expect(progress).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    // the variants really differ (the test would pass trivially on identical runs otherwise)
    expect(one[0]!.trace).not.toBe(one[3]!.trace);
  });
  it('starts the costliest runs first (one worker: the completion order is the start order); results stay in job order', async () => {
    const costly = planRuns(
      [
        { name: 'a-cheap', dir, cost: 1 },
        { name: 'b-dear', dir, cost: 100 },
        { name: 'c-mid', dir, cost: 10 },
        { name: 'd-unknown', dir },
      ],
      [{ name: 'defaults', crs: {} }],
      [1, 2],
    );
    const seen: string[] = [];
    const got = await runAll(costly, {
      module: MODEL,
      jobs: 1,
      consume: (job, t) => (seen.push(`${job.scenario.name}/${job.seed}`), keep(job, t)),
    });
    // cost 100, 10, then 1 and the default 1 in job order
    expect(seen).toEqual([
      'b-dear/1',
      'b-dear/2',
      'c-mid/1',
      'c-mid/2',
      'a-cheap/1',
      'a-cheap/2',
      'd-unknown/1',
      'd-unknown/2',
    ]);
    expect(got.map((r) => r.key)).toEqual([
      'a-cheap/defaults/1',
      'a-cheap/defaults/2',
      'b-dear/defaults/1',
      'b-dear/defaults/2',
      'c-mid/defaults/1',
      'c-mid/defaults/2',
      'd-unknown/defaults/1',
      'd-unknown/defaults/2',
    ]);
  });
  it('a failing run rejects naming the run', async () => {
    const bad = planRuns(
      [{ name: 's', dir }],
      [
        { name: 'defaults', crs: {} },
        { name: 'explode', crs: {} },
      ],
      [1, 2],
    );
    // which of the two failing runs is reported first depends on scheduling
    await expect(runAll(bad, { module: MODEL, jobs: 2, consume: keep })).rejects.toThrow(
      /^run of scenario 's' variant 'explode' seed [12] failed: synthetic failure$/,
    );
  });
  it('a trace for another run is a failure', async () => {
    const bad = planRuns([{ name: 's', dir }], [{ name: 'wrong-seed', crs: {} }], [4]);
    await expect(runAll(bad, { module: MODEL, jobs: 1, consume: keep })).rejects.toThrow(
      "run of scenario 's' variant 'wrong-seed' seed 4 returned the trace of scenario 's' variant 'wrong-seed' seed 5",
    );
  });
  it('a module without runOne is a failure', async () => {
    const m = join(mkdtempSync(join(tmpdir(), 'poise-lab-mod-')), 'empty.mjs');
    writeFileSync(m, 'export const x = 1;\n');
    await expect(runAll(jobs.slice(0, 1), { module: m, jobs: 1, consume: keep })).rejects.toThrow(
      /exports no function 'runOne'/,
    );
  });
  it('a JavaScript module importing a workspace package runs under the source condition', async () => {
    const js = new URL('../testing/js-model.mjs', import.meta.url);
    const [r] = await runAll(jobs.slice(0, 1), { module: js, jobs: 1, consume: keep });
    // loads 0.2 and 0.6: CV = 0.2 / 0.4 = 0.5, normalised by √(2 − 1) = 0.5
    expect(r!.summary.imbalanceTimeWeighted).toBeCloseTo(0.25, 12); // 0.5 for 20 s, 0 for 20 s
  });
  it('rejects a bad job count', async () => {
    await expect(runAll(jobs, { module: MODEL, jobs: 0, consume: keep })).rejects.toThrow(
      /jobs: expected an integer ≥ 1, got 0/,
    );
  });
  it('no jobs, no workers', async () => {
    expect(await runAll([], { module: MODEL, jobs: 2, consume: keep })).toEqual([]);
  });
});
