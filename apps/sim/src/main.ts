import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { loadCase, simulate } from '@poise/sim';
import { rulesCheckReport } from '@poise/rules';
import { LAB_USAGE, LabUsageError, cmdCompare, cmdGenerate, cmdReport, type LabIo } from './lab/cli-lab';
import { LabError } from './lab/errors';

type Profile = 'pve-5.2.0' | 'pve-9.2';

/** Where the CLI writes: whole lines without their newline, and raw log chunks. */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  write: (chunk: string) => void;
  /** Where `compare` draws its progress bar (a TTY only); default stderr. */
  progress?: LabIo['progress'];
}

const defaultIo: Io = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  write: (chunk) => process.stdout.write(chunk),
  progress: process.stderr,
};
const PROFILES: Profile[] = ['pve-5.2.0', 'pve-9.2'];

const USAGE = `usage:
  poise-sim run <case-dir> [--profile pve-5.2.0|pve-9.2] [--out <dir>]
  poise-sim test <case-dir|dir-of-cases>... [--profile pve-5.2.0|pve-9.2]
  poise-sim rules-check <dir-with-*.cfg>...
${LAB_USAGE}`;

class UsageError extends Error {
  override readonly name = 'UsageError';
}

interface Args {
  command: string;
  paths: string[];
  profile: Profile;
  out?: string;
}

function parseArgs(argv: string[]): Args {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h') throw new UsageError(USAGE);
  const paths: string[] = [];
  let profile: Profile = 'pve-9.2';
  let out: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === '--profile') {
      const v = rest[++i];
      if (!PROFILES.includes(v as Profile)) throw new UsageError(`unknown profile '${v ?? ''}' (${PROFILES.join('|')})`);
      profile = v as Profile;
    } else if (a === '--out') {
      out = rest[++i];
      if (!out) throw new UsageError("'--out' needs a directory");
    } else if (a.startsWith('--')) {
      throw new UsageError(`unknown option '${a}'\n${USAGE}`);
    } else {
      paths.push(a);
    }
  }
  return { command, paths, profile, out };
}

/** Case directories under the given paths: a dir with a cmdlist, or its sub-dirs that have one. */
function collectCases(paths: string[]): string[] {
  const cases: string[] = [];
  for (const p of paths) {
    if (!existsSync(p)) throw new UsageError(`no such file or directory '${p}'`);
    if (existsSync(join(p, 'cmdlist')) || existsSync(join(p, 'log.expect'))) {
      cases.push(p);
      continue;
    }
    const subs = readdirSync(p)
      .filter((n) => statSync(join(p, n)).isDirectory() && existsSync(join(p, n, 'cmdlist')))
      .sort();
    if (subs.length === 0) throw new UsageError(`'${p}' is neither a test case nor a directory of test cases`);
    for (const s of subs) cases.push(join(p, s));
  }
  return cases;
}

function firstDifference(expected: string, got: string): string {
  const e = expected.split('\n');
  const g = got.split('\n');
  for (let i = 0; i < Math.max(e.length, g.length); i++) {
    if (e[i] !== g[i]) {
      return `  line ${i + 1}:\n    expected: ${e[i] ?? '<end of file>'}\n    got:      ${g[i] ?? '<end of file>'}`;
    }
  }
  return '  (identical lines, different bytes)';
}

function cmdRun(args: Args, io: Io): number {
  if (args.paths.length !== 1) throw new UsageError(`'run' takes one case directory\n${USAGE}`);
  const dir = args.paths[0]!;
  const input = loadCase(dir, basename(resolve(dir)));
  const res = simulate(input, { profile: args.profile }, (line) => io.write(line));
  if (args.out) {
    mkdirSync(args.out, { recursive: true });
    writeFileSync(join(args.out, 'log'), res.log);
  }
  return res.error ? 1 : 0;
}

function cmdTest(args: Args, io: Io): number {
  if (args.paths.length === 0) throw new UsageError(`'test' needs case directories\n${USAGE}`);
  let passed = 0;
  let failed = 0;
  for (const dir of collectCases(args.paths)) {
    const name = basename(resolve(dir));
    try {
      const input = loadCase(dir, name);
      const expectPath = join(dir, 'log.expect');
      if (!existsSync(expectPath)) throw new Error(`missing '${expectPath}'`);
      const expected = readFileSync(expectPath, 'utf8');
      const res = simulate(input, { profile: args.profile });
      if (res.log === expected) {
        passed++;
        io.out(`PASS ${name}`);
      } else {
        failed++;
        io.out(`FAIL ${name}\n${firstDifference(expected, res.log)}`);
      }
    } catch (err) {
      failed++;
      io.out(`FAIL ${name}\n  error: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  io.out(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

function cmdRulesCheck(args: Args, io: Io): number {
  if (args.paths.length === 0) throw new UsageError(`'rules-check' needs a directory\n${USAGE}`);
  let passed = 0;
  let failed = 0;
  for (const p of args.paths) {
    const files = statSync(p).isDirectory()
      ? readdirSync(p).filter((f) => f.endsWith('.cfg')).sort().map((f) => join(p, f))
      : [p];
    for (const file of files) {
      const name = basename(file);
      try {
        const expected = readFileSync(`${file}.expect`, 'utf8');
        const got = rulesCheckReport(readFileSync(file, 'utf8'));
        if (got === expected) {
          passed++;
          io.out(`PASS ${name}`);
        } else {
          failed++;
          io.out(`FAIL ${name}\n${firstDifference(expected, got)}`);
        }
      } catch (err) {
        failed++;
        io.out(`FAIL ${name}\n  error: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  io.out(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

const LAB_COMMANDS: Record<string, (argv: string[], io: Io, command: string) => number | Promise<number>> = {
  generate: (argv, io) => cmdGenerate(argv, io),
  compare: cmdCompare,
  report: cmdReport,
};

async function runLab(argv: string[], io: Io): Promise<number> {
  try {
    return await LAB_COMMANDS[argv[0]!]!(argv.slice(1), io, `poise-sim ${argv.join(' ')}`);
  } catch (err) {
    return labFailure(err, io);
  }
}

function labFailure(err: unknown, io: Io): number {
  if (err instanceof LabUsageError) {
    io.err(`poise-sim ${err.message}\n${USAGE}`);
    return 2;
  }
  io.err(`poise-sim: ${err instanceof LabError ? err.message : err instanceof Error ? err.message : String(err)}`);
  return 1;
}

/**
 * The `poise-sim` command line; returns the exit code (0 ok, 1 failures, 2 usage errors), as a
 * promise for `generate`, `compare` and `report`. Output goes to `out`/`err` (stdout/stderr by
 * default) so tests can capture it.
 */
export function main(argv: string[], io: Io = defaultIo): number | Promise<number> {
  if (argv[0] !== undefined && Object.hasOwn(LAB_COMMANDS, argv[0])) return runLab(argv, io);
  try {
    const args = parseArgs(argv);
    switch (args.command) {
      case 'run': return cmdRun(args, io);
      case 'test': return cmdTest(args, io);
      case 'rules-check': return cmdRulesCheck(args, io);
      default: throw new UsageError(`unknown command '${args.command}'\n${USAGE}`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(err.message);
      return 2;
    }
    io.err(`poise-sim: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}


