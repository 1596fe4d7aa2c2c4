// Faults of a real cluster, each against the fake API over real HTTPS on 127.0.0.1 with a pinned
// fingerprint, through the real Proxmox VE host (client, TLS, adapter) and the daemon. Each time
// the daemon survives (the round says what happened in one line), issues no duplicate motion,
// and resumes when the fault clears.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeReply } from '@poise/pve-api/server';
import { generateCertificates, permissionDenied } from '@poise/pve-api/server';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPveClient } from './host';
import { loadToken } from '../config/secret';
import { startFakePve } from '../testing/fake-pve';
import { certs, GIB, type PveSetup, pveSetup, SECRET, TOKEN, unbalanced } from '../testing/pve-support';

const open: PveSetup[] = [];
/** Every log line of every test in this file: none may hold the token secret. */
const allLines: string[] = [];
async function setup(...args: Parameters<typeof pveSetup>): Promise<PveSetup> {
  const s = await pveSetup(...args);
  open.push(s);
  return s;
}
afterEach(async () => {
  for (const s of open.splice(0)) {
    allLines.push(...s.lines, await s.daemon.metrics.registry.metrics(), JSON.stringify(s.daemon.status()));
    await s.close();
  }
});
afterAll(() => {
  expect(allLines.length).toBeGreaterThan(0);
  for (const line of allLines) expect(line).not.toContain(SECRET);
});

const ACT = { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } };
/** A balancing role without 'Sys.Console' (the HA endpoints' privilege). */
const AUDIT_AND_MIGRATE = ['Datastore.Audit', 'Sys.Audit', 'VM.Audit', 'VM.Migrate'];
const RESOURCES = 'GET /cluster/resources';

/** The HA motions requested, as `sid>target`. */
function motions(s: PveSetup): string[] {
  return s.posts().map((p) => `${p.path.split('/')[4]}>${p.target}`);
}

/** Two nodes, two non-HA VMs of 4 cores / 16 GiB on node1. */
function plainGuests() {
  return {
    nodes: [{ name: 'node1' }, { name: 'node2' }],
    guests: ['vm:201', 'vm:202'].map((sid) => ({ sid, node: 'node1', ha: false, cpu: 4, mem: 16 * GIB })),
  };
}

function errorRounds(s: PveSetup) {
  return s.rounds().filter((r) => r.outcome === 'error');
}

/** A /cluster/resources reply whose node row has a field of the wrong type. */
const WRONG_TYPE: FakeReply = {
  data: [
    {
      id: 'node/node1',
      type: 'node',
      node: 'node1',
      status: 'online',
      cpu: 0.1,
      maxcpu: 16,
      mem: 1,
      maxmem: 'sixteen gigs',
    },
  ],
};

describe('faults while reading the cluster (a motion in flight): one line, the motion followed after, no duplicate', () => {
  it.each<[string, string, FakeReply[], string, RegExp]>([
    [
      '500s (after the retries)',
      RESOURCES,
      Array(3).fill({ status: 500, statusText: 'internal error' }),
      'http',
      /http 500; server said 'internal error' \(after 3 attempts\)/,
    ],
    [
      'a timeout',
      RESOURCES,
      Array(3).fill({ delayMs: 1500, data: [] }),
      'timeout',
      /no complete reply within 1000 ms \(after 3 attempts\)/,
    ],
    [
      'a connection dropped before the reply',
      RESOURCES,
      Array(3).fill({ drop: 'before-reply' }),
      'network',
      /connection failed .* \(after 3 attempts\)/,
    ],
    [
      'a connection dropped in the middle of the body',
      RESOURCES,
      Array(3).fill({ drop: 'mid-body', data: [] }),
      'network',
      /connection failed .* \(after 3 attempts\)/,
    ],
    [
      'malformed JSON',
      RESOURCES,
      [{ rawBody: '{"data": [{"id": "node/node1"' }],
      'invalid-reply',
      /reply is not valid json/,
    ],
    [
      'a field of the wrong type',
      RESOURCES,
      [WRONG_TYPE],
      'invalid-reply',
      /reply field 'data\[0\]\.maxmem' \(node\/node1\) expected a number, got "sixteen gigs"/,
    ],
    [
      '401',
      RESOURCES,
      [{ status: 401, statusText: 'authentication failure' }],
      'auth',
      /http 401, the api token was refused \(wrong, expired or revoked token, or disabled user\)/,
    ],
    [
      '403 (the privilege named)',
      'GET /cluster/ha/status/manager_status',
      [{ status: 403, statusText: 'Permission check failed (/, Sys.Audit)' }],
      'auth',
      /http 403, permission denied: this endpoint needs 'Sys.Audit' on '\/' \(with privilege separation, grant it to the user and to the token\)/,
    ],
  ])('%s', async (_name, route, replies, kind, message) => {
    const s = await setup(ACT);
    await s.daemon.start();
    await s.run(1); // vm:101 → node2 requested
    s.fake.inject(route, ...replies);
    await s.run(1); // the read fails while the motion is in flight
    const failed = errorRounds(s);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 'warn', reason: 'api-error', kind });
    expect(failed[0]!.msg).toMatch(/^reading the cluster failed \([a-z-]+, GET \/cluster\/\S+\): /);
    expect(failed[0]!.msg).toMatch(message);
    expect(failed[0]!.msg).toMatch(/; nothing done this round$/);
    await s.run(6);
    expect(errorRounds(s)).toHaveLength(1); // resumed
    expect(
      s
        .records()
        .filter((r) => r.event === 'motion')
        .map((r) => r.msg),
    ).toContain('migrate vm:101 from node1 to node2 succeeded after 20 s');
    expect(motions(s)).toEqual(['vm:101>node2', 'vm:102>node3']); // the motion in flight was never sent again
    expect(await s.daemon.metrics.registry.getSingleMetricAsString('poise_api_errors_total')).toMatch(
      new RegExp(`kind="${kind}"} 1`),
    );
  });

  it('a 500 that clears within the retries is not even a failed round', async () => {
    const s = await setup(ACT);
    await s.daemon.start();
    s.fake.inject(RESOURCES, { status: 500, statusText: 'internal error' });
    await s.run(3);
    expect(errorRounds(s)).toEqual([]);
    expect(motions(s)).toEqual(['vm:101>node2', 'vm:102>node3']);
  });

  it('the token revoked mid-run: every round says so until it is valid again, then the daemon resumes', async () => {
    const s = await setup(ACT);
    await s.daemon.start();
    await s.run(1);
    s.fake.server.setTokens([]);
    await s.run(3);
    s.fake.server.setTokens([TOKEN]);
    await s.run(5);
    const failed = errorRounds(s);
    expect(failed.map((r) => r.round)).toEqual([2, 3, 4]);
    for (const r of failed)
      expect(r.msg).toMatch(
        /^reading the cluster failed \(auth, GET \/cluster\/\S+\): .*http 401, the api token was refused/,
      );
    expect(motions(s)).toEqual(['vm:101>node2', 'vm:102>node3']);
  });

  it("a node's RRD that cannot be read leaves its pressure unknown and the round goes on", async () => {
    const spec = unbalanced();
    for (const n of spec.nodes) n.pressureCpu = 1;
    const s = await setup({ ...ACT, policy: { ...ACT.policy, 'ha-auto-rebalance-min-pressure-cpu': 10 } }, spec);
    await s.daemon.start();
    s.fake.injectWhere(
      'GET /nodes/{node}/rrddata',
      (req) => req.params.node === 'node1',
      ...Array(3).fill({ status: 500, statusText: 'rrd error' }),
    );
    await s.run(2);
    expect(errorRounds(s)).toEqual([]);
    const warned = s.records().filter((r) => r.event === 'cluster' && String(r.msg).includes('RRD'));
    expect(warned.map((r) => r.msg)).toEqual([
      "node 'node1': its RRD could not be read (http): pressure unknown until it can",
    ]);
    // node1 without telemetry, the others without pressure: fail open (pressure-missing balance)
    expect(
      s
        .records()
        .filter((r) => r.event === 'policy')
        .map((r) => r.msg),
    ).toContain('pressure: no pressure telemetry for node1 (cpu): judging the nodes that report it');
  });
});

describe('faults of a motion request: never re-sent blindly', () => {
  it('a request whose reply is lost after it was applied is followed, not repeated', async () => {
    const s = await setup(ACT, unbalanced({ scripts: { 'vm:101': { reply: 'lost' } } }));
    await s.daemon.start();
    await s.run(5);
    const first = s.rounds()[0]!;
    expect(first).toMatchObject({ outcome: 'move', reason: 'request-uncertain', level: 'warn' });
    expect(first.msg).toMatch(
      /^migrate vm:101 from node1 to node2 \(imbalance 100\.0% → 66\.1%\): the request failed \(network, POST \/cluster\/ha\/resources\/\{sid\}\/migrate: .*\); it may have been applied, so it is followed, not repeated$/,
    );
    expect(s.records().find((r) => r.event === 'motion')?.msg).toBe(
      'migrate vm:101 from node1 to node2 succeeded after 20 s',
    );
    expect(motions(s).filter((m) => m.startsWith('vm:101'))).toEqual(['vm:101>node2']);
  });

  it.each([
    ["service 'vm:101' in error state, must be disabled and fixed first"],
    ["service 'vm:101' is not HA managed"],
    ["no such cluster node 'node2'"],
  ])(
    "a 500 carrying the handler's refusal (%s) is a refusal at once: recorded failed for the backoff, not followed, not counted",
    async (text) => {
      const s = await setup({
        mode: 'act',
        policy: { 'ha-auto-rebalance-hold-duration': 1, 'ha-auto-rebalance-backoff': 60 },
        limits: { 'pickup-timeout': 120 },
      });
      await s.daemon.start();
      s.fake.inject('POST /cluster/ha/resources/{sid}/migrate', { status: 500, statusText: text });
      await s.run(2);
      const [refused, next] = s.rounds();
      expect(refused).toMatchObject({ outcome: 'refused', reason: 'refused', level: 'warn' });
      expect(refused!.msg).toBe(
        `the cluster refused to migrate vm:101 from node1 to node2 (imbalance 100.0% → 66.1%): ${text} (http 500)`,
      );
      expect(
        s
          .records()
          .filter((r) => r.event === 'policy')
          .map((r) => r.msg),
      ).toContainEqual(expect.stringMatching(/^backoff: vm:101 to node2 did not succeed /));
      // the next round moves on at once (no 120 s pickup wait), and the refusal used no motion budget
      expect(next).toMatchObject({ outcome: 'move', sid: 'vm:101', target: 'node3' });
      expect(s.daemon.currentState().motionsIssuedAt).toEqual([s.cluster.time - 10]);
      expect(s.daemon.currentState().outcomes.map((o) => [o.result, o.reason])).toEqual([
        ['failed', `${text} (http 500)`],
      ]);
    },
  );

  it('a guest in the HA error state: the real endpoint refuses it with a 500, read as the refusal it is', async () => {
    const s = await setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } });
    s.cluster.guest('vm:101').haState = 'error';
    s.cluster.guest('vm:101').running = true;
    await s.daemon.start();
    // vm:101 in error is no candidate: the daemon never asks; the endpoint would refuse it
    await s.run(1);
    expect(motions(s)[0]).not.toMatch(/^vm:101>/);
    const c = createPveClient(s.config, loadToken({ env: 'POISE_TOKEN' }, { POISE_TOKEN: TOKEN }).token);
    await expect(c.haMigrate('vm:101', 'node2')).rejects.toMatchObject({
      code: 'refused',
      status: 500,
      mayHaveBeenApplied: false,
      serverMessage: "service 'vm:101' in error state, must be disabled and fixed first",
    });
    await c.close();
  });

  it('a bare 500 on the request (no task id, no known refusal): reported as what it is, the motion failed with that cause, not followed', async () => {
    const s = await setup({ ...ACT, limits: { 'pickup-timeout': 30 } });
    await s.daemon.start();
    s.fake.inject('POST /cluster/ha/resources/{sid}/migrate', { status: 500, statusText: 'cfs lock timeout' });
    await s.run(2);
    const [refused, next] = s.rounds();
    expect(refused).toMatchObject({ outcome: 'refused', reason: 'refused', level: 'warn' });
    expect(refused!.msg).toBe(
      'the cluster refused to migrate vm:101 from node1 to node2 (imbalance 100.0% → 66.1%): the cluster refused the request: HTTP 500 cfs lock timeout',
    );
    // failed with that cause (for the backoff), not followed for the pickup timeout
    expect(s.daemon.currentState().outcomes.map((o) => [o.sid, o.result, o.reason])).toEqual([
      ['vm:101', 'failed', 'the cluster refused the request: HTTP 500 cfs lock timeout'],
    ]);
    expect(s.records().filter((r) => r.event === 'motion')).toEqual([]);
    // the next round decides afresh at once: the refusal used no motion budget
    expect(next).toMatchObject({ outcome: 'move' });
    expect(s.daemon.currentState().motionsIssuedAt).toEqual([s.cluster.time - 10]);
    expect(await s.daemon.metrics.registry.getSingleMetricAsString('poise_api_errors_total')).toContain(
      'poise_api_errors_total{endpoint="POST /cluster/ha/resources/{sid}/migrate",kind="http"} 1',
    );
  });

  it('a bare 500 on a guest migration (no UPID): the same refusal, no task looked for', async () => {
    const s = await setup({ ...ACT, guests: { 'non-ha': true } }, plainGuests());
    await s.daemon.start();
    s.fake.inject('POST /nodes/{node}/{type}/{vmid}/migrate', { status: 500, statusText: 'got timeout' });
    await s.run(1);
    expect(s.rounds()[0]).toMatchObject({ outcome: 'refused', reason: 'refused' });
    expect(s.daemon.currentState().motion).toBeNull();
    expect(s.daemon.currentState().outcomes.map((o) => o.reason)).toEqual([
      'the cluster refused the request: HTTP 500 got timeout',
    ]);
    expect(s.fake.server.requests.filter((r) => r.path.endsWith('/tasks'))).toEqual([]);
  });

  it('a bare 500 with a long message: the cause quotes its first 160 characters, on one line', async () => {
    const s = await setup(ACT);
    await s.daemon.start();
    const message = `internal error:\n${'x'.repeat(300)}`;
    s.fake.inject('POST /cluster/ha/resources/{sid}/migrate', {
      status: 500,
      rawBody: JSON.stringify({ message, data: null }),
    });
    await s.run(1);
    // 'internal error: ' is 16 characters, 143 'x' and the ellipsis make 160
    expect(s.daemon.currentState().outcomes[0]!.reason).toBe(
      `the cluster refused the request: HTTP 500 internal error: ${'x'.repeat(143)}…`,
    );
  });

  it('a timeout on the request (maybe applied) is followed through the HA manager status, never sent again', async () => {
    const s = await setup({ ...ACT, limits: { 'pickup-timeout': 30 } });
    await s.daemon.start();
    s.fake.inject('POST /cluster/ha/resources/{sid}/migrate', { delayMs: 1500, data: null });
    await s.run(6);
    expect(s.rounds()[0]).toMatchObject({ outcome: 'move', reason: 'request-uncertain' });
    // the injected reply applied nothing: not picked up, reported failed after the pickup timeout
    expect(s.records().find((r) => r.event === 'motion')?.msg).toBe(
      'migrate vm:101 from node1 to node2 failed after 40 s: the HA manager did not pick the command up within 30 s: it was never queued, or the HA manager dropped it (a negative-affinity partner on the target)',
    );
    // only then a motion is requested again
    expect(motions(s)).toEqual(['vm:101>node2', 'vm:101>node2']);
    expect(
      s
        .rounds()
        .filter((r) => r.outcome === 'move')
        .map((r) => r.round),
    ).toEqual([1, 5]);
  });

  it("403 on the request (the token lacks 'Sys.Console'): HA motions pause, said once; GET /access/permissions asked each round, one refused request per pause, the first motion in the round that sees the grant", async () => {
    const MIGRATE = 'POST /cluster/ha/resources/{sid}/migrate';
    const s = await setup({
      mode: 'act',
      policy: { 'ha-auto-rebalance-hold-duration': 1, 'ha-auto-rebalance-backoff': 60 },
      limits: { 'max-motions-per-hour': 2 },
    });
    await s.daemon.start();
    s.fake.acl = [{ path: '/', privileges: AUDIT_AND_MIGRATE, propagate: true }];
    await s.run(10); // t = 0 … 90
    const refused = s.rounds()[0]!;
    expect(refused).toMatchObject({ outcome: 'refused', reason: 'auth-refused', level: 'warn' });
    expect(refused.msg).toBe(
      "the cluster refused to migrate vm:101 from node1 to node2 (imbalance 100.0% → 66.1%): the API token lacks 'Sys.Console' on '/' " +
        "(with privilege separation, grant it to the user and to the token); HA motions are paused: GET /access/permissions is asked each round for 'Sys.Console' on '/', " +
        'and the request sent again once it is held (once every 10 rounds if that cannot be asked)',
    );
    // said once at warn; the rounds after say why they wait
    const said = s.records().filter((r) => r.event === 'motion' && r.level !== 'debug');
    expect(said.map((r) => r.msg)).toEqual([
      "HA motions paused: the API token lacks 'Sys.Console' on '/' (with privilege separation, grant it to the user and to the token); none is requested until that is fixed: GET /access/permissions is asked each round for 'Sys.Console' on '/', and the request sent again once it is held (once every 10 rounds if that cannot be asked)",
    ]);
    expect(s.rounds()[1]).toMatchObject({ outcome: 'skip', reason: 'auth-paused' });
    expect(s.rounds()[1]!.msg).toBe(
      "not requesting migrate vm:101 from node1 to node2 (imbalance 100.0% → 66.1%): HA motions are paused since 2026-01-01T00:00:00.000Z: the API token lacks 'Sys.Console' on '/' " +
        "(with privilege separation, grant it to the user and to the token); GET /access/permissions says 'Sys.Console' on '/' is still not held: asked again next round",
    );
    // one refused request for the whole pause, one cheap read a round after it
    expect(s.posts().map((p) => p.path)).toEqual(['/cluster/ha/resources/vm:101/migrate']);
    const asked = () => s.fake.server.requests.filter((r) => r.path === '/access/permissions');
    expect(asked().map((r) => r.query.get('path'))).toEqual(Array(9).fill('/'));
    // not a property of the pair: nothing for the backoff; not a motion: nothing counted
    expect(s.records().filter((r) => r.event === 'policy' && String(r.msg).startsWith('backoff'))).toEqual([]);
    expect(s.daemon.currentState().motionsIssuedAt).toEqual([]);
    expect(s.daemon.currentState().outcomes).toEqual([]);
    expect((s.daemon.status().pausedMotions as Record<string, unknown>).ha).toMatchObject({
      check: 'permissions',
      nextCheckAt: '2026-01-01T00:01:40.000Z',
      refusals: 1,
    });

    s.fake.acl = undefined; // the privilege is granted at about 95 s
    await s.run(1); // t = 100: the round asks, sees the grant, and requests at once
    expect(s.rounds().at(-1)).toMatchObject({ outcome: 'move' });
    expect(
      s
        .records()
        .filter((r) => r.event === 'motion')
        .at(-1)?.msg,
    ).toBe(
      "HA motions resume: the API token holds 'Sys.Console' on '/' now (GET /access/permissions) (paused since 2026-01-01T00:00:00.000Z: the API token lacks 'Sys.Console' on '/' (with privilege separation, grant it to the user and to the token))",
    );
    await s.run(15); // t = 110 … 250
    expect(asked()).toHaveLength(10); // no pause, no asking
    // the whole hourly budget (2) is there for accepted motions
    expect(motions(s).slice(1)).toEqual(['vm:101>node2', 'vm:102>node3']);
    expect(s.records().filter((r) => r.event === 'motion' && r.result === 'succeeded')).toHaveLength(2);
    expect(await s.daemon.metrics.registry.getSingleMetricAsString('poise_api_errors_total')).toContain(
      `poise_api_errors_total{endpoint="${MIGRATE}",kind="auth"} 1`,
    );
  });

  it("403 on a guest migration: 'VM.Migrate' on that guest's path is asked for; an ACL on '/vms' granted later ends the pause", async () => {
    const s = await setup({ ...ACT, guests: { 'non-ha': true } }, plainGuests());
    await s.daemon.start();
    s.fake.acl = [{ path: '/', privileges: ['Sys.Audit', 'VM.Audit'], propagate: true }];
    await s.run(3);
    expect(s.rounds()[0]).toMatchObject({ outcome: 'refused', reason: 'auth-refused' });
    expect(s.rounds()[0]!.msg).toContain("the API token lacks 'VM.Migrate' on '/vms/201'");
    const asked = () =>
      s.fake.server.requests.filter((r) => r.path === '/access/permissions').map((r) => r.query.get('path'));
    expect(asked()).toEqual(['/vms/201', '/vms/201']);
    s.fake.acl = [...s.fake.acl, { path: '/vms', privileges: ['VM.Migrate'], propagate: true }];
    await s.run(1);
    expect(s.rounds().at(-1)).toMatchObject({ outcome: 'move', sid: 'vm:201' });
    expect(s.fake.posts()).toHaveLength(2);
  });

  it.each<[string, FakeReply]>([
    [
      'an older Proxmox VE without the endpoint (501)',
      { status: 501, statusText: "Method 'GET /access/permissions' not implemented" },
    ],
    ['the read refused (403)', { status: 403, statusText: 'Permission check failed (/access, Sys.Audit)' }],
    ['the network', { drop: 'before-reply' }],
  ])(
    'when the privilege cannot be asked (%s): one retry request every 10 rounds, never one a round',
    async (_name, reply) => {
      const s = await setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } });
      await s.daemon.start();
      s.fake.acl = [{ path: '/', privileges: AUDIT_AND_MIGRATE, propagate: true }];
      s.fake.override('GET /access/permissions', reply);
      await s.run(25); // t = 0 … 240: requests at 0, 100, 200
      expect(s.posts().map((p) => p.path)).toHaveLength(3);
      const posts = s.fake.server.requests.filter((r) => r.method === 'POST');
      expect(posts).toHaveLength(3);
      const cannot = s
        .records()
        .filter((r) => r.event === 'motion' && r.level === 'warn' && String(r.msg).includes('cannot be asked ('));
      expect(cannot).toHaveLength(1); // said once, then at debug level
      expect(s.rounds()[1]!.msg).toMatch(
        /; the request is sent again at 2026-01-01T00:01:40\.000Z \(the privilege cannot be asked\)$/,
      );
      expect((s.daemon.status().pausedMotions as Record<string, unknown>).ha).toMatchObject({ check: 'retry' });
      s.fake.acl = undefined;
      await s.run(10); // the next retry (t = 300) is accepted
      expect(s.rounds().find((r) => r.outcome === 'move')?.round).toBe(31);
    },
  );

  it('a privilege reported held but the request refused again: the answers are not trusted, the retries are bounded', async () => {
    const s = await setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } });
    await s.daemon.start();
    // the permissions say yes, the endpoint says no (another check of the endpoint fails)
    s.fake.override('POST /cluster/ha/resources/{sid}/migrate', permissionDenied('/', 'Sys.Console'));
    await s.run(25);
    // refused at 0; asked at 10, held, refused again (distrusted); then only at 110 and 210
    expect(s.posts()).toHaveLength(4);
    expect(
      s
        .records()
        .filter((r) => r.event === 'motion' && r.level === 'warn')
        .map((r) => r.msg),
    ).toEqual([
      expect.stringMatching(/^HA motions paused: .*is asked each round/),
      expect.stringMatching(
        /^HA motions paused: .*the request is sent again once every 10 rounds \(next at 2026-01-01T00:01:50\.000Z\) \(refused right after the privilege was reported held\)$/,
      ),
    ]);
  });

  it('a migration that fails (HA puts the guest back on the source) is reported, fed to the backoff, and another candidate moves', async () => {
    const s = await setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1, 'ha-auto-rebalance-backoff': 60 } },
      unbalanced({ scripts: { 'vm:101': { outcome: 'fail' } } }),
    );
    await s.daemon.start();
    await s.run(8);
    expect(
      s
        .records()
        .filter((r) => r.event === 'motion')
        .map((r) => `${String(r.level)} ${String(r.msg)}`),
    ).toEqual([
      "warn migrate vm:101 from node1 to node2 failed after 20 s: migration failed, 'vm:101' is back on 'node1'",
      "warn migrate vm:101 from node1 to node3 failed after 20 s: migration failed, 'vm:101' is back on 'node1'",
      'info migrate vm:102 from node1 to node2 succeeded after 20 s',
    ]);
    // at most one failed attempt per target before another guest moves
    expect(motions(s).slice(0, 3)).toEqual(['vm:101>node2', 'vm:101>node3', 'vm:102>node2']);
  });
});

describe('a migration that fails while a read fails', () => {
  it('is known failed from its changed HA uid at the next read, not taken for a command still queued', async () => {
    const s = await setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1, 'ha-auto-rebalance-backoff': 60 } },
      unbalanced({ scripts: { 'vm:101': { outcome: 'fail' } } }),
    );
    await s.daemon.start();
    await s.run(1); // vm:101 → node2 requested; the HA manager starts it
    s.fake.inject(RESOURCES, ...Array(3).fill({ status: 500, statusText: 'internal error' }));
    await s.run(2); // the read fails while it moves; it fails and is back on node1 before the next read
    expect(s.records().find((r) => r.event === 'motion')?.msg).toBe(
      "migrate vm:101 from node1 to node2 failed after 20 s: migration failed, 'vm:101' is back on 'node1' (its HA state changed since the request)",
    );
    expect(motions(s)).toEqual(['vm:101>node2', 'vm:101>node3']); // the next pair at once (backoff series)
  });
});

describe('TLS faults: refused before a request is sent, resumed once the right certificate is back', () => {
  it.each([
    [
      'a wrong fingerprint',
      'pin',
      /server certificate fingerprint '.*' matches none of the 1 pinned fingerprint\(s\); refused before sending the request/,
    ],
    ['an untrusted certificate', 'ca', /server certificate refused \(/],
  ])('%s', async (_name, mode, message) => {
    const genuine = await certs();
    const impostor = await generateCertificates();
    // the daemon trusts the genuine certificate: by its pin, or by the CA that signed it
    const s = await setup(ACT, unbalanced(), {
      fake: { tls: { cert: impostor.certPem, key: impostor.keyPem } },
      pve: mode === 'ca' ? { tls: { 'ca-file': caFile(genuine.caPem) } } : {},
    });
    await s.daemon.start();
    await s.run(2);
    expect(errorRounds(s).map((r) => r.kind)).toEqual(['tls', 'tls']);
    expect(errorRounds(s)[0]!.msg).toMatch(message);
    expect(s.fake.server.requests).toEqual([]); // nothing, not even the token, reached the impostor
    // the genuine node is back on the same address
    const port = Number(new URL(s.fake.url).port);
    await s.fake.close();
    const back = await startFakePve({
      cluster: s.cluster,
      tls: { cert: genuine.certPem, key: genuine.keyPem },
      tokens: [TOKEN],
      port,
    });
    try {
      await s.run(3);
      expect(
        s
          .rounds()
          .slice(2)
          .map((r) => r.outcome),
      ).toEqual(['move', 'skip', 'move']);
      expect(back.posts()).toHaveLength(2);
    } finally {
      await back.close();
    }
  });

  function caFile(pem: string): string {
    const file = join(open.at(-1)?.dir ?? '/tmp', `ca-${Math.random().toString(16).slice(2)}.pem`);
    writeFileSync(file, pem);
    return file;
  }
});

describe("the cluster's own ha-auto-rebalance", () => {
  it('is on: poise refuses to move HA resources, says so in the first round, every round, and in the status', async () => {
    const s = await setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } },
      unbalanced({ autoRebalance: true }),
    );
    await s.daemon.start();
    await s.run(4);
    expect(s.posts()).toEqual([]);
    const lines = s.records();
    const firstRound = lines.findIndex((r) => r.event === 'round');
    const notice = lines.findIndex((r) => r.event === 'cluster');
    expect(notice).toBeGreaterThan(0);
    expect(notice).toBeLessThan(firstRound);
    expect(lines[notice]).toMatchObject({
      level: 'warn',
      msg: "the cluster's own ha-auto-rebalance is on (datacenter.cfg crs (its threshold 30%, margin 10%)): poise refuses to move HA resources while it is on",
    });
    expect(s.rounds().map((r) => r.reason)).toEqual(Array(4).fill('cluster-auto-rebalance'));
    expect(s.daemon.status()).toMatchObject({
      clusterAutoRebalance: true,
      notice: "the cluster's own ha-auto-rebalance is on: poise refuses to move HA resources",
      clusterBalancer: { thresholdPercent: 30, marginPercent: 10 },
    });
  });
});

describe('Proxmox VE 8: HA groups read as node-affinity rules', () => {
  it("a restricted group keeps its resources on the group's nodes", async () => {
    const s = await setup(ACT, unbalanced(), {
      fake: {
        version: '8.4.1',
        groups: [
          { group: 'pair', nodes: 'node1,node2', restricted: true, members: ['vm:101', 'vm:102', 'vm:103', 'vm:104'] },
        ],
      },
    });
    await s.daemon.start();
    await s.run(10);
    expect(errorRounds(s)).toEqual([]);
    expect(s.fake.server.requests.some((r) => r.path === '/cluster/ha/rules')).toBe(false); // not asked on PVE 8
    expect(motions(s).length).toBeGreaterThan(0);
    expect(motions(s).every((m) => m.endsWith('>node2'))).toBe(true); // never node3
  });
});

describe('the token', () => {
  it('is in no log line, metric or status, whatever failed', async () => {
    const s = await setup(
      { ...ACT, metrics: { enabled: true, listen: '127.0.0.1:0' } },
      unbalanced({ scripts: { 'vm:101': { reply: 'lost' } } }),
    );
    await s.daemon.start();
    const port = s.listening()!.port;
    s.fake.inject(
      RESOURCES,
      { status: 401, statusText: `authentication failure for ${TOKEN}` },
      { rawBody: `{"data": "${TOKEN}` },
    );
    await s.run(4);
    s.fake.server.setTokens([]);
    await s.run(2);
    const scraped = [
      await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
      await (await fetch(`http://127.0.0.1:${port}/status`)).text(),
    ];
    expect(errorRounds(s).length).toBeGreaterThanOrEqual(3);
    expect(s.lines.join('\n')).toContain('[redacted]'); // the server's echo of the token was caught
    for (const text of [...s.lines, ...scraped]) expect(text).not.toContain(SECRET);
    await s.daemon.close();
    open.splice(open.indexOf(s), 1);
    allLines.push(...s.lines);
    await s.fake.close();
  });
});

describe('guests that are not HA resources (guests.non-ha)', () => {
  it('are checked with the migrate precondition, migrated as a task, and followed through the task status', async () => {
    const s = await setup(
      {
        mode: 'act',
        guests: { 'non-ha': true },
        policy: { 'ha-auto-rebalance-hold-duration': 1, 'ha-auto-rebalance-backoff': 60 },
      },
      {
        nodes: [{ name: 'node1' }, { name: 'node2' }],
        guests: [
          { sid: 'vm:201', node: 'node1', ha: false, cpu: 4, mem: 16 * GIB },
          { sid: 'vm:202', node: 'node1', ha: false, cpu: 4, mem: 16 * GIB },
        ],
        guestCheckRefusals: { 'vm:201': 'a PCI device' },
      },
    );
    await s.daemon.start();
    await s.run(4);
    expect(s.rounds()[0]).toMatchObject({ outcome: 'refused', reason: 'precondition' });
    expect(s.rounds()[0]!.msg).toMatch(
      /^precondition check refused to migrate vm:201 from node1 to node2 .*: local resources 'hostpci0'$/,
    );
    expect(s.posts().map((p) => `${p.path} ${p.target}`)).toEqual(['/nodes/node1/qemu/202/migrate node2']);
    expect(s.records().find((r) => r.event === 'motion')?.msg).toBe(
      'migrate vm:202 from node1 to node2 succeeded after 10 s',
    );
  });
});

describe('values out of range and a partial view of the cluster', () => {
  const warns = (s: PveSetup) =>
    s
      .records()
      .filter((r) => r.event === 'cluster' && r.level === 'warn')
      .map((r) => r.msg);

  it.each([
    ['1e30', 1e30, '1e+30'],
    ['2^63 (8 EiB)', 2 ** 63, '9223372036854776000'],
  ])(
    "a node's maxmem of %s: named at warn level every round it lasts, and no motion decided from the other nodes",
    async (_name, value, shown) => {
      const s = await setup(ACT);
      s.cluster.s.nodes[2]!.maxmem = value;
      await s.daemon.start();
      await s.run(4);
      expect(s.posts()).toEqual([]);
      const line = `usage values out of range, left out: node 'node3' 'maxmem' ${shown} (not in 1..2^53 bytes)`;
      expect(warns(s)).toEqual(Array(4).fill(line));
      for (const round of s.rounds()) {
        expect(round).toMatchObject({ outcome: 'skip', reason: 'partial-view' });
        expect(round.msg).toBe(
          `partial view of the cluster: node 'node3' left out ('maxmem' ${shown} (not in 1..2^53 bytes)); nothing is decided from the other nodes (balancing.allow-partial-view: false)`,
        );
      }
      s.cluster.s.nodes[2]!.maxmem = 64 * GIB; // the value is right again: balancing resumes at once
      await s.run(1);
      expect(s.rounds().at(-1)).toMatchObject({ outcome: 'move', sid: 'vm:101' });
      expect(warns(s)).toHaveLength(4);
    },
  );

  it('balancing.allow-partial-view: true decides from the other nodes, and still says what was left out each round', async () => {
    const s = await setup({ ...ACT, balancing: { 'allow-partial-view': true } });
    s.cluster.s.nodes[2]!.maxmem = 1e30;
    await s.daemon.start();
    await s.run(2);
    expect(s.rounds()[0]).toMatchObject({ outcome: 'move', sid: 'vm:101', target: 'node2' });
    expect(warns(s)).toHaveLength(2);
  });

  it('a node online without usage stats (the reader leaves it out) makes the view partial too', async () => {
    const s = await setup(ACT);
    s.fake.override('GET /cluster/resources', {
      data: [
        {
          id: 'node/node1',
          type: 'node',
          node: 'node1',
          status: 'online',
          cpu: 0.5,
          maxcpu: 16,
          mem: 32 * GIB,
          maxmem: 64 * GIB,
        },
        {
          id: 'node/node2',
          type: 'node',
          node: 'node2',
          status: 'online',
          cpu: 0,
          maxcpu: 16,
          mem: 0,
          maxmem: 64 * GIB,
        },
        { id: 'node/node3', type: 'node', node: 'node3', status: 'online' },
      ],
    });
    await s.daemon.start();
    await s.run(2);
    expect(s.rounds().map((r) => r.reason)).toEqual(['partial-view', 'partial-view']);
    expect(s.rounds()[0]!.msg).toMatch(
      /^partial view of the cluster: node 'node3' left out \(GET \/cluster\/resources has no usage stats for it\); nothing is decided/,
    );
  });

  it('a guest on a node that is not in the node list is named every round, not silently passed', async () => {
    const s = await setup(ACT, {
      ...unbalanced(),
      guests: [...unbalanced().guests, { sid: 'vm:105', node: 'node9', cpu: 1, mem: GIB }],
    });
    await s.daemon.start();
    await s.run(2);
    expect(warns(s)).toEqual(
      Array(2).fill("guests on a node that is not in the cluster's node list, left out: guest 'vm:105' on 'node9'"),
    );
    expect(s.rounds()[0]).toMatchObject({ outcome: 'move' });
  });
});
