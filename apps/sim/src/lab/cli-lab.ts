import { existsSync, readFileSync, readdirSync, rmSync, rmdirSync, statSync, type Stats } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTIN_REGISTRY, loadPluginRegistry } from '@poise/ha';
import { PolicyError, type PolicyRegistry } from '@poise/policy';
import { loadCase, type CaseInput } from '@poise/sim';
import { LabError } from './errors';
import { LabUsageError } from './usage';

import { generateCase, writeCase, type CaseFiles } from './generate/generate';
import { readParams, validateParams } from './generate/params';
import { TraceCache, workloadFor, type TraceOverride } from './generate/workload-trace';

/** The flags that point `load: {shape: trace}` at another directory or day. */
const TRACE_FLAGS = ['--trace-dir', '--trace-day'] as const;
import { reportTraces, runComparison } from './lab';
import { progressBar, type ProgressStream } from './progress';
import { defaultJobs, planRuns, type ScenarioRef, type WorkerStats } from './runner';
import { SHARD_FILE, commandTemplate, mergeShards, parseShard, runShard, shardJobs } from './shard';
import type { LabSummary } from './digest';
import { runOne } from './sim-adapter';
import { METRICS } from './stats';
import { readTrace, type RunTrace } from './trace';
import { parseSeeds, readVariants } from './variants';
import { fmt } from './report';
import { compareNames } from '@poise/usage';

/** Output of the lab commands (the same shape as the CLI's Io). */
export interface LabIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Where the progress bar draws (stderr); none when absent or not a TTY. */
  progress?: ProgressStream;
}

interface Flags {
  paths: string[];
  values: Map<string, string>;
  switches: Set<string>;
  /** Values of the repeatable flags, in order. */
  lists: Map<string, string[]>;
}

function parseFlags(
  argv: string[],
  valued: readonly string[],
  switches: readonly string[],
  repeatable: readonly string[] = [],
): Flags {
  const f: Flags = { paths: [], values: new Map(), switches: new Set(), lists: new Map() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (repeatable.includes(a)) {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new LabUsageError(`'${a}' needs a value`);
      f.lists.set(a, [...(f.lists.get(a) ?? []), v]);
    } else if (valued.includes(a)) {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new LabUsageError(`'${a}' needs a value`);
      if (f.values.has(a)) throw new LabUsageError(`'${a}' given twice`);
      f.values.set(a, v);
    } else if (switches.includes(a)) {
      f.switches.add(a);
    } else if (a.startsWith('--')) {
      throw new LabUsageError(`unknown option '${a}'`);
    } else {
      f.paths.push(a);
    }
  }
  return f;
}

function intFlag(f: Flags, name: string, min: number): number | undefined {
  const v = f.values.get(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v)))
    throw new LabUsageError(`'${name}' expects a whole number ≥ ${min}, got '${v}'`);
  return Number(v);
}

function requireOut(f: Flags): string {
  const out = f.values.get('--out');
  if (!out) throw new LabUsageError("'--out <dir>' is required");
  return out;
}

/** Parameters from an optional file plus flags (flags win). */
function generatorParams(
  file: string | undefined,
  f: Flags,
): { params: ReturnType<typeof validateParams>; where: string } {
  const raw = file === undefined ? {} : readParams(file);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new LabError('bad-params', `'${file}': expected a map of parameters`);
  const p = { ...(raw as Record<string, unknown>) };
  const seed = intFlag(f, '--seed', 0);
  if (seed !== undefined) p.seed = seed;
  const duration = f.values.get('--duration');
  if (duration !== undefined) p.duration = duration;
  const guests = intFlag(f, '--guests', 0);
  if (guests !== undefined) p.guests = { ...(p.guests ?? {}), count: guests };
  const shape = f.values.get('--shape');
  if (shape !== undefined) p.load = { ...(p.load ?? {}), shape };
  const where = file ?? 'command-line parameters';
  return { params: validateParams(p, where), where };
}

/** `--trace-dir <dir>` / `--trace-day <day>`: where `load: {shape: trace}` reads its file instead. */
function traceOverride(f: Flags): TraceOverride {
  const dir = f.values.get('--trace-dir');
  const day = f.values.get('--trace-day');
  if (day !== undefined && (day === '' || /[/\\]/.test(day) || day === '.' || day === '..'))
    throw new LabUsageError(`'--trace-day' expects a file name such as 20110303 (no directory), got '${day}'`);
  if (dir !== undefined && dir === '') throw new LabUsageError("'--trace-dir' expects a directory");
  return { ...(dir !== undefined ? { dir } : {}), ...(day !== undefined ? { day } : {}) };
}

/** `poise-sim generate`. */
export function cmdGenerate(argv: string[], io: LabIo): number {
  const f = parseFlags(argv, ['--out', '--seed', '--duration', '--guests', '--shape', ...TRACE_FLAGS], []);
  if (f.paths.length > 1) throw new LabUsageError("'generate' takes at most one parameter file");
  const out = requireOut(f);
  const override = traceOverride(f);
  const { params: checked, where } = generatorParams(f.paths[0], f);
  const { params, workload } = workloadFor(checked, f.paths[0], override, new TraceCache());
  const files = generateCase(params, where, workload);
  writeCase(out, files);
  const bytes = [...files.values()].reduce((a, t) => a + Buffer.byteLength(t), 0);
  io.out(`wrote ${files.size} files (${(bytes / 1024).toFixed(0)} KiB) to ${out}`);
  return 0;
}

/**
 * Simulated seconds a case will run, from its command lists (spec §1.4): the first list at 20 s,
 * each next one 100 s later or, after `delay d`, 20·⌈d/20⌉ + 80 s later; the end at the first
 * slot more than 500 s after the last command. An estimate for ordering runs: exact for 20 s
 * rounds, unless the run aborts.
 */
export function estimateEndTime(cmdlist: readonly (readonly string[])[]): number {
  let t = 20;
  let last = 0;
  for (const list of cmdlist) {
    let next = t + 100;
    for (const cmd of list) {
      last = t;
      const m = /^delay\s+(\d+)\s*$/.exec(cmd);
      if (m && Number(m[1]) > 20) next = t + Math.ceil(Number(m[1]) / 20) * 20 + 80;
    }
    t = next;
  }
  // the first slot (from the next one, every 100 s) more than 500 s after the last command
  while (t - last <= 500) t += 100;
  return t;
}

/** A parameter file's leading comment lines (`# ...`), joined: what the scenario is. */
function describeParams(text: string): string | undefined {
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^#\s?(.*)$/.exec(line);
    if (!m) break;
    lines.push(m[1]!.trim());
  }
  const d = lines.join(' ').trim();
  return d === '' ? undefined : d;
}

/** A case directory's README, first paragraph (undefined without a README). */
function describeCase(dir: string): string | undefined {
  const st = statOf(join(dir, 'README'));
  if (!st?.isFile()) return undefined;
  const first = readFileSync(join(dir, 'README'), 'utf8')
    .split(/\n\s*\n/)[0]!
    .replace(/\s+/g, ' ')
    .trim();
  return first === '' ? undefined : first;
}

/** Whether `dir` holds exactly `files` (the same names and bytes). */
function holdsExactly(dir: string, files: CaseFiles): boolean {
  const names = readdirSync(dir).sort();
  const want = [...files.keys()].sort();
  if (names.length !== want.length || names.some((n, i) => n !== want[i])) return false;
  return want.every((n) => readFileSync(join(dir, n), 'utf8') === files.get(n));
}

/**
 * The scenarios of the arguments: a case dir, a dir of case dirs, or a parameter file. Every
 * case is loaded and every parameter file generated (in memory, once per seed: the seed
 * replaces the file's `seed`, so each seed is another cluster of the same kind) before anything
 * is written; then the generated cases are written to `<out>/scenarios/<name>/seed-<n>` (an
 * existing directory with the same bytes is reused, one with other content is refused). If
 * anything fails, what this call wrote is removed again.
 */
function collectScenarios(
  paths: string[],
  seeds: readonly number[],
  out: string,
  io: LabIo,
  registry: PolicyRegistry,
  override: TraceOverride = {},
): ScenarioRef[] {
  const scenarios: ScenarioRef[] = [];
  // load warnings are said once here, not by every run of the scenario in the workers
  const load = (name: string, dir: string) => loadScenario(dir, name, io, registry);
  const caseCost = (input: CaseInput) =>
    estimateEndTime(input.cmdlist) *
    (Object.keys(input.hardwareStatus).length + Object.keys(input.serviceConfig).length);
  const pending: { file: string; name: string }[] = [];
  for (const p of paths) {
    const st = statOf(p);
    if (!st) throw new LabError('bad-scenario', `no such file or directory '${p}'`);
    if (st.isFile() && ['.yaml', '.yml', '.json'].includes(extname(p))) {
      pending.push({ file: p, name: basename(p, extname(p)) });
      continue;
    }
    if (!st.isDirectory())
      throw new LabError(
        'bad-scenario',
        `'${p}' is neither a case directory nor a parameter file (.yaml, .yml, .json)`,
      );
    if (statOf(join(p, 'cmdlist'))) {
      const name = basename(resolve(p));
      scenarios.push({ name, dir: p, cost: caseCost(load(name, p)), ...optional('description', describeCase(p)) });
      continue;
    }
    const subs = readdirSync(p)
      .filter((n) => statOf(join(p, n))?.isDirectory() && statOf(join(p, n, 'cmdlist')) !== undefined)
      .sort();
    if (subs.length === 0) throw new LabError('bad-scenario', `'${p}' has no 'cmdlist' and no case directories`);
    for (const name of subs)
      scenarios.push({
        name,
        dir: join(p, name),
        cost: caseCost(load(name, join(p, name))),
        ...optional('description', describeCase(join(p, name))),
      });
  }
  // parameter files: validated and generated for every seed before anything is written
  const traces = new TraceCache();
  const generated = pending.map(({ file, name }) => {
    const { params, workload } = workloadFor(validateParams(readParams(file), file), file, override, traces);
    const nodes = params.nodes.reduce((a, g) => a + g.count, 0);
    const description = describeParams(readFileSync(file, 'utf8'));
    return {
      name,
      description,
      cost: params.duration * (nodes + params.guests.count),
      bySeed: seeds.map((seed) => ({ seed, files: generateCase({ ...params, seed }, file, workload) })),
    };
  });
  const written: string[] = [];
  // the directories this call creates (parents first), removed again on failure when empty
  const created = [out, join(out, 'scenarios'), ...generated.map((g) => join(out, 'scenarios', g.name))].filter(
    (d) => generated.length > 0 && !statOf(d),
  );
  try {
    for (const g of generated) {
      const root = join(out, 'scenarios', g.name);
      const seedDirs: Record<string, string> = Object.create(null) as Record<string, string>;
      for (const { seed, files } of g.bySeed) {
        const dir = join(root, `seed-${seed}`);
        const st = statOf(dir);
        if (st && !(st.isDirectory() && (readdirSync(dir).length === 0 || holdsExactly(dir, files)))) {
          throw new LabError(
            'bad-argument',
            `'${dir}' exists with other content (another parameter file or generator version); choose another --out`,
          );
        }
        if (!st || readdirSync(dir).length === 0) {
          if (!st) written.push(dir);
          writeCase(dir, files);
        }
        load(g.name, dir);
        seedDirs[String(seed)] = dir;
      }
      io.out(`generated ${root} (${g.bySeed.length === 1 ? 'seed' : 'seeds'} ${seeds.join(', ')})`);
      scenarios.push({ name: g.name, dir: root, seedDirs, cost: g.cost, ...optional('description', g.description) });
    }
  } catch (err) {
    for (const dir of written) rmSync(dir, { recursive: true, force: true });
    for (const dir of created.reverse()) removeIfEmpty(dir);
    throw err;
  }
  return scenarios;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [k in K]?: V };
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function removeIfEmpty(dir: string): void {
  try {
    if (readdirSync(dir).length === 0) rmdirSync(dir);
  } catch {
    // not there or not empty: leave it
  }
}

/** The simulator-backed runOne module: the TypeScript source, or the built file beside the CLI. */
function adapterModule(): URL {
  for (const rel of ['./sim-adapter.ts', './lab/sim-adapter.js', './sim-adapter.js']) {
    const u = new URL(rel, import.meta.url);
    if (existsSync(fileURLToPath(u))) return u;
  }
  throw new LabError('bad-argument', `cannot find the simulator adapter module beside '${import.meta.url}'`);
}

/** The built-in plug-ins and those of `--plugin`; a module that is not a plug-in is a {@link LabError} `bad-argument` naming it. */
async function loadRegistry(modules: readonly string[], from: string): Promise<PolicyRegistry> {
  try {
    return await loadPluginRegistry(modules, from);
  } catch (err) {
    if (err instanceof PolicyError && err.code === 'invalid-plugin')
      throw new LabError('bad-argument', err.message, { cause: err });
    throw err;
  }
}

/** `poise-sim compare`. */
export async function cmdCompare(argv: string[], io: LabIo, command: string): Promise<number> {
  const f = parseFlags(
    argv,
    ['--out', '--variants', '--seeds', '--jobs', '--title', '--shard', ...TRACE_FLAGS],
    ['--save-traces'],
    ['--plugin'],
  );
  if (f.paths.length === 0) throw new LabUsageError("'compare' needs scenario directories or parameter files");
  const out = requireOut(f);
  const variantsFile = f.values.get('--variants');
  if (!variantsFile) throw new LabUsageError("'--variants <variants.yaml>' is required");
  // everything is checked before the first run, the plug-ins first (their keys are the variants')
  const plugins = { modules: f.lists.get('--plugin') ?? [], from: process.cwd() };
  const registry = await loadRegistry(plugins.modules, plugins.from);
  const shardText = f.values.get('--shard');
  const shard = shardText === undefined ? undefined : parseShard(shardText);
  if (typeof shard === 'string') throw new LabUsageError(`'--shard' ${shard}`);
  const seeds = parseSeeds(f.values.get('--seeds') ?? '1');
  const jobs = intFlag(f, '--jobs', 1) ?? defaultJobs();
  const variants = readVariants(variantsFile, registry);
  const override = traceOverride(f);
  for (const p of f.paths) if (!existsSync(p)) throw new LabError('bad-scenario', `no such file or directory '${p}'`);
  const scenarios = collectScenarios(f.paths, seeds, out, io, registry, override);
  const all = scenarios.length * variants.length * seeds.length;
  const title = f.values.get('--title') ?? `poise policy lab: ${variants.map((v) => v.name).join(' vs ')}`;
  const mine = shard === undefined ? all : shardJobs(planRuns(scenarios, variants, seeds), shard).length;
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  io.err(
    `${shard === undefined ? '' : `shard ${shard.index}/${shard.count}: ${mine} of `}${n(all, 'run')} (${n(scenarios.length, 'scenario')} × ${n(variants.length, 'variant')} × ${n(seeds.length, 'seed')}) on ${n(Math.max(1, Math.min(jobs, mine)), 'worker')}`,
  );
  const bar = progressBar(io.progress ?? { isTTY: false, write: () => undefined });
  let workerLine = '';
  const started = Date.now();
  const common = {
    scenarios,
    variants,
    seeds,
    jobs,
    out,
    module: adapterModule(),
    ...(plugins.modules.length > 0 ? { plugins } : {}),
    title,
    saveTraces: f.switches.has('--save-traces'),
    onProgress: (d: number, t: number) => bar.update(d, t),
    onWorkers: (ws: WorkerStats[]) => {
      workerLine = `workers: ${ws.map((w) => `${w.runs} runs, busy ${Math.round(w.utilization * 100)} %`).join('; ')}; runs took ${((Date.now() - started) / 1000).toFixed(1)} s`;
    },
  };
  let summary;
  try {
    if (shard !== undefined) {
      await runShard({ ...common, shard, command: commandTemplate(command, argv) });
    } else {
      summary = await runComparison({ ...common, command });
    }
  } finally {
    bar.done();
  }
  if (workerLine) io.err(workerLine);
  if (summary === undefined) {
    io.out(
      `wrote ${join(out, SHARD_FILE)} (shard ${shard!.index}/${shard!.count}); once every shard is done: poise-sim merge <the ${shard!.count} shard directories> --out <dir>`,
    );
    return 0;
  }
  printVerdicts(summary, io);
  io.out(`wrote ${join(out, 'report.html')}, summary.json, summary.csv, runs.csv, summary.md`);
  return 0;
}

/** One line per verdict with a next variant (compare and merge print them after writing). */
function printVerdicts(summary: LabSummary, io: LabIo): void {
  for (const v of summary.verdicts) {
    if (v.next === null) continue;
    const m = METRICS.find((x) => x.key === v.metric)!;
    const rel = v.relative === null ? '' : ` (${fmt(v.relative * 100)} %)`;
    const noise = v.clear === false ? ' — within the seed-to-seed noise' : '';
    io.out(
      `${v.scenario}: ${m.label}: ${v.best.join(' and ')} better than ${v.next} by ${fmt(v.difference! * m.displayScale)}${m.displayUnit === '%' ? ' pp' : ''}${rel}${noise}`,
    );
  }
}

/** `poise-sim merge`. */
export async function cmdMerge(argv: string[], io: LabIo): Promise<number> {
  const f = parseFlags(argv, ['--out'], []);
  if (f.paths.length === 0)
    throw new LabUsageError("'merge' needs the shard directories ('compare --shard i/n --out <dir>')");
  const out = requireOut(f);
  const summary = await mergeShards(f.paths, out);
  printVerdicts(summary, io);
  io.out(`wrote ${join(out, 'report.html')}, summary.json, summary.csv, runs.csv, summary.md`);
  return 0;
}

/**
 * Loads a scenario's case directory (a {@link LabError} `bad-scenario` naming it if it does not
 * load); its load warnings go to `io.err`.
 */
function loadScenario(dir: string, name: string, io: LabIo, registry: PolicyRegistry = BUILTIN_REGISTRY): CaseInput {
  let input;
  try {
    input = loadCase(dir, name, { registry });
  } catch (err) {
    throw new LabError('bad-scenario', `scenario '${name}': ${(err as Error).message}`, { cause: err });
  }
  for (const w of input.warnings ?? []) io.err(`poise-sim: warning: scenario '${name}': ${w}`);
  return input;
}

/** The seed a case directory runs with on its own: its `sim_options` `seed`, else 0 (as `poise-sim run`). */
function caseSeed(dir: string, io: LabIo): number {
  return loadScenario(dir, basename(resolve(dir)), io).simOptions?.seed ?? 0;
}

/** `poise-sim report`. */
export async function cmdReport(argv: string[], io: LabIo, command: string): Promise<number> {
  const f = parseFlags(argv, ['--out', '--title'], []);
  if (f.paths.length === 0) throw new LabUsageError("'report' needs run traces (.json) or case directories");
  const out = requireOut(f);
  for (const p of f.paths) if (!existsSync(p)) throw new LabError('bad-scenario', `no such file or directory '${p}'`);
  const traces: RunTrace[] = [];
  const descriptions = new Map<string, string>();
  for (const p of f.paths) {
    const d = statSync(p).isDirectory() ? describeCase(p) : undefined;
    if (d !== undefined) descriptions.set(basename(resolve(p)), d);
    if (statSync(p).isDirectory())
      traces.push(runOne({ name: basename(resolve(p)), dir: p }, { name: 'defaults', crs: {} }, caseSeed(p, io)));
    else traces.push(readTrace(p));
  }
  const seen = new Set<string>();
  for (const t of traces) {
    const k = `${t.scenario}/${t.variant}/${t.seed}`;
    if (seen.has(k))
      throw new LabError('bad-trace', `two runs of scenario '${t.scenario}' variant '${t.variant}' seed ${t.seed}`);
    seen.add(k);
  }
  traces.sort((a, b) => compareNames(a.scenario, b.scenario) || a.seed - b.seed);
  await reportTraces(
    traces,
    out,
    f.values.get('--title') ?? `poise run report: ${[...new Set(traces.map((t) => t.scenario))].join(', ')}`,
    command,
    descriptions,
  );
  io.out(`wrote ${join(out, 'report.html')}, summary.json, summary.csv, runs.csv, summary.md`);
  return 0;
}
