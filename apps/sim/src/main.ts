import { closeSync, constants, mkdirSync, openSync, readdirSync, statSync, writeSync, type Stats } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import {
  RunRecorder,
  SimError,
  Simulation,
  loadCase,
  parseCrsOverride,
  readInputFile,
  simulate,
  withCrsOverrides,
} from '@poise/sim';
import { rulesCheckReport } from '@poise/rules';
import { BUILTIN_REGISTRY, loadPluginRegistry } from '@poise/ha';
import { PolicyError, type PolicyRegistry } from '@poise/policy';
import type { LabIo } from './lab/cli-lab';
import { LabError } from './lab/errors';
import { LAB_COMMAND_NAMES, LAB_USAGE, LabUsageError } from './lab/usage';
import { emptySetProblem, policyValueProblems } from './policy-values';
import { watchStageFailures } from './stage-failures';
import { SERVE_USAGE } from './serve/usage';

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
/** `run` writes the log in chunks of about this many characters. */
const OUTPUT_CHUNK_CHARS = 64 * 1024;

const USAGE = `usage:
  poise-sim run <case-dir> [--profile pve-5.2.0|pve-9.2] [--out <dir>] [--set <crs-key>=<value>]... [--plugin <module>]...
  poise-sim test <case-dir|dir-of-cases>... [--profile pve-5.2.0|pve-9.2] [--set <crs-key>=<value>]... [--plugin <module>]...
  poise-sim summary <case-dir> [--profile pve-5.2.0|pve-9.2] [--set <crs-key>=<value>]... [--plugin <module>]...
  poise-sim rules-check <dir-with-*.cfg>...
${SERVE_USAGE}
${LAB_USAGE}

exit status: 0 ok; 1 a run failed (the simulation aborted, or a policy stage failed: the message
names the plug-in, the stage and the round), a test failed, or compare/report failed; 2 a usage
error or a bad input refused at load (a bad --set, a bad policy value in a case's datacenter.cfg
naming the file, the key and the value, a module that is not a plug-in).`;

class UsageError extends Error {
  override readonly name = 'UsageError';
}

interface Args {
  command: string;
  paths: string[];
  profile: Profile;
  out?: string;
  /** `--set <crs-key>=<value>` overrides of datacenter.cfg, in order. */
  sets: string[];
  /** `--plugin <module>`: out-of-tree policy plug-ins (a path or a module name), in order. */
  plugins: string[];
  /** The policy plug-ins in force: the built-in ones and those of `plugins` (loaded before the command runs). */
  registry: PolicyRegistry;
}

function parseArgs(argv: string[]): Args {
  const [command, ...rest] = argv;
  if (!command) throw new UsageError(USAGE);
  const paths: string[] = [];
  let profile: Profile = 'pve-9.2';
  let out: string | undefined;
  const sets: string[] = [];
  const plugins: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === '--profile') {
      const v = rest[++i];
      if (!PROFILES.includes(v as Profile))
        throw new UsageError(`unknown profile '${v ?? ''}' (${PROFILES.join('|')})`);
      profile = v as Profile;
    } else if (a === '--out') {
      out = rest[++i];
      if (!out) throw new UsageError("'--out' needs a directory");
    } else if (a === '--set') {
      const v = rest[++i];
      if (!v) throw new UsageError("'--set' needs <crs-key>=<value>");
      sets.push(v);
    } else if (a === '--plugin') {
      const v = rest[++i];
      if (!v) throw new UsageError("'--plugin' needs a module (a path such as ./my-plugin, or a package name)");
      plugins.push(v);
    } else if (a.startsWith('--')) {
      throw new UsageError(`unknown option '${a}'\n${USAGE}`);
    } else {
      paths.push(a);
    }
  }
  return { command, paths, profile, out, sets, plugins, registry: BUILTIN_REGISTRY };
}

/**
 * Checks the `--set` overrides (the keys of the plug-ins in force): a bad key or value is a
 * usage error, and so is an empty value (`key=`: no key takes one).
 */
function checkOverrides(sets: readonly string[], registry: PolicyRegistry): void {
  for (const set of sets) {
    const empty = emptySetProblem(set, registry);
    if (empty !== undefined) throw new UsageError(empty);
    try {
      parseCrsOverride(set, registry);
    } catch (err) {
      if (err instanceof SimError && err.code === 'bad-override') throw new UsageError(err.message);
      throw err;
    }
  }
}

/**
 * Loads a case with the `--set` overrides applied (checked first: a bad one is a usage error);
 * its load warnings go to stderr (never into the log: the reference loads such files silently).
 * A bad policy value in its `datacenter.cfg` is refused (a usage error naming the file, the key
 * and the value: the one rule of poise-manager too), unless a `--set` of the key replaces it.
 */
function loadWithOverrides(dir: string, name: string, args: Args, io: Io) {
  checkOverrides(args.sets, args.registry);
  const input = loadCase(dir, name, { registry: args.registry });
  printLoadWarnings(input.warnings, io);
  const overridden = withCrsOverrides(input, args.sets, args.registry);
  const problems = policyValueProblems(overridden.datacenterCfg.crs, join(dir, 'datacenter.cfg'), args.registry);
  if (problems.length > 0) throw new UsageError(problems.map((p) => `poise-sim: ${p}`).join('\n'));
  return overridden;
}

/** The line and exit code of a run whose policy stage failed (see `stage-failures.ts`), or `undefined`. */
function stageFailure(message: string | undefined, io: Io): number | undefined {
  if (message === undefined) return undefined;
  io.err(`poise-sim: ${message}`);
  return 1;
}

/** Prints a case's load warnings (`CaseInput.warnings`), one line each. */
function printLoadWarnings(warnings: readonly string[] | undefined, io: Pick<Io, 'err'>): void {
  for (const w of warnings ?? []) io.err(`poise-sim: warning: ${w}`);
}

/** The stats of `path`, or undefined when nothing is there (stat never opens, so never blocks). */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** What a path is, for messages. */
function kindOf(st: Stats): string {
  if (st.isFile()) return 'a file';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  return 'a device';
}

/** Throws a usage error unless `path` is a directory. */
function expectDirectory(path: string, what: string): void {
  const st = statOf(path);
  if (!st) throw new UsageError(`no such file or directory '${path}'`);
  if (!st.isDirectory()) throw new UsageError(`'${path}' is ${kindOf(st)}, expected ${what}`);
}

/** Case directories under the given paths: a dir with a cmdlist, or its sub-dirs that have one. */
function collectCases(paths: string[]): string[] {
  const cases: string[] = [];
  for (const p of paths) {
    expectDirectory(p, 'a case directory or a directory of cases');
    if (statOf(join(p, 'cmdlist')) || statOf(join(p, 'log.expect'))) {
      cases.push(p);
      continue;
    }
    const subs = readdirSync(p)
      .filter((n) => statOf(join(p, n))?.isDirectory() && statOf(join(p, n, 'cmdlist')) !== undefined)
      .sort();
    if (subs.length === 0) throw new UsageError(`'${p}' is neither a test case nor a directory of test cases`);
    for (const s of subs) cases.push(join(p, s));
  }
  return cases;
}

/**
 * Writes `text` to `<dir>/<name>`, creating `dir`. Refuses (never blocks on) an existing path
 * that is not a directory or not a regular file: a FIFO without a reader fails at once.
 */
function writeOutput(dir: string, name: string, text: string): void {
  const st = statOf(dir);
  if (st && !st.isDirectory()) throw new UsageError(`'--out' '${dir}' is ${kindOf(st)}, expected a directory`);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  const target = statOf(path);
  if (target && !target.isFile()) throw new UsageError(`'${path}' is ${kindOf(target)}, expected a regular file`);
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NONBLOCK ?? 0));
  try {
    const bytes = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  } finally {
    closeSync(fd);
  }
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
  const input = loadWithOverrides(dir, basename(resolve(dir)), args, io);
  const failures = watchStageFailures(args.registry);
  // lines go out in chunks: one write per line costs more than the simulation at scale
  let chunk = '';
  const res = simulate(input, { profile: args.profile, registry: failures.registry }, (line) => {
    chunk += line;
    if (chunk.length >= OUTPUT_CHUNK_CHARS) {
      io.write(chunk);
      chunk = '';
    }
  });
  if (chunk) io.write(chunk);
  if (args.out) writeOutput(args.out, 'log', res.log);
  return stageFailure(failures.message(), io) ?? (res.error ? 1 : 0);
}

function cmdTest(args: Args, io: Io): number {
  if (args.paths.length === 0) throw new UsageError(`'test' needs case directories\n${USAGE}`);
  // a bad override is a usage error before any case runs
  checkOverrides(args.sets, args.registry);
  let passed = 0;
  let failed = 0;
  for (const dir of collectCases(args.paths)) {
    const name = basename(resolve(dir));
    try {
      const loaded = loadCase(dir, name, { registry: args.registry });
      printLoadWarnings(loaded.warnings, io);
      const input = withCrsOverrides(loaded, args.sets, args.registry);
      const expectPath = join(dir, 'log.expect');
      const expected = readInputFile(expectPath);
      if (expected === undefined) throw new Error(`missing '${expectPath}'`);
      const failures = watchStageFailures(args.registry);
      const res = simulate(input, { profile: args.profile, registry: failures.registry });
      const stageFailed = failures.message();
      if (stageFailed !== undefined) {
        failed++;
        io.out(`FAIL ${name}\n  error: ${stageFailed}`);
      } else if (res.log === expected) {
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

/**
 * `summary`: runs the case with a {@link RunRecorder} and prints its summary as one line of
 * JSON (`moves`, `failedMoves`, `movesBySid`, `pingPongs`, `imbalanceTimeWeighted`,
 * `pressureSeconds`, `simSeconds`; see the `@poise/sim` README). Exit 1 if the simulation
 * aborted or a policy stage failed (the summary of the run so far is printed all the same, and
 * the failure on stderr, naming the plug-in, the stage and the round).
 */
function cmdSummary(args: Args, io: Io): number {
  if (args.paths.length !== 1) throw new UsageError(`'summary' takes one case directory\n${USAGE}`);
  const dir = args.paths[0]!;
  const failures = watchStageFailures(args.registry);
  const sim = new Simulation(loadWithOverrides(dir, basename(resolve(dir)), args, io), {
    profile: args.profile,
    registry: failures.registry,
  });
  const recorder = new RunRecorder(sim);
  sim.run();
  io.out(JSON.stringify(recorder.summary()));
  const failed = stageFailure(failures.message(), io);
  if (failed !== undefined) return failed;
  if (sim.error !== undefined) {
    io.err(`poise-sim: the simulation aborted: ${sim.error}`);
    return 1;
  }
  return 0;
}

function cmdRulesCheck(args: Args, io: Io): number {
  if (args.paths.length === 0) throw new UsageError(`'rules-check' needs a directory\n${USAGE}`);
  let passed = 0;
  let failed = 0;
  for (const p of args.paths) {
    const st = statOf(p);
    if (!st) throw new UsageError(`no such file or directory '${p}'`);
    if (!st.isDirectory() && !st.isFile())
      throw new UsageError(`'${p}' is ${kindOf(st)}, expected a directory or a .cfg file`);
    const files = st.isDirectory()
      ? readdirSync(p)
          .filter((f) => f.endsWith('.cfg'))
          .sort()
          .map((f) => join(p, f))
      : [p];
    for (const file of files) {
      const name = basename(file);
      try {
        const expected = readInputFile(`${file}.expect`);
        if (expected === undefined) throw new Error(`missing '${file}.expect'`);
        const got = rulesCheckReport(readInputFile(file) ?? '');
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

// The lab (Vega, mathjs, the generator) and the server are loaded only by their commands: a
// `poise-sim run` of a large case does not carry them (they made its heap, and so V8's growth
// of it, about 250 MB larger at 20,000 services).
async function runLab(argv: string[], io: Io): Promise<number> {
  try {
    const lab = await import('./lab/cli-lab');
    const rest = argv.slice(1);
    if (argv[0] === 'generate') return lab.cmdGenerate(rest, io);
    if (argv[0] === 'compare') return await lab.cmdCompare(rest, io, `poise-sim ${argv.join(' ')}`);
    if (argv[0] === 'merge') return await lab.cmdMerge(rest, io);
    return await lab.cmdReport(rest, io, `poise-sim ${argv.join(' ')}`);
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
  if (argv[0] !== undefined && LAB_COMMAND_NAMES.includes(argv[0])) return runLab(argv, io);
  if (argv[0] === 'serve') return import('./serve/cli-serve').then((serve) => serve.cmdServe(argv.slice(1), io));
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    io.out(USAGE);
    return 0;
  }
  let args: Args;
  try {
    args = parseArgs(argv);
    if (args.plugins.length > 0 && args.command === 'rules-check')
      throw new UsageError("'--plugin' applies to run, test and summary (and compare)");
  } catch (err) {
    return failure(err, io);
  }
  // plug-ins load asynchronously (a module import); without any the command stays synchronous
  if (args.plugins.length === 0) return runCommand(args, io);
  return loadPluginRegistry(args.plugins, process.cwd()).then(
    (registry) => runCommand({ ...args, registry }, io),
    (err: unknown) => failure(err, io),
  );
}

/** Runs a parsed command; returns its exit code. */
function runCommand(args: Args, io: Io): number {
  try {
    switch (args.command) {
      case 'run':
        return cmdRun(args, io);
      case 'test':
        return cmdTest(args, io);
      case 'summary':
        return cmdSummary(args, io);
      case 'rules-check':
        return cmdRulesCheck(args, io);
      default:
        throw new UsageError(`unknown command '${args.command}'\n${USAGE}`);
    }
  } catch (err) {
    return failure(err, io);
  }
}

/** The exit code of a failed command: 2 for a usage error, else 1; the message goes to `err`. */
function failure(err: unknown, io: Io): number {
  if (err instanceof UsageError) {
    io.err(err.message);
    return 2;
  }
  // a module that is not a valid plug-in: said as such (the message names the module and the field)
  if (err instanceof PolicyError && err.code === 'invalid-plugin') {
    io.err(`poise-sim: ${err.message}`);
    return 2;
  }
  io.err(`poise-sim: ${err instanceof Error ? err.message : String(err)}`);
  return 1;
}
