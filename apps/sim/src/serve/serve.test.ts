// poise-sim serve: the simulated cluster behind the Proxmox VE API, read with the typed client
// of @poise/pve-api (every reply validated by its schemas) over HTTPS with a pinned fingerprint.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  ApiToken,
  clusterResourcesSchema,
  decode,
  haManagerStatusSchema,
  nodeRrdSchema,
  PveClient,
} from '@poise/pve-api';
import { generateCertificates, type TestCertificates } from '@poise/pve-api/server';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cmdServe, managerConfigText, managerStatePath } from './cli-serve';
import { type SimServe, simClock, startSimServe } from './serve';

const ROOT = resolve(__dirname, '../../../..');
const BUNDLED = join(ROOT, 'apps/manager/scenarios/three-nodes-unbalanced');
const SECRET = '0b6bd1c4-7a3f-4c5e-9d8e-2f1a3b4c5d6e';
const TOKEN = `poise@pve!sim=${SECRET}`;
const GIB = 1024 ** 3;

let certs: TestCertificates;
beforeAll(async () => {
  certs = await generateCertificates();
});

const open: { serve: SimServe; client?: PveClient }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.client?.close();
    await o.serve.close();
  }
});

/** A served case (manual clock: the test steps it), a pinned client, and the lines written. */
async function serve(caseDir = BUNDLED, extra: { version?: string; crsAs?: 'object' } = {}) {
  const lines: string[] = [];
  const s = await startSimServe({
    caseDir,
    port: 0,
    tokens: [ApiToken.parse(TOKEN)],
    tls: { cert: certs.certPem, key: certs.keyPem },
    out: (l) => lines.push(l),
    manual: true,
    ...extra,
  });
  const client = new PveClient({
    baseUrls: [s.url],
    token: ApiToken.parse(TOKEN),
    tls: { fingerprints: [s.fingerprint] },
    retries: 0,
  });
  open.push({ serve: s, client });
  const steps = (n: number) => {
    for (let i = 0; i < n; i++) s.step();
  };
  return { s, client, lines, steps };
}

/** A request of the test's own (no client-side parsing): the raw status, reason phrase and body. */
function raw(
  s: SimServe,
  path: string,
  init: { token?: string; method?: string; body?: string } = {},
): Promise<{ status: number; statusText: string; body: { data: unknown } }> {
  return new Promise((resolvePromise, reject) => {
    const req = request(
      `${s.url}/api2/json${path}`,
      {
        method: init.method ?? 'GET',
        // the certificate is pinned by the client tests; these look at the shapes
        rejectUnauthorized: false,
        headers: {
          ...(init.token === undefined ? {} : { authorization: `PVEAPIToken=${init.token}` }),
          ...(init.body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () =>
          resolvePromise({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? '',
            body: JSON.parse(text) as { data: unknown },
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A case directory: three nodes of 16 cores / 64 GiB powered on at 20 s, the given files. */
function caseDir(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'poise-serve-case-'));
  const all: Record<string, unknown> = {
    hardware_status: Object.fromEntries(
      ['node1', 'node2', 'node3'].map((n) => [n, { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GIB }]),
    ),
    cmdlist: [['power node1 on', 'power node2 on', 'power node3 on'], ['delay 3000']],
    ...files,
  };
  for (const [name, content] of Object.entries(all))
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  return dir;
}

describe('what it serves, read with the typed client (schemas) over HTTPS, pinned', () => {
  it('every read the Proxmox VE adapter makes parses, with the simulated cluster in it', async () => {
    const { client, steps } = await serve();
    steps(2); // powered on, the CRM master adds the services
    expect(await client.version()).toMatchObject({ version: '9.2.2', major: 9, minor: 2 });
    const resources = await client.clusterResources();
    const nodes = resources.filter((r) => r.kind === 'node');
    expect(nodes.map((n) => (n.kind === 'node' ? [n.node, n.online, n.maxCpus] : []))).toEqual([
      ['node1', true, 8],
      ['node2', true, 8],
      ['node3', true, 8],
    ]);
    const guests = resources.filter((r) => r.kind === 'guest');
    // vm:101: 2 of its 4 cores, 6 GiB (the bundled case's dynamic stats); cpu sent as a fraction
    expect(guests.find((g) => g.kind === 'guest' && g.sid === 'vm:101')).toMatchObject({
      node: 'node1',
      running: true,
      cpuUsage: 0.5,
      maxCpus: 4,
      memBytes: 6 * GIB,
      haState: 'started',
    });
    expect(guests.find((g) => g.kind === 'guest' && g.sid === 'ct:105')).toMatchObject({
      type: 'lxc',
      memHostBytes: 0,
    });
    const ms = await client.haManagerStatus();
    expect(ms.masterNode).toBe('node1');
    expect(ms.quorum?.quorate).toBe(true);
    expect(ms.serviceStatus?.get('vm:101')).toMatchObject({ state: 'started', node: 'node1' });
    expect((await client.haResources()).map((r) => r.sid)).toEqual([
      'ct:105',
      'ct:106',
      'vm:101',
      'vm:102',
      'vm:103',
      'vm:104',
    ]);
    expect(await client.haRules()).toEqual([]);
    expect(await client.haGroups()).toEqual({ groups: [], migratedToRules: true });
    expect((await client.clusterOptions()).crs).toMatchObject({ ha: 'dynamic' });
    const rrd = await client.nodeRrd('node1', { timeframe: 'hour', cf: 'AVERAGE' });
    expect(rrd.at(-2)!.cpuUsage).toBeCloseTo(5.5 / 8, 12); // 5.5 cores of guests on node1's 8
    expect(rrd.at(-1)!.cpuUsage).toBeUndefined(); // the bucket being filled
    const config = await client.guestConfig('node1', 'qemu', 101);
    expect(config.entries.get('memory')).toBe('8192');
    const check = await client.migratePrecheck('node1', 'qemu', 101, 'node2');
    expect(check.allowedNodes).toEqual(['node2', 'node3']);
    expect((await client.clusterStatus()).find((e) => e.kind === 'cluster')).toMatchObject({ quorate: true });
  });

  it('the real quirks on the wire: 0/1 booleans, quorate the string "1", crs a property string, cpu the integer 0 when idle', async () => {
    const { s, steps } = await serve();
    steps(2);
    const resources = await raw(s, '/cluster/resources', { token: TOKEN });
    const rows = resources.body.data as Record<string, unknown>[];
    expect(() => decode(clusterResourcesSchema, rows, { endpoint: 'GET /cluster/resources' })).not.toThrow();
    expect(rows.find((r) => r.id === 'storage/node1/ceph')).toMatchObject({ shared: 1 });
    expect(rows.find((r) => r.id === 'qemu/101')).toMatchObject({ template: 0, hastate: 'started' });
    expect(rows.find((r) => r.id === 'node/node3')).toMatchObject({ cpu: 0 });
    const ms = (await raw(s, '/cluster/ha/status/manager_status', { token: TOKEN })).body.data as {
      quorum: { quorate: unknown };
    };
    expect(() => decode(haManagerStatusSchema, ms, { endpoint: 'x' })).not.toThrow();
    expect(ms.quorum.quorate).toBe('1');
    expect((await raw(s, '/cluster/options', { token: TOKEN })).body.data).toEqual({
      keyboard: 'en-us',
      crs: 'ha=dynamic',
    });
    const rrd = (await raw(s, '/nodes/node1/rrddata?timeframe=hour', { token: TOKEN })).body.data;
    expect(() => decode(nodeRrdSchema, rrd, { endpoint: 'x' })).not.toThrow();
  });

  it('API tokens: a request without one or with another gets 401; the token id is printed, never its secret', async () => {
    const { s, lines } = await serve();
    expect((await raw(s, '/version')).status).toBe(401);
    expect(
      (await raw(s, '/version', { token: `poise@pve!sim=${'0'.repeat(8)}-0000-0000-0000-000000000000` })).status,
    ).toBe(401);
    expect((await raw(s, '/version', { token: TOKEN })).status).toBe(200);
    expect((await raw(s, '/nodes/node1/qemu', { token: TOKEN })).status).toBe(501); // not served: as pveproxy answers an unknown path
    expect(lines.join('\n')).toContain(
      'API token: poise@pve!sim (a request without it or with another gets 401; the secret is not printed)',
    );
    expect(lines.join('\n')).not.toContain(SECRET);
    expect(lines).toContain(`fingerprint (SHA-256): ${certs.fingerprint256}`);
  });
});

describe('motions', () => {
  it('HA migrate returns at once (the CRM acts on its next round), then the guest moves', async () => {
    const { s, client, lines, steps } = await serve();
    steps(2);
    const reply = await client.haMigrate('vm:101', 'node2');
    expect(reply).toMatchObject({ accepted: true, requestedNode: 'node2', comigrated: [] });
    // returned before the migration: still started on node1
    expect((await client.haManagerStatus()).serviceStatus?.get('vm:101')).toMatchObject({
      state: 'started',
      node: 'node1',
    });
    steps(1);
    expect((await client.haManagerStatus()).serviceStatus?.get('vm:101')).toMatchObject({
      state: 'migrate',
      node: 'node1',
      target: 'node2',
    });
    steps(1);
    expect((await client.haManagerStatus()).serviceStatus?.get('vm:101')).toMatchObject({
      state: 'started',
      node: 'node2',
    });
    expect(s.posts()).toEqual(['POST /cluster/ha/resources/vm:101/migrate node=node2']);
    expect(lines.filter((l) => l.includes('vm:101'))).toEqual([
      `${simClock(40)}  vm:101: started on node1`,
      `${simClock(40)}  POST migrate vm:101 to node2: queued for the CRM's next round`,
      `${simClock(60)}  vm:101: migrate node1 → node2 (was started on node1)`,
      `${simClock(80)}  vm:101: started on node2 (was migrate node1 → node2)`,
    ]);
  });

  it('a bare vmid is the sid; relocate; a negative-affinity partner on the target blocks (PVE 9 blocking-resources, nothing queued); a missing parameter is 400, what the handler refuses a 500 with its message', async () => {
    const dir = caseDir({
      service_config: {
        'vm:101': { node: 'node1', state: 'started' },
        'vm:102': { node: 'node2', state: 'started' },
        'ct:103': { node: 'node1', state: 'started' },
      },
      rules_config: 'resource-affinity: apart\n\tresources vm:101,vm:102\n\taffinity negative\n',
    });
    const { s, client, steps } = await serve(dir);
    steps(2);
    expect(await client.haMigrate('vm:101', 'node2')).toMatchObject({
      accepted: false,
      blocking: [{ sid: 'vm:102', cause: 'resource-affinity' }],
    });
    expect(await client.haRelocate('103', 'node3')).toMatchObject({ accepted: true });
    steps(2);
    expect((await client.haManagerStatus()).serviceStatus?.get('ct:103')).toMatchObject({
      state: 'started',
      node: 'node3',
    });
    expect((await client.haManagerStatus()).serviceStatus?.get('vm:101')).toMatchObject({ node: 'node1' });
    expect(
      (await raw(s, '/cluster/ha/resources/vm:101/migrate', { token: TOKEN, method: 'POST', body: '' })).status,
    ).toBe(400);
    for (const [body, sid, text] of [
      ['node=node9', 'vm:101', "no such cluster node 'node9'"],
      ['node=node2', 'vm:999', "service 'vm:999' is not HA managed"],
    ]) {
      const reply = await raw(s, `/cluster/ha/resources/${sid}/migrate`, { token: TOKEN, method: 'POST', body });
      expect([reply.status, reply.statusText]).toEqual([500, text]);
      // the typed client knows it for a refusal: nothing was applied
      await expect(client.haMigrate(sid!, body!.slice(5))).rejects.toMatchObject({
        code: 'refused',
        mayHaveBeenApplied: false,
        serverMessage: text,
      });
    }
    expect(s.sim.view().managerStatus.service_status?.['vm:101']).toMatchObject({ node: 'node1', state: 'started' });
  });

  it('the guest migrate endpoint of an HA guest starts an hamigrate task that ends once the command is queued', async () => {
    const { client, steps } = await serve();
    steps(2);
    const upid = await client.migrateGuest('node1', 'qemu', 102, { target: 'node3', online: true });
    expect(upid).toMatchObject({ node: 'node1', type: 'hamigrate', id: '102', user: 'root@pam' });
    expect(await client.taskStatus(upid.upid)).toMatchObject({ outcome: 'ok' });
    expect((await client.tasks('node1', { vmid: 102, typefilter: 'hamigrate' })).map((t) => t.upid)).toEqual([
      upid.upid,
    ]);
    steps(2);
    expect((await client.haManagerStatus()).serviceStatus?.get('vm:102')).toMatchObject({
      state: 'started',
      node: 'node3',
    });
  });
});

describe('a node that fails, as the HA manager handles it', () => {
  it('served like the real cluster: the node offline, its HA state unknown then fence, its services in fence, then recovered elsewhere; quorate "1" throughout', async () => {
    const dir = caseDir({
      service_config: { 'vm:101': { node: 'node3', state: 'started' }, 'vm:102': { node: 'node1', state: 'started' } },
      cmdlist: [['power node1 on', 'power node2 on', 'power node3 on'], ['network node3 off'], ['delay 3000']],
    });
    const { client, steps } = await serve(dir);
    const seen = { node: new Set<string>(), service: new Set<string>(), status: new Set<string>() };
    for (let i = 0; i < 40; i++) {
      steps(1);
      const ms = await client.haManagerStatus();
      if (ms.quorum !== undefined) expect(ms.quorum.quorate).toBe(true); // node1 and node2 keep the quorum
      seen.node.add(ms.nodeStatus.get('node3') ?? '?');
      seen.service.add(`${ms.serviceStatus?.get('vm:101')?.state}@${ms.serviceStatus?.get('vm:101')?.node}`);
      const row = (await client.clusterResources('node')).find((r) => r.kind === 'node' && r.node === 'node3');
      if (row?.kind === 'node') seen.status.add(row.online ? 'online' : 'offline');
    }
    expect([...seen.node]).toEqual(expect.arrayContaining(['online', 'unknown', 'fence']));
    // (recovery passes within one CRM round here: the state machine runs until it is stable)
    expect([...seen.service]).toEqual(expect.arrayContaining(['started@node3', 'fence@node3']));
    expect([...seen.service].some((x) => /^started@node[12]$/.test(x))).toBe(true);
    expect([...seen.status]).toEqual(['online', 'offline']);
  });
});

describe('the simulator’s additions on the wire', () => {
  it('node pressure set in the case is served in the RRD rows; a locked guest is served with its lock', async () => {
    // the second command list (at 120 s) puts 12 % cpu pressure on node1 and locks vm:101
    const dir = caseDir({
      service_config: { 'vm:101': { node: 'node1', state: 'started' }, 'vm:102': { node: 'node2', state: 'started' } },
      cmdlist: [
        ['power node1 on', 'power node2 on', 'power node3 on'],
        ['node node1 set-dynamic-stats pressurecpusome 12', 'service vm:101 lock backup'],
        ['delay 3000'],
      ],
    });
    const { s, client, steps } = await serve(dir);
    steps(8); // past 120 s
    const rows = await client.nodeRrd('node1', { timeframe: 'hour', cf: 'AVERAGE' });
    expect(rows.at(-2)!.pressure.cpuSome).toBe(12);
    const other = (await raw(s, '/nodes/node2/rrddata?timeframe=hour', { token: TOKEN })).body.data as Record<
      string,
      unknown
    >[];
    expect(other.at(-2)).not.toHaveProperty('pressurecpusome');
    const resources = (await raw(s, '/cluster/resources', { token: TOKEN })).body.data as Record<string, unknown>[];
    expect(resources.find((r) => r.id === 'qemu/101')).toMatchObject({ lock: 'backup' });
    expect(resources.find((r) => r.id === 'qemu/102')).not.toHaveProperty('lock');
  });
});

describe('older clusters', () => {
  it('--pve-version 8.x: no rules (501 → groups), groups served and named by the resources, no memhost, HA migrate answers null', async () => {
    const dir = caseDir({
      service_config: {
        'vm:101': { node: 'node1', state: 'started', group: 'pair' },
        'vm:102': { node: 'node2', state: 'started' },
      },
      groups: 'group: pair\n\tnodes node1:2,node2\n\trestricted 1\n',
    });
    const { client, steps } = await serve(dir, { version: '8.4.1' });
    steps(2);
    await expect(client.haRules()).rejects.toMatchObject({ code: 'not-implemented' });
    expect(await client.haGroups()).toMatchObject({
      groups: [
        {
          group: 'pair',
          restricted: true,
          nodes: [
            { node: 'node1', priority: 2 },
            { node: 'node2', priority: 0 },
          ],
        },
      ],
      migratedToRules: false,
    });
    expect((await client.haResources()).find((r) => r.sid === 'vm:101')).toMatchObject({ group: 'pair' });
    const vm = (await client.clusterResources()).find((r) => r.kind === 'guest' && r.sid === 'vm:101');
    expect(vm).toMatchObject({ memHostBytes: undefined });
    expect(await client.haMigrate('vm:102', 'node1')).toMatchObject({ accepted: true, detailed: false });
  });

  it("a node whose hardware_status pve-manager-version is 8.x sends RRD rows without PSI (and its guests no memhost); PVE 9 rules hold the case's groups as ha-group rules", async () => {
    const dir = caseDir({
      hardware_status: {
        node1: { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GIB },
        node2: { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GIB, 'pve-manager-version': '8.4.1' },
        node3: { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GIB },
      },
      service_config: {
        'vm:101': { node: 'node1', state: 'started', group: 'pair' },
        'vm:102': { node: 'node2', state: 'started' },
      },
      groups: 'group: pair\n\tnodes node1:2,node2\n\trestricted 1\n',
    });
    const { s, client, steps } = await serve(dir);
    steps(2);
    const rows = (await raw(s, '/nodes/node2/rrddata?timeframe=hour', { token: TOKEN })).body.data as Record<
      string,
      unknown
    >[];
    expect(rows.flatMap((r) => Object.keys(r)).filter((k) => k.startsWith('pressure') || k === 'memavailable')).toEqual(
      [],
    );
    const resources = (await raw(s, '/cluster/resources', { token: TOKEN })).body.data as Record<string, unknown>[];
    expect(resources.find((r) => r.id === 'qemu/102')).not.toHaveProperty('memhost');
    expect(resources.find((r) => r.id === 'qemu/101')).toHaveProperty('memhost');
    expect(await client.haRules()).toMatchObject([
      { rule: 'ha-group-pair', type: 'node-affinity', strict: true, resources: ['vm:101'] },
    ]);
  });
});

describe('the command line', () => {
  function io() {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), stopped: Promise.resolve('SIGTERM') },
    };
  }

  it.each<[string, string[], number, RegExp]>([
    ['no case directory', [], 2, /'serve' needs a case directory/],
    [
      'no token',
      [BUNDLED],
      2,
      /'serve' needs an API token: '--token USER@REALM!TOKENID=SECRET' or '--token-file <file>'/,
    ],
    [
      '--step with --speed',
      [BUNDLED, '--token', TOKEN, '--step', '--speed', '5'],
      2,
      /give '--speed' or '--step', not both/,
    ],
    [
      '--step with --manager-config',
      [BUNDLED, '--token-file', 'token', '--step', '--manager-config', 'x.yaml'],
      2,
      /'--manager-config' writes a config for a daemon on the wall clock; with '--step' the cluster's clock is the simulation's/,
    ],
    [
      '--speed 0',
      [BUNDLED, '--token', TOKEN, '--speed', '0'],
      2,
      /'--speed' takes a number > 0 \(simulated seconds per real second\), got '0'/,
    ],
    [
      '--port 70000',
      [BUNDLED, '--token', TOKEN, '--port', '70000'],
      2,
      /'--port' takes a port from 0 to 65535, got '70000'/,
    ],
    ['--cert without --key', [BUNDLED, '--token', TOKEN, '--cert', 'c.pem'], 2, /'--cert' and '--key' go together/],
    [
      '--pve-version nine',
      [BUNDLED, '--token', TOKEN, '--pve-version', 'nine'],
      2,
      /'--pve-version' takes a version like 9\.2\.2 or 8\.4\.1, got 'nine'/,
    ],
    [
      '--manager-config with --token',
      [BUNDLED, '--token', TOKEN, '--manager-config', 'x.yaml'],
      2,
      /'--manager-config' needs '--token-file'/,
    ],
    [
      'a token of the wrong format',
      [BUNDLED, '--token', 'just-a-secret'],
      1,
      /'--token' has the wrong format; expected 'USER@REALM!TOKENID=SECRET'/,
    ],
    [
      'a token file that does not exist',
      [BUNDLED, '--token-file', '/nonexistent/token'],
      1,
      /token file '\/nonexistent\/token' does not exist/,
    ],
    ['a directory that is no case', [join(ROOT, 'apps'), '--token', TOKEN], 1, /missing '.*apps\/cmdlist'/],
    [
      'a certificate file that does not exist',
      [BUNDLED, '--token', TOKEN, '--cert', '/nonexistent/c.pem', '--key', '/nonexistent/k.pem'],
      1,
      /'--cert' '\/nonexistent\/c\.pem' cannot be read \(ENOENT\)/,
    ],
    [
      'a --cert that holds no certificate',
      [BUNDLED, '--token', TOKEN, '--cert', __filename, '--key', __filename],
      1,
      /'--cert' '.*serve\.test\.ts' holds no PEM certificate/,
    ],
  ])('%s: exit %i', async (_name, argv, code, message) => {
    const c = io();
    expect(await cmdServe(argv, c.io)).toBe(code);
    expect(c.err.join('\n')).toMatch(message);
    expect(c.err.join('\n')).not.toContain(SECRET);
  });

  it("--step: each line runs that many HA rounds and answers the simulated time; the cluster's clock is the simulation's; a bad line is named, serving goes on", async () => {
    const c = io();
    let stop!: (signal: string) => void;
    const stopped = new Promise<string>((r) => (stop = r));
    let started: SimServe | undefined;
    let timestamp: unknown;
    async function* input() {
      yield 'step';
      yield '';
      yield ' step 3 ';
      yield 'jump';
      yield 'step 0';
      // the served clock: 2026-01-01T00:00:00Z + the 80 simulated seconds of the 4 rounds
      timestamp = (await raw(started!, '/cluster/ha/status/manager_status', { token: TOKEN })).body.data;
      yield 'step 999999';
      yield 'step';
      stop('SIGTERM');
    }
    expect(
      await cmdServe([BUNDLED, '--port', '0', '--token', TOKEN, '--step'], {
        ...c.io,
        stopped,
        input: input(),
        onStarted: (s) => (started = s),
      }),
    ).toBe(0);
    expect(c.out).toContain(
      "time: stepped by hand (each step one 20 s HA round; the cluster's clock is the simulation's, 2026-01-01T00:00:00.000Z + simulated seconds); the simulation ends with its scenario, then its last state is served until stopped",
    );
    const answers = c.out.filter((l) => l.startsWith('stepped to '));
    expect(answers.slice(0, 2)).toEqual(['stepped to 20 s', 'stepped to 80 s']);
    expect(answers[2]).toMatch(/^stepped to \d+ s \(the scenario has ended\)$/);
    expect(answers[3]).toBe(answers[2]);
    expect(c.err).toEqual([
      "poise-sim serve: unknown input 'jump' (expected 'step [<n>]', n rounds from 1 to 999999)",
      "poise-sim serve: 'step 0': expected a number of rounds from 1 to 999999",
    ]);
    expect(timestamp).toMatchObject({ lrm_status: { node1: { timestamp: 1_767_225_600 + 80 } } });
    expect(c.out.at(-1)).toBe('SIGTERM: stopped');
  });

  it('each served cluster gets a state file of its own: another case, another port, another config', () => {
    const a = managerStatePath('/tmp/poise-manager.yaml', 'three-nodes-unbalanced', 'https://127.0.0.1:8006');
    const b = managerStatePath('/tmp/poise-manager.yaml', 'rebalance-and-failover', 'https://127.0.0.1:8006');
    const c = managerStatePath('/tmp/poise-manager.yaml', 'three-nodes-unbalanced', 'https://127.0.0.1:8007');
    const d = managerStatePath('/tmp/other.yaml', 'three-nodes-unbalanced', 'https://127.0.0.1:8006');
    expect(a).toBe('/tmp/poise-manager-state-three-nodes-unbalanced-8006.json');
    expect(new Set([a, b, c, d]).size).toBe(4);
    expect(managerStatePath('/tmp/x.yaml', 'a case/../b', 'https://[::1]:9000')).toBe(
      '/tmp/x-state-a_case_.._b-9000.json',
    );
  });

  it('serves given --cert/--key (its fingerprint printed), writes a poise-manager config with --manager-config, stops on the signal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-serve-cli-'));
    writeFileSync(join(dir, 'cert.pem'), certs.certPem);
    writeFileSync(join(dir, 'key.pem'), certs.keyPem);
    writeFileSync(join(dir, 'token'), `${TOKEN}\n`, { mode: 0o600 });
    const c = io();
    let started: SimServe | undefined;
    const code = await cmdServe(
      [
        BUNDLED,
        '--port',
        '0',
        '--token-file',
        join(dir, 'token'),
        '--cert',
        join(dir, 'cert.pem'),
        '--key',
        join(dir, 'key.pem'),
        '--manager-config',
        join(dir, 'pm.yaml'),
      ],
      { ...c.io, onStarted: (s) => (started = s) },
    );
    expect(code).toBe(0);
    expect(c.out).toContain(`fingerprint (SHA-256): ${certs.fingerprint256}`);
    expect(c.out.at(-1)).toBe('SIGTERM: stopped');
    const written = readFileSync(join(dir, 'pm.yaml'), 'utf8');
    const state = join(dir, `pm-state-three-nodes-unbalanced-${new URL(started!.url).port}.json`);
    expect(written).toBe(managerConfigText(started!, join(dir, 'token'), state, 10));
    expect(managerStatePath(join(dir, 'pm.yaml'), started!.caseName, started!.url)).toBe(state);
    expect(written).toContain(`state: {file: '${state}'}`);
    expect(c.out).toContain(
      `poise-manager config written to '${join(dir, 'pm.yaml')}' (its state in '${state}'): pnpm poise-manager --config ${join(dir, 'pm.yaml')} [--mode act]`,
    );
    expect(written).toContain(`tls: {fingerprint: '${certs.fingerprint256}'}`);
    expect(written).toContain(`token-file: '${join(dir, 'token')}'`);
    expect(written).toMatch(/^interval: 2 /m); // one simulated round at the default speed 10
    expect(written).toMatch(/^limits: \{settle-time: 12\} /m); // the daemon's 120 s, simulated
    expect(written).not.toContain(SECRET);
    expect(c.out.join('\n')).not.toContain(SECRET);
  });
});
