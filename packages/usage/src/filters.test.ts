/**
 * The O(1) filters of the fast migration scoring against the direct reference, on clusters built
 * so that the choice is decided by last-bit float noise between mathematically tied alternatives:
 * identical nodes whose loads are non-dyadic (so each fold position rounds differently) and
 * identical resources on them. An approximate value (or an interval that is too narrow) orders
 * such alternatives by its own rounding, not by the reference's fold, and picks another
 * migration; these tests then fail. (Checked by mutation: with the bruteforce interval shrunk to
 * its midpoint the near-tie test below fails; with the TOPSIS error bounds and the separation
 * slack set to 0, the random clusters of fast-vs-reference.test.ts fail.)
 */
import { describe, expect, it } from 'vitest';
import { topsisPathCounters } from './fast';
import {
  ClusterUsage,
  type ImbalanceMetric,
  type MigrationCandidate,
  type MigrationMethod,
  type ResourceStats,
} from './index';
import { referenceBestBalancingMigrations } from './reference';
import { prng } from './testing/support';

const GIB = 1024 ** 3;

/** Every stationary resource × every other node, sids in byte order. */
function allMoves(u: ClusterUsage): MigrationCandidate[] {
  const nodes = u.nodeNames();
  const sids = u
    .snapshot()
    .resources.map((r) => r.sid)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sids.map((sid) => {
    const current = u.getResource(sid).placement.current;
    return { leader: sid, resources: [sid], targets: nodes.filter((n) => n !== current) };
  });
}

function expectReference(
  u: ClusterUsage,
  candidates: MigrationCandidate[],
  method: MigrationMethod,
  limit: number,
): void {
  const fast = u.bestBalancingMigrations(candidates, method, limit);
  const reference = referenceBestBalancingMigrations(u.snapshot(), candidates, method, limit, u.metric);
  expect(fast).toEqual(reference);
}

/**
 * Nodes of identical capacity whose measured usage is `0.1 + count·cpu` cores and
 * `count·0.3 + 0.7` GiB for `counts[i]` identical resources each: nodes with equal counts are
 * identical, non-dyadic loads, so many moves tie exactly in real arithmetic and differ only by
 * where their nodes sit in the fold.
 */
function tiedCluster(
  counts: readonly number[],
  cpu: number,
  metric: ImbalanceMetric,
  nudges?: readonly number[],
): ClusterUsage {
  const u = new ClusterUsage({ aggregation: 'dynamic', metric });
  const stats: ResourceStats = { cpu, maxcpu: 2, mem: 0.3 * GIB, maxmem: GIB };
  const name = (i: number) => `n${String(i).padStart(2, '0')}`;
  counts.forEach((count, i) => {
    // a nudge of a few ulps turns exact ties into near-ties below the O(1) error
    const base = 0.1 + count * cpu;
    const nudged = base + (nudges?.[i] ?? 0) * 2 ** -52 * base;
    u.addNode(name(i), { cpu: nudged, maxcpu: 24, mem: count * 0.3 * GIB + 0.7 * GIB, maxmem: 48 * GIB });
  });
  let k = 100;
  counts.forEach((count, i) => {
    for (let c = 0; c < count; c++)
      u.addResource(`vm:${k++}`, { stats, state: 'started', placement: { current: name(i) } });
  });
  return u;
}

function randomCounts(rand: () => number, nodeCount: number): number[] {
  return Array.from({ length: nodeCount }, () => 1 + Math.floor(rand() * 3));
}

describe('bruteforce filter: ties decided by last-bit noise', () => {
  it.each(['raw', 'normalized'] as const)('identical nodes at different fold positions (%s)', (metric) => {
    const rand = prng(metric === 'raw' ? 11 : 12);
    for (let trial = 0; trial < 40; trial++) {
      const nodeCount = 3 + Math.floor(rand() * 30);
      const cpu = [0.1, 0.3, 0.7, 1.1, 0.35][Math.floor(rand() * 5)]!;
      const u = tiedCluster(randomCounts(rand, nodeCount), cpu, metric);
      const candidates = allMoves(u);
      expectReference(u, candidates, 'bruteforce', 1);
      expectReference(u, candidates, 'bruteforce', 3);
    }
  });

  it.each(['raw', 'normalized'] as const)('near-ties a few ulps apart, below the O(1) error (%s)', (metric) => {
    // the approximation orders these by its own rounding; only pairs whose interval reaches
    // the best may be dropped, so a narrower interval drops the reference's choice
    const rand = prng(metric === 'raw' ? 31 : 32);
    for (let trial = 0; trial < 60; trial++) {
      const nodeCount = 3 + Math.floor(rand() * 30);
      const cpu = [0.1, 0.3, 0.7, 1.1, 0.35][Math.floor(rand() * 5)]!;
      const nudges = Array.from({ length: nodeCount }, () => Math.floor(rand() * 9) - 4);
      const u = tiedCluster(randomCounts(rand, nodeCount), cpu, metric, nudges);
      const candidates = allMoves(u);
      expectReference(u, candidates, 'bruteforce', 1);
      expectReference(u, candidates, 'topsis', 1);
    }
  });

  it('a tied move whose fold rounds lower wins over the smaller sid', () => {
    // find a cluster where the reference's choice is not the first tied candidate by sid:
    // the truncated imbalances of real-arithmetic ties differ there, so only the exact fold
    // (not an approximation that sees a tie) gets it right
    let decisive = 0;
    const rand = prng(5);
    for (let trial = 0; trial < 300 && decisive < 5; trial++) {
      const nodeCount = 4 + Math.floor(rand() * 20);
      const u = tiedCluster(randomCounts(rand, nodeCount), [0.1, 0.3, 0.7][trial % 3]!, 'raw');
      const candidates = allMoves(u);
      const all = referenceBestBalancingMigrations(
        u.snapshot(),
        candidates,
        'bruteforce',
        candidates.length * nodeCount,
        'raw',
      );
      const top = all[0]!;
      const close = all.filter((m) => Math.abs(m.imbalance - top.imbalance) <= 1e-14);
      if (close.some((m) => m.imbalance !== top.imbalance)) {
        decisive++;
        expectReference(u, candidates, 'bruteforce', 1);
      }
    }
    expect(decisive).toBeGreaterThan(0);
  });
});

describe('separated TOPSIS: proven choice or exact fallback', () => {
  it('takes the O(1) path on a heterogeneous cluster and equals the reference', () => {
    const rand = prng(77);
    const before = topsisPathCounters.separated;
    for (let trial = 0; trial < 10; trial++) {
      const u = new ClusterUsage({ aggregation: 'dynamic', metric: trial % 2 === 0 ? 'raw' : 'normalized' });
      const nodeCount = 4 + Math.floor(rand() * 12);
      for (let i = 0; i < nodeCount; i++) {
        const maxcpu = [16, 24, 32][Math.floor(rand() * 3)]!;
        u.addNode(`node${i + 1}`, {
          cpu: Math.round(rand() * maxcpu * 800) / 1000,
          maxcpu,
          mem: Math.floor(rand() * 60) * GIB,
          maxmem: 64 * GIB,
        });
      }
      for (let k = 0; k < 40; k++) {
        const maxcpu = [1, 2, 4][Math.floor(rand() * 3)]!;
        u.addResource(`vm:${100 + k}`, {
          stats: {
            cpu: Math.round(rand() * maxcpu * 1000) / 1000,
            maxcpu,
            mem: Math.floor(rand() * 4 * 1024) * 1024 * 1024,
            maxmem: 4 * GIB,
          },
          state: 'started',
          placement: { current: `node${1 + Math.floor(rand() * nodeCount)}` },
        });
      }
      expectReference(u, allMoves(u), 'topsis', 1);
    }
    expect(topsisPathCounters.separated - before).toBeGreaterThan(5);
  });

  it('skips candidates row by row only when they cannot matter: thinned and empty target lists, any order', () => {
    // the scan looks at a candidate's rows only when its column minima could beat the best so
    // far; candidates without targets (minima Infinity) and short lists must neither be chosen
    // wrongly nor hide the winner, wherever the winner sits in the list
    const rand = prng(78);
    const before = topsisPathCounters.separated;
    for (let trial = 0; trial < 12; trial++) {
      const u = new ClusterUsage({ aggregation: 'dynamic', metric: trial % 2 === 0 ? 'raw' : 'normalized' });
      const nodeCount = 5 + Math.floor(rand() * 20);
      for (let i = 0; i < nodeCount; i++) {
        const maxcpu = [16, 24, 32][Math.floor(rand() * 3)]!;
        u.addNode(`node${i + 1}`, {
          cpu: Math.round(rand() * maxcpu * 800) / 1000,
          maxcpu,
          mem: Math.floor(rand() * 60) * GIB,
          maxmem: 64 * GIB,
        });
      }
      for (let k = 0; k < 60; k++) {
        const maxcpu = [1, 2, 4][Math.floor(rand() * 3)]!;
        u.addResource(`vm:${100 + k}`, {
          stats: {
            cpu: Math.round(rand() * maxcpu * 1000) / 1000,
            maxcpu,
            mem: Math.floor(rand() * 4 * 1024) * 1024 * 1024,
            maxmem: 4 * GIB,
          },
          state: 'started',
          placement: { current: `node${1 + Math.floor(rand() * nodeCount)}` },
        });
      }
      const candidates = allMoves(u).map((c) => ({
        ...c,
        targets: rand() < 0.2 ? [] : c.targets.filter(() => rand() < 0.5),
      }));
      for (let i = candidates.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [candidates[i], candidates[j]] = [candidates[j]!, candidates[i]!];
      }
      expectReference(u, candidates, 'topsis', 1);
      expectReference(u, candidates.reverse(), 'topsis', 1);
    }
    expect(topsisPathCounters.separated - before).toBeGreaterThan(10);
  });

  it.each(['raw', 'normalized'] as const)(
    'falls back on identical nodes and resources, still equal to the reference (%s)',
    (metric) => {
      const rand = prng(metric === 'raw' ? 21 : 22);
      const before = topsisPathCounters.exact;
      for (let trial = 0; trial < 30; trial++) {
        const nodeCount = 3 + Math.floor(rand() * 12);
        const cpu = [0.1, 0.3, 0.7, 1.1][Math.floor(rand() * 4)]!;
        const u = tiedCluster(randomCounts(rand, nodeCount), cpu, metric);
        const candidates = allMoves(u);
        expectReference(u, candidates, 'topsis', 1);
        expectReference(u, candidates, 'topsis', 2);
      }
      expect(topsisPathCounters.exact - before).toBeGreaterThan(30); // limit 2 always, limit 1 on ties
    },
  );

  it('falls back when two different states score within the bound (constructed near-tie)', () => {
    // two resources whose stats differ in the last bits: their moves are different states with
    // scores closer than any error bound, so only the exact path may choose
    const u = new ClusterUsage({ aggregation: 'dynamic', metric: 'raw' });
    u.addNode('node1', { cpu: 12, maxcpu: 16, mem: 40 * GIB, maxmem: 64 * GIB });
    u.addNode('node2', { cpu: 2, maxcpu: 16, mem: 8 * GIB, maxmem: 64 * GIB });
    u.addNode('node3', { cpu: 2.5, maxcpu: 16, mem: 9 * GIB, maxmem: 64 * GIB });
    u.addResource('vm:101', {
      stats: { cpu: 2, maxcpu: 4, mem: 4 * GIB, maxmem: 8 * GIB },
      state: 'started',
      placement: { current: 'node1' },
    });
    u.addResource('vm:102', {
      stats: { cpu: 2 + 2 ** -50, maxcpu: 4, mem: 4 * GIB, maxmem: 8 * GIB },
      state: 'started',
      placement: { current: 'node1' },
    });
    u.addResource('vm:103', {
      stats: { cpu: 2 - 2 ** -50, maxcpu: 4, mem: 4 * GIB, maxmem: 8 * GIB },
      state: 'started',
      placement: { current: 'node1' },
    });
    const before = topsisPathCounters.exact;
    expectReference(u, allMoves(u), 'topsis', 1);
    expect(topsisPathCounters.exact).toBe(before + 1);
  });

  it('one state only (every candidate the same bundle): the first row, without fallback', () => {
    const u = new ClusterUsage({ aggregation: 'dynamic', metric: 'raw' });
    u.addNode('node1', { cpu: 10, maxcpu: 16, mem: 30 * GIB, maxmem: 64 * GIB });
    u.addNode('node2', { cpu: 1, maxcpu: 16, mem: 2 * GIB, maxmem: 64 * GIB });
    const stats = { cpu: 1.3, maxcpu: 2, mem: GIB, maxmem: 2 * GIB };
    for (const sid of ['vm:101', 'vm:102', 'vm:103'])
      u.addResource(sid, { stats, state: 'started', placement: { current: 'node1' } });
    expectReference(u, allMoves(u), 'topsis', 1);
    expect(u.bestBalancingMigrations(allMoves(u), 'topsis', 1)[0]!.sid).toBe('vm:101');
  });
});
