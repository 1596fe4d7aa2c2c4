/**
 * poise benchmark: the fast usage paths against the reference's rebuild-per-decision and direct
 * paths, measured in one run. `pnpm bench` prints a table, `pnpm bench --json` the JSON shape
 *   {"startPlacement":[{resources,nodes,totalMs,perCallUs,baselineTotalMs,speedup,totalMsSpread,perCallUsSpread}],
 *    "rebalanceScoring":[{resources,nodes,method,ms,referenceMs,msSpread}],
 *    "scale":{resources,nodes,heapMB,ms}}
 * Every fast result is checked against the reference result before it is reported.
 *
 * Timings are warm: each fast path first runs as a throw-away JIT warm-up (start placement:
 * at least 3,000 decisions; rebalancing: the full workload twice), then `FAST_REPS` timed
 * repetitions follow and the median is reported with the spread (min–max). No gc() is forced
 * between them (a forced full collection made the next run 3–5× slower). The reference paths
 * are slow (seconds), so they run fewer repetitions.
 */
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import {
  ClusterUsage,
  type MigrationCandidate,
  type ResourceStats,
  type UsageSnapshot,
  referenceBestBalancingMigrations,
  referenceScoreNodesToStart,
} from '../packages/usage/src/index';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** Timed repetitions of every fast path (after the throw-away warm-up runs). */
const FAST_REPS = 7;
/** Timed repetitions of the reference (rebuild / direct) paths; 1 above `SLOW_SINGLE_ABOVE` resources. */
const SLOW_REPS = 3;
const SLOW_SINGLE_ABOVE = 3000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function spread(xs: number[]): string {
  return `${round(Math.min(...xs))}–${round(Math.max(...xs))}`;
}

/** mulberry32: deterministic workloads. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function best(scores: { node: string; score: number }[]): string {
  // the HA core's order: score descending (it negates and sorts ascending), then name
  let top = scores[0]!;
  for (const s of scores) if (s.score > top.score || (s.score === top.score && s.node < top.node)) top = s;
  return top.node;
}

// ---- 1. start placement (seed 003) ----

interface StartRow {
  resources: number;
  nodes: number;
  totalMs: number;
  perCallUs: number;
  baselineTotalMs: number;
  speedup: number;
  /** min–max of the timed repetitions. */
  totalMsSpread: string;
  perCallUsSpread: string;
}

const SEED3_NODES = ['node1', 'node2', 'node3'];
const SEED3_NODE = { cpu: 0, maxcpu: 32, mem: 0, maxmem: 256 * GIB };
/** Homogeneous guests (the seed's worst case): 2 cores, 2 GiB, static stats. */
const SEED3_GUEST: ResourceStats = { cpu: 2, maxcpu: 2, mem: 2 * GIB, maxmem: 2 * GIB };

function startFast(count: number): { ms: number; scoreMs: number; placement: string[] } {
  const placement: string[] = [];
  let scoreMs = 0;
  const t0 = performance.now();
  const usage = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
  for (const n of SEED3_NODES) usage.addNode(n, SEED3_NODE);
  for (let k = 0; k < count; k++) {
    const s0 = performance.now();
    const scores = usage.scoreNodesToStart(SEED3_GUEST);
    scoreMs += performance.now() - s0;
    const node = best(scores);
    usage.addResource(`vm:${100 + k}`, { stats: SEED3_GUEST, state: 'started', placement: { current: node } });
    placement.push(node);
  }
  return { ms: performance.now() - t0, scoreMs, placement };
}

function startBaseline(count: number): { ms: number; placement: string[] } {
  const placement: string[] = [];
  const resources: { sid: string; node: string }[] = [];
  const t0 = performance.now();
  for (let k = 0; k < count; k++) {
    // rebuild the usage from all resources before every decision, like the reference
    const snapshot: UsageSnapshot = {
      aggregation: 'static',
      nodes: SEED3_NODES.map((name) => ({ name, stats: SEED3_NODE })),
      resources: resources.map((r) => ({ sid: r.sid, stats: SEED3_GUEST, state: 'started', placement: { current: r.node } })),
    };
    const node = best(referenceScoreNodesToStart(snapshot, SEED3_GUEST));
    resources.push({ sid: `vm:${100 + k}`, node });
    placement.push(node);
  }
  return { ms: performance.now() - t0, placement };
}

function startPlacement(count: number): StartRow {
  startFast(Math.max(count, 3000)); // warm-up (throw-away; 300 decisions alone leave the JIT cold)
  startBaseline(Math.min(count, 300)); // warm-up (throw-away)
  const totals: number[] = [];
  const perCall: number[] = [];
  let fast: ReturnType<typeof startFast> | undefined;
  for (let rep = 0; rep < FAST_REPS; rep++) {
    // no forced gc() here: a full collection between runs made the next run 3–5× slower
    fast = startFast(count);
    totals.push(fast.ms);
    perCall.push((fast.scoreMs * 1000) / count);
  }
  const baselines: number[] = [];
  let base: ReturnType<typeof startBaseline> | undefined;
  for (let rep = 0; rep < (count > SLOW_SINGLE_ABOVE ? 1 : SLOW_REPS); rep++) {
    gc();
    base = startBaseline(count);
    baselines.push(base.ms);
  }
  if (fast!.placement.join() !== base!.placement.join()) throw new Error(`start placement differs from the reference at ${count}`);
  const totalMs = median(totals);
  const baselineMs = median(baselines);
  return {
    resources: count,
    nodes: SEED3_NODES.length,
    totalMs: round(totalMs),
    perCallUs: round(median(perCall)),
    baselineTotalMs: round(baselineMs),
    speedup: round(baselineMs / totalMs),
    totalMsSpread: spread(totals),
    perCallUsSpread: spread(perCall),
  };
}

// ---- 2. auto-rebalance scoring ----

interface RebalanceRow {
  resources: number;
  nodes: number;
  method: 'bruteforce' | 'topsis';
  ms: number;
  referenceMs: number;
  /** min–max of the timed repetitions. */
  msSpread: string;
}

function rebalanceCluster(resourceCount: number, nodeCount: number): { usage: ClusterUsage; candidates: MigrationCandidate[] } {
  const rand = prng(42);
  const names = Array.from({ length: nodeCount }, (_, i) => `node${i + 1}`);
  const caps = names.map(() => ({ maxcpu: [16, 24, 32, 48, 64][Math.floor(rand() * 5)]!, maxmem: [64, 96, 128, 256][Math.floor(rand() * 4)]! * GIB }));
  const guests: { sid: string; node: number; stats: ResourceStats }[] = [];
  const used = names.map(() => ({ cpu: 0, mem: 0 }));
  for (let k = 0; k < resourceCount; k++) {
    // skewed placement so that balancing has work to do
    const node = Math.floor(rand() ** 1.5 * nodeCount);
    const maxcpu = [1, 2, 4, 8][Math.floor(rand() * 4)]!;
    const maxmem = [1, 2, 4, 8, 16][Math.floor(rand() * 5)]! * GIB;
    const stats = { cpu: Math.round(rand() * maxcpu * 1000) / 1000, maxcpu, mem: Math.floor(rand() * maxmem / MIB) * MIB, maxmem };
    used[node]!.cpu += stats.cpu;
    used[node]!.mem += stats.mem;
    guests.push({ sid: `vm:${100 + k}`, node, stats });
  }
  const usage = new ClusterUsage({ aggregation: 'dynamic', metric: 'raw' });
  names.forEach((name, i) => usage.addNode(name, { cpu: used[i]!.cpu, maxcpu: caps[i]!.maxcpu, mem: used[i]!.mem, maxmem: caps[i]!.maxmem }));
  for (const g of guests) usage.addResource(g.sid, { stats: g.stats, state: 'started', placement: { current: names[g.node]! } });
  const sorted = [...guests].sort((a, b) => (a.sid < b.sid ? -1 : a.sid > b.sid ? 1 : 0));
  const candidates = sorted.map((g) => ({ leader: g.sid, resources: [g.sid], targets: names.filter((_, i) => i !== g.node).sort() }));
  return { usage, candidates };
}

function rebalanceScoring(resourceCount: number, nodeCount: number): RebalanceRow[] {
  const { usage, candidates } = rebalanceCluster(resourceCount, nodeCount);
  const snapshot = usage.snapshot();
  const rows: RebalanceRow[] = [];
  for (const method of ['bruteforce', 'topsis'] as const) {
    for (let warm = 0; warm < 2; warm++) usage.bestBalancingMigrations(candidates, method, 1); // warm-up (throw-away; the JIT needs two calls)
    const times: number[] = [];
    let fast: unknown;
    for (let rep = 0; rep < FAST_REPS; rep++) {
      const t0 = performance.now();
      fast = usage.bestBalancingMigrations(candidates, method, 1);
      times.push(performance.now() - t0);
    }
    if (process.env.BENCH_DEBUG) console.error(method, times.map((t) => t.toFixed(1)).join(' '));
    gc();
    const t1 = performance.now();
    const reference = referenceBestBalancingMigrations(snapshot, candidates, method, 1, 'raw');
    const referenceMs = performance.now() - t1;
    if (JSON.stringify(fast) !== JSON.stringify(reference)) throw new Error(`${method} differs from the reference`);
    rows.push({ resources: resourceCount, nodes: nodeCount, method, ms: round(median(times)), referenceMs: round(referenceMs), msSpread: spread(times) });
  }
  return rows;
}

// ---- 3. scale ----

interface ScaleRow {
  resources: number;
  nodes: number;
  heapMB: number;
  ms: number;
}

function scale(resourceCount: number, nodeCount: number): ScaleRow {
  const rand = prng(7);
  gc();
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const usage = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
  const names = Array.from({ length: nodeCount }, (_, i) => `node${i + 1}`);
  for (const name of names) usage.addNode(name, { cpu: 0, maxcpu: 64, mem: 0, maxmem: 512 * GIB });
  for (let k = 0; k < resourceCount; k++) {
    const maxcpu = [1, 2, 4][Math.floor(rand() * 3)]!;
    const maxmem = [1, 2, 4, 8][Math.floor(rand() * 4)]! * GIB;
    usage.addResource(`vm:${100 + k}`, { stats: { cpu: maxcpu, maxcpu, mem: maxmem, maxmem }, state: 'started', placement: { current: names[k % nodeCount]! } });
  }
  usage.nodeImbalance();
  usage.scoreNodesToStart({ cpu: 2, maxcpu: 2, mem: 4 * GIB, maxmem: 4 * GIB });
  const candidates = names.slice(0, 10).map((name, i) => ({ leader: `vm:${100 + i}`, resources: [`vm:${100 + i}`], targets: names.filter((n) => n !== name) }));
  usage.bestBalancingMigrations(candidates, 'bruteforce', 1);
  const ms = performance.now() - t0;
  gc();
  const heap = process.memoryUsage().heapUsed - before;
  if (usage.resourceCount !== resourceCount) throw new Error('scale: resources lost');
  return { resources: resourceCount, nodes: nodeCount, heapMB: round(heap / MIB), ms: round(ms) };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

function main(): void {
  const json = process.argv.includes('--json');
  if (!(globalThis as { gc?: unknown }).gc && !json) console.error('note: run with --expose-gc for stable heap figures');
  // `--only start|rebalance|scale` runs one section (for development; the others print empty)
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt === -1 ? undefined : process.argv[onlyAt + 1];
  const startPlacementRows = only === undefined || only === 'start' ? [300, 3000, 9000].map(startPlacement) : [];
  if (!json) console.error('start placement done');
  const rebalanceRows = only === undefined || only === 'rebalance' ? rebalanceScoring(10_000, 100) : [];
  if (!json) console.error('rebalance scoring done');
  const scaleRow = only === undefined || only === 'scale' ? scale(100_000, 1_000) : { resources: 0, nodes: 0, heapMB: 0, ms: 0 };
  const result = { startPlacement: startPlacementRows, rebalanceScoring: rebalanceRows, scale: scaleRow };
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const lines: string[] = [];
  lines.push(`warm timings: throw-away warm-up runs, then the median of ${FAST_REPS} runs (spread min–max); reference: median of ${SLOW_REPS} (1 above ${SLOW_SINGLE_ABOVE} resources), single run for rebalancing`);
  lines.push('');
  lines.push('start placement (seed 003: 3 nodes, static, rebalance on start; decision = score + add)');
  lines.push(table(['resources', 'nodes', 'total ms', '(spread)', 'µs/score', '(spread)', 'baseline ms', 'speedup'], startPlacementRows.map((r) => [r.resources, r.nodes, r.totalMs, r.totalMsSpread, r.perCallUs, r.perCallUsSpread, r.baselineTotalMs, `${r.speedup}×`])));
  lines.push('');
  lines.push('auto-rebalance scoring (all candidates × all targets, limit 1)');
  lines.push(table(['resources', 'nodes', 'method', 'ms', '(spread)', 'reference ms'], rebalanceRows.map((r) => [r.resources, r.nodes, r.method, r.ms, r.msSpread, r.referenceMs])));
  lines.push('');
  lines.push('scale (build + imbalance + start score + 10 candidates bruteforce)');
  lines.push(table(['resources', 'nodes', 'heap MB', 'ms'], [[scaleRow.resources, scaleRow.nodes, scaleRow.heapMB, scaleRow.ms]]));
  process.stdout.write(`${lines.join('\n')}\n`);
}

function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, j) => Math.max(...cells.map((r) => r[j]!.length)));
  const fmt = (r: string[]) => r.map((c, j) => c.padStart(widths[j]!)).join('  ');
  return [fmt(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(fmt)].join('\n');
}

main();
