// The CI closing line (.ci/count.mjs) counts every kind of failure a vitest run can have, and its
// exit status agrees with the line. The end-to-end cases run a real vitest on small generated test
// files (in the OS temp directory, with vitest's globals so they import nothing) and count its
// JSON report the way .ci/run does.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const countScript = join(root, '.ci/count.mjs');
const vitestBin = join(root, 'node_modules/vitest/vitest.mjs');
// A plain .mjs script without types; its JSDoc says what it takes and returns.
const { countReport } = (await import(countScript)) as {
  countReport: (report: unknown, vitestStatus?: number) => { passed: number; failed: number; reasons: string[] };
};

const work: string[] = [];
afterAll(() => {
  for (const dir of work) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** Runs vitest on the given test files, then .ci/count.mjs on its report, as .ci/run does. */
function runCounted(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'poise-count-'));
  work.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  writeFileSync(
    join(dir, 'vitest.config.mjs'),
    "export default { test: { globals: true, include: ['*.test.mjs'], reporters: ['json'], outputFile: { json: 'report.json' } } };\n",
  );
  const vitest = spawnSync(process.execPath, [vitestBin, 'run', '--root', dir], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const count = spawnSync(
    process.execPath,
    [countScript, join(dir, 'report.json'), '--vitest-status', String(vitest.status)],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { vitestStatus: vitest.status, line: count.stdout.trim(), status: count.status, stderr: count.stderr };
}

describe('.ci/count.mjs on real vitest runs', () => {
  it('all green: the line counts the tests and the status is 0', () => {
    const r = runCounted({ 'ok.test.mjs': "test('a', () => {}); test('b', () => {});\n" });
    expect(r.vitestStatus).toBe(0);
    expect(r.line).toBe('2 passed, 0 failed');
    expect(r.status).toBe(0);
  }, 120_000);

  it('a failed afterAll (its tests passed) is a failure, named on stderr', () => {
    const r = runCounted({
      'hook.test.mjs': "afterAll(() => { throw new Error('cleanup timed out'); }); test('passes', () => {});\n",
      'ok.test.mjs': "test('a', () => {});\n",
    });
    expect(r.line).toBe('2 passed, 1 failed');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/hook\.test\.mjs.*cleanup timed out/);
  }, 120_000);

  it('a file that does not load, a failed beforeAll and a failed test each count once', () => {
    const r = runCounted({
      'load.test.mjs': "throw new Error('syntax of the world');\n",
      'before.test.mjs':
        "describe('d', () => { beforeAll(() => { throw new Error('no db'); }); test('x', () => {}); });\n",
      'fail.test.mjs': "test('wrong', () => { expect(1).toBe(2); }); test('right', () => {});\n",
    });
    expect(r.line).toBe('1 passed, 3 failed');
    expect(r.status).toBe(1);
  }, 120_000);

  it('an error thrown after a test ended (vitest exits 1, its report says success) is a failure', () => {
    const r = runCounted({
      'late.test.mjs': "test('leaks a timer', () => { setTimeout(() => { throw new Error('late'); }, 0); });\n",
    });
    expect(r.vitestStatus).not.toBe(0);
    expect(r.line).toBe('1 passed, 1 failed');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/errors outside any test/);
  }, 120_000);
});

describe('countReport', () => {
  it('a report that says it failed, with nothing failed in it, is one failure', () => {
    expect(countReport({ numPassedTests: 3, numFailedTests: 0, success: false, testResults: [] })).toMatchObject({
      passed: 3,
      failed: 1,
    });
  });
  it('failed tests are counted once each, not again for their file', () => {
    const report = {
      numPassedTests: 1,
      numFailedTests: 2,
      success: false,
      testResults: [
        {
          name: 'f.test.ts',
          status: 'failed',
          assertionResults: [
            { title: 'a', status: 'failed' },
            { title: 'b', status: 'failed' },
            { title: 'c', status: 'passed' },
          ],
        },
      ],
    };
    expect(countReport(report)).toMatchObject({ passed: 1, failed: 2 });
  });
  it('a missing report is one failure, never green', () => {
    const r = spawnSync(process.execPath, [countScript, join(tmpdir(), 'poise-no-such-report.json')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stdout.trim()).toBe('0 passed, 1 failed');
    expect(r.status).toBe(1);
  }, 60_000);
});
