/**
 * The shape of `pnpm bench --json` (one JSON object, {@link BenchResult}), its validation, and the
 * README tables rendered from it. `pnpm bench:readme` writes the tables between the markers
 * `<!-- bench:<region> -->` and `<!-- /bench:<region> -->` of the READMEs named in
 * {@link README_REGIONS}; `readme.test.ts` checks that every region is exactly what
 * {@link renderRegion} makes of `bench/results.json` (the last bench run), and that this file
 * validates against the schema below — so a README never shows a figure the bench did not produce.
 */

/** Bumped whenever a field is added, removed or changes meaning. */
export const BENCH_SCHEMA = 'poise-bench/4';

/**
 * Timings of repeated runs: the median and the spread (min–max), in the unit the field names.
 * Fields named `…Ms` are wall-clock time; `…CpuMs` the CPU time the process used meanwhile (all
 * its threads: V8's garbage-collection and compiler threads included), which a machine shared
 * with other work inflates far less.
 */
export interface Timing {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly node: string;
  readonly platform: string;
  readonly date: string;
}

/** Start placement, seed 003 (3 nodes, static): `resources` decisions of score + pick + add. */
export interface StartRow {
  readonly resources: number;
  readonly nodes: number;
  readonly fastMs: Timing;
  readonly fastCpuMs: Timing;
  readonly fastPerDecisionUs: number;
  readonly baselineMs: Timing;
  readonly baselineCpuMs: Timing;
  readonly baselinePerDecisionUs: number;
  /** baseline median / fast median (wall). */
  readonly speedup: number;
  /** The reference's own average per `score_nodes_to_start_service` (seed 003, another machine). */
  readonly publishedScoreUs: number | null;
}

/**
 * One start score (`scoreNodesToStart`, static) on `nodes` nodes carrying `guests` guests placed
 * round-robin, in batches of `calls`, µs; `scoreNodesToStartInto`; its kernel alone (scores into a buffer); and the same
 * by the kernel it replaced and by the kernel in C (`bench/native/start-score.c`, one process per run, its decisions and score
 * bits checked against the TypeScript kernel's), null when it was not run (no C compiler).
 */
export interface StartScoreRow {
  readonly workload: string;
  readonly nodes: number;
  readonly guests: number;
  readonly calls: number;
  readonly scoreUs: Timing;
  readonly scoreCpuUs: Timing;
  /** `scoreNodesToStartInto`: the same scores into the caller's buffer. */
  readonly intoUs: Timing;
  readonly intoCpuUs: Timing;
  readonly kernelUs: Timing;
  readonly kernelCpuUs: Timing;
  /** The kernel it replaced (`writeCriteria` per node, then `scoreFlatInPlace`), scores into a buffer. */
  readonly previousKernelUs: Timing;
  readonly previousKernelCpuUs: Timing;
  readonly nativeScoreUs: Timing | null;
  readonly nativeScoreCpuUs: Timing | null;
}

/** Best balancing migration (limit 1) over every (candidate, target) pair. */
export interface RebalanceRow {
  readonly resources: number;
  readonly nodes: number;
  readonly method: 'bruteforce' | 'topsis';
  readonly fastMs: Timing;
  readonly fastCpuMs: Timing;
  readonly baselineMs: Timing;
  readonly baselineCpuMs: Timing;
  readonly speedup: number;
}

export interface UsageMemoryRow {
  readonly resources: number;
  readonly nodes: number;
  readonly buildMs: number;
  readonly bytesPerResource: number;
}

/** A whole simulated cluster (`@poise/sim` running the HA core), warm runs. */
export interface SystemRow {
  readonly workload: 'seed-003' | 'dynamic-rebalance';
  readonly nodes: number;
  readonly services: number;
  readonly mode: 'static' | 'dynamic';
  readonly roundModel: 'reference' | 'concurrent';
  /** The first manager round (`Manager.manage`: adds every service and places it). */
  readonly firstRoundMs: Timing;
  readonly firstRoundCpuMs: Timing;
  /** Per run, the median of the later manager rounds; over the runs. */
  readonly laterRoundMs: Timing;
  readonly laterRoundCpuMs: Timing;
  /** The slowest later manager round of any run. */
  readonly laterRoundMaxMs: number;
  /** Simulated rounds of the case run (`runMs`). */
  readonly rounds: number;
  /** Load the case directory and run it to its end (as `poise-sim run` does, without process start). */
  readonly runMs: Timing;
  readonly runCpuMs: Timing;
  /** Load and run a simulated hour (180 rounds). */
  readonly hourMs: Timing;
  readonly hourCpuMs: Timing;
  /** Heap held by the simulation after the hour (after GC; log, case and status included) per service. */
  readonly bytesPerService: number;
  /** The reference's first `manage` call (seed 003, another machine). */
  readonly publishedFirstRoundMs: number | null;
}

/** One function of a CPU profile: self time as a share of the profiled run. */
export interface ProfileEntry {
  readonly fn: string;
  readonly file: string;
  readonly selfPercent: number;
}

export interface ProfileSection {
  /** What was profiled. */
  readonly workload: string;
  readonly totalMs: number;
  readonly top: readonly ProfileEntry[];
}

export interface BenchResult {
  readonly schema: string;
  readonly machine: Machine;
  readonly repetitions: { readonly kernels: number; readonly system: number; readonly hour: number };
  /** The compiler of the C start kernel (its `--version`, flags); null when it was not run. */
  readonly nativeCompiler: string | null;
  readonly startPlacement: readonly StartRow[];
  readonly startScore: readonly StartScoreRow[];
  readonly rebalanceScoring: readonly RebalanceRow[];
  readonly usageMemory: readonly UsageMemoryRow[];
  readonly system: readonly SystemRow[];
  readonly profiles: readonly ProfileSection[];
}

/** Seed 003: the reference's average `score_nodes_to_start_service` (#8 + qm #1), µs. */
export const PUBLISHED_START_SCORE_US: Readonly<Record<number, number>> = { 300: 102, 3000: 102, 9000: 110 };
/** Seed 003: the reference's first `manage` call (#8 + qm #1), ms. */
export const PUBLISHED_FIRST_ROUND_MS: Readonly<Record<number, number>> = { 300: 248, 3000: 2620, 9000: 4070 };

export function summary(xs: readonly number[]): Timing {
  if (xs.length === 0) throw new Error('summary of no runs');
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  const median = s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, runs: s.length };
}

// ---- validation ----

type Check = (v: unknown, path: string) => void;

class SchemaError extends Error {
  override readonly name = 'SchemaError';
}

function fail(path: string, what: string, v: unknown): never {
  throw new SchemaError(`bench result ${path}: expected ${what}, got ${JSON.stringify(v)}`);
}

const num: Check = (v, p) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(p, 'a finite number', v);
};
const str: Check = (v, p) => {
  if (typeof v !== 'string') fail(p, 'a string', v);
};
const numOrNull: Check = (v, p) => {
  if (v !== null) num(v, p);
};
const orNull =
  (check: Check): Check =>
  (v, p) => {
    if (v !== null) check(v, p);
  };
const oneOf =
  (...values: string[]): Check =>
  (v, p) => {
    if (!values.includes(v as string)) fail(p, values.map((x) => `'${x}'`).join(' or '), v);
  };
const object =
  (fields: Record<string, Check>): Check =>
  (v, p) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(p, 'an object', v);
    for (const [key, check] of Object.entries(fields)) check((v as Record<string, unknown>)[key], `${p}.${key}`);
    for (const key of Object.keys(v))
      if (!Object.hasOwn(fields, key)) fail(`${p}.${key}`, 'no such field', (v as Record<string, unknown>)[key]);
  };
const array =
  (item: Check): Check =>
  (v, p) => {
    if (!Array.isArray(v)) fail(p, 'an array', v);
    v.forEach((x, i) => item(x, `${p}[${i}]`));
  };

const timing = object({ median: num, min: num, max: num, runs: num });

const benchResult = object({
  schema: oneOf(BENCH_SCHEMA),
  machine: object({ cpus: num, cpuModel: str, node: str, platform: str, date: str }),
  repetitions: object({ kernels: num, system: num, hour: num }),
  nativeCompiler: orNull(str),
  startPlacement: array(
    object({
      resources: num,
      nodes: num,
      fastMs: timing,
      fastCpuMs: timing,
      fastPerDecisionUs: num,
      baselineMs: timing,
      baselineCpuMs: timing,
      baselinePerDecisionUs: num,
      speedup: num,
      publishedScoreUs: numOrNull,
    }),
  ),
  startScore: array(
    object({
      workload: str,
      nodes: num,
      guests: num,
      calls: num,
      scoreUs: timing,
      scoreCpuUs: timing,
      intoUs: timing,
      intoCpuUs: timing,
      kernelUs: timing,
      kernelCpuUs: timing,
      previousKernelUs: timing,
      previousKernelCpuUs: timing,
      nativeScoreUs: orNull(timing),
      nativeScoreCpuUs: orNull(timing),
    }),
  ),
  rebalanceScoring: array(
    object({
      resources: num,
      nodes: num,
      method: oneOf('bruteforce', 'topsis'),
      fastMs: timing,
      fastCpuMs: timing,
      baselineMs: timing,
      baselineCpuMs: timing,
      speedup: num,
    }),
  ),
  usageMemory: array(object({ resources: num, nodes: num, buildMs: num, bytesPerResource: num })),
  system: array(
    object({
      workload: oneOf('seed-003', 'dynamic-rebalance'),
      nodes: num,
      services: num,
      mode: oneOf('static', 'dynamic'),
      roundModel: oneOf('reference', 'concurrent'),
      firstRoundMs: timing,
      firstRoundCpuMs: timing,
      laterRoundMs: timing,
      laterRoundCpuMs: timing,
      laterRoundMaxMs: num,
      rounds: num,
      runMs: timing,
      runCpuMs: timing,
      hourMs: timing,
      hourCpuMs: timing,
      bytesPerService: num,
      publishedFirstRoundMs: numOrNull,
    }),
  ),
  profiles: array(
    object({ workload: str, totalMs: num, top: array(object({ fn: str, file: str, selfPercent: num })) }),
  ),
});

/** Throws naming the field unless `value` is a {@link BenchResult} of the current {@link BENCH_SCHEMA}. */
export function validateBenchResult(value: unknown): BenchResult {
  benchResult(value, '$');
  return value as BenchResult;
}

// ---- rendering ----

function fixed(x: number, digits: number): string {
  return x.toFixed(digits);
}

/** A figure with about three significant digits (no exponent). */
function sig(x: number): string {
  const a = Math.abs(x);
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

function withSpread(t: Timing): string {
  return `${sig(t.median)} (${sig(t.min)}–${sig(t.max)})`;
}

/** Wall time with its spread, then the CPU time's median. */
function wallCpu(wall: Timing, cpu: Timing): string {
  return `${withSpread(wall)}; CPU ${sig(cpu.median)}`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function machineLine(r: BenchResult): string {
  const m = r.machine;
  return (
    `Generated by \`pnpm bench:readme\` from \`pnpm bench --json\` (${r.schema}, ${m.date.slice(0, 10)}) on ` +
    `${m.cpus} × ${m.cpuModel}, Node ${m.node}, ${m.platform}; a machine shared with other work, so ` +
    `figures vary between runs: wall-clock medians with the spread (min–max) in brackets, then ` +
    `the median CPU time of the process (all its threads), which the other work inflates far less.`
  );
}

function renderKernels(r: BenchResult): string {
  const start = table(
    [
      'services',
      'fast: decisions ms',
      'µs / decision',
      'baseline: rebuild per decision ms',
      'µs / decision',
      'speed-up',
      'reference µs / start score ¹',
    ],
    r.startPlacement.map((s) => [
      count(s.resources),
      wallCpu(s.fastMs, s.fastCpuMs),
      sig(s.fastPerDecisionUs),
      wallCpu(s.baselineMs, s.baselineCpuMs),
      sig(s.baselinePerDecisionUs),
      `${sig(s.speedup)}×`,
      s.publishedScoreUs === null ? '—' : String(s.publishedScoreUs),
    ]),
  );
  const rebalance = table(
    ['services × nodes', 'method', 'fast ms', 'baseline: O(n) per pair ms', 'speed-up'],
    r.rebalanceScoring.map((b) => [
      `${count(b.resources)} × ${b.nodes}`,
      b.method,
      wallCpu(b.fastMs, b.fastCpuMs),
      wallCpu(b.baselineMs, b.baselineCpuMs),
      `${sig(b.speedup)}×`,
    ]),
  );
  const memory = table(
    ['resources × nodes', 'build + score ms', 'bytes / resource'],
    r.usageMemory.map((u) => [`${count(u.resources)} × ${u.nodes}`, sig(u.buildMs), fixed(u.bytesPerResource, 0)]),
  );
  return [
    machineLine(r),
    '',
    `Start placement, seed 003 (3 nodes, static; a decision = score every node, pick the best, add the guest there); ${r.repetitions.kernels} interleaved runs of each side after the same warm-up:`,
    '',
    start,
    '',
    ...renderStartScore(r),
    `Auto-rebalance scoring, best migration (limit 1) over every (candidate, target) pair; ${r.repetitions.kernels} interleaved runs of each side after the same warm-up:`,
    '',
    rebalance,
    '',
    "Memory of a `ClusterUsage` (heap after GC; the sid strings are the caller's):",
    '',
    memory,
    '',
    "¹ The reference's own published figures (seed 003, patches #8 + qm #1, Perl and Rust on a virtualised machine): " +
      'figures from another machine, for scale only.',
  ].join('\n');
}

/** The start score against the kernel in C, or why that comparison is missing. */
function renderStartScore(r: BenchResult): string[] {
  if (r.startScore.length === 0) return [];
  const intro =
    `One start score (static) on the nodes carrying the guests placed round-robin, in batches of ${count(r.startScore[0]!.calls)} calls: ` +
    'the whole `scoreNodesToStart` call (checks, kernel, the returned `{node, score}` objects and the garbage collection they cause), ' +
    "`scoreNodesToStartInto` (the same checks and kernel, the scores copied into the caller's buffer), the kernel alone (scores into a buffer, as in C), " +
    'the kernel it replaced (`writeCriteria` per node, then `scoreFlatInPlace`; scores into a buffer, its scores checked to be the same bits) ' +
    'and the same incremental kernel in C (`bench/native/start-score.c`) on the same inputs';
  const ratios =
    'The ratios are of CPU time, which the other work on the machine inflates far less than wall-clock time.';
  const ratio = (a: number, b: number | undefined) => (b === undefined ? '—' : `${sig(a / b)}×`);
  const rows = table(
    [
      'workload',
      'nodes × guests',
      'call µs / start score',
      'into a buffer µs',
      'kernel alone µs',
      'previous kernel µs',
      'previous ÷ kernel',
      'C µs',
      'call ÷ C',
      'into ÷ C',
      'kernel ÷ C',
    ],
    r.startScore.map((s) => [
      s.workload,
      `${s.nodes} × ${count(s.guests)}`,
      wallCpu(s.scoreUs, s.scoreCpuUs),
      wallCpu(s.intoUs, s.intoCpuUs),
      wallCpu(s.kernelUs, s.kernelCpuUs),
      wallCpu(s.previousKernelUs, s.previousKernelCpuUs),
      ratio(s.previousKernelCpuUs.median, s.kernelCpuUs.median),
      s.nativeScoreUs === null || s.nativeScoreCpuUs === null ? '—' : wallCpu(s.nativeScoreUs, s.nativeScoreCpuUs),
      ratio(s.scoreCpuUs.median, s.nativeScoreCpuUs?.median),
      ratio(s.intoCpuUs.median, s.nativeScoreCpuUs?.median),
      ratio(s.kernelCpuUs.median, s.nativeScoreCpuUs?.median),
    ]),
  );
  const how =
    r.nativeCompiler === null
      ? `${intro}: the C side was not run (no working C compiler, \`$CC\` or \`cc\`, on the machine that ran the bench). ${ratios}`
      : `${intro}, compiled by ${r.nativeCompiler}; ${r.repetitions.kernels} interleaved runs of each (one C process per run, which warms up on one untimed batch first), and every C run's placement decisions and a hash of every score's bits are checked to be the TypeScript kernel's. ${ratios}`;
  return [how, '', rows, ''];
}

function renderSystem(r: BenchResult): string {
  const rows = table(
    ['workload', 'nodes × services', 'first manager round ms', 'later rounds ms', 'reference first round ms ¹'],
    r.system.map((s) => [
      `${s.workload} (${s.mode}, ${s.roundModel} rounds)`,
      `${s.nodes} × ${count(s.services)}`,
      wallCpu(s.firstRoundMs, s.firstRoundCpuMs),
      `${wallCpu(s.laterRoundMs, s.laterRoundCpuMs)}; slowest ${sig(s.laterRoundMaxMs)}`,
      s.publishedFirstRoundMs === null ? '—' : count(s.publishedFirstRoundMs),
    ]),
  );
  return [
    machineLine(r),
    '',
    `Whole system: the simulator (\`@poise/sim\`) running the HA core on the workload, warm (one throw-away run first), ${r.repetitions.system} runs; a manager round is one \`Manager.manage\` call. seed-003: 3 nodes, static, rebalance on start, every guest (2 cores, 2 GiB) configured to start at once. dynamic-rebalance: mixed node sizes, guests placed skewed, measured usage, auto-rebalance.`,
    '',
    rows,
    '',
    "¹ The reference's first `manage` call from seed 003 (patches #8 + qm #1): figures from another machine, for scale only.",
    '',
    ...renderProfiles(r),
  ].join('\n');
}

function renderProfiles(r: BenchResult): string[] {
  const out: string[] = [];
  for (const p of r.profiles) {
    out.push(`Top costs of ${p.workload} (${sig(p.totalMs)} ms profiled; self time):`, '');
    out.push(
      table(
        ['function', 'file', 'self %'],
        p.top.map((e) => [`\`${e.fn}\``, e.file, fixed(e.selfPercent, 1)]),
      ),
    );
    out.push('');
  }
  return out;
}

function renderSimulator(r: BenchResult): string {
  const rows = table(
    ['workload', 'nodes × services', 'case run: rounds', 'load + run ms', 'simulated hour ms', 'heap / service'],
    r.system.map((s) => [
      `${s.workload} (${s.mode}, ${s.roundModel} rounds)`,
      `${s.nodes} × ${count(s.services)}`,
      String(s.rounds),
      wallCpu(s.runMs, s.runCpuMs),
      wallCpu(s.hourMs, s.hourCpuMs),
      `${fixed(s.bytesPerService / 1024, 2)} KB`,
    ]),
  );
  return [
    machineLine(r),
    '',
    `In process (\`loadCase\` + \`Simulation\`; a \`poise-sim run\` adds about half a second of process start), warm (one throw-away run first): the case run ${r.repetitions.system} times, the hour ${r.repetitions.hour} times.`,
    '',
    rows,
  ].join('\n');
}

/** Where each generated region lives (paths from the repository root). */
export const README_REGIONS = [
  { file: 'packages/usage/README.md', region: 'usage-kernels' },
  { file: 'packages/usage/README.md', region: 'system' },
  { file: 'packages/sim/README.md', region: 'simulator' },
] as const;

export type Region = (typeof README_REGIONS)[number]['region'];

export function renderRegion(region: Region, result: BenchResult): string {
  switch (region) {
    case 'usage-kernels':
      return renderKernels(result);
    case 'system':
      return renderSystem(result);
    case 'simulator':
      return renderSimulator(result);
  }
}

export function startMarker(region: string): string {
  return `<!-- bench:${region} -->`;
}

export function endMarker(region: string): string {
  return `<!-- /bench:${region} -->`;
}

/** The text of a README region (between its markers), or an error naming what is missing. */
export function readRegion(text: string, region: string, file: string): string {
  const start = startMarker(region);
  const end = endMarker(region);
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a === -1 || b === -1) throw new Error(`${file}: markers '${start}' and '${end}' not found`);
  if (text.indexOf(start, a + 1) !== -1 || text.indexOf(end, b + 1) !== -1)
    throw new Error(`${file}: region '${region}' is marked more than once`);
  if (b < a) throw new Error(`${file}: '${end}' comes before '${start}'`);
  return text.slice(a + start.length, b);
}

/** `text` with the region replaced by `content` (surrounded by blank lines). */
export function writeRegion(text: string, region: string, file: string, content: string): string {
  readRegion(text, region, file);
  const start = startMarker(region);
  const a = text.indexOf(start) + start.length;
  const b = text.indexOf(endMarker(region));
  return `${text.slice(0, a)}\n${content}\n${text.slice(b)}`;
}
