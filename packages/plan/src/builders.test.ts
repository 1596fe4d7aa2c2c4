import { describe, expect, test } from 'vitest';
import { compileRules, parseRulesConfig, transformRules } from '@poise/rules';
import { PlanError } from './errors';
import { PLAN_INPUT_SCHEMA, parsePlanJson } from './json';
import { rulesFromCompiled, rulesFromConfig } from './rules';
import type { GuestSnapshot, NodeSnapshot } from '@poise/env';
import { type PlanSnapshot, planInputFromSnapshot } from './snapshot';
import { placeGuests } from './place';
import { nodeFailureReport } from './what-if';
import { planPlacement } from './planner';
import type { PlanInput, PlanNode } from './types';

const GIB = 1024 ** 3;
const node = (name: string, extra: Partial<PlanNode> = {}): PlanNode => ({
  name,
  cpuCores: 16,
  memBytes: 64 * GIB,
  ...extra,
});

describe('JSON input', () => {
  const good = {
    nodes: [{ name: 'node1', cpuCores: 8, memBytes: 32 * GIB }],
    guests: [{ id: 'vm:1', kind: 'vm', node: 'node1', cpu: 1, mem: GIB }],
  };

  test('parses a valid file', () => {
    expect(parsePlanJson(JSON.stringify(good), 'cluster.json')).toEqual(good);
  });

  test.each<[string, string, string, RegExp]>([
    ['not JSON', '{"nodes": [', 'invalid-json', /^cluster\.json: not valid JSON: /],
    [
      'a field with a bad value',
      JSON.stringify({ ...good, guests: [{ ...good.guests[0], mem: -5 }] }),
      'invalid-input',
      /^cluster\.json: guest 'vm:1' \(guests\[0\]\): mem must be a finite number >= 0 .* got -5$/,
    ],
    [
      'a typo',
      JSON.stringify({ ...good, node: [] }),
      'invalid-input',
      /^cluster\.json: input has an unknown field 'node'/,
    ],
    [
      'a string for a number',
      JSON.stringify({ ...good, nodes: [{ ...good.nodes[0], cpuCores: '8' }] }),
      'invalid-input',
      /cpuCores must be a finite number > 0 .* got '8'/,
    ],
  ])('%s: an error naming the file and field', (_name, text, code, message) => {
    let error: unknown;
    try {
      parsePlanJson(text, 'cluster.json');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PlanError);
    expect((error as PlanError).code).toBe(code);
    expect((error as PlanError).message).toMatch(message);
  });

  test('the schema lists the same fields as the validator', () => {
    expect(Object.keys(PLAN_INPUT_SCHEMA.properties)).toEqual(['nodes', 'guests', 'rules', 'capacity', 'weights']);
    expect(Object.keys(PLAN_INPUT_SCHEMA.properties.guests.items.properties)).toEqual([
      'id',
      'kind',
      'node',
      'ha',
      'cpu',
      'cores',
      'mem',
      'memhost',
      'migratable',
      'reason',
      'ignored',
    ]);
  });
});

describe('rules from @poise/rules', () => {
  const text = [
    'node-affinity: db-home',
    '\tresources vm:105',
    '\tnodes node1:2,node2:1',
    '\tstrict 1',
    '',
    'resource-affinity: app-pair',
    '\tresources vm:103,vm:104',
    '\taffinity positive',
    '',
    'resource-affinity: db-spread',
    '\tresources vm:101,vm:102',
    '\taffinity negative',
    '',
  ].join('\n');
  const nodes = ['node1', 'node2', 'node3'];

  test('a transformed config keeps the rule ids', () => {
    const { config } = parseRulesConfig(text, 'rules.cfg');
    transformRules(config, nodes);
    const rules = rulesFromConfig(config);
    expect(rules.map((r) => r.id).sort()).toEqual(['app-pair', 'db-home', 'db-spread']);
    expect(rules.find((r) => r.id === 'db-home')).toEqual({
      id: 'db-home',
      type: 'node-affinity',
      resources: ['vm:105'],
      nodes: [
        { node: 'node1', priority: 2 },
        { node: 'node2', priority: 1 },
      ],
      strict: true,
    });
  });

  test('compiled rules give the same placement constraints', () => {
    const { config } = parseRulesConfig(text, 'rules.cfg');
    transformRules(config, nodes);
    const compiled = compileRules(config, nodes);
    const input = (rules: PlanInput['rules']): PlanInput => ({
      nodes: nodes.map((n) => node(n)),
      guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104', 'vm:105'].map((id) => ({
        id,
        kind: 'vm' as const,
        node: 'node3',
        ha: true,
        cpu: 1,
        mem: 4 * GIB,
      })),
      rules,
    });
    const fromConfig = planPlacement(input(rulesFromConfig(config)));
    const fromCompiled = planPlacement(input(rulesFromCompiled(compiled)));
    if (!fromConfig.feasible || !fromCompiled.feasible) throw new Error('expected feasible plans');
    expect(fromCompiled.placement).toEqual(fromConfig.placement);
    expect(fromConfig.placement.get('vm:105')).toBe('node1');
    expect(fromConfig.placement.get('vm:103')).toBe(fromConfig.placement.get('vm:104'));
    expect(fromConfig.placement.get('vm:101')).not.toBe(fromConfig.placement.get('vm:102'));
    expect(rulesFromCompiled(compiled).map((r) => r.id)).toEqual([
      'node-affinity-vm:105',
      'positive-vm:103',
      'negative-vm:101-vm:102',
    ]);
  });
});

describe('snapshot builder (poise-manager)', () => {
  const node = (over: Pick<NodeSnapshot, 'name' | 'online' | 'maintenance' | 'cpu' | 'mem'>): NodeSnapshot => ({
    condition: over.maintenance ? 'maintenance' : over.online ? 'online' : 'offline',
    maxcpu: 16,
    maxmem: 64 * GIB,
    pressure: { cpuSome: undefined, memSome: undefined },
    ...over,
  });
  const ha = (requestState: string): GuestSnapshot['ha'] => ({
    state: 'started',
    target: undefined,
    requestState,
    autoRebalance: true,
  });
  const snapshot: PlanSnapshot = {
    nodes: [
      node({ name: 'node1', online: true, maintenance: false, cpu: 5, mem: 20 * GIB }),
      node({ name: 'node2', online: false, maintenance: true, cpu: 0, mem: 2 * GIB }),
    ],
    guests: [
      {
        sid: 'vm:101',
        vmid: 101,
        type: 'vm',
        node: 'node1',
        running: true,
        lock: undefined,
        template: false,
        ha: ha('started'),
        stats: { cpu: 2, maxcpu: 4, mem: 8 * GIB, maxmem: 8 * GIB, memhost: 9 * GIB },
      },
      {
        sid: 'vm:102',
        vmid: 102,
        type: 'vm',
        node: 'node1',
        running: true,
        lock: 'backup',
        template: false,
        ha: undefined,
        stats: { cpu: 1, maxcpu: 2, mem: 4 * GIB, maxmem: 4 * GIB, memhost: undefined },
      },
      {
        sid: 'ct:103',
        vmid: 103,
        type: 'ct',
        node: 'node2',
        running: false,
        lock: undefined,
        template: false,
        ha: ha('ignored'),
        stats: { cpu: 0, maxcpu: 1, mem: 0, maxmem: GIB, memhost: undefined },
      },
    ],
    rules: [{ type: 'resource-affinity', id: 'keep-apart', resources: ['vm:101', 'vm:999'], affinity: 'negative' }],
  };

  test('maps nodes, guests and rules; what it leaves out is a problem, not an exception', () => {
    const { input, problems } = planInputFromSnapshot(snapshot);
    expect(input.nodes).toEqual([
      {
        name: 'node1',
        cpuCores: 16,
        memBytes: 64 * GIB,
        online: true,
        maintenance: false,
        baseCpu: 2,
        baseMem: 7 * GIB,
      },
      {
        name: 'node2',
        cpuCores: 16,
        memBytes: 64 * GIB,
        online: true,
        maintenance: true,
        baseCpu: 0,
        baseMem: 2 * GIB,
      },
    ]);
    expect(input.guests).toEqual([
      { id: 'ct:103', kind: 'ct', node: 'node2', ha: true, cpu: 0, cores: 1, mem: 0, ignored: true },
      { id: 'vm:101', kind: 'vm', node: 'node1', ha: true, cpu: 2, cores: 4, mem: 9 * GIB },
      {
        id: 'vm:102',
        kind: 'vm',
        node: 'node1',
        ha: false,
        cpu: 1,
        cores: 2,
        mem: 4 * GIB,
        migratable: false,
        reason: 'is locked (backup)',
      },
    ]);
    expect(input.rules).toEqual([
      { id: 'keep-apart', type: 'resource-affinity', affinity: 'negative', resources: ['vm:101'] },
    ]);
    expect(problems).toEqual([
      "rule 'keep-apart': resource 'vm:999' is not a guest of the snapshot: left out of the rule",
    ]);
    expect(planPlacement(input).feasible).toBe(true);
  });

  test('configured usage weighs the assigned cores and memory', () => {
    const { input } = planInputFromSnapshot(snapshot, { usage: 'configured', capacity: { cpuOvercommitRatio: 2 } });
    expect(input.guests.find((g) => g.id === 'vm:101')).toMatchObject({ cpu: 4, mem: 8 * GIB });
    expect(input.nodes[0]).not.toHaveProperty('baseCpu');
    expect(input.capacity).toEqual({ cpuOvercommitRatio: 2 });
  });
});

describe('batch placement', () => {
  const cluster: PlanInput = {
    nodes: [node('node1'), node('node2'), node('node3')],
    guests: [{ id: 'vm:100', kind: 'vm', node: 'node1', ha: true, cpu: 8, mem: 40 * GIB }],
  };

  test('twenty new guests go where the start score puts them, within capacity', () => {
    const result = placeGuests(cluster, { guests: [{ id: 'web', cores: 2, mem: 4 * GIB, count: 20 }] });
    expect(result.unplaced).toEqual([]);
    expect([...result.placed.keys()]).toEqual(Array.from({ length: 20 }, (_, i) => `web-${i + 1}`));
    // node1 starts with 40 of 64 GiB: it takes the fewest of them
    const per = new Map<string, number>();
    for (const n of result.placed.values()) per.set(n, (per.get(n) ?? 0) + 1);
    expect(per.get('node1') ?? 0).toBeLessThan(per.get('node2')!);
    for (const n of result.nodes) expect(n.mem).toBeLessThanOrEqual(1);
    expect(result.after.mem).toBeLessThanOrEqual(1);
  });

  test('negative affinity spreads them; the ones that find no node are reported with the reason', () => {
    const result = placeGuests(cluster, {
      guests: [{ id: 'db', cores: 4, mem: 30 * GIB, count: 4 }],
      rules: [
        {
          id: 'db-spread',
          type: 'resource-affinity',
          affinity: 'negative',
          resources: ['db-1', 'db-2', 'db-3', 'db-4'],
        },
      ],
    });
    expect(new Set(result.placed.values()).size).toBe(result.placed.size);
    // node1 has 24 GiB free: two of the four find a node
    expect(result.unplaced.map((u) => u.id)).toEqual(['db-3', 'db-4']);
    expect(result.unplaced[0]!.reason).toBe(
      'db-3: the nodes it may use either lack room for 30.0 GiB or hold a negative-affinity partner',
    );
  });

  test('positive affinity to an existing guest puts it on that guest node', () => {
    const result = placeGuests(cluster, {
      guests: [{ id: 'side', cores: 1, mem: GIB }],
      rules: [{ id: 'with-100', type: 'resource-affinity', affinity: 'positive', resources: ['side', 'vm:100'] }],
    });
    expect(result.placed.get('side')).toBe('node1');
  });

  test.each<[string, unknown, RegExp]>([
    ['zero memory', { guests: [{ cores: 1, mem: 0 }] }, /request\.guests\[0\]\.mem must be a finite number > 0/],
    [
      'a clashing id',
      { guests: [{ id: 'vm:100', cores: 1, mem: GIB }] },
      /request\.guests\[0\]: id 'vm:100' is already a guest of the cluster/,
    ],
    ['a bad count', { guests: [{ cores: 1, mem: GIB, count: 1.5 }] }, /request\.guests\[0\]\.count must be an integer/],
    [
      'a rule naming nobody',
      {
        guests: [{ cores: 1, mem: GIB }],
        rules: [{ id: 'r', type: 'resource-affinity', affinity: 'negative', resources: ['vm:404'] }],
      },
      /request\.rules\[0\]\.resources\[0\] 'vm:404' is neither a guest of the cluster nor a requested one/,
    ],
  ])('bad request: %s', (_name, request, message) => {
    expect(() => placeGuests(cluster, request as never)).toThrow(message);
  });
});

describe('what-if node failure', () => {
  test('each node: whether HA recovers its guests within capacity and rules, and the balance after', () => {
    // node1 holds 50 GiB of HA guests; the others have 64 − 30 = 34 GiB free each: 2 × 34 ≥ 50
    // but the 30 GiB guest and the 20 GiB one fit only on different nodes
    const input: PlanInput = {
      nodes: [node('node1'), node('node2'), node('node3')],
      guests: [
        { id: 'vm:1', kind: 'vm', node: 'node1', ha: true, cpu: 2, mem: 30 * GIB },
        { id: 'vm:2', kind: 'vm', node: 'node1', ha: true, cpu: 2, mem: 20 * GIB },
        { id: 'ct:3', kind: 'ct', node: 'node1', ha: false, cpu: 1, mem: GIB },
        { id: 'vm:4', kind: 'vm', node: 'node2', ha: true, cpu: 2, mem: 30 * GIB },
        { id: 'vm:5', kind: 'vm', node: 'node3', ha: true, cpu: 2, mem: 30 * GIB },
      ],
    };
    const report = nodeFailureReport(input);
    expect(report.cases.map((c) => c.node)).toEqual(['node1', 'node2', 'node3']);
    const c1 = report.cases[0]!;
    expect(c1.recover).toEqual(['vm:1', 'vm:2']);
    expect(c1.lost).toEqual(['ct:3']);
    expect(c1.recovered).toBe(true);
    expect(new Set(c1.placement.values()).size).toBe(2);
    expect(c1.after.mem).toBeLessThanOrEqual(1);
    // node2 fails: vm:4 (30 GiB) fits on node3 (34 free) only if vm:5 … node1 has 14 free, node3 34: fits
    expect(report.cases[1]!.recovered).toBe(true);
    expect(report.survivesAnyNodeFailure).toBe(true);
  });

  test('recovery counts the cores every staying guest has assigned', () => {
    // cpu overcommit 1: node2's vm:201 has all 16 of its cores assigned (and uses little),
    // node3's vm:301 14 of 16 (and uses them). The placer once took the staying guests' assigned
    // cores after copying them: node2 looked empty, won on its low use, and ct:101 went there,
    // 17 of 16 cores. The only node with room for its core is node3.
    const input: PlanInput = {
      nodes: [node('node1'), node('node2'), node('node3')],
      guests: [
        { id: 'ct:101', kind: 'ct', node: 'node1', ha: true, cpu: 0.1, cores: 1, mem: GIB },
        { id: 'vm:201', kind: 'vm', node: 'node2', ha: true, cpu: 0.5, cores: 16, mem: 2 * GIB },
        { id: 'vm:301', kind: 'vm', node: 'node3', ha: true, cpu: 14, cores: 14, mem: 40 * GIB },
      ],
      capacity: { cpuOvercommitRatio: 1 },
    };
    const report = nodeFailureReport(input);
    expect([...report.cases[0]!.placement]).toEqual([['ct:101', 'node3']]);
    // node2 fails: vm:201's 16 cores fit on node1 (1 assigned) no more than on node3 (14)
    expect(report.cases[1]!.unrecovered).toEqual([
      { id: 'vm:201', reason: 'vm:201: no node it may use has room for 2.0 GiB and 16 cores' },
    ]);
  });

  test('a failure that cannot be absorbed names the guests and why', () => {
    const input: PlanInput = {
      nodes: [node('node1'), node('node2')],
      guests: [
        { id: 'vm:1', kind: 'vm', node: 'node1', ha: true, cpu: 2, mem: 40 * GIB },
        { id: 'vm:2', kind: 'vm', node: 'node2', ha: true, cpu: 2, mem: 40 * GIB },
      ],
    };
    const report = nodeFailureReport(input);
    expect(report.survivesAnyNodeFailure).toBe(false);
    expect(report.cases[0]!.unrecovered).toEqual([
      { id: 'vm:1', reason: 'vm:1: no node it may use has room for 40.0 GiB' },
    ]);
    expect(report.cases[0]!.placementExists).toBe(false);
  });
});
