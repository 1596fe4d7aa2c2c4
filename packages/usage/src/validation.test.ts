/**
 * Every public function of the usage checks its input: a bad value is a `UsageError` with a
 * code, naming the node or resource and the field, and the usage is exactly as it was after the
 * error. Within the accepted range (stats in [0, 2^64], node capacities >= 1) every result is
 * finite, including the extremes, and the fast paths still equal the reference.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Aggregation,
  ClusterUsage,
  type ImbalanceMetric,
  MAX_STAT_VALUE,
  type MigrationCandidate,
  type NodeStats,
  type ResourceSpec,
  type ResourceStats,
  UsageError,
  truncateImbalance,
} from './index';
import {
  type MutableNodeStats,
  type UsageSnapshot,
  addRunningResource,
  addStartedResource,
  referenceAggregate,
  referenceBestBalancingMigrations,
  referenceCriteria,
  referenceImbalanceOf,
  referenceNodeImbalance,
  referenceScoreNodesToStart,
  removeRunningResource,
  validateSnapshot,
} from './reference';
import { SCHEDULER_CRITERIA } from './kernels';

const GIB = 1024 ** 3;
const node = (cpu = 0, maxcpu = 16, mem = 0, maxmem = 64 * GIB): NodeStats => ({ cpu, maxcpu, mem, maxmem });
const stats = (cpu = 1, maxcpu = 1, mem = GIB, maxmem = GIB): ResourceStats => ({ cpu, maxcpu, mem, maxmem });
const on = (current: string, target?: string): ResourceSpec => ({
  stats: stats(),
  state: 'started',
  placement: target ? { current, target } : { current },
});

/** Three nodes, vm:1 and vm:2 on n1 (a bundle), vm:3 on n2, vm:4 moving n2 → n3. */
function cluster(aggregation: Aggregation = 'static'): ClusterUsage {
  const u = new ClusterUsage({ aggregation, metric: 'raw' });
  for (const name of ['n1', 'n2', 'n3']) u.addNode(name, aggregation === 'dynamic' ? node(3.3, 16, 7 * GIB) : node());
  u.addResource('vm:1', on('n1'));
  u.addResource('vm:2', { ...on('n1'), stats: stats(0.3, 2, 0.7 * GIB, 2 * GIB) });
  u.addResource('vm:3', on('n2'));
  u.addResource('vm:4', on('n2', 'n3'));
  return u;
}

const good: MigrationCandidate[] = [
  { leader: 'vm:1', resources: ['vm:1', 'vm:2'], targets: ['n2', 'n3'] },
  { leader: 'vm:3', resources: ['vm:3'], targets: ['n1', 'n3'] },
];

/** Everything a caller can observe of a usage (snapshot and every score), to compare before/after. */
function observe(u: ClusterUsage): unknown {
  const scored =
    u.aggregation === 'basic'
      ? []
      : (['bruteforce', 'topsis'] as const).map((m) => u.bestBalancingMigrations(good, m, 3));
  return {
    snapshot: u.snapshot(),
    nodes: u.nodeNames(),
    count: u.resourceCount,
    start: u.scoreNodesToStart(stats(2, 2, 2 * GIB, 2 * GIB)),
    imbalance: u.aggregation === 'basic' ? null : u.nodeImbalance(),
    scored,
  };
}

function caught(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).name).toBe('UsageError');
    return error as UsageError;
  }
  throw new Error('expected a UsageError');
}

type Case = [string, (u: ClusterUsage) => unknown, string, RegExp];

const bad = <T>(value: unknown): T => value as T;

describe('ClusterUsage rejects bad input, names it, and stays as it was', () => {
  const cases: Case[] = [
    // nodes
    ['an empty node name', (u) => u.addNode('', node()), 'invalid-argument', /addNode: a node name/],
    ['a node name that is not a string', (u) => u.addNode(bad(7), node()), 'invalid-argument', /addNode/],
    [
      'node stats that are not an object',
      (u) => u.addNode('n9', bad(null)),
      'invalid-stats',
      /node 'n9': stats must be an object/,
    ],
    ['a negative node cpu', (u) => u.addNode('n9', node(-1)), 'invalid-stats', /node 'n9': 'cpu' .* got -1/],
    ['a NaN node mem', (u) => u.addNode('n9', node(0, 16, Number.NaN)), 'invalid-stats', /node 'n9': 'mem' .* got NaN/],
    [
      'an infinite node maxmem',
      (u) => u.addNode('n9', node(0, 16, 0, Infinity)),
      'invalid-stats',
      /node 'n9': 'maxmem' .* got Infinity/,
    ],
    [
      'a node cpu above 2^64',
      (u) => u.addNode('n9', node(1e20)),
      'invalid-stats',
      /node 'n9': 'cpu' .*\[0, 2\^64\], got 100000000000000000000/,
    ],
    [
      'a string node maxcpu',
      (u) => u.addNode('n9', node(0, bad('16'))),
      'invalid-stats',
      /node 'n9': 'maxcpu' .* got '16'/,
    ],
    [
      'a node maxcpu below one core',
      (u) => u.addNode('n9', node(0, 0.5)),
      'invalid-stats',
      /node 'n9': 'maxcpu' must be at least 1/,
    ],
    [
      'a node maxmem of 0',
      (u) => u.addNode('n9', node(0, 16, 0, 0)),
      'invalid-stats',
      /node 'n9': 'maxmem' must be at least 1/,
    ],
    ['a duplicate node', (u) => u.addNode('n1', node()), 'duplicate-node', /'n1'/],
    [
      'new node stats with a negative cpu',
      (u) => u.setNodeStats('n2', node(-0.5)),
      'invalid-stats',
      /node 'n2': 'cpu'/,
    ],
    ['stats for an unknown node', (u) => u.setNodeStats('n7', node()), 'unknown-node', /'n7'/],
    ['removing a node in use', (u) => u.removeNode('n1'), 'node-in-use', /'n1'/],
    ['removing an unknown node', (u) => u.removeNode('toString'), 'unknown-node', /'toString'/],
    // resources
    ['an empty sid', (u) => u.addResource('', on('n1')), 'invalid-argument', /addResource: a resource name/],
    [
      'a spec that is not an object',
      (u) => u.addResource('vm:9', bad(undefined)),
      'invalid-argument',
      /resource 'vm:9'/,
    ],
    [
      'a negative resource maxmem',
      (u) => u.addResource('vm:9', { ...on('n1'), stats: stats(1, 1, 0, -1) }),
      'invalid-stats',
      /resource 'vm:9': 'maxmem'/,
    ],
    [
      'a NaN resource cpu',
      (u) => u.addResource('vm:9', { ...on('n1'), stats: stats(Number.NaN) }),
      'invalid-stats',
      /resource 'vm:9': 'cpu' .* got NaN/,
    ],
    [
      'an infinite resource maxcpu',
      (u) => u.addResource('vm:9', { ...on('n1'), stats: stats(1, Infinity) }),
      'invalid-stats',
      /resource 'vm:9': 'maxcpu'/,
    ],
    [
      'a resource mem of 1e300',
      (u) => u.addResource('vm:9', { ...on('n1'), stats: stats(1, 1, 1e300) }),
      'invalid-stats',
      /resource 'vm:9': 'mem' .*2\^64/,
    ],
    [
      'an unknown state',
      (u) => u.addResource('vm:9', { ...on('n1'), state: bad('running') }),
      'invalid-argument',
      /'vm:9' has unknown state 'running'/,
    ],
    [
      'a placement that is not an object',
      (u) => u.addResource('vm:9', { ...on('n1'), placement: bad(null) }),
      'invalid-placement',
      /resource 'vm:9': placement/,
    ],
    [
      'a placement on an unknown node',
      (u) => u.addResource('vm:9', on('n7')),
      'unknown-node',
      /'vm:9' is on unknown node 'n7'/,
    ],
    [
      'a move to the same node',
      (u) => u.addResource('vm:9', on('n1', 'n1')),
      'invalid-placement',
      /'vm:9' moves from 'n1' to itself/,
    ],
    ['a move to an unknown node', (u) => u.addResource('vm:9', on('n1', '__proto__')), 'unknown-node', /'__proto__'/],
    [
      'a target that is not a string',
      (u) => u.addResource('vm:9', { ...on('n1'), placement: { current: 'n1', target: bad(3) } }),
      'invalid-argument',
      /placement\.target/,
    ],
    ['a duplicate resource', (u) => u.addResource('vm:1', on('n2')), 'duplicate-resource', /'vm:1'/],
    [
      'new resource stats with a negative mem',
      (u) => u.setResourceStats('vm:3', stats(1, 1, -GIB)),
      'invalid-stats',
      /resource 'vm:3': 'mem'/,
    ],
    ['stats for an unknown resource', (u) => u.setResourceStats('vm:9', stats()), 'unknown-resource', /'vm:9'/],
    [
      'an unknown new state',
      (u) => u.setResourceState('vm:3', bad('paused')),
      'invalid-argument',
      /'vm:3' has unknown state 'paused'/,
    ],
    [
      'a new placement on an unknown node',
      (u) => u.setPlacement('vm:3', { current: 'n2', target: 'n8' }),
      'unknown-node',
      /'n8'/,
    ],
    [
      'a new placement moving to itself',
      (u) => u.setPlacement('vm:4', { current: 'n3', target: 'n3' }),
      'invalid-placement',
      /'vm:4' moves from 'n3' to itself/,
    ],
    ['removing an unknown resource', (u) => u.removeResource('constructor'), 'unknown-resource', /'constructor'/],
    // scoring
    [
      'start stats with a NaN maxmem',
      (u) => u.scoreNodesToStart(stats(1, 1, 1, Number.NaN)),
      'invalid-stats',
      /resource to start: 'maxmem'/,
    ],
    ['an unknown method', (u) => u.bestBalancingMigrations(good, bad('random'), 1), 'invalid-argument', /'random'/],
    ['a negative limit', (u) => u.bestBalancingMigrations(good, 'topsis', -1), 'invalid-argument', /limit -1/],
    ['a fractional limit', (u) => u.bestBalancingMigrations(good, 'topsis', 1.5), 'invalid-argument', /limit 1.5/],
    ['a NaN limit', (u) => u.bestBalancingMigrations(good, 'bruteforce', Number.NaN), 'invalid-argument', /limit NaN/],
    [
      'candidates that are not an array',
      (u) => u.bestBalancingMigrations(bad({}), 'bruteforce', 1),
      'invalid-argument',
      /candidates: expected an array/,
    ],
    [
      'a candidate that is null',
      (u) => u.bestBalancingMigrations([good[0]!, bad(null)], 'bruteforce', 1),
      'invalid-candidate',
      /candidates\[1\]: expected/,
    ],
    [
      'a leader that is not a string',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, leader: bad(1) }], 'bruteforce', 1),
      'invalid-candidate',
      /candidates\[0\]\.leader/,
    ],
    [
      'resources that are not an array',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, resources: bad('vm:1') }], 'topsis', 1),
      'invalid-candidate',
      /candidates\[0\]\.resources/,
    ],
    [
      'targets that are not an array',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, targets: bad('n2') }], 'topsis', 1),
      'invalid-candidate',
      /candidates\[0\]\.targets/,
    ],
    [
      'an absent leader',
      (u) => u.bestBalancingMigrations([{ leader: 'vm:9', resources: ['vm:9'], targets: ['n2'] }], 'bruteforce', 1),
      'invalid-candidate',
      /candidate leader 'vm:9' does not exist/,
    ],
    [
      'a moving leader',
      (u) => u.bestBalancingMigrations([{ leader: 'vm:4', resources: ['vm:4'], targets: ['n1'] }], 'bruteforce', 1),
      'invalid-candidate',
      /'vm:4' is not stationary/,
    ],
    [
      'the same leader twice',
      (u) => u.bestBalancingMigrations([good[1]!, good[0]!, { ...good[1]!, targets: ['n3'] }], 'bruteforce', 1),
      'invalid-candidate',
      /candidates\[2\]\.leader: candidate leader 'vm:3' is also the leader of candidates\[0\]/,
    ],
    [
      'a member twice in a bundle',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, resources: ['vm:1', 'vm:2', 'vm:1'] }], 'topsis', 1),
      'invalid-candidate',
      /candidates\[0\]\.resources\[2\]: resource 'vm:1' is listed twice/,
    ],
    [
      'a bundle without its leader',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, resources: ['vm:2'] }], 'topsis', 1),
      'invalid-candidate',
      /candidates\[0\]\.resources: the bundle of candidate 'vm:1' does not list its leader/,
    ],
    [
      'an empty bundle',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, resources: [] }], 'bruteforce', 1),
      'invalid-candidate',
      /does not list its leader/,
    ],
    [
      'a member on another node',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, resources: ['vm:1', 'vm:3'] }], 'bruteforce', 1),
      'invalid-candidate',
      /'vm:3' of candidate 'vm:1' is on 'n2', not on 'n1'/,
    ],
    [
      'a target that is the source (self-move)',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, targets: ['n1', 'n2'] }], 'bruteforce', 1),
      'invalid-candidate',
      /candidates\[0\]\.targets\[0\]: target node 'n1' is the current node of candidate 'vm:1'/,
    ],
    [
      'a self-move among sorted targets',
      (u) => u.bestBalancingMigrations([good[0]!, { ...good[1]!, targets: ['n1', 'n2', 'n3'] }], 'topsis', 1),
      'invalid-candidate',
      /candidates\[1\]\.targets\[1\]: target node 'n2'/,
    ],
    [
      'a target twice, in order',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, targets: ['n2', 'n2'] }], 'bruteforce', 1),
      'invalid-candidate',
      /candidates\[0\]\.targets\[1\]: target node 'n2' is listed twice/,
    ],
    [
      'a target twice, out of order',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, targets: ['n3', 'n2', 'n3'] }], 'topsis', 1),
      'invalid-candidate',
      /candidates\[0\]\.targets\[2\]: target node 'n3' is listed twice/,
    ],
    [
      'an unknown target',
      (u) => u.bestBalancingMigrations([{ ...good[0]!, targets: ['n2', 'valueOf'] }], 'topsis', 1),
      'unknown-node',
      /target node 'valueOf' of candidate 'vm:1' does not exist/,
    ],
  ];

  it.each(cases)('%s', (_name, fn, code, message) => {
    for (const aggregation of ['static', 'dynamic'] as const) {
      const u = cluster(aggregation);
      const before = observe(u);
      const error = caught(() => fn(u));
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
      expect(observe(u)).toEqual(before);
    }
  });

  it.each([
    ['no options', () => new ClusterUsage(bad(undefined)), 'invalid-argument', /options/],
    [
      'an unknown aggregation',
      () => new ClusterUsage({ aggregation: bad('smart'), metric: 'raw' }),
      'invalid-argument',
      /'smart'/,
    ],
    [
      'an unknown metric',
      () => new ClusterUsage({ aggregation: 'static', metric: bad('cv') }),
      'invalid-argument',
      /'cv'/,
    ],
    [
      'migrations in basic mode',
      () => new ClusterUsage({ aggregation: 'basic', metric: 'raw' }).bestBalancingMigrations([], 'topsis', 1),
      'unsupported-aggregation',
      /'basic'/,
    ],
  ] as const)('the constructor and modes: %s', (_name, fn, code, message) => {
    const error = caught(fn);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });

  it('the reference rejects every bad candidate list with the same error as the fast path', () => {
    const u = cluster('dynamic');
    let compared = 0;
    for (const [, fn] of cases) {
      const call = fn.toString();
      if (!call.includes('bestBalancingMigrations')) continue;
      compared++;
      const fast = caught(() => fn(u));
      // re-run the same arguments through the reference by intercepting the fast call
      let reference: UsageError | undefined;
      const proxy = new Proxy(u, {
        get(target, key) {
          if (key !== 'bestBalancingMigrations') return Reflect.get(target, key);
          return (c: MigrationCandidate[], m: 'topsis', l: number) => {
            reference = caught(() => referenceBestBalancingMigrations(u.snapshot(), c, m, l, 'raw'));
          };
        },
      });
      fn(proxy);
      expect(reference, call).toBeDefined();
      expect([reference!.code, reference!.message]).toEqual([fast.code, fast.message]);
    }
    expect(compared).toBeGreaterThan(20);
  });
});

describe('the usage keeps the values it checked', () => {
  it('stats whose getter changes after the first read are read once (validated copy)', () => {
    const u = cluster('static');
    let reads = 0;
    const shifty = {
      get cpu() {
        reads++;
        return reads === 1 ? 1 : Number.NaN;
      },
      maxcpu: 1,
      mem: GIB,
      maxmem: GIB,
    };
    u.addResource('vm:9', { stats: shifty, state: 'started', placement: { current: 'n3' } });
    expect(u.getResource('vm:9').stats.cpu).toBe(1);
    expect(Number.isFinite(u.nodeImbalance())).toBe(true);
    // and changing the caller's object afterwards changes nothing either
    const mutable = stats(2, 2, GIB, GIB);
    u.setResourceStats('vm:9', mutable);
    const before = observe(u);
    (mutable as { maxmem: number }).maxmem = Number.NaN;
    expect(observe(u)).toEqual(before);
  });
});

describe('self-moves are errors, documented: a caller that asks for one has a bug', () => {
  it('is rejected by both paths, and leaving the current node out is accepted', () => {
    const u = cluster();
    const selfMove = [{ leader: 'vm:3', resources: ['vm:3'], targets: ['n2'] }];
    expect(caught(() => u.bestBalancingMigrations(selfMove, 'bruteforce', 1)).code).toBe('invalid-candidate');
    expect(caught(() => referenceBestBalancingMigrations(u.snapshot(), selfMove, 'bruteforce', 1, 'raw')).code).toBe(
      'invalid-candidate',
    );
    expect(
      u.bestBalancingMigrations([{ leader: 'vm:3', resources: ['vm:3'], targets: ['n1', 'n3'] }], 'bruteforce', 5),
    ).toHaveLength(2);
  });

  it('a one-node cluster has no move at all (and no error without targets)', () => {
    const u = new ClusterUsage({ aggregation: 'static', metric: 'normalized' });
    u.addNode('only', node());
    u.addResource('vm:1', on('only'));
    expect(u.bestBalancingMigrations([{ leader: 'vm:1', resources: ['vm:1'], targets: [] }], 'topsis', 1)).toEqual([]);
    expect(u.nodeImbalance()).toBe(0);
  });
});

describe('the reference functions check their input too', () => {
  const snapshot = (): UsageSnapshot => cluster('dynamic').snapshot();
  const with_ = (
    change: (s: { aggregation: Aggregation; nodes: unknown[]; resources: unknown[] }) => void,
  ): UsageSnapshot => {
    const s = structuredClone(snapshot()) as unknown as {
      aggregation: Aggregation;
      nodes: unknown[];
      resources: unknown[];
    };
    change(s);
    return s as unknown as UsageSnapshot;
  };
  const aNode = (): MutableNodeStats => ({ cpu: 1, maxcpu: 4, mem: GIB, maxmem: 4 * GIB });

  it.each([
    ['a snapshot that is not an object', () => validateSnapshot(bad(null)), 'invalid-argument', /snapshot/],
    [
      'an unknown aggregation',
      () => validateSnapshot(with_((s) => (s.aggregation = bad('x')))),
      'invalid-argument',
      /'x'/,
    ],
    [
      'a duplicate node',
      () => validateSnapshot(with_((s) => s.nodes.push(s.nodes[0]))),
      'duplicate-node',
      /snapshot\.nodes\[3\]: node 'n1'/,
    ],
    [
      'a node with maxcpu 0',
      () => validateSnapshot(with_((s) => ((s.nodes[1] as { stats: NodeStats }).stats = node(0, 0)))),
      'invalid-stats',
      /snapshot\.nodes\[1\]: node 'n2': 'maxcpu'/,
    ],
    [
      'a node without a name',
      () => validateSnapshot(with_((s) => ((s.nodes[0] as { name: string }).name = ''))),
      'invalid-argument',
      /snapshot\.nodes\[0\]\.name/,
    ],
    [
      'a duplicate sid',
      () => validateSnapshot(with_((s) => s.resources.push(s.resources[0]))),
      'duplicate-resource',
      /snapshot\.resources\[4\]: resource 'vm:1'/,
    ],
    [
      'a resource with a NaN mem',
      () =>
        validateSnapshot(with_((s) => ((s.resources[2] as { stats: ResourceStats }).stats = stats(1, 1, Number.NaN)))),
      'invalid-stats',
      /snapshot\.resources\[2\]: resource 'vm:3': 'mem'/,
    ],
    [
      'a resource on an unknown node',
      () =>
        validateSnapshot(
          with_((s) => (((s.resources[0] as ResourceSpec).placement as { current: string }).current = 'n9')),
        ),
      'unknown-node',
      /'n9'/,
    ],
    ['an unknown purpose', () => referenceAggregate(snapshot(), bad('audit')), 'invalid-argument', /'audit'/],
    ['an unknown metric', () => referenceNodeImbalance(snapshot(), bad('x')), 'invalid-argument', /'x'/],
    [
      'start stats with a negative cpu',
      () => referenceScoreNodesToStart(snapshot(), stats(-1)),
      'invalid-stats',
      /resource to start: 'cpu'/,
    ],
    ['criteria of no node', () => referenceCriteria([]), 'invalid-argument', /at least one node/],
    [
      'criteria with maxcpu 0',
      () => referenceCriteria([{ ...aNode(), maxcpu: 0 }]),
      'invalid-stats',
      /stats\[0\]\.maxcpu/,
    ],
    [
      'criteria of a load that overflows',
      () => referenceCriteria([{ ...aNode(), cpu: Number.MAX_VALUE, maxcpu: 1, mem: Number.MAX_VALUE, maxmem: 1 }]),
      'invalid-stats',
      /stats\[0\]: the node load/,
    ],
    [
      'an imbalance of a NaN cpu',
      () => referenceImbalanceOf([{ ...aNode(), cpu: Number.NaN }], 'raw'),
      'invalid-stats',
      /stats\[0\]\.cpu/,
    ],
    [
      'an imbalance under an unknown metric',
      () => referenceImbalanceOf([aNode()], bad('x')),
      'invalid-argument',
      /'x'/,
    ],
  ] as const)('%s', (_name, fn, code, message) => {
    const error = caught(fn);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });

  it.each([
    [
      'adding a started resource with a NaN maxmem',
      (n: MutableNodeStats) => addStartedResource(n, stats(1, 1, 1, Number.NaN)),
      /'maxmem'/,
    ],
    [
      'adding a running resource with a negative cpu',
      (n: MutableNodeStats) => addRunningResource(n, { cpu: -1, mem: 0 }),
      /'cpu'/,
    ],
    [
      'adding usage that overflows',
      (n: MutableNodeStats) => addRunningResource(n, { cpu: Number.MAX_VALUE, mem: 0 }),
      /overflows/,
    ],
    [
      'removing a resource with an infinite mem',
      (n: MutableNodeStats) => removeRunningResource(n, { cpu: 0, mem: Infinity }),
      /'mem'/,
    ],
    [
      'a node with a negative mem',
      (n: MutableNodeStats) => addRunningResource({ ...n, mem: -1 }, { cpu: 0, mem: 0 }),
      /node\[0\]\.mem/,
    ],
  ])('the mutators: %s, leaving the node as it was', (_name, fn, message) => {
    const n = { cpu: Number.MAX_VALUE / 2, maxcpu: 4, mem: GIB, maxmem: 4 * GIB };
    const before = { ...n };
    const error = caught(() => fn(n));
    expect(error.code).toBe('invalid-stats');
    expect(error.message).toMatch(message);
    expect(n).toEqual(before);
  });
});

// ---- properties ----

/** Stats from the finite extremes of the accepted range. */
const EXTREME_STATS = [0, 5e-324, 1e-300, 1e-10, 0.3, 1, 7, 2 ** 32, 2 ** 53 - 1, 2 ** 53 + 2, 1e18, MAX_STAT_VALUE];
/** Tiny stats only: every load is subnormal or near it, where the plain imbalance fold broke. */
const TINY_STATS = [0, 5e-324, 1e-323, 3e-320, 1e-310, 1e-300];
const statValue = fc.oneof(
  fc.constantFrom(...EXTREME_STATS),
  fc.double({ min: 0, max: MAX_STAT_VALUE, noNaN: true }),
  fc.integer({ min: 0, max: 64 }),
);
const tinyValue = fc.constantFrom(...TINY_STATS);
const capacity = fc.oneof(
  fc.constantFrom(1, 1.5, 16, 2 ** 40, 2 ** 53, MAX_STAT_VALUE),
  fc.double({ min: 1, max: MAX_STAT_VALUE, noNaN: true }),
);
const tinyCapacity = fc.constantFrom(1, 2, 3);
/** Node stats: from the whole range, or (a quarter of the cases) all tiny. */
function nodeStatsOf(tiny: boolean): fc.Arbitrary<NodeStats> {
  return tiny
    ? fc.record({ cpu: tinyValue, maxcpu: tinyCapacity, mem: tinyValue, maxmem: tinyCapacity })
    : fc.record({ cpu: statValue, maxcpu: capacity, mem: statValue, maxmem: capacity });
}
function resourceStatsOf(tiny: boolean): fc.Arbitrary<ResourceStats> {
  const v = tiny ? tinyValue : statValue;
  return fc.record({ cpu: v, maxcpu: v, mem: v, maxmem: v });
}
const resourceStats = resourceStatsOf(false);

interface Op {
  kind: 'add' | 'remove' | 'stats' | 'state' | 'place' | 'node';
  sid: number;
  node: number;
  other: number;
  stats: ResourceStats;
  nodeStats: NodeStats;
  state: 'stopped' | 'starting' | 'started' | 'bogus';
  poison: number; // 0: leave valid; else make the operation invalid in one of several ways
}

function opOf(tiny: boolean): fc.Arbitrary<Op> {
  return fc.record({
    kind: fc.constantFrom('add', 'add', 'remove', 'stats', 'state', 'place', 'node'),
    sid: fc.nat({ max: 7 }),
    node: fc.nat({ max: 3 }),
    other: fc.nat({ max: 3 }),
    stats: resourceStatsOf(tiny),
    nodeStats: nodeStatsOf(tiny),
    state: fc.constantFrom('stopped', 'starting', 'started', 'bogus'),
    poison: fc.oneof(fc.constant(0), fc.constant(0), fc.nat({ max: 5 })),
  });
}

const NODES = ['n1', 'n2', 'n3', 'toString'];
const POISONED_STATS: ResourceStats[] = [
  stats(-1),
  stats(1, Number.NaN),
  stats(1, 1, Infinity),
  stats(1, 1, 1, 2 ** 65),
  stats(bad('1')),
];

/**
 * Applies `o` to `u`, poisoned or not; returns whether it was applied. A poisoned or otherwise
 * invalid operation must throw a UsageError; a valid one must not.
 */
function apply(u: ClusterUsage, o: Op): boolean {
  const sid = `vm:${o.sid}`;
  const name = NODES[o.node]!;
  const other = NODES[o.other]!;
  const s = o.poison ? POISONED_STATS[o.poison % POISONED_STATS.length]! : o.stats;
  const run = (fn: () => void): boolean => {
    try {
      fn();
      return true;
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return false;
    }
  };
  switch (o.kind) {
    case 'add':
      return run(() =>
        u.addResource(sid, {
          stats: s,
          state: o.state === 'bogus' ? 'started' : o.state,
          placement: o.poison === 3 ? { current: name, target: name } : { current: name },
        }),
      );
    case 'remove':
      return run(() => u.removeResource(sid));
    case 'stats':
      return run(() => u.setResourceStats(sid, s));
    case 'state':
      return run(() => u.setResourceState(sid, o.state as 'started'));
    case 'place':
      return run(() => u.setPlacement(sid, name === other ? { current: name } : { current: name, target: other }));
    case 'node':
      return run(() => u.setNodeStats(name, o.poison ? { ...o.nodeStats, maxcpu: 0.25 } : o.nodeStats));
  }
}

function finite(value: unknown): boolean {
  return (
    JSON.stringify(value, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? 'NOT FINITE' : v)).includes(
      'NOT FINITE',
    ) === false
  );
}

/** Every stationary resource on its own, to every other node. */
function allMoves(u: ClusterUsage): MigrationCandidate[] {
  const names = u.nodeNames();
  return u
    .snapshot()
    .resources.filter((r) => r.placement.target === undefined)
    .map((r) => ({ leader: r.sid, resources: [r.sid], targets: names.filter((n) => n !== r.placement.current) }));
}

describe('properties on the finite extremes of the accepted range', () => {
  // a quarter of the clusters have tiny stats only (subnormal loads), the rest the whole range
  const setup = fc.oneof(fc.constant(false), fc.constant(false), fc.constant(false), fc.constant(true)).chain((tiny) =>
    fc.record({
      aggregation: fc.constantFrom<Aggregation>('static', 'dynamic'),
      metric: fc.constantFrom<ImbalanceMetric>('raw', 'normalized'),
      nodes: fc.array(nodeStatsOf(tiny), { minLength: 4, maxLength: 4 }),
      ops: fc.array(opOf(tiny), { maxLength: 30 }),
    }),
  );

  it('add/remove/set sequences with rejections in between: a rejected call changes nothing', () => {
    fc.assert(
      fc.property(setup, ({ aggregation, metric, nodes, ops }) => {
        const u = new ClusterUsage({ aggregation, metric });
        const replay = new ClusterUsage({ aggregation, metric });
        NODES.forEach((name, i) => {
          u.addNode(name, nodes[i]!);
          replay.addNode(name, nodes[i]!);
        });
        for (const o of ops) {
          if (apply(u, o)) expect(apply(replay, o)).toBe(true);
          // the usage equals one that never saw the rejected operations
          expect(u.snapshot()).toEqual(replay.snapshot());
        }
        const start = stats(2, 2, 2 * GIB, 2 * GIB);
        expect(u.scoreNodesToStart(start)).toEqual(replay.scoreNodesToStart(start));
        expect(u.nodeImbalance()).toBe(replay.nodeImbalance());
      }),
      { numRuns: 300 },
    );
  });

  it('every result is finite, and the fast paths equal the reference, bit for bit', () => {
    fc.assert(
      fc.property(setup, resourceStats, ({ aggregation, metric, nodes, ops }, start) => {
        const u = new ClusterUsage({ aggregation, metric });
        NODES.forEach((name, i) => u.addNode(name, nodes[i]!));
        for (const o of ops) apply(u, { ...o, poison: 0, state: o.state === 'bogus' ? 'started' : o.state });
        const snapshot = u.snapshot();
        const scores = u.scoreNodesToStart(start);
        expect(finite(scores)).toBe(true);
        expect(scores).toEqual(referenceScoreNodesToStart(snapshot, start));
        const imbalance = u.nodeImbalance();
        expect(Number.isFinite(imbalance)).toBe(true);
        expect(imbalance).toBe(referenceNodeImbalance(snapshot, metric));
        const candidates = allMoves(u);
        for (const method of ['bruteforce', 'topsis'] as const) {
          for (const limit of [1, 3]) {
            const fast = u.bestBalancingMigrations(candidates, method, limit);
            expect(finite(fast)).toBe(true);
            expect(fast).toEqual(referenceBestBalancingMigrations(snapshot, candidates, method, limit, metric));
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('adding then removing a resource restores every result bit for bit', () => {
    fc.assert(
      fc.property(setup, resourceStats, fc.nat({ max: 3 }), ({ aggregation, metric, nodes, ops }, extra, at) => {
        const u = new ClusterUsage({ aggregation, metric });
        NODES.forEach((name, i) => u.addNode(name, nodes[i]!));
        for (const o of ops) apply(u, { ...o, poison: 0 });
        const before = observeAll(u);
        u.addResource('vm:extra', { stats: extra, state: 'starting', placement: { current: NODES[at]! } });
        u.removeResource('vm:extra');
        expect(observeAll(u)).toEqual(before);
      }),
      { numRuns: 300 },
    );
  });

  it('the order nodes are added in does not matter (they are sorted by name)', () => {
    fc.assert(
      fc.property(setup, fc.integer(), ({ aggregation, metric, nodes, ops }, seed) => {
        const build = (order: number[]) => {
          const u = new ClusterUsage({ aggregation, metric });
          for (const i of order) u.addNode(NODES[i]!, nodes[i]!);
          for (const o of ops) apply(u, { ...o, poison: 0 });
          return u;
        };
        const shift = Math.abs(seed) % 4;
        const order = [0, 1, 2, 3].map((i) => (i + shift) % 4).reverse();
        expect(observeAll(build(order))).toEqual(observeAll(build([0, 1, 2, 3])));
      }),
      { numRuns: 200 },
    );
  });
});

function observeAll(u: ClusterUsage): unknown {
  const candidates = allMoves(u);
  return {
    snapshot: u.snapshot(),
    start: u.scoreNodesToStart(stats(1, 0, GIB, GIB)),
    imbalance: u.nodeImbalance(),
    moves: (['bruteforce', 'topsis'] as const).map((m) => u.bestBalancingMigrations(candidates, m, 2)),
  };
}

describe('tiny usage is measured, not lost to underflow', () => {
  it('a node with 1e-310 cores in use against an idle one is as imbalanced as any one-sided cluster', () => {
    // loads (1e-310/1 + 0)/2 = 5e-311 and 0: the plain fold squares 2.5e-311 to 0 and said 0;
    // raw CV of [x, 0] is 1 for any x > 0, normalised 1/√1 = 1
    for (const metric of ['raw', 'normalized'] as const) {
      const u = new ClusterUsage({ aggregation: 'dynamic', metric });
      u.addNode('a', node(1e-310, 1, 0, 1));
      u.addNode('b', node(0, 1, 0, 1));
      expect(u.nodeImbalance()).toBe(1);
      expect(referenceNodeImbalance(u.snapshot(), metric)).toBe(1);
    }
  });
});

describe('kernels and constants', () => {
  it('truncateImbalance stays finite for every finite input', () => {
    // x·1e15 overflows for x ≥ 1.8e293: x itself is returned
    expect(truncateImbalance(1e300)).toBe(1e300);
    expect(truncateImbalance(Number.MAX_VALUE)).toBe(Number.MAX_VALUE);
    expect(truncateImbalance(0.7231749488916931)).toBe(0.723174948891693);
  });

  it('changing the exported SCHEDULER_CRITERIA changes no score (the package scores with its own copy)', () => {
    const u = cluster();
    const before = observe(u);
    const saved = Float64Array.from(SCHEDULER_CRITERIA.weights);
    SCHEDULER_CRITERIA.weights.set([1, 0, 0, 0]);
    try {
      expect(observe(u)).toEqual(before);
    } finally {
      SCHEDULER_CRITERIA.weights.set(saved);
    }
  });
});
