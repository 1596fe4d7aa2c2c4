import { describe, expect, test } from 'vitest';
import { snapshot } from '@poise/env';
import { Manager } from './manager';
import { MemoryEnv } from './testing/memory-env';

const GIB = 1024 ** 3;

describe('Manager: usage of configured services the manager does not track', () => {
  // While the stack is disarmed, new services are not taken into the service status; they count
  // by their configured state, with the rules of spec §3.6: `started` loads its node, `stopped`,
  // `disabled` and `ignored` load nothing.
  test('only a started one puts load on its node', () => {
    const env = new MemoryEnv('node1', ['node1', 'node2', 'node3']);
    const cd = (node: string, state: string) => ({
      node,
      state,
      type: 'vm',
      failback: 1,
      max_restart: 1,
      max_relocate: 1,
    });
    env.setServices({
      'vm:201': cd('node1', 'started'),
      'vm:202': cd('node2', 'disabled'),
      'vm:203': cd('node3', 'stopped'),
      'vm:204': cd('node3', 'ignored'),
    });
    const big = { maxcpu: 8, maxmem: 32 * GIB };
    env.staticServiceStats = snapshot({
      'vm:201': big,
      'vm:202': big,
      'vm:203': big,
      'vm:204': big,
      'vm:999': { maxcpu: 1, maxmem: GIB },
    });
    const node = { maxcpu: 16, maxmem: 64 * GIB };
    env.staticNodeStats = snapshot({ node1: node, node2: node, node3: node });
    env.datacenter = snapshot({ ha: {}, crs: { ha: 'static' } });
    env.managerStatus = snapshot({
      node_status: { node1: 'online', node2: 'online', node3: 'online' },
      service_status: {},
      disarm: { mode: 'freeze', state: 'disarmed' },
    });
    const manager = new Manager(env, { profile: 'pve-9.2' });
    env.time = 20;
    manager.manage();
    const scores = manager.usage.scoreNodesToStartService('vm:999');
    // lower is better: node2 and node3 carry nothing, node1 carries vm:201
    expect(scores.get('node2')).toBe(scores.get('node3'));
    expect(scores.get('node1')!).toBeGreaterThan(scores.get('node2')!);
  });
});

describe('Manager: what it reads stays as it was', () => {
  test('a round changes its own copy of the status, never the snapshot it read', () => {
    const env = new MemoryEnv('node1', ['node1', 'node2']);
    env.setServices({
      'vm:101': { node: 'node1', state: 'started', type: 'vm', failback: 1, max_restart: 1, max_relocate: 1 },
    });
    const before = snapshot({
      node_status: { node1: 'online', node2: 'online' },
      service_status: { 'vm:101': { state: 'request_start', node: 'node1', uid: 'a' } },
    });
    env.managerStatus = before;
    const manager = new Manager(env, { profile: 'pve-9.2' });
    env.time = 20;
    manager.manage();
    // snapshots are frozen: had the manager changed what it read, the round would have thrown
    expect(env.lines.filter((l) => l.startsWith('err'))).toEqual([]);
    expect(before.service_status['vm:101'].state).toBe('request_start');
    expect(env.managerStatus.service_status!['vm:101']!.state).toBe('started');
  });
});

describe('Manager: service ids that are Object.prototype keys', () => {
  test.each(['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__'])(
    '%s is placed like any other service',
    (sid) => {
      const env = new MemoryEnv('node1', ['node1', 'node2']);
      const services = Object.create(null) as Record<string, Record<string, unknown>>;
      services[sid] = { node: 'node1', state: 'started', type: 'vm', failback: 1, max_restart: 1, max_relocate: 1 };
      env.setServices(services);
      const stats = Object.create(null) as Record<string, unknown>;
      stats[sid] = { maxcpu: 1, maxmem: GIB };
      env.staticServiceStats = snapshot(stats) as never;
      env.staticNodeStats = snapshot({
        node1: { maxcpu: 4, maxmem: 8 * GIB },
        node2: { maxcpu: 4, maxmem: 8 * GIB },
      });
      env.datacenter = snapshot({ ha: {}, crs: { ha: 'static', 'ha-rebalance-on-start': 1 } });
      env.managerStatus = snapshot({ node_status: { node1: 'online', node2: 'online' } });
      const manager = new Manager(env, { profile: 'pve-9.2' });
      env.time = 20;
      manager.manage();
      expect(env.lines.filter((l) => l.startsWith('err') || l.startsWith('warning'))).toEqual([]);
      expect(env.lines).toContain(`info 20 service ${sid}: re-balance selected current node node1 for startup`);
      expect(Object.keys(env.managerStatus.service_status!)).toEqual([sid]);
    },
  );
});
