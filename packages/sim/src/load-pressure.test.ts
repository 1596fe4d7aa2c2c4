import { describe, expect, it } from 'vitest';
import {
  RunRecorder,
  SimError,
  Simulation,
  parseLoadPressure,
  summarizeRun,
  type CaseInput,
  type RunRecord,
} from './index';
import { Hardware } from './hardware';
import { moveOutcomes } from './move-outcomes';

const GIB = 1024 ** 3;

/**
 * Two 8-core, 32 GiB nodes; four guests of 1.6 cores (4 vcpus) and 4 GiB on node1; the load
 * pressure model with a straight-line cpu curve (percent = 100 × load ratio) unless told
 * otherwise.
 */
function packed(
  extra: { cmdlist?: string[][]; crs?: Record<string, unknown>; loadPressure?: unknown; seed?: number } = {},
): CaseInput {
  const off = { power: 'off', network: 'off', maxcpu: 8, maxmem: 32 * GIB };
  const sids = ['vm:101', 'vm:102', 'vm:103', 'vm:104'];
  return {
    name: 'packed',
    cmdlist: extra.cmdlist ?? [['power node1 on', 'power node2 on']],
    hardwareStatus: { node1: { ...off }, node2: { ...off } },
    serviceConfig: Object.fromEntries(sids.map((s) => [s, { node: 'node1', state: 'started' }])),
    managerStatus: {},
    rulesConfig: '',
    groups: '',
    datacenterCfg: { ha: {}, crs: { ha: 'dynamic', ...(extra.crs ?? {}) } },
    staticServiceStats: Object.fromEntries(sids.map((s) => [s, { maxcpu: 4, maxmem: 8 * GIB }])),
    dynamicServiceStats: Object.fromEntries(sids.map((s) => [s, { cpu: 1.6, mem: 4 * GIB }])),
    serviceStatus: { node1: {}, node2: {} },
    simOptions: {
      seed: extra.seed ?? 0,
      pressureModel: 'load',
      loadPressure: parseLoadPressure(
        extra.loadPressure ?? {
          cpu: {
            family: 'piecewise',
            points: [
              [0, 0],
              [1, 100],
            ],
          },
        },
        'test',
        ['load-pressure'],
        ['node1', 'node2'],
      ),
    },
  };
}

function record(sim: Simulation, recorder: RunRecorder): RunRecord {
  return { nodes: recorder.nodes, rounds: recorder.rounds, moves: recorder.resourceMoves(), endTime: sim.time };
}

describe('the load pressure model in a simulation', () => {
  it('reaches the HA core through the node stats, the path scripted pressure takes', () => {
    const sim = new Simulation(packed(), { profile: 'pve-9.2' });
    sim.step(); // 0 → 20: power on
    sim.step(); // 20 → 40: the guests start on node1
    sim.step(); // 40 → 60: the round runs at 6.4 of 8 cores: 80 %
    // the average after one 20 s round at 80 % (τ = 10 s): 80 · (1 − e^−2) = 69.17
    expect(sim.sample().get('node1')).toMatchObject({ cpu: 6.4, pressureCpu: 69.17, pressureMem: 0, truthCpu: 80 });
    expect(sim.view().nodeStats.get('node1')).toMatchObject({ pressurecpusome: 69.17, pressurememorysome: 0 });
    // the document the CRM reads (SimBackend of @poise/env)
    const hw = new Hardware(packed(), { profile: 'pve-9.2' });
    expect(hw.getDynamicNodeStats().node1).toMatchObject({ pressurecpusome: 0, pressurememorysome: 0 });
  });

  it('the pressure gate acts on it: no move below 10 %, a move once the load presses', () => {
    // 4 × 0.4 cores on node1: 1.6 / 8 = 20 % cpu some under the straight line; with the gate at
    // 30 % nothing moves although the imbalance is 100 %
    const calm = packed({ crs: { 'ha-auto-rebalance': 1, 'ha-auto-rebalance-min-pressure-cpu': 30 } });
    for (const s of Object.keys(calm.dynamicServiceStats)) calm.dynamicServiceStats[s]!.cpu = 0.4;
    const a = new Simulation(calm, { profile: 'pve-9.2' });
    const ra = new RunRecorder(a);
    a.run();
    expect(ra.motions).toEqual([]);
    expect(a.log()).toMatch(/pressure gate: no node under pressure/);
    expect(Math.max(...ra.rounds.pressureCpu[0]!.map((v) => v ?? 0))).toBe(20);
    // at 80 % the gate opens once the reported average passes 30 %: moves follow
    const b = new Simulation(packed({ crs: { 'ha-auto-rebalance': 1, 'ha-auto-rebalance-min-pressure-cpu': 30 } }), {
      profile: 'pve-9.2',
    });
    const rb = new RunRecorder(b);
    b.run();
    expect(rb.motions.length).toBeGreaterThan(0);
    expect(rb.motions[0]).toMatchObject({ source: 'node1', target: 'node2', ok: true });
  });

  it('guest contention-seconds: cpu stall by hand, plus what the migrations cost', () => {
    // no balancer: the four guests stay on node1 at 80 %; each wants cpu 1 − (1 − 0.4)⁴ = 0.8704
    // of the time and waits 80 % of that: 0.69632 guest-s per s each, 2.78528 for the four
    const sim = new Simulation(packed(), { profile: 'pve-9.2' });
    const recorder = new RunRecorder(sim);
    sim.run();
    const summary = recorder.summary();
    // the guests run from the round starting at 40 to the end (620): 580 s × 2.78528; memory:
    // 16 GiB of 32 under the default logistic curve (knee 0.95), a stall of the order of 1e-12
    expect(summary.guestContentionSeconds).toBeCloseTo(580 * 2.78528, 6);
    expect(summary.pressureSeconds).toBe(560); // reported ≥ 10 % from the sample at 60 on
    // with the balancer, two guests move, each 4 GiB with 1.6 of its 4 vcpus busy, one at a time:
    // dirty 1.6 × 32 = 51.2 MiB/s over 1000 MiB/s, λ = 0.0512; 4096 → 209.72 → 10.74 MiB (≤ 100):
    // 4316.45 MiB copied in 4.31645 s + 2 s of set-up, paused 0.010737 s; each guest pays
    // 10 % × 0.4 × 6.31645 + 0.010737 = 0.263395 guest-seconds
    const moved = new Simulation(packed({ crs: { 'ha-auto-rebalance': 1 } }), { profile: 'pve-9.2' });
    const r2 = new RunRecorder(moved);
    moved.run();
    const truth = moved.groundTruth()!;
    const migration = [...truth.guests.values()].reduce((a, g) => a + g.migrationStallSeconds, 0);
    expect(r2.resourceMoves().filter((m) => m.ok)).toHaveLength(2);
    const own = 2 * (0.1 * 0.4 * (2 + 4316.4526 / 1000) + 10.7374 / 1000);
    // ... and the transfer keeps a core busy on both ends for 6.32 s: the guests there wait more
    // (at most all of them, all the time, for both transfers: 4 guests × 6.32 s × 2)
    const induced = migration - own;
    expect(induced).toBeGreaterThan(0);
    expect(induced).toBeLessThan(4 * 6.32 * 2);
    expect(r2.summary().migrationSeconds).toBeCloseTo(migration, 9);
    const byGuest = (sid: string) => truth.guests.get(sid)!.migrationStallSeconds;
    expect(byGuest('vm:101') + byGuest('vm:102')).toBeGreaterThan(own);
    const total = [...truth.guests.values()].reduce(
      (a, g) => a + g.cpuStallSeconds + g.memStallSeconds + g.migrationStallSeconds,
      0,
    );
    expect(r2.summary().guestContentionSeconds).toBeCloseTo(total, 6);
    // balancing relieved the guests: 2 per node at 40 % from about 200 s on, half the stall
    expect(r2.summary().guestContentionSeconds!).toBeLessThan(0.6 * summary.guestContentionSeconds!);
  });

  it('a live migration that cannot converge without auto-converge fails at the timeout: the guest stays', () => {
    // 1.6 busy cores dirty 1.6 × 800 = 1280 MiB/s over a 1000 MiB/s link: λ > 1, no throttle,
    // 30 s of copying, then the LRM reports the failure and the guest keeps running on node1
    const stuck = packed({
      crs: { 'ha-auto-rebalance': 1 },
      loadPressure: {
        cpu: {
          family: 'piecewise',
          points: [
            [0, 0],
            [1, 100],
          ],
        },
        migration: { 'auto-converge': 0, 'dirty-mib-per-core-second': 800, 'timeout-seconds': 30 },
      },
    });
    const sim = new Simulation(stuck, { profile: 'pve-9.2' });
    const recorder = new RunRecorder(sim);
    sim.run();
    expect(sim.log()).toMatch(
      /service 'vm:101' migration to node 'node2' did not converge in time, unable to migrate!/,
    );
    const moves = recorder.resourceMoves();
    expect(moves.length).toBeGreaterThan(0);
    expect(moves.every((m) => m.ok !== true)).toBe(true);
    // every guest still on node1; each failed try cost its guest 10 % × 0.4 × (2 + 30) s = 1.28
    const truth = sim.groundTruth()!;
    for (const g of truth.guests.values()) expect(g.node).toBe('node1');
    expect(truth.guests.get('vm:101')!.migrationStallSeconds).toBeGreaterThanOrEqual(1.28 - 1e-9);
  });

  it('moveOutcomes: each landed move with the pressure of source and target before and after', () => {
    const sim = new Simulation(packed({ crs: { 'ha-auto-rebalance': 1 } }), { profile: 'pve-9.2' });
    const recorder = new RunRecorder(sim);
    sim.run();
    const outcomes = moveOutcomes(record(sim, recorder))!;
    expect(outcomes.map((o) => [o.sid, o.time, o.landedAt])).toEqual([
      ['vm:101', 80, 120],
      ['vm:102', 160, 200],
    ]);
    // vm:101: node1 80 % (6.4 of 8) before; after, 4.8 of 8 = 60 % and node2 1.6 of 8 = 20 %
    expect(outcomes[0]!.before.source.cpu).toBeCloseTo(80, 9);
    expect(outcomes[0]!.before.target.cpu).toBe(0);
    expect(outcomes[0]!.after.source.cpu).toBeCloseTo(60, 9);
    expect(outcomes[0]!.after.target.cpu).toBeCloseTo(20, 9);
    // the nodes report the new state a round later, through the average: 60 + (80 − 60)·e^−2 … settling
    expect(outcomes[0]!.reportedAfter!.target.cpu).toBeGreaterThan(15);
    // without the model there is nothing to compare with
    expect(
      moveOutcomes({ ...record(sim, recorder), rounds: { ...recorder.rounds, truth: undefined } }),
    ).toBeUndefined();
  });

  it('is deterministic: the same case and seed give the same log and record, another seed other noise', () => {
    const noisy = {
      cpu: { family: 'queue', burstiness: 2, 'noise-percent': 3, 'outlier-probability': 0.05, 'outlier-percent': 20 },
      heterogeneity: 0.3,
    };
    const run = (seed: number) => {
      const sim = new Simulation(packed({ loadPressure: noisy, crs: { 'ha-auto-rebalance': 1 } }), {
        profile: 'pve-9.2',
        seed,
      });
      const recorder = new RunRecorder(sim);
      sim.run();
      return { log: sim.log(), rounds: JSON.stringify(recorder.rounds), summary: JSON.stringify(recorder.summary()) };
    };
    const a = run(5);
    expect(run(5)).toEqual(a);
    expect(run(6).rounds).not.toEqual(a.rounds);
  });

  it('a summary of the same record is the same number: summarizeRun = recorder.summary', () => {
    const sim = new Simulation(packed({ crs: { 'ha-auto-rebalance': 1 } }), { profile: 'pve-9.2' });
    const recorder = new RunRecorder(sim);
    sim.run();
    expect(summarizeRun(JSON.parse(JSON.stringify(record(sim, recorder))))).toEqual(recorder.summary());
  });

  it('refuses a scripted pressure command at run time, and leaves scripted runs without ground truth', () => {
    const sim = new Simulation(packed(), { profile: 'pve-9.2' });
    sim.step();
    expect(() => sim.execute('node node1 set-dynamic-stats pressurecpusome 12')).toThrow(SimError);
    expect(() => sim.execute('node node1 set-dynamic-stats cpu 2')).not.toThrow();
    const scripted = packed();
    delete scripted.simOptions;
    const plain = new Simulation(scripted, { profile: 'pve-9.2' });
    const recorder = new RunRecorder(plain);
    plain.run();
    expect(plain.pressureModel).toBe('scripted');
    expect(plain.groundTruth()).toBeUndefined();
    expect(recorder.rounds.truth).toBeUndefined();
    expect(recorder.summary().guestContentionSeconds).toBeNull();
    expect(plain.sample().get('node1')!.pressureCpu).toBeUndefined();
  });

  it('a node without PSI reports none to the HA core; its guests still count', () => {
    const input = packed({
      loadPressure: {
        cpu: {
          family: 'piecewise',
          points: [
            [0, 0],
            [1, 100],
          ],
        },
        nodes: { node1: { psi: false } },
      },
    });
    const sim = new Simulation(input, { profile: 'pve-9.2' });
    const recorder = new RunRecorder(sim);
    sim.run();
    expect(sim.view().nodeStats.get('node1')!.pressurecpusome).toBeUndefined();
    expect(sim.view().nodeStats.get('node2')!.pressurecpusome).toBe(0);
    expect(recorder.summary().guestContentionSeconds).toBeGreaterThan(1000);
  });
});
