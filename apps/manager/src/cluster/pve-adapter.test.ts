import { PveApiError } from '@poise/pve-api';
import { afterEach, describe, expect, it } from 'vitest';
import { crsOptions, groupRules, portErrorKind, portRules } from './pve-adapter';
import { GIB, type PveSetup, pveSetup, unbalanced } from '../testing/pve-support';

const open: PveSetup[] = [];
async function setup(...args: Parameters<typeof pveSetup>): Promise<PveSetup> {
  const s = await pveSetup(...args);
  open.push(s);
  return s;
}
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

describe('the Proxmox VE adapter against the fake API (HTTPS, pinned)', () => {
  it('balances the cluster in act mode, one motion at a time', async () => {
    const s = await setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } });
    await s.daemon.start();
    await s.run(12);
    const rounds = s.rounds();
    expect(rounds.filter((r) => r.outcome === 'error')).toEqual([]);
    expect(s.posts().map((p) => `${p.path} ${p.target}`)).toEqual([
      '/cluster/ha/resources/vm:101/migrate node2',
      '/cluster/ha/resources/vm:102/migrate node3',
    ]);
    expect(
      s
        .records()
        .filter((r) => r.event === 'motion')
        .map((r) => r.msg),
    ).toEqual([
      'migrate vm:101 from node1 to node2 succeeded after 20 s',
      'migrate vm:102 from node1 to node3 succeeded after 20 s',
    ]);
    expect(rounds.at(-1)).toMatchObject({ outcome: 'skip', reason: 'below-threshold' });
  });
});

/** Requests per round, by method and path template (node names and vmids folded). */
function requestsByRound(s: PveSetup, from: number): string[] {
  return s.fake.server.requests
    .slice(from)
    .map(
      (r) =>
        `${r.method} ${r.path.replace(/\/nodes\/[^/]+/, '/nodes/{node}').replace(/\/(qemu|lxc)\/\d+/, '/{type}/{vmid}')}`,
    );
}

function count(list: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of list) out[x] = (out[x] ?? 0) + 1;
  return out;
}

describe('reads per round', () => {
  it('four cluster-wide calls per round; version, rules and per-node RRD every 60 s; configs when migratability is checked', async () => {
    const s = await setup({ mode: 'observe', policy: { 'ha-auto-rebalance-check-migratable': 1 } });
    await s.daemon.start();
    const perRound: Record<string, number>[] = [];
    for (let i = 0; i < 7; i++) {
      const before = s.fake.server.requests.length;
      await s.run(1);
      perRound.push(count(requestsByRound(s, before)));
    }
    const every = {
      'GET /cluster/resources': 1,
      'GET /cluster/ha/status/manager_status': 1,
      'GET /cluster/ha/resources': 1,
      'GET /cluster/options': 1,
    };
    const slow = { 'GET /version': 1, 'GET /cluster/ha/rules': 1, 'GET /nodes/{node}/rrddata': 3 };
    // round 1 (t 0): everything, and the config of each of the 4 movable guests
    expect(perRound[0]).toEqual({ ...every, ...slow, 'GET /nodes/{node}/{type}/{vmid}/config': 4 });
    // rounds 2–6 (t 10..50): the four cheap calls only
    for (const r of perRound.slice(1, 6)) expect(r).toEqual(every);
    // round 7 (t 60): the slow reads again; configs are cached for 600 s
    expect(perRound[6]).toEqual({ ...every, ...slow });
  });
});

describe('finished migrations (cost–benefit)', () => {
  it('reads each successful qmigrate task’s log once, at the slow cadence, and names a log that says nothing usable', async () => {
    const spec = unbalanced({
      guests: [
        { sid: 'vm:101', node: 'node1', mem: 4 * GIB },
        { sid: 'vm:102', node: 'node1', mem: 0 },
        { sid: 'vm:103', node: 'node2', mem: 2 * GIB },
      ],
    });
    const s = await setup({}, spec);
    s.cluster.s.tasks['UPID:node1:1:2:3:qmigrate:101:root@pam:'] = {
      sid: 'vm:101',
      target: 'node2',
      status: 'stopped',
      exitstatus: 'OK',
    };
    s.cluster.s.tasks['UPID:node1:1:2:4:qmigrate:102:root@pam:'] = {
      sid: 'vm:102',
      target: 'node2',
      status: 'stopped',
      exitstatus: 'OK',
    };
    s.cluster.s.tasks['UPID:node1:1:2:5:qmigrate:103:root@pam:'] = {
      sid: 'vm:103',
      target: 'node3',
      status: 'stopped',
      exitstatus: 'migration problems',
    };
    const needs = { guestConfigs: false, nonHa: false, migrationTasks: true };
    const before = s.fake.server.requests.length;
    const snap = await s.host.port.readSnapshot(needs);
    // the fake lists every task on every node; vm:101's log: 4 GiB in 8 s
    expect(snap.migrationTasks).toEqual([{ durationSeconds: 8, transferredBytes: 4 * GIB }]);
    expect(snap.problems?.map((p) => p.message)).toContain(
      "migration task UPID:node1:1:2:4:qmigrate:102:root@pam:: no 'migration active, transferred …' line: left out of the migration link rate",
    );
    const logs = (from: number) => s.fake.server.requests.slice(from).filter((r) => r.path.endsWith('/log')).length;
    expect(logs(before)).toBe(2); // the failed task's log is not read
    // the next read within 60 s reads nothing again; without the need, nothing at all
    const again = s.fake.server.requests.length;
    expect((await s.host.port.readSnapshot(needs)).migrationTasks).toEqual(snap.migrationTasks);
    expect(s.fake.server.requests.slice(again).filter((r) => r.path.includes('/tasks')).length).toBe(0);
    expect((await s.host.port.readSnapshot()).migrationTasks).toBeUndefined();
  });
});

describe('finished migrations: failed calls', () => {
  it('a node whose task list fails and a log that fails are left out, named; the log is read again at the next refresh', async () => {
    const s = await setup({}, unbalanced({ guests: [{ sid: 'vm:101', node: 'node1', mem: 4 * GIB }] }));
    s.cluster.s.tasks['UPID:node1:1:2:3:qmigrate:101:root@pam:'] = {
      sid: 'vm:101',
      target: 'node2',
      status: 'stopped',
      exitstatus: 'OK',
    };
    s.fake.injectWhere('GET /nodes/{node}/tasks', (r) => r.params.node === 'node2', {
      status: 403,
      statusText: 'Permission check failed',
    });
    s.fake.inject('GET /nodes/{node}/tasks/{upid}/log', { status: 403, statusText: 'Permission check failed' });
    const needs = { guestConfigs: false, nonHa: false, migrationTasks: true };
    const snap = await s.host.port.readSnapshot(needs);
    expect(snap.migrationTasks).toEqual([]);
    const messages = snap.problems?.map((p) => p.message) ?? [];
    expect(messages.some((m) => m.startsWith("the finished migrations of node 'node2' could not be read"))).toBe(true);
    expect(
      messages.some((m) =>
        m.startsWith('the log of migration task UPID:node1:1:2:3:qmigrate:101:root@pam: could not be read'),
      ),
    ).toBe(true);
    // a minute later (six daemon rounds of 10 s) the list and the log are read again
    await s.daemon.start();
    await s.run(6);
    const later = await s.host.port.readSnapshot(needs);
    expect(later.migrationTasks).toEqual([{ durationSeconds: 8, transferredBytes: 4 * GIB }]);
  });
});

describe('what the adapter reads', () => {
  it('nodes, guests, HA states and storage as the port has them (units: cores, bytes, percent)', async () => {
    const spec = unbalanced({
      guests: [
        { sid: 'vm:101', node: 'node1', cpu: 1.5, maxcpu: 4, mem: 3 * GIB, memhost: 5 * GIB },
        { sid: 'ct:200', node: 'node2', cpu: 0.5, maxcpu: 2, mem: GIB, autoRebalance: false },
        { sid: 'vm:300', node: 'node3', ha: false, running: false },
      ],
    });
    spec.nodes[0]!.pressureCpu = 12.5;
    spec.nodes[0]!.baseCpu = 2;
    spec.nodes[2]!.maintenance = true;
    const s = await setup({}, spec);
    const snap = await s.host.port.readSnapshot();
    expect(
      snap.nodes.map((n) => [n.name, n.online, n.maintenance, n.cpu, n.maxcpu, n.pressure.cpuSome, n.pressure.memSome]),
    ).toEqual([
      // cpu 3.5 of 16 cores (base 2 + the VM's 1.5); pressure from the newest complete RRD row
      ['node1', true, false, 3.5, 16, 12.5, undefined],
      ['node2', true, false, 0.5, 16, undefined, undefined],
      ['node3', false, true, 0, 16, undefined, undefined],
    ]);
    expect(snap.guests).toEqual([
      {
        sid: 'ct:200',
        vmid: 200,
        type: 'ct',
        node: 'node2',
        running: true,
        lock: undefined,
        template: false,
        ha: { state: 'started', target: undefined, requestState: 'started', autoRebalance: false, uid: '200-0' },
        stats: { cpu: 0.5, maxcpu: 2, mem: GIB, maxmem: 4 * GIB, memhost: undefined },
      },
      {
        sid: 'vm:101',
        vmid: 101,
        type: 'vm',
        node: 'node1',
        running: true,
        lock: undefined,
        template: false,
        ha: { state: 'started', target: undefined, requestState: 'started', autoRebalance: true, uid: '101-0' },
        stats: { cpu: 1.5, maxcpu: 4, mem: 3 * GIB, maxmem: 4 * GIB, memhost: 5 * GIB },
      },
      {
        sid: 'vm:300',
        vmid: 300,
        type: 'vm',
        node: 'node3',
        running: false,
        lock: undefined,
        template: false,
        ha: undefined,
        stats: { cpu: 0, maxcpu: 2, mem: 0, maxmem: 4 * GIB, memhost: undefined },
      },
    ]);
    expect([snap.quorate, snap.haDisarmed, snap.crs]).toEqual([
      true,
      false,
      { ha: 'static', autoRebalance: false, settings: {} },
    ]);
    expect([...snap.storageShared!]).toEqual([
      ['local', false],
      ['ceph', true],
    ]);
    expect(snap.problems).toEqual([]);
  });

  it('an online node without stats, a running guest without stats, an HA resource without a guest: each left out and named', async () => {
    const s = await setup();
    s.fake.inject('GET /cluster/resources', {
      data: [
        {
          id: 'node/node1',
          type: 'node',
          node: 'node1',
          status: 'online',
          cpu: 0.1,
          maxcpu: 16,
          mem: GIB,
          maxmem: 64 * GIB,
        },
        { id: 'node/node2', type: 'node', node: 'node2', status: 'online' },
        { id: 'qemu/101', type: 'qemu', vmid: 101, node: 'node1', status: 'running', maxcpu: 2, maxmem: 4 * GIB },
        {
          id: 'qemu/102',
          type: 'qemu',
          vmid: 102,
          node: 'node1',
          status: 'running',
          cpu: 0.5,
          maxcpu: 2,
          mem: GIB,
          maxmem: 4 * GIB,
        },
      ],
    });
    const snap = await s.host.port.readSnapshot();
    expect(snap.nodes.map((n) => [n.name, n.online])).toEqual([
      ['node1', true],
      ['node2', false],
    ]);
    expect(snap.guests.map((g) => g.sid)).toEqual(['vm:102']);
    expect(snap.problems!.map((p) => p.message)).toEqual([
      "node 'node2' is online but GET /cluster/resources has no usage stats for it (is 'Sys.Audit' on '/nodes/node2' granted?): left out",
      "guest 'vm:101' is running but GET /cluster/resources has no usage stats for it: left out",
      "HA resource 'vm:103' has no guest in GET /cluster/resources (deleted, or 'VM.Audit' on '/vms/103' missing?): left out",
      "HA resource 'vm:104' has no guest in GET /cluster/resources (deleted, or 'VM.Audit' on '/vms/104' missing?): left out",
    ]);
  });

  it('an RRD whose newest complete row is older than 5 minutes gives no pressure, and says so', async () => {
    const spec = unbalanced();
    spec.nodes[0]!.pressureCpu = 50;
    const s = await setup({}, spec);
    s.fake.injectWhere('GET /nodes/{node}/rrddata', (r) => r.params.node === 'node1', {
      data: [{ time: s.cluster.time - 600, cpu: 0.5, pressurecpusome: 50 }, { time: s.cluster.time - 60 }],
    });
    const snap = await s.host.port.readSnapshot();
    expect(snap.nodes[0]!.pressure).toEqual({ cpuSome: undefined, memSome: undefined });
    expect(snap.problems!.map((p) => p.message)).toEqual([
      "node 'node1': its RRD has no complete row of the last 300 s: pressure unknown",
    ]);
  });

  it('an HA state this build does not know is read as unknown; a disarmed HA and a lost quorum are seen', async () => {
    const s = await setup();
    s.cluster.s.quorate = false;
    s.cluster.s.haDisarmed = true;
    s.cluster.guest('vm:101').haState = 'queued' as never;
    const snap = await s.host.port.readSnapshot();
    expect([snap.quorate, snap.haDisarmed, snap.guests[0]!.ha!.state]).toEqual([false, true, 'unknown']);
  });

  it('without HA configured, quorum comes from /cluster/status', async () => {
    const s = await setup();
    s.fake.inject('GET /cluster/ha/status/manager_status', { data: { manager_status: {}, lrm_status: {} } });
    s.fake.inject('GET /cluster/ha/resources', { data: [] });
    const snap = await s.host.port.readSnapshot();
    expect(snap.quorate).toBe(true);
    expect(s.fake.server.requests.map((r) => r.path)).toContain('/cluster/status');
    expect(snap.guests.every((g) => g.ha === undefined)).toBe(true);
  });
});

describe('crsOptions: the cluster balancer settings in percent', () => {
  const crs = {
    ha: 'static',
    haRebalanceOnStart: undefined,
    haAutoRebalance: true,
    haAutoRebalanceThreshold: 0.3,
    haAutoRebalanceMethod: 'topsis',
    haAutoRebalanceHoldDuration: 3,
    haAutoRebalanceMargin: 0.1,
  };
  it.each([
    // pve-manager 9.1 (pve-cluster < 9.1.5 stores fractions): × 100
    ['9.1', { major: 9, minor: 1 }, 30, 10],
    // 9.2 stores percent: 0.3 there is 0.3 %
    ['9.2', { major: 9, minor: 2 }, 0.3, 0.1],
    ['10.0', { major: 10, minor: 0 }, 0.3, 0.1],
  ])('on %s', (_v, version, threshold, margin) => {
    const out = crsOptions(crs, { version: '', release: '', repoId: undefined, ...version });
    expect(out.settings!.thresholdPercent).toBeCloseTo(threshold, 12);
    expect(out.settings!.marginPercent).toBeCloseTo(margin, 12);
    expect(out).toMatchObject({ ha: 'static', autoRebalance: true, settings: { holdRounds: 3, method: 'topsis' } });
  });

  it('unset options: the defaults, no settings', () => {
    expect(
      crsOptions(
        {
          ha: undefined,
          haRebalanceOnStart: undefined,
          haAutoRebalance: undefined,
          haAutoRebalanceThreshold: undefined,
          haAutoRebalanceMethod: undefined,
          haAutoRebalanceHoldDuration: undefined,
          haAutoRebalanceMargin: undefined,
        },
        undefined,
      ),
    ).toEqual({
      ha: 'basic',
      autoRebalance: false,
      settings: {},
    });
  });
});

describe('rules and groups', () => {
  const base = {
    comment: undefined,
    digest: undefined,
    errors: new Map<string, string[]>(),
    disabled: false,
    applied: true,
  };
  it('rules in force only (not disabled, no feasibility errors), in rule order', () => {
    expect(
      portRules([
        {
          ...base,
          rule: 'b',
          type: 'resource-affinity',
          resources: ['vm:1', 'vm:2'],
          nodes: undefined,
          strict: false,
          affinity: 'negative',
          order: 2,
        },
        {
          ...base,
          rule: 'a',
          type: 'node-affinity',
          resources: ['vm:1'],
          nodes: [{ node: 'n1', priority: 2 }],
          strict: true,
          affinity: undefined,
          order: 1,
        },
        {
          ...base,
          rule: 'off',
          type: 'node-affinity',
          resources: ['vm:3'],
          nodes: [],
          strict: false,
          affinity: undefined,
          order: 3,
          disabled: true,
          applied: false,
        },
        {
          ...base,
          rule: 'bad',
          type: 'node-affinity',
          resources: ['vm:4'],
          nodes: [],
          strict: false,
          affinity: undefined,
          order: 4,
          errors: new Map([['nodes', ['x']]]),
          applied: false,
        },
      ]),
    ).toEqual([
      { type: 'node-affinity', id: 'a', resources: ['vm:1'], nodes: [{ node: 'n1', priority: 2 }], strict: true },
      { type: 'resource-affinity', id: 'b', resources: ['vm:1', 'vm:2'], affinity: 'negative' },
    ]);
  });

  it("groups become 'ha-group-<name>' node-affinity rules of their resources (strict = restricted)", () => {
    const res = (sid: string, group?: string) => ({
      sid,
      type: 'vm',
      state: 'started',
      failback: true,
      maxRestart: 1,
      maxRelocate: 1,
      autoRebalance: true,
      group,
      comment: undefined,
    });
    expect(
      groupRules(
        [
          {
            group: 'web',
            nodes: [
              { node: 'n1', priority: 0 },
              { node: 'n2', priority: 1 },
            ],
            restricted: false,
            nofailback: false,
            comment: undefined,
          },
          {
            group: 'empty',
            nodes: [{ node: 'n1', priority: 0 }],
            restricted: true,
            nofailback: false,
            comment: undefined,
          },
        ],
        [res('vm:2', 'web'), res('vm:1', 'web'), res('vm:3')],
      ),
    ).toEqual([
      {
        type: 'node-affinity',
        id: 'ha-group-web',
        resources: ['vm:1', 'vm:2'],
        nodes: [
          { node: 'n1', priority: 0 },
          { node: 'n2', priority: 1 },
        ],
        strict: false,
      },
    ]);
  });
});

describe('portErrorKind', () => {
  it.each([
    ['timeout', 'timeout'],
    ['connection', 'network'],
    ['unauthorized', 'auth'],
    ['forbidden', 'auth'],
    ['bad-reply', 'invalid-reply'],
    ['tls-untrusted', 'tls'],
    ['tls-pin-mismatch', 'tls'],
    ['server-error', 'http'],
    ['bad-request', 'http'],
    ['not-implemented', 'http'],
    ['http-error', 'http'],
    ['aborted', 'other'],
    ['bad-option', 'other'],
  ] as const)('%s → %s', (code, kind) => {
    expect(portErrorKind(new PveApiError(code, 'x'))).toBe(kind);
  });
});
