/**
 * The status page's JSON endpoints over HTTP, on a daemon against a fake cluster (the rounds
 * driven by the test): what each answers, bad query values named, the token in no reply, the
 * plan and the what-if computed without a motion requested, the last good read kept when a
 * read fails, the page's own files served.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load';
import { PortError } from '../cluster/port';
import { FakeCluster, type FakeClusterSpec, fakeHost } from '../testing/fake-cluster';
import { GIB } from '../testing/support';
import { Daemon } from './daemon';
import { Logger } from '../log';

/** The secret of the test's API token: it must appear in no reply. */
const SECRET = '0b7e6bd4-3c1f-4a8e-9d2a-5f6e7a8b9c0d';

/** Three nodes; six HA VMs of 2 cores / 8 GiB on node1 (imbalance 100 %). */
function unbalanced(): FakeClusterSpec {
  return {
    nodes: [{ name: 'node1', pressureCpu: 12.5 }, { name: 'node2' }, { name: 'node3' }],
    guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104', 'vm:105', 'vm:106'].map((sid) => ({
      sid,
      node: 'node1',
      cpu: 2,
      mem: 8 * GIB,
    })),
  };
}

const opened: Daemon[] = [];
afterEach(async () => {
  for (const d of opened.splice(0)) {
    d.stop('SIGTERM');
    await d.close();
  }
});

async function running(spec: FakeClusterSpec = unbalanced(), doc: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'poise-endpoints-'));
  const config = parseConfig(
    {
      env: 'pve',
      mode: 'act',
      pve: { urls: ['https://node1:8006'], 'token-env': 'POISE_TEST_TOKEN' },
      state: { file: join(dir, 'state.json') },
      metrics: { enabled: true, listen: '127.0.0.1:0' },
      lock: { enabled: false },
      policy: { 'ha-auto-rebalance-preset': 'reference', 'ha-auto-rebalance-hold-duration': 1 },
      ...doc,
    },
    join(dir, 'poise-manager.yaml'),
  );
  const cluster = FakeCluster.create(spec);
  const host = fakeHost(cluster, { redact: (text) => text.replaceAll(SECRET, '[redacted]') });
  let port = 0;
  const daemon = new Daemon({
    config,
    host,
    log: new Logger(
      { format: 'json', level: 'info' },
      () => undefined,
      () => cluster.time,
    ),
    version: 'test',
    onListening: (a) => (port = a.port),
  });
  opened.push(daemon);
  await daemon.start();
  const never = new AbortController().signal;
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    const text = await res.text();
    return {
      status: res.status,
      text,
      headers: res.headers,
      type: res.headers.get('content-type'),
      json: () => JSON.parse(text),
    };
  };
  return {
    dir,
    cluster,
    host,
    daemon,
    get,
    rounds: async (n: number) => {
      for (let i = 0; i < n; i++) {
        await daemon.runRound();
        await host.clock.sleep(config.intervalSeconds, never);
      }
    },
  };
}

describe('the status endpoints', () => {
  it('/api/cluster: each node now (condition, load, pressure, guests); before any read, none', async () => {
    const s = await running();
    expect((await s.get('/api/cluster')).json()).toEqual({
      thresholdPercent: 30,
      read: null,
      failure: null,
      version: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    await s.rounds(1);
    const doc = (await s.get('/api/cluster')).json();
    expect(doc).toMatchObject({ thresholdPercent: 30, failure: null, read: { round: 1, quorate: true, imbalance: 1 } });
    // node1: 6 × 2 of 16 cores, 6 × 8 of 64 GiB; load (0.75 + 0.75) / 2
    expect(doc.read.nodes[0]).toEqual({
      name: 'node1',
      condition: 'online',
      state: 'settled',
      balanced: true,
      cpuCores: 12,
      maxCpuCores: 16,
      memBytes: 48 * GIB,
      maxMemBytes: 64 * GIB,
      cpu: 0.75,
      mem: 0.75,
      load: 0.75,
      pressureCpu: 12.5,
      pressureMem: null,
      guests: 6,
      haResources: 6,
    });
    expect(doc.read.nodes.map((n: { name: string; cpu: number }) => [n.name, n.cpu])).toEqual([
      ['node1', 0.75],
      ['node2', 0],
      ['node3', 0],
    ]);
  });

  it('/api/cluster keeps the last good read when a read fails, and says so; a good read clears it', async () => {
    const s = await running();
    await s.rounds(1);
    s.cluster.failNextReads('timeout');
    await s.rounds(1);
    const doc = (await s.get('/api/cluster')).json();
    expect(doc.read.round).toBe(1);
    expect(doc.failure).toMatchObject({
      round: 2,
      message: expect.stringMatching(/^reading the cluster failed \(timeout, GET /),
    });
    expect(doc.read.nodes).toHaveLength(3);
    await s.rounds(1);
    expect((await s.get('/api/cluster')).json()).toMatchObject({ read: { round: 3 }, failure: null });
  });

  it('/api/history: per round the imbalance and each node, since a time or after a round; bad values named', async () => {
    const s = await running();
    await s.rounds(3);
    const all = (await s.get('/api/history')).json();
    expect(all).toMatchObject({ intervalSeconds: 10, keptSeconds: 86400, rounds: [1, 2, 3] });
    expect(all.outcome).toEqual(['move', 'skip', 'move']);
    expect(all.imbalance[0]).toBe(1);
    expect(all.nodes.node1.cpu[0]).toBe(0.75);
    expect(all.nodes.node1.pressureCpu).toEqual([12.5, 12.5, 12.5]);
    expect(all.nodes.node2.pressureCpu).toBeUndefined();
    expect((await s.get('/api/history?after=2')).json().rounds).toEqual([3]);
    // in pieces, newest first: the newest 2, then the one before them
    expect((await s.get('/api/history?limit=2')).json().rounds).toEqual([2, 3]);
    const older = (await s.get('/api/history?before=2&limit=2')).json();
    expect([older.rounds, older.nodes.node1.cpu]).toEqual([[1], [0.75]]);
    expect((await s.get(`/api/history?since=${all.time[1]}`)).json().rounds).toEqual([2, 3]);
    for (const [query, message] of [
      ['after=x', "query parameter 'after' (a round number): expected a whole number ≥ 0, got 'x'"],
      ['after=1.5', "query parameter 'after' (a round number): expected a whole number ≥ 0, got '1.5'"],
      ['since=-3', "query parameter 'since' (seconds of the daemon clock): expected a number ≥ 0, got '-3'"],
      ['after=1&after=2', "query parameter 'after' is given twice"],
      [
        'from=1',
        "unknown query parameter 'from' (this endpoint takes 'since', 'after', 'before', 'limit', 'pressure')",
      ],
      ['before=0', "query parameter 'before' (a round number): expected a whole number ≥ 1, got '0'"],
      ['limit=0', "query parameter 'limit' (rounds): expected a whole number from 1 to 17280, got '0'"],
      ['limit=17281', "query parameter 'limit' (rounds): expected a whole number from 1 to 17280, got '17281'"],
    ]) {
      const r = await s.get(`/api/history?${query}`);
      expect([r.status, r.json()], query).toEqual([400, { error: message }]);
    }
  });

  it('/api/history?pressure=0: the load columns without the pressure ones; a bad flag named', async () => {
    const s = await running();
    await s.rounds(2);
    const doc = (await s.get('/api/history?pressure=0')).json();
    expect(doc.nodes.node1).toEqual({ cpu: [0.75, 0.75], mem: [0.75, 0.75] });
    expect((await s.get('/api/history?pressure=1')).json().nodes.node1.pressureCpu).toEqual([12.5, 12.5]);
    // nothing since the poller's last round: no rounds, nothing to draw
    expect((await s.get('/api/history?after=2&pressure=0')).json()).toMatchObject({ rounds: [], nodes: {} });
    const r = await s.get('/api/history?pressure=no');
    expect([r.status, r.json()]).toEqual([
      400,
      { error: "query parameter 'pressure' (the nodes' pressure columns): expected 1 or 0, got 'no'" },
    ]);
  });

  it('unless=<version>: the same document again is only {unchanged, version}; a new round changes it; bad versions named', async () => {
    const s = await running();
    await s.rounds(1);
    for (const path of ['/api/run', '/api/cluster', '/api/motions', '/api/drain']) {
      const first = (await s.get(path)).json();
      expect(first.version, path).toMatch(/^[0-9a-f]{16}$/);
      // asked again with what it holds: nothing to redraw
      expect((await s.get(`${path}?unless=${first.version}`)).json(), path).toEqual({
        unchanged: true,
        version: first.version,
      });
      // another version (a poller of an older state): the whole document
      const other = first.version === '0000000000000000' ? '1111111111111111' : '0000000000000000';
      expect((await s.get(`${path}?unless=${other}`)).json(), path).toEqual(first);
    }
    const cluster = (await s.get('/api/cluster')).json();
    const motions = (await s.get('/api/motions')).json();
    await s.rounds(1);
    // round 2 read the cluster again, and the motion of round 1 ran on (its duration grew)
    expect((await s.get(`/api/cluster?unless=${cluster.version}`)).json()).toMatchObject({ read: { round: 2 } });
    expect((await s.get(`/api/motions?unless=${motions.version}&limit=5`)).json().motions).toHaveLength(1);
    for (const [query, message] of [
      [
        'unless=abc',
        "query parameter 'unless' (the version a poller holds): expected 16 hex digits as a reply's 'version', got 'abc'",
      ],
      [
        'unless=0123456789ABCDEF',
        "query parameter 'unless' (the version a poller holds): expected 16 hex digits as a reply's 'version', got '0123456789ABCDEF'",
      ],
      ['unless=0&unless=1', "query parameter 'unless' is given twice"],
    ]) {
      const r = await s.get(`/api/cluster?${query}`);
      expect([r.status, r.json()], query).toEqual([400, { error: message }]);
    }
    expect((await s.get('/api/run?since=1')).json()).toEqual({
      error: "unknown query parameter 'since' (this endpoint takes 'unless')",
    });
  });

  it('/api/run: the interval; ended (and how) once the environment has', async () => {
    const s = await running();
    expect((await s.get('/api/run')).json()).toEqual({ intervalSeconds: 10, ended: null, version: expect.any(String) });
    const host = s.host as { finished?: () => boolean; endStatus?: () => { ok: boolean; message: string } };
    host.finished = () => true;
    expect((await s.get('/api/run')).json().ended).toEqual({ ok: true, message: 'the environment has ended' });
    host.endStatus = () => ({ ok: false, message: 'the simulation aborted at 40 s' });
    expect((await s.get('/api/run')).json().ended).toEqual({ ok: false, message: 'the simulation aborted at 40 s' });
  });

  it('/api/decisions: each round line, filtered by outcome, reason and text; bad values named', async () => {
    const s = await running();
    await s.rounds(4);
    const all = (await s.get('/api/decisions')).json();
    expect(all.kept).toBe(4);
    // hold 1: round 1 moves, round 2 follows it, round 3 moves the next guest, round 4 follows that
    expect(all.decisions.map((d: { round: number; outcome: string }) => [d.round, d.outcome])).toEqual([
      [1, 'move'],
      [2, 'skip'],
      [3, 'move'],
      [4, 'skip'],
    ]);
    expect(all.decisions[0]).toMatchObject({
      reason: 'move',
      sid: 'vm:101',
      source: 'node1',
      target: 'node2',
      message: expect.stringMatching(/^migrate vm:101 from node1 to node2 \(imbalance 100\.0% → /),
      timeText: '2026-01-01T00:00:00.000Z',
    });
    const only = async (q: string) =>
      (await s.get(`/api/decisions?${q}`)).json().decisions.map((d: { round: number }) => d.round);
    expect(await only('outcome=move')).toEqual([1, 3]);
    expect(await only('outcome=skip&reason=motion-in-flight')).toEqual([2, 4]);
    expect(await only('reason=holding,below-threshold')).toEqual([]);
    expect(await only('q=VM:101')).toEqual([1, 2]);
    expect(await only('after=2&limit=1')).toEqual([4]);
    for (const [query, message] of [
      [
        'outcome=moved',
        "query parameter 'outcome': unknown value 'moved' (one of move, would-move, refused, skip, standby, error)",
      ],
      ['outcome=', "query parameter 'outcome': expected one or more values, got nothing"],
      ['limit=0', "query parameter 'limit' (entries): expected a whole number from 1 to 5000, got '0'"],
      ['limit=99999', "query parameter 'limit' (entries): expected a whole number from 1 to 5000, got '99999'"],
    ]) {
      const r = await s.get(`/api/decisions?${query}`);
      expect([r.status, r.json()], query).toEqual([400, { error: message }]);
    }
  });

  it('/api/motions: each motion from its request to its outcome, with its duration', async () => {
    const s = await running();
    await s.rounds(2);
    expect((await s.get('/api/motions')).json().motions).toEqual([
      expect.objectContaining({
        sid: 'vm:101',
        result: 'in-flight',
        requestedAtText: '2026-01-01T00:00:00.000Z',
        endedAt: null,
        // so far: two rounds of 10 s
        durationSeconds: 20,
      }),
    ]);
    await s.rounds(1);
    const motions = (await s.get('/api/motions')).json().motions;
    expect(motions).toEqual([
      expect.objectContaining({
        sid: 'vm:101',
        kind: 'migrate',
        via: 'ha',
        source: 'node1',
        target: 'node2',
        result: 'succeeded',
        endedAtText: '2026-01-01T00:00:20.000Z',
        durationSeconds: 20,
        reason: null,
      }),
      expect.objectContaining({ result: 'in-flight', requestedAtText: '2026-01-01T00:00:20.000Z' }),
    ]);
    expect((await s.get('/api/motions?limit=1')).json().motions).toEqual([motions[1]]);
    expect((await s.get('/api/motions?limit=abc')).status).toBe(400);
  });

  it('/api/policy: the keys in force with where each came from, the stages, the problems', async () => {
    const s = await running(unbalanced(), {
      // a key that has no effect beside the others: a problem the policy reports (a bad value is refused at load)
      policy: {
        'ha-auto-rebalance-hold-duration': 2,
        'ha-auto-rebalance-objective': 'imbalance',
        'ha-auto-rebalance-contention-min-gain': 60,
      },
    });
    const doc = (await s.get('/api/policy')).json();
    expect(doc).toMatchObject({ mode: 'act', thresholdPercent: 30, holdRounds: 2, preset: 'recommended' });
    expect(doc.stages).toEqual(expect.arrayContaining(['threshold-hold', 'cooldown']));
    expect(doc.keys).toContainEqual({
      key: 'ha-auto-rebalance-hold-duration',
      value: 2,
      source: expect.stringMatching(/poise-manager\.yaml'$/),
      sourceKind: 'config',
    });
    expect(doc.keys).toContainEqual({
      key: 'ha-auto-rebalance-threshold',
      value: 30,
      source: "poise-manager's defaults",
      sourceKind: 'default',
    });
    expect(doc.problems).toEqual([
      expect.stringMatching(/^policy\.ha-auto-rebalance-contention-min-gain: value 60 has no effect/),
    ]);
  });

  it('/api/plan and /api/what-if: computed from the last read when asked, nothing requested', async () => {
    const s = await running(unbalanced(), { mode: 'observe' });
    expect((await s.get('/api/plan')).status).toBe(503);
    expect((await s.get('/api/what-if')).json()).toEqual({
      error: 'no round has read the cluster yet: the plan is made from the last read',
    });
    await s.rounds(1);
    const state = JSON.stringify(s.daemon.currentState());
    const plan = await s.get('/api/plan');
    expect(plan.status).toBe(200);
    const doc = plan.json();
    expect(doc).toMatchObject({ round: 1, feasible: true, drain: [] });
    expect(doc.steps.flat().length).toBeGreaterThan(0);
    expect(doc.imbalance.current).toBe(1);
    expect(doc.imbalance.target).toBeLessThan(0.3);
    const whatIf = (await s.get('/api/what-if')).json();
    expect(whatIf).toMatchObject({ round: 1, survivesAnyNodeFailure: expect.any(Boolean) });
    expect(whatIf.cases.map((c: { node: string }) => c.node)).toEqual(['node1', 'node2', 'node3']);
    // asked again within the round: the same answer; nothing requested, the state untouched
    expect((await s.get('/api/plan')).text).toBe(plan.text);
    expect(s.cluster.s.requests).toEqual([]);
    expect(JSON.stringify(s.daemon.currentState())).toBe(state);
    expect((await s.get('/api/plan?x=1')).status).toBe(400);
  });

  it('/api/drain: none, a record written beside state.file, or a file that is no record (named)', async () => {
    const s = await running();
    expect((await s.get('/api/drain')).json()).toEqual({ drain: null, version: expect.any(String) });
    const file = join(s.dir, 'drain-progress.json');
    writeFileSync(
      file,
      JSON.stringify({
        format: 'poise-drain-progress',
        version: 1,
        pid: process.pid,
        hostname: (await import('node:os')).hostname(),
        nodes: ['node3'],
        state: 'running',
        startedAt: 1767225600,
        updatedAt: 1767225640,
        total: 4,
        succeeded: 1,
        failed: 0,
        inFlight: [{ sid: 'vm:104', source: 'node3', target: 'node1', since: 1767225640 }],
        message: 'step 2: migrate vm:104 from node3 to node1',
      }),
    );
    expect((await s.get('/api/drain')).json()).toEqual({
      drain: expect.objectContaining({
        nodes: ['node3'],
        total: 4,
        succeeded: 1,
        startedAtText: '2026-01-01T00:00:00.000Z',
        processGone: false,
      }),
      version: expect.any(String),
    });
    writeFileSync(file, '{"format": "something else"}');
    expect((await s.get('/api/drain')).json()).toEqual({
      drain: null,
      problem: `'${file}' is not a drain progress record: field 'format': ${'Invalid input: expected "poise-drain-progress"'}`,
      version: expect.any(String),
    });
  });

  it('the token appears in no reply, even when an adapter error carried it', async () => {
    const s = await running();
    const read = s.cluster.readSnapshot.bind(s.cluster);
    let leak = true;
    s.cluster.readSnapshot = async (needs) => {
      if (leak) {
        leak = false;
        throw new PortError('GET /cluster/resources', 'auth', `refused token poise@pve!balancer=${SECRET}`);
      }
      const snap = await read(needs);
      return { ...snap, problems: [{ message: `node 'node3': rrd unreadable with ${SECRET}` }] };
    };
    await s.rounds(3);
    const paths = [
      '/status',
      '/api/run',
      '/api/cluster',
      '/api/history',
      '/api/decisions',
      '/api/motions',
      '/api/policy',
      '/api/plan',
      '/api/what-if',
      '/api/drain',
      '/metrics',
    ];
    for (const path of paths) {
      const r = await s.get(path);
      expect(r.status, path).toBe(200);
      expect(r.text, path).not.toContain(SECRET);
    }
    // the failure is there, with the secret replaced
    expect((await s.get('/api/decisions?outcome=error')).text).toContain('refused token poise@pve!balancer=[redacted]');
  });

  it('serves the page and its script (built from source here), with a policy that loads nothing from elsewhere', async () => {
    const s = await running();
    const page = await s.get('/');
    expect(page.status).toBe(200);
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<script defer src="ui/app.js"></script>');
    expect(page.text).not.toMatch(/(src|href)="https?:/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const script = await s.get('/ui/app.js');
    expect(script.status).toBe(200);
    expect(script.type).toBe('text/javascript; charset=utf-8');
    expect(script.text.length).toBeGreaterThan(100_000);
    expect(script.text).not.toMatch(/https?:\/\/(cdn|unpkg|jsdelivr)/);
    expect((await s.get('/ui/third-party-licenses.txt')).text).toMatch(/^vega \d/m);
    expect((await s.get('/ui/other.js')).status).toBe(404);
  }, 60_000);
});
