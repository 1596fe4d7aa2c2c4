import { describe, expect, it } from 'vitest';
import { ClusterUsage, type MigrationCandidate, type NodeStats, type ResourceStats, UsageError } from './index';
import {
  addRunningResource,
  referenceBestBalancingMigrations,
  referenceImbalanceOf,
  removeRunningResource,
  referenceNodeImbalance,
  referenceScoreNodesToStart,
  referenceCriteria,
} from './reference';
import { SCHEDULER_CRITERIA } from './kernels';
import { scoreAlternatives } from '@poise/topsis';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** Spec §4.6 fixtures: the same usage on homogeneous and heterogeneous nodes. */
const usage = [
  { cpu: 1.7, mem: 12334 * MIB },
  { cpu: 15.184, mem: 529 * MIB },
  { cpu: 5.2, mem: 9381 * MIB },
];
const fixtures: Record<'homogeneous' | 'heterogeneous', NodeStats[]> = {
  homogeneous: usage.map((u) => ({ ...u, maxcpu: 16, maxmem: 64 * GIB })),
  heterogeneous: [
    { ...usage[0]!, maxcpu: 16, maxmem: 128 * GIB },
    { ...usage[1]!, maxcpu: 32, maxmem: 96 * GIB },
    { ...usage[2]!, maxcpu: 24, maxmem: 64 * GIB },
  ],
};

/** A dynamic usage (identity aggregation) with vm:101 running on node1 (its usage is in node1's stats). */
function fixture(name: keyof typeof fixtures, metric: 'raw' | 'normalized' = 'raw'): ClusterUsage {
  const u = new ClusterUsage({ aggregation: 'dynamic', metric });
  fixtures[name].forEach((stats, i) => u.addNode(`node${i + 1}`, stats));
  u.addResource('vm:101', {
    stats: { cpu: 0.7, maxcpu: 4, mem: 8 * GIB, maxmem: 16 * GIB },
    state: 'started',
    placement: { current: 'node1' },
  });
  return u;
}

const candidate: MigrationCandidate = { leader: 'vm:101', resources: ['vm:101'], targets: ['node2', 'node3'] };

describe('nodeImbalance (spec §4.6)', () => {
  it.each([
    ['homogeneous', 'raw', 0.4893954724628247],
    ['homogeneous', 'normalized', 0.3460548572604576],
    ['heterogeneous', 'raw', 0.33026013056867354],
    ['heterogeneous', 'normalized', 0.23352917788066363],
  ] as const)('%s, %s', (name, metric, expected) => {
    const u = fixture(name, metric);
    expect(u.nodeImbalance()).toBe(expected);
    expect(referenceNodeImbalance(u.snapshot(), metric)).toBe(expected);
  });

  it('is 0 for an empty cluster and for identical nodes', () => {
    const u = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
    expect(u.nodeImbalance()).toBe(0);
    for (const n of ['a', 'b', 'c']) u.addNode(n, { cpu: 0, maxcpu: 8, mem: 0, maxmem: 16 * GIB });
    expect(u.nodeImbalance()).toBe(0);
    for (const n of ['a', 'b', 'c']) {
      u.addResource(`vm:${n}`, {
        stats: { cpu: 2, maxcpu: 2, mem: 4 * GIB, maxmem: 4 * GIB },
        state: 'started',
        placement: { current: n },
      });
    }
    // every node (2/8 + 4/16) / 2 = 0.25 exactly → sd 0
    expect(u.nodeImbalance()).toBe(0);
  });
});

describe('bestBalancingMigrations (spec §4.6)', () => {
  it.each([
    // vm:101 (0.7 cores, 8 GiB) leaves node1; raw CV after the move, truncated to 15 digits
    [
      'homogeneous',
      [
        ['node3', 0.597287465866405],
        ['node2', 0.723982869039761],
      ],
    ],
    // spec: raw 0.525031850557711 → trunc(525031850557711.0x)/1e15 prints 0.52503185055771
    [
      'heterogeneous',
      [
        ['node3', 0.52503185055771],
        ['node2', 0.579417704060553],
      ],
    ],
  ] as const)('bruteforce ranks node3 before node2 (%s)', (name, expected) => {
    const u = fixture(name);
    const raw = {
      homogeneous: [0.5972874658664057, 0.7239828690397611],
      heterogeneous: [0.525031850557711, 0.5794177040605537],
    }[name];
    const after = (target: number) => {
      const stats = fixtures[name].map((s) => ({ ...s }));
      removeRunningResource(stats[0]!, { cpu: 0.7, mem: 8 * GIB });
      addRunningResource(stats[target]!, { cpu: 0.7, mem: 8 * GIB });
      return referenceImbalanceOf(stats, 'raw');
    };
    expect([after(2), after(1)]).toEqual(raw);
    const got = u.bestBalancingMigrations([candidate], 'bruteforce', 2);
    expect(got.map((m) => [m.target, m.imbalance])).toEqual(expected);
    expect(got.every((m) => m.sid === 'vm:101' && m.source === 'node1')).toBe(true);
    expect(referenceBestBalancingMigrations(u.snapshot(), [candidate], 'bruteforce', 2, 'raw')).toEqual(got);
  });

  it.each(['homogeneous', 'heterogeneous'] as const)('topsis ranks node2 before node3 (%s)', (name) => {
    const u = fixture(name);
    const got = u.bestBalancingMigrations([candidate], 'topsis', 2);
    expect(got.map((m) => m.target)).toEqual(['node2', 'node3']);
    // the reported imbalance is still the (truncated) CV of the state after the move
    expect(got[0]!.imbalance).toBe(name === 'homogeneous' ? 0.723982869039761 : 0.579417704060553);
    expect(referenceBestBalancingMigrations(u.snapshot(), [candidate], 'topsis', 2, 'raw')).toEqual(got);
  });

  it('limit 1 returns only the best', () => {
    expect(
      fixture('homogeneous')
        .bestBalancingMigrations([candidate], 'bruteforce', 1)
        .map((m) => m.target),
    ).toEqual(['node3']);
  });

  it.each([
    ['absent leader', { leader: 'vm:999', resources: ['vm:999'], targets: ['node2'] }],
    ['absent member', { leader: 'vm:101', resources: ['vm:101', 'vm:998'], targets: ['node2'] }],
    ['unknown target', { leader: 'vm:101', resources: ['vm:101'], targets: ['node9'] }],
  ])('rejects an %s', (_name, bad) => {
    expect(() => fixture('homogeneous').bestBalancingMigrations([bad], 'bruteforce', 1)).toThrowError(UsageError);
  });

  it('rejects a moving member', () => {
    const u = fixture('homogeneous');
    u.setPlacement('vm:101', { current: 'node1', target: 'node2' });
    expect(() => u.bestBalancingMigrations([candidate], 'bruteforce', 1)).toThrowError(/not stationary/);
  });
});

describe('scoreNodesToStart (spec §4.6 start ranking, static aggregation)', () => {
  const resources: Record<string, ResourceStats> = {
    'heavy memory': { cpu: 1, maxcpu: 1, mem: 12 * GIB, maxmem: 12 * GIB },
    'heavy cpu': { cpu: 12, maxcpu: 12, mem: 0, maxmem: 0 },
    unlimited: { cpu: 0, maxcpu: 0, mem: 0, maxmem: 0 },
    combined: { cpu: 12, maxcpu: 12, mem: 12 * GIB, maxmem: 12 * GIB },
  };
  it.each([
    ['homogeneous', 'heavy memory', ['node2', 'node3', 'node1']],
    ['homogeneous', 'heavy cpu', ['node1', 'node3', 'node2']],
    ['homogeneous', 'unlimited', ['node1', 'node3', 'node2']],
    ['homogeneous', 'combined', ['node2', 'node3', 'node1']],
    ['heterogeneous', 'heavy memory', ['node2', 'node1', 'node3']],
    ['heterogeneous', 'heavy cpu', ['node3', 'node2', 'node1']],
    ['heterogeneous', 'unlimited', ['node1', 'node3', 'node2']],
    ['heterogeneous', 'combined', ['node2', 'node1', 'node3']],
  ] as const)('%s, %s → %j', (name, resource, ranking) => {
    // the fixture usage as node base stats; static aggregation adds nothing else here
    const u = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
    fixtures[name].forEach((stats, i) => u.addNode(`node${i + 1}`, stats));
    const scores = u.scoreNodesToStart(resources[resource]!);
    const ranked = [...scores].sort((a, b) => b.score - a.score).map((s) => s.node);
    expect(ranked).toEqual(ranking);
    expect(referenceScoreNodesToStart(u.snapshot(), resources[resource]!)).toEqual(scores);
  });

  it('basic mode counts resources on both sides of a move (lower is better)', () => {
    const u = new ClusterUsage({ aggregation: 'basic', metric: 'raw' });
    for (const n of ['node1', 'node2', 'node3']) u.addNode(n, { cpu: 0, maxcpu: 4, mem: 0, maxmem: GIB });
    const stats = { cpu: 1, maxcpu: 1, mem: 1, maxmem: 1 };
    u.addResource('vm:1', { stats, state: 'started', placement: { current: 'node1' } });
    u.addResource('vm:2', { stats, state: 'started', placement: { current: 'node1', target: 'node3' } });
    // node1: vm:1 + vm:2 = 2; node2: 0; node3: vm:2 (target) = 1
    expect(u.scoreNodesToStart(stats)).toEqual([
      { node: 'node1', score: 2 },
      { node: 'node2', score: 0 },
      { node: 'node3', score: 1 },
    ]);
    expect(referenceScoreNodesToStart(u.snapshot(), stats)).toEqual(u.scoreNodesToStart(stats));
  });
});

describe('granular operations', () => {
  it.each([
    [
      'duplicate node',
      (u: ClusterUsage) => u.addNode('node1', { cpu: 0, maxcpu: 1, mem: 0, maxmem: 1 }),
      'duplicate-node',
    ],
    ['duplicate resource', (u: ClusterUsage) => u.addResource('vm:1', spec('node1')), 'duplicate-resource'],
    ['unknown node', (u: ClusterUsage) => u.addResource('vm:2', spec('node9')), 'unknown-node'],
    [
      'move to itself',
      (u: ClusterUsage) =>
        u.addResource('vm:2', { ...spec('node1'), placement: { current: 'node1', target: 'node1' } }),
      'invalid-placement',
    ],
    ['remove a node in use', (u: ClusterUsage) => u.removeNode('node1'), 'node-in-use'],
    ['unknown resource', (u: ClusterUsage) => u.removeResource('vm:9'), 'unknown-resource'],
    [
      'imbalance in basic mode',
      () => new ClusterUsage({ aggregation: 'basic', metric: 'raw' }).nodeImbalance(),
      'unsupported-aggregation',
    ],
  ])('errors on %s', (_name, fn, code) => {
    const u = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
    u.addNode('node1', { cpu: 0, maxcpu: 4, mem: 0, maxmem: GIB });
    u.addResource('vm:1', spec('node1'));
    try {
      fn(u);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).code).toBe(code);
      expect((error as UsageError).name).toBe('UsageError');
    }
  });

  it('a move counts on both nodes in static mode, then only on the target', () => {
    const u = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
    u.addNode('a', { cpu: 0, maxcpu: 4, mem: 0, maxmem: 4 * GIB });
    u.addNode('b', { cpu: 0, maxcpu: 4, mem: 0, maxmem: 4 * GIB });
    u.addResource('vm:1', {
      stats: { cpu: 2, maxcpu: 2, mem: GIB, maxmem: GIB },
      state: 'started',
      placement: { current: 'a' },
    });
    // a: (2/4 + 1/4)/2 = 0.375, b: 0 → mean 0.1875, sd 0.1875 → cv 1
    expect(u.nodeImbalance()).toBe(1);
    u.setPlacement('vm:1', { current: 'a', target: 'b' });
    expect(u.nodeImbalance()).toBe(0);
    u.setPlacement('vm:1', { current: 'b' });
    expect(u.nodeImbalance()).toBe(1);
    expect(referenceNodeImbalance(u.snapshot(), 'raw')).toBe(1);
  });
});

function spec(node: string) {
  return {
    stats: { cpu: 1, maxcpu: 1, mem: GIB, maxmem: GIB },
    state: 'started' as const,
    placement: { current: node },
  };
}

describe('TOPSIS migration scores (spec §4.6 values)', () => {
  // The spec gives the scores rounded to 5 digits: homogeneous →node2 0.95857, →node3 0.04143;
  // heterogeneous 0.97296 / 0.02704. Each alternative is the cluster after moving vm:101
  // (0.7 cores, 8 GiB) from node1 to the target; its criteria are 1 + RMS and 1 + max of the
  // cpu and memory loads, all minimised with weights 1, 2, 5, 10 (/18).
  it.each([
    ['homogeneous', [0.95857, 0.04143]],
    ['heterogeneous', [0.97296, 0.02704]],
  ] as const)('%s', (name, expected) => {
    const rows = [1, 2].map((target) => {
      const stats = fixtures[name].map((s) => ({ ...s }));
      removeRunningResource(stats[0]!, { cpu: 0.7, mem: 8 * GIB });
      addRunningResource(stats[target]!, { cpu: 0.7, mem: 8 * GIB });
      return referenceCriteria(stats);
    });
    const scores = scoreAlternatives(SCHEDULER_CRITERIA, rows);
    expect(scores.map((s) => Number(s.toFixed(5)))).toEqual(expected);
    // the two scores are complementary here: two alternatives, each the other's ideal/anti-ideal
    expect(scores[0]! + scores[1]!).toBeCloseTo(1, 12);
  });
});

describe('README example', () => {
  it('runs and gives what the README states', () => {
    const u = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
    for (const node of ['node1', 'node2', 'node3']) u.addNode(node, { cpu: 0, maxcpu: 16, mem: 0, maxmem: 64 * GIB });
    u.addResource('vm:101', {
      stats: { cpu: 4, maxcpu: 4, mem: 8 * GIB, maxmem: 8 * GIB },
      state: 'started',
      placement: { current: 'node1' },
    });
    const scores = u.scoreNodesToStart({ cpu: 2, maxcpu: 2, mem: 4 * GIB, maxmem: 4 * GIB });
    expect(scores.map((s) => s.node)).toEqual(['node1', 'node2', 'node3']);
    expect(scores.every((s) => s.score >= 0 && s.score <= 1)).toBe(true);
    const buffer = new Float64Array(u.nodeNames().length);
    expect(u.scoreNodesToStartInto({ cpu: 2, maxcpu: 2, mem: 4 * GIB, maxmem: 4 * GIB }, buffer)).toBe(3);
    expect(Array.from(buffer)).toEqual(scores.map((s) => s.score));
    expect(u.nodeImbalance()).toBeGreaterThan(0);
    const [best] = u.bestBalancingMigrations(
      [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2', 'node3'] }],
      'bruteforce',
      1,
    );
    expect(best).toMatchObject({ sid: 'vm:101', source: 'node1', target: 'node2' });
  });
});

describe('members of a node through every placement change', () => {
  it('counts, scores and folds like the reference after swaps of current and target', () => {
    // non-dyadic cpu (0.3) keeps the nodes' sums order-dependent: any error in the member lists
    // shows in the folds compared with the reference
    const u = new ClusterUsage({ aggregation: 'static', metric: 'raw' });
    for (const n of ['a', 'b', 'c']) u.addNode(n, { cpu: 0, maxcpu: 8, mem: 0, maxmem: 16 * GIB });
    const stats = { cpu: 0.3, maxcpu: 0.3, mem: GIB, maxmem: GIB };
    u.addResource('vm:1', { stats, state: 'started', placement: { current: 'a' } });
    u.addResource('vm:2', { stats, state: 'started', placement: { current: 'a', target: 'b' } });
    u.addResource('vm:3', { stats, state: 'started', placement: { current: 'b' } });
    const check = (counts: [number, number, number]) => {
      expect(['a', 'b', 'c'].map((n) => u.nodeResourceCount(n))).toEqual(counts);
      expect(u.scoreNodesToStart(stats)).toEqual(referenceScoreNodesToStart(u.snapshot(), stats));
      expect(u.nodeImbalance()).toBe(referenceNodeImbalance(u.snapshot(), 'raw'));
    };
    check([2, 2, 0]);
    u.setPlacement('vm:2', { current: 'b', target: 'a' }); // both nodes change role
    check([2, 2, 0]);
    u.setPlacement('vm:2', { current: 'a', target: 'c' }); // a: target → current; b left, c joined
    check([2, 1, 1]);
    u.setPlacement('vm:2', { current: 'c' }); // the move completes on its target
    check([1, 1, 1]);
    u.setPlacement('vm:1', { current: 'c', target: 'a' }); // a: current → target
    check([1, 1, 2]);
    u.removeResource('vm:3');
    check([1, 0, 2]);
    u.removeNode('b');
    expect(() => u.removeNode('c')).toThrow("node 'c' still has 2 resource(s), e.g. 'vm:2'");
    expect(() => u.nodeResourceCount('b')).toThrow("node 'b' does not exist");
  });
});

describe('reading resources without a snapshot', () => {
  const u = new ClusterUsage({ aggregation: 'dynamic', metric: 'raw' });
  for (const n of ['node1', 'node2']) u.addNode(n, { cpu: 1, maxcpu: 8, mem: GIB, maxmem: 16 * GIB });
  // added out of byte order, one moving: the fold order is the order of addition
  u.addResource('vm:200', {
    stats: { cpu: 1.5, maxcpu: 2, mem: 3 * GIB, maxmem: 4 * GIB },
    state: 'started',
    placement: { current: 'node2' },
  });
  u.addResource('vm:100', {
    stats: { cpu: 0.25, maxcpu: 1, mem: GIB, maxmem: 2 * GIB },
    state: 'started',
    placement: { current: 'node1', target: 'node2' },
  });
  u.setResourceStats('vm:200', { cpu: 2, maxcpu: 2, mem: 3.5 * GIB, maxmem: 4 * GIB });

  it('forEachResource visits what the snapshot lists, in its order', () => {
    const seen: unknown[] = [];
    u.forEachResource((sid, current, cpu, maxcpu, mem, maxmem) =>
      seen.push({ sid, current, cpu, maxcpu, mem, maxmem }),
    );
    expect(seen).toEqual(u.snapshot().resources.map((r) => ({ sid: r.sid, current: r.placement.current, ...r.stats })));
    expect(seen.map((r) => (r as { sid: string }).sid)).toEqual(['vm:200', 'vm:100']);
  });

  it('currentNode and getResourceStats answer as getResource, and name an unknown resource', () => {
    for (const sid of ['vm:100', 'vm:200']) {
      expect(u.currentNode(sid)).toBe(u.getResource(sid).placement.current);
      expect(u.getResourceStats(sid)).toEqual(u.getResource(sid).stats);
    }
    expect(() => u.currentNode('vm:999')).toThrow("resource 'vm:999' does not exist");
    expect(() => u.getResourceStats('vm:999')).toThrow(UsageError);
  });
});
