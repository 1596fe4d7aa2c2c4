import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILTIN_REGISTRY } from '@poise/ha';
import type { Stage } from '@poise/policy';
import { parseConfig } from '../config/load';
import { Daemon } from '.';
import { FakeCluster, fakeHost } from '../testing/fake-cluster';
import { localLockFs } from './lock';
import { Logger } from '../log';

// A policy stage that breaks its contract (a plug-in's: it throws, returns undefined, keeps state
// that is not JSON): every failing round is an error naming the plug-in, the stage and the
// round; after limits.max-failing-rounds in a row the daemon stops balancing with one error
// (logged once, on /status), and still follows the motion in flight; a reload re-enables it.

const GIB = 1024 ** 3;

/** How the plug-in's stage behaves this round (the test switches it). */
type Mode = 'ok' | 'throw' | 'undefined' | 'non-json' | 'observe-throws';

function brokenPlugin(mode: { now: Mode }) {
  const KEY = { key: 'broken', type: 'flag', off: false, recommended: false, description: 'd', why: 'w' } as const;
  const stage: Stage = {
    name: 'broken-gate',
    kind: 'gate',
    initialState: () => ({ n: 0 }),
    observe: (_facts, state) => {
      if (mode.now === 'observe-throws') throw new Error('observe blew up');
      return { state };
    },
    run: (_ctx, plan, state) => {
      const n = (state as { n: number }).n + 1;
      if (mode.now === 'throw') throw new Error('kaboom');
      if (mode.now === 'undefined') return undefined as never;
      if (mode.now === 'non-json') return { plan, state: { n, at: () => n } };
      return { plan, state: { n } };
    },
  };
  return { name: 'broken', keys: { on: KEY }, stages: () => [{ slot: 'gate' as const, order: 0, stage }] };
}

function setup(limit: number, mode: { now: Mode }) {
  const dir = mkdtempSync(join(tmpdir(), 'poise-stage-failure-'));
  const registry = BUILTIN_REGISTRY.with([{ plugin: brokenPlugin(mode), origin: './broken.js' }]);
  const doc = {
    env: 'pve',
    mode: 'act',
    pve: { urls: ['https://node1:8006'], 'token-env': 'POISE_TEST_TOKEN' },
    state: { file: join(dir, 'state.json') },
    metrics: { enabled: false },
    lock: { enabled: false },
    limits: { 'max-failing-rounds': limit },
    policy: { 'ha-auto-rebalance-preset': 'reference', 'ha-auto-rebalance-hold-duration': 1, broken: 1 },
  };
  const file = join(dir, 'poise-manager.yaml');
  const config = parseConfig(doc, file, {}, registry);
  // three nodes, six VMs of 2 cores / 8 GiB on node1: the reference moves one at once
  const cluster = FakeCluster.create({
    nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }],
    guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104', 'vm:105', 'vm:106'].map((sid) => ({
      sid,
      node: 'node1',
      cpu: 2,
      mem: 8 * GIB,
    })),
  });
  const host = fakeHost(cluster);
  const lines: string[] = [];
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
    reloadConfig: () => parseConfig(doc, file, {}, registry),
  });
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const never = new AbortController().signal;
  return {
    cluster,
    daemon,
    records,
    rounds: () => records().filter((r) => r.event === 'round'),
    run: async (n: number) => {
      for (let i = 0; i < n; i++) {
        await daemon.runRound();
        await host.clock.sleep(config.intervalSeconds, never);
      }
    },
  };
}

describe('a failing policy stage in the daemon', () => {
  const cases: Array<{ mode: Mode; problem: string }> = [
    { mode: 'throw', problem: 'run() threw: kaboom' },
    { mode: 'undefined', problem: 'run() returned undefined, expected {plan, state} or {stop, state}' },
    { mode: 'non-json', problem: 'run() returned a state that is not plain JSON: state.at is a function' },
  ];
  for (const c of cases) {
    it(`${c.mode}: each round names plug-in, stage and round; after the limit balancing stops once`, async () => {
      const mode = { now: c.mode };
      const s = setup(3, mode);
      await s.daemon.start();
      await s.run(6);
      const rounds = s.rounds();
      expect(rounds.map((r) => [r.round, r.level, r.reason])).toEqual([
        [1, 'error', 'stage-failed'],
        [2, 'error', 'stage-failed'],
        [3, 'error', 'balancing-stopped'],
        [4, 'info', 'balancing-stopped'],
        [5, 'info', 'balancing-stopped'],
        [6, 'info', 'balancing-stopped'],
      ]);
      expect(rounds[0]!.msg).toMatch(
        new RegExp(
          `^the policy failed \\(1 of 3 rounds in a row before balancing stops, limits\\.max-failing-rounds\\): plug-in 'broken': stage 'broken-gate' failed in round 1 \\(at 2026-01-01T00:00:00Z\\): ${c.problem.replace(/[().{}]/g, '\\$&')}$`,
        ),
      );
      expect(rounds[0]).toMatchObject({ plugin: 'broken', stage: 'broken-gate', hook: 'run', failingRounds: 1 });
      // the error that stops balancing: once, with the last failure and what the daemon still does
      const stops = s.records().filter((r) => String(r.msg).startsWith('balancing stopped:'));
      expect(stops).toHaveLength(1);
      expect(stops[0]!.msg).toMatch(
        /^balancing stopped: the policy failed in 3 rounds in a row \(limits\.max-failing-rounds 3\), the last: plug-in 'broken': stage 'broken-gate' failed in round 3 .*; the daemon still reads the cluster, follows a motion in flight and keeps the lock; a reload \(SIGHUP\) or a restart re-enables balancing$/,
      );
      expect(rounds[4]!.msg).toBe(
        "balancing stopped in round 3 (a policy stage kept failing: plug-in 'broken', stage 'broken-gate'); a reload (SIGHUP) or a restart re-enables it",
      );
      expect(s.cluster.s.requests).toEqual([]);
      // /status says it first
      const status = s.daemon.status();
      expect(status.notice).toBe(stops[0]!.msg);
      expect(status.balancingStopped).toMatchObject({ round: 3, plugin: 'broken', stage: 'broken-gate' });

      // the stage mended and the config reloaded: balancing runs again, the count from 0
      mode.now = 'ok';
      s.daemon.reload();
      expect(s.records().map((r) => r.msg)).toContain('balancing re-enabled (it had stopped in round 3)');
      expect(s.daemon.status().balancingStopped).toBeNull();
      await s.run(1);
      expect(s.rounds().at(-1)!.reason).not.toBe('balancing-stopped');
      expect(s.cluster.s.requests).toHaveLength(1);
    });
  }

  it('a clean round resets the count: only failures in a row stop balancing', async () => {
    const mode: { now: Mode } = { now: 'throw' };
    const s = setup(2, mode);
    await s.daemon.start();
    await s.run(1);
    mode.now = 'ok';
    await s.run(1); // a motion requested
    mode.now = 'throw';
    await s.run(1); // a motion in flight: the motion-in-flight gate stops first, the stage does not run
    const reasons = s.rounds().map((r) => r.reason);
    expect(reasons[0]).toBe('stage-failed');
    expect(reasons).not.toContain('balancing-stopped');
  });

  it('stopped while a motion is in flight, the daemon still follows it to its outcome', async () => {
    const mode: { now: Mode } = { now: 'ok' };
    const s = setup(2, mode);
    await s.daemon.start();
    await s.run(1);
    expect(s.cluster.s.requests.map((r) => r.sid)).toEqual(['vm:101']);
    // observe runs every round, also while a motion is in flight: it fails these rounds
    mode.now = 'observe-throws';
    await s.run(4);
    const reasons = s.rounds().map((r) => r.reason);
    expect(reasons.slice(1, 3)).toEqual(['stage-failed', 'balancing-stopped']);
    expect(s.rounds()[1]!.msg).toContain("plug-in 'broken': stage 'broken-gate' failed in round 2");
    expect(s.rounds()[1]!.msg).toContain('observe() threw: observe blew up');
    // the motion was followed to its end; no other was requested
    const outcomes = s.daemon.currentState().outcomes;
    expect(outcomes.map((o) => [o.sid, o.result])).toEqual([['vm:101', 'succeeded']]);
    expect(s.daemon.currentState().motion).toBeNull();
    expect(s.cluster.s.requests).toHaveLength(1);
  });
});
