import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificates } from '@poise/pve-api/server';
import { describe, expect, it } from 'vitest';
import { createPveHost, type Host } from '../cluster/host';
import { parseConfig } from '../config/load';
import { Daemon } from '.';
import { ManagerError } from '../errors';
import { FakeCluster, type FakeClusterSpec, fakeHost } from '../testing/fake-cluster';
import { localLockFs, type ProcessIdentity } from './lock';
import { Logger } from '../log';
import type { MotionReply } from '../cluster/port';

const GIB = 1024 ** 3;
const T0 = 1_767_225_600;
/** A PEM file that is a certificate (the client reads it at construction). */
const CA_FILE = join(mkdtempSync(join(tmpdir(), 'poise-ca-')), 'ca.pem');
writeFileSync(CA_FILE, (await generateCertificates()).caPem);

/** Three nodes of 16 cores / 64 GiB; six HA VMs of 2 cores / 8 GiB, all on node1 (load 0.75, 0, 0: imbalance 100 %). */
function unbalanced(extra: Partial<FakeClusterSpec> = {}): FakeClusterSpec {
  return {
    nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }],
    guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104', 'vm:105', 'vm:106'].map((sid) => ({
      sid,
      node: 'node1',
      cpu: 2,
      mem: 8 * GIB,
    })),
    ...extra,
  };
}

interface Setup {
  dir: string;
  statePath: string;
  cluster: FakeCluster;
  host: Host;
  lines: string[];
  records: () => Record<string, unknown>[];
  rounds: () => Record<string, unknown>[];
  daemon: Daemon;
  /** Runs n rounds with a cluster round (step) between them. */
  run: (n: number) => Promise<void>;
}

/** A process on a node, as a lock holder (`running`: which pids still run). */
function identity(node: string, pid: number, running: (pid: number) => boolean = () => true): ProcessIdentity {
  return {
    self: { node, bootId: 'boot-1', pid, startTime: '4242' },
    running: (h) => h.bootId === 'boot-1' && running(h.pid),
  };
}

function setup(
  doc: Record<string, unknown> = {},
  spec: FakeClusterSpec = unbalanced(),
  options: { dir?: string; cluster?: FakeCluster; lines?: string[]; identity?: ProcessIdentity } = {},
): Setup {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'poise-daemon-'));
  const statePath = join(dir, 'state.json');
  const config = parseConfig(
    {
      env: 'pve',
      pve: { urls: ['https://node1:8006'], 'token-env': 'POISE_TEST_TOKEN' },
      state: { file: statePath },
      metrics: { enabled: false },
      lock: { enabled: false },
      ...doc,
      // the reference pipeline unless a test asks for more: its arithmetic is the one worked by hand here
      policy: { 'ha-auto-rebalance-preset': 'reference', ...(doc.policy as Record<string, unknown> | undefined) },
    },
    join(dir, 'poise-manager.yaml'),
  );
  const cluster = options.cluster ?? FakeCluster.create(spec);
  const host = fakeHost(cluster);
  const lines = options.lines ?? [];
  const log = new Logger(
    { format: 'json', level: 'debug' },
    (l) => lines.push(l),
    () => cluster.time,
  );
  const daemon = new Daemon({
    config,
    host,
    log,
    version: 'test',
    lockFs: localLockFs,
    identity: options.identity ?? identity('node1', 1001),
  });
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const never = new AbortController().signal;
  return {
    dir,
    statePath,
    cluster,
    host,
    lines,
    records,
    rounds: () => records().filter((r) => r.event === 'round'),
    daemon,
    run: async (n) => {
      for (let i = 0; i < n; i++) {
        await daemon.runRound();
        await host.clock.sleep(config.intervalSeconds, never);
      }
    },
  };
}

const imbalanceOf = async (cluster: FakeCluster) => {
  const { buildUsageModel } = await import('../balancing/model');
  return buildUsageModel(await cluster.readSnapshot()).usage.nodeImbalance();
};

describe('observe mode', () => {
  it('explains every round and moves nothing', async () => {
    const s = setup({ mode: 'observe' });
    await s.daemon.start();
    await s.run(12);
    expect(s.cluster.s.requests).toEqual([]);
    const rounds = s.rounds();
    expect(rounds).toHaveLength(12); // exactly one line per round
    expect(rounds.slice(0, 3).map((r) => r.msg)).toEqual([
      'hold round 1/3: imbalance 100.0% > 30.0%',
      'hold round 2/3: imbalance 100.0% > 30.0%',
      // one VM to node2: loads (0.625, 0.125, 0), mean 0.25, deviations (0.375, −0.125, −0.25),
      // variance (0.140625 + 0.015625 + 0.0625)/3 = 0.0729, sd 0.2700, CV 1.0801, / sqrt 2 = 76.4 %
      'observe: would migrate vm:101 from node1 to node2 (imbalance 100.0% → 76.4%)',
    ]);
    expect(rounds.filter((r) => r.outcome === 'would-move')).toHaveLength(4); // rounds 3, 6, 9, 12
    expect(s.daemon.status()).toMatchObject({
      mode: 'observe',
      notice: 'observe mode: nothing is moved',
      motionInFlight: null,
    });
    expect(await imbalanceOf(s.cluster)).toBeCloseTo(1, 12);
  });

  it('states mode, env and policy at start, where each policy key came from; a bad policy value is refused', async () => {
    // a bad value never starts the daemon: refused at load, naming the file, the key and the value
    expect(() => setup({ policy: { 'ha-auto-rebalance-cooldown': 'soon' } })).toThrow(
      /poise-manager\.yaml: policy\.ha-auto-rebalance-cooldown: invalid value 'soon' \(seconds, 0 to 86400\)$/,
    );
    const s = setup({
      mode: 'observe',
      policy: { 'ha-auto-rebalance-backoff': 300, 'ha-auto-rebalance-cooldown': 0 },
    });
    await s.daemon.start();
    const start = s
      .records()
      .filter((r) => r.event === 'start')
      .map((r) => r.msg as string);
    expect(start[0]).toMatch(
      /^poise-manager test starting: env pve \(fake cluster\), mode observe, interval 10 s, pid \d+$/,
    );
    expect(start).toContain('observe mode: each round says what it would do; nothing is moved (mode: act to move)');
    expect(start).toContain(
      'policy: motion-in-flight → backoff-series → threshold-hold → candidates → backoff → score-bruteforce → select-best → relative-margin: ' +
        'threshold 30%, hold 3 rounds, margin 10%, method bruteforce; preset reference, backoff 300 s',
    );
    expect(start).toContain(
      `policy keys: from poise-manager's defaults: hold-duration 3, margin 10, method bruteforce, threshold 30; from '${join(s.dir, 'poise-manager.yaml')}': backoff 300, cooldown 0, preset reference`,
    );
    expect(s.records().filter((r) => r.level === 'warn' && r.event === 'start')).toEqual([]);
  });
});

describe('TLS choices at start', () => {
  const pin = Array(32).fill('AB').join(':');
  it.each([
    [{}, [['info', 'TLS: verified against the system CAs, host name checked']]],
    [
      { tls: { 'ca-file': CA_FILE, fingerprint: 'ab'.repeat(32) } },
      [['info', `TLS: verified against CA file '${CA_FILE}', fingerprint ${pin} pinned`]],
    ],
    [
      { tls: { fingerprint: 'ab'.repeat(32) } },
      [['info', `TLS: only the certificate with fingerprint ${pin} is accepted (pinned; the chain is not checked)`]],
    ],
    [
      { tls: { 'insecure-skip-verify': true } },
      [
        [
          'error',
          'INSECURE: TLS certificate verification is off (pve.tls.insecure-skip-verify) and no fingerprint is pinned',
        ],
        [
          'error',
          'INSECURE: tls verification is disabled: any server can impersonate the cluster and receive the API token',
        ],
      ],
    ],
    [
      { tls: { 'insecure-skip-verify': true, fingerprint: 'ab'.repeat(32) } },
      [
        [
          'info',
          `TLS: only the certificate with fingerprint ${pin} is accepted (pinned; pve.tls.insecure-skip-verify only drops the chain check; the chain is not checked)`,
        ],
      ],
    ],
    [
      { urls: ['http://node1:8006'], tls: { 'allow-plain-http': true } },
      [['error', 'INSECURE: plain http is allowed: the API token and all replies travel unencrypted']],
    ],
  ])('%j is stated as the client verifies it', async (pve, expected) => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-daemon-'));
    const config = parseConfig(
      {
        env: 'pve',
        pve: { urls: ['https://node1:8006'], 'token-env': 'T', ...pve },
        state: { file: join(dir, 'state.json') },
        metrics: { enabled: false },
        lock: { enabled: false },
      },
      join(dir, 'poise-manager.yaml'),
    );
    const host = createPveHost(config, { env: { T: 'poise@pve!balancer=5ec2e7aa-0000-4bad-8c0d-5ec2e75ec2e7' } });
    const lines: string[] = [];
    const daemon = new Daemon({
      config,
      host,
      log: new Logger(
        { format: 'json', level: 'info' },
        (l) => lines.push(l),
        () => T0,
      ),
      version: 'test',
    });
    await daemon.start();
    const start = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.event === 'start');
    for (const [level, msg] of expected) expect(start).toContainEqual(expect.objectContaining({ level, msg }));
    expect(start.filter((r) => String(r.msg).includes('TLS') || String(r.msg).startsWith('INSECURE'))).toHaveLength(
      expected.length,
    );
    await host.port.close?.();
  });
});

describe('act mode', () => {
  it('balances the fake cluster, one motion at a time, and then stays below the threshold', async () => {
    const s = setup({ mode: 'act' });
    await s.daemon.start();
    await s.run(60);
    const requests = s.cluster.s.requests;
    expect(requests.length).toBeGreaterThanOrEqual(3);
    expect(new Set(requests.map((r) => r.sid)).size).toBe(requests.length); // every VM moved at most once
    const outcomes = s.daemon.currentState().outcomes;
    expect(outcomes.map((o) => o.result)).toEqual(requests.map(() => 'succeeded'));
    expect(await imbalanceOf(s.cluster)).toBeLessThanOrEqual(0.3);
    const last = s.rounds().at(-1)!;
    expect(last.reason).toBe('below-threshold');
    expect(last.msg).toMatch(/^below threshold: imbalance \d+\.\d% ≤ 30\.0%$/);
    // never a second request while one is in flight: each request comes after the previous outcome
    for (let i = 1; i < requests.length; i++) expect(requests[i]!.time).toBeGreaterThan(outcomes[i - 1]!.at - 1);
  });

  it('nodes named like Object.prototype members are ordinary nodes', async () => {
    const spec = unbalanced({ nodes: [{ name: '__proto__' }, { name: 'constructor' }, { name: 'toString' }] });
    spec.guests.forEach((g) => (g.node = '__proto__'));
    const s = setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } }, spec);
    await s.daemon.start();
    await s.run(30);
    expect(await imbalanceOf(s.cluster)).toBeLessThanOrEqual(0.3);
    expect(new Set(s.cluster.s.requests.map((r) => r.target))).toEqual(new Set(['constructor', 'toString']));
  });

  it('says what it does and follows the motion to its outcome', async () => {
    const s = setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } });
    await s.daemon.start();
    await s.run(3);
    const msgs = s
      .records()
      .filter((r) => r.event === 'round' || r.event === 'motion')
      .map((r) => r.msg);
    expect(msgs).toEqual([
      'migrate vm:101 from node1 to node2 (imbalance 100.0% → 76.4%)',
      'motion in flight: migrate vm:101 from node1 to node2 (moving, 10 s)', // picked up after one cluster round
      'migrate vm:101 from node1 to node2 succeeded after 20 s',
      // loads (0.5, 0.125, 0.125): mean 0.25, variance (0.0625 + 2·0.015625)/3 = 0.03125, sd 0.1768, CV 0.7071, / sqrt 2 = 50 %
      'migrate vm:102 from node1 to node3 (imbalance 76.4% → 50.0%)',
    ]);
  });

  it('reports a failed motion, records its outcome, and moves on', async () => {
    const s = setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } },
      unbalanced({ scripts: { 'vm:101': { outcome: 'fail', rounds: 2 } } }),
    );
    await s.daemon.start();
    await s.run(5);
    const motion = s.records().filter((r) => r.event === 'motion');
    expect(motion[0]).toMatchObject({
      level: 'warn',
      msg: "migrate vm:101 from node1 to node2 failed after 30 s: migration failed, 'vm:101' is back on 'node1'",
      sid: 'vm:101',
      result: 'failed',
    });
    expect(s.daemon.currentState().outcomes[0]).toMatchObject({ sid: 'vm:101', target: 'node2', result: 'failed' });
    expect(s.cluster.guest('vm:101').node).toBe('node1');
    expect(await s.daemon.metrics.registry.getSingleMetricAsString('poise_motions_failed_total')).toMatch(
      /poise_motions_failed_total\{via="ha"\} 1/,
    );
  });

  it.each([
    ['dropped by the CRM', { outcome: 'drop' as const }, 'the HA manager did not pick the command up within 120 s'],
    ['ending in the HA error state', { outcome: 'error' as const }, "'vm:101' is in the HA error state on 'node1'"],
  ])('a motion %s is reported failed', async (_name, script, reason) => {
    const s = setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } },
      unbalanced({ scripts: { 'vm:101': script } }),
    );
    await s.daemon.start();
    await s.run(16);
    const failed = s.records().find((r) => r.event === 'motion')!;
    expect(failed.msg).toContain(reason);
    // one request until its outcome was known (the reference policy may pick it again afterwards:
    // the backoff stage of the policy variants is what stops that)
    expect(s.cluster.s.requests.filter((r) => r.time < Date.parse(failed.time as string) / 1000)).toHaveLength(1);
  });

  it('a request that timed out after sending is followed, never repeated', async () => {
    const s = setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } },
      unbalanced({ scripts: { 'vm:101': { reply: 'lost' } } }),
    );
    await s.daemon.start();
    await s.run(4);
    const rounds = s.rounds();
    expect(rounds[0]).toMatchObject({ outcome: 'move', reason: 'request-uncertain', level: 'warn' });
    expect(rounds[0]!.msg).toMatch(
      /the request failed \(timeout, POST \/cluster\/ha\/resources\/\{sid\}\/migrate: scripted timeout after sending\); it may have been applied, so it is followed, not repeated$/,
    );
    expect(s.cluster.s.requests.filter((r) => r.sid === 'vm:101')).toHaveLength(1);
    expect(s.cluster.guest('vm:101').node).toBe('node2');
    expect(s.daemon.currentState().outcomes[0]).toMatchObject({ sid: 'vm:101', result: 'succeeded' });
  });

  it('a refused request is reported and recorded as failed', async () => {
    const s = setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } },
      unbalanced({ scripts: { 'vm:101': { reply: 'refuse' } } }),
    );
    await s.daemon.start();
    await s.run(1);
    expect(s.rounds()[0]).toMatchObject({
      outcome: 'refused',
      msg: 'the cluster refused to migrate vm:101 from node1 to node2 (imbalance 100.0% → 76.4%): scripted refusal (403)',
    });
    expect(s.daemon.currentState()).toMatchObject({
      motion: null,
      outcomes: [{ sid: 'vm:101', result: 'failed', reason: 'scripted refusal (403)' }],
    });
  });

  it('stops issuing at max-motions-per-hour and says until when', async () => {
    const s = setup({
      mode: 'act',
      policy: { 'ha-auto-rebalance-hold-duration': 1 },
      limits: { 'max-motions-per-hour': 2 },
    });
    await s.daemon.start();
    await s.run(8);
    expect(s.cluster.s.requests).toHaveLength(2);
    const limited = s.rounds().filter((r) => r.reason === 'motion-limit');
    expect(limited.length).toBeGreaterThan(0);
    // first motion at 00:00:00, so the window frees up at 01:00:00
    expect(limited[0]!.msg).toMatch(
      /^limit reached: 2 motions in the last hour \(max 2\) until 2026-01-01T01:00:00\.000Z; not issuing migrate vm:103 from node1 to /,
    );
  });

  it('skips a round whose cluster read fails, counts the error, and goes on', async () => {
    const s = setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } });
    s.cluster.failNextReads('timeout', 'invalid-reply');
    await s.daemon.start();
    await s.run(3);
    const rounds = s.rounds();
    expect(rounds[0]).toMatchObject({
      outcome: 'error',
      reason: 'api-error',
      level: 'warn',
      msg: 'reading the cluster failed (timeout, GET /cluster/resources): scripted timeout failure; nothing done this round',
    });
    expect(rounds[1]).toMatchObject({ outcome: 'error', kind: 'invalid-reply' });
    expect(rounds[2]).toMatchObject({ outcome: 'move' });
    const metric = await s.daemon.metrics.registry.getSingleMetricAsString('poise_api_errors_total');
    expect(metric).toContain('poise_api_errors_total{endpoint="GET /cluster/resources",kind="timeout"} 1');
    expect(metric).toContain('poise_api_errors_total{endpoint="GET /cluster/resources",kind="invalid-reply"} 1');
  });

  it('below the margin it says how much better the best move would be', async () => {
    // node1 load (2/16 + 8/64)/2 = 0.125 from one VM; node2 base 0.0625: moving the VM only swaps the imbalance
    const spec: FakeClusterSpec = {
      nodes: [{ name: 'node1' }, { name: 'node2', baseCpu: 1, baseMem: 4 * GIB }],
      guests: [{ sid: 'vm:101', node: 'node1', cpu: 2, mem: 8 * GIB }],
    };
    const s = setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 0, 'ha-auto-rebalance-threshold': 1 } },
      spec,
    );
    await s.daemon.start();
    await s.run(1);
    expect(s.rounds()[0]!.msg).toMatch(
      /^below margin: the best move \(vm:101 from node1 to node2\) changes the imbalance from 33\.3% to \d+\.\d%, relative improvement -?\d+\.\d% below margin 10\.0%$/,
    );
    expect(s.cluster.s.requests).toEqual([]);
  });

  it('a policy reason speaks the units of the policy keys (percentage points for the dead band)', async () => {
    // six VMs on node1 of three nodes: the best move takes the imbalance from 100 % to 76.4 %,
    // 23.6 pp, less than a 50 pp dead band
    const s = setup({
      mode: 'act',
      policy: { 'ha-auto-rebalance-hold-duration': 0, 'ha-auto-rebalance-min-improvement': 50 },
    });
    await s.daemon.start();
    await s.run(1);
    expect(s.rounds()[0]!.msg).toBe('improvement 23.6 pp below min-improvement 50.0 pp');
  });

  it('with smoothing, the round line shows the smoothed imbalance the threshold judged, not the measured one', async () => {
    // node2's own load halves after round 1 (load (8/16 + 32/64)/2 = 0.5 → 0.25, node1 stays at
    // 0.125): the measured imbalance falls, the smoothed one (node2's residual averaged over both
    // rounds, load ≈ 0.375) lies between the two measured values
    const spec: FakeClusterSpec = {
      nodes: [{ name: 'node1' }, { name: 'node2', baseCpu: 8, baseMem: 32 * GIB }],
      guests: [{ sid: 'vm:101', node: 'node1', cpu: 2, mem: 8 * GIB }],
    };
    const s = setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-smoothing': 300, 'ha-auto-rebalance-threshold': 90 } },
      spec,
    );
    await s.daemon.start();
    await s.run(1);
    s.cluster.s.nodes[1]!.baseCpu = 4;
    s.cluster.s.nodes[1]!.baseMem = 16 * GIB;
    await s.run(1);
    const [first, second] = s.rounds() as Array<{ msg: string; imbalance: number }>;
    const shown = (msg: string) => Number(/^below threshold: smoothed imbalance (\d+\.\d)% ≤ 90\.0%$/.exec(msg)?.[1]);
    // round 1: one sample, the mean is the sample itself
    expect(shown(first!.msg)).toBe(Number((first!.imbalance * 100).toFixed(1)));
    const smoothed = shown(second!.msg);
    expect(smoothed).toBeGreaterThan(Math.min(first!.imbalance, second!.imbalance) * 100);
    expect(smoothed).toBeLessThan(Math.max(first!.imbalance, second!.imbalance) * 100);
  });
});

describe("the cluster's own ha-auto-rebalance", () => {
  it('is not fought: HA resources are left alone, said at the first read and in every round and the status', async () => {
    const s = setup({ mode: 'act' }, unbalanced({ autoRebalance: true }));
    await s.daemon.start();
    await s.run(5);
    expect(s.cluster.s.requests).toEqual([]);
    expect(s.records().filter((r) => r.event === 'cluster')).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: "the cluster's own ha-auto-rebalance is on (datacenter.cfg crs): poise refuses to move HA resources while it is on",
      }),
    ]);
    expect(
      s
        .rounds()
        .every(
          (r) =>
            r.reason === 'cluster-auto-rebalance' &&
            r.msg === "the cluster's own ha-auto-rebalance is on: poise leaves HA resources to it (imbalance 100.0%)",
        ),
    ).toBe(true);
    expect(s.daemon.status()).toMatchObject({
      clusterAutoRebalance: true,
      notice: "the cluster's own ha-auto-rebalance is on: poise refuses to move HA resources",
    });
    expect(await s.daemon.metrics.registry.getSingleMetricAsString('poise_cluster_auto_rebalance')).toMatch(
      /poise_cluster_auto_rebalance 1$/,
    );
  });

  it('non-HA guests are still balanced when configured, through the guest migrate endpoint', async () => {
    const spec = unbalanced({ autoRebalance: true });
    spec.guests.push({ sid: 'vm:201', node: 'node1', ha: false, cpu: 4, mem: 16 * GIB });
    const s = setup(
      { mode: 'act', guests: { 'non-ha': true }, policy: { 'ha-auto-rebalance-hold-duration': 1 } },
      spec,
    );
    await s.daemon.start();
    await s.run(3);
    expect(s.cluster.s.requests).toEqual([expect.objectContaining({ sid: 'vm:201', via: 'guest' })]);
    // a guest migration is a task that starts at once (no HA manager round to wait for)
    expect(s.records().find((r) => r.event === 'motion')).toMatchObject({
      msg: 'migrate vm:201 from node1 to node2 succeeded after 10 s',
    });
  });
});

describe('non-HA guests', () => {
  it('a precondition check refusal is reported and nothing is requested', async () => {
    const spec: FakeClusterSpec = {
      nodes: [{ name: 'node1' }, { name: 'node2' }],
      guests: [
        { sid: 'vm:201', node: 'node1', ha: false, cpu: 4, mem: 16 * GIB },
        { sid: 'vm:202', node: 'node1', ha: false, cpu: 4, mem: 16 * GIB },
      ],
      guestCheckRefusals: { 'vm:201': "local disk 'local-lvm:vm-201-disk-0'" },
    };
    const s = setup(
      { mode: 'act', guests: { 'non-ha': true }, policy: { 'ha-auto-rebalance-hold-duration': 0 } },
      spec,
    );
    await s.daemon.start();
    await s.run(1);
    expect(s.rounds()[0]).toMatchObject({
      outcome: 'refused',
      reason: 'precondition',
      msg: expect.stringMatching(
        /^precondition check refused to migrate vm:201 from node1 to node2 \(imbalance .*\): local disk 'local-lvm:vm-201-disk-0'$/,
      ),
    });
    expect(s.cluster.s.requests).toEqual([]);
  });

  it('are not balanced unless configured', async () => {
    const spec: FakeClusterSpec = {
      nodes: [{ name: 'node1' }, { name: 'node2' }],
      guests: [{ sid: 'vm:201', node: 'node1', ha: false, cpu: 4, mem: 16 * GIB }],
    };
    const s = setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 0 } }, spec);
    await s.daemon.start();
    await s.run(1);
    expect(s.rounds()[0]!.msg).toMatch(/^no candidates: no started HA resource can move/);
  });
});

describe('policy stages that need more than the reference', () => {
  it('check-migratable: a guest whose configuration blocks migration is never tried, and said once', async () => {
    const spec = unbalanced();
    for (const g of spec.guests) g.config = { scsi0: `ceph:vm-${g.sid.slice(3)}-disk-0` };
    spec.guests[0]!.config = { ide2: 'local:iso/d.iso,media=cdrom' };
    const s = setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1, 'ha-auto-rebalance-check-migratable': 1 } },
      spec,
    );
    await s.daemon.start();
    await s.run(8);
    expect(s.cluster.s.requests.map((r) => r.sid)).not.toContain('vm:101');
    expect(s.cluster.s.requests.length).toBeGreaterThan(0);
    expect(
      s
        .records()
        .filter((r) => r.event === 'policy')
        .map((r) => r.msg),
    ).toEqual(["migratable: vm:101 cannot be migrated: local cd-rom image 'local:iso/d.iso' (ide2)"]);
  });

  it('a stop of a variant stage explains itself from the decision, counted by its code', async () => {
    const spec = unbalanced();
    for (const n of spec.nodes) n.pressureCpu = 2;
    const s = setup(
      { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1, 'ha-auto-rebalance-min-pressure-cpu': 10 } },
      spec,
    );
    await s.daemon.start();
    await s.run(2);
    expect(s.rounds()[0]).toMatchObject({
      outcome: 'skip',
      reason: 'no-pressure',
      stage: 'pressure',
      code: 'no-pressure',
      key: 'pressure:no-pressure',
      msg: 'pressure gate: no node under pressure (highest cpu 2.0% < 10.0%)',
    });
    expect(await s.daemon.metrics.registry.getSingleMetricAsString('poise_round_skips_total')).toContain(
      'poise_round_skips_total{reason="no-pressure"} 2',
    );
    expect(s.cluster.s.requests).toEqual([]);
  });

  it('the contention objective: its hold and its reasons in its own words, not the imbalance’s', async () => {
    const spec = unbalanced();
    for (const n of spec.nodes) n.pressureCpu = n.name === 'node1' ? 40 : 0.5;
    const s = setup({ mode: 'act', policy: { 'ha-auto-rebalance-objective': 'contention' } }, spec);
    await s.daemon.start();
    await s.run(2);
    expect(s.rounds().map((r) => [r.stage, r.code, r.msg])).toEqual([
      ['contention-hold', 'holding', 'guest contention for 1 of 3 rounds'],
      ['contention-hold', 'holding', 'guest contention for 2 of 3 rounds'],
    ]);
    const idle = unbalanced();
    for (const n of idle.nodes) n.pressureCpu = 0.5;
    const quiet = setup({ mode: 'act', policy: { 'ha-auto-rebalance-objective': 'contention' } }, idle);
    await quiet.daemon.start();
    await quiet.run(4);
    expect(quiet.rounds()[0]!.msg).toBe('contention: no guest waits (highest cpu 0.5% < 5.0%, mem 0.0% < 2.0%)');
    expect(quiet.cluster.s.requests).toEqual([]);
  });
});

describe('restart', () => {
  it('a daemon killed in the middle of a motion follows it after the restart and issues no duplicate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-restart-'));
    const doc = { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } };
    const first = setup(doc, unbalanced({ scripts: { 'vm:101': { rounds: 3 } } }), { dir });
    await first.daemon.start();
    await first.run(2); // request, then seen moving; killed here: no shutdown, the state file is what it wrote
    expect(first.cluster.s.requests).toHaveLength(1);
    expect(first.cluster.guest('vm:101').haState).toBe('migrate');

    const second = setup(doc, undefined, { dir, cluster: first.cluster });
    await second.daemon.start();
    expect(second.records().find((r) => r.event === 'state')!.msg).toMatch(
      /^state loaded from '.*state\.json'; following the motion in flight from before: migrate vm:101 from node1 to node2 \(issued at 2026-01-01T00:00:00\.000Z, moving\)$/,
    );
    await second.run(4);
    expect(second.cluster.s.requests.filter((r) => r.sid === 'vm:101')).toHaveLength(1);
    expect(second.records().find((r) => r.event === 'motion')!.msg).toBe(
      'migrate vm:101 from node1 to node2 succeeded after 40 s',
    );
    expect(second.rounds()[0]!.msg).toMatch(/^motion in flight: migrate vm:101 from node1 to node2 \(moving, 20 s\)$/);
  });

  it('a daemon killed after writing the motion but before the request left follows it, and it fails as never picked up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-restart-'));
    const doc = { mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } };
    const first = setup(doc, unbalanced(), { dir });
    // the request never leaves: the process dies while sending
    first.cluster.requestMotion = () => new Promise<MotionReply>(() => {});
    await first.daemon.start();
    void first.daemon.runRound();
    await new Promise((r) => setTimeout(r, 20));
    const written = JSON.parse(readFileSync(first.statePath, 'utf8'));
    expect(written.motion).toMatchObject({ sid: 'vm:101', phase: 'requesting' });

    const cluster = FakeCluster.fromJSON(structuredClone(first.cluster.toJSON()));
    const second = setup(doc, undefined, { dir, cluster });
    await second.daemon.start();
    await second.run(15);
    const failed = second.records().find((r) => r.event === 'motion')!;
    expect(failed.msg).toMatch(
      /^migrate vm:101 from node1 to node2 failed after 1[23]\d s: the HA manager did not pick the command up within 120 s/,
    );
    const failedAt = Date.parse(failed.time as string) / 1000;
    expect(cluster.s.requests.filter((r) => r.time < failedAt)).toEqual([]); // never re-issued while followed
    expect(cluster.s.requests.length).toBeGreaterThan(0); // later rounds decide afresh
  });

  it('a motion whose write-ahead fails is not requested and not remembered', async () => {
    const s = setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } });
    // the state the round will compute for the pipeline is on disk already, so the first write
    // the round attempts is the motion's write-ahead
    const pipeline = {
      'motion-in-flight': null,
      'threshold-hold': { sustainedRounds: 0 },
      candidates: null,
      'score-bruteforce': null,
      'select-best': null,
      'relative-margin': null,
    };
    writeFileSync(
      s.statePath,
      JSON.stringify({
        format: 'poise-manager-state',
        version: 1,
        savedAt: 'x',
        pipeline,
        motion: null,
        motionsIssuedAt: [],
        outcomes: [],
      }),
    );
    await s.daemon.start();
    const { mkdirSync, rmdirSync } = await import('node:fs');
    const tmp = `${s.statePath}.tmp-${process.pid}`;
    mkdirSync(tmp); // the temporary file cannot be created (root ignores permissions, not this)
    await s.run(1);
    expect(s.rounds()[0]).toMatchObject({
      outcome: 'error',
      level: 'error',
      msg: expect.stringMatching(/^round failed: cannot write the state file '.*state\.json': EISDIR/),
    });
    expect(s.cluster.s.requests).toEqual([]);
    expect(s.daemon.currentState()).toMatchObject({ motion: null, motionsIssuedAt: [] });
    rmdirSync(tmp);
    await s.run(1);
    expect(s.rounds()[1]).toMatchObject({ outcome: 'move' });
    expect(JSON.parse(readFileSync(s.statePath, 'utf8')).motion).toMatchObject({ sid: 'vm:101', phase: 'queued' });
  });

  it('a corrupt state file is reported and set aside, and the daemon runs on', async () => {
    const s = setup({ mode: 'act' });
    writeFileSync(s.statePath, '{"format":"poise-manager-state","vers');
    await s.daemon.start();
    const line = s.records().find((r) => r.event === 'state')!;
    expect(line.level).toBe('error');
    expect(line.msg).toMatch(
      /^the state file '.*state\.json' is corrupt \(not JSON .*\): moved aside to '.*state\.json\.corrupt-20260101T000000Z'; starting afresh/,
    );
    expect(readdirSync(s.dir).filter((f) => f.startsWith('state.json.corrupt-'))).toHaveLength(1);
    await s.run(1);
    expect(existsSync(s.statePath)).toBe(true); // a fresh state was written
  });

  it('an outcome reaches the policy exactly once, also when it was learned before a restart', async () => {
    const s = setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1, 'ha-auto-rebalance-backoff': 60 } });
    // the previous run learned that vm:101 → node2 failed and died before its pipeline ran
    const unreported = [
      { resources: ['vm:101'], source: 'node1', target: 'node2', ok: false, detail: 'migration aborted' },
    ];
    writeFileSync(
      s.statePath,
      JSON.stringify({
        format: 'poise-manager-state',
        version: 1,
        savedAt: 'x',
        pipeline: {},
        motion: null,
        motionsIssuedAt: [],
        outcomes: [],
        unreported,
      }),
    );
    await s.daemon.start();
    await s.run(4);
    const notices = s.records().filter((r) => r.event === 'policy');
    expect(notices.map((r) => r.msg)).toEqual([
      'backoff: vm:101 to node2 did not succeed (migration aborted) (attempt 1): not retried in this series, backed off for 60s until 2026-01-01T00:01:00Z',
    ]);
    const saved = JSON.parse(readFileSync(s.statePath, 'utf8'));
    expect(saved.unreported).toEqual([]);
    expect(saved.pipeline.backoff.pairs).toEqual([
      expect.objectContaining({ resources: ['vm:101'], target: 'node2', failures: 1 }),
    ]);
    // the series goes on at once with the next-best pair
    expect(s.cluster.s.requests.map((r) => `${r.sid}>${r.target}`)[0]).toBe('vm:101>node3');
  });

  it('a corrupt stage state is reported naming the stage and field, set aside, and the policy starts fresh', async () => {
    const s = setup({ mode: 'observe', policy: { 'ha-auto-rebalance-backoff': 60 } });
    const pipeline = {
      'threshold-hold': { sustainedRounds: 2 },
      backoff: { lastOutcomeAt: 'yesterday', pairs: [], series: [] },
    };
    writeFileSync(
      s.statePath,
      JSON.stringify({
        format: 'poise-manager-state',
        version: 1,
        savedAt: 'x',
        pipeline,
        motion: null,
        motionsIssuedAt: [],
        outcomes: [],
      }),
    );
    await s.daemon.start();
    const line = s.records().find((r) => r.event === 'state' && r.level === 'error')!;
    expect(line.msg).toMatch(
      /^the policy state is corrupt \(stage 'backoff': state field 'lastOutcomeAt' must be a finite number or null, got "yesterday"\): set aside in '.*state\.json\.pipeline-corrupt-20260101T000000Z'; the policy starts fresh/,
    );
    expect(line.stages).toEqual(['backoff']);
    const aside = readdirSync(s.dir).find((f) => f.startsWith('state.json.pipeline-corrupt-'))!;
    expect(JSON.parse(readFileSync(join(s.dir, aside), 'utf8'))).toEqual(pipeline);
    expect(JSON.parse(readFileSync(s.statePath, 'utf8')).pipeline).toEqual({});
    await s.run(1);
    expect(s.rounds()[0]!.msg).toBe('hold round 1/3: imbalance 100.0% > 30.0%'); // the hold count started again
  });

  it('a state file of an unknown version stops the start with a clear error', async () => {
    const s = setup({ mode: 'act' });
    writeFileSync(s.statePath, JSON.stringify({ format: 'poise-manager-state', version: 7 }));
    await expect(s.daemon.start()).rejects.toThrow(ManagerError);
    await expect(setup({ mode: 'act' }, undefined, { dir: s.dir }).daemon.start()).rejects.toThrow(
      /has version 7; this poise-manager reads version 1 only/,
    );
  });
});

describe('active/standby', () => {
  it('one instance acts; the standby takes over when the lock expires and follows the motion in flight', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-standby-'));
    const doc = {
      mode: 'act',
      policy: { 'ha-auto-rebalance-hold-duration': 1 },
      lock: { enabled: true, dir: join(dir, 'lock') },
    };
    const cluster = FakeCluster.create(unbalanced({ scripts: { 'vm:101': { rounds: 30 } } })); // a long migration
    const a = setup(doc, undefined, { dir, cluster, identity: identity('node1', 1001) });
    const b = setup(doc, undefined, { dir, cluster, identity: identity('node2', 2002) });
    await a.daemon.start();
    await b.daemon.start();
    const never = new AbortController().signal;
    for (let i = 0; i < 3; i++) {
      await a.daemon.runRound();
      await b.daemon.runRound();
      cluster.step();
    }
    expect(a.records().find((r) => r.event === 'lock' && String(r.msg).startsWith('acquired'))).toBeDefined();
    expect(
      b
        .rounds()
        .every(
          (r) =>
            r.outcome === 'standby' &&
            r.msg ===
              `standby: the lock '${join(dir, 'lock', 'poise-manager')}' is held by another instance (pid 1001 on node1)`,
        ),
    ).toBe(true);
    expect(cluster.s.requests).toHaveLength(1); // a requested vm:101; still moving

    // a dies; b keeps trying every round and takes over once the lock is more than 120 s old
    for (let i = 0; i < 14 && b.rounds().at(-1)!.outcome === 'standby'; i++) {
      await b.daemon.runRound();
      await b.host.clock.sleep(10, never);
    }
    expect(b.rounds().at(-1)!.outcome).not.toBe('standby');
    const taken = b
      .records()
      .filter((r) => r.event === 'lock' || r.event === 'state')
      .map((r) => r.msg as string);
    expect(taken.some((m) => m.startsWith('acquired the lock'))).toBe(true);
    expect(
      taken.some((m) => m.includes('following the motion in flight from before: migrate vm:101 from node1 to node2')),
    ).toBe(true);
    expect(b.rounds().at(-1)!.msg).toMatch(/^motion in flight: migrate vm:101 from node1 to node2/);
    expect(cluster.s.requests).toHaveLength(1); // no duplicate

    // a comes back: its lock is long expired, b holds a fresh one: a steps down
    await a.daemon.runRound();
    expect(
      a
        .records()
        .filter((r) => r.event === 'lock')
        .at(-1),
    ).toMatchObject({
      level: 'warn',
      msg: expect.stringMatching(
        /^lost the lock '.*' \(held by another instance \(pid 2002 on node2\)\): stepping down to standby$/,
      ),
    });
    expect(a.rounds().at(-1)!.outcome).toBe('standby');
  });
});

describe('a cluster that is not settled', () => {
  it('the transitional states of its own motion do not stop poise; the same states of another service do', async () => {
    const s = setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 }, limits: { 'settle-time': 30 } });
    await s.daemon.start();
    await s.run(3); // vm:101 → node2 requested at 0 s, moving at 10 s, succeeded at the read of 20 s
    expect(
      s
        .records()
        .filter((r) => r.event === 'motion')
        .map((r) => r.result),
    ).toEqual(['succeeded']);
    // HA still starts it on its target (a relocation ends in request_start): poise's own doing
    s.cluster.guest('vm:101').haState = 'request_start';
    await s.daemon.runRound();
    expect(s.rounds().at(-1)!.reason).not.toMatch(/^(not-settled|settling)$/);
    s.cluster.guest('vm:101').haState = 'started';
    // another service being started by someone else: not settled, then settling for 30 s
    s.cluster.guest('vm:104').haState = 'request_start';
    await s.daemon.runRound();
    expect(s.rounds().at(-1)).toMatchObject({
      reason: 'not-settled',
      msg: "the cluster is not settled: vm:104 in HA state 'request_start'; no motion is requested until 30 s after the last change",
    });
    s.cluster.guest('vm:104').haState = 'started';
    s.cluster.step();
    await s.daemon.runRound();
    expect(s.rounds().at(-1)).toMatchObject({ reason: 'settling' });
    expect(s.daemon.status().cluster).toMatchObject({
      settled: false,
      reasons: [],
      resumeAt: '2026-01-01T00:01:00.000Z',
    }); // the change seen at 30 s;
  });
});

describe('a restart on the same node after a crash', () => {
  it('takes over its own lock at once when the holder process is gone; another node keeps waiting for the expiry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-crash-'));
    const doc = {
      mode: 'act',
      policy: { 'ha-auto-rebalance-hold-duration': 1 },
      lock: { enabled: true, dir: join(dir, 'lock') },
    };
    const cluster = FakeCluster.create(unbalanced({ scripts: { 'vm:101': { rounds: 30 } } }));
    const first = setup(doc, undefined, { dir, cluster, identity: identity('node1', 1001) });
    await first.daemon.start();
    await first.daemon.runRound(); // active, vm:101 requested; then killed (no release)
    expect(JSON.parse(readFileSync(join(dir, 'lock', 'poise-manager.holder'), 'utf8'))).toEqual({
      node: 'node1',
      bootId: 'boot-1',
      pid: 1001,
      startTime: '4242',
      since: T0,
    });
    cluster.step();
    // another node: the lock is fresh, it stands by
    const other = setup(doc, undefined, { dir, cluster, identity: identity('node2', 2002) });
    await other.daemon.start();
    await other.daemon.runRound();
    expect(other.rounds().at(-1)).toMatchObject({
      outcome: 'standby',
      msg: `standby: the lock '${join(dir, 'lock', 'poise-manager')}' is held by another instance (pid 1001 on node1)`,
    });
    // the restart on node1 (pid 1001 is gone): active in its first round, the motion followed, not re-sent
    const restarted = setup(doc, undefined, { dir, cluster, identity: identity('node1', 1500, (pid) => pid !== 1001) });
    await restarted.daemon.start();
    await restarted.daemon.runRound();
    expect(restarted.records().find((r) => r.event === 'lock' && String(r.msg).startsWith('took over'))?.msg).toBe(
      `took over the lock '${join(dir, 'lock', 'poise-manager')}' at once: its holder on this node (pid 1001 on node1, since 2026-01-01T00:00:00.000Z) is gone; this instance is active`,
    );
    expect(restarted.rounds().at(-1)!.msg).toMatch(/^motion in flight: migrate vm:101 from node1 to node2/);
    expect(cluster.s.requests).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, 'lock', 'poise-manager.holder'), 'utf8'))).toMatchObject({
      node: 'node1',
      pid: 1500,
    });
    // a holder that still runs on the same node (a second instance there) is not taken over
    const twin = setup(doc, undefined, { dir, cluster, identity: identity('node1', 1700) });
    await twin.daemon.start();
    await twin.daemon.runRound();
    expect(twin.rounds().at(-1)).toMatchObject({ outcome: 'standby' });
  });

  it('an unusable lock directory at run time: standby, and the round says what failed (no garbled sentence)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-lockdir-'));
    writeFileSync(join(dir, 'file'), '');
    const s = setup({ mode: 'act', lock: { enabled: true, dir: join(dir, 'file', 'lock') } });
    await s.daemon.start();
    await s.daemon.runRound();
    const round = s.rounds()[0]!;
    expect(round).toMatchObject({ outcome: 'standby', reason: 'lock-error', level: 'warn' });
    expect(round.msg).toMatch(
      new RegExp(
        `^standby: cannot use the lock '${join(dir, 'file', 'lock', 'poise-manager')}': cannot create the lock directory '.*' \\(pmxcfs not mounted\\?\\): ENOTDIR`,
      ),
    );
  });
});

describe('reload', () => {
  it('applies a good config from the next round and keeps the running one on a bad file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-reload-'));
    const lines: string[] = [];
    const cluster = FakeCluster.create(unbalanced());
    const file = join(dir, 'poise-manager.yaml');
    const base = `env: pve\npve: {urls: ['https://node1:8006'], token-env: T}\nstate: {file: ${join(dir, 'state.json')}}\nmetrics: {enabled: false}\nlock: {enabled: false}\npolicy: {ha-auto-rebalance-hold-duration: 1}\n`;
    writeFileSync(file, `${base}mode: observe\n`);
    const { loadConfig } = await import('../config/load');
    const log = new Logger(
      { format: 'json', level: 'info' },
      (l) => lines.push(l),
      () => cluster.time,
    );
    const daemon = new Daemon({
      config: loadConfig(file),
      host: fakeHost(cluster),
      log,
      version: 'test',
      reloadConfig: () => loadConfig(file),
    });
    await daemon.start();
    await daemon.runRound();
    writeFileSync(file, `${base}mode: act\ninterval: nope\n`);
    daemon.requestReload();
    await daemon.runRound();
    expect(cluster.s.requests).toEqual([]);
    writeFileSync(file, `${base}mode: act\n`);
    daemon.requestReload();
    await daemon.runRound();
    expect(cluster.s.requests).toHaveLength(1);
    const config = lines.map((l) => JSON.parse(l)).filter((r) => r.event === 'config');
    expect(config[0]).toMatchObject({
      level: 'error',
      msg: `reload failed, keeping the running config:\n  ${file}: interval: expected a number of seconds from 1 to 3600, got "nope"`,
    });
    expect(config[1]).toMatchObject({ level: 'info', msg: `reloaded '${file}': mode act, interval 10 s` });
  });
});

describe('metrics', () => {
  it('serves imbalance, node load and pressure, decisions, skips, motions, round duration, API errors and the status', async () => {
    const spec = unbalanced();
    spec.nodes[0]!.pressureCpu = 12.5;
    const s = setup(
      {
        mode: 'act',
        metrics: { enabled: true, listen: '127.0.0.1:0' },
        policy: { 'ha-auto-rebalance-hold-duration': 2 },
      },
      spec,
    );
    s.cluster.failNextReads('timeout');
    let port = 0;
    // the daemon reports its bound address through onListening; reach it through a fresh daemon
    const daemon = new Daemon({
      config: s.daemon.config,
      host: s.host,
      log: new Logger(
        { format: 'json', level: 'info' },
        (l) => s.lines.push(l),
        () => s.cluster.time,
      ),
      version: 'test',
      onListening: (a) => (port = a.port),
    });
    await daemon.start();
    expect(port).toBeGreaterThan(0);
    const never = new AbortController().signal;
    for (let i = 0; i < 4; i++) {
      await daemon.runRound();
      await s.host.clock.sleep(10, never);
    }
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const line of [
      'poise_info{mode="act",env="pve",version="test"} 1',
      'poise_active 1',
      'poise_cluster_auto_rebalance 0',
      'poise_node_load_ratio{node="node1",resource="total"} 0.75',
      'poise_node_load_ratio{node="node2",resource="cpu"} 0',
      'poise_node_pressure_some_avg10_percent{node="node1",resource="cpu"} 12.5',
      'poise_rounds_total 4',
      'poise_round_decisions_total{outcome="error"} 1',
      'poise_round_decisions_total{outcome="move"} 1',
      'poise_round_skips_total{reason="api-error"} 1',
      'poise_round_skips_total{reason="holding"} 1',
      'poise_round_skips_total{reason="motion-in-flight"} 1',
      'poise_motions_issued_total{via="ha"} 1',
      'poise_motion_in_flight 1',
      'poise_round_duration_seconds_count 4',
      'poise_api_errors_total{endpoint="GET /cluster/resources",kind="timeout"} 1',
    ]) {
      expect(text).toContain(line);
    }
    expect(text).toContain('poise_imbalance_ratio 1'); // vm:101 still counts on node1 while it moves
    expect(text).not.toContain('poise_node_pressure_some_avg10_percent{node="node2"'); // not reported: absent, never 0
    const status = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as Record<string, unknown>;
    expect(status).toMatchObject({
      mode: 'act',
      active: true,
      rounds: 4,
      motionInFlight: { sid: 'vm:101', target: 'node2' },
      motionsLastHour: 1,
    });
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    daemon.stop('SIGTERM');
    await daemon.close();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});
