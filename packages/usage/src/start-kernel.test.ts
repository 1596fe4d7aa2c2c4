/**
 * The fused start kernel against the kernel it replaced — the criteria of every node's state
 * written by `writeCriteria` and scored by `scoreFlatInPlace` — bit for bit, on random node stats
 * over the whole accepted range (-0, subnormal, 2^53 ± 1, 2^64, non-dyadic values, resources that
 * add the node's own cpu count), on ties (identical nodes: identical rows and zero distances),
 * and beyond the accepted range, where column sums of squares overflow and the kernel hands the
 * matrix to `scoreFlatInPlace`. One scratch serves every case, growing and shrinking `n`, so
 * stale records of a larger cluster cannot leak into a smaller one. Deterministic: seeded PRNG.
 */
import { describe, expect, it } from 'vitest';
import { ClusterUsage } from './cluster-usage';
import type { ClusterView } from './fast';
import { Scratch } from './scratch';
import { referenceScoreNodesToStart } from './reference';
import {
  START_CPU,
  START_MAXCPU,
  START_MAXMEM,
  START_MEM,
  START_STRIDE,
  StartScratch,
  scoreNodesToStartKernel,
  startKernelCounters,
} from './start-kernel';
import { previousStartKernel, prng } from './testing/support';

/** The previous start kernel on a fresh scratch, its `n` scores. */
function previousKernel(view: ClusterView, addCpu: number, addMem: number): Float64Array {
  return previousStartKernel(view, addCpu, addMem, new Scratch()).slice(0, view.n);
}

function fusedKernel(view: ClusterView, addCpu: number, addMem: number, scratch: StartScratch): Float64Array {
  const records = scratch.records(view.n);
  for (let i = 0; i < view.n; i++) {
    records[i * START_STRIDE + START_CPU] = view.cpu[i]!;
    records[i * START_STRIDE + START_MAXCPU] = view.maxcpu[i]!;
    records[i * START_STRIDE + START_MEM] = view.mem[i]!;
    records[i * START_STRIDE + START_MAXMEM] = view.maxmem[i]!;
  }
  return scoreNodesToStartKernel(view.n, addCpu, addMem, scratch).slice(0, view.n);
}

const word = new Float64Array(1);
const wordBits = new BigUint64Array(word.buffer);
/** The 64-bit patterns of `xs`, in hex (so -0 and +0, or two NaNs, are told apart). */
function bits(xs: ArrayLike<number>): string[] {
  return Array.from(xs, (x) => {
    word[0] = x;
    return wordBits[0]!.toString(16);
  });
}

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

/** A stat in the accepted range [0, 2^64]: special values, integers, non-dyadic fractions. */
function stat(rand: () => number): number {
  switch (Math.floor(rand() * 6)) {
    case 0:
      return pick(rand, [0, -0, 5e-324, 2 ** -1022, 1e-300, 1e-10, 2 ** 53 - 1, 2 ** 53 + 2, 2 ** 64]);
    case 1:
      return Math.floor(rand() * 64);
    case 2:
      return Math.round(rand() * 1000) / 10;
    case 3:
      return Math.floor(rand() * 2 ** 40);
    case 4:
      return rand() * 2 ** 64;
    default:
      return rand();
  }
}

/** A node capacity in [1, 2^64]. */
function capacity(rand: () => number): number {
  return pick(rand, [1, 1.5, 4, 32, 2 ** 40, 2 ** 64, 1 + rand() * 1000, Math.floor(1 + rand() * 2 ** 50)]);
}

/**
 * `n` nodes' aggregated stats: `usage` up to `limit` (a node aggregating r resources in range stays
 * below (r + 2)·2^64), a third of the clusters with every node identical, a third with repeats.
 */
function randomView(rand: () => number, n: number, usage: (rand: () => number) => number): ClusterView {
  const view = {
    n,
    names: Array.from({ length: n }, (_, i) => `node${i + 1}`),
    cpu: new Float64Array(n),
    maxcpu: new Float64Array(n),
    mem: new Float64Array(n),
    maxmem: new Float64Array(n),
  };
  const shape = rand();
  for (let i = 0; i < n; i++) {
    const from = shape < 1 / 3 && i > 0 ? 0 : shape < 2 / 3 && i > 0 && rand() < 0.5 ? Math.floor(rand() * i) : -1;
    if (from >= 0) {
      view.cpu[i] = view.cpu[from]!;
      view.maxcpu[i] = view.maxcpu[from]!;
      view.mem[i] = view.mem[from]!;
      view.maxmem[i] = view.maxmem[from]!;
    } else {
      view.cpu[i] = usage(rand);
      view.maxcpu[i] = capacity(rand);
      view.mem[i] = usage(rand);
      view.maxmem[i] = capacity(rand);
    }
  }
  return view;
}

function nodeCount(rand: () => number): number {
  return rand() < 0.9 ? 1 + Math.floor(rand() * 9) : 10 + Math.floor(rand() * 60);
}

describe('the fused start kernel equals the previous kernel, bit for bit', () => {
  it('on random clusters over the accepted range, ties included, without leaving the plain folds', () => {
    const rand = prng(20_261_201);
    const scratch = new StartScratch();
    const scaledBefore = startKernelCounters.scaled;
    for (let c = 0; c < 3000; c++) {
      const view = randomView(rand, nodeCount(rand), (r) => (r() < 0.8 ? stat(r) : stat(r) * 64));
      const addCpu = rand() < 0.2 ? 0 : stat(rand);
      const addMem = stat(rand);
      expect(bits(fusedKernel(view, addCpu, addMem, scratch)), `case ${c}`).toEqual(
        bits(previousKernel(view, addCpu, addMem)),
      );
    }
    // every criterion is 1 + a load below 2^101: the scaled paths are never needed in range
    expect(startKernelCounters.scaled).toBe(scaledBefore);
  });

  it('beyond the accepted range (a cpu load near 1e154), where the matrix goes to scoreFlatInPlace', () => {
    // one node's squared load is finite, and so is every criterion, but the highest-cpu column's
    // sum of squares (that load in nearly every row) overflows from about 1e154 / √n
    const rand = prng(7);
    const scratch = new StartScratch();
    const scaledBefore = startKernelCounters.scaled;
    for (let c = 0; c < 1000; c++) {
      const view = randomView(rand, 2 + Math.floor(rand() * 20), stat);
      const big = Math.floor(rand() * view.n);
      view.cpu[big] = 10 ** (152 + rand() * 2.1);
      view.maxcpu[big] = 1;
      const addCpu = rand() < 0.2 ? 0 : stat(rand);
      const addMem = stat(rand);
      expect(bits(fusedKernel(view, addCpu, addMem, scratch)), `case ${c}`).toEqual(
        bits(previousKernel(view, addCpu, addMem)),
      );
    }
    expect(startKernelCounters.scaled).toBeGreaterThan(scaledBefore);
  });

  it('scores no node of an empty cluster', () => {
    expect(scoreNodesToStartKernel(0, 1, 1, new StartScratch()).length).toBe(0);
    expect(
      new ClusterUsage({ aggregation: 'static', metric: 'raw' }).scoreNodesToStart({
        cpu: 1,
        maxcpu: 1,
        mem: 1,
        maxmem: 1,
      }),
    ).toEqual([]);
  });
});

describe('start scores follow every change of the usage', () => {
  it.each(['static', 'dynamic'] as const)(
    '%s: a score after each random change equals the reference',
    (aggregation) => {
      const rand = prng(aggregation === 'static' ? 11 : 12);
      const u = new ClusterUsage({ aggregation, metric: 'raw' });
      const names = ['n1', 'n2', 'n3', 'n4', 'n5'];
      const live = new Set<string>();
      const addNode = (name: string) => {
        const maxcpu = pick(rand, [4, 8, 16]);
        const maxmem = pick(rand, [8, 16]) * 2 ** 30;
        u.addNode(name, {
          cpu: aggregation === 'dynamic' ? Math.round(rand() * maxcpu * 10) / 10 : 0,
          maxcpu,
          mem: 0,
          maxmem,
        });
        live.add(name);
      };
      addNode('n1');
      addNode('n2');
      const resourceStats = () => {
        const maxcpu = pick(rand, [0, 0.3, 1, 2, 4]);
        const maxmem = pick(rand, [0, 512, 1500, 4096]) * 2 ** 20;
        return { cpu: maxcpu, maxcpu, mem: maxmem, maxmem };
      };
      let next = 100;
      for (let step = 0; step < 400; step++) {
        const sids = u.snapshot().resources.map((r) => r.sid);
        const nodes = [...live];
        const op = rand();
        if (op < 0.3 || sids.length === 0) {
          u.addResource(`vm:${next++}`, {
            stats: resourceStats(),
            state: pick(rand, ['starting', 'started'] as const),
            placement: { current: pick(rand, nodes) },
          });
        } else if (op < 0.4) {
          u.removeResource(pick(rand, sids));
        } else if (op < 0.55) {
          const sid = pick(rand, sids);
          const r = u.getResource(sid);
          const target = pick(rand, nodes);
          if (r.placement.target !== undefined) u.setPlacement(sid, { current: r.placement.target });
          else if (target !== r.placement.current) u.setPlacement(sid, { current: r.placement.current, target });
        } else if (op < 0.65) {
          u.setResourceState(pick(rand, sids), pick(rand, ['starting', 'started'] as const));
        } else if (op < 0.75) {
          u.setResourceStats(pick(rand, sids), resourceStats());
        } else if (op < 0.85) {
          const name = pick(rand, nodes);
          const base = u.getNodeStats(name);
          u.setNodeStats(name, {
            ...base,
            maxcpu: pick(rand, [4, 8, 16]),
            cpu: aggregation === 'dynamic' ? Math.round(rand() * 40) / 10 : 0,
          });
        } else if (op < 0.93) {
          const absent = names.filter((n) => !live.has(n));
          if (absent.length > 0) addNode(pick(rand, absent));
        } else {
          const idle = nodes.filter((n) => u.nodeResourceCount(n) === 0);
          if (idle.length > 0 && live.size > 1) {
            const name = pick(rand, idle);
            u.removeNode(name);
            live.delete(name);
          }
        }
        const start = resourceStats();
        expect(u.scoreNodesToStart(start), `step ${step}`).toEqual(referenceScoreNodesToStart(u.snapshot(), start));
      }
    },
  );
});
