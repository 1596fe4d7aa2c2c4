// Prints "N passed, N failed" from a vitest JSON report; a missing or unreadable report counts
// as one failure, so a crashed test run can never look green.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (err) {
  console.error(`count: cannot read vitest report '${file}': ${err.message}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
// Suites that fail to load have no tests; count each such file as a failure.
const brokenFiles = (report.testResults ?? []).filter(
  (r) => r.status === 'failed' && (r.assertionResults ?? []).length === 0,
).length;
const failed = (report.numFailedTests ?? 0) + brokenFiles;
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
