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
const slowestScript = join(root, '.ci/slowest.mjs');
const vitestBin = join(root, 'node_modules/vitest/vitest.mjs');
// A plain .mjs script without types; its JSDoc says what it takes and returns.
const { countReport, parseArgs } = (await import(countScript)) as {
  countReport: (report: unknown, vitestStatus?: number) => { passed: number; failed: number; reasons: string[] };
  parseArgs: (argv: string[]) => { file: string; status: number }[] | string;
};
const slowest = (await import(slowestScript)) as {
  slowestLines: (
    report: unknown,
    options?: { top?: number; fileBudget?: number; wall?: number; tierBudget?: number; root?: string },
  ) => string[];
  parseArgs: (argv: string[]) => { file: string; options: Record<string, number> } | string;
  FILE_BUDGET_SECONDS: number;
};

const work: string[] = [];
afterAll(() => {
  for (const dir of work) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** Runs vitest on the given test files (the JSON report in the directory's report.json). */
function runVitest(files: Record<string, string>) {
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
  return { dir, status: vitest.status };
}

/** Runs .ci/count.mjs with these arguments. */
function count(args: string[]) {
  const r = spawnSync(process.execPath, [countScript, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { line: r.stdout.trim(), status: r.status, stderr: r.stderr };
}

/** Runs vitest on the given test files, then .ci/count.mjs on its report, as .ci/run does. */
function runCounted(files: Record<string, string>) {
  const vitest = runVitest(files);
  const dir = vitest.dir;
  const counted = spawnSync(
    process.execPath,
    [countScript, join(dir, 'report.json'), '--vitest-status', String(vitest.status)],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { vitestStatus: vitest.status, line: counted.stdout.trim(), status: counted.status, stderr: counted.stderr };
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

describe('both tiers counted in one line', () => {
  it('two reports are summed, each with its own vitest status', () => {
    const green = runVitest({ 'ok.test.mjs': "test('a', () => {}); test('b', () => {});\n" });
    const red = runVitest({
      'fail.test.mjs': "test('wrong', () => { expect(1).toBe(2); }); test('right', () => {});\n",
    });
    const both = count([
      join(green.dir, 'report.json'),
      '--vitest-status',
      String(green.status),
      join(red.dir, 'report.json'),
      '--vitest-status',
      String(red.status),
    ]);
    expect(both.line).toBe('3 passed, 1 failed');
    expect(both.status).toBe(1);
    expect(both.stderr).toMatch(/fail\.test\.mjs > wrong/);
    // a non-zero status with a clean report counts for the report it follows
    const late = count([join(green.dir, 'report.json'), '--vitest-status', '1', join(green.dir, 'report.json')]);
    expect(late.line).toBe('4 passed, 1 failed');
    // one report missing: the other is still counted, the missing one is a failure
    const missing = count([join(green.dir, 'report.json'), join(tmpdir(), 'poise-no-such-report.json')]);
    expect(missing.line).toBe('2 passed, 1 failed');
    expect(missing.status).toBe(1);
  }, 120_000);

  it.each([
    [[], 'no report file given'],
    [['--vitest-status', '0', 'a.json'], "'--vitest-status' must follow a report file"],
    [['a.json', '--vitest-status'], "'--vitest-status' needs an integer, got ''"],
    [['a.json', '--vitest-status', 'x'], "'--vitest-status' needs an integer, got 'x'"],
    [['a.json', '--bogus'], "unknown option '--bogus'"],
  ])('bad arguments %j: %s, and the line says one failure', (argv, message) => {
    expect(parseArgs(argv)).toBe(message);
    const r = count(argv);
    expect(r.line).toBe('0 passed, 1 failed');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(message);
  });

  it('arguments: each status belongs to the report before it', () => {
    expect(parseArgs(['f.json', '--vitest-status', '1', 's.json'])).toEqual([
      { file: 'f.json', status: 1 },
      { file: 's.json', status: 0 },
    ]);
  });
});

describe(".ci/slowest.mjs: the fast tier's slowest files and its budgets", () => {
  const file = (name: string, seconds: number, tests = 1) => ({
    name: `/repo/${name}`,
    startTime: 1000,
    endTime: 1000 + seconds * 1000,
    assertionResults: Array.from({ length: tests }, () => ({ status: 'passed' })),
  });
  const report = {
    testResults: [file('a.test.ts', 1.5, 3), file('b.test.ts', 12.25, 2), file('c.test.ts', 0.2), file('d.test.ts', 4)],
  };

  it('lists the slowest first, and warns about a file over the budget', () => {
    expect(slowest.slowestLines(report, { top: 3, root: '/repo', wall: 61 })).toEqual([
      'fast tier: 7 tests in 4 files, 61 s wall (budget 120 s); the 3 slowest files:',
      '   12.3 s  b.test.ts (2 tests)',
      '    4.0 s  d.test.ts (1 tests)',
      '    1.5 s  a.test.ts (3 tests)',
      `warning: b.test.ts took 12.3 s, over the fast tier's ${slowest.FILE_BUDGET_SECONDS} s per file: make it faster or move it to the slow tier (name it *.slow.test.ts)`,
    ]);
  });

  it('warns when the tier is over its budget, and stays quiet under both', () => {
    const lines = slowest.slowestLines(report, { root: '/repo', wall: 130, fileBudget: 20 });
    expect(lines.filter((l) => l.startsWith('warning'))).toEqual([
      'warning: the fast tier took 130 s, over its 120 s budget (a busy machine is slower: compare the files above with an idle run)',
    ]);
    expect(
      slowest.slowestLines(report, { root: '/repo', wall: 100, fileBudget: 20 }).some((l) => l.startsWith('warning')),
    ).toBe(false);
  });

  it.each([
    [[], 'no report file given'],
    [['r.json', '--wall'], "'--wall' needs a number ≥ 0, got ''"],
    [['r.json', '--top', '-1'], "'--top' needs a number ≥ 0, got '-1'"],
    [['r.json', 'other.json'], "unexpected argument 'other.json'"],
  ])('bad arguments %j: %s (printed, never a failed run)', (argv, message) => {
    expect(slowest.parseArgs(argv)).toBe(message);
    const r = spawnSync(process.execPath, [slowestScript, ...argv], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(message);
  });
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
