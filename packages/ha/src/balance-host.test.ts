import { describe, expect, test } from 'vitest';
import { snapshot, type ServiceStatus } from '@poise/env';
import { BalancerHost, type BalancerEvent } from './balance-host';
import { Manager } from './manager';
import { MemoryEnv } from './testing/memory-env';
import { ExitCode } from './tools';

const GIB = 1024 ** 3;

describe('BalancerHost: the outcome of each balancer motion, reported once', () => {
  const moving = (node: string, target: string): ServiceStatus => ({ state: 'migrate', node, target, uid: 'u' });

  test('a bundle succeeds when every member arrived; the outcome is handed out once and observed', () => {
    const events: BalancerEvent[] = [];
    const host = new BalancerHost((e) => events.push(e));
    host.issued(['vm:101', 'vm:102'], 'node1', 'node2', 100, {
      'vm:101': moving('node1', 'node2'),
      'vm:102': moving('node1', 'node2'),
    });
    host.lrmResult('vm:101', moving('node1', 'node2'), ExitCode.SUCCESS, 120);
    expect(host.takeOutcomes()).toEqual([]); // vm:102 still moving
    host.lrmResult('vm:102', moving('node1', 'node2'), ExitCode.SUCCESS, 140);
    expect(host.takeOutcomes()).toEqual([
      { resources: ['vm:101', 'vm:102'], source: 'node1', target: 'node2', ok: true, at: 140 },
    ]);
    expect(host.takeOutcomes()).toEqual([]);
    expect(events).toEqual([
      { type: 'outcome', time: 140, resources: ['vm:101', 'vm:102'], source: 'node1', target: 'node2', ok: true },
    ]);
    expect(host.waiting).toBe(false);
  });

  test('one failed member fails the bundle, with the LRM result as the detail', () => {
    const host = new BalancerHost();
    host.issued(['vm:101', 'vm:102'], 'node1', 'node2', 100, {});
    host.lrmResult('vm:101', moving('node1', 'node2'), ExitCode.ERROR, 120);
    host.lrmResult('vm:102', moving('node1', 'node2'), ExitCode.SUCCESS, 120);
    expect(host.takeOutcomes()).toEqual([
      {
        resources: ['vm:101', 'vm:102'],
        source: 'node1',
        target: 'node2',
        ok: false,
        at: 120,
        detail: 'migration error',
      },
    ]);
  });

  test("a result of a motion the balancer did not issue (a user's migrate) is not the balancer's", () => {
    const host = new BalancerHost();
    host.issued(['vm:101'], 'node1', 'node2', 100, {});
    host.lrmResult('vm:105', moving('node1', 'node2'), ExitCode.ERROR, 120);
    host.lrmResult('vm:101', moving('node1', 'node3'), ExitCode.ERROR, 120); // another target: not ours
    expect(host.takeOutcomes()).toEqual([]);
    expect(host.waiting).toBe(true);
  });

  test('a refused motion fails at once', () => {
    const host = new BalancerHost();
    host.refused(['vm:101'], 'node1', 'node2', 100);
    expect(host.takeOutcomes()).toEqual([
      { resources: ['vm:101'], source: 'node1', target: 'node2', ok: false, at: 100, detail: 'refused' },
    ]);
  });

  test('settle: a member that will never get a result is judged by where it is', () => {
    const host = new BalancerHost();
    host.issued(['vm:101'], 'node1', 'node2', 100, {});
    host.issued(['vm:102'], 'node1', 'node2', 100, {});
    host.issued(['vm:103'], 'node1', 'node2', 100, {});
    host.issued(['vm:104'], 'node1', 'node2', 100, {});
    host.settle(
      {
        // the manager ignored the command (target offline): still on node1, not moving
        'vm:101': { state: 'started', node: 'node1' },
        // queued, not started yet: still in flight
        'vm:102': { state: 'started', node: 'node1', cmd: ['migrate', 'node2'] },
        // fenced away before the result
        'vm:103': { state: 'fence', node: 'node1' },
        // vm:104 was removed
      },
      140,
    );
    expect(host.takeOutcomes()).toEqual([
      { resources: ['vm:101'], source: 'node1', target: 'node2', ok: false, at: 140, detail: 'motion not carried out' },
      { resources: ['vm:103'], source: 'node1', target: 'node2', ok: false, at: 140, detail: 'motion not carried out' },
      { resources: ['vm:104'], source: 'node1', target: 'node2', ok: false, at: 140, detail: 'service removed' },
    ]);
    expect(host.waiting).toBe(true); // vm:102
  });
});

/**
 * A dynamic-mode manager on three nodes whose services all run on node1 (imbalance far above
 * the threshold). `crs` are the datacenter keys; `results` decides the LRM result (exit code)
 * of each migrate/relocate the manager starts. Returns the log lines of every round.
 */
function dynamicRun(options: {
  rounds: number;
  crs: Record<string, unknown>;
  profile?: 'pve-9.2' | 'pve-5.2.0';
  exitCode?: (sid: string, target: string) => number;
  nodeStats?: (round: number) => Record<string, Record<string, number>>;
  memhost?: number;
}): { lines: string[]; events: BalancerEvent[] } {
  const env = new MemoryEnv('node1', ['node1', 'node2', 'node3']);
  const sids = ['vm:101', 'vm:102', 'vm:103'];
  const services: Record<string, Record<string, unknown>> = {};
  const status: Record<string, Record<string, unknown>> = {};
  const staticStats: Record<string, unknown> = {};
  const dynamicStats: Record<string, unknown> = {};
  const where = new Map(sids.map((sid) => [sid, 'node1']));
  for (const sid of sids) {
    services[sid] = {
      node: 'node1',
      state: 'started',
      type: 'vm',
      name: sid.slice(3),
      failback: 1,
      max_restart: 1,
      max_relocate: 1,
    };
    status[sid] = { state: 'started', node: 'node1', running: 1, uid: `u-${sid}` };
    staticStats[sid] = { maxcpu: 4, maxmem: 8 * GIB };
    dynamicStats[sid] =
      options.memhost === undefined ? { cpu: 2, mem: 4 * GIB } : { cpu: 2, mem: 4 * GIB, memhost: options.memhost };
  }
  env.setServices(services);
  env.managerStatus = snapshot({
    node_status: { node1: 'online', node2: 'online', node3: 'online' },
    service_status: status,
  }) as never;
  env.staticServiceStats = snapshot(staticStats) as never;
  env.dynamicServiceStats = snapshot(dynamicStats) as never;
  env.datacenter = snapshot({ ha: {}, crs: { ha: 'dynamic', 'ha-auto-rebalance': 1, ...options.crs } });
  const events: BalancerEvent[] = [];
  let manager: Manager | undefined;
  for (let round = 1; round <= options.rounds; round++) {
    env.time = 20 * round;
    // measured node stats: the services where they are, plus what the test adds
    const extra = options.nodeStats?.(round) ?? {};
    const nodes: Record<string, Record<string, number>> = {};
    for (const n of ['node1', 'node2', 'node3']) {
      const on = sids.filter((sid) => where.get(sid) === n).length;
      nodes[n] = { cpu: 2 * on, maxcpu: 16, mem: 4 * GIB * on, maxmem: 64 * GIB, ...extra[n] };
    }
    env.dynamicNodeStats = snapshot(nodes) as never;
    manager ??= new Manager(env, { profile: options.profile ?? 'pve-9.2', onBalancerEvent: (e) => events.push(e) });
    manager.manage();
    // the LRM of node1 carries out what the manager started: a result for each moving service
    const results: Record<string, unknown> = {};
    const ss = env.managerStatus.service_status ?? {};
    for (const sid of sids) {
      const sd = ss[sid]!;
      if (sd.state !== 'migrate' && sd.state !== 'relocate') continue;
      const code = options.exitCode?.(sid, sd.target!) ?? ExitCode.SUCCESS;
      results[sd.uid!] = { sid, state: sd.state, exit_code: code };
      if (code === ExitCode.SUCCESS) where.set(sid, sd.target!);
    }
    env.lrm.set('node1', snapshot({ mode: 'active', results }) as never);
  }
  return { lines: env.lines, events };
}

const balancerLines = (lines: string[]) =>
  lines.filter((l) => l.includes('auto rebalance') || l.includes('invalid value'));

describe('loadBalance with the variant keys (pve-9.2)', () => {
  test('without a variant key nothing is explained: only the reference lines', () => {
    const { lines } = dynamicRun({ rounds: 6, crs: {} });
    // hold 3: the move in round 3 (t=60), the next one 3 rounds after the first is done
    expect(balancerLines(lines)).toEqual([
      'info 60 auto rebalance - migrate vm:101 to node2 (expected change for imbalance from 100.0% to 57.7%)',
    ]);
  });

  test('backoff: a failed motion is reported from the LRM result, and the next candidate moves in the following round', () => {
    const { lines, events } = dynamicRun({
      rounds: 7,
      crs: { 'ha-auto-rebalance-backoff': 60 },
      exitCode: (sid) => (sid === 'vm:101' ? ExitCode.ERROR : ExitCode.SUCCESS),
    });
    // t=60 move vm:101 → node2 (fails, LRM result read at t=80); t=100: the outcome is
    // reported, the series goes on without the hold rounds: vm:101 → node3 is next best; it
    // fails too (t=120), and another guest moves at once: one failed attempt per target
    expect(balancerLines(lines)).toEqual([
      'info 60 auto rebalance - migrate vm:101 to node2 (expected change for imbalance from 100.0% to 57.7%)',
      'warning 100 auto rebalance - vm:101 to node2 did not succeed (migration error) (attempt 1): not retried in this series, backed off for 60s until 140',
      'info 100 auto rebalance - migrate vm:101 to node3 (expected change for imbalance from 100.0% to 57.7%)',
      'warning 140 auto rebalance - vm:101 to node3 did not succeed (migration error) (attempt 1): not retried in this series, backed off for 60s until 180',
      'info 140 auto rebalance - migrate vm:102 to node2 (expected change for imbalance from 100.0% to 57.7%)',
    ]);
    expect(
      events.map(
        (e) => `${e.type} ${e.time} ${e.resources.join('+')} ${e.target}${e.type === 'outcome' ? ` ${e.ok}` : ''}`,
      ),
    ).toEqual([
      'move 60 vm:101 node2',
      'outcome 80 vm:101 node2 false',
      'move 100 vm:101 node3',
      'outcome 120 vm:101 node3 false',
      'move 140 vm:102 node2',
    ]);
  });

  test('a bad value is logged once, naming the key, and that stage is off', () => {
    const { lines } = dynamicRun({ rounds: 4, crs: { 'ha-auto-rebalance-backoff': '60s' } });
    expect(lines.filter((l) => l.includes('invalid value'))).toEqual([
      "warning 20 datacenter.cfg: invalid value '60s' for 'crs.ha-auto-rebalance-backoff' (seconds, 0 to 3600), falling back to 0 (off)",
    ]);
  });

  test('a decision not to act is logged when it changes, not every round', () => {
    const { lines } = dynamicRun({
      rounds: 8,
      crs: { 'ha-auto-rebalance-min-pressure-cpu': 10 },
      nodeStats: (round) => ({
        node1: { pressurecpusome: round < 5 ? 2 : 30 },
        node2: { pressurecpusome: 0 },
        node3: { pressurecpusome: 0 },
      }),
    });
    // rounds 1-4 no pressure (logged once), from round 5 node1 is under pressure: hold 5, 6, move in 7
    expect(balancerLines(lines)).toEqual([
      'info 20 auto rebalance - pressure gate: no node under pressure (highest cpu 2.0% < 10.0%)',
      'info 140 auto rebalance - migrate vm:101 to node2 (expected change for imbalance from 100.0% to 57.7%)',
    ]);
  });

  test('pve-5.2.0 ignores the variant keys: the reference balancer, nothing logged about them', () => {
    const crs = {
      'ha-auto-rebalance-backoff': 'bad',
      'ha-auto-rebalance-min-pressure-cpu': 10,
      'ha-auto-rebalance-threshold': 0.3,
      'ha-auto-rebalance-margin': 0.1,
    };
    const withKeys = dynamicRun({ rounds: 6, crs, profile: 'pve-5.2.0' }).lines;
    const without = dynamicRun({
      rounds: 6,
      crs: { 'ha-auto-rebalance-threshold': 0.3, 'ha-auto-rebalance-margin': 0.1 },
      profile: 'pve-5.2.0',
    }).lines;
    expect(withKeys).toEqual(without);
    expect(balancerLines(withKeys)).toEqual([
      'info 60 auto rebalance - migrate vm:101 to node2 (expected change for imbalance from 1.41 to 0.82)',
    ]);
  });

  test('contention: no move while no guest waits, then the move that spares the most, explained', () => {
    // node1 carries the three guests (6 of 16 cores) plus 7 cores of its own work from round 4:
    // (7 + 6)/16 = 81 %, and its PSI follows its load (40 % from round 4, 0.5 % before)
    const { lines } = dynamicRun({
      rounds: 40,
      crs: { 'ha-auto-rebalance-objective': 'contention' },
      nodeStats: (round): Record<string, Record<string, number>> => {
        const busy = round >= 4;
        return {
          node1: busy
            ? { cpu: 13, pressurecpusome: 40, pressurememorysome: 0 }
            : { pressurecpusome: 0.5, pressurememorysome: 0 },
          node2: { pressurecpusome: 0.2, pressurememorysome: 0 },
          node3: { pressurecpusome: 0.2, pressurememorysome: 0 },
        };
      },
    });
    const balancer = balancerLines(lines);
    // the reference would move at t=60 (imbalance 100 %); contention waits for pressure
    expect(balancer[0]).toBe(
      'info 20 auto rebalance - contention: no guest waits (highest cpu 0.5% < 5.0%, mem 0.0% < 2.0%)',
    );
    const move = balancer.findIndex((l) => l.includes('auto rebalance - migrate'));
    expect(move).toBeGreaterThan(0);
    expect(balancer[move - 1]).toMatch(
      /^info \d+ auto rebalance - vm:101 to node2 spares \d+ guest-seconds in 600 s \(node1 cpu 40\.0% → .*; confidence 0\.\d\d, (learned|usage)\)$/,
    );
    expect(balancer[move]).toMatch(
      /^info \d+ auto rebalance - migrate vm:101 to node2 \(expected change for imbalance from .* to .*\)$/,
    );
  });

  test('memhost: the scorer sees the host-side footprint, so the expected change differs', () => {
    // node1 measures 3 × 4 GiB = 12 GiB; with memhost each guest counts 12 GiB when moved
    const plain = balancerLines(dynamicRun({ rounds: 3, crs: {}, memhost: 12 * GIB }).lines);
    const host = balancerLines(
      dynamicRun({ rounds: 3, crs: { 'ha-auto-rebalance-memhost': 1 }, memhost: 12 * GIB }).lines,
    );
    expect(plain).toEqual([
      'info 60 auto rebalance - migrate vm:101 to node2 (expected change for imbalance from 100.0% to 57.7%)',
    ]);
    expect(host).not.toEqual(plain);
    expect(host[0]).toMatch(
      /^info 60 auto rebalance - migrate vm:101 to node2 \(expected change for imbalance from 100\.0% to /,
    );
  });
});
