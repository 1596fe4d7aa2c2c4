import { describe, expect, test } from 'vitest';
import { snapshot } from '@poise/env';
import { CrsUsage, checkServiceStats, createUsage } from './usage-model';
import { MemoryEnv } from './testing/memory-env';

const GIB = 1024 ** 3;
const NODES = ['node1', 'node2', 'node3'];

/** An env with three 16-core, 64 GiB nodes and the given service stats. */
function envWith(staticStats: Record<string, unknown>, dynamicStats: Record<string, unknown> = {}): MemoryEnv {
  const env = new MemoryEnv('node1', NODES);
  const node = { maxcpu: 16, maxmem: 64 * GIB };
  env.staticNodeStats = snapshot({ node1: node, node2: node, node3: node });
  env.dynamicNodeStats = snapshot({
    node1: { cpu: 2, maxcpu: 16, mem: 4 * GIB, maxmem: 64 * GIB },
    node2: { cpu: 0, maxcpu: 16, mem: 0, maxmem: 64 * GIB },
    node3: { cpu: 0, maxcpu: 16, mem: 0, maxmem: 64 * GIB },
  });
  env.staticServiceStats = snapshot(staticStats) as never;
  env.dynamicServiceStats = snapshot(dynamicStats) as never;
  return env;
}

const started = (node: string) => snapshot({ state: 'started', node, running: 1 });
const good = { maxcpu: 4, maxmem: 8 * GIB };

describe('CrsUsage: a service with invalid stats is left out with a warning, the round goes on', () => {
  const cases: Array<[string, 'static' | 'dynamic', Record<string, unknown>, Record<string, unknown>, string]> = [
    ['no static entry', 'static', {}, {}, "did not get static service usage information for 'vm:102'"],
    [
      'a negative maxcpu',
      'static',
      { 'vm:102': { maxcpu: -2, maxmem: GIB } },
      {},
      "invalid static service usage information for 'vm:102': 'maxcpu' must be a finite number >= 0, got -2",
    ],
    [
      'no maxmem',
      'static',
      { 'vm:102': { maxcpu: 2 } },
      {},
      "invalid static service usage information for 'vm:102': 'maxmem' must be a finite number >= 0, got nothing",
    ],
    [
      'a maxmem that is a string',
      'static',
      { 'vm:102': { maxcpu: 2, maxmem: '4G' } },
      {},
      "invalid static service usage information for 'vm:102': 'maxmem' must be a finite number >= 0, got '4G'",
    ],
    [
      'an infinite maxcpu',
      'static',
      { 'vm:102': { maxcpu: Infinity, maxmem: GIB } },
      {},
      "invalid static service usage information for 'vm:102': 'maxcpu' must be a finite number >= 0, got Infinity",
    ],
    [
      'a NaN maxmem',
      'static',
      { 'vm:102': { maxcpu: 1, maxmem: NaN } },
      {},
      "invalid static service usage information for 'vm:102': 'maxmem' must be a finite number >= 0, got NaN",
    ],
    [
      'a maxmem that is an object',
      'static',
      { 'vm:102': { maxcpu: 1, maxmem: { size: GIB } } },
      {},
      "invalid static service usage information for 'vm:102': 'maxmem' must be a finite number >= 0, got an object",
    ],
    // a service that was not measured has no usage: not 0
    [
      'no dynamic entry',
      'dynamic',
      { 'vm:102': good },
      {},
      "did not get dynamic service usage information for 'vm:102'",
    ],
    [
      'no measured cpu',
      'dynamic',
      { 'vm:102': good },
      { 'vm:102': { mem: GIB } },
      "invalid dynamic service usage information for 'vm:102': 'cpu' must be a finite number >= 0, got nothing",
    ],
    [
      'a negative measured mem',
      'dynamic',
      { 'vm:102': good },
      { 'vm:102': { cpu: 1, mem: -1 } },
      "invalid dynamic service usage information for 'vm:102': 'mem' must be a finite number >= 0, got -1",
    ],
  ];
  test.each(cases)('%s (%s)', (_name, mode, staticStats, dynamicStats, problem) => {
    const env = envWith({ 'vm:101': good, ...staticStats }, { 'vm:101': { cpu: 2, mem: 4 * GIB }, ...dynamicStats });
    const usage = new CrsUsage(env, mode, NODES, 'normalized');
    usage.addServiceUsage('vm:101', started('node1'));
    usage.addServiceUsage('vm:102', started('node2'));
    expect(env.lines).toEqual([`warning 0 unable to add service 'vm:102' - ${problem}`]);
    expect(usage.containsService('vm:101')).toBe(true);
    expect(usage.containsService('vm:102')).toBe(false);
    // the others are still scored
    expect([...usage.scoreNodesToStartService('vm:101').keys()]).toEqual(NODES);

    // choosing a node for the bad service: an error and the service counts as scores
    // (node1: vm:101, node2: vm:102, node3: none; lower is better)
    env.lines = [];
    expect(Object.fromEntries(usage.scoreNodesToStartService('vm:102'))).toEqual({ node1: 1, node2: 1, node3: 0 });
    expect(env.lines).toEqual([
      `err 0 unable to score nodes according to ${mode} usage for service 'vm:102' - ${problem}`,
    ]);
  });

  test('a negative memhost gets the same warning, whether memhost is used or not (pve-9.2); pve-5.2.0 knows no memhost', () => {
    const problem =
      "unable to add service 'vm:102' - invalid dynamic service usage information for 'vm:102': 'memhost' must be a finite number >= 0, got -1";
    for (const [profile, memhost, lines] of [
      ['pve-9.2', false, [`warning 0 ${problem}`]],
      ['pve-9.2', true, [`warning 0 ${problem}`]],
      ['pve-5.2.0', false, []],
    ] as const) {
      const env = envWith({ 'vm:102': good }, { 'vm:102': { cpu: 1, mem: GIB, memhost: -1 } });
      const usage = createUsage(env, 'dynamic', NODES, profile, { memhost });
      usage.addServiceUsage('vm:102', started('node2'));
      expect(env.lines, `${profile} memhost ${memhost}`).toEqual(lines);
    }
  });

  test('removing and re-adding keeps the counts right (moves count on both nodes)', () => {
    const env = envWith({ 'vm:101': good });
    const usage = new CrsUsage(env, 'static', NODES, 'raw');
    usage.addServiceUsage('vm:101', snapshot({ state: 'migrate', node: 'node1', target: 'node3' }));
    usage.addServiceUsage('vm:102', started('node1'));
    // counts: node1 2 (vm:101, vm:102), node3 1 (vm:101's target)
    expect(Object.fromEntries(usage.scoreNodesToStartService('vm:102'))).toEqual({ node1: 2, node2: 0, node3: 1 });
    usage.removeServiceUsage('vm:101');
    usage.addServiceUsage('vm:101', started('node3'));
    expect(Object.fromEntries(usage.scoreNodesToStartService('vm:102'))).toEqual({ node1: 1, node2: 0, node3: 1 });
  });

  test('checkServiceStats: static stats are used as cpu = maxcpu, mem = maxmem', () => {
    expect(checkServiceStats('vm:1', 'static', snapshot(good), undefined)).toEqual({
      cpu: 4,
      maxcpu: 4,
      mem: 8 * GIB,
      maxmem: 8 * GIB,
    });
    expect(checkServiceStats('vm:1', 'dynamic', snapshot(good), snapshot({ cpu: 1.5, mem: GIB }))).toEqual({
      cpu: 1.5,
      maxcpu: 4,
      mem: GIB,
      maxmem: 8 * GIB,
    });
  });
});

describe('createUsage: modes', () => {
  test('a static node without capacity falls back to basic with the reference warning', () => {
    const env = envWith({});
    env.staticNodeStats = snapshot({
      node1: { maxcpu: 16, maxmem: 64 * GIB },
      node2: { maxcpu: 16 },
      node3: { maxcpu: 16, maxmem: 64 * GIB },
    }) as never;
    expect(createUsage(env, 'static', NODES, 'pve-9.2').mode).toBe('basic');
    expect(env.lines).toEqual([
      "warning 0 fallback to 'basic' scheduler mode, init for 'static' failed - missing static stats for node 'node2'",
    ]);
  });

  test('an unknown mode warns and uses basic', () => {
    const env = envWith({});
    expect(createUsage(env, 'fancy', NODES, 'pve-9.2').mode).toBe('basic');
    expect(env.lines).toEqual(["warning 0 got unknown scheduler mode 'fancy', using 'basic'"]);
  });
});

describe('CrsUsage: what the balancer host reads (telemetry, adjusted views, memhost)', () => {
  test('memhost: the host-side footprint replaces the guest memory only when asked for and reported', () => {
    const stats = { maxcpu: 4, maxmem: 8 * GIB };
    expect(checkServiceStats('vm:101', 'dynamic', stats, { cpu: 1, mem: GIB, memhost: 3 * GIB }, true).mem).toBe(
      3 * GIB,
    );
    expect(checkServiceStats('vm:101', 'dynamic', stats, { cpu: 1, mem: GIB, memhost: 3 * GIB }, false).mem).toBe(GIB);
    expect(checkServiceStats('vm:101', 'dynamic', stats, { cpu: 1, mem: GIB }, true).mem).toBe(GIB);
    expect(() => checkServiceStats('vm:101', 'dynamic', stats, { cpu: 1, mem: GIB, memhost: -1 }, true)).toThrow(
      "invalid dynamic service usage information for 'vm:101': 'memhost' must be a finite number >= 0, got -1",
    );
  });

  test('telemetry: measured node stats, the services placed there, and the PSI the node reports', () => {
    const env = envWith({ 'vm:101': good }, { 'vm:101': { cpu: 1.5, mem: 3 * GIB } });
    env.dynamicNodeStats = snapshot({
      node1: { cpu: 2, maxcpu: 16, mem: 4 * GIB, maxmem: 64 * GIB, pressurecpusome: 12.5, pressurememorysome: 0 },
      node2: { cpu: 0.25, maxcpu: 16, mem: GIB, maxmem: 64 * GIB },
      node3: { cpu: 0, maxcpu: 16, mem: 0, maxmem: 64 * GIB },
    });
    const usage = new CrsUsage(env, 'dynamic', NODES, 'normalized');
    usage.addServiceUsage('vm:101', started('node1'));
    expect(usage.nodeTelemetry()).toEqual([
      // node1: 2 cores measured, 1.5 of them vm:101's: a residual of 0.5 cores and 1 GiB
      {
        node: 'node1',
        cpu: 2,
        maxcpu: 16,
        mem: 4 * GIB,
        maxmem: 64 * GIB,
        servicesCpu: 1.5,
        servicesMem: 3 * GIB,
        pressureCpu: 12.5,
        pressureMem: 0,
      },
      {
        node: 'node2',
        cpu: 0.25,
        maxcpu: 16,
        mem: GIB,
        maxmem: 64 * GIB,
        servicesCpu: 0,
        servicesMem: 0,
        pressureCpu: undefined,
        pressureMem: undefined,
      },
      {
        node: 'node3',
        cpu: 0,
        maxcpu: 16,
        mem: 0,
        maxmem: 64 * GIB,
        servicesCpu: 0,
        servicesMem: 0,
        pressureCpu: undefined,
        pressureMem: undefined,
      },
    ]);
    const context = usage.context();
    expect(context.nodes()).toEqual(usage.nodeTelemetry());
    // the memory a move copies: the services' memory in the usage; unknown for one outside it
    expect(context.describe([{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2'] }])).toEqual([
      { leader: 'vm:101', resources: ['vm:101'], targets: ['node2'], source: 'node1', transferBytes: 3 * GIB },
    ]);
    expect(context.describe([{ leader: 'vm:999', resources: ['vm:999'], targets: ['node2'] }])).toEqual([
      { leader: 'vm:999', resources: ['vm:999'], targets: ['node2'] },
    ]);
    // guest telemetry: the services as the usage moves them, on their current node
    expect(context.guests()).toEqual([{ sid: 'vm:101', node: 'node1', cpu: 1.5, maxcpu: 4, mem: 3 * GIB }]);
  });

  test('an adjusted view replaces node stats lazily and leaves the usage itself alone', () => {
    const env = envWith({ 'vm:101': good }, { 'vm:101': { cpu: 2, mem: 4 * GIB } });
    const usage = new CrsUsage(env, 'dynamic', NODES, 'normalized');
    usage.addServiceUsage('vm:101', started('node1'));
    const measured = usage.calculateNodeImbalance();
    // every node as loaded as node1 (2 cores, 4 GiB): no imbalance at all
    const even = usage.context().adjust(NODES.map((node) => ({ node, cpu: 2, mem: 4 * GIB })));
    expect(even.imbalance()).toBe(0);
    expect(usage.calculateNodeImbalance()).toBe(measured);
    // moving vm:101 off node1 in the even view leaves node1 empty: worse than not moving
    const [best] = even.score([{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2'] }], 'bruteforce', 1);
    expect(best!.imbalance).toBeGreaterThan(0);
  });
});

describe('CrsUsage.renew: the last round’s model with this round’s node stats', () => {
  const stats = { 'vm:101': good, 'vm:102': good, 'vm:103': { maxcpu: 2, maxmem: 2 * GIB } };
  const measured = {
    'vm:101': { cpu: 1.5, mem: 3 * GIB },
    'vm:102': { cpu: 0.25, mem: GIB },
    'vm:103': { cpu: 0.5, mem: GIB },
  };
  const services: Array<[string, ReturnType<typeof snapshot<{ state: string; node: string; running?: number }>>]> = [
    ['vm:101', started('node1')],
    ['vm:102', snapshot({ state: 'request_start', node: 'node2' })], // starting: counted at its maxima
    ['vm:103', started('node3')],
  ];
  const build = (env: MemoryEnv, mode: 'static' | 'dynamic') => {
    const usage = new CrsUsage(env, mode, NODES, 'normalized');
    for (const [sid, sd] of services) usage.addServiceUsage(sid, sd);
    return usage;
  };
  const picture = (usage: CrsUsage) => ({
    imbalance: usage.calculateNodeImbalance(),
    start: Object.fromEntries(usage.scoreNodesToStartService('vm:103')),
    telemetry: usage.nodeTelemetry(),
  });

  for (const mode of ['static', 'dynamic'] as const) {
    test(`${mode}: after new node stats, the renewed model is a new one, number for number`, () => {
      const env = envWith(stats, measured);
      const usage = build(env, mode);
      // the next round: other node usage (and, for static, another node size), same documents else
      env.dynamicNodeStats = snapshot({
        node1: { cpu: 3.3, maxcpu: 16, mem: 9 * GIB, maxmem: 64 * GIB },
        node2: { cpu: 0.1, maxcpu: 16, mem: GIB / 3, maxmem: 64 * GIB },
        node3: { cpu: 7.7, maxcpu: 16, mem: 20 * GIB, maxmem: 64 * GIB },
      });
      env.staticNodeStats = snapshot({
        node1: { maxcpu: 16, maxmem: 64 * GIB },
        node2: { maxcpu: 32, maxmem: 128 * GIB },
        node3: { maxcpu: 16, maxmem: 64 * GIB },
      });
      expect(usage.renew(NODES)).toBe(true);
      const fresh = build(env, mode);
      expect(picture(usage)).toEqual(picture(fresh));
      expect(usage.planGuests()).toEqual(fresh.planGuests());
      expect(env.lines).toEqual([]);
    });
  }

  test('refuses, with what it read, when a stats document or the nodes changed; the documents feed the new model', () => {
    const env = envWith(stats, measured);
    const usage = build(env, 'dynamic');
    env.dynamicServiceStats = snapshot({ ...measured, 'vm:101': { cpu: 9, mem: 3 * GIB } });
    const read = usage.renew(NODES);
    expect(read).not.toBe(true);
    expect(read).toEqual({
      dynamicNodeStats: env.dynamicNodeStats,
      staticServiceStats: env.staticServiceStats,
      dynamicServiceStats: env.dynamicServiceStats,
    });
    const next = createUsage(env, 'dynamic', NODES, 'pve-9.2', { documents: read as Exclude<typeof read, true> });
    expect(next).toBeInstanceOf(CrsUsage);
    expect(build(env, 'dynamic').renew(['node1', 'node2'])).not.toBe(true);
  });

  test('refuses when a service was left out with a warning (a new model warns again)', () => {
    const env = envWith({ 'vm:101': good }, { 'vm:101': measured['vm:101'] });
    const usage = build(env, 'dynamic'); // vm:102 and vm:103 have no stats
    expect(usage.renewable()).toBe(false);
    expect(usage.renew(NODES)).not.toBe(true);
  });

  test('refuses, reading no further, when a node has no stats (as the constructor would stop)', () => {
    const env = envWith(stats, measured);
    const usage = build(env, 'dynamic');
    env.dynamicNodeStats = snapshot({ node1: { cpu: 0, maxcpu: 16, mem: 0, maxmem: 64 * GIB } });
    expect(usage.renew(NODES)).toEqual({ dynamicNodeStats: env.dynamicNodeStats });
  });

  test('refuses a node stat the usage rejects (a negative cpu), and the new model falls back as before', () => {
    const env = envWith(stats, measured);
    const usage = build(env, 'dynamic');
    env.dynamicNodeStats = snapshot({
      node1: { cpu: -1, maxcpu: 16, mem: 0, maxmem: 64 * GIB },
      node2: { cpu: 0, maxcpu: 16, mem: 0, maxmem: 64 * GIB },
      node3: { cpu: 0, maxcpu: 16, mem: 0, maxmem: 64 * GIB },
    });
    const read = usage.renew(NODES);
    expect(read).not.toBe(true);
    const next = createUsage(env, 'dynamic', NODES, 'pve-9.2', { documents: read as Exclude<typeof read, true> });
    expect(next).not.toBeInstanceOf(CrsUsage);
    expect(env.lines.join('\n')).toContain("fallback to 'basic' scheduler mode");
  });
});
