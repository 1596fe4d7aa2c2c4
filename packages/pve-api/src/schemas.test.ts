import { describe, expect, test } from 'vitest';
import { PveApiError } from './errors';
import { migrationBlockers } from './guest-config';
import { parseDaemonStatus } from './ha-text';
import {
  clusterOptionsSchema,
  clusterResourcesSchema,
  guestConfigSchema,
  haManagerStatusSchema,
  haMotionReplySchema,
  haResourcesSchema,
  haRulesSchema,
  haGroupsSchema,
  migratePrecheckSchema,
  nodeGuestsSchema,
  nodeRrdSchema,
  guestStatusSchema,
  taskListSchema,
  taskStatusSchema,
  upidSchema,
  versionSchema,
} from './schemas';
import type { ClusterGuestResource, ClusterNodeResource } from './types';
import { parseUpid } from './upid';
import { decode, parsePropertyString } from './wire';

const where = { endpoint: 'GET /x', baseUrl: 'https://pve1:8006' };

function badReply(fn: () => unknown): PveApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PveApiError);
    expect((err as PveApiError).code).toBe('bad-reply');
    return err as PveApiError;
  }
  throw new Error('expected a bad-reply error');
}

const guest = {
  id: 'qemu/100',
  type: 'qemu',
  vmid: 100,
  node: 'pve1',
  status: 'running',
  maxcpu: 2,
  maxmem: 2147483648,
  cpu: 0.5,
  mem: 1073741824,
};

describe('quirks are normalised', () => {
  test.each([
    // [field, wire value, read value]
    ['cpu', '0.25', 0.25], // number as a string
    ['maxcpu', 4, 4],
    ['template', 1, true], // 0/1 boolean
    ['template', '0', false],
    ['template', true, true],
    ['tags', 'a;b,c d', ['a', 'b', 'c', 'd']], // split on ; , space
    ['memhost', null, undefined], // null reads as absent
  ])('guest row %s = %j reads as %j', (field, wire, read) => {
    const [row] = decode(clusterResourcesSchema, [{ ...guest, [field]: wire }], where) as ClusterGuestResource[];
    const key = { cpu: 'cpuUsage', maxcpu: 'maxCpus', template: 'template', tags: 'tags', memhost: 'memHostBytes' }[
      field
    ] as keyof ClusterGuestResource;
    expect(row![key]).toEqual(read);
  });

  test('extra unknown fields are accepted', () => {
    const [row] = decode(clusterResourcesSchema, [{ ...guest, 'future-field': { x: 1 } }], where);
    expect(row).toMatchObject({ kind: 'guest', vmid: 100 });
  });

  test('an offline node row without stats keeps them undefined', () => {
    const [row] = decode(
      clusterResourcesSchema,
      [{ id: 'node/pve2', type: 'node', node: 'pve2', status: 'offline', maxcpu: 8 }],
      where,
    ) as ClusterNodeResource[];
    expect(row).toMatchObject({ online: false, maxCpus: 8, cpuUsage: undefined, memBytes: undefined });
  });

  test('a name sent as a number reads as its text', () => {
    const [row] = decode(clusterResourcesSchema, [{ ...guest, name: 1234 }], where) as ClusterGuestResource[];
    expect(row!.name).toBe('1234');
  });
});

describe('surprising replies are errors naming endpoint and field', () => {
  test.each([
    // [reply data, field path, words in the message]
    [[{ ...guest, maxmem: 'lots' }], 'data[0].maxmem', '(qemu/100) expected a number, got "lots"'],
    [[{ ...guest, cpu: '1e999' }], 'data[0].cpu', 'expected a finite number'],
    [[{ ...guest, cpu: -0.1 }], 'data[0].cpu', 'expected a number ≥ 0'],
    [[{ ...guest, template: 2 }], 'data[0].template', 'expected 0 or 1, got 2'],
    [[{ ...guest, vmid: 1.5 }], 'data[0].vmid', 'expected an integer'],
    [[{ ...guest, maxmem: undefined }], 'data[0].maxmem', 'is missing'],
    [[guest, { ...guest, id: 'qemu/101', node: null }], 'data[1].node', 'expected a string, got null'],
    [[{ id: 'x' }], 'data[0].type', 'is missing'],
    [{ not: 'an array' }, 'data', 'expected an array'],
  ])('%j → %s', (data, field, words) => {
    const err = badReply(() => decode(clusterResourcesSchema, data, where));
    expect(err.field).toBe(field);
    expect(err.endpoint).toBe('GET /x');
    expect(err.message).toContain(`GET /x via https://pve1:8006: reply field '${field}'`);
    expect(err.message).toContain(words);
  });

  test('a second bad field is counted', () => {
    const err = badReply(() => decode(clusterResourcesSchema, [{ ...guest, maxmem: 'x', maxcpu: 'y' }], where));
    expect(err.message).toContain('(and 1 more problem)');
  });

  test('PSI outside 0..100 is refused (a unit error, not a value)', () => {
    const err = badReply(() => decode(nodeRrdSchema, [{ time: 1, pressurecpusome: 250 }], where));
    expect(err.field).toBe('data[0].pressurecpusome');
  });

  test('version text that is not a version', () => {
    expect(badReply(() => decode(versionSchema, { version: 'banana' }, where)).field).toBe('data.version');
  });

  test('manager status with a service missing its node', () => {
    const err = badReply(() =>
      decode(
        haManagerStatusSchema,
        { manager_status: { master_node: 'a', service_status: { 'vm:100': { state: 'started' } } } },
        where,
      ),
    );
    expect(err.field).toBe('data.manager_status.service_status["vm:100"].node');
  });
});

describe('quorum of manager_status: a Perl boolean passed through (spec §3.5)', () => {
  test.each<[unknown, boolean | undefined]>([
    ['1', true], // quorate
    ['', false], // not quorate: check_cfs_quorum's false
    [null, undefined], // the check failed
    [1, true],
    [0, false],
    ['0', false],
    [undefined, undefined],
  ])('quorate %j → %j', (quorate, expected) => {
    const doc = { quorum: { node: 'pve1', ...(quorate === undefined ? {} : { quorate }) } };
    expect(decode(haManagerStatusSchema, doc, where).quorum).toEqual({ node: 'pve1', quorate: expected });
  });

  test('anything else is a bad reply naming the field', () => {
    const err = badReply(() => decode(haManagerStatusSchema, { quorum: { node: 'pve1', quorate: 'maybe' } }, where));
    expect(err.field).toBe('data.quorum.quorate');
    expect(err.message).toContain('expected a Perl boolean');
  });

  test('no quorum entry (no HA configured): none', () => {
    expect(decode(haManagerStatusSchema, {}, where).quorum).toBeUndefined();
  });
});

describe('RRD rows: undefined buckets omit keys', () => {
  test('a PVE 8 row has no PSI; values stay undefined', () => {
    const [p] = decode(nodeRrdSchema, [{ time: 60, cpu: 0.1, memused: 5 }], where);
    expect(p!.pressure).toEqual({
      cpuSome: undefined,
      ioSome: undefined,
      ioFull: undefined,
      memorySome: undefined,
      memoryFull: undefined,
    });
    expect(p!.cpuUsage).toBe(0.1);
  });
});

describe('node guest list', () => {
  test('live PSI and memhost of /nodes/{node}/qemu', () => {
    const [g] = decode(
      nodeGuestsSchema('qemu', 'pve1'),
      [
        {
          vmid: '101',
          status: 'running',
          cpus: 4,
          maxmem: 4294967296,
          mem: 1,
          memhost: 2,
          pressurecpusome: 1.5,
          pressurememoryfull: 0,
        },
      ],
      where,
    );
    expect(g).toMatchObject({ sid: 'vm:101', node: 'pve1', running: true, memHostBytes: 2 });
    expect(g!.pressure).toMatchObject({ cpuSome: 1.5, memoryFull: 0, cpuFull: undefined });
  });
});

describe('one guest and the task list', () => {
  test('status/current without vmid takes it from the path; ha.managed 0/1', () => {
    const g = decode(
      guestStatusSchema('qemu', 'pve1', 100),
      { status: 'running', cpus: 2, memhost: 5, ha: { managed: 1 }, pressurecpufull: '0.5' },
      where,
    );
    expect(g).toMatchObject({ vmid: 100, sid: 'vm:100', haManaged: true, memHostBytes: 5 });
    expect(g.pressure.cpuFull).toBe(0.5);
  });

  test.each([
    // [status, endtime, outcome]
    [undefined, undefined, 'running'],
    ['running', undefined, 'running'],
    ['OK', 1700000100, 'ok'],
    ['WARNINGS: 1', 1700000100, 'warnings'],
    ['migration problems', 1700000100, 'failed'],
  ])('task list entry %s → %s', (status, endtime, outcome) => {
    const [t] = decode(
      taskListSchema,
      [
        {
          upid: 'UPID:a:1:2:3:qmigrate:100:root@pam:',
          node: 'a',
          type: 'qmigrate',
          id: '100',
          user: 'root@pam',
          starttime: 1700000000,
          endtime,
          status,
        },
      ],
      where,
    );
    expect(t!.outcome).toBe(outcome);
  });
});

describe('cluster options: crs as an object or a property string', () => {
  test.each([
    // [crs on the wire, what is read]
    [
      { ha: 'static', 'ha-rebalance-on-start': 1 },
      { ha: 'static', haRebalanceOnStart: true },
    ],
    ['ha=dynamic,ha-rebalance-on-start=1', { ha: 'dynamic', haRebalanceOnStart: true }],
    ['static', { ha: 'static' }], // the default key
    [
      'ha=dynamic,ha-auto-rebalance=1,ha-auto-rebalance-threshold=30,ha-auto-rebalance-method=topsis',
      { haAutoRebalance: true, haAutoRebalanceThreshold: 30, haAutoRebalanceMethod: 'topsis' },
    ],
    [
      {
        ha: 'dynamic',
        ha_auto_rebalance: '1',
        'ha-auto-rebalance-hold-duration': '3',
        'ha-auto-rebalance-margin': 0.1,
      },
      { haAutoRebalance: true, haAutoRebalanceHoldDuration: 3, haAutoRebalanceMargin: 0.1 },
    ],
  ])('%j', (crs, read) => {
    const o = decode(clusterOptionsSchema, { crs, max_workers: 4 }, where);
    expect(o.crsSet).toBe(true);
    expect(o.crs).toMatchObject(read);
    expect(o.maxWorkers).toBe(4);
  });

  test.each([
    ['ha=static,ha=basic', 'data.crs'], // a key twice
    [{ 'ha-auto-rebalance': 'yes' }, 'data.crs.ha-auto-rebalance'],
    ['ha=dynamic,ha-auto-rebalance-threshold=lots', 'data.crs.ha-auto-rebalance-threshold'],
    [42, 'data.crs'],
  ])('bad crs %j names %s', (crs, field) => {
    expect(badReply(() => decode(clusterOptionsSchema, { crs }, where)).field).toBe(field);
  });
});

describe('HA resources, rules, groups', () => {
  test('omitted keys take the config defaults; enabled reads as started', () => {
    const [a, b] = decode(
      haResourcesSchema,
      [{ sid: 'vm:100' }, { sid: 'ct:101', state: 'enabled', failback: 0, max_restart: '3', 'auto-rebalance': 0 }],
      where,
    );
    expect(a).toEqual({
      sid: 'vm:100',
      type: 'vm',
      state: 'started',
      failback: true,
      maxRestart: 1,
      maxRelocate: 1,
      autoRebalance: true,
      group: undefined,
      comment: undefined,
    });
    expect(b).toMatchObject({ type: 'ct', state: 'started', failback: false, maxRestart: 3, autoRebalance: false });
  });

  test('rules: strict absent = false, node priorities, errors mean not applied', () => {
    const [r1, r2] = decode(
      haRulesSchema,
      [
        {
          rule: 'ha-group-g1',
          type: 'node-affinity',
          resources: 'vm:100,vm:101',
          nodes: 'node1:2,node2:1,node3',
          strict: 1,
        },
        {
          rule: 'keep-apart',
          type: 'resource-affinity',
          resources: 'vm:100,vm:102',
          affinity: 'negative',
          errors: { resources: ['resource vm:102 does not exist'] },
        },
      ],
      where,
    );
    expect(r1).toMatchObject({
      strict: true,
      resources: ['vm:100', 'vm:101'],
      applied: true,
      nodes: [
        { node: 'node1', priority: 2 },
        { node: 'node2', priority: 1 },
        { node: 'node3', priority: 0 },
      ],
    });
    expect(r2).toMatchObject({ strict: false, affinity: 'negative', applied: false, nodes: undefined });
    expect(r2!.errors.get('resources')).toEqual(['resource vm:102 does not exist']);
  });

  test('a bad node priority names the field', () => {
    expect(badReply(() => decode(haGroupsSchema, [{ group: 'g', nodes: 'a:x' }], where)).field).toBe('data[0].nodes');
  });
});

describe('migration', () => {
  test('precheck with not-allowed nodes, hyphenated and underscored', () => {
    const m = decode(
      migratePrecheckSchema,
      {
        running: 1,
        'allowed-nodes': ['b'],
        not_allowed_nodes: {
          c: { unavailable_storages: ['local-zfs'] },
          d: { 'blocking-ha-resources': [{ sid: 'vm:102', cause: 'resource-affinity' }] },
        },
        local_resources: ['usb0'],
        'dependent-ha-resources': ['vm:103'],
      },
      where,
    );
    expect(m.allowedNodes).toEqual(['b']);
    expect(m.notAllowedNodes.get('c')).toEqual({
      unavailableStorages: ['local-zfs'],
      unavailableResources: [],
      blockingHaResources: [],
    });
    expect(m.notAllowedNodes.get('d')!.blockingHaResources).toEqual([{ sid: 'vm:102', cause: 'resource-affinity' }]);
    expect(m.dependentHaResources).toEqual(['vm:103']);
  });

  test('precheck without allowed nodes in either spelling', () => {
    expect(badReply(() => decode(migratePrecheckSchema, { running: 0 }, where)).field).toBe('data.allowed_nodes');
  });

  test('HA motion reply: null on PVE 8, blocking resources on PVE 9', () => {
    expect(decode(haMotionReplySchema, null, where)).toBeNull();
    expect(
      decode(
        haMotionReplySchema,
        { sid: 'vm:100', 'requested-node': 'b', 'blocking-resources': [{ sid: 'vm:101', cause: 'resource-affinity' }] },
        where,
      ),
    ).toMatchObject({
      'blocking-resources': [{ sid: 'vm:101', cause: 'resource-affinity' }],
    });
  });

  test.each([
    // [status, exitstatus, outcome]
    ['running', undefined, 'running'],
    ['stopped', 'OK', 'ok'],
    ['stopped', 'WARNINGS: 2', 'warnings'],
    ['stopped', 'migration aborted', 'failed'],
    ['stopped', undefined, 'failed'],
  ])('task %s / %s → %s', (status, exitstatus, outcome) => {
    expect(
      decode(taskStatusSchema, { upid: 'UPID:a:1:2:3:qmigrate:100:root@pam:', node: 'a', status, exitstatus }, where)
        .outcome,
    ).toBe(outcome);
  });

  test.each(['UPID:a:1:2:3:qmigrate:100:root@pam', 'UPID:a:zz:2:3:t:1:u:', 'nope', 'UPID::1:2:3:t:1:u:'])(
    'not a UPID: %s',
    (text) => {
      expect(parseUpid(text)).toBeUndefined();
      expect(badReply(() => decode(upidSchema, text, where)).field).toBe('data');
    },
  );

  test('guest config: memory as current=…, bad cores named', () => {
    expect(decode(guestConfigSchema('qemu', 100), { memory: 'current=4096,max=8192' }, where).memoryMiB).toBe(4096);
    expect(badReply(() => decode(guestConfigSchema('qemu', 100), { cores: 'two' }, where)).field).toBe('data.cores');
    expect(badReply(() => decode(guestConfigSchema('qemu', 100), { memory: [1] }, where)).field).toBe('data.memory');
  });
});

describe('migration blockers of a config', () => {
  test.each([
    // [type, key, value, scope or null]
    ['qemu', 'hostpci0', '0000:01:00.0', 'always'],
    ['qemu', 'hostpci1', 'mapping=gpu', 'live'],
    ['qemu', 'usb0', 'host=0bda:b023', 'always'],
    ['qemu', 'usb1', 'host=spice', null],
    ['qemu', 'usb2', 'mapping=bt', null],
    ['qemu', 'serial0', 'socket', null],
    ['qemu', 'serial1', '/dev/ttyS0', 'always'],
    ['qemu', 'parallel0', '/dev/parport0', 'always'],
    ['qemu', 'ivshmem', 'size=32', 'always'],
    ['qemu', 'amd-sev', 'type=std', 'live'],
    ['qemu', 'virtiofs0', 'dirid=share', 'live'],
    ['qemu', 'vga', 'std,clipboard=vnc', 'live'],
    ['qemu', 'ide2', 'cdrom,media=cdrom', 'always'],
    ['qemu', 'ide2', 'none,media=cdrom', null],
    ['qemu', 'lock', 'backup', 'always'],
    ['qemu', 'template', '1', 'always'],
    ['lxc', 'mp0', '/srv/data,mp=/data', 'always'],
    ['lxc', 'mp1', 'local-lvm:vm-100-disk-1,mp=/data', null],
    ['lxc', 'dev0', '/dev/ttyUSB0', 'always'],
  ] as const)('%s %s: %s → %s', (type, key, value, scope) => {
    const found = migrationBlockers(type, new Map([[key, value]]));
    expect(found.map((b) => b.scope)).toEqual(scope === null ? [] : [scope]);
  });
});

describe('HA daemon state from free text', () => {
  test.each([
    ['n1', 'n1 (idle, watchdog standby, Thu Sep 10 19:48:45 2026)', 'idle', 'standby'],
    ['n1', 'n1 (active, watchdog active, Thu Sep 10 19:48:47 2026)', 'active', 'active'],
    ['n1', 'n1 (maintenance mode, watchdog standby, Thu Sep 10 19:48:45 2026)', 'maintenance', 'standby'],
    ['n1', 'n1 (active, Thu Sep 10 19:48:41 2026)', 'active', undefined],
    ['n1', 'n1 (old timestamp - dead?, Thu Sep 10 19:48:41 2026)', 'dead', undefined],
    ['n1', 'n1 (detected time drift!, Thu Sep 10 19:48:41 2026)', 'time-drift', undefined],
    ['n1', 'n1 (unable to read lrm status)', 'unreadable', undefined],
    ['', ' (unable to read lrm status)', 'unreadable', undefined],
    ['n1', 'n1 (frobnicating, Thu)', 'unknown', undefined],
    ['n1', 'garbage', 'unknown', undefined],
  ])('%s %j', (node, text, state, watchdog) => {
    expect(parseDaemonStatus(node, text)).toEqual({ state, watchdog });
  });
});

describe('property strings', () => {
  test.each([
    [
      'ha=static,ha-rebalance-on-start=1',
      'ha',
      [
        ['ha', 'static'],
        ['ha-rebalance-on-start', '1'],
      ],
    ],
    ['static', 'ha', [['ha', 'static']]],
    ['', 'ha', []],
  ])('%j', (text, def, entries) => {
    expect([...parsePropertyString(text, def)!]).toEqual(entries);
  });

  test.each([['a=1,a=2'], ['=1'], ['x,y']])('malformed %j', (text) => {
    expect(parsePropertyString(text, 'ha')).toBeUndefined();
  });
});
