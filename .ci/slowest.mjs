// Reports the fast tier's time from its vitest JSON report: the slowest files with their times,
// and a warning naming each file over the per-file budget and the tier over its budget, so that
// a slow test cannot slip into `pnpm test` unnoticed (CONTRIBUTING.md, "Tests"). A report, not
// a timed test: it never fails the run, since a busy machine must not turn CI red.
//
//   node .ci/slowest.mjs <report.json> [--top <n>] [--file-budget <s>] [--wall <s>] [--tier-budget <s>]
//
// --wall is the tier's measured wall time in seconds (the JSON report does not hold it).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/** A fast-tier file over this many seconds belongs to the slow tier (or must get faster). */
export const FILE_BUDGET_SECONDS = 10;
/** The fast tier's wall-time budget on a two-core machine, run alone. */
export const TIER_BUDGET_SECONDS = 120;
/** How many of the slowest files are listed. */
export const TOP = 10;

/**
 * The lines of the report.
 * @param {any} report vitest's JSON report of the fast tier
 * @param {{ top?: number, fileBudget?: number, wall?: number, tierBudget?: number, root?: string }} options
 * @returns {string[]}
 */
export function slowestLines(report, options = {}) {
  const top = options.top ?? TOP;
  const fileBudget = options.fileBudget ?? FILE_BUDGET_SECONDS;
  const tierBudget = options.tierBudget ?? TIER_BUDGET_SECONDS;
  const root = options.root ?? process.cwd();
  const files = (report.testResults ?? [])
    .map((f) => ({
      name: relative(root, String(f.name)),
      seconds: Math.max(0, (Number(f.endTime) - Number(f.startTime)) / 1000) || 0,
      tests: (f.assertionResults ?? []).length,
    }))
    .sort((a, b) => b.seconds - a.seconds || a.name.localeCompare(b.name));
  const tests = files.reduce((n, f) => n + f.tests, 0);
  const wall = options.wall === undefined ? '' : `, ${options.wall.toFixed(0)} s wall (budget ${tierBudget} s)`;
  const lines = [
    `fast tier: ${tests} tests in ${files.length} files${wall}; the ${Math.min(top, files.length)} slowest files:`,
  ];
  for (const f of files.slice(0, top))
    lines.push(`${f.seconds.toFixed(1).padStart(7)} s  ${f.name} (${f.tests} tests)`);
  for (const f of files.filter((x) => x.seconds > fileBudget))
    lines.push(
      `warning: ${f.name} took ${f.seconds.toFixed(1)} s, over the fast tier's ${fileBudget} s per file: make it faster or move it to the slow tier (name it *.slow.test.ts)`,
    );
  if (options.wall !== undefined && options.wall > tierBudget)
    lines.push(
      `warning: the fast tier took ${options.wall.toFixed(0)} s, over its ${tierBudget} s budget (a busy machine is slower: compare the files above with an idle run)`,
    );
  return lines;
}

/**
 * @param {string[]} argv
 * @returns {{ file: string, options: Record<string, number> } | string}
 */
export function parseArgs(argv) {
  const names = { '--top': 'top', '--file-budget': 'fileBudget', '--wall': 'wall', '--tier-budget': 'tierBudget' };
  const options = {};
  let file;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg in names) {
      const value = argv[++i];
      const n = Number(value);
      if (value === undefined || value === '' || !Number.isFinite(n) || n < 0)
        return `'${arg}' needs a number ≥ 0, got '${value ?? ''}'`;
      options[names[arg]] = n;
    } else if (arg.startsWith('--') || file !== undefined) {
      return `unexpected argument '${arg}'`;
    } else {
      file = arg;
    }
  }
  return file === undefined ? 'no report file given' : { file, options };
}

function main(argv) {
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    console.log(
      `slowest: ${args} (usage: node .ci/slowest.mjs <report.json> [--top <n>] [--file-budget <s>] [--wall <s>] [--tier-budget <s>])`,
    );
    return;
  }
  let report;
  try {
    report = JSON.parse(readFileSync(args.file, 'utf8'));
  } catch (err) {
    console.log(`slowest: cannot read vitest report '${args.file}': ${err.message}`);
    return;
  }
  for (const line of slowestLines(report, args.options)) console.log(line);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main(process.argv.slice(2));
