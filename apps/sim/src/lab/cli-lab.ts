import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCase } from '@poise/sim';
import { LabError } from './errors';
import { generateCase, writeCase } from './generate/generate';
import { readParams, validateParams } from './generate/params';
import { reportTraces, runComparison } from './lab';
import { progressBar, type ProgressStream } from './progress';
import { defaultJobs, type ScenarioRef } from './runner';
import { runOne } from './sim-adapter';
import { METRICS } from './stats';
import { readTrace, type RunTrace } from './trace';
import { parseSeeds, readVariants } from './variants';
import { fmt } from './report';

/** Output of the lab commands (the same shape as the CLI's Io). */
export interface LabIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Where the progress bar draws (stderr); none when absent or not a TTY. */
  progress?: ProgressStream;
}

export const LAB_USAGE = `  poise-sim generate [<params.yaml|json>] --out <dir> [--seed <n>] [--duration <d>] [--guests <n>] [--shape idle|diurnal|bursty|hot-node]
  poise-sim compare <scenario-dir|dir-of-cases|params.yaml>... --variants <variants.yaml> [--seeds 1..20] [--jobs <n>] --out <dir> [--title <text>] [--save-traces]
  poise-sim report <run-trace.json|case-dir>... --out <dir> [--title <text>]`;

/** A usage mistake: exit code 2. */
export class LabUsageError extends Error {
  override readonly name = 'LabUsageError';
}

interface Flags {
  paths: string[];
  values: Map<string, string>;
  switches: Set<string>;
}

function parseFlags(argv: string[], valued: readonly string[], switches: readonly string[]): Flags {
  const f: Flags = { paths: [], values: new Map(), switches: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (valued.includes(a)) {
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
  if (!/^\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) throw new LabUsageError(`'${name}' expects a whole number ≥ ${min}, got '${v}'`);
  return Number(v);
}

function requireOut(f: Flags): string {
  const out = f.values.get('--out');
  if (!out) throw new LabUsageError("'--out <dir>' is required");
  return out;
}

/** Parameters from an optional file plus flags (flags win). */
function generatorParams(file: string | undefined, f: Flags): { params: ReturnType<typeof validateParams>; where: string } {
  const raw = file === undefined ? {} : readParams(file);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new LabError('bad-params', `'${file}': expected a map of parameters`);
  const p = { ...(raw as Record<string, unknown>) };
  const seed = intFlag(f, '--seed', 0);
  if (seed !== undefined) p.seed = seed;
  const duration = f.values.get('--duration');
  if (duration !== undefined) p.duration = duration;
  const guests = intFlag(f, '--guests', 0);
  if (guests !== undefined) p.guests = { ...((p.guests as object | undefined) ?? {}), count: guests };
  const shape = f.values.get('--shape');
  if (shape !== undefined) p.load = { ...((p.load as object | undefined) ?? {}), shape };
  const where = file ?? 'command-line parameters';
  return { params: validateParams(p, where), where };
}

/** `poise-sim generate`. */
export function cmdGenerate(argv: string[], io: LabIo): number {
  const f = parseFlags(argv, ['--out', '--seed', '--duration', '--guests', '--shape'], []);
  if (f.paths.length > 1) throw new LabUsageError("'generate' takes at most one parameter file");
  const out = requireOut(f);
  const { params, where } = generatorParams(f.paths[0], f);
  const files = generateCase(params, where);
  writeCase(out, files);
  const bytes = [...files.values()].reduce((a, t) => a + Buffer.byteLength(t), 0);
  io.out(`wrote ${files.size} files (${(bytes / 1024).toFixed(0)} KiB) to ${out}`);
  return 0;
}

function isParamsFile(p: string): boolean {
  return ['.yaml', '.yml', '.json'].includes(extname(p)) && existsSync(p) && statSync(p).isFile();
}

/** Scenario directories of the arguments: a case dir, a dir of case dirs, or a parameter file to generate. */
function collectScenarios(paths: string[], out: string, io: LabIo): ScenarioRef[] {
  const scenarios: ScenarioRef[] = [];
  const pending: { file: string; name: string }[] = [];
  for (const p of paths) {
    if (!existsSync(p)) throw new LabError('bad-scenario', `no such file or directory '${p}'`);
    if (isParamsFile(p)) {
      pending.push({ file: p, name: basename(p, extname(p)) });
      continue;
    }
    if (!statSync(p).isDirectory()) throw new LabError('bad-scenario', `'${p}' is neither a case directory nor a parameter file (.yaml, .yml, .json)`);
    if (existsSync(join(p, 'cmdlist'))) {
      scenarios.push({ name: basename(resolve(p)), dir: p });
      continue;
    }
    const subs = readdirSync(p).filter((n) => statSync(join(p, n)).isDirectory() && existsSync(join(p, n, 'cmdlist'))).sort();
    if (subs.length === 0) throw new LabError('bad-scenario', `'${p}' has no 'cmdlist' and no case directories`);
    for (const s of subs) scenarios.push({ name: s, dir: join(p, s) });
  }
  // parameter files: validate and generate all of them before writing any
  const generated = pending.map(({ file, name }) => ({ name, files: generateCase(validateParams(readParams(file), file), file) }));
  for (const g of generated) {
    const dir = join(out, 'scenarios', g.name);
    writeCase(dir, g.files);
    io.out(`generated ${dir}`);
    scenarios.push({ name: g.name, dir });
  }
  return scenarios;
}

/** The simulator-backed runOne module: the TypeScript source, or the built file beside the CLI. */
export function adapterModule(): URL {
  for (const rel of ['./sim-adapter.ts', './lab/sim-adapter.js', './sim-adapter.js']) {
    const u = new URL(rel, import.meta.url);
    if (existsSync(fileURLToPath(u))) return u;
  }
  throw new LabError('bad-argument', `cannot find the simulator adapter module beside '${import.meta.url}'`);
}

/** `poise-sim compare`. */
export async function cmdCompare(argv: string[], io: LabIo, command: string): Promise<number> {
  const f = parseFlags(argv, ['--out', '--variants', '--seeds', '--jobs', '--title'], ['--save-traces']);
  if (f.paths.length === 0) throw new LabUsageError("'compare' needs scenario directories or parameter files");
  const out = requireOut(f);
  const variantsFile = f.values.get('--variants');
  if (!variantsFile) throw new LabUsageError("'--variants <variants.yaml>' is required");
  // everything is checked before the first run
  const seeds = parseSeeds(f.values.get('--seeds') ?? '1');
  const jobs = intFlag(f, '--jobs', 1) ?? defaultJobs();
  const variants = readVariants(variantsFile);
  for (const p of f.paths) if (!existsSync(p)) throw new LabError('bad-scenario', `no such file or directory '${p}'`);
  const scenarios = collectScenarios(f.paths, out, io);
  for (const s of scenarios) {
    try {
      loadCase(s.dir, s.name);
    } catch (err) {
      throw new LabError('bad-scenario', `scenario '${s.name}': ${(err as Error).message}`, { cause: err });
    }
  }
  const total = scenarios.length * variants.length * seeds.length;
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  io.err(`${n(total, 'run')} (${n(scenarios.length, 'scenario')} × ${n(variants.length, 'variant')} × ${n(seeds.length, 'seed')}) on ${n(Math.min(jobs, total), 'worker')}`);
  const bar = progressBar(io.progress ?? { isTTY: false, write: () => undefined });
  let summary;
  try {
    summary = await runComparison({
      scenarios, variants, seeds, jobs, out, module: adapterModule(), command,
      title: f.values.get('--title') ?? `poise policy lab: ${variants.map((v) => v.name).join(' vs ')}`,
      saveTraces: f.switches.has('--save-traces'), onProgress: (d, t) => bar.update(d, t),
    });
  } finally {
    bar.done();
  }
  for (const v of summary.verdicts) {
    if (v.next === null) continue;
    const m = METRICS.find((x) => x.key === v.metric)!;
    const rel = v.relative === null ? '' : ` (${fmt(v.relative * 100)} %)`;
    io.out(`${v.scenario}: ${m.label}: ${v.best.join(' and ')} better than ${v.next} by ${fmt(v.difference! * m.displayScale)}${m.displayUnit === '%' ? ' pp' : ''}${rel}`);
  }
  io.out(`wrote ${join(out, 'report.html')}, summary.json, summary.csv, runs.csv`);
  return 0;
}

/** The seed a case directory runs with on its own: its `sim_options` `seed`, else 0 (as `poise-sim run`). */
function caseSeed(dir: string): number {
  try {
    return loadCase(dir).simOptions?.seed ?? 0;
  } catch (err) {
    throw new LabError('bad-scenario', `scenario '${basename(resolve(dir))}': ${(err as Error).message}`, { cause: err });
  }
}

/** `poise-sim report`. */
export async function cmdReport(argv: string[], io: LabIo, command: string): Promise<number> {
  const f = parseFlags(argv, ['--out', '--title'], []);
  if (f.paths.length === 0) throw new LabUsageError("'report' needs run traces (.json) or case directories");
  const out = requireOut(f);
  for (const p of f.paths) if (!existsSync(p)) throw new LabError('bad-scenario', `no such file or directory '${p}'`);
  const traces: RunTrace[] = [];
  for (const p of f.paths) {
    if (statSync(p).isDirectory()) traces.push(runOne({ name: basename(resolve(p)), dir: p }, { name: 'defaults', crs: {} }, caseSeed(p)));
    else traces.push(readTrace(p));
  }
  const seen = new Set<string>();
  for (const t of traces) {
    const k = `${t.scenario}/${t.variant}/${t.seed}`;
    if (seen.has(k)) throw new LabError('bad-trace', `two runs of scenario '${t.scenario}' variant '${t.variant}' seed ${t.seed}`);
    seen.add(k);
  }
  traces.sort((a, b) => (a.scenario < b.scenario ? -1 : a.scenario > b.scenario ? 1 : 0) || a.seed - b.seed);
  await reportTraces(traces, out, f.values.get('--title') ?? `poise run report: ${[...new Set(traces.map((t) => t.scenario))].join(', ')}`, command);
  io.out(`wrote ${join(out, 'report.html')}, summary.json, summary.csv, runs.csv`);
  return 0;
}
