/**
 * Kernel benchmarks of `@poise/usage`: each fast path against its like-for-like baseline
 * (`./baselines`), with the same warm-up and the same number of timed repetitions, interleaved
 * (fast, baseline, fast, baseline, ...) so that both see the same machine noise. Every timed
 * result of both sides is checked to be the same decision before anything is reported.
 */
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { mulberry32 as prng } from '../tools/test-support/prng';
import { ClusterUsage, type MigrationCandidate, type ResourceStats, compareNames } from '../packages/usage/src/index';
import { LeanMigrationBaseline, LeanStartBaseline, bestStartNode } from './baselines';
import { type Stamp, since, stamp } from './clock';
import { type StartRow, type RebalanceRow, type UsageMemoryRow, PUBLISHED_START_SCORE_US, summary } from './schema';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

// ---- start placement (seed 003) ----

export const SEED3_NODES = ['node1', 'node2', 'node3'];
export const SEED3_NODE = { cpu: 0, maxcpu: 32, mem: 0, maxmem: 256 * GIB };
/** Homogeneous guests (the seed's worst case): 2 cores, 2 GiB, static stats. */
export const SEED3_GUEST: ResourceStats = { cpu: 2, maxcpu: 2, mem: 2 * GIB, maxmem: 2 * GIB };

/** Pre-made sids, so that neither side pays for building strings inside the timed loop. */
function sids(count: number): string[] {
  return Array.from({ length: count }, (_, k) => `vm:${100 + k}`);
}

/** `count` decisions (score all nodes, pick the best, add the guest there) with {@link ClusterUsage}. */
function startFast(names: readonly string[], placement: Int32Array): Stamp {
  const t0 = stamp();
  const usage = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
  for (const n of SEED3_NODES) usage.addNode(n, SEED3_NODE);
  const nodeIndex = new Map(SEED3_NODES.map((n, i) => [n, i]));
  for (let k = 0; k < names.length; k++) {
    const scores = usage.scoreNodesToStart(SEED3_GUEST);
    // the HA core's order: score descending, then name (scores come in name order)
    let top = scores[0]!;
    for (let i = 1; i < scores.length; i++) if (scores[i]!.score > top.score) top = scores[i]!;
    usage.addResource(names[k]!, { stats: SEED3_GUEST, state: 'started', placement: { current: top.node } });
    placement[k] = nodeIndex.get(top.node)!;
  }
  return since(t0);
}

/** The same decisions with the lean rebuild per decision. */
function startBaseline(names: readonly string[], placement: Int32Array): Stamp {
  const t0 = stamp();
  const baseline = new LeanStartBaseline(
    'static',
    SEED3_NODES.map((name) => ({ name, stats: SEED3_NODE })),
  );
  const nodeIndex = new Map(SEED3_NODES.map((n, i) => [n, i]));
  for (let k = 0; k < names.length; k++) {
    const node = bestStartNode(baseline.names, baseline.scoreStart(SEED3_GUEST));
    baseline.add(SEED3_GUEST, 'started', node);
    placement[k] = nodeIndex.get(node)!;
  }
  return since(t0);
}

export function startPlacement(count: number, reps: number): StartRow {
  const names = sids(Math.max(count, 3000));
  const fastPlacement = new Int32Array(names.length);
  const basePlacement = new Int32Array(names.length);
  // the same warm-up for both: one throw-away run of max(count, 3,000) decisions each
  startFast(names, fastPlacement);
  startBaseline(names, basePlacement);
  const timedNames = names.slice(0, count);
  const fast: Stamp[] = [];
  const base: Stamp[] = [];
  for (let rep = 0; rep < reps; rep++) {
    // interleaved; no forced gc() in between (a full collection made the next run slower)
    fast.push(startFast(timedNames, fastPlacement));
    base.push(startBaseline(timedNames, basePlacement));
    for (let k = 0; k < count; k++) {
      if (fastPlacement[k] !== basePlacement[k])
        throw new Error(`start placement: decision ${k} of ${count} differs from the baseline`);
    }
  }
  const fastMs = summary(fast.map((t) => t.wall));
  const fastCpuMs = summary(fast.map((t) => t.cpu));
  const baselineMs = summary(base.map((t) => t.wall));
  const baselineCpuMs = summary(base.map((t) => t.cpu));
  return {
    resources: count,
    nodes: SEED3_NODES.length,
    fastMs,
    fastCpuMs,
    fastPerDecisionUs: (fastMs.median * 1000) / count,
    baselineMs,
    baselineCpuMs,
    baselinePerDecisionUs: (baselineMs.median * 1000) / count,
    speedup: baselineMs.median / fastMs.median,
    publishedScoreUs: PUBLISHED_START_SCORE_US[count] ?? null,
  };
}

// ---- auto-rebalance scoring ----

interface RebalanceWorkload {
  usage: ClusterUsage;
  baseline: LeanMigrationBaseline;
  candidates: MigrationCandidate[];
}

/** A dynamic cluster with skewed placement (so that balancing has work to do), every guest a candidate. */
export function rebalanceWorkloadForProfile(resourceCount: number, nodeCount: number): RebalanceWorkload {
  return rebalanceWorkload(resourceCount, nodeCount);
}

function rebalanceWorkload(resourceCount: number, nodeCount: number): RebalanceWorkload {
  const rand = prng(42);
  const names = Array.from({ length: nodeCount }, (_, i) => `node${i + 1}`);
  const caps = names.map(() => ({
    maxcpu: [16, 24, 32, 48, 64][Math.floor(rand() * 5)]!,
    maxmem: [64, 96, 128, 256][Math.floor(rand() * 4)]! * GIB,
  }));
  const guests: { sid: string; node: number; stats: ResourceStats }[] = [];
  const used = names.map(() => ({ cpu: 0, mem: 0 }));
  for (let k = 0; k < resourceCount; k++) {
    const node = Math.floor(rand() ** 1.5 * nodeCount);
    const maxcpu = [1, 2, 4, 8][Math.floor(rand() * 4)]!;
    const maxmem = [1, 2, 4, 8, 16][Math.floor(rand() * 5)]! * GIB;
    const stats = {
      cpu: Math.round(rand() * maxcpu * 1000) / 1000,
      maxcpu,
      mem: Math.floor((rand() * maxmem) / MIB) * MIB,
      maxmem,
    };
    used[node]!.cpu += stats.cpu;
    used[node]!.mem += stats.mem;
    guests.push({ sid: `vm:${100 + k}`, node, stats });
  }
  const nodes = names.map((name, i) => ({
    name,
    stats: { cpu: used[i]!.cpu, maxcpu: caps[i]!.maxcpu, mem: used[i]!.mem, maxmem: caps[i]!.maxmem },
  }));
  const usage = new ClusterUsage({ aggregation: 'dynamic', metric: 'raw' });
  for (const n of nodes) usage.addNode(n.name, n.stats);
  for (const g of guests)
    usage.addResource(g.sid, { stats: g.stats, state: 'started', placement: { current: names[g.node]! } });
  const baseline = new LeanMigrationBaseline(
    'dynamic',
    nodes,
    guests.map((g) => ({ sid: g.sid, stats: g.stats, current: names[g.node]! })),
    'raw',
  );
  const sorted = [...guests].sort((a, b) => compareNames(a.sid, b.sid));
  const candidates = sorted.map((g) => ({
    leader: g.sid,
    resources: [g.sid],
    targets: names.filter((_, i) => i !== g.node).sort(),
  }));
  return { usage, baseline, candidates };
}

export function rebalanceScoring(resourceCount: number, nodeCount: number, reps: number): RebalanceRow[] {
  const { usage, baseline, candidates } = rebalanceWorkload(resourceCount, nodeCount);
  const rows: RebalanceRow[] = [];
  for (const method of ['bruteforce', 'topsis'] as const) {
    // the same warm-up for both: two throw-away calls each (the JIT needs two)
    for (let warm = 0; warm < 2; warm++) {
      usage.bestBalancingMigrations(candidates, method, 1);
      baseline.best(candidates, method, 1);
    }
    const fast: Stamp[] = [];
    const base: Stamp[] = [];
    for (let rep = 0; rep < reps; rep++) {
      let t0 = stamp();
      const a = usage.bestBalancingMigrations(candidates, method, 1);
      fast.push(since(t0));
      t0 = stamp();
      const b = baseline.best(candidates, method, 1);
      base.push(since(t0));
      if (JSON.stringify(a) !== JSON.stringify(b))
        throw new Error(`${method}: the fast path and the baseline chose differently`);
    }
    if (process.env.BENCH_DEBUG)
      console.error(
        method,
        fast.map((t) => t.wall.toFixed(1)).join(' '),
        '|',
        base.map((t) => t.wall.toFixed(1)).join(' '),
      );
    const fastMs = summary(fast.map((t) => t.wall));
    const baselineMs = summary(base.map((t) => t.wall));
    rows.push({
      resources: resourceCount,
      nodes: nodeCount,
      method,
      fastMs,
      fastCpuMs: summary(fast.map((t) => t.cpu)),
      baselineMs,
      baselineCpuMs: summary(base.map((t) => t.cpu)),
      speedup: baselineMs.median / fastMs.median,
    });
  }
  return rows;
}

// ---- memory of the usage itself ----

/** Heap a {@link ClusterUsage} of `resourceCount` resources holds (after GC), and its build time. */
export function usageMemory(resourceCount: number, nodeCount: number): UsageMemoryRow {
  const rand = prng(7);
  const names = Array.from({ length: nodeCount }, (_, i) => `node${i + 1}`);
  const sidList = sids(resourceCount);
  gc();
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const usage = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
  for (const name of names) usage.addNode(name, { cpu: 0, maxcpu: 64, mem: 0, maxmem: 512 * GIB });
  for (let k = 0; k < resourceCount; k++) {
    const maxcpu = [1, 2, 4][Math.floor(rand() * 3)]!;
    const maxmem = [1, 2, 4, 8][Math.floor(rand() * 4)]! * GIB;
    usage.addResource(sidList[k]!, {
      stats: { cpu: maxcpu, maxcpu, mem: maxmem, maxmem },
      state: 'started',
      placement: { current: names[k % nodeCount]! },
    });
  }
  usage.nodeImbalance();
  usage.scoreNodesToStart({ cpu: 2, maxcpu: 2, mem: 4 * GIB, maxmem: 4 * GIB });
  const ms = performance.now() - t0;
  gc();
  const heap = process.memoryUsage().heapUsed - before;
  if (usage.resourceCount !== resourceCount) throw new Error('usage memory: resources lost');
  return { resources: resourceCount, nodes: nodeCount, buildMs: ms, bytesPerResource: heap / resourceCount };
}
