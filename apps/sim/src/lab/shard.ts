/**
 * Sweeps beyond one machine: `poise-sim compare --shard i/n` runs a deterministic share of the
 * runs (scenario × variant × seed) and writes what the main thread keeps of each (its digest) to
 * `<out>/shard.json`; `poise-sim merge <shard dirs> --out <dir>` puts the n shares together and
 * writes the same files, byte for byte, as one `compare` without `--shard` into that `--out`.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { digestTrace, type LabSummary, type RunDigest } from './compare';
import { LabError } from './errors';
import { saveTrace, tracePath, writeAll } from './lab';
import {
  planRuns,
  runAll,
  scenarioDir,
  type PluginModules,
  type RunJob,
  type ScenarioRef,
  type WorkerStats,
} from './runner';
import { compareNames } from '@poise/usage';
import { dotPath, type RunTrace } from './trace';
import type { Variant } from './variants';

/** The share `i/n` of a sweep: 1 ≤ index ≤ count. */
export interface Shard {
  index: number;
  count: number;
}

/** Most shards of one sweep (far above any cluster's job array; it keeps a typo from meaning 10⁹ shards). */
const MAX_SHARDS = 100_000;

/**
 * Parses `--shard i/n` (1-based: `1/3`, `2/3`, `3/3`); undefined when `text` is not a share,
 * with the reason.
 */
export function parseShard(text: string): Shard | string {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  if (!m) return `expected i/n such as 2/8 (the i-th of n shares, 1 ≤ i ≤ n), got '${text}'`;
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) return `expected n from 1 to ${MAX_SHARDS} shares, got '${text}'`;
  if (index < 1 || index > count)
    return `expected 1 ≤ i ≤ n (shares are numbered from 1; a 0-based index such as JOB_COMPLETION_INDEX needs + 1), got '${text}'`;
  return { index, count };
}

/**
 * The runs of shard `i/n`: the runs (in {@link planRuns} order) go, costliest first (ties in run
 * order), each to the shard with the least cost so far (ties to the lowest number), so that
 * shards take about as long; the result keeps run order. Depends only on the runs and their
 * scenarios' `cost`, so every machine computes the same partition.
 */
export function shardJobs(jobs: readonly RunJob[], shard: Shard): RunJob[] {
  const order = jobs
    .map((_, i) => i)
    .sort((a, b) => (jobs[b]!.scenario.cost ?? 1) - (jobs[a]!.scenario.cost ?? 1) || a - b);
  const load = new Array<number>(shard.count).fill(0);
  const owner = new Array<number>(jobs.length);
  for (const i of order) {
    let best = 0;
    for (let s = 1; s < shard.count; s++) if (load[s]! < load[best]!) best = s;
    owner[i] = best;
    load[best]! += jobs[i]!.scenario.cost ?? 1;
  }
  return jobs.filter((_, i) => owner[i] === shard.index - 1);
}

// --- what identifies a sweep

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

/** SHA-256 over a directory's files (relative paths in byte order, sizes and bytes), recursively. */
function treeDigest(dir: string): string {
  const h = createHash('sha256');
  const walk = (sub: string) => {
    for (const name of readdirSync(join(dir, sub)).sort(compareNames)) {
      const rel = sub === '' ? name : `${sub}/${name}`;
      const st = statSync(join(dir, rel));
      if (st.isDirectory()) walk(rel);
      else if (st.isFile()) {
        const bytes = readFileSync(join(dir, rel));
        h.update(`${rel}\u0000${bytes.length}\u0000`).update(bytes);
      }
    }
  };
  walk('');
  return h.digest('hex');
}

/** A scenario's content for the sweep's seeds: its case directory, or each seed's generated one. */
function scenarioDigest(scenario: ScenarioRef, seeds: readonly number[]): string {
  if (!scenario.seedDirs) return treeDigest(scenario.dir);
  return sha256(
    seeds
      .map((s) => {
        const dir = scenarioDir(scenario, s);
        return `seed-${s}:${existsSync(dir) ? treeDigest(dir) : 'missing'}`;
      })
      .join('\n'),
  );
}

/** The parts of a sweep's identity, each a hash; shards merge only when all are equal. */
interface SweepIdentity {
  id: string;
  scenarios: string;
  variants: string;
  seeds: string;
  options: string;
}

function identityOf(
  scenarios: readonly { name: string; digest: string }[],
  variants: readonly Variant[],
  seeds: readonly number[],
  options: { title: string; saveTraces: boolean },
): SweepIdentity {
  const parts = {
    scenarios: sha256(JSON.stringify(scenarios.map((s) => [s.name, s.digest]))),
    variants: sha256(JSON.stringify(variants.map((v) => [v.name, v.crs]))),
    seeds: sha256(JSON.stringify(seeds)),
    options: sha256(JSON.stringify([options.title, options.saveTraces])),
  };
  return { id: sha256(JSON.stringify(parts)), ...parts };
}

// --- digests through a file: every number, -0 and ±Infinity included, and every undefined key

/**
 * JSON with the values plain JSON loses tagged: a non-finite number or −0 as `{"$n": "…"}`, an
 * undefined property or item as `{"$u": 1}`, so that {@link decodeExact} gives back a value the
 * report code cannot tell from the original (the merged files are then the same bytes).
 */
export function encodeExact(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, key: string, v: unknown) {
    if (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)))
      return { $n: Object.is(v, -0) ? '-0' : String(v) };
    if (v === undefined && key !== '') return { $u: 1 };
    return v;
  });
}

/** The inverse of {@link encodeExact}. */
export function decodeExact(text: string): unknown {
  const fix = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = fix(v[i]);
      return v;
    }
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === '$n' && typeof o.$n === 'string') return Number(o.$n);
    if (keys.length === 1 && keys[0] === '$u' && o.$u === 1) return undefined;
    for (const k of keys) o[k] = fix(o[k]);
    return o;
  };
  return fix(JSON.parse(text));
}

// --- the shard file

export const SHARD_FILE = 'shard.json';
const SHARD_FORMAT = 'poise-lab-shard/1';

/**
 * The command line the report shows: `prefix` and `args` (the `compare` arguments without
 * `--shard i/n`), `args[outAt]` the `--out` value, which `merge` replaces by its own.
 */
export interface CommandTemplate {
  prefix: string;
  args: string[];
  outAt: number;
}

/** `<out>/shard.json`: one share of a sweep. */
export interface ShardFile {
  format: typeof SHARD_FORMAT;
  shard: Shard;
  sweep: SweepIdentity;
  /** Runs in the whole sweep. */
  total: number;
  title: string;
  command: CommandTemplate | null;
  saveTraces: boolean;
  variants: Variant[];
  seeds: number[];
  scenarios: { name: string; digest: string; generated: boolean; description?: string }[];
  /** This share's runs: their index in the sweep's run order and what the lab keeps of each. */
  runs: { index: number; digest: RunDigest }[];
}

const shardSchema = z.strictObject({
  format: z.literal(SHARD_FORMAT, { message: `expected '${SHARD_FORMAT}'` }),
  shard: z.strictObject({ index: z.number().int().min(1), count: z.number().int().min(1).max(MAX_SHARDS) }),
  sweep: z.strictObject({
    id: z.string(),
    scenarios: z.string(),
    variants: z.string(),
    seeds: z.string(),
    options: z.string(),
  }),
  total: z.number().int().min(0),
  title: z.string(),
  command: z.strictObject({ prefix: z.string(), args: z.array(z.string()), outAt: z.number().int() }).nullable(),
  saveTraces: z.boolean(),
  variants: z.array(
    z.strictObject({ name: z.string(), crs: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])) }),
  ),
  seeds: z.array(z.number().int().min(0)),
  scenarios: z.array(
    z.strictObject({
      name: z.string(),
      digest: z.string(),
      generated: z.boolean(),
      description: z.string().optional(),
    }),
  ),
  runs: z.array(
    z.strictObject({
      index: z.number().int().min(0),
      digest: z.looseObject({ scenario: z.string(), variant: z.string(), seed: z.number() }),
    }),
  ),
});

/** Reads and checks a shard file; errors name the file and the field. */
export function readShardFile(file: string): ShardFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new LabError('bad-argument', `cannot read '${file}': ${(err as Error).message}`, { cause: err });
  }
  let value: unknown;
  try {
    value = decodeExact(text);
  } catch (err) {
    throw new LabError('bad-argument', `'${file}': invalid JSON: ${(err as Error).message}`, { cause: err });
  }
  const res = shardSchema.safeParse(value);
  if (!res.success) {
    const i = res.error.issues[0]!;
    throw new LabError('bad-argument', `'${file}' ${dotPath(i.path)}: ${i.message}`);
  }
  const s = res.data as unknown as ShardFile;
  if (s.shard.index > s.shard.count)
    throw new LabError('bad-argument', `'${file}' shard: ${s.shard.index}/${s.shard.count} is not a share`);
  return s;
}

export interface ShardRunOptions {
  scenarios: ScenarioRef[];
  variants: Variant[];
  seeds: number[];
  module: string | URL;
  /** Out-of-tree policy plug-ins every run loads (`--plugin`), as `compare` without `--shard` gets them. */
  plugins?: PluginModules;
  jobs?: number;
  out: string;
  title: string;
  command: CommandTemplate | null;
  saveTraces?: boolean;
  shard: Shard;
  onProgress?: (done: number, total: number) => void;
  onWorkers?: (workers: WorkerStats[]) => void;
}

/** Runs shard `i/n` of a comparison and writes `<out>/shard.json` (and its runs' traces with `saveTraces`). */
export async function runShard(o: ShardRunOptions): Promise<ShardFile> {
  const all = planRuns(o.scenarios, o.variants, o.seeds);
  const mine = shardJobs(all, o.shard);
  const firstSeed = Math.min(...o.seeds);
  const seeds = [...new Set(o.seeds)].sort((a, b) => a - b);
  const scenarios = [...o.scenarios]
    .sort((a, b) => compareNames(a.name, b.name))
    .map((s) => ({
      name: s.name,
      digest: scenarioDigest(s, seeds),
      generated: s.seedDirs !== undefined,
      ...(s.description !== undefined ? { description: s.description } : {}),
    }));
  const saveTraces = o.saveTraces ?? false;
  const digests =
    mine.length === 0
      ? []
      : await runAll<RunDigest>(mine, {
          module: o.module,
          jobs: o.jobs,
          onProgress: o.onProgress,
          onWorkers: o.onWorkers,
          ...(o.plugins ? { runOptions: { plugins: o.plugins } } : {}),
          consume: (job, trace: RunTrace) => {
            if (saveTraces) saveTrace(o.out, trace);
            return digestTrace(trace, job.seed === firstSeed);
          },
        });
  const file: ShardFile = {
    format: SHARD_FORMAT,
    shard: o.shard,
    sweep: identityOf(scenarios, o.variants, seeds, { title: o.title, saveTraces }),
    total: all.length,
    title: o.title,
    command: o.command,
    saveTraces,
    variants: o.variants.map((v) => ({ name: v.name, crs: { ...v.crs } })),
    seeds,
    scenarios,
    runs: mine.map((job, k) => ({ index: job.index, digest: digests[k]! })),
  };
  mkdirSync(o.out, { recursive: true });
  writeFileSync(join(o.out, SHARD_FILE), `${encodeExact(file)}\n`);
  return file;
}

const PART_NAMES: Record<Exclude<keyof SweepIdentity, 'id'>, string> = {
  scenarios: 'the scenarios (names or generated cases: another corpus, generator or trace file)',
  variants: 'the variants',
  seeds: 'the seeds',
  options: 'the title or --save-traces',
};

/**
 * Merges the shard directories of one sweep into `out` (which must not exist or be empty): the
 * report and summary files of the whole sweep, the generated scenarios and, with
 * `--save-traces`, every run's trace. Refuses shards of different sweeps, a missing or
 * duplicate shard, and files that do not add up.
 */
export async function mergeShards(dirs: readonly string[], out: string): Promise<LabSummary> {
  if (dirs.length === 0) throw new LabError('bad-argument', 'no shard directories to merge');
  const shards = dirs.map((dir) => {
    const st = statOrUndefined(dir);
    if (!st?.isDirectory()) throw new LabError('bad-argument', `'${dir}' is not a directory`);
    const file = join(dir, SHARD_FILE);
    if (!existsSync(file))
      throw new LabError(
        'bad-argument',
        `'${dir}' holds no ${SHARD_FILE} (not the --out of a 'poise-sim compare --shard' run)`,
      );
    return { dir, file, s: readShardFile(file) };
  });
  const first = shards[0]!;
  for (const x of shards.slice(1)) {
    if (x.s.shard.count !== first.s.shard.count)
      throw new LabError(
        'bad-argument',
        `'${x.file}' is shard ${x.s.shard.index}/${x.s.shard.count}, '${first.file}' shard ${first.s.shard.index}/${first.s.shard.count}: not the same split`,
      );
    if (x.s.sweep.id !== first.s.sweep.id) {
      const differ = (Object.keys(PART_NAMES) as (keyof typeof PART_NAMES)[])
        .filter((k) => x.s.sweep[k] !== first.s.sweep[k])
        .map((k) => PART_NAMES[k]);
      throw new LabError(
        'bad-argument',
        `'${x.file}' is a shard of another sweep than '${first.file}': ${differ.length > 0 ? differ.join(', ') : 'the sweep identity'} differ`,
      );
    }
  }
  const byIndex = new Map<number, (typeof shards)[number]>();
  for (const x of shards) {
    const other = byIndex.get(x.s.shard.index);
    if (other)
      throw new LabError(
        'bad-argument',
        `shard ${x.s.shard.index}/${x.s.shard.count} given twice ('${other.dir}' and '${x.dir}')`,
      );
    byIndex.set(x.s.shard.index, x);
  }
  const n = first.s.shard.count;
  const missing = Array.from({ length: n }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length > 0)
    throw new LabError(
      'bad-argument',
      `shard${missing.length === 1 ? '' : 's'} ${missing.map((i) => `${i}/${n}`).join(', ')} missing (given: ${[...byIndex.keys()].sort((a, b) => a - b).join(', ')})`,
    );
  // every run of the sweep exactly once
  const total = first.s.total;
  const runs = new Array<RunDigest | undefined>(total);
  for (const x of shards) {
    for (const r of x.s.runs) {
      if (r.index >= total)
        throw new LabError('bad-argument', `'${x.file}' runs: run ${r.index} of a sweep of ${total} runs`);
      if (runs[r.index] !== undefined)
        throw new LabError('bad-argument', `'${x.file}' runs: run ${r.index} is in two shards`);
      runs[r.index] = r.digest;
    }
  }
  const lost = runs.findIndex((r) => r === undefined);
  if (lost >= 0) throw new LabError('bad-argument', `run ${lost} of ${total} is in no shard`);
  // the output directory: new or empty, and none of the shards
  const outSt = statOrUndefined(out);
  if (outSt && !(outSt.isDirectory() && readdirSync(out).length === 0))
    throw new LabError('bad-argument', `'${out}' exists and is not an empty directory`);
  for (const x of shards)
    if (resolve(x.dir) === resolve(out)) throw new LabError('bad-argument', `'${out}' is one of the shards`);
  // generated scenarios: the first shard's, checked against the identity, then copied
  const seeds = first.s.seeds;
  for (const sc of first.s.scenarios.filter((x) => x.generated)) {
    const src = join(first.dir, 'scenarios', sc.name);
    if (scenarioDigest({ name: sc.name, dir: src, seedDirs: seedDirsOf(src, seeds) }, seeds) !== sc.digest)
      throw new LabError(
        'bad-argument',
        `'${src}' does not hold the generated cases its ${SHARD_FILE} names (changed or removed since the run)`,
      );
  }
  mkdirSync(out, { recursive: true });
  for (const sc of first.s.scenarios.filter((x) => x.generated))
    for (const seed of seeds)
      cpSync(join(first.dir, 'scenarios', sc.name, `seed-${seed}`), join(out, 'scenarios', sc.name, `seed-${seed}`), {
        recursive: true,
      });
  if (first.s.saveTraces) {
    for (const x of shards) {
      for (const r of x.s.runs) {
        const rel = tracePath(r.digest);
        const src = join(x.dir, rel);
        if (!existsSync(src))
          throw new LabError('bad-argument', `'${src}' is missing (the shard ran with --save-traces)`);
        mkdirSync(dirname(join(out, rel)), { recursive: true });
        cpSync(src, join(out, rel));
      }
    }
  }
  const c = first.s.command;
  const command = c === null ? undefined : commandLine(c, out);
  const descriptions = new Map(
    first.s.scenarios.filter((x) => x.description !== undefined).map((x) => [x.name, x.description!]),
  );
  return writeAll(out, runs as RunDigest[], first.s.variants, first.s.title, command, descriptions);
}

/** The command line of a template with `out` as its `--out`. */
export function commandLine(c: CommandTemplate, out: string): string {
  const args = [...c.args];
  if (c.outAt >= 0 && c.outAt < args.length) args[c.outAt] = out;
  return [c.prefix, ...args].join(' ');
}

/**
 * The template of a `compare` command line (`command` as the CLI shows it, `argv` its arguments
 * after `compare`): `--shard <v>` left out, the `--out` value marked.
 */
export function commandTemplate(command: string, argv: readonly string[]): CommandTemplate {
  const joined = argv.join(' ');
  const prefix = command.endsWith(joined) ? command.slice(0, command.length - joined.length).trimEnd() : command;
  const args: string[] = [];
  let outAt = -1;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--shard') {
      i++;
      continue;
    }
    if (argv[i] === '--out') outAt = args.length + 1;
    args.push(argv[i]!);
  }
  return { prefix, args, outAt };
}

function seedDirsOf(root: string, seeds: readonly number[]): Record<string, string> {
  return Object.fromEntries(seeds.map((s) => [String(s), join(root, `seed-${s}`)]));
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
