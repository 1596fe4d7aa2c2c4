// Prints "N passed, N failed" from one or more vitest JSON reports (CI runs the fast and the slow
// tier, one report each, and counts both), and exits 1 exactly when N failed > 0 or nothing
// passed, so the closing line and the exit status always agree.
//
//   node .ci/count.mjs <report.json> [--vitest-status <n>] [<report.json> [--vitest-status <n>]]…
//
// Each `--vitest-status` belongs to the report before it.
//
// What counts as failed:
// - every failed test;
// - every test file that failed without a failed test in it: a file that did not load, or a
//   failed hook (beforeAll/afterAll, e.g. a timed-out cleanup) — vitest marks the file failed but
//   its tests may all have passed;
// - when vitest itself exited non-zero (`--vitest-status <n>`) and the report shows no failure:
//   errors outside any test (an unhandled rejection or an exception thrown after a test ended),
//   which the JSON report does not record (it says `success: true`), as one failure;
// - a report that says `success: false` without any of the above, as one failure;
// - a missing or unreadable report, as one failure, so a crashed run can never look green.
// What failed is listed on stderr, one line each.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * Counts a vitest JSON report.
 * @param {any} report the parsed JSON report (vitest's `json` reporter)
 * @param {number} vitestStatus vitest's exit status (0 when unknown)
 * @returns {{ passed: number, failed: number, reasons: string[] }}
 */
export function countReport(report, vitestStatus = 0) {
  const reasons = [];
  const passed = report.numPassedTests ?? 0;
  let failed = report.numFailedTests ?? 0;
  for (const file of report.testResults ?? []) {
    const assertions = file.assertionResults ?? [];
    for (const a of assertions) {
      if (a.status === 'failed') reasons.push(`test failed: ${file.name} > ${a.fullName ?? a.title}`);
    }
    if (file.status === 'failed' && !assertions.some((a) => a.status === 'failed')) {
      failed += 1;
      const what = assertions.length === 0 ? 'did not load' : 'failed outside its tests (a hook)';
      const message = String(file.message ?? '').split('\n')[0];
      reasons.push(`file ${what}: ${file.name}${message ? `: ${message}` : ''}`);
    }
  }
  if (failed === 0 && vitestStatus !== 0) {
    failed = 1;
    reasons.push(
      `vitest exited with status ${vitestStatus} and its report shows no failed test: errors outside any test (see the log above)`,
    );
  } else if (failed === 0 && report.success === false) {
    failed = 1;
    reasons.push('the report says the run did not succeed, without a failed test or file');
  }
  return { passed, failed, reasons };
}

const USAGE = 'usage: node .ci/count.mjs <report.json> [--vitest-status <n>] [<report.json> [--vitest-status <n>]]…';

/**
 * Reads the command line: report files, each optionally followed by `--vitest-status <n>`.
 * @param {string[]} argv
 * @returns {{ file: string, status: number }[] | string} the runs, or what is wrong
 */
export function parseArgs(argv) {
  const runs = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--vitest-status') {
      const value = argv[i + 1];
      const status = Number(value);
      if (runs.length === 0) return "'--vitest-status' must follow a report file";
      if (value === undefined || value === '' || !Number.isInteger(status))
        return `'--vitest-status' needs an integer, got '${value ?? ''}'`;
      runs[runs.length - 1].status = status;
      i++;
    } else if (arg.startsWith('--')) {
      return `unknown option '${arg}'`;
    } else {
      runs.push({ file: arg, status: 0 });
    }
  }
  return runs.length === 0 ? 'no report file given' : runs;
}

function main(argv) {
  const runs = parseArgs(argv);
  if (typeof runs === 'string') {
    console.error(`count: ${runs}`);
    console.error(USAGE);
    console.log('0 passed, 1 failed');
    return 1;
  }
  let passed = 0;
  let failed = 0;
  for (const { file, status } of runs) {
    let report;
    try {
      report = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      console.error(`count: cannot read vitest report '${file}': ${err.message}`);
      failed += 1;
      continue;
    }
    const counted = countReport(report, status);
    for (const reason of counted.reasons) console.error(`count: ${reason}`);
    passed += counted.passed;
    failed += counted.failed;
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 || passed === 0 ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = main(process.argv.slice(2));
}
