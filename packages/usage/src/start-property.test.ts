/**
 * Property (fast-check): on any cluster in the accepted range — node stats in [0, 2^64] with
 * capacities from 1, guests already placed (static and dynamic aggregation, starting or started),
 * any guest to start — `scoreNodesToStart` gives exactly the scores of the straightforward
 * reference (`referenceScoreNodesToStart`: every node's state copied, the resource added, the
 * criteria folded, TOPSIS), bit for bit, and so the same placement decision; so does the
 * allocation-free `scoreNodesToStartInto`. Seeded: reproducible.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClusterUsage } from './index';
import { referenceScoreNodesToStart } from './reference';

const MAX = 2 ** 64;
/** A stat in [0, 2^64]: small integers, fractions, extremes (0, -0, subnormal, 2^64). */
const stat = fc.oneof(
  fc.integer({ min: 0, max: 64 }),
  fc.double({ min: 0, max: 100, noNaN: true }),
  fc.double({ min: 0, max: MAX, noNaN: true }),
  fc.constantFrom(0, -0, 5e-324, 2 ** 53 + 2, MAX),
);
/** A node capacity in [1, 2^64]. */
const capacity = fc.oneof(
  fc.integer({ min: 1, max: 128 }),
  fc.double({ min: 1, max: MAX, noNaN: true }),
  fc.constantFrom(1, MAX),
);
const node = fc.record({ cpu: stat, maxcpu: capacity, mem: stat, maxmem: capacity });
const resource = fc.record({ cpu: stat, maxcpu: stat, mem: stat, maxmem: stat });
const cluster = fc.record({
  aggregation: fc.constantFrom('static' as const, 'dynamic' as const),
  nodes: fc.array(node, { minLength: 1, maxLength: 12 }),
  guests: fc.array(fc.record({ stats: resource, node: fc.nat(), started: fc.boolean() }), { maxLength: 30 }),
  start: resource,
});

const word = new Float64Array(1);
const wordBits = new BigUint64Array(word.buffer);
const bits = (x: number) => {
  word[0] = x;
  return wordBits[0]!.toString(16);
};

describe('scoreNodesToStart equals the reference (property)', () => {
  it('bit for bit on any accepted cluster, with the same placement decision', () => {
    fc.assert(
      fc.property(cluster, ({ aggregation, nodes, guests, start }) => {
        const u = new ClusterUsage({ aggregation, metric: 'raw' });
        const names = nodes.map((_, i) => `node${String(i).padStart(2, '0')}`);
        nodes.forEach((stats, i) => u.addNode(names[i]!, stats));
        guests.forEach((g, k) => {
          u.addResource(`vm:${100 + k}`, {
            stats: g.stats,
            state: g.started ? 'started' : 'starting',
            placement: { current: names[g.node % names.length]! },
          });
        });
        const fast = u.scoreNodesToStart(start);
        const reference = referenceScoreNodesToStart(u.snapshot(), start);
        expect(fast.map((s) => s.node)).toEqual(reference.map((s) => s.node));
        expect(fast.map((s) => bits(s.score))).toEqual(reference.map((s) => bits(s.score)));
        // the allocation-free entry point: the same bits, in nodeNames() order
        const out = new Float64Array(nodes.length + 2).fill(-1);
        expect(u.scoreNodesToStartInto(start, out)).toBe(nodes.length);
        expect(u.nodeNames()).toEqual(reference.map((s) => s.node));
        expect(Array.from(out.subarray(0, nodes.length), bits)).toEqual(reference.map((s) => bits(s.score)));
        expect(Array.from(out.subarray(nodes.length))).toEqual([-1, -1]);
      }),
      { seed: 20_261_201, numRuns: 600 },
    );
  });

  it('scoreNodesToStartInto gives the counts in basic aggregation, like scoreNodesToStart', () => {
    const u = new ClusterUsage({ aggregation: 'basic', metric: 'raw' });
    for (const name of ['n2', 'n1', 'n3']) u.addNode(name, { cpu: 0, maxcpu: 4, mem: 0, maxmem: 8 });
    u.addResource('vm:100', {
      stats: { cpu: 1, maxcpu: 1, mem: 1, maxmem: 1 },
      state: 'started',
      placement: { current: 'n2', target: 'n3' },
    });
    const out = new Float64Array(3);
    expect(u.scoreNodesToStartInto({ cpu: 1, maxcpu: 1, mem: 1, maxmem: 1 }, out)).toBe(3);
    expect(Array.from(out)).toEqual(u.scoreNodesToStart({ cpu: 1, maxcpu: 1, mem: 1, maxmem: 1 }).map((s) => s.score));
    expect(Array.from(out)).toEqual([0, 1, 1]);
  });

  it('scoreNodesToStartInto refuses an output buffer without room for every node, naming it', () => {
    const u = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
    u.addNode('n1', { cpu: 0, maxcpu: 4, mem: 0, maxmem: 8 });
    u.addNode('n2', { cpu: 0, maxcpu: 4, mem: 0, maxmem: 8 });
    const stats = { cpu: 1, maxcpu: 1, mem: 1, maxmem: 1 };
    expect(() => u.scoreNodesToStartInto(stats, new Float64Array(1))).toThrow(
      /'out' must be a Float64Array of length >= 2 \(the node count\), got a Float64Array of length 1/,
    );
    expect(() => u.scoreNodesToStartInto(stats, [0, 0] as unknown as Float64Array)).toThrow(
      /'out' must be a Float64Array.*got 0,0/,
    );
    expect(() => u.scoreNodesToStartInto({ ...stats, maxmem: Number.POSITIVE_INFINITY }, new Float64Array(2))).toThrow(
      /resource to start.*maxmem/,
    );
  });

  it('refuses a bad guest to start, naming the field and value', () => {
    const u = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
    u.addNode('n1', { cpu: 0, maxcpu: 4, mem: 0, maxmem: 8 });
    expect(() => u.scoreNodesToStart({ cpu: 1, maxcpu: Number.NaN, mem: 1, maxmem: 1 })).toThrow(
      /resource to start.*maxcpu.*NaN/,
    );
    expect(() => u.scoreNodesToStart({ cpu: 1, maxcpu: 1, mem: -1, maxmem: 1 })).toThrow(/resource to start.*mem.*-1/);
  });
});
