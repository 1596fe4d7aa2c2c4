/**
 * The fast paths of ClusterUsage against the direct reference on random clusters and on
 * constructed ties (identical nodes, identical resources, symmetric placements), where the
 * reference's choice is decided by last-bit float noise. Deterministic: own seeded PRNG.
 */
import { describe, expect, it } from 'vitest';
import {
  type Aggregation,
  ClusterUsage,
  type ImbalanceMetric,
  type MigrationCandidate,
  type ResourceStats,
} from './index';
import { referenceBestBalancingMigrations, referenceNodeImbalance, referenceScoreNodesToStart } from './reference';
import { prng } from './testing/support';

const GIB = 1024 ** 3;

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

/** Resource stats; `noisy` draws non-dyadic cpu values (0.1 steps) that make sums order-dependent. */
function randomStats(rand: () => number, noisy: boolean, aggregation: Aggregation): ResourceStats {
  const maxcpu = noisy ? pick(rand, [0, 0.3, 0.7, 1.1, 1.3, 2.2, 4]) : pick(rand, [0, 1, 2, 4, 8]);
  const maxmem = pick(rand, [0, 512, 1024, 2048, 3000, 4096]) * 1024 * 1024;
  if (aggregation === 'static') return { cpu: maxcpu, maxcpu, mem: maxmem, maxmem };
  return { cpu: Math.round(rand() * maxcpu * 100) / 100, maxcpu, mem: Math.floor(rand() * maxmem), maxmem };
}

/**
 * Candidates like the HA core's: disjoint bundles, each leader once, every other node as target.
 * The first three stationary resources of every node with at least two form a bundle (leader the
 * first); every other stationary resource is a candidate of its own. Sorted by leader.
 */
function candidatesOf(u: ClusterUsage): MigrationCandidate[] {
  const nodes = u.nodeNames();
  const snapshot = u.snapshot();
  const stationary = snapshot.resources.filter((r) => r.placement.target === undefined).map((r) => r.sid);
  stationary.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const result: MigrationCandidate[] = [];
  const bundled = new Set<string>();
  for (const node of nodes) {
    const members = stationary.filter((sid) => u.getResource(sid).placement.current === node).slice(0, 3);
    if (members.length < 2) continue;
    members.forEach((sid) => bundled.add(sid));
    result.push({ leader: members[0]!, resources: members, targets: nodes.filter((n) => n !== node) });
  }
  for (const sid of stationary) {
    if (bundled.has(sid)) continue;
    const current = u.getResource(sid).placement.current;
    result.push({ leader: sid, resources: [sid], targets: nodes.filter((n) => n !== current) });
  }
  return result.sort((a, b) => (a.leader < b.leader ? -1 : a.leader > b.leader ? 1 : 0));
}

function compareAll(u: ClusterUsage, rand: () => number, metric: ImbalanceMetric): void {
  const snapshot = u.snapshot();
  const stats = randomStats(rand, rand() < 0.5, u.aggregation);
  expect(u.scoreNodesToStart(stats)).toEqual(referenceScoreNodesToStart(snapshot, stats));
  if (u.aggregation === 'basic') return;
  expect(u.nodeImbalance()).toBe(referenceNodeImbalance(snapshot, metric));
  const candidates = candidatesOf(u);
  // the same candidates with their targets reversed or one of them left out: lists that are not
  // every other node in byte order take the general target mapping
  const reordered = candidates.map((c, i) => ({
    ...c,
    targets: i % 2 === 0 ? [...c.targets].reverse() : c.targets.slice(1),
  }));
  for (const list of [candidates, reordered]) {
    for (const method of ['bruteforce', 'topsis'] as const) {
      for (const limit of [1, 3]) {
        expect(u.bestBalancingMigrations(list, method, limit)).toEqual(
          referenceBestBalancingMigrations(snapshot, list, method, limit, metric),
        );
      }
    }
  }
}

describe('fast paths equal the reference on random clusters', () => {
  const cases: [Aggregation, ImbalanceMetric, boolean][] = [
    ['static', 'raw', false],
    ['static', 'raw', true],
    ['static', 'normalized', true],
    ['dynamic', 'raw', true],
    ['dynamic', 'normalized', false],
    ['basic', 'raw', true],
  ];
  it.each(cases)('%s / %s / noisy=%s, through random granular operations', (aggregation, metric, noisy) => {
    for (let seed = 1; seed <= 12; seed++) {
      const rand = prng(seed * 7919 + (noisy ? 1 : 0));
      const u = new ClusterUsage({ aggregation, metric });
      const nodeCount = 2 + Math.floor(rand() * 6);
      const names = Array.from({ length: nodeCount }, (_, i) => `node${i + 1}`); // node10 < node2 in byte order
      for (const name of names) {
        const maxcpu = pick(rand, [4, 8, 16, 32]);
        const maxmem = pick(rand, [8, 16, 64]) * GIB;
        const dynamic = aggregation === 'dynamic';
        u.addNode(name, {
          cpu: dynamic ? Math.round(rand() * maxcpu * 1000) / 1000 : 0,
          maxcpu,
          mem: dynamic ? Math.floor(rand() * maxmem * 0.8) : 0,
          maxmem,
        });
      }
      let next = 100;
      for (let step = 0; step < 60; step++) {
        const sids = u.snapshot().resources.map((r) => r.sid);
        const op = rand();
        if (op < 0.4 || sids.length < 3) {
          u.addResource(`vm:${next++}`, {
            stats: randomStats(rand, noisy, aggregation),
            state: pick(rand, ['starting', 'started', 'started'] as const),
            placement: { current: pick(rand, names) },
          });
        } else if (op < 0.5) {
          u.removeResource(pick(rand, sids));
        } else if (op < 0.65) {
          const sid = pick(rand, sids);
          const r = u.getResource(sid);
          if (r.placement.target !== undefined) u.setPlacement(sid, { current: r.placement.target });
          else {
            const target = pick(rand, names);
            if (target !== r.placement.current) u.setPlacement(sid, { current: r.placement.current, target });
          }
        } else if (op < 0.75) {
          u.setResourceState(pick(rand, sids), pick(rand, ['starting', 'started'] as const));
        } else if (op < 0.85) {
          u.setResourceStats(pick(rand, sids), randomStats(rand, noisy, aggregation));
        } else if (aggregation === 'dynamic') {
          const name = pick(rand, names);
          const base = u.getNodeStats(name);
          u.setNodeStats(name, { ...base, cpu: Math.round(rand() * base.maxcpu * 1000) / 1000 });
        }
        if (step % 6 === 5) compareAll(u, rand, metric);
      }
    }
  });
});

describe('fast paths equal the reference on constructed ties', () => {
  it.each([
    ['static', 'raw'],
    ['static', 'normalized'],
    ['dynamic', 'raw'],
  ] as const)('identical nodes and resources, symmetric placements (%s, %s)', (aggregation, metric) => {
    for (const nodeCount of [3, 4, 5, 7]) {
      for (const cpu of [0.1, 0.7, 1, 1.3]) {
        const u = new ClusterUsage({ aggregation, metric });
        for (let i = 1; i <= nodeCount; i++) {
          // dynamic: identical measured usage with a non-dyadic cpu, so folds differ by position
          u.addNode(`node${i}`, {
            cpu: aggregation === 'dynamic' ? 3 * cpu : 0,
            maxcpu: 12,
            mem: aggregation === 'dynamic' ? 3 * GIB : 0,
            maxmem: 24 * GIB,
          });
        }
        const stats = { cpu, maxcpu: cpu, mem: GIB, maxmem: GIB };
        // round-robin: node1 gets one more resource than the others → many tied moves
        for (let k = 0; k < 3 * nodeCount + 1; k++) {
          u.addResource(`vm:${100 + k}`, {
            stats,
            state: 'started',
            placement: { current: `node${(k % nodeCount) + 1}` },
          });
        }
        compareAll(u, prng(nodeCount * 31 + cpu * 10), metric);
        // a symmetric start: every node equal → start scores tie by fold position
        expect(u.scoreNodesToStart(stats)).toEqual(referenceScoreNodesToStart(u.snapshot(), stats));
      }
    }
  });

  it('the rebalance-on-start sequence of 3 identical nodes places like the reference', () => {
    // seed 003 workload in small: every start scores the nodes and adds to the best (highest score, then name)
    const u = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
    for (const n of ['node1', 'node2', 'node3']) u.addNode(n, { cpu: 0, maxcpu: 16, mem: 0, maxmem: 64 * GIB });
    const stats = { cpu: 0.7, maxcpu: 0.7, mem: 1.5 * GIB, maxmem: 1.5 * GIB };
    for (let k = 0; k < 60; k++) {
      const fast = u.scoreNodesToStart(stats);
      expect(fast).toEqual(referenceScoreNodesToStart(u.snapshot(), stats));
      const best = [...fast].sort((a, b) => b.score - a.score || (a.node < b.node ? -1 : 1))[0]!;
      u.addResource(`vm:${1000 + k}`, { stats, state: 'started', placement: { current: best.node } });
    }
  });
});
