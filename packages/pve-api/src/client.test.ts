import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { PveClient, type PveClientOptions } from './client';
import { parseMigrationLog } from './migration-log';
import { PveApiError } from './errors';
import {
  generateCertificates,
  startFakePveServer,
  type FakePveServer,
  type FakeReply,
  type TestCertificates,
} from './server';
import { ApiToken } from './token';
import type { RetryEvent } from './transport';

// Every test talks to a fake pveproxy on 127.0.0.1 over HTTPS with a certificate made offline.
const SECRET = '5ec2e7aa-0000-4bad-b0b0-123456789abc';
const TOKEN_TEXT = `poise@pve!balancer=${SECRET}`;
const token = ApiToken.parse(TOKEN_TEXT);
const VERSION = { data: { version: '9.2.2', release: '9.2', repoid: 'b9984c6d90a4bd80' } };

let certs: TestCertificates;
let other: TestCertificates; // a second, unrelated CA and certificate
let server: FakePveServer;
let deadUrl: string; // a port nobody listens on
const clients: PveClient[] = [];

beforeAll(async () => {
  [certs, other] = await Promise.all([generateCertificates(), generateCertificates()]);
  const dead = await startFakePveServer();
  deadUrl = dead.url.replace('http:', 'https:');
  await dead.close();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
});

async function serve(
  routes: Record<string, FakeReply | ((r: unknown) => FakeReply)> = {},
  tls: TestCertificates | null = certs,
) {
  server = await startFakePveServer({
    tls: tls ? { cert: tls.certPem, key: tls.keyPem } : undefined,
    tokens: [TOKEN_TEXT],
    routes: { 'GET /version': VERSION, ...routes },
  });
  return server;
}

function client(options: Partial<PveClientOptions> = {}): PveClient {
  const c = new PveClient({
    baseUrls: [server.url],
    token,
    tls: { ca: certs.caPem },
    timeoutMs: 2000,
    retries: 2,
    sleep: async () => undefined, // no real waiting between retries
    ...options,
  });
  clients.push(c);
  return c;
}

async function failure(promise: Promise<unknown>): Promise<PveApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(PveApiError);
    return err as PveApiError;
  }
  throw new Error('expected the call to fail');
}

/** A route that answers `first` for the first `n` requests, then `then`. */
function sequence(n: number, first: FakeReply, then: FakeReply) {
  let calls = 0;
  return () => (calls++ < n ? first : then);
}

describe('transport', () => {
  test('sends the token header and reads a validated reply', async () => {
    await serve();
    expect(await client().version()).toEqual({
      version: '9.2.2',
      release: '9.2',
      repoId: 'b9984c6d90a4bd80',
      major: 9,
      minor: 2,
    });
    expect(server.requests.map((r) => [r.method, r.path, r.authorization])).toEqual([
      ['GET', '/version', `PVEAPIToken=poise@pve!balancer=${SECRET}`],
    ]);
  });

  test('fails over from a dead node to the next url, and starts there next time', async () => {
    await serve();
    const events: RetryEvent[] = [];
    const c = client({ baseUrls: [deadUrl, server.url], onRetry: (e) => events.push(e) });
    await c.version();
    expect(events.map((e) => [e.error.code, e.delayMs])).toEqual([['connection', 0]]);
    await c.version();
    expect(events).toHaveLength(1); // the second call went straight to the live node
    expect(server.requests).toHaveLength(2);
  });

  test.each<[string, FakeReply]>([
    ['500', { status: 500, statusText: 'internal error' }],
    ['502', { status: 502, statusText: 'bad gateway' }],
    ['595 (pveproxy: node unreachable)', { status: 595, statusText: 'Errors during connection establishment' }],
    ['a dropped connection before the reply', { drop: 'before-reply' }],
    ['a connection dropped mid-reply', { drop: 'mid-body' }],
    ['a timeout', { delayMs: 1500 }],
  ])('a GET is retried after %s', async (_name, bad) => {
    await serve({ 'GET /cluster/options': sequence(2, bad, { data: { crs: 'ha=static' } }) });
    const events: RetryEvent[] = [];
    const options = await client({ timeoutMs: 500, onRetry: (e) => events.push(e) }).clusterOptions();
    expect(options.crs.ha).toBe('static');
    expect(server.requests.filter((r) => r.path === '/cluster/options')).toHaveLength(3);
    expect(events).toHaveLength(2);
  });

  test('retries are bounded: urls + retries attempts, then the last error with the count', async () => {
    await serve({ 'GET /cluster/options': { status: 500, statusText: 'internal error' } });
    const err = await failure(client({ retries: 2 }).clusterOptions());
    expect(err).toMatchObject({ code: 'server-error', status: 500, attempts: 3, endpoint: 'GET /cluster/options' });
    expect(err.message).toBe(
      `GET /cluster/options via ${server.url}: http 500; server said 'internal error' (after 3 attempts)`,
    );
    expect(server.requests).toHaveLength(3);
  });

  test('backoff doubles with jitter and is capped; failover to an untried url waits 0', async () => {
    await serve({ 'GET /cluster/options': { status: 503, statusText: 'busy' } });
    const delays: number[] = [];
    const c = client({
      baseUrls: [server.url, server.url],
      retries: 4,
      backoffBaseMs: 100,
      backoffMaxMs: 300,
      random: () => 0.5, // jitter factor 0.5 + 0.5 × 0.5 = 0.75
      sleep: async (ms) => void delays.push(ms),
      onRetry: (e) => delays.push(-e.delayMs),
    });
    await failure(c.clusterOptions());
    // attempt 1 fails → the 2nd url is untried → 0; then 100, 200, 300 (capped), 300 × 0.75
    expect(delays).toEqual([-0, -75, 75, -150, 150, -225, 225, -225, 225]);
  });

  test.each<[string, FakeReply]>([
    ['a 500', { status: 500, statusText: 'internal error' }],
    ['a connection dropped after the request arrived', { drop: 'before-reply' }],
    ['a timeout', { delayMs: 1500 }],
  ])('a POST is not retried after %s: it may have been applied', async (_name, bad) => {
    await serve({ 'POST /cluster/ha/resources/{sid}/migrate': bad });
    const err = await failure(client({ timeoutMs: 500 }).haMigrate('vm:100', 'node2'));
    expect(err.mayHaveBeenApplied).toBe(true);
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  test.each([
    ["service 'vm:100' in error state, must be disabled and fixed first"],
    ["service 'vm:100' is not HA managed"],
    ["no such cluster node 'node9'"],
    ["cfs-lock 'domain-ha' error: got lock request timeout"],
  ])("a POST refused by the handler (HTTP 500 '%s') is a refusal: nothing was applied, not retried", async (text) => {
    await serve({ 'POST /cluster/ha/resources/{sid}/migrate': { status: 500, statusText: text } });
    const err = await failure(client().haMigrate('vm:100', 'node2'));
    expect(err).toMatchObject({
      code: 'refused',
      status: 500,
      mayHaveBeenApplied: false,
      serverMessage: text,
      retryable: false,
    });
    expect(err.message).toMatch(
      /^POST \/cluster\/ha\/resources\/\{sid\}\/migrate via https:\/\/127\.0\.0\.1:\d+: http 500, refused by the server \(nothing was applied\); server said '/,
    );
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  test('the guest migrate endpoint: a refusal of qemu-server is one too; a 500 of a GET with such a text is still a server error', async () => {
    await serve({
      'POST /nodes/{node}/qemu/{vmid}/migrate': {
        status: 500,
        statusText: "can't migrate running VM without --online",
      },
      'GET /cluster/options': { status: 500, statusText: "no such cluster node 'x'" },
    });
    expect(await failure(client().migrateGuest('n1', 'qemu', 100, { target: 'n2' }))).toMatchObject({
      code: 'refused',
      mayHaveBeenApplied: false,
    });
    expect(await failure(client().clusterOptions())).toMatchObject({ code: 'server-error', attempts: 3 });
  });

  test('a POST moves to the next url when the connection failed before sending', async () => {
    await serve({
      'POST /cluster/ha/resources/{sid}/migrate': (r: unknown) => ({
        data: { sid: (r as { params: { sid: string } }).params.sid, 'requested-node': 'node2' },
      }),
    });
    const result = await client({ baseUrls: [deadUrl, server.url] }).haMigrate('vm:100', 'node2');
    expect(result).toEqual({
      sid: 'vm:100',
      requestedNode: 'node2',
      accepted: true,
      comigrated: [],
      blocking: [],
      detailed: true,
    });
    expect(server.requests.map((r) => [r.method, r.path, r.form.get('node')])).toEqual([
      ['POST', '/cluster/ha/resources/vm:100/migrate', 'node2'],
    ]);
  });

  test('HA motion: PVE 8 null reply, PVE 9 blocking resources = not accepted', async () => {
    await serve({
      'POST /cluster/ha/resources/{sid}/migrate': { data: null },
      'POST /cluster/ha/resources/{sid}/relocate': {
        data: {
          sid: 'vm:100',
          'requested-node': 'n3',
          'blocking-resources': [{ sid: 'vm:101', cause: 'resource-affinity' }],
        },
      },
    });
    const c = client();
    expect(await c.haMigrate('100', 'n2')).toMatchObject({ sid: 'vm:100', accepted: true, detailed: false });
    expect(await c.haRelocate('vm:100', 'n3')).toMatchObject({
      accepted: false,
      blocking: [{ sid: 'vm:101', cause: 'resource-affinity' }],
    });
  });

  test('guest migration returns the parsed task id; the task is followed on its node', async () => {
    const upid = 'UPID:node1:00001234:0010102A:6A6CD601:qmigrate:100:poise@pve!balancer:';
    await serve({
      'POST /nodes/{node}/qemu/{vmid}/migrate': { data: upid },
      'GET /nodes/{node}/tasks/{upid}/status': {
        data: {
          upid,
          node: 'node1',
          status: 'stopped',
          exitstatus: 'OK',
          type: 'qmigrate',
          id: '100',
          user: 'poise@pve!balancer',
          starttime: 1785517532,
        },
      },
    });
    const c = client();
    const task = await c.migrateGuest('node1', 'qemu', 100, { target: 'node2', online: true, withLocalDisks: false });
    expect(task).toMatchObject({ node: 'node1', type: 'qmigrate', id: '100' });
    const post = server.requests.find((r) => r.method === 'POST')!;
    expect(Object.fromEntries(post.form)).toEqual({ target: 'node2', online: '1', 'with-local-disks': '0' });
    expect(await c.taskStatus(task)).toMatchObject({ outcome: 'ok', status: 'stopped' });
    expect(server.requests.at(-1)!.path).toBe(`/nodes/node1/tasks/${upid}/status`);
  });

  test('a task log: its lines in order, from its node; a bad range or task id is refused', async () => {
    const upid = 'UPID:node1:00001234:0010102A:6A6CD601:qmigrate:100:root@pam:';
    await serve({
      'GET /nodes/{node}/tasks/{upid}/log': {
        data: [
          { n: 2, t: 'migration finished successfully (duration 00:00:11)' },
          { n: 1, t: 'migration active, transferred 4.3 GiB of 4.0 GiB VM-state, 1.0 GiB/s' },
        ],
      },
    });
    const c = client();
    const lines = await c.taskLog(upid, { limit: 500 });
    expect(lines).toEqual([
      'migration active, transferred 4.3 GiB of 4.0 GiB VM-state, 1.0 GiB/s',
      'migration finished successfully (duration 00:00:11)',
    ]);
    expect(server.requests.at(-1)!.path).toBe(`/nodes/node1/tasks/${upid}/log`);
    expect(parseMigrationLog(lines)).toMatchObject({ ok: true, durationSeconds: 11 });
    await expect(c.taskLog(upid, { start: -1 })).rejects.toThrow("'start' must be an integer ≥ 0, got -1");
    await expect(c.taskLog('qmigrate')).rejects.toThrow("'qmigrate' is not a task id (UPID:…)");
  });

  test('a task log row without its text is a schema error naming the field', async () => {
    const upid = 'UPID:node1:00001234:0010102A:6A6CD601:qmigrate:100:root@pam:';
    await serve({ 'GET /nodes/{node}/tasks/{upid}/log': { data: [{ n: 1 }] } });
    await expect(client().taskLog(upid)).rejects.toThrow("reply field 'data[0].t' is missing");
  });

  test('the qmigrate task after a hamigrate is found with the task list filters', async () => {
    await serve({
      'GET /nodes/{node}/tasks': {
        data: [
          {
            upid: 'UPID:n1:1:2:3:qmigrate:100:root@pam:',
            node: 'n1',
            type: 'qmigrate',
            id: '100',
            user: 'root@pam',
            starttime: 3,
          },
        ],
      },
    });
    const [t] = await client().tasks('n1', { typefilter: 'qmigrate', vmid: 100, since: 2, source: 'all' });
    expect(t).toMatchObject({ type: 'qmigrate', outcome: 'running' });
    expect(Object.fromEntries(server.requests[0]!.query)).toEqual({
      typefilter: 'qmigrate',
      vmid: '100',
      since: '2',
      source: 'all',
    });
  });

  test('HA groups on PVE 9 after the migration to rules: a 500 that means "no groups"', async () => {
    await serve({
      'GET /cluster/ha/groups': {
        status: 500,
        statusText: 'cannot index groups: ha groups have been migrated to rules',
      },
    });
    expect(await client().haGroups()).toEqual({ groups: [], migratedToRules: true });
    expect(server.requests).toHaveLength(1); // not retried
  });

  test('rules on PVE 8: 501, not retried', async () => {
    await serve();
    const err = await failure(client().haRules());
    expect(err).toMatchObject({ code: 'not-implemented', status: 501 });
    expect(server.requests).toHaveLength(1);
  });

  test('malformed json is a bad reply, not retried', async () => {
    await serve({ 'GET /cluster/resources': { rawBody: '{"data":[{"id":' } });
    const err = await failure(client().clusterResources());
    expect(err.code).toBe('bad-reply');
    expect(err.message).toContain(`GET /cluster/resources via ${server.url}: reply is not valid json`);
    expect(server.requests).toHaveLength(1);
  });

  test('a reply without data', async () => {
    await serve({ 'GET /version': { rawBody: '{"version":"9.2.2"}' } });
    expect(await failure(client().version())).toMatchObject({ code: 'bad-reply', field: 'data' });
  });

  test('a field of the wrong type names endpoint and field', async () => {
    await serve({
      'GET /cluster/resources': {
        data: [{ id: 'node/pve1', type: 'node', node: 'pve1', status: 'online', maxmem: 'sixteen gigs' }],
      },
    });
    const err = await failure(client().clusterResources('node'));
    expect(err).toMatchObject({
      code: 'bad-reply',
      field: 'data[0].maxmem',
      endpoint: 'GET /cluster/resources?type=node',
    });
    expect(err.message).toBe(
      `GET /cluster/resources?type=node via ${server.url}: reply field 'data[0].maxmem' (node/pve1) expected a number, got "sixteen gigs"`,
    );
    expect(server.requests[0]!.query.get('type')).toBe('node');
  });

  test('401: the token was refused, not retried', async () => {
    await serve();
    const err = await failure(client({ token: ApiToken.parse('poise@pve!balancer=wrong-secret') }).version());
    expect(err).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(err.message).toContain('the api token was refused');
    expect(server.requests).toHaveLength(1);
  });

  test('403 names the privilege the endpoint needs', async () => {
    await serve({
      'GET /cluster/ha/status/manager_status': { status: 403, statusText: 'Permission check failed (/, Sys.Audit)' },
    });
    const err = await failure(client().haManagerStatus());
    expect(err).toMatchObject({ code: 'forbidden', status: 403, privilege: "'Sys.Audit' on '/'" });
    expect(err.message).toContain("needs 'Sys.Audit' on '/'");
    expect(err.message).toContain("server said 'Permission check failed (/, Sys.Audit)'");
  });

  test('403 on a guest endpoint names the guest path', async () => {
    await serve({ 'GET /nodes/{node}/qemu/{vmid}/migrate': { status: 403, statusText: 'Permission check failed' } });
    const err = await failure(client().migratePrecheck('node1', 'qemu', 105, 'node2'));
    expect(err.privilege).toBe("'VM.Migrate' on '/vms/105'");
    expect(server.requests[0]!.query.get('target')).toBe('node2');
  });

  test('a token revoked mid-run: successes, then 401', async () => {
    await serve();
    const c = client();
    await c.version();
    await c.version();
    server.setTokens([]);
    expect(await failure(c.version())).toMatchObject({ code: 'unauthorized' });
    expect(server.requests).toHaveLength(3);
  });

  test('400 lists the refused parameters', async () => {
    await serve({
      'POST /nodes/{node}/qemu/{vmid}/migrate': {
        status: 400,
        statusText: 'Parameter verification failed.',
        data: { target: 'no such node' },
      },
    });
    const err = await failure(client().migrateGuest('n1', 'qemu', 100, { target: 'nx' }));
    expect(err.code).toBe('bad-request');
    expect(err.message).toContain("'target': no such node");
    expect(err.mayHaveBeenApplied).toBe(true);
  });

  test('the client signal aborts a call in flight and is not retried', async () => {
    // the reply waits far longer than the request takes to arrive, whatever the machine's load
    await serve({ 'GET /version': { ...VERSION, delayMs: 60_000 } });
    const controller = new AbortController();
    const c = client({ signal: controller.signal });
    const call = c.version();
    // abort once the server has the request (an observable event, not a guess of how long it takes)
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    expect(await failure(call)).toMatchObject({ code: 'aborted' });
    expect(await failure(c.version())).toMatchObject({ code: 'aborted' });
    expect(server.requests).toHaveLength(1);
  });

  test('bad arguments are refused before any request', async () => {
    await serve();
    const c = client();
    for (const call of [
      () => c.nodeStatus('../etc'),
      () => c.guestConfig('n1', 'qemu', -1),
      () => c.haMigrate('vm:abc', 'n2'),
      () => c.taskStatus('nope'),
    ]) {
      expect(await failure(call())).toMatchObject({ code: 'bad-option' });
    }
    expect(server.requests).toHaveLength(0);
  });

  test('a task id that is not a UPID is named in the error', async () => {
    await serve();
    const c = client();
    expect(await failure(c.taskStatus('nope'))).toMatchObject({
      code: 'bad-option',
      message: "'nope' is not a task id (UPID:…)",
    });
  });
});

describe('tls', () => {
  test('the cluster CA from a file is accepted', async () => {
    await serve();
    const file = join(mkdtempSync(join(tmpdir(), 'poise-ca-')), 'pve-root-ca.pem');
    writeFileSync(file, certs.caPem);
    const c = client({ tls: { caFile: file } });
    expect(c.security).toEqual({ mode: 'ca', hostnameChecked: true, plainHttp: false, insecure: false, warnings: [] });
    expect((await c.version()).major).toBe(9);
  });

  test('an untrusted certificate is refused (system CAs, or another CA) before any request', async () => {
    await serve();
    for (const tls of [{}, { ca: other.caPem }]) {
      const err = await failure(client({ tls }).version());
      expect(err.code).toBe('tls-untrusted');
    }
    expect(server.requests).toHaveLength(0);
  });

  test.each([
    ['upper case with colons', (f: string) => f],
    ['lower case without colons', (f: string) => f.replace(/:/g, '').toLowerCase()],
  ])('the right pin is accepted (%s), pin-only mode', async (_n, form) => {
    await serve();
    const c = client({ tls: { fingerprints: [form(certs.fingerprint256)] } });
    expect(c.security.mode).toBe('pin');
    expect((await c.version()).major).toBe(9);
  });

  test('a wrong pin is refused before any request byte is sent', async () => {
    await serve();
    for (const tls of [
      { fingerprints: [other.fingerprint256] },
      { ca: certs.caPem, fingerprints: [other.fingerprint256] },
    ]) {
      const err = await failure(client({ tls }).version());
      expect(err.code).toBe('tls-pin-mismatch');
      expect(err.message).toContain(certs.fingerprint256);
    }
    expect(server.connections()).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(0);
  });

  test('CA and the right pin', async () => {
    await serve();
    const c = client({ tls: { ca: certs.caPem, fingerprints: [other.fingerprint256, certs.fingerprint256] } });
    expect(c.security.mode).toBe('ca+pin');
    expect((await c.version()).major).toBe(9);
  });

  test('a wrong pin on the first node fails over to the next', async () => {
    await serve();
    const second = await startFakePveServer({
      tls: { cert: other.certPem, key: other.keyPem },
      tokens: [TOKEN_TEXT],
      routes: { 'GET /version': VERSION },
    });
    try {
      const c = client({ baseUrls: [second.url, server.url], tls: { fingerprints: [certs.fingerprint256] } });
      expect((await c.version()).major).toBe(9);
      expect(second.requests).toHaveLength(0);
    } finally {
      await second.close();
    }
  });

  test('plain http is refused unless explicitly allowed, and then reported', async () => {
    await serve({}, null);
    expect(() => client({ tls: undefined })).toThrow(/plain http; the token would travel in clear text/);
    const c = client({ tls: undefined, allowPlainHttp: true });
    expect(c.security).toMatchObject({ plainHttp: true, insecure: true });
    expect(c.security.warnings[0]).toContain('plain http is allowed');
    expect((await c.version()).major).toBe(9);
  });

  test('disabled verification must be explicit and is reported', async () => {
    await serve();
    const c = client({ tls: { insecureSkipVerify: true } });
    expect(c.security).toMatchObject({ mode: 'none', insecure: true });
    expect(c.security.warnings[0]).toContain('tls verification is disabled');
    expect((await c.version()).major).toBe(9);
  });

  test.each([
    [{ fingerprints: ['abc'] }, "fingerprint 'abc' is not a SHA-256 fingerprint"],
    [{ fingerprints: [] }, "'tls.fingerprints' is empty"],
    [{ caFile: '/nonexistent/ca.pem' }, "ca file '/nonexistent/ca.pem' cannot be read (ENOENT)"],
    [{ insecureSkipVerify: true, fingerprints: ['00'.repeat(32)] }, 'cannot be combined'],
    [{ checkHostname: false }, "'tls.checkHostname: false' needs 'tls.ca'"],
  ])('bad tls options %j', (tls, words) => {
    expect(() => new PveClient({ baseUrls: ['https://pve1:8006'], token, tls })).toThrow(words);
  });

  test.each([
    [[], "'baseUrls' must list at least one"],
    [['ftp://pve1'], "has protocol 'ftp:'"],
    [['https://root:pw@pve1:8006'], 'must not carry credentials'],
    [['not a url'], 'is not a url'],
  ])('bad base urls %j', (baseUrls, words) => {
    expect(() => new PveClient({ baseUrls, token })).toThrow(words);
  });
});

describe('the token secret never shows', () => {
  test('in any error, retry event or printed client', async () => {
    await serve({
      'GET /cluster/options': { status: 500, statusText: `echo ${SECRET}` }, // even a server echoing it
      'GET /cluster/resources': { rawBody: 'not json' },
      'GET /cluster/status': { data: [{ type: 'cluster', name: 'c', quorate: 'maybe' }] },
      'GET /cluster/ha/status/current': { status: 403, statusText: 'Permission check failed' },
      'GET /nodes/{node}/status': { delayMs: 1500 },
      'POST /cluster/ha/resources/{sid}/migrate': { drop: 'before-reply' },
    });
    const events: RetryEvent[] = [];
    const c = client({ timeoutMs: 300, retries: 1, onRetry: (e) => events.push(e) });
    const errors: unknown[] = [];
    const calls: (() => Promise<unknown>)[] = [
      () => c.clusterOptions(),
      () => c.clusterResources(),
      () => c.clusterStatus(),
      () => c.haStatusCurrent(),
      () => c.nodeStatus('n1'),
      () => c.haMigrate('vm:1', 'n2'),
      () => c.haRules(),
      () => client({ token: ApiToken.parse('poise@pve!balancer=wrong') }).version(),
      () => client({ baseUrls: [deadUrl] }).version(),
      () => client({ tls: { fingerprints: [other.fingerprint256] } }).version(),
      () => client({ tls: {} }).version(),
    ];
    for (const call of calls) errors.push(await failure(call()));
    expect(errors.map((e) => (e as PveApiError).code)).toEqual([
      'server-error',
      'bad-reply',
      'bad-reply',
      'forbidden',
      'timeout',
      'connection',
      'not-implemented',
      'unauthorized',
      'connection',
      'tls-pin-mismatch',
      'tls-untrusted',
    ]);
    const printed = [...errors, ...events, c, ...clients].flatMap((x) => [
      String(x),
      inspect(x, { depth: 8, showHidden: true }),
    ]);
    printed.push(JSON.stringify(errors.map((e) => ({ ...(e as object), message: (e as Error).message }))));
    for (const text of printed) expect(text).not.toContain(SECRET);
    expect(String(c)).toContain('PveClient(');
    expect(inspect(c)).toContain('poise@pve!balancer=[redacted]');
    expect((errors[0] as Error).message).toContain('[redacted]');
  });
});
