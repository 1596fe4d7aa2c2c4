// poise-manager on the embedded simulator: the view → port mapping (sim-port.ts), the motion
// checks, the stepping clock, and whole runs of the CLI against cases (the bundled scenario
// pinned round by round).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterView, ServiceView } from '@poise/sim';
import { describe, expect, it } from 'vitest';
import { simTimeLabel } from './host';
import { SimulationClock, type SteppedSimulation } from './clock';
import type { Io } from '../cli/io';
import { EXIT_FAILURE, EXIT_OK, main } from '../cli/main';
import { judgeMotion, SIM_EPOCH_SECONDS, SimPort, simCaseFacts, simCrs, simSnapshot } from './sim-port';
import { loadCase, Simulation } from '@poise/sim';

const GIB = 1024 ** 3;

function captureIo() {
  const out: string[] = [];
  const err: string[] = [];
  const logs: string[] = [];
  const io: Io = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    logLine: (l) => logs.push(l),
    isTty: false,
    env: {},
    onSignal: () => () => undefined,
  };
  const records = () => logs.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { io, out, err, logs, records };
}

/** A case directory: three nodes of 16 cores / 64 GiB, the given files (objects are written as JSON). */
function caseDir(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'poise-sim-case-'));
  const all: Record<string, unknown> = {
    hardware_status: Object.fromEntries(
      ['node1', 'node2', 'node3'].map((n) => [n, { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GIB }]),
    ),
    cmdlist: [['power node1 on', 'power node2 on', 'power node3 on']],
    ...files,
  };
  for (const [name, content] of Object.entries(all))
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 1));
  return dir;
}

describe('the bundled scenario (poise-manager --sim)', () => {
  it('holds, moves one guest at a time, follows each motion to success, then stays below the threshold until the scenario ends', async () => {
    const c = captureIo();
    expect(await main(['--sim'], c.io)).toBe(EXIT_OK);
    const rounds = c.records().filter((r) => r.event === 'round');
    expect(rounds).toHaveLength(37);
    // 20 s per round from 0 s: the simulated time on the 2026-01-01 epoch
    expect(rounds.map((r) => r.time)).toEqual(
      rounds.map((_, i) => new Date((SIM_EPOCH_SECONDS + 20 * i) * 1000).toISOString()),
    );
    // the recommended policy, the default: the threshold and margin judge the smoothed imbalance,
    // the cost weight prefers the move that copies less memory when the gain is close; the
    // the default objective is the guests' contention; the bundled case reports no PSI, so its
    // stages judge the imbalance as the reference's do, and say so in their own words;
    // cluster boots (nodes powered on at 20 s, the guests started): the daemon waits until
    // it settled, limits.settle-time (120 s) after the last change
    const settling = (ago: number) =>
      `the cluster is settling: the last change (ct:105, ct:106, vm:101, vm:102 and 2 more in HA state 'request_start') was ${ago} s ago; motions resume at sim 00:02:20 (limits.settle-time 120 s)`;
    expect(rounds.slice(0, 20).map((r) => r.msg)).toEqual([
      'the cluster is not quorate: nothing is balanced', // every node is off at 0 s
      "the cluster is not settled: ct:105, ct:106, vm:101, vm:102 and 2 more in HA state 'request_start'; no motion is requested until 120 s after the last change",
      ...[20, 40, 60, 80, 100].map(settling),
      'imbalance above threshold for 1 of 3 rounds', // 100.0 %
      'imbalance above threshold for 2 of 3 rounds', // 100.0 %
      'migrate vm:103 from node1 to node2 (imbalance 100.0% → 70.7%)', // vm:103, vm:104 and ct:105 got busier at 120 s
      'motion in flight: migrate vm:103 from node1 to node2 (moving, 20 s)',
      'imbalance above threshold for 1 of 3 rounds', // 70.7 %
      'imbalance above threshold for 2 of 3 rounds', // 70.7 %
      'migrate vm:104 from node1 to node3 (imbalance 70.7% → 36.5%)',
      'motion in flight: migrate vm:104 from node1 to node3 (moving, 20 s)',
      'imbalance above threshold for 1 of 3 rounds', // 36.5 %
      'imbalance above threshold for 2 of 3 rounds', // 36.5 %
      'migrate vm:102 from node1 to node2 (imbalance 36.5% → 18.5%)',
      'motion in flight: migrate vm:102 from node1 to node2 (moving, 20 s)',
      'imbalance 18.5% at or below threshold 30.0%',
    ]);
    expect(new Set(rounds.slice(20).map((r) => r.msg))).toEqual(
      new Set(['imbalance 18.5% at or below threshold 30.0%']),
    );
    expect(
      c
        .records()
        .filter((r) => r.event === 'motion')
        .map((r) => r.msg),
    ).toEqual([
      'migrate vm:103 from node1 to node2 succeeded after 40 s',
      'migrate vm:104 from node1 to node3 succeeded after 40 s',
      'migrate vm:102 from node1 to node2 succeeded after 40 s',
    ]);
    // the nodes are off at the start (said once each, and when they are back); the case
    // reports no node pressure: said once, and the gate lets the balancer work
    expect(
      c
        .records()
        .filter((r) => r.level !== 'info')
        .map((r) => r.msg),
    ).toEqual([
      ...['node1', 'node2', 'node3'].map((n) => `node '${n}' is offline (not in the cluster membership)`),
      'contention: no node reports pressure (PSI): balancing the load imbalance (the reference objective) until one does',
      'pressure: no pressure telemetry from any node: balancing as without the pressure gate',
    ]);
    expect(
      c
        .records()
        .filter((r) => r.event === 'cluster' && r.level === 'info')
        .map((r) => r.msg),
    ).toContain("node 'node1' is back online (was offline)");
    expect(
      c
        .records()
        .find(
          (r) =>
            r.msg ===
            "policy keys: from poise-manager's defaults: hold-duration 3, margin 10, method bruteforce, preset recommended, threshold 30",
        ),
    ).toBeDefined();
  });

  it('with the reference preset the policy is exactly the reference balancer (the daemon still waits for the cluster to settle)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-sim-reference-'));
    const config = join(dir, 'reference.yaml');
    writeFileSync(config, 'policy: {ha-auto-rebalance-preset: reference}\nmetrics: {enabled: false}\ninterval: 20\n');
    const c = captureIo();
    expect(await main(['--sim', '--config', config], c.io)).toBe(EXIT_OK);
    const rounds = c.records().filter((r) => r.event === 'round');
    expect(rounds.filter((r) => r.outcome === 'move').map((r) => r.msg)).toEqual([
      'migrate vm:101 from node1 to node2 (imbalance 100.0% → 66.5%)',
      'migrate vm:103 from node1 to node3 (imbalance 66.5% → 31.4%)',
      'migrate vm:102 from node1 to node3 (imbalance 31.4% → 14.4%)',
    ]);
    expect(c.records().find((r) => String(r.msg).startsWith('policy: '))?.msg).toBe(
      'policy: motion-in-flight → threshold-hold → candidates → score-bruteforce → select-best → relative-margin: threshold 30%, hold 3 rounds, margin 10%, method bruteforce; preset reference: no variant stage',
    );
    expect(c.records().filter((r) => r.level !== 'info' && r.event !== 'cluster')).toEqual([]);
  });

  it('writes simulated time as sim hh:mm:ss on a terminal', async () => {
    const c = captureIo();
    expect(await main(['--sim'], { ...c.io, isTty: true })).toBe(EXIT_OK);
    expect(c.logs.find((l) => l.includes('round 10:'))).toBe(
      'sim 00:03:00 info  round 10: migrate vm:103 from node1 to node2 (imbalance 100.0% → 70.7%)',
    );
    expect(c.logs.at(-1)).toBe(
      'sim 00:12:00 info  stop: stopped after 37 rounds; motions this run: 3 requested, 3 succeeded, 0 failed',
    );
  });

  it('a closed output stops the daemon as SIGTERM does: the round finishes, status 0', async () => {
    const c = captureIo();
    let closed: (() => void) | undefined;
    // the reader goes away while the 5th round line is written
    const logLine = (line: string) => {
      c.io.logLine(line);
      if (c.records().filter((r) => r.event === 'round').length === 5) closed?.();
    };
    const io = {
      ...c.io,
      logLine,
      onOutputClosed: (handler: () => void) => ((closed = handler), () => (closed = undefined)),
    };
    expect(await main(['--sim'], io)).toBe(EXIT_OK);
    expect(c.records().filter((r) => r.event === 'round')).toHaveLength(5);
    expect(c.records().find((r) => r.event === 'stop')?.msg).toBe('output closed: exiting');
    expect(closed).toBeUndefined(); // removed when the daemon stopped
  });

  it('in observe mode nothing moves and every round says what it would do', async () => {
    const c = captureIo();
    expect(await main(['--sim', '--mode', 'observe'], c.io)).toBe(EXIT_OK);
    const rounds = c.records().filter((r) => r.event === 'round');
    expect(rounds.filter((r) => r.outcome === 'move')).toEqual([]);
    // the cluster stays as it is: once it settled, after every third hold round the same move is
    // proposed again (vm:103 copies less than vm:101 for a close gain)
    const would = rounds.filter((r) => r.outcome === 'would-move').map((r) => r.msg);
    expect(would).toEqual(
      Array(10).fill('observe: would migrate vm:103 from node1 to node2 (imbalance 100.0% → 70.7%)'),
    );
    expect(c.records().at(-1)!.msg).toBe(
      'stopped after 37 rounds; observe mode: nothing moved, 10 rounds would have requested a motion',
    );
  });
});

describe('runs of other cases', () => {
  const guests = {
    service_config: { 'vm:101': { node: 'node1', state: 'started' }, 'vm:102': { node: 'node1', state: 'started' } },
    static_service_stats: { 'vm:101': { maxcpu: 8, maxmem: 32 * GIB }, 'vm:102': { maxcpu: 8, maxmem: 32 * GIB } },
    dynamic_service_stats: { 'vm:101': { cpu: 6, mem: 24 * GIB }, 'vm:102': { cpu: 6, mem: 24 * GIB } },
  };

  it("the case's own ha-auto-rebalance on: poise refuses to move HA resources and says so", async () => {
    const dir = caseDir({
      ...guests,
      'datacenter.cfg': { crs: { ha: 'dynamic', 'ha-auto-rebalance': 1, 'ha-auto-rebalance-threshold': 20 } },
    });
    const c = captureIo();
    expect(
      await main(['--sim', dir, '--config', writeConfig('policy: {ha-auto-rebalance-hold-duration: 0}')], c.io),
    ).toBe(EXIT_OK);
    const records = c.records();
    expect(records.find((r) => r.event === 'cluster')!.msg).toBe(
      "the cluster's own ha-auto-rebalance is on (datacenter.cfg crs (its threshold 20%)): poise refuses to move HA resources while it is on",
    );
    const rounds = records.filter((r) => r.event === 'round');
    expect(rounds.filter((r) => r.outcome === 'move')).toEqual([]);
    expect(rounds.some((r) => r.reason === 'cluster-auto-rebalance')).toBe(true);
    expect(records.at(-1)!.msg).toMatch(/motions this run: 0 requested, 0 succeeded, 0 failed$/);
  });

  it('a motion the CRM refuses (negative affinity on the target, set up behind its back) is refused, never queued', async () => {
    // vm:102 must stay away from vm:101; two nodes only, vm:101 alone on node2: the only move for
    // vm:102 is onto vm:101's node, which the candidates already exclude, so nothing is asked
    const dir = caseDir({
      hardware_status: Object.fromEntries(
        ['node1', 'node2'].map((n) => [n, { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GIB }]),
      ),
      cmdlist: [['power node1 on', 'power node2 on']],
      service_config: {
        'vm:101': { node: 'node2', state: 'started' },
        'vm:102': { node: 'node1', state: 'started' },
        'vm:103': { node: 'node1', state: 'started' },
      },
      static_service_stats: {
        'vm:101': { maxcpu: 8, maxmem: 32 * GIB },
        'vm:102': { maxcpu: 8, maxmem: 32 * GIB },
        'vm:103': { maxcpu: 8, maxmem: 32 * GIB },
      },
      dynamic_service_stats: {
        'vm:101': { cpu: 1, mem: 1 * GIB },
        'vm:102': { cpu: 6, mem: 24 * GIB },
        'vm:103': { cpu: 6, mem: 24 * GIB },
      },
      rules_config: 'resource-affinity: apart\n\tresources vm:101,vm:102\n\taffinity negative\n',
    });
    const c = captureIo();
    expect(
      await main(['--sim', dir, '--config', writeConfig('policy: {ha-auto-rebalance-hold-duration: 0}')], c.io),
    ).toBe(EXIT_OK);
    const moves = c.records().filter((r) => r.event === 'round' && r.outcome === 'move');
    expect(moves.map((r) => r.sid)).toEqual(['vm:103']);
  });

  it('a simulation that aborts ends the run with exit 1 and says why', async () => {
    // a manual migration of a service that is not ignored cannot apply: the reference aborts the run
    const dir = caseDir({
      ...guests,
      cmdlist: [['power node1 on', 'power node2 on', 'power node3 on'], ['service vm:101 manual-migrate node2']],
    });
    const c = captureIo();
    expect(await main(['--sim', dir], c.io)).toBe(EXIT_FAILURE);
    const stop = c.records().filter((r) => r.event === 'stop');
    expect(stop[0]).toMatchObject({ level: 'error' });
    expect(stop[0]!.msg).toMatch(/^the simulation aborted at 120 s: /);
  });

  it('a service with stats that are not finite numbers is left out and named; the run goes on without NaN', async () => {
    const dir = caseDir({
      ...guests,
      service_config: { ...guests.service_config, 'vm:103': { node: 'node1', state: 'started' } },
      static_service_stats: { ...guests.static_service_stats, 'vm:103': { maxcpu: 2, maxmem: 4 * GIB } },
      dynamic_service_stats: `{"vm:101": {"cpu": 6, "mem": ${24 * GIB}}, "vm:102": {"cpu": 6, "mem": ${24 * GIB}}, "vm:103": {"cpu": 1e999, "mem": 1}}`,
    });
    const c = captureIo();
    expect(
      await main(['--sim', dir, '--config', writeConfig('policy: {ha-auto-rebalance-hold-duration: 0}')], c.io),
    ).toBe(EXIT_OK);
    const records = c.records();
    expect(records.filter((r) => r.event === 'cluster' && String(r.msg).includes('vm:103')).map((r) => r.msg)).toEqual([
      "guest 'vm:103' is running but the simulator has no valid measured usage for it (dynamic stats): left out",
    ]);
    expect(c.logs.join('\n')).not.toMatch(/NaN|Infinity/);
    expect(records.filter((r) => r.event === 'round' && r.outcome === 'move').length).toBeGreaterThan(0);
  });
});

/** A config file for a sim run: JSON logs, no metrics, the given extra YAML. */
function writeConfig(extra: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'poise-sim-config-'));
  const file = join(dir, 'poise-manager.yaml');
  writeFileSync(
    file,
    ['env: sim', 'interval: 20', 'metrics: {enabled: false}', 'log: {format: json}', extra].join('\n'),
  );
  return file;
}

// --- the mapping, on hand-made views ---------------------------------------------------------

const facts = simCaseFacts(loadCase(caseDir({})));

function service(node: string, extra: Partial<ServiceView> & Record<string, unknown> = {}): ServiceView {
  return {
    node,
    state: 'started',
    running: true,
    staticStats: { maxcpu: 4, maxmem: 8 * GIB },
    dynamicStats: { cpu: 2, mem: 4 * GIB },
    ...extra,
  };
}

function view(extra: Partial<ClusterView> = {}): ClusterView {
  const names = ['node1', 'node2', 'node3'];
  return {
    time: 100,
    nodes: new Map(names.map((n) => [n, { power: 'on', network: 'on', online: true, maxcpu: 16, maxmem: 64 * GIB }])),
    nodeStats: new Map(names.map((n) => [n, { cpu: 1, maxcpu: 16, mem: 2 * GIB, maxmem: 64 * GIB }])),
    services: new Map([
      ['vm:101', service('node1')],
      ['ct:102', service('node2')],
    ]),
    managerStatus: {
      master_node: 'node1',
      node_status: { node1: 'online', node2: 'online', node3: 'online' },
      service_status: {
        'vm:101': { state: 'migrate', node: 'node1', target: 'node3', uid: 'u1' },
        'ct:102': { state: 'started', node: 'node2', uid: 'u2' },
      },
    },
    lrmModes: new Map(),
    ...extra,
  };
}

describe('the default policy is the recommended preset; the case and a config file set keys over it', () => {
  const SCENARIO = join(__dirname, '..', '..', '..', 'sim', 'scenarios', 'failing-migration-local-cdrom');
  /** The simulator's local cd-rom scenario with the cluster's own balancer off: poise is the only balancer. */
  function cdromCase(crs: Record<string, unknown> = { ha: 'dynamic' }): string {
    const dir = mkdtempSync(join(tmpdir(), 'poise-sim-cdrom-'));
    for (const f of [
      'cmdlist',
      'dynamic_service_stats',
      'guest_config',
      'hardware_status',
      'service_config',
      'static_service_stats',
    ]) {
      writeFileSync(join(dir, f), readFileSync(join(SCENARIO, f)));
    }
    writeFileSync(join(dir, 'datacenter.cfg'), JSON.stringify({ crs }));
    return dir;
  }
  const requested = (c: ReturnType<typeof captureIo>) =>
    c
      .records()
      .filter((r) => r.event === 'round' && r.outcome === 'move')
      .map((r) => `${String(r.sid)}>${String(r.target)}`);

  it('without a config, a guest with a local cd-rom is never requested: the others balance the cluster', async () => {
    const c = captureIo();
    expect(await main(['--sim', cdromCase()], c.io)).toBe(EXIT_OK);
    expect(requested(c).length).toBeGreaterThan(0);
    expect(requested(c).filter((m) => m.startsWith('vm:101>'))).toEqual([]);
    expect(c.records().filter((r) => r.event === 'motion' && r.result === 'failed')).toEqual([]);
    expect(
      c
        .records()
        .filter((r) => r.event === 'policy')
        .map((r) => r.msg),
    ).toContain("migratable: vm:101 cannot be migrated: local cd-rom image 'local:iso/debian-13.iso' (ide2)");
  });

  it('the reference preset (or none) is the reference balancer: the same failing motion again and again', async () => {
    for (const preset of ['reference', 'none']) {
      const c = captureIo();
      expect(await main(['--sim', cdromCase({ ha: 'dynamic', 'ha-auto-rebalance-preset': preset })], c.io)).toBe(
        EXIT_OK,
      );
      const moves = requested(c);
      expect(new Set(moves)).toEqual(new Set(['vm:101>node2']));
      expect(moves.length).toBeGreaterThanOrEqual(10);
    }
  });

  it("the case's crs keys apply over the defaults and a config file's over both; the start says where each came from", async () => {
    const dir = cdromCase({
      ha: 'dynamic',
      'ha-auto-rebalance-hold-duration': 6,
      'ha-auto-rebalance-cooldown': 900,
      'ha-auto-rebalance-backoff': 30,
    });
    const config = writeConfig('policy: {ha-auto-rebalance-backoff: 120}');
    const c = captureIo();
    expect(await main(['--sim', dir, '--config', config], c.io)).toBe(EXIT_OK);
    const start = c
      .records()
      .filter((r) => r.event === 'start')
      .map((r) => String(r.msg));
    expect(start).toContain(
      "policy keys: from poise-manager's defaults: margin 10, method bruteforce, preset recommended, threshold 30; " +
        `from the crs of '${join(dir, 'datacenter.cfg')}': cooldown 900, hold-duration 6; from '${config}': backoff 120`,
    );
    expect(start.find((m) => m.startsWith('policy: '))).toMatch(/hold 6 rounds, .*backoff 120 s, cooldown 900 s/);
    expect(c.records().find((r) => r.event === 'round' && r.reason === 'holding')?.msg).toMatch(
      /^imbalance above threshold for 1 of 6 rounds/,
    );
  });

  it("a bad reference key in the case's datacenter.cfg is a config error naming the file, key and value (exit 78), also for --check-config", async () => {
    const dir = cdromCase({ ha: 'dynamic', 'ha-auto-rebalance-threshold': 250 });
    for (const args of [
      ['--sim', dir],
      ['--sim', dir, '--check-config'],
    ]) {
      const c = captureIo();
      expect(await main(args, c.io)).toBe(78);
      // the case loader checks the range (one range for the simulator and the manager)
      expect(c.err.join('\n')).toContain(
        `sim.case-dir: '${join(dir, 'datacenter.cfg')}' crs.ha-auto-rebalance-threshold: expected a finite number from 0 to 100, got 250`,
      );
    }
  });

  it("a bad variant value is refused at start like a bad reference key (exit 78), naming where it was set: the case's datacenter.cfg or the config file", async () => {
    const dir = cdromCase({ ha: 'dynamic', 'ha-auto-rebalance-backoff': -5 });
    for (const args of [
      ['--sim', dir],
      ['--sim', dir, '--check-config'],
    ]) {
      const c = captureIo();
      expect(await main(args, c.io)).toBe(78);
      expect(c.err.join('\n')).toMatch(/datacenter\.cfg.*ha-auto-rebalance-backoff: invalid value '-5'/);
    }
    const config = writeConfig('policy: {ha-auto-rebalance-cooldown: -1}');
    const c = captureIo();
    expect(await main(['--sim', cdromCase({ ha: 'dynamic' }), '--config', config], c.io)).toBe(78);
    expect(c.err.join('\n')).toContain(`${config}: policy.ha-auto-rebalance-cooldown: invalid value '-1'`);
  });
});

describe('a node that fails under the embedded simulator', () => {
  it('no motion while the HA manager fences and recovers; every node change said once', async () => {
    const scenario = join(__dirname, '..', '..', '..', 'sim', 'scenarios', 'rebalance-and-failover');
    const dir = mkdtempSync(join(tmpdir(), 'poise-sim-failover-'));
    for (const f of [
      'cmdlist',
      'dynamic_service_stats',
      'hardware_status',
      'manager_status',
      'service_config',
      'static_service_stats',
    ]) {
      writeFileSync(join(dir, f), readFileSync(join(scenario, f)));
    }
    writeFileSync(join(dir, 'datacenter.cfg'), JSON.stringify({ crs: { ha: 'dynamic' } })); // poise is the only balancer
    const c = captureIo();
    expect(await main(['--sim', dir], c.io)).toBe(EXIT_OK);
    const rounds = c.records().filter((r) => r.event === 'round');
    const failedAt = rounds.findIndex((r) =>
      String(r.msg).startsWith("the cluster is not settled: node 'node3' is offline"),
    );
    expect(failedAt).toBeGreaterThan(0);
    // from node3's failure to the end (it never comes back): no motion, each round says why
    expect(rounds.slice(failedAt).every((r) => r.reason === 'not-settled')).toBe(true);
    expect(
      rounds
        .slice(failedAt)
        .some((r) => /node 'node3' is being fenced; vm:\d+ in HA state 'fence'/.test(String(r.msg))),
    ).toBe(true);
    const node3 = c
      .records()
      .filter((r) => r.event === 'cluster' && r.node === 'node3')
      .map((r) => r.msg);
    expect(node3).toEqual([
      "node 'node3' is offline (not in the cluster membership)", // all nodes are off at 0 s
      "node 'node3' is back online (was offline)",
      "node 'node3' is offline (not in the cluster membership) (was online)",
      "node 'node3' has failed (HA node state 'unknown': its HA services wait for fencing) (was offline)",
      "node 'node3' is being fenced (HA node state 'fence') (was unknown)",
      // fenced: nothing waits for fencing any more
      "node 'node3' has been fenced (HA node state 'unknown' until it rejoins; its HA services are recovered on other nodes) (was fence)",
    ]);
    expect(c.records().find((r) => r.event === 'stop' && String(r.msg).startsWith('stopped'))?.msg).toMatch(
      /motions this run: \d+ requested/,
    );
  });
});

describe('simSnapshot: the view as the balancer port sees it', () => {
  it('maps nodes, guests with HA state, target and uid, time on the epoch, and no pressure when the view has none', () => {
    const s = simSnapshot(view(), facts, { time: SIM_EPOCH_SECONDS + 100 });
    expect(s.time).toBe(SIM_EPOCH_SECONDS + 100);
    expect(s.quorate).toBe(true);
    expect(s.nodes[0]).toEqual({
      name: 'node1',
      online: true,
      condition: 'online',
      maintenance: false,
      maxcpu: 16,
      maxmem: 64 * GIB,
      cpu: 1,
      mem: 2 * GIB,
      pressure: { cpuSome: undefined, memSome: undefined },
    });
    // byte order: 'ct:102' < 'vm:101'
    expect(s.guests.map((g) => [g.sid, g.type, g.vmid, g.node, g.ha?.state, g.ha?.target, g.ha?.uid])).toEqual([
      ['ct:102', 'ct', 102, 'node2', 'started', undefined, 'u2'],
      ['vm:101', 'vm', 101, 'node1', 'migrate', 'node3', 'u1'],
    ]);
    expect(s.guests[1]!.stats).toEqual({ cpu: 2, maxcpu: 4, mem: 4 * GIB, maxmem: 8 * GIB, memhost: undefined });
    expect(s.problems).toEqual([]);
  });

  it.each<[string, Partial<ClusterView>, (s: ReturnType<typeof simSnapshot>) => unknown, unknown]>([
    [
      'a node in maintenance (HA node status) is not usable',
      {
        managerStatus: {
          master_node: 'node1',
          node_status: { node1: 'online', node2: 'maintenance', node3: 'online' },
          service_status: {},
        },
      },
      (s) => s.nodes.map((n) => [n.name, n.online, n.maintenance]),
      [
        ['node1', true, false],
        ['node2', false, true],
        ['node3', true, false],
      ],
    ],
    [
      'a maintenance request and an LRM in maintenance mode count as maintenance',
      {
        managerStatus: {
          master_node: 'node1',
          node_status: { node1: 'online', node2: 'online', node3: 'online' },
          node_request: { node3: { maintenance: 1 } },
        },
        lrmModes: new Map([['node1', 'maintenance']]),
      },
      (s) => s.nodes.map((n) => n.maintenance),
      [true, false, true],
    ],
    [
      'a node HA has not marked online yet is not online',
      { managerStatus: { master_node: 'node1', node_status: { node1: 'online', node2: 'unknown', node3: 'online' } } },
      (s) => s.nodes.map((n) => n.online),
      [true, false, true],
    ],
    [
      "each node's condition: online, maintenance, HA's failure states, offline without one",
      {
        managerStatus: { master_node: 'node1', node_status: { node1: 'online', node2: 'fence', node3: 'maintenance' } },
        nodes: new Map([
          ['node1', { power: 'on', network: 'on', online: true, maxcpu: 16, maxmem: 64 * GIB }],
          ['node2', { power: 'on', network: 'off', online: false, maxcpu: 16, maxmem: 64 * GIB }],
          ['node3', { power: 'on', network: 'on', online: true, maxcpu: 16, maxmem: 64 * GIB }],
        ]),
      },
      (s) => s.nodes.map((n) => n.condition),
      ['online', 'fence', 'maintenance'],
    ],
    [
      'a node that is down while HA still says online is offline',
      {
        managerStatus: { master_node: 'node1', node_status: { node1: 'online', node2: 'online', node3: 'online' } },
        nodes: new Map(
          ['node1', 'node2', 'node3'].map((n) => [
            n,
            { power: n === 'node3' ? 'off' : 'on', network: 'on', online: n !== 'node3', maxcpu: 16, maxmem: 64 * GIB },
          ]),
        ),
      },
      (s) => s.nodes.map((n) => [n.condition, n.online]),
      [
        ['online', true],
        ['online', true],
        ['offline', false],
      ],
    ],
    [
      'no node online: not quorate',
      {
        nodes: new Map(
          ['node1', 'node2', 'node3'].map((n) => [
            n,
            { power: 'on', network: 'off', online: false, maxcpu: 16, maxmem: 64 * GIB },
          ]),
        ),
      },
      (s) => [s.quorate, s.nodes.some((n) => n.online)],
      [false, false],
    ],
    [
      'a service the CRM has not added yet: request_start, on its config node',
      {
        managerStatus: {
          master_node: 'node1',
          node_status: { node1: 'online', node2: 'online', node3: 'online' },
          service_status: {},
        },
      },
      (s) => s.guests.map((g) => [g.sid, g.ha?.state, g.node, g.ha?.uid]),
      [
        ['ct:102', 'request_start', 'node2', undefined],
        ['vm:101', 'request_start', 'node1', undefined],
      ],
    ],
    [
      'a stopped guest uses nothing',
      { services: new Map([['vm:101', service('node1', { running: false, state: 'stopped' })]]) },
      (s) => [s.guests[0]!.running, s.guests[0]!.stats.cpu, s.guests[0]!.stats.mem, s.guests[0]!.ha?.requestState],
      [false, 0, 0, 'stopped'],
    ],
    [
      'an HA state this build does not know is unknown',
      {
        managerStatus: {
          master_node: 'node1',
          node_status: { node1: 'online', node2: 'online', node3: 'online' },
          service_status: { 'vm:101': { state: 'teleport', node: 'node1' } },
        },
      },
      (s) => s.guests.find((g) => g.sid === 'vm:101')!.ha?.state,
      'unknown',
    ],
    [
      'HA disarmed',
      { managerStatus: { master_node: 'node1', disarm: { mode: 'freeze', state: 'disarmed' } } },
      (s) => s.haDisarmed,
      true,
    ],
  ])('%s', (_name, extra, pick, expected) => {
    expect(pick(simSnapshot(view(extra), facts, { time: 0 }))).toEqual(expected);
  });

  it('reads the simulator’s typed additions: node PSI, guest memhost, a service lock', () => {
    const v = view({
      nodeStats: new Map([
        [
          'node1',
          { cpu: 1, maxcpu: 16, mem: 2 * GIB, maxmem: 64 * GIB, pressurecpusome: 12.5, pressurememorysome: 0.4 },
        ],
        ['node2', { cpu: 1, maxcpu: 16, mem: 2 * GIB, maxmem: 64 * GIB, pressurecpusome: 250 }], // not a percentage: unknown
        ['node3', { cpu: 1, maxcpu: 16, mem: 2 * GIB, maxmem: 64 * GIB }],
      ]),
      services: new Map([
        ['vm:101', service('node1', { dynamicStats: { cpu: 2, mem: 4 * GIB, memhost: 5 * GIB }, lock: 'backup' })],
      ]),
    });
    const s = simSnapshot(v, facts, { time: 0 });
    expect(s.nodes.map((n) => n.pressure)).toEqual([
      { cpuSome: 12.5, memSome: 0.4 },
      { cpuSome: undefined, memSome: undefined },
      { cpuSome: undefined, memSome: undefined },
    ]);
    expect(s.guests[0]).toMatchObject({ lock: 'backup', stats: { memhost: 5 * GIB }, ha: { autoRebalance: true } });
  });

  it('a case’s node pressure and a guest lock reach the daemon’s snapshot through the port (a real simulation)', async () => {
    // the second command list (at 120 s) puts 12 % cpu pressure on node1 and locks vm:101
    const input = loadCase(
      caseDir({
        service_config: {
          'vm:101': { node: 'node1', state: 'started' },
          'vm:102': { node: 'node2', state: 'started' },
        },
        cmdlist: [
          ['power node1 on', 'power node2 on', 'power node3 on'],
          ['node node1 set-dynamic-stats pressurecpusome 12 pressurememorysome 0.5', 'service vm:101 lock backup'],
        ],
      }),
    );
    const sim = new Simulation(input, { profile: 'pve-9.2' });
    const port = new SimPort(sim, simCaseFacts(input), { pickupTimeoutSeconds: 60, description: 'test' });
    const before = await port.readSnapshot();
    expect(before.nodes.map((n) => n.pressure)).toEqual([
      { cpuSome: undefined, memSome: undefined },
      { cpuSome: undefined, memSome: undefined },
      { cpuSome: undefined, memSome: undefined },
    ]);
    while (sim.time < 120) sim.step();
    const after = await port.readSnapshot();
    expect(after.nodes.map((n) => [n.name, n.pressure])).toEqual([
      ['node1', { cpuSome: 12, memSome: 0.5 }],
      ['node2', { cpuSome: undefined, memSome: undefined }],
      ['node3', { cpuSome: undefined, memSome: undefined }],
    ]);
    expect(after.guests.map((g) => [g.sid, g.lock])).toEqual([
      ['vm:101', 'backup'],
      ['vm:102', undefined],
    ]);
  });

  it('leaves out, and names, a node or guest whose numbers are not finite (no NaN reaches the policy)', () => {
    const v = view({
      nodeStats: new Map([
        ['node1', { cpu: Number.NaN, maxcpu: 16, mem: 2 * GIB, maxmem: 64 * GIB }],
        ['node2', { cpu: 1, maxcpu: 16, mem: 2 * GIB, maxmem: 64 * GIB }],
        ['node3', { cpu: 1, maxcpu: 16, mem: 2 * GIB, maxmem: 64 * GIB }],
      ]),
      services: new Map([
        ['vm:101', service('node1', { dynamicStats: { cpu: Number.POSITIVE_INFINITY, mem: 1 } })],
        ['vm:103', service('node2', { staticStats: undefined })],
        ['vm:104', service('node2', { dynamicStats: { cpu: -1, mem: 1 } })],
      ]),
    });
    const s = simSnapshot(v, facts, { time: 0 });
    expect(s.nodes[0]).toMatchObject({ online: false, cpu: 0, mem: 0 });
    expect(s.guests).toEqual([]);
    expect(s.problems!.map((p) => p.message)).toEqual([
      "node 'node1': the simulator measures no valid usage for it (cpu NaN, mem 2147483648): left out",
      "guest 'vm:101' is running but the simulator has no valid measured usage for it (dynamic stats): left out",
      "guest 'vm:103': the simulator has no valid configured maxima for it (static stats): left out",
      "guest 'vm:104' is running but the simulator has no valid measured usage for it (dynamic stats): left out",
    ]);
    // every number handed on is finite (JSON writes NaN and Infinity as null)
    expect(JSON.stringify({ nodes: s.nodes, guests: s.guests })).not.toMatch(/null/);
  });

  it('guest configurations when asked: the case guest_config as strings, an empty one for the others', () => {
    const f = { ...facts, guestConfigs: new Map([['vm:101', { ide2: 'local:iso/d.iso,media=cdrom', cores: '2' }]]) };
    expect(simSnapshot(view(), f, { time: 0 }).guestConfigs).toBeUndefined();
    expect(simSnapshot(view(), f, { time: 0, needs: { guestConfigs: true, nonHa: false } }).guestConfigs).toEqual(
      new Map([
        ['ct:102', {}],
        ['vm:101', { ide2: 'local:iso/d.iso,media=cdrom', cores: '2' }],
      ]),
    );
  });
});

describe('simCaseFacts: what the view does not show', () => {
  it('rules from rules_config and groups migrated to ha-group-<name> rules, disabled rules left out; unparsable lines noted', () => {
    const input = loadCase(
      caseDir({
        service_config: {
          'vm:101': { node: 'node1', state: 'started', group: 'fast' },
          'vm:102': { node: 'node2', state: 'started' },
          'vm:103': { node: 'node3', state: 'started' },
        },
        rules_config: [
          'resource-affinity: apart',
          '\tresources vm:102,vm:101',
          '\taffinity negative',
          '',
          'node-affinity: off',
          '\tresources vm:103',
          '\tnodes node3',
          '\tdisable 1',
          '',
          'node-affinity: broken',
          '\tresources vm:103',
          '\tnodes node1',
          '\tstrict maybe',
          '',
        ].join('\n'),
        groups: 'group: fast\n\tnodes node2:2,node1\n\trestricted 1\n',
      }),
    );
    const f = simCaseFacts(input);
    expect(f.rules).toEqual([
      { type: 'resource-affinity', id: 'apart', resources: ['vm:101', 'vm:102'], affinity: 'negative' },
      // the groups rules take the orders after the lowest one (as the HA manager numbers them)
      {
        type: 'node-affinity',
        id: 'ha-group-fast',
        resources: ['vm:101'],
        nodes: [
          { node: 'node1', priority: 0 },
          { node: 'node2', priority: 2 },
        ],
        strict: true,
      },
      // a value that does not parse is skipped (and noted), the rule stays
      {
        type: 'node-affinity',
        id: 'broken',
        resources: ['vm:103'],
        nodes: [{ node: 'node1', priority: 0 }],
        strict: false,
      },
    ]);
    expect(f.notes).toEqual([
      expect.stringMatching(
        /^case: file rules_config line 13 \(section 'broken'\) - unable to parse value of 'strict'/,
      ),
    ]);
  });

  it.each<[Record<string, unknown>, ReturnType<typeof simCrs>]>([
    [{}, { ha: 'basic', autoRebalance: false, settings: {} }],
    [{ ha: '' }, { ha: 'basic', autoRebalance: false, settings: {} }],
    [
      {
        ha: 'dynamic',
        'ha-auto-rebalance': '1',
        'ha-auto-rebalance-threshold': 25,
        'ha-auto-rebalance-margin': 5,
        'ha-auto-rebalance-hold-duration': 2,
        'ha-auto-rebalance-method': 'topsis',
      },
      {
        ha: 'dynamic',
        autoRebalance: true,
        settings: { thresholdPercent: 25, marginPercent: 5, holdRounds: 2, method: 'topsis' },
      },
    ],
    [{ 'ha-auto-rebalance': 0 }, { ha: 'basic', autoRebalance: false, settings: {} }],
  ])('crs %j', (crs, expected) => {
    expect(simCrs(crs)).toEqual(expected);
  });
});

describe('judgeMotion: what the HA migrate endpoint answers, on the simulated cluster', () => {
  const input = loadCase(
    caseDir({
      service_config: {
        'vm:101': { node: 'node1', state: 'started' },
        'vm:102': { node: 'node2', state: 'started' },
        'vm:103': { node: 'node1', state: 'started' },
      },
      rules_config:
        'resource-affinity: apart\n\tresources vm:101,vm:102\n\taffinity negative\n\nresource-affinity: together\n\tresources vm:101,vm:103\n\taffinity positive\n',
    }),
  );
  const compiled = simCaseFacts(input).compiled;
  const v = view({
    services: new Map([
      ['vm:101', service('node1')],
      ['vm:102', service('node2')],
      ['vm:103', service('node1')],
      ['vm:104', service('node3')],
    ]),
    managerStatus: {
      master_node: 'node1',
      node_status: { node1: 'online', node2: 'online', node3: 'online' },
      service_status: {
        'vm:101': { state: 'started', node: 'node1' },
        'vm:102': { state: 'started', node: 'node2' },
        'vm:103': { state: 'started', node: 'node1' },
        'vm:104': { state: 'error', node: 'node3' },
      },
    },
  });
  it.each<[string, { sid: string; target: string }, ReturnType<typeof judgeMotion>]>([
    ['its positive partner moves along', { sid: 'vm:101', target: 'node3' }, { ok: true, comigrated: ['vm:103'] }],
    [
      'a negative partner on the target blocks it',
      { sid: 'vm:101', target: 'node2' },
      { ok: false, reason: "blocked by 'vm:102' (resource-affinity)", blocking: 'vm:102' },
    ],
    [
      'a service in error is refused',
      { sid: 'vm:104', target: 'node1' },
      { ok: false, reason: "service 'vm:104' in error state, must be disabled and fixed first" },
    ],
    ['an unknown service', { sid: 'vm:999', target: 'node1' }, { ok: false, reason: "no such resource 'vm:999'" }],
    ['an unknown node', { sid: 'vm:102', target: 'node9' }, { ok: false, reason: "no such node 'node9'" }],
  ])('%s', (_name, request, expected) => {
    expect(judgeMotion(v, compiled, { ...request, kind: 'migrate' })).toEqual(expected);
  });
});

describe('SimulationClock: sleeping steps the simulation', () => {
  /** A simulation of 20 s rounds that ends after `rounds`. */
  function fakeSim(rounds: number): SteppedSimulation & { steps: number } {
    const s = {
      time: 0,
      ended: false,
      steps: 0,
      step() {
        if (s.ended) return false;
        s.time += 20;
        s.steps++;
        s.ended = s.steps >= rounds;
        return !s.ended;
      },
    };
    return s;
  }
  const never = new AbortController().signal;

  it.each([
    // seconds asked → rounds stepped: at least one, as many as cover the seconds
    [1, 1],
    [10, 1],
    [20, 1],
    [21, 2],
    [60, 3],
  ])('sleep(%i) runs %i round(s) of 20 s', async (seconds, rounds) => {
    const sim = fakeSim(100);
    const clock = new SimulationClock(sim, 1000, 0);
    await clock.sleep(seconds, never);
    expect(sim.steps).toBe(rounds);
    expect(clock.now()).toBe(1000 + 20 * rounds);
  });

  it('paces each round at round/speed real seconds; stops at the end of the simulation and when aborted', async () => {
    const waits: number[] = [];
    const sim = fakeSim(3);
    const clock = new SimulationClock(sim, 0, 10, async (s) => void waits.push(s));
    await clock.sleep(100, never);
    expect(waits).toEqual([2, 2, 2]); // 20 s rounds at speed 10; the simulation ended after 3
    expect(sim.ended).toBe(true);
    const aborted = new AbortController();
    aborted.abort();
    const other = fakeSim(5);
    await new SimulationClock(other, 0, 0).sleep(100, aborted.signal);
    expect(other.steps).toBe(0);
  });

  it.each([
    [0, 'sim 00:00:00'],
    [80, 'sim 00:01:20'],
    [3725, 'sim 01:02:05'],
    [-5, 'sim 00:00:00'],
  ])('simTimeLabel(%i) = %s', (seconds, label) => {
    expect(simTimeLabel(seconds)).toBe(label);
  });
});
