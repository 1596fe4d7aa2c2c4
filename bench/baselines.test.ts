/**
 * The benchmark's baselines return what the oracle (`reference*` of `@poise/usage`) returns, bit
 * for bit, on small random clusters: a speed-up is only a speed-up if both sides decide the same.
 * Nothing here is timed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MigrationCandidate, ResourceStats } from '../packages/usage/src/index';
import {
  type UsageSnapshot,
  referenceBestBalancingMigrations,
  referenceScoreNodesToStart,
} from '../packages/usage/src/testing/index';
import {
  type BaselineNode,
  type BaselineResource,
  LeanMigrationBaseline,
  LeanStartBaseline,
  bestStartNode,
} from './baselines';

const GIB = 1024 ** 3;

interface Cluster {
  aggregation: 'static' | 'dynamic';
  nodes: BaselineNode[];
  resources: (BaselineResource & { state: 'started' | 'starting' | 'stopped' })[];
}

/** cpu on a 0.1 grid (order-dependent float sums), memory in MiB steps, maxcpu 0 included. */
const stats = fc.record({
  maxcpu: fc.constantFrom(0, 0.3, 1, 1.1, 2, 4),
  maxmem: fc.integer({ min: 0, max: 8192 }).map((m) => m * 1024 * 1024),
  use: fc.double({ min: 0, max: 1, noNaN: true }),
});

const cluster: fc.Arbitrary<Cluster> = fc
  .record({
    aggregation: fc.constantFrom('static' as const, 'dynamic' as const),
    nodeCount: fc.integer({ min: 2, max: 6 }),
    nodeStats: fc.array(
      fc.record({
        cpu: fc.integer({ min: 0, max: 40 }),
        maxcpu: fc.constantFrom(4, 8, 16, 32),
        mem: fc.integer({ min: 0, max: 64 }),
        maxmem: fc.constantFrom(16, 64, 128),
      }),
      { minLength: 6, maxLength: 6 },
    ),
    resources: fc.array(
      fc.record({
        s: stats,
        node: fc.nat(),
        target: fc.nat(),
        moving: fc.boolean(),
        state: fc.constantFrom('started' as const, 'starting' as const, 'stopped' as const),
      }),
      { maxLength: 14 },
    ),
    names: fc.shuffledSubarray(['node1', 'node10', 'node2', 'b', 'A', 'toString'], { minLength: 6, maxLength: 6 }),
  })
  .map(({ aggregation, nodeCount, nodeStats, resources, names }) => {
    const nodes = names.slice(0, nodeCount).map((name, i) => {
      const s = nodeStats[i]!;
      const dynamic = aggregation === 'dynamic';
      return {
        name,
        stats: {
          cpu: dynamic ? s.cpu / 10 : 0,
          maxcpu: s.maxcpu,
          mem: dynamic ? s.mem * GIB : 0,
          maxmem: s.maxmem * GIB,
        },
      };
    });
    return {
      aggregation,
      nodes,
      resources: resources.map((r, k) => {
        const current = nodes[r.node % nodeCount]!.name;
        const other = nodes[(r.node + 1 + (r.target % (nodeCount - 1))) % nodeCount]!.name;
        const cpu = aggregation === 'static' ? r.s.maxcpu : Math.round(r.s.use * r.s.maxcpu * 10) / 10;
        const mem = aggregation === 'static' ? r.s.maxmem : Math.floor(r.s.use * r.s.maxmem);
        const s: ResourceStats = { cpu, maxcpu: r.s.maxcpu, mem, maxmem: r.s.maxmem };
        return { sid: `vm:${100 + k}`, stats: s, current, ...(r.moving ? { target: other } : {}), state: r.state };
      }),
    };
  });

function snapshotOf(c: Cluster): UsageSnapshot {
  return {
    aggregation: c.aggregation,
    nodes: c.nodes,
    resources: c.resources.map((r) => ({
      sid: r.sid,
      stats: r.stats,
      state: r.state,
      placement: r.target === undefined ? { current: r.current } : { current: r.current, target: r.target },
    })),
  };
}

/** Stationary resources as candidates: pairs on one node form a bundle, every other node a target (in reverse order). */
function candidatesOf(c: Cluster): MigrationCandidate[] {
  const stationary = c.resources.filter((r) => r.target === undefined);
  const out: MigrationCandidate[] = [];
  const used = new Set<string>();
  for (const r of stationary) {
    if (used.has(r.sid)) continue;
    used.add(r.sid);
    const partner = stationary.find((p) => !used.has(p.sid) && p.current === r.current);
    const members = [r.sid];
    if (partner && r.sid.endsWith('1')) {
      used.add(partner.sid);
      members.push(partner.sid);
    }
    out.push({
      leader: r.sid,
      resources: members,
      targets: c.nodes
        .map((n) => n.name)
        .filter((n) => n !== r.current)
        .reverse(),
    });
  }
  return out;
}

describe('baselines decide like the oracle', () => {
  it('start scores: the lean rebuild equals referenceScoreNodesToStart bit for bit', () => {
    fc.assert(
      fc.property(cluster, stats, (c, s) => {
        const baseline = new LeanStartBaseline(c.aggregation, c.nodes);
        for (const r of c.resources) baseline.add(r.stats, r.state, r.current, r.target);
        const guest: ResourceStats = { cpu: s.maxcpu, maxcpu: s.maxcpu, mem: s.maxmem, maxmem: s.maxmem };
        const expected = referenceScoreNodesToStart(snapshotOf(c), guest);
        const scores = Array.from(baseline.scoreStart(guest));
        expect(baseline.names).toEqual(expected.map((e) => e.node));
        expect(scores).toEqual(expected.map((e) => e.score));
      }),
      { numRuns: 300, seed: 3 },
    );
  });

  it('a sequence of start decisions (score, pick, add) follows the oracle', () => {
    // seed 003's shape at small scale: 3 nodes, 2-core 2 GiB guests placed one after another
    const nodes = ['node1', 'node2', 'node3'].map((name) => ({
      name,
      stats: { cpu: 0, maxcpu: 32, mem: 0, maxmem: 256 * GIB },
    }));
    const guest = { cpu: 2, maxcpu: 2, mem: 2 * GIB, maxmem: 2 * GIB };
    const baseline = new LeanStartBaseline('static', nodes);
    const placed: UsageSnapshot['resources'][number][] = [];
    for (let k = 0; k < 40; k++) {
      const oracle = referenceScoreNodesToStart({ aggregation: 'static', nodes, resources: placed }, guest);
      const expected = oracle.reduce((a, b) => (b.score > a.score ? b : a)).node;
      const node = bestStartNode(baseline.names, baseline.scoreStart(guest));
      expect(node).toBe(expected);
      baseline.add(guest, 'started', node);
      placed.push({ sid: `vm:${100 + k}`, stats: guest, state: 'started', placement: { current: node } });
    }
    // round robin: 14, 13, 13 (the first of equal scores wins)
    expect(['node1', 'node2', 'node3'].map((n) => placed.filter((p) => p.placement.current === n).length)).toEqual([
      14, 13, 13,
    ]);
  });

  for (const method of ['bruteforce', 'topsis'] as const) {
    it(`${method} migrations: the O(n)-per-pair baseline equals referenceBestBalancingMigrations`, () => {
      fc.assert(
        fc.property(
          cluster,
          fc.constantFrom('raw' as const, 'normalized' as const),
          fc.integer({ min: 0, max: 4 }),
          (c, metric, limit) => {
            const candidates = candidatesOf(c);
            const baseline = new LeanMigrationBaseline(c.aggregation, c.nodes, c.resources, metric);
            expect(baseline.best(candidates, method, limit)).toEqual(
              referenceBestBalancingMigrations(snapshotOf(c), candidates, method, limit, metric),
            );
          },
        ),
        { numRuns: 300, seed: 11 },
      );
    });
  }
});
