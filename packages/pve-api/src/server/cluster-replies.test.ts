import { describe, expect, it } from 'vitest';
import {
  clusterOptionsSchema,
  clusterResourcesSchema,
  clusterStatusSchema,
  guestConfigSchema,
  haGroupsSchema,
  haManagerStatusSchema,
  haMotionReplySchema,
  haResourcesSchema,
  haRulesSchema,
  migratePrecheckSchema,
  nodeRrdSchema,
  versionSchema,
} from '../schemas';
import { isActionRefusal } from '../refusals';
import { decode } from '../wire';
import {
  clusterOptionsReply,
  clusterReadRoutes,
  clusterResourcesReply,
  clusterStatusReply,
  guestConfigReply,
  haGroupsReply,
  haMotionBlockedReply,
  haMotionReply,
  haResourcesReply,
  haRulesReply,
  managerStatusReply,
  migratePrecheckReply,
  haMotionRefusal,
  nodeRrdReply,
  type ServedCluster,
  versionReply,
} from './cluster-replies';
import type { FakeRequest } from './fake-server';

const GIB = 1024 ** 3;
const T = 1_767_225_650; // 50 s into a minute

function cluster(extra: Partial<ServedCluster> = {}): ServedCluster {
  return {
    version: '9.2.2',
    time: T,
    quorate: true,
    nodes: [
      {
        name: 'node1',
        online: true,
        haState: 'online',
        maxcpu: 16,
        maxmem: 64 * GIB,
        cpu: 4,
        mem: 16 * GIB,
        pressureCpu: 12.5,
      },
      {
        name: 'node2',
        online: true,
        haState: 'maintenance',
        maintenanceRequest: true,
        maxcpu: 16,
        maxmem: 64 * GIB,
        cpu: 0,
        mem: 2 * GIB,
        format: 'pve8',
      },
      { name: 'node3', online: false, haState: 'unknown', maxcpu: 8, maxmem: 32 * GIB, cpu: 0, mem: 0 },
    ],
    guests: [
      {
        sid: 'vm:101',
        node: 'node1',
        running: true,
        cpu: 1,
        maxcpu: 2,
        mem: 2 * GIB,
        maxmem: 4 * GIB,
        memhost: 3 * GIB,
        hastate: 'started',
        config: { ide2: 'local:iso/d.iso,media=cdrom' },
      },
      {
        sid: 'ct:102',
        node: 'node1',
        running: true,
        cpu: 0,
        maxcpu: 1,
        mem: GIB,
        maxmem: 2 * GIB,
        hastate: 'migrate',
        lock: 'migrate',
      },
      {
        sid: 'vm:103',
        node: 'node2',
        running: true,
        cpu: 1,
        maxcpu: 2,
        mem: GIB,
        maxmem: 4 * GIB,
        localResources: ['hostpci0'],
      },
    ],
    ha: {
      master: 'node1',
      services: [
        { sid: 'vm:101', state: 'started', node: 'node1', uid: 'a1' },
        { sid: 'ct:102', state: 'migrate', node: 'node1', target: 'node2', uid: 'b2' },
      ],
      resources: [
        { sid: 'vm:101', state: 'started' },
        { sid: 'ct:102', state: 'started', autoRebalance: false },
      ],
    },
    rules: [
      {
        type: 'node-affinity',
        id: 'home',
        resources: ['vm:101'],
        nodes: [
          { node: 'node1', priority: 2 },
          { node: 'node2', priority: 0 },
        ],
        strict: false,
      },
      {
        type: 'resource-affinity',
        id: 'apart',
        resources: ['vm:101', 'ct:102'],
        affinity: 'negative',
        errors: { resources: ['conflict'] },
      },
    ],
    groups: [],
    crs: { ha: 'dynamic', 'ha-auto-rebalance': 1, 'ha-auto-rebalance-threshold': 25 },
    ...extra,
  };
}

function req(params: Record<string, string>): FakeRequest {
  return {
    method: 'GET',
    path: '/',
    params,
    query: new URLSearchParams(),
    form: new URLSearchParams(),
    authorization: undefined,
  };
}

describe('every reply parses with the client schemas', () => {
  it.each<[string, (c: ServedCluster) => unknown, Parameters<typeof decode>[0]]>([
    ['GET /version', (c) => versionReply(c).data, versionSchema],
    ['GET /cluster/resources', (c) => clusterResourcesReply(c).data, clusterResourcesSchema],
    ['GET /cluster/status', (c) => clusterStatusReply(c).data, clusterStatusSchema],
    ['GET /cluster/ha/status/manager_status', (c) => managerStatusReply(c).data, haManagerStatusSchema],
    ['GET /cluster/ha/resources', (c) => haResourcesReply(c).data, haResourcesSchema],
    ['GET /cluster/ha/rules', (c) => haRulesReply(c).data, haRulesSchema],
    ['GET /cluster/options', (c) => clusterOptionsReply(c).data, clusterOptionsSchema],
    ['GET /nodes/{node}/rrddata', (c) => nodeRrdReply(c, 'node1').data, nodeRrdSchema],
    [
      'GET /nodes/{node}/{type}/{vmid}/config',
      (c) => guestConfigReply(c, req({ node: 'node1', type: 'qemu', vmid: '101' })).data,
      guestConfigSchema('qemu', 101),
    ],
    [
      'GET /nodes/{node}/{type}/{vmid}/migrate (qemu)',
      (c) => migratePrecheckReply(c, req({ node: 'node2', type: 'qemu', vmid: '103' })).data,
      migratePrecheckSchema,
    ],
    [
      'GET /nodes/{node}/{type}/{vmid}/migrate (lxc)',
      (c) => migratePrecheckReply(c, req({ node: 'node1', type: 'lxc', vmid: '102' })).data,
      migratePrecheckSchema,
    ],
    [
      'POST /cluster/ha/resources/{sid}/migrate',
      (c) => haMotionReply(c, 'vm:101', 'node2', ['ct:102']).data,
      haMotionReplySchema,
    ],
    [
      'POST /cluster/ha/resources/{sid}/migrate (blocked)',
      (c) => haMotionBlockedReply(c, 'vm:101', 'node2', ['ct:102']).data,
      haMotionReplySchema,
    ],
  ])('%s', (endpoint, reply, schema) => {
    expect(() => decode(schema, reply(cluster()), { endpoint })).not.toThrow();
    // PVE 8 (rules: 501, a blocked motion: a 500 — no data to parse)
    const pve8 = reply(
      cluster({ version: '8.4.1', groups: [{ group: 'g', nodes: [{ node: 'node1', priority: 0 }] }] }),
    );
    if (!endpoint.includes('rules') && !endpoint.includes('blocked'))
      expect(() => decode(schema, pve8, { endpoint })).not.toThrow();
  });
});

describe('the real shapes and quirks', () => {
  it('cluster resources: cpu a fraction (the integer 0 when idle), memhost only from PVE 9 nodes, storages, hastate and lock left out when unset', () => {
    const rows = decode(clusterResourcesSchema, clusterResourcesReply(cluster()).data, { endpoint: 'x' });
    const raw = clusterResourcesReply(cluster()).data as Record<string, unknown>[];
    expect(raw.find((r) => r.id === 'node/node1')).toMatchObject({ cpu: 0.25, hastate: 'online' });
    expect(raw.find((r) => r.id === 'node/node3')).toEqual({
      id: 'node/node3',
      type: 'node',
      node: 'node3',
      status: 'offline',
      level: '',
      'cgroup-mode': 2,
      maxcpu: 8,
      maxmem: 32 * GIB,
    });
    expect(raw.find((r) => r.id === 'lxc/102')).toMatchObject({
      cpu: 0,
      memhost: 0,
      lock: 'migrate',
      hastate: 'migrate',
      template: 0,
    });
    expect(raw.find((r) => r.id === 'qemu/101')).toMatchObject({ cpu: 0.5, memhost: 3 * GIB });
    expect(raw.find((r) => r.id === 'qemu/103')).not.toHaveProperty('memhost'); // on a PVE 8 node
    expect(raw.find((r) => r.id === 'qemu/103')).not.toHaveProperty('hastate');
    expect(
      rows.filter((r) => r.kind === 'storage').map((r) => (r.kind === 'storage' ? [r.storage, r.shared] : [])),
    ).toContainEqual(['ceph', true]);
    const pve8 = clusterResourcesReply(cluster({ version: '8.4.1' })).data as Record<string, unknown>[];
    expect(pve8.some((r) => 'memhost' in r)).toBe(false);
  });

  it('manager_status: quorate a Perl boolean ("1", "" or null), running 1 for started services, node states and requests; no master: an empty document', () => {
    const data = managerStatusReply(cluster()).data as {
      manager_status: Record<string, unknown>;
      quorum: Record<string, unknown>;
    };
    expect(data.quorum).toEqual({ node: 'node1', quorate: '1' });
    const quorumOf = (extra: Partial<ServedCluster>) =>
      (managerStatusReply(cluster(extra)).data as { quorum: unknown }).quorum;
    expect(quorumOf({ quorate: false })).toEqual({ node: 'node1', quorate: '' });
    expect(quorumOf({ quorate: false, quorumUnreadable: true })).toEqual({ node: 'node1', quorate: null });
    expect(
      decode(haManagerStatusSchema, managerStatusReply(cluster({ quorate: false })).data, { endpoint: 'x' }).quorum,
    ).toEqual({ node: 'node1', quorate: false });
    expect(data.manager_status.node_status).toEqual({ node1: 'online', node2: 'maintenance', node3: 'unknown' });
    expect(data.manager_status.node_request).toEqual({ node1: {}, node2: { maintenance: 1 }, node3: {} });
    expect(data.manager_status.service_status).toEqual({
      'vm:101': { state: 'started', node: 'node1', uid: 'a1', running: 1 },
      'ct:102': { state: 'migrate', node: 'node1', uid: 'b2', target: 'node2' },
    });
    expect(managerStatusReply(cluster({ ha: { master: undefined, services: [], resources: [] } })).data).toEqual({});
  });

  it('rules: comma lists, strict left out when 0, errors kept; PVE 8 answers 501', () => {
    expect(haRulesReply(cluster()).data).toEqual([
      {
        rule: 'home',
        type: 'node-affinity',
        resources: 'vm:101',
        nodes: 'node1:2,node2',
        order: 1,
        digest: 'feedface',
      },
      {
        rule: 'apart',
        type: 'resource-affinity',
        resources: 'vm:101,ct:102',
        affinity: 'negative',
        errors: { resources: ['conflict'] },
        order: 2,
        digest: 'feedface',
      },
    ]);
    expect(haRulesReply(cluster({ version: '8.4.1' }))).toEqual({
      status: 501,
      statusText: "Method 'GET /api2/json/cluster/ha/rules' not implemented",
    });
  });

  it('rules on PVE 9 already hold the groups not yet migrated, as ha-group-<name> rules (the GET migrates them on read)', () => {
    const withGroup = cluster({
      groups: [
        {
          group: 'g',
          nodes: [
            { node: 'node1', priority: 2 },
            { node: 'node2', priority: 0 },
          ],
          restricted: true,
        },
      ],
      ha: {
        ...cluster().ha,
        resources: [
          { sid: 'vm:101', state: 'started', group: 'g' },
          { sid: 'ct:102', state: 'started' },
        ],
      },
    });
    expect((haRulesReply(withGroup).data as Record<string, unknown>[]).at(-1)).toEqual({
      rule: 'ha-group-g',
      type: 'node-affinity',
      resources: 'vm:101',
      nodes: 'node1:2,node2',
      strict: 1,
      order: 3,
      digest: 'feedface',
    });
    // the groups themselves are still listed until the HA manager migrates them for good
    expect(haGroupsReply(withGroup).data).toEqual([
      { group: 'g', nodes: 'node1:2,node2', type: 'group', restricted: 1 },
    ]);
    // a group without resources gives no rule
    expect((haRulesReply(cluster({ groups: withGroup.groups })).data as unknown[]).length).toBe(2);
  });

  it('HA motions the handler refuses before queueing: a 500 with its message', () => {
    expect(haMotionRefusal(cluster(), 'vm:101', 'node9')).toEqual({
      status: 500,
      statusText: "no such cluster node 'node9'",
    });
    expect(haMotionRefusal(cluster(), 'vm:103', 'node2')).toEqual({
      status: 500,
      statusText: "service 'vm:103' is not HA managed",
    });
    const failed = cluster({
      ha: { ...cluster().ha, services: [{ sid: 'vm:101', state: 'error', node: 'node1', uid: 'x' }] },
    });
    expect(haMotionRefusal(failed, 'vm:101', 'node2')).toEqual({
      status: 500,
      statusText: "service 'vm:101' in error state, must be disabled and fixed first",
    });
    expect(haMotionRefusal(cluster(), 'vm:101', 'node2')).toBeUndefined();
    for (const text of [
      "no such cluster node 'node9'",
      "service 'vm:103' is not HA managed",
      "service 'vm:101' in error state, must be disabled and fixed first",
    ]) {
      expect(isActionRefusal(500, text)).toBe(true);
    }
    expect(isActionRefusal(500, 'internal error')).toBe(false);
    expect(isActionRefusal(502, "no such cluster node 'x'")).toBe(false);
  });

  it('groups: the 500 of a PVE 9 cluster whose groups were migrated; the list otherwise', () => {
    expect(haGroupsReply(cluster()).status).toBe(500);
    expect(
      haGroupsReply(cluster({ groups: [{ group: 'g', nodes: [{ node: 'node1', priority: 2 }], restricted: true }] }))
        .data,
    ).toEqual([{ group: 'g', nodes: 'node1:2', type: 'group', restricted: 1 }]);
    expect(() =>
      decode(
        haGroupsSchema,
        haGroupsReply(cluster({ groups: [{ group: 'g', nodes: [{ node: 'node1', priority: 2 }] }] })).data,
        { endpoint: 'x' },
      ),
    ).not.toThrow();
  });

  it('options: crs as a property string, as an object, or left out when unset', () => {
    expect(clusterOptionsReply(cluster()).data).toEqual({
      keyboard: 'en-us',
      crs: 'ha=dynamic,ha-auto-rebalance=1,ha-auto-rebalance-threshold=25',
    });
    expect(clusterOptionsReply(cluster({ crsAs: 'object' })).data).toEqual({
      keyboard: 'en-us',
      crs: { ha: 'dynamic', 'ha-auto-rebalance': 1, 'ha-auto-rebalance-threshold': 25 },
    });
    expect(clusterOptionsReply(cluster({ crs: {} })).data).toEqual({ keyboard: 'en-us' });
    const parsed = decode(clusterOptionsSchema, clusterOptionsReply(cluster()).data, { endpoint: 'x' });
    expect(parsed.crs).toMatchObject({ ha: 'dynamic', haAutoRebalance: true, haAutoRebalanceThreshold: 25 });
  });

  it('RRD: three complete minute rows and the bucket being filled; PSI only where reported, never on a PVE 8 node', () => {
    const rows = nodeRrdReply(cluster(), 'node1').data as Record<string, unknown>[];
    expect(rows.map((r) => r.time)).toEqual([T - 50 - 180, T - 50 - 120, T - 50 - 60, T - 50]);
    expect(rows[2]).toMatchObject({ cpu: 0.25, memused: 16 * GIB, pressurecpusome: 12.5 });
    expect(rows[2]).not.toHaveProperty('pressurememorysome');
    expect(rows[3]).toEqual({ time: T - 50, loadavg: 0.5 });
    const old = nodeRrdReply(cluster(), 'node2').data as Record<string, unknown>[];
    expect(Object.keys(old[0]!).filter((k) => k.startsWith('pressure') || k === 'memavailable')).toEqual([]);
    expect(nodeRrdReply(cluster(), 'node9')).toEqual({ status: 500, statusText: "no such node 'node9'" });
  });

  it('config: memory in MiB as a string, the guest own keys; an unknown guest is a 500', () => {
    expect(guestConfigReply(cluster(), req({ node: 'node1', type: 'qemu', vmid: '101' })).data).toEqual({
      cores: 2,
      memory: '4096',
      scsi0: 'ceph:vm-101-disk-0,size=32G',
      digest: 'c0ffee',
      ide2: 'local:iso/d.iso,media=cdrom',
    });
    expect(guestConfigReply(cluster(), req({ node: 'node1', type: 'qemu', vmid: '999' })).status).toBe(500);
  });

  it('precheck: containers spell the node lists with hyphens; local resources reported', () => {
    expect(migratePrecheckReply(cluster(), req({ node: 'node1', type: 'lxc', vmid: '102' })).data).toEqual({
      running: 1,
      'allowed-nodes': ['node2', 'node3'],
      'not-allowed-nodes': {},
    });
    expect(migratePrecheckReply(cluster(), req({ node: 'node2', type: 'qemu', vmid: '103' })).data).toMatchObject({
      allowed_nodes: ['node1', 'node3'],
      local_resources: ['hostpci0'],
    });
  });

  it('HA motion reply: an object on PVE 9, null on PVE 8; blocked: blocking-resources (PVE 9) or a 500 (PVE 8)', () => {
    expect(haMotionReply(cluster(), 'vm:101', 'node2').data).toEqual({ sid: 'vm:101', 'requested-node': 'node2' });
    expect(haMotionReply(cluster({ version: '8.4.1' }), 'vm:101', 'node2').data).toBeNull();
    const blocked = decode(haMotionReplySchema, haMotionBlockedReply(cluster(), 'vm:101', 'node2', ['ct:102']).data, {
      endpoint: 'x',
    });
    expect(blocked).toMatchObject({ 'blocking-resources': [{ sid: 'ct:102', cause: 'resource-affinity' }] });
    expect(haMotionBlockedReply(cluster({ version: '8.4.1' }), 'vm:101', 'node2', ['ct:102']).status).toBe(500);
  });

  it('clusterReadRoutes reads the cluster at each request', async () => {
    let c = cluster();
    const routes = clusterReadRoutes(() => c);
    expect(Object.keys(routes).sort()).toEqual([
      'GET /access/permissions',
      'GET /cluster/ha/groups',
      'GET /cluster/ha/resources',
      'GET /cluster/ha/rules',
      'GET /cluster/ha/status/manager_status',
      'GET /cluster/options',
      'GET /cluster/resources',
      'GET /cluster/status',
      'GET /nodes/{node}/rrddata',
      'GET /nodes/{node}/{type}/{vmid}/config',
      'GET /nodes/{node}/{type}/{vmid}/migrate',
      'GET /version',
    ]);
    expect((await routes['GET /version']!(req({}))).data).toMatchObject({ version: '9.2.2' });
    c = cluster({ version: '8.4.1' });
    expect((await routes['GET /version']!(req({}))).data).toMatchObject({ version: '8.4.1', release: '8.4' });
  });
});

describe('startFakePveServer over a served cluster', () => {
  it('answers the read routes; with record: false it keeps no request (a long-running server)', async () => {
    const { startFakePveServer } = await import('./fake-server');
    for (const record of [true, false]) {
      const server = await startFakePveServer({ routes: clusterReadRoutes(() => cluster()), record });
      try {
        const reply = (await (await fetch(`${server.url}/api2/json/cluster/options`)).json()) as { data: unknown };
        expect(reply.data).toEqual({
          keyboard: 'en-us',
          crs: 'ha=dynamic,ha-auto-rebalance=1,ha-auto-rebalance-threshold=25',
        });
        expect(server.requests).toHaveLength(record ? 1 : 0);
      } finally {
        await server.close();
      }
    }
  });
});
