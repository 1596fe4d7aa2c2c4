/**
 * The manager's rules state: the persistent groups → rules migration (conditions and messages
 * of spec §3.4 step 4 and the test-group-migrate logs), broken group configs, and compiling
 * only when the inputs changed.
 */
import type { Env, LogLevel, LrmStatus, ManagerStatus, ServiceConfig, ServiceStatus } from '@poise/env';
import { describe, expect, test } from 'vitest';

import { GROUP_MIGRATION_FIRST_ROUND, RulesState } from './rules-state';

const GROUPS = 'group: group1\n\tnodes node1\n\trestricted 1\n\ngroup: group2\n\tnodes node2:2,node3\n\tnofailback 1\n';
const NODES = ['node1', 'node2', 'node3'];

interface World {
  groups: string | Error;
  rules: string;
  lrm: Record<string, LrmStatus>;
  versions: Record<string, string>;
  nodeStates: Record<string, string>;
  services: Record<string, ServiceStatus>;
  config: ServiceConfig;
}

/** An Env holding just what the rules state reads and writes; everything else is unused. */
function fakeEnv(world: World, log: string[]): Env {
  const unused = (name: string) => () => {
    throw new Error(`unexpected call of ${name}`);
  };
  const env: Env = {
    nodename: () => 'node1',
    getTime: () => 60,
    log: (level: LogLevel, msg: string) => void log.push(`${level} ${msg}`),
    sleep: unused('sleep'),
    sleepUntil: unused('sleepUntil'),
    loopStartHook: unused('loopStartHook'),
    loopEndHook: unused('loopEndHook'),
    clusterStateUpdate: unused('clusterStateUpdate'),
    quorate: () => true,
    getNodeInfo: unused('getNodeInfo'),
    getHaManagerLock: unused('getHaManagerLock'),
    releaseHaManagerLock: unused('releaseHaManagerLock'),
    getHaAgentLock: unused('getHaAgentLock'),
    releaseHaAgentLock: unused('releaseHaAgentLock'),
    watchdogOpen: unused('watchdogOpen'),
    watchdogUpdate: unused('watchdogUpdate'),
    watchdogClose: unused('watchdogClose'),
    readManagerStatus: (): ManagerStatus => ({ service_status: structuredClone(world.services) }),
    writeManagerStatus: unused('writeManagerStatus'),
    readLrmStatus: (node: string) => structuredClone(world.lrm[node] ?? {}),
    writeLrmStatus: unused('writeLrmStatus'),
    isNodeShutdown: unused('isNodeShutdown'),
    readServiceConfig: () => structuredClone(world.config),
    updateServiceConfig: (sid: string, params: Record<string, unknown>, deleteKeys: string[] = []) => {
      const entry = world.config[sid] as Record<string, unknown>;
      for (const key of deleteKeys) delete entry[key];
      Object.assign(entry, params);
    },
    changeServiceLocation: unused('changeServiceLocation'),
    readRulesConfig: () => world.rules,
    writeRulesConfig: (text: string) => void (world.rules = text),
    readGroupConfig: () => {
      if (world.groups instanceof Error) throw world.groups;
      return world.groups;
    },
    deleteGroupConfig: () => void (world.groups = ''),
    readCrmCommands: unused('readCrmCommands'),
    hasPendingCrmCommands: unused('hasPendingCrmCommands'),
    queueCrmCommands: unused('queueCrmCommands'),
    getDatacenterSettings: unused('getDatacenterSettings'),
    getStaticNodeStats: unused('getStaticNodeStats'),
    getDynamicNodeStats: unused('getDynamicNodeStats'),
    getStaticServiceStats: unused('getStaticServiceStats'),
    getDynamicServiceStats: unused('getDynamicServiceStats'),
    getNodeVersion: (node: string) => world.versions[node],
    sendNotification: unused('sendNotification'),
    getMaxWorkers: () => 0,
    resourceAgent: unused('resourceAgent'),
  };
  return env;
}

function service(node: string, group?: string): ServiceConfig[string] {
  const entry: ServiceConfig[string] = {
    node,
    state: 'started',
    type: 'vm',
    name: '1',
    failback: 1,
    max_restart: 1,
    max_relocate: 1,
  };
  if (group !== undefined) entry.group = group;
  return entry;
}

function world(overrides: Partial<World> = {}): World {
  return {
    groups: GROUPS,
    rules: '',
    lrm: Object.fromEntries(NODES.map((node) => [node, { state: 'active', mode: 'active' }])),
    versions: Object.fromEntries(NODES.map((node) => [node, '9.0.1'])),
    nodeStates: Object.fromEntries(NODES.map((node) => [node, 'online'])),
    services: {},
    config: { 'vm:101': service('node1', 'group1'), 'vm:102': service('node2', 'group2') },
    ...overrides,
  };
}

function migrate(w: World, profile: 'pve-5.2.0' | 'pve-9.2', round = GROUP_MIGRATION_FIRST_ROUND) {
  const log: string[] = [];
  const env = fakeEnv(w, log);
  const state = new RulesState({
    env,
    nodeState: (node) => w.nodeStates[node] ?? 'unknown',
    listNodes: () => NODES,
    onlineNodes: () => NODES,
    logConfigWarnings: profile !== 'pve-5.2.0',
  });
  const modes = Object.fromEntries(NODES.map((node) => [node, w.lrm[node]?.mode ?? 'active']));
  state.tryPersistentGroupMigration(round, modes);
  return { log, state, modes };
}

const RETRY = ['err ha groups migration failed', 'notice retry ha groups migration in 6 rounds (~ 60 seconds)'];

describe('persistent group migration', () => {
  test('a ready cluster migrates: the messages of test-group-migrate2', () => {
    const w = world();
    const { log } = migrate(w, 'pve-5.2.0');
    expect(log).toEqual([
      'notice start ha group migration...',
      ...NODES.flatMap((node) => [
        `notice ha groups migration: node '${node}' is in state 'online'`,
        `notice ha groups migration: lrm '${node}' is in state 'active' and mode 'active'`,
        `notice ha groups migration: node '${node}' has version '9.0.1'`,
      ]),
      'notice ha groups migration: migration to rules config successful',
      'notice ha groups migration: migration to resources config successful',
      'notice ha groups migration: group config deletion successful',
      'notice ha groups migration successful',
    ]);
    expect(w.groups).toBe('');
    expect(w.rules).toContain('node-affinity: ha-group-group1');
    expect(w.config['vm:102']).toMatchObject({ failback: 0 });
    expect(w.config['vm:102']).not.toHaveProperty('group');
  });

  test('nothing happens before round 3', () => {
    expect(migrate(world(), 'pve-9.2', GROUP_MIGRATION_FIRST_ROUND - 1).log).toEqual([]);
  });

  test.each([
    // [what, world change, the node checked last, its lines after the state line, the abort reason]
    [
      'a node that is not online',
      { nodeStates: { node1: 'online', node2: 'unknown', node3: 'online' } },
      'node2',
      [],
      "node 'node2' is not online",
    ],
    [
      "an lrm in mode 'restart'",
      { lrm: { node1: { state: 'active', mode: 'restart' } } },
      'node1',
      ["notice ha groups migration: lrm 'node1' is in state 'active' and mode 'restart'"],
      "lrm 'node1' is not in mode 'active'",
    ],
    [
      "an lrm in state 'lost_agent_lock'",
      { lrm: { node1: { state: 'lost_agent_lock', mode: 'active' } } },
      'node1',
      ["notice ha groups migration: lrm 'node1' is in state 'lost_agent_lock' and mode 'active'"],
      "lrm 'node1' is not in state 'active' or 'idle'",
    ],
    [
      'an lrm waiting for its lock while a service on its node is started',
      {
        lrm: { node1: { state: 'wait_for_agent_lock', mode: 'active' } },
        services: { 'vm:101': { state: 'started', node: 'node1' } },
      },
      'node1',
      ["notice ha groups migration: lrm 'node1' is in state 'wait_for_agent_lock' and mode 'active'"],
      "lrm 'node1' is not in state 'active' or 'idle'",
    ],
    [
      'an lrm without status',
      { lrm: { node1: {} } },
      'node1',
      ["notice ha groups migration: lrm 'node1' is in state 'unknown' and mode 'active'"],
      "lrm 'node1' is not in state 'active' or 'idle'",
    ],
  ])('%s stops the migration with the reason and a retry', (_name, change, lastNode, lines, reason) => {
    const w = world(change);
    for (const node of NODES) w.lrm[node] ??= {};
    const { log } = migrate(w, 'pve-5.2.0');
    const stateLine = `notice ha groups migration: node '${lastNode}' is in state '${w.nodeStates[lastNode]}'`;
    expect(log.slice(log.indexOf(stateLine))).toEqual([
      stateLine,
      ...lines,
      `err abort ha groups migration: ${reason}`,
      ...RETRY,
    ]);
    expect(w.groups).toBe(GROUPS);
  });

  test('an idle lrm (waiting for its lock, nothing active on its node) does not stop the migration', () => {
    const w = world({
      lrm: {
        node1: { state: 'active', mode: 'active' },
        node2: { state: 'wait_for_agent_lock', mode: 'active' },
        node3: { state: 'active', mode: 'active' },
      },
      // stopped, frozen, failed or waiting-to-start services are no work for the LRM
      services: {
        'vm:101': { state: 'stopped', node: 'node2' },
        'vm:102': { state: 'freeze', node: 'node2' },
        'vm:103': { state: 'error', node: 'node2' },
        'vm:104': { state: 'request_start', node: 'node2' },
        'vm:105': { state: 'started', node: 'node1' },
      },
    });
    const { log } = migrate(w, 'pve-5.2.0');
    expect(log).toContain(
      "notice ha groups migration: lrm 'node2' is in state 'wait_for_agent_lock' and mode 'active'",
    );
    expect(log.at(-1)).toBe('notice ha groups migration successful');
  });

  const BROKEN = 'group: group1\n\tnodes node1\n\trestricted yes\n\ngroup: group2\n\tnofailback 1\n';

  test('under pve-9.2 a broken groups config is reported by file, line, section and field, and kept', () => {
    const w = world({ groups: BROKEN });
    const { log } = migrate(w, 'pve-9.2');
    expect(log).toEqual([
      'notice start ha group migration...',
      "err ha groups migration: file ha/groups.cfg line 3 (section 'group1') - unable to parse value of 'restricted': type check ('boolean') failed - got 'yes'",
      "err ha groups migration: file ha/groups.cfg line 6 (skip section 'group2'): missing value for required option 'nodes'",
      "err abort ha groups migration: 'ha/groups.cfg' has 2 problems, fix them first",
      ...RETRY,
    ]);
    expect(w.groups).toBe(BROKEN);
    expect(w.config['vm:102']).toHaveProperty('group', 'group2');
  });

  test('under pve-9.2 a groups config with only broken sections is reported too', () => {
    const w = world({ groups: 'group: group1\n\tnodes node1:x\n' });
    const { log } = migrate(w, 'pve-9.2');
    expect(log.slice(0, 3)).toEqual([
      'notice start ha group migration...',
      "err ha groups migration: file ha/groups.cfg line 2 (section 'group1') - unable to parse value of 'nodes': invalid format - value 'node1:x' is not a valid node entry",
      "err ha groups migration: file ha/groups.cfg line 2 (skip section 'group1'): missing value for required option 'nodes'",
    ]);
    expect(w.groups).toBe('group: group1\n\tnodes node1:x\n');
  });

  test('under pve-5.2.0 a broken groups config migrates what parsed, silently, as the reference', () => {
    const w = world({ groups: BROKEN });
    const { log } = migrate(w, 'pve-5.2.0');
    expect(log.filter((line) => line.startsWith('err'))).toEqual([]);
    expect(log.at(-1)).toBe('notice ha groups migration successful');
  });

  test('an unreadable groups config is logged and retried under pve-9.2, and thrown under pve-5.2.0', () => {
    const failing = () => world({ groups: new Error('cfs connection refused - not mounted?') });
    expect(migrate(failing(), 'pve-9.2').log).toEqual([
      'notice start ha group migration...',
      "err abort ha groups migration: could not read 'ha/groups.cfg' - cfs connection refused - not mounted?",
      ...RETRY,
    ]);
    expect(() => migrate(failing(), 'pve-5.2.0')).toThrow('cfs connection refused');
  });

  test('a failed attempt is retried 6 rounds later, not before', () => {
    const w = world({ versions: { node1: '8.4.1', node2: '9.0.1', node3: '9.0.1' } });
    const { log, state, modes } = migrate(w, 'pve-5.2.0', 3);
    expect(log.at(-1)).toBe('notice retry ha groups migration in 6 rounds (~ 60 seconds)');
    log.length = 0;
    for (let round = 4; round < 9; round++) state.tryPersistentGroupMigration(round, modes);
    expect(log).toEqual([]);
    state.tryPersistentGroupMigration(9, modes);
    expect(log[0]).toBe('notice start ha group migration...');
  });
});

describe('update', () => {
  test('parses and compiles again only when the rules, the groups or the nodes change; drops are logged', () => {
    const w = world({
      rules: 'node-affinity: r1\n\tresources vm:101\n\tnodes node2\n\tstrict 1\n',
      config: { 'vm:101': service('node1'), 'vm:102': service('node2', 'group2') },
    });
    const { state, log } = migrate(w, 'pve-9.2', 0);
    const sc = (): ServiceConfig => structuredClone(w.config);
    state.update(sc(), GROUPS);
    const first = state.view.compiled;
    expect(Object.keys(first['node-affinity']).sort()).toEqual(['vm:101', 'vm:102']);
    state.update(sc(), GROUPS);
    expect(state.view.compiled).toBe(first);
    // vm:102 is now in r1 and in the rule made from group2: both are dropped
    w.rules = 'node-affinity: r1\n\tresources vm:102\n\tnodes node3\n';
    state.update(sc(), GROUPS);
    expect(state.view.compiled).not.toBe(first);
    expect(Object.keys(state.view.compiled['node-affinity'])).toEqual([]);
    expect(log).toEqual([
      "info Drop rule 'ha-group-group2', because resource 'vm:102' is already used in another node affinity rule.",
      "info Drop rule 'r1', because resource 'vm:102' is already used in another node affinity rule.",
    ]);
  });

  test('unconstrained: no rule names the service; each kind of rule counts, new rules are seen', () => {
    const w = world({
      rules:
        'node-affinity: r1\n\tresources vm:101\n\tnodes node2\n\n' +
        'resource-affinity: r2\n\tresources vm:103,vm:104\n\taffinity positive\n\n' +
        'resource-affinity: r3\n\tresources vm:105,vm:106\n\taffinity negative\n',
      config: { 'vm:101': service('node1'), 'vm:102': service('node2') },
    });
    const { state } = migrate(w, 'pve-9.2', 0);
    state.update(structuredClone(w.config), '');
    const free = (sid: string) => state.view.unconstrained(sid);
    expect(['vm:101', 'vm:103', 'vm:104', 'vm:105', 'vm:106'].map(free)).toEqual([false, false, false, false, false]);
    // names Object.prototype holds are services like any other
    expect(['vm:102', 'toString', '__proto__', 'constructor'].map(free)).toEqual([true, true, true, true]);
    w.rules = 'node-affinity: r1\n\tresources vm:102\n\tnodes node2\n';
    state.update(structuredClone(w.config), '');
    expect(['vm:101', 'vm:102', 'vm:103'].map(free)).toEqual([true, false, true]);
  });

  test('the service config gets the failback of its group every round', () => {
    const w = world();
    const { state } = migrate(w, 'pve-9.2', 0);
    const sc = state.update(structuredClone(w.config), GROUPS);
    expect([sc['vm:101']?.failback, sc['vm:102']?.failback]).toEqual([1, 0]);
  });
});
