/**
 * One start score (`ClusterUsage.scoreNodesToStart`) against the same kernel in C
 * (`./native/start-score.c`, see `./native.ts`), on the same inputs: per workload, the C kernel
 * makes the same placement decisions as the TypeScript kernel with a hash of every score's bits
 * equal to the TypeScript kernel's (checked on every run), then both time batches of scores on
 * nodes carrying the workload's guests, interleaved (TypeScript batch, C process, ...).
 */
import { mulberry32 as prng } from '../tools/test-support/prng';
import { ClusterUsage, type NodeStats, type ResourceStats } from '../packages/usage/src/index';
import type { ClusterView } from '../packages/usage/src/fast';
import { Scratch } from '../packages/usage/src/scratch';
import {
  START_CPU,
  START_MAXCPU,
  START_MAXMEM,
  START_MEM,
  START_STRIDE,
  StartScratch,
  scoreNodesToStartKernel,
} from '../packages/usage/src/start-kernel';
import { previousStartKernel } from '../packages/usage/src/testing/support';
import { since, stamp } from './clock';
import { SEED3_GUEST, SEED3_NODE, SEED3_NODES } from './kernels';
import { type NativeStartKernel, ScoreHash, nativeStartKernel, runNativeStart } from './native';
import { type StartScoreRow, summary } from './schema';

const GIB = 1024 ** 3;

/**
 * Start scores per timed batch: enough that the garbage collections the returned objects cause
 * (a young-generation collection every few thousand calls) are spread over the batch as in a
 * long run, rather than falling into a short batch or not.
 */
const SCORE_BATCH_CALLS = 30_000;

/** Nodes (in byte order of their names), the guest every decision places, how many guests. */
export interface StartScoreWorkload {
  readonly workload: string;
  readonly names: readonly string[];
  readonly nodes: readonly NodeStats[];
  readonly guest: ResourceStats;
  readonly guests: number;
}

/** Seed 003: 3 identical nodes, guests of 2 cores and 2 GiB (exact sums). */
export function seed3Workload(guests: number): StartScoreWorkload {
  return {
    workload: 'seed-003',
    names: SEED3_NODES,
    nodes: SEED3_NODES.map(() => SEED3_NODE),
    guest: SEED3_GUEST,
    guests,
  };
}

/**
 * 64 nodes of mixed sizes (seeded), guests of 0.7 cores and 1.5 GiB: cpu sums that are not exact,
 * so the fold order shows in the last bits.
 */
export function mixedWorkload(nodeCount: number, guests: number): StartScoreWorkload {
  const rand = prng(64);
  const names = Array.from({ length: nodeCount }, (_, i) => `node${String(i + 1).padStart(2, '0')}`);
  const nodes = names.map(() => ({
    cpu: 0,
    maxcpu: [16, 24, 32, 48, 64][Math.floor(rand() * 5)]!,
    mem: 0,
    maxmem: [64, 96, 128, 256][Math.floor(rand() * 4)]! * GIB,
  }));
  return {
    workload: 'mixed sizes',
    names,
    nodes,
    guest: { cpu: 0.7, maxcpu: 0.7, mem: 1.5 * GIB, maxmem: 1.5 * GIB },
    guests,
  };
}

function usageOf(w: StartScoreWorkload): ClusterUsage {
  const usage = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
  w.names.forEach((name, i) => usage.addNode(name, w.nodes[i]!));
  return usage;
}

/** The workload's placements (highest score, the first node on ties), with every score hashed as the C kernel hashes its own. */
function decisions(w: StartScoreWorkload): { placement: number[]; hash: string } {
  const usage = usageOf(w);
  const index = new Map(w.names.map((name, i) => [name, i]));
  const hash = new ScoreHash();
  const placement: number[] = [];
  for (let k = 0; k < w.guests; k++) {
    const scores = usage.scoreNodesToStart(w.guest);
    let top = scores[0]!;
    for (const s of scores) {
      hash.add(s.score);
      if (s.score > top.score) top = s;
    }
    usage.addResource(`vm:${100 + k}`, { stats: w.guest, state: 'started', placement: { current: top.node } });
    placement.push(index.get(top.node)!);
  }
  return { placement, hash: hash.hex() };
}

interface PerScore {
  readonly wall: number;
  readonly cpu: number;
}

/** The workload's nodes carrying its guests placed round-robin. */
function loadedUsage(w: StartScoreWorkload): ClusterUsage {
  const usage = usageOf(w);
  const n = w.names.length;
  for (let k = 0; k < w.guests; k++)
    usage.addResource(`vm:${100 + k}`, { stats: w.guest, state: 'started', placement: { current: w.names[k % n]! } });
  return usage;
}

/** µs per `scoreNodesToStart` call (wall clock, process CPU) on the nodes carrying the guests placed round-robin. */
function scoreBatch(w: StartScoreWorkload): PerScore {
  const usage = loadedUsage(w);
  const n = w.names.length;
  let sink = 0;
  const t0 = stamp();
  for (let k = 0; k < SCORE_BATCH_CALLS; k++) sink += usage.scoreNodesToStart(w.guest).length;
  const t = since(t0);
  if (sink !== n * SCORE_BATCH_CALLS) throw new Error('start score: scores missing');
  return { wall: (t.wall * 1000) / SCORE_BATCH_CALLS, cpu: (t.cpu * 1000) / SCORE_BATCH_CALLS };
}

/** The same with `scoreNodesToStartInto` (scores into the caller's buffer), after checking it gives the same bits. */
function intoBatch(w: StartScoreWorkload): PerScore {
  const usage = loadedUsage(w);
  const n = w.names.length;
  const out = new Float64Array(n);
  usage.scoreNodesToStartInto(w.guest, out);
  if (usage.scoreNodesToStart(w.guest).some((s, i) => !Object.is(s.score, out[i])))
    throw new Error(`start score, ${w.workload}: scoreNodesToStartInto differs from scoreNodesToStart`);
  let sink = 0;
  const t0 = stamp();
  for (let k = 0; k < SCORE_BATCH_CALLS; k++) sink += usage.scoreNodesToStartInto(w.guest, out);
  const t = since(t0);
  if (sink !== n * SCORE_BATCH_CALLS) throw new Error('start score: scores missing');
  return { wall: (t.wall * 1000) / SCORE_BATCH_CALLS, cpu: (t.cpu * 1000) / SCORE_BATCH_CALLS };
}

/**
 * The kernel of `scoreNodesToStart` alone (the same work as the C kernel: scores into a buffer),
 * on node records holding the same sums as {@link loadedUsage} (`add_started_resource` guest by
 * guest), after checking that it gives that usage's scores.
 */
function kernelScratch(w: StartScoreWorkload): StartScratch {
  const n = w.names.length;
  const scratch = new StartScratch();
  const records = scratch.records(n);
  w.nodes.forEach((node, i) => {
    records[i * START_STRIDE + START_CPU] = node.cpu;
    records[i * START_STRIDE + START_MAXCPU] = node.maxcpu;
    records[i * START_STRIDE + START_MEM] = node.mem;
    records[i * START_STRIDE + START_MAXMEM] = node.maxmem;
  });
  for (let k = 0; k < w.guests; k++) {
    const i = k % n;
    records[i * START_STRIDE + START_CPU]! += w.guest.maxcpu === 0 ? w.nodes[i]!.maxcpu : w.guest.maxcpu;
    records[i * START_STRIDE + START_MEM]! += w.guest.maxmem;
  }
  const expected = loadedUsage(w).scoreNodesToStart(w.guest);
  const scores = scoreNodesToStartKernel(n, w.guest.maxcpu, w.guest.maxmem, scratch);
  if (expected.some((s, i) => !Object.is(s.score, scores[i])))
    throw new Error(`start score, ${w.workload}: the kernel alone differs from scoreNodesToStart`);
  return scratch;
}

function kernelBatch(w: StartScoreWorkload, scratch: StartScratch): PerScore {
  const n = w.names.length;
  let sink = 0;
  const t0 = stamp();
  for (let k = 0; k < SCORE_BATCH_CALLS; k++)
    sink += scoreNodesToStartKernel(n, w.guest.maxcpu, w.guest.maxmem, scratch)[0]!;
  const t = since(t0);
  if (!(sink >= 0)) throw new Error('start score: kernel scores missing');
  return { wall: (t.wall * 1000) / SCORE_BATCH_CALLS, cpu: (t.cpu * 1000) / SCORE_BATCH_CALLS };
}

/**
 * The start kernel this one replaced (`previousStartKernel`: `writeCriteria` per node, then
 * `scoreFlatInPlace`, scores into a buffer) on a view of the same node records, after checking
 * that it gives the same scores bit for bit.
 */
function previousView(w: StartScoreWorkload, scratch: StartScratch): ClusterView {
  const n = w.names.length;
  const records = scratch.nodes;
  const column = (at: number) => Float64Array.from({ length: n }, (_, i) => records[i * START_STRIDE + at]!);
  const view = {
    n,
    names: [...w.names],
    cpu: column(START_CPU),
    maxcpu: column(START_MAXCPU),
    mem: column(START_MEM),
    maxmem: column(START_MAXMEM),
  };
  const scores = previousStartKernel(view, w.guest.maxcpu, w.guest.maxmem, new Scratch());
  const fused = scoreNodesToStartKernel(n, w.guest.maxcpu, w.guest.maxmem, scratch);
  for (let i = 0; i < n; i++) {
    if (!Object.is(scores[i], fused[i]))
      throw new Error(`start score, ${w.workload}: the previous kernel differs from the kernel at node ${i}`);
  }
  return view;
}

function previousBatch(w: StartScoreWorkload, view: ClusterView, scratch: Scratch): PerScore {
  let sink = 0;
  const t0 = stamp();
  for (let k = 0; k < SCORE_BATCH_CALLS; k++)
    sink += previousStartKernel(view, w.guest.maxcpu, w.guest.maxmem, scratch)[0]!;
  const t = since(t0);
  if (!(sink >= 0)) throw new Error('start score: previous kernel scores missing');
  return { wall: (t.wall * 1000) / SCORE_BATCH_CALLS, cpu: (t.cpu * 1000) / SCORE_BATCH_CALLS };
}

/** One run of the C kernel, its decisions and score hash checked against the TypeScript kernel's. */
function nativeBatch(
  kernel: NativeStartKernel,
  w: StartScoreWorkload,
  expected: { placement: readonly number[]; hash: string },
): PerScore {
  const run = runNativeStart(kernel, {
    nodes: w.nodes,
    guest: w.guest,
    decisions: w.guests,
    guests: w.guests,
    calls: SCORE_BATCH_CALLS,
    reps: 1,
  });
  const what = `start score, ${w.workload} (${w.names.length} nodes)`;
  if (run.decisions.length !== w.guests)
    throw new Error(`${what}: the C kernel made ${run.decisions.length} decisions, not ${w.guests}`);
  const differs = run.decisions.findIndex((node, k) => node !== expected.placement[k]);
  if (differs !== -1)
    throw new Error(`${what}: decision ${differs} of the C kernel differs from the TypeScript kernel's`);
  if (run.scoreHash !== expected.hash)
    throw new Error(
      `${what}: the C kernel's scores differ from the TypeScript kernel's (hash ${run.scoreHash}, not ${expected.hash})`,
    );
  return { wall: run.scoreUs[0]!, cpu: run.scoreCpuUs[0]! };
}

/**
 * `reps` interleaved timed batches of each side: the call, the call into a buffer, its kernel alone, the kernel it
 * replaced, the C kernel (the TypeScript sides after one throw-away batch each; the C side warms
 * up in its own process).
 */
export function startScoring(w: StartScoreWorkload, reps: number): StartScoreRow {
  const native = nativeStartKernel();
  const expected = decisions(w);
  const scratch = kernelScratch(w);
  const view = previousView(w, scratch);
  const previousScratch = new Scratch();
  scoreBatch(w);
  intoBatch(w);
  kernelBatch(w, scratch);
  previousBatch(w, view, previousScratch);
  const ts: PerScore[] = [];
  const into: PerScore[] = [];
  const kernel: PerScore[] = [];
  const previous: PerScore[] = [];
  const c: PerScore[] = [];
  for (let rep = 0; rep < reps; rep++) {
    ts.push(scoreBatch(w));
    into.push(intoBatch(w));
    kernel.push(kernelBatch(w, scratch));
    previous.push(previousBatch(w, view, previousScratch));
    if (native !== null) c.push(nativeBatch(native, w, expected));
  }
  return {
    workload: w.workload,
    nodes: w.names.length,
    guests: w.guests,
    calls: SCORE_BATCH_CALLS,
    scoreUs: summary(ts.map((t) => t.wall)),
    scoreCpuUs: summary(ts.map((t) => t.cpu)),
    intoUs: summary(into.map((t) => t.wall)),
    intoCpuUs: summary(into.map((t) => t.cpu)),
    kernelUs: summary(kernel.map((t) => t.wall)),
    kernelCpuUs: summary(kernel.map((t) => t.cpu)),
    previousKernelUs: summary(previous.map((t) => t.wall)),
    previousKernelCpuUs: summary(previous.map((t) => t.cpu)),
    nativeScoreUs: native === null ? null : summary(c.map((t) => t.wall)),
    nativeScoreCpuUs: native === null ? null : summary(c.map((t) => t.cpu)),
  };
}
