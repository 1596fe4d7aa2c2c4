import { describe, expect, test } from 'vitest';
import { snapshot } from '@poise/env';
import { formatImbalance, scorableCandidates } from './balance';
import { Manager } from './manager';
import { MemoryEnv } from './testing/memory-env';
import { CrsUsage } from './usage-model';

describe('formatImbalance', () => {
  test.each([
    // pve-5.2.0 prints the raw CV with %.2f (C rounding of the exact binary value)
    [Math.SQRT2, 'pve-5.2.0', '1.41'],
    [0.125, 'pve-5.2.0', '0.12'],
    // pve-9.2 prints percent with one decimal: 0.661 → 66.1%
    [1, 'pve-9.2', '100.0%'],
    [0.6611, 'pve-9.2', '66.1%'],
  ])('%s under %s is %s', (value, profile, expected) => {
    expect(formatImbalance(value, profile)).toBe(expected);
  });
});

const GIB = 1024 ** 3;

/**
 * A manager whose three services run on node1 of three equal nodes (static mode, imbalance far
 * above the threshold); `crs` per round comes from `crsAt(round)`, node stats from `nodesAt`.
 */
function balancingRun(
  rounds: number,
  crsAt: (round: number) => Record<string, unknown>,
  nodesAt: (round: number) => Record<string, unknown> = () => ({}),
): string[] {
  const env = new MemoryEnv('node1', ['node1', 'node2', 'node3']);
  const node = { maxcpu: 16, maxmem: 64 * GIB };
  const services: Record<string, Record<string, unknown>> = {};
  const status: Record<string, Record<string, unknown>> = {};
  const stats: Record<string, unknown> = {};
  for (const sid of ['vm:101', 'vm:102', 'vm:103']) {
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
    stats[sid] = { maxcpu: 4, maxmem: 8 * GIB };
  }
  env.setServices(services);
  env.managerStatus = snapshot({
    node_status: { node1: 'online', node2: 'online', node3: 'online' },
    service_status: status,
  }) as never;
  env.staticServiceStats = snapshot(stats) as never;
  let manager: Manager | undefined;
  const moves: string[] = [];
  for (let round = 1; round <= rounds; round++) {
    env.time = 20 * round;
    env.datacenter = snapshot({ ha: {}, crs: crsAt(round) });
    env.staticNodeStats = snapshot({ node1: node, node2: node, node3: node, ...nodesAt(round) });
    manager ??= new Manager(env, { profile: 'pve-9.2' });
    env.lines = [];
    manager.manage();
    moves.push(...env.lines.filter((l) => /auto rebalance - (migrate|relocate) /.test(l)).map(() => `round ${round}`));
  }
  return moves;
}

describe('load_balance: the hold counter (spec §3.7)', () => {
  const crs = (method: string) => ({
    ha: 'static',
    'ha-auto-rebalance': 1,
    'ha-auto-rebalance-hold-duration': 3,
    'ha-auto-rebalance-method': method,
  });

  test('counts with an unknown method (which scores nothing): a known method from round 3 moves at once', () => {
    // rounds 1, 2 above the threshold with method 'random': 1, 2; round 3 with bruteforce: 3 = hold → move
    expect(balancingRun(3, (r) => crs(r < 3 ? 'random' : 'bruteforce'))).toEqual(['round 3']);
  });

  test('resets when the static init fails and the usage falls back to basic (no load: imbalance 0)', () => {
    // rounds 1, 2: 1, 2; round 3: node2 has no maxmem → basic → reset to 0; rounds 4, 5, 6: 1, 2, 3 → move
    const moves = balancingRun(
      6,
      () => crs('bruteforce'),
      (r) => (r === 3 ? { node2: { maxcpu: 16 } } : {}),
    );
    expect(moves).toEqual(['round 6']);
  });

  test('with variant stages on, a fallback to basic runs the reference stages instead of failing the round', () => {
    // the pressure and smoothing stages need node telemetry, which the basic usage has not:
    // round 3 falls back to basic (reset), rounds 4, 5 hold; the missing telemetry fails open
    const variant = { 'ha-auto-rebalance-min-pressure-cpu': 10, 'ha-auto-rebalance-smoothing': 300 };
    const moves = balancingRun(
      6,
      () => ({ ...crs('bruteforce'), ...variant }),
      (r) => (r === 3 ? { node2: { maxcpu: 16 } } : {}),
    );
    expect(moves).toEqual(['round 6']);
  });

  test('stays untouched while the configured mode is not static or dynamic', () => {
    // rounds 1, 2: 1, 2; round 3 basic: no balancing, counter kept; round 4: 3 → move
    const moves = balancingRun(4, (r) => (r === 3 ? { ...crs('bruteforce'), ha: 'basic' } : crs('bruteforce')));
    expect(moves).toEqual(['round 4']);
  });
});

describe('scorableCandidates: the pve-9.2 rule on top of the rules query', () => {
  test('a bundle with a member outside the usage is not a candidate; the others are, with the memory they copy', () => {
    // vm:102 has no static stats, so the usage leaves it out (with a warning)
    const env = new MemoryEnv('node1', ['node1', 'node2']);
    const node = { maxcpu: 16, maxmem: 64 * GIB };
    env.staticNodeStats = snapshot({ node1: node, node2: node });
    env.staticServiceStats = snapshot({
      'vm:101': { maxcpu: 4, maxmem: 8 * GIB },
      'vm:103': { maxcpu: 2, maxmem: 2 * GIB },
    });
    const usage = new CrsUsage(env, 'static', ['node1', 'node2'], 'normalized');
    for (const sid of ['vm:101', 'vm:102', 'vm:103'])
      usage.addServiceUsage(sid, snapshot({ state: 'started', node: 'node1', running: 1 }));
    const candidates = [
      { leader: 'vm:101', resources: ['vm:101'], targets: ['node2'], source: 'node1' },
      // a bundle of vm:102 with vm:103: one member outside the usage drops the whole bundle
      { leader: 'vm:102', resources: ['vm:102', 'vm:103'], targets: ['node2'], source: 'node1' },
      { leader: 'vm:103', resources: ['vm:103'], targets: ['node2'], source: 'node1' },
    ];
    // static mode: the memory a move copies is the configured maxmem (8 GiB, 2 GiB)
    expect(scorableCandidates(candidates, usage)).toEqual([
      { leader: 'vm:101', resources: ['vm:101'], targets: ['node2'], source: 'node1', transferBytes: 8 * GIB },
      { leader: 'vm:103', resources: ['vm:103'], targets: ['node2'], source: 'node1', transferBytes: 2 * GIB },
    ]);
  });
});
