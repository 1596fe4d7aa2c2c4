import { describe, expect, it } from 'vitest';
import {
  buildUsageModel,
  clusterMotionInFlight,
  compileSnapshotRules,
  describeLeftOut,
  migrationCandidates,
  modelWarnings,
  nonHaCandidates,
  restrictToModel,
  USAGE_VALUE_MAX,
} from './model';
import type { HaRule } from '../cluster/port';
import { GIB, haGuest, node, plainGuest, snapshot } from '../testing/support';

const NODES = [node('node1'), node('node2'), node('node3')];

// These hold for any candidate function that applies affinity rules too: the snapshots carry
// no rules, so every started HA resource stands alone and may go to every other usable node.
describe('migrationCandidates', () => {
  it.each([
    [
      'a started HA resource may go to every other usable node',
      [haGuest('vm:101', 'node1')],
      [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2', 'node3'] }],
    ],
    [
      'one bundle per resource, leaders in byte order',
      [haGuest('vm:102', 'node2'), haGuest('ct:200', 'node1'), haGuest('vm:1000', 'node3')],
      [
        { leader: 'ct:200', resources: ['ct:200'], targets: ['node2', 'node3'] },
        { leader: 'vm:1000', resources: ['vm:1000'], targets: ['node1', 'node2'] },
        { leader: 'vm:102', resources: ['vm:102'], targets: ['node1', 'node3'] },
      ],
    ],
    ['a moving resource is no candidate', [haGuest('vm:101', 'node1', { state: 'migrate', target: 'node2' })], []],
    [
      'a stopped, starting, frozen or failed resource is no candidate',
      [
        haGuest('vm:101', 'node1', { state: 'stopped', running: false }),
        haGuest('vm:102', 'node1', { state: 'request_start' }),
        haGuest('vm:103', 'node1', { state: 'freeze' }),
        haGuest('vm:104', 'node1', { state: 'error' }),
      ],
      [],
    ],
    [
      'a resource opted out (auto-rebalance: 0) is no candidate',
      [haGuest('vm:101', 'node1', { autoRebalance: false })],
      [],
    ],
    [
      'a locked guest or a template is no candidate',
      [haGuest('vm:101', 'node1', { lock: 'backup' }), haGuest('vm:102', 'node1', { template: true })],
      [],
    ],
    ['a guest that is not an HA resource is no HA candidate', [plainGuest('vm:101', 'node1')], []],
  ])('%s', (_name, guests, expected) => {
    expect(migrationCandidates(snapshot(NODES, guests))).toEqual(expected);
  });

  it('offline and maintenance nodes are neither sources nor targets', () => {
    const nodes = [
      node('node1'),
      node('node2', { online: false }),
      node('node3', { maintenance: true }),
      node('node4'),
    ];
    const guests = [haGuest('vm:101', 'node1'), haGuest('vm:102', 'node2'), haGuest('vm:103', 'node3')];
    expect(migrationCandidates(snapshot(nodes, guests))).toEqual([
      { leader: 'vm:101', resources: ['vm:101'], targets: ['node4'] },
    ]);
  });

  it('a resource with no other usable node is no candidate', () => {
    expect(
      migrationCandidates(snapshot([node('node1'), node('node2', { online: false })], [haGuest('vm:101', 'node1')])),
    ).toEqual([]);
  });
});

describe('migrationCandidates with HA rules (the query the HA manager balances with)', () => {
  const FOUR = [node('node1'), node('node2'), node('node3'), node('node4')];
  const together: HaRule = {
    type: 'resource-affinity',
    id: 'together',
    resources: ['vm:101', 'vm:102'],
    affinity: 'positive',
  };
  const apart: HaRule = {
    type: 'resource-affinity',
    id: 'apart',
    resources: ['vm:101', 'vm:301'],
    affinity: 'negative',
  };
  const strictHome: HaRule = {
    type: 'node-affinity',
    id: 'home',
    resources: ['vm:201'],
    nodes: [
      { node: 'node1', priority: 0 },
      { node: 'node2', priority: 0 },
    ],
    strict: true,
  };
  const preferred: HaRule = {
    type: 'node-affinity',
    id: 'pref',
    resources: ['vm:201'],
    nodes: [
      { node: 'node3', priority: 2 },
      { node: 'node4', priority: 1 },
    ],
    strict: false,
  };

  it.each<
    [string, HaRule[], ReturnType<typeof haGuest>[], { leader: string; resources: string[]; targets: string[] }[]]
  >([
    [
      'positive affinity: one bundle led by the first sid, moving together',
      [together],
      [haGuest('vm:101', 'node1'), haGuest('vm:102', 'node1')],
      [{ leader: 'vm:101', resources: ['vm:101', 'vm:102'], targets: ['node2', 'node3', 'node4'] }],
    ],
    [
      'positive partners on different nodes: no bundle at all',
      [together],
      [haGuest('vm:101', 'node1'), haGuest('vm:102', 'node2')],
      [],
    ],
    [
      'a moving partner: the bundle waits',
      [together],
      [haGuest('vm:101', 'node1'), haGuest('vm:102', 'node1', { state: 'migrate', target: 'node2' })],
      [],
    ],
    [
      "negative affinity: never to the partner's node (nor where it moves to)",
      [apart],
      [haGuest('vm:101', 'node1'), haGuest('vm:301', 'node2', { state: 'migrate', target: 'node3' })],
      [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node4'] }],
    ],
    // strict node1, node2 (priority 0 both): only the other listed node
    [
      'strict node affinity: only the listed nodes',
      [strictHome],
      [haGuest('vm:201', 'node1')],
      [{ leader: 'vm:201', resources: ['vm:201'], targets: ['node2'] }],
    ],
    // non-strict node3:2, node4:1, others -1: the highest-priority class only (node3); HA would move it back from anywhere else
    [
      'non-strict node affinity: the highest-priority online class only',
      [preferred],
      [haGuest('vm:201', 'node1')],
      [{ leader: 'vm:201', resources: ['vm:201'], targets: ['node3'] }],
    ],
    ['already in its highest-priority class: no candidate', [preferred], [haGuest('vm:201', 'node3')], []],
    [
      'a partner opted out (auto-rebalance: 0) or locked keeps the whole bundle',
      [together],
      [haGuest('vm:101', 'node1'), haGuest('vm:102', 'node1', { autoRebalance: false })],
      [],
    ],
  ])('%s', (_name, rules, guests, expected) => {
    expect(migrationCandidates(snapshot(FOUR, guests, { rules }))).toEqual(expected);
  });

  it('a node in maintenance is not a target, even for the highest-priority class', () => {
    const nodes = [node('node1'), node('node2'), node('node3', { maintenance: true }), node('node4')];
    // node3 is in maintenance: the best online class left is node4 (priority 1)
    expect(migrationCandidates(snapshot(nodes, [haGuest('vm:201', 'node1')], { rules: [preferred] }))).toEqual([
      { leader: 'vm:201', resources: ['vm:201'], targets: ['node4'] },
    ]);
  });

  it('rules the feasibility checks drop are reported and not applied', () => {
    const lonely: HaRule = { type: 'resource-affinity', id: 'lonely', resources: ['vm:101'], affinity: 'positive' };
    const snap = snapshot(FOUR, [haGuest('vm:101', 'node1')], { rules: [lonely] });
    expect(compileSnapshotRules(snap).dropped).toEqual([
      "Drop rule 'lonely', because rule is ineffective as there are less than two resources.",
    ]);
    expect(migrationCandidates(snap)).toEqual([
      { leader: 'vm:101', resources: ['vm:101'], targets: ['node2', 'node3', 'node4'] },
    ]);
  });
});

describe('nonHaCandidates', () => {
  it('running guests that are not HA resources, unlocked, not templates', () => {
    const guests = [
      plainGuest('vm:201', 'node1'),
      plainGuest('vm:202', 'node1', { running: false }),
      plainGuest('vm:203', 'node1', { lock: 'migrate' }),
      haGuest('vm:101', 'node1'),
    ];
    expect(nonHaCandidates(snapshot(NODES, guests))).toEqual([
      { leader: 'vm:201', resources: ['vm:201'], targets: ['node2', 'node3'] },
    ]);
  });
});

describe('buildUsageModel', () => {
  it('uses the measured node stats and the normalised imbalance', () => {
    // node1: cpu 8/16 = 0.5, mem 32/64 = 0.5 → load 0.5; node2: load (4/16 + 16/64)/2 = 0.25
    // mean 0.375, population sd 0.125, CV 1/3, normalised CV / sqrt(2 − 1) = 1/3
    const model = buildUsageModel(
      snapshot([node('node1', { cpu: 8, mem: 32 * GIB }), node('node2', { cpu: 4, mem: 16 * GIB })], []),
    );
    expect(model.nodes).toEqual(['node1', 'node2']);
    expect(model.usage.nodeImbalance()).toBeCloseTo(1 / 3, 15);
    expect(model.loads.get('node1')).toEqual({ load: 0.5, cpu: 0.5, mem: 0.5 });
    expect(model.problems).toEqual([]);
  });

  it('all load on one of three nodes is the normalised maximum, 1 (raw CV would be sqrt 2)', () => {
    const model = buildUsageModel(
      snapshot([node('node1', { cpu: 8, mem: 32 * GIB }), node('node2'), node('node3')], []),
    );
    expect(model.usage.nodeImbalance()).toBeCloseTo(1, 15);
  });

  it('adds started and moving HA resources and running non-HA guests; a moving one counts on both nodes', () => {
    const guests = [
      haGuest('vm:101', 'node1'),
      haGuest('vm:102', 'node1', { state: 'migrate', target: 'node2' }),
      haGuest('vm:103', 'node1', { state: 'stopped', running: false }),
      plainGuest('vm:201', 'node2'),
      plainGuest('vm:202', 'node2', { running: false }),
    ];
    const model = buildUsageModel(snapshot(NODES, guests));
    expect(['vm:101', 'vm:102', 'vm:103', 'vm:201', 'vm:202'].map((s) => model.usage.hasResource(s))).toEqual([
      true,
      true,
      false,
      true,
      false,
    ]);
    expect(model.usage.getResource('vm:102').placement).toEqual({ current: 'node1', target: 'node2' });
  });

  it('leaves out a node or guest with a value out of range, names owner, field and value, and marks the view partial', () => {
    const nodes = [node('node1'), node('node2', { maxmem: 0 }), node('node3')];
    const guests = [
      haGuest('vm:101', 'node1', { stats: { cpu: -1, maxcpu: 4, mem: 0, maxmem: 8 * GIB, memhost: undefined } }),
      haGuest('vm:102', 'node2'),
      haGuest('vm:103', 'node3'),
    ];
    const model = buildUsageModel(snapshot(nodes, guests));
    expect(model.nodes).toEqual(['node1', 'node3']);
    expect(model.outOfRange).toEqual([
      { owner: "node 'node2'", field: 'maxmem', value: 0, range: '1..2^53 bytes' },
      { owner: "guest 'vm:101'", field: 'cpu', value: -1, range: '0..2^53 cores' },
    ]);
    expect(model.leftOut).toEqual([{ node: 'node2', reason: "'maxmem' 0 (not in 1..2^53 bytes)" }]);
    expect(modelWarnings(model)).toEqual([
      "usage values out of range, left out: node 'node2' 'maxmem' 0 (not in 1..2^53 bytes); guest 'vm:101' 'cpu' -1 (not in 0..2^53 cores)",
    ]);
    const candidates = restrictToModel(migrationCandidates(snapshot(nodes, guests)), model);
    // vm:101 is not in the model; vm:102's node left out; vm:103 may only go to node1
    expect(candidates).toEqual([{ leader: 'vm:103', resources: ['vm:103'], targets: ['node1'] }]);
  });

  // the bound is 2^53 (byte counts are exact integers up to it), the same the policy judges
  // telemetry with; 2^54 is the next float above it that is an integer the model could receive
  it.each([
    ['maxmem 2^53 is in range', { maxmem: 2 ** 53 }, []],
    ['maxmem 2^63 (8 EiB)', { maxmem: 2 ** 63 }, ["'maxmem' 9223372036854776000 (not in 1..2^53 bytes)"]],
    ['maxmem 1e30', { maxmem: 1e30 }, ["'maxmem' 1e+30 (not in 1..2^53 bytes)"]],
    ['mem 2^54', { mem: 2 ** 54 }, ["'mem' 18014398509481984 (not in 0..2^53 bytes)"]],
    ['cpu NaN', { cpu: Number.NaN }, ["'cpu' NaN (not in 0..2^53 cores)"]],
    ['maxcpu Infinity', { maxcpu: Number.POSITIVE_INFINITY }, ["'maxcpu' Infinity (not in 1..2^53 cores)"]],
    ['maxcpu 0.5 (below one core)', { maxcpu: 0.5 }, ["'maxcpu' 0.5 (not in 1..2^53 cores)"]],
  ])('%s', (_name, values, reasons) => {
    expect(USAGE_VALUE_MAX).toBe(2 ** 53);
    const model = buildUsageModel(snapshot([node('node1'), node('node2', values)], []));
    expect(model.leftOut.map((n) => n.reason)).toEqual(reasons.length > 0 ? [reasons.join(', ')] : []);
    expect(model.nodes).toEqual(reasons.length > 0 ? ['node1'] : ['node1', 'node2']);
  });

  it('several values of one node: one left-out entry naming each; a line per round lists them, the rest counted', () => {
    const nodes = [
      node('node1', { cpu: -1, mem: 1e30 }),
      ...['node2', 'node3', 'node4', 'node5'].map((n) => node(n, { maxmem: 2 ** 60 })),
    ];
    const model = buildUsageModel(snapshot(nodes, []));
    expect(model.leftOut[0]).toEqual({
      node: 'node1',
      reason: "'cpu' -1 (not in 0..2^53 cores), 'mem' 1e+30 (not in 0..2^53 bytes)",
    });
    expect(model.outOfRange).toHaveLength(6);
    expect(modelWarnings(model)).toEqual([
      "usage values out of range, left out: node 'node1' 'cpu' -1 (not in 0..2^53 cores); node 'node1' 'mem' 1e+30 (not in 0..2^53 bytes); " +
        "node 'node2' 'maxmem' 1152921504606847000 (not in 1..2^53 bytes); node 'node3' 'maxmem' 1152921504606847000 (not in 1..2^53 bytes); and 2 more",
    ]);
    expect(describeLeftOut(model.leftOut)).toMatch(/^node 'node1' left out \('cpu' -1 .*; and 1 more$/);
  });

  it('a node the reader left out (no usage stats) makes the view partial too; an offline or maintenance node does not', () => {
    const snap = {
      ...snapshot([node('node1'), node('node2', { online: false }), node('node3', { maintenance: true })], []),
      nodesLeftOut: [{ node: 'node4', reason: 'GET /cluster/resources has no usage stats for it' }],
    };
    const model = buildUsageModel(snap);
    expect(model.leftOut).toEqual([{ node: 'node4', reason: 'GET /cluster/resources has no usage stats for it' }]);
    expect(model.nodes).toEqual(['node1']);
  });

  it('a guest on a node that is not in the node list is named, not silently passed', () => {
    const guests = [haGuest('vm:101', 'node1'), haGuest('vm:102', 'node9'), plainGuest('vm:201', 'ghost')];
    const model = buildUsageModel(snapshot(NODES, guests));
    expect(model.strays).toEqual([
      { sid: 'vm:102', node: 'node9' },
      { sid: 'vm:201', node: 'ghost' },
    ]);
    expect(model.usage.hasResource('vm:102')).toBe(false);
    expect(model.leftOut).toEqual([]);
    expect(modelWarnings(model)).toEqual([
      "guests on a node that is not in the cluster's node list, left out: guest 'vm:102' on 'node9'; guest 'vm:201' on 'ghost'",
    ]);
  });

  it('a clean read says nothing', () => {
    const model = buildUsageModel(snapshot(NODES, [haGuest('vm:101', 'node1')]));
    expect([model.leftOut, model.outOfRange, model.strays, modelWarnings(model)]).toEqual([[], [], [], []]);
  });

  it('the model scores the candidates: all load on node1 moves to an idle node', () => {
    const nodes = [node('node1', { cpu: 4, mem: 8 * GIB }), node('node2'), node('node3')];
    const guests = [haGuest('vm:101', 'node1'), haGuest('vm:102', 'node1')];
    const snap = snapshot(nodes, guests);
    const model = buildUsageModel(snap);
    const [best] = model.usage.bestBalancingMigrations(
      restrictToModel(migrationCandidates(snap), model),
      'bruteforce',
      1,
    );
    expect(best).toMatchObject({ sid: 'vm:101', source: 'node1', target: 'node2' });
    expect(best!.imbalance).toBeLessThan(model.usage.nodeImbalance());
  });
});

describe('clusterMotionInFlight', () => {
  it.each([
    [[haGuest('vm:101', 'node1')], false],
    [[haGuest('vm:101', 'node1', { state: 'migrate', target: 'node2' })], true],
    [[haGuest('ct:101', 'node1', { state: 'relocate', target: 'node2' })], true],
    [[plainGuest('vm:201', 'node1', { lock: 'migrate' })], true],
    [[plainGuest('vm:201', 'node1', { lock: 'backup' })], false],
  ])('%#', (guests, expected) => {
    expect(clusterMotionInFlight(snapshot(NODES, guests))).toBe(expected);
  });
});
