import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LabError } from './errors';
import { validateTrace, type RunTrace } from './trace';
import type { Variant } from './variants';
import { compareNames } from '@poise/usage';

/** A scenario: a case directory and the name it is reported under. */
export interface ScenarioRef {
  name: string;
  dir: string;
  /**
   * A generated scenario: the case directory of each seed (seed as a decimal string → dir);
   * a run with a seed listed here runs that directory instead of `dir`.
   */
  seedDirs?: Record<string, string>;
  /**
   * Relative cost of one run (e.g. simulated seconds × (nodes + guests)); the pool starts the
   * costliest runs first so that no worker is left with a long run at the end. Default 1.
   */
  cost?: number;
  /** What the scenario is, for the report (a parameter file's leading comment, a case's README). */
  description?: string;
}

/** The case directory of a scenario's run with `seed` (its own for a generated scenario). */
export function scenarioDir(scenario: ScenarioRef, seed: number): string {
  return scenario.seedDirs?.[String(seed)] ?? scenario.dir;
}

/**
 * Out-of-tree policy plug-ins every run loads (`poise-sim compare --plugin`): the modules as
 * given, resolved from `from` (the directory the command ran in). Plain data: each worker loads
 * them itself (a plug-in's functions cannot cross a worker boundary).
 */
export interface PluginModules {
  readonly modules: readonly string[];
  readonly from: string;
}

/** What every run of a comparison shares beside its scenario, variant and seed. */
export interface RunOptions {
  readonly plugins?: PluginModules | undefined;
}

/**
 * The unit of work: one simulation of `scenario` under `variant` with `seed`, as a trace.
 * Arguments and result must be structured-cloneable (they cross a worker boundary). A module
 * given to {@link runAll} exports a function of this type named `runOne` (the contract of an
 * adapter module outside this package: nothing here imports the type).
 *
 * @public
 */
export type RunOne = (
  scenario: ScenarioRef,
  variant: Variant,
  seed: number,
  options?: RunOptions,
) => RunTrace | Promise<RunTrace>;

/** One run to do; `index` is its position in {@link planRuns}' list (informational). */
export interface RunJob {
  index: number;
  scenario: ScenarioRef;
  variant: Variant;
  seed: number;
}

/**
 * Every scenario × variant × seed, ordered by scenario name (byte order), then the variants'
 * order (as given: the first is the baseline), then seed. Scenario names must be unique.
 */
export function planRuns(
  scenarios: readonly ScenarioRef[],
  variants: readonly Variant[],
  seeds: readonly number[],
): RunJob[] {
  const seen = new Map<string, string>();
  for (const s of scenarios) {
    const other = seen.get(s.name);
    if (other !== undefined)
      throw new LabError('bad-scenario', `two scenarios are named '${s.name}' ('${other}' and '${s.dir}')`);
    seen.set(s.name, s.dir);
  }
  const names = new Set<string>();
  for (const v of variants) {
    if (names.has(v.name)) throw new LabError('bad-variants', `two variants are named '${v.name}'`);
    names.add(v.name);
  }
  const sortedSeeds = [...new Set(seeds)].sort((a, b) => a - b);
  const jobs: RunJob[] = [];
  for (const scenario of [...scenarios].sort((a, b) => compareNames(a.name, b.name))) {
    for (const variant of variants) {
      for (const seed of sortedSeeds) jobs.push({ index: jobs.length, scenario, variant, seed });
    }
  }
  return jobs;
}

/** Worker threads to use by default: one per available core. */
export function defaultJobs(): number {
  return Math.max(1, availableParallelism());
}

export interface RunAllOptions<T> {
  /** Module exporting `runOne` ({@link RunOne}): a path or a `file:` URL. A `.ts` module runs through tsx. */
  module: string | URL;
  /** Worker threads (≥ 1); default {@link defaultJobs}. Never more than there are runs. */
  jobs?: number;
  /** Called after each finished run (in completion order) with the count done and the total. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Called once all runs are done, with each worker's share: runs it did and the share of its
   * life its event loop was busy (1 = it never waited for work; start-up counts as busy).
   */
  onWorkers?: (workers: WorkerStats[]) => void;
  /**
   * Turns a finished, validated trace into what the caller keeps (e.g. its summary), so that
   * whole traces need not be held. Called in completion order; the result array is in job order.
   */
  consume: (job: RunJob, trace: RunTrace) => T;
  /** Passed to every run (see {@link RunOptions}). */
  runOptions?: RunOptions;
}

/** What one worker thread did in {@link runAll}. */
export interface WorkerStats {
  runs: number;
  /** Busy share of the worker's life (event-loop utilisation, 0..1). */
  utilization: number;
}

// The worker: imports the module once, then answers one job per message. CommonJS (eval).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ready = (workerData.tsxApi ? import(workerData.tsxApi).then((t) => t.register()) : Promise.resolve()).then(() => import(workerData.module)).then((m) => {
  if (typeof m.runOne !== 'function') throw new Error("module '" + workerData.module + "' exports no function 'runOne'");
  return m.runOne;
});
parentPort.on('message', async (job) => {
  try {
    const runOne = await ready;
    const trace = await runOne(job.scenario, job.variant, job.seed, job.options);
    parentPort.postMessage({ index: job.index, trace });
  } catch (err) {
    parentPort.postMessage({ index: job.index, error: err && err.message ? String(err.message) : String(err), stack: err && err.stack ? String(err.stack) : undefined });
  }
});
`;

function moduleUrl(module: string | URL): string {
  if (module instanceof URL) return module.href;
  if (/^file:/.test(module)) return module;
  return pathToFileURL(isAbsolute(module) ? module : resolve(module)).href;
}

/**
 * How a worker gets to import `url`: for a `.ts` module, or when the workspace's source condition
 * is on (then `@poise/*` imports resolve to TypeScript sources), tsx's ESM API, registered in the
 * worker before the import (the `--import` of a tsx parent process is not applied to an eval'd
 * worker), and the source condition.
 */
function workerSetup(url: string): { execArgv: string[]; tsxApi?: string } {
  const inherited = process.execArgv;
  const sourceCondition = inherited.some((a) => a.includes('poise-source'));
  if (!/\.[mc]?ts$/.test(url) && !sourceCondition) return { execArgv: inherited };
  const require = createRequire(import.meta.url);
  const pkgFile = require.resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as {
    exports: Record<string, { import?: { default?: string } }>;
  };
  const api = pkg.exports['./esm/api']?.import?.default;
  if (!api) throw new LabError('bad-argument', `cannot find tsx's ESM API to run '${url}'`);
  return {
    execArgv: sourceCondition ? inherited : [...inherited, '--conditions=poise-source'],
    tsxApi: pathToFileURL(join(dirname(pkgFile), api)).href,
  };
}

function describeJob(job: RunJob): string {
  return `scenario '${job.scenario.name}' variant '${job.variant.name}' seed ${job.seed}`;
}

/**
 * Runs every job on a pool of worker threads and returns `consume`'s results in job order,
 * whatever order the runs finish in. The first failing run stops the pool and rejects with a
 * {@link LabError} `run-failed` naming the run. A trace that does not match its job or the
 * trace format is a failure too.
 */
export async function runAll<T>(jobs: readonly RunJob[], options: RunAllOptions<T>): Promise<T[]> {
  const total = jobs.length;
  const results = new Array<T>(total);
  if (total === 0) return results;
  const requested = options.jobs ?? defaultJobs();
  if (!Number.isInteger(requested) || requested < 1)
    throw new LabError('bad-argument', `jobs: expected an integer ≥ 1, got ${requested}`);
  const url = moduleUrl(options.module);
  const setup = workerSetup(url);
  const poolSize = Math.min(requested, total);

  return new Promise<T[]>((resolvePromise, reject) => {
    const workers: Worker[] = [];
    const inFlight = new Map<Worker, number>();
    const stats = new Map<Worker, WorkerStats>();
    // a worker's share, read before it is terminated
    const retire = (w: Worker) => {
      const st = stats.get(w);
      if (st && st.utilization < 0) st.utilization = w.performance.eventLoopUtilization().utilization;
      void w.terminate();
    };
    // costliest first (longest-processing-time order), ties in job order: the last runs to
    // finish are short ones, so the workers end together
    const order = jobs
      .map((_, i) => i)
      .sort((a, b) => (jobs[b]!.scenario.cost ?? 1) - (jobs[a]!.scenario.cost ?? 1) || a - b);
    let next = 0;
    let done = 0;
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      for (const w of workers) void w.terminate();
      reject(err);
    };
    const dispatch = (w: Worker) => {
      if (settled) return;
      if (next >= total) {
        inFlight.delete(w);
        retire(w);
        return;
      }
      const i = order[next++]!;
      const job = jobs[i]!;
      inFlight.set(w, i);
      w.postMessage({
        index: i,
        scenario: job.scenario,
        variant: { name: job.variant.name, crs: { ...job.variant.crs } },
        seed: job.seed,
        ...(options.runOptions ? { options: options.runOptions } : {}),
      });
    };
    for (let k = 0; k < poolSize; k++) {
      const w = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { module: url, tsxApi: setup.tsxApi },
        execArgv: setup.execArgv,
      });
      workers.push(w);
      stats.set(w, { runs: 0, utilization: -1 });
      w.on('message', (msg: { index: number; trace?: unknown; error?: string; stack?: string }) => {
        if (settled) return;
        const job = jobs[msg.index];
        if (!job || inFlight.get(w) !== msg.index)
          return fail(new LabError('run-failed', `a worker answered a run it was not given (${msg.index})`));
        if (msg.error !== undefined) {
          return fail(
            new LabError('run-failed', `run of ${describeJob(job)} failed: ${msg.error}`, { cause: msg.stack }),
          );
        }
        stats.get(w)!.runs++;
        // the worker gets its next run before this result is checked and kept (main-thread work)
        dispatch(w);
        try {
          const trace = validateTrace(msg.trace, `run of ${describeJob(job)}`);
          if (trace.scenario !== job.scenario.name || trace.variant !== job.variant.name || trace.seed !== job.seed) {
            throw new LabError(
              'run-failed',
              `run of ${describeJob(job)} returned the trace of scenario '${trace.scenario}' variant '${trace.variant}' seed ${trace.seed}`,
            );
          }
          results[msg.index] = options.consume(job, trace);
        } catch (err) {
          return fail(
            err instanceof LabError
              ? err
              : new LabError('run-failed', `run of ${describeJob(job)}: ${(err as Error).message}`, { cause: err }),
          );
        }
        done++;
        options.onProgress?.(done, total);
        if (done === total) {
          settled = true;
          for (const x of workers) retire(x);
          options.onWorkers?.(workers.map((x) => stats.get(x)!));
          resolvePromise(results);
        }
      });
      w.on('error', (err) => fail(new LabError('run-failed', `a worker died: ${err.message}`, { cause: err })));
      w.on('exit', (code) => {
        const i = inFlight.get(w);
        if (!settled && i !== undefined)
          fail(new LabError('run-failed', `the worker running ${describeJob(jobs[i]!)} exited (code ${code})`));
      });
      dispatch(w);
    }
  });
}
