import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  Prng,
  RunRecorder,
  SimError,
  Simulation,
  parseCrsOverride,
  summarizeRun,
  timeWeightedMean,
  withCrsOverrides,
  type CaseInput,
  type RecordedMotion,
  type ResourceMove,
  type RunRecord,
} from './index';
import { Hardware } from './hardware';
import { countPingPongs, pressureNodeSeconds, resourceMoves } from './summary';
import { walkStep } from './noise';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** Two 16-core, 64 GiB nodes; vm:101 and vm:102 on node1 (in memory, no loader checks). */
function twoNodes(cmdlist: string[][], extra: Partial<CaseInput> = {}): CaseInput {
  const off = { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GIB };
  return {
    name: 'two-nodes',
    cmdlist,
    hardwareStatus: { node1: { ...off }, node2: { ...off } },
    serviceConfig: { 'vm:101': { node: 'node1', state: 'started' }, 'vm:102': { node: 'node1', state: 'started' } },
    managerStatus: {},
    rulesConfig: '',
    groups: '',
    datacenterCfg: { ha: {}, crs: { ha: 'dynamic' } },
    staticServiceStats: { 'vm:101': { maxcpu: 4, maxmem: 8 * GIB }, 'vm:102': { maxcpu: 4, maxmem: 8 * GIB } },
    dynamicServiceStats: { 'vm:101': { cpu: 2, mem: 4 * GIB }, 'vm:102': { cpu: 1, mem: 2 * GIB } },
    serviceStatus: { node1: {}, node2: {} },
    ...extra,
  };
}

const powerOn = ['power node1 on', 'power node2 on'];

describe('node <node> set-dynamic-stats: load and pressure outside the HA services', () => {
  it('adds the base load to the measured node stats and reports the pressure once set', () => {
    const sim = new Simulation(
      twoNodes([[...powerOn, 'node node1 set-dynamic-stats cpu 1.5 mem 1024 pressurecpusome 12']]),
      { profile: 'pve-9.2' },
    );
    sim.step(); // 0 → 20: the commands
    sim.step(); // 20 → 40: the LRM starts both guests on node1
    const s = sim.sample();
    // node1: 1.5 + 2 + 1 cores, 1 GiB + 4 GiB + 2 GiB
    expect(s.get('node1')).toEqual({
      online: true,
      cpu: 4.5,
      maxcpu: 16,
      mem: 7 * GIB,
      maxmem: 64 * GIB,
      pressureCpu: 12,
      pressureMem: undefined,
    });
    // node2 reports no pressure at all (not 0)
    expect(s.get('node2')).toEqual({
      online: true,
      cpu: 0,
      maxcpu: 16,
      mem: 0,
      maxmem: 64 * GIB,
      pressureCpu: undefined,
      pressureMem: undefined,
    });
    expect(sim.view().nodeStats.get('node1')!.pressurecpusome).toBe(12);
  });

  it('counts a guest with its host-side footprint (memhost) when it reports one', () => {
    const input = twoNodes([powerOn], {
      dynamicServiceStats: { 'vm:101': { cpu: 2, mem: 4 * GIB, memhost: 6 * GIB }, 'vm:102': { cpu: 1, mem: 2 * GIB } },
    });
    const sim = new Simulation(input, { profile: 'pve-9.2' });
    sim.step();
    sim.step();
    expect(sim.sample().get('node1')!.mem).toBe(8 * GIB);
  });
});

describe('node <node> set-noise: a seeded, bounded random walk on the base load', () => {
  it('walkStep stays within [max(−A, −base), A] and is 0 without amplitude', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: -1, max: 1, maxExcluded: true, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (amplitude, base, u, at) => {
          const lower = Math.max(-amplitude, -base);
          const x = lower + at * (amplitude - lower); // any point of the range
          const next = walkStep(x, amplitude, base, u);
          return next >= lower && next <= amplitude && base + next >= 0 && Math.abs(next - x) <= amplitude + 1e-9;
        },
      ),
    );
    expect(walkStep(0.3, 0, 1, 0.9)).toBe(0);
    // reflection: from 0.9 a step of +0.5 goes to 1.4, reflected at 1 to 0.6
    expect(walkStep(0.9, 1, 5, 0.5)).toBeCloseTo(0.6, 12);
    // at the lower edge set by the base (0.2): from −0.1 a step of −0.5 goes to −0.6, reflected at −0.2 to 0.2
    expect(walkStep(-0.1, 1, 0.2, -0.5)).toBeCloseTo(0.2, 12);
  });

  it('Prng: uniform in [−1, 1), the same sequence for the same seed', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const c = new Prng(43);
    const xs = Array.from({ length: 1000 }, () => a.nextSigned());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b.nextSigned()));
    expect(xs).not.toEqual(Array.from({ length: 1000 }, () => c.nextSigned()));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(-1);
    expect(Math.max(...xs)).toBeLessThan(1);
    // roughly centred: the mean of 1000 uniform draws is within 0.1 of 0
    expect(Math.abs(xs.reduce((s, x) => s + x, 0) / xs.length)).toBeLessThan(0.1);
  });

  const noisy = (seed: number | undefined) => {
    const cmds = [
      [
        ...powerOn,
        'node node1 set-dynamic-stats cpu 0.1',
        'node node1 set-noise cpu 0.5 mem 512',
        'node node2 set-noise cpu 0.25',
      ],
      ['delay 5000'],
    ];
    const sim = new Simulation(twoNodes(cmds, { serviceConfig: {}, staticServiceStats: {}, dynamicServiceStats: {} }), {
      profile: 'pve-9.2',
      seed,
    });
    const samples: Array<[number, number, number]> = [];
    for (let i = 0; i < 200; i++) {
      sim.step();
      const s = sim.sample();
      samples.push([s.get('node1')!.cpu, s.get('node1')!.mem, s.get('node2')!.cpu]);
    }
    return samples;
  };

  it('is resampled every round, deterministic per seed, and never makes a load negative', () => {
    const one = noisy(1);
    expect(noisy(1)).toEqual(one);
    expect(noisy(2)).not.toEqual(one);
    for (const [cpu1, mem1, cpu2] of one) {
      // node1: base 0.1 cores, walk in [−0.1, 0.5]; memory: base 0, walk in [0, 512 MiB]
      expect(cpu1).toBeGreaterThanOrEqual(0);
      expect(cpu1).toBeLessThanOrEqual(0.6 + 1e-12);
      expect(mem1).toBeGreaterThanOrEqual(0);
      expect(mem1).toBeLessThanOrEqual(512 * MIB);
      expect(Number.isInteger(mem1)).toBe(true);
      expect(cpu2).toBeGreaterThanOrEqual(0);
      expect(cpu2).toBeLessThanOrEqual(0.25);
    }
    // it moves: more than 150 distinct values of node1's cpu in 200 rounds
    expect(new Set(one.map(([c]) => c)).size).toBeGreaterThan(150);
  });

  it('takes the seed from sim_options unless the caller gives one', () => {
    const fromFile = new Simulation(
      twoNodes([[...powerOn, 'node node1 set-noise cpu 1']], { simOptions: { seed: 9 } }),
      { profile: 'pve-9.2' },
    );
    const explicit = new Simulation(twoNodes([[...powerOn, 'node node1 set-noise cpu 1']]), {
      profile: 'pve-9.2',
      seed: 9,
    });
    for (let i = 0; i < 5; i++) {
      fromFile.step();
      explicit.step();
    }
    expect(fromFile.sample().get('node1')!.cpu).toBe(explicit.sample().get('node1')!.cpu);
    expect(() => new Simulation(twoNodes([]), { profile: 'pve-9.2', seed: -1 })).toThrow(SimError);
  });
});

describe('sim_options max-time replaces the time limit', () => {
  it('a run past 10,000 s aborts by default and finishes with a larger max-time', () => {
    const cmds = [powerOn, ['delay 11000']];
    expect(new Simulation(twoNodes(cmds), { profile: 'pve-9.2' }).run().error).toBe(
      'simulation end - time limit reached',
    );
    const long = new Simulation(twoNodes(cmds, { simOptions: { maxTime: 20000 } }), { profile: 'pve-9.2' }).run();
    expect(long.error).toBeUndefined();
    // an explicit option still wins over the file
    expect(
      new Simulation(twoNodes(cmds, { simOptions: { maxTime: 20000 } }), {
        profile: 'pve-9.2',
        maxTimeSeconds: 5000,
      }).run().error,
    ).toBe('simulation end - time limit reached');
  });
});

describe('measured service stats follow the running state (pve-9.2)', () => {
  const input = twoNodes([], { serviceStatus: { node1: { 'vm:101': 1 }, node2: {} } });
  it('a guest that does not run measures 0 under pve-9.2', () => {
    const hw = new Hardware(input, { profile: 'pve-9.2' });
    const stats = hw.getDynamicServiceStats();
    expect(stats['vm:101']).toEqual({ cpu: 2, mem: 4 * GIB });
    expect(stats['vm:102']).toEqual({ cpu: 0, mem: 0 });
    // it starts: measured from then on
    hw.setRunning('node1', 'vm:102', 1);
    expect(hw.getDynamicServiceStats()['vm:102']).toEqual({ cpu: 1, mem: 2 * GIB });
  });

  it('under pve-5.2.0 it reports the configured values whatever runs, as the reference simulator', () => {
    const hw = new Hardware(input, { profile: 'pve-5.2.0' });
    expect(hw.getDynamicServiceStats()['vm:102']).toEqual({ cpu: 1, mem: 2 * GIB });
  });
});

describe('guest_config: a guest whose configuration prevents the migration fails it', () => {
  const withConfig = (config: CaseInput['guestConfig']) =>
    new Simulation(
      twoNodes([powerOn, ['service vm:101 migrate node2', 'service vm:102 migrate node2']], { guestConfig: config }),
      { profile: 'pve-9.2' },
    ).run().log;

  it('logs the reason and the reference failure lines; the guest stays where it is', () => {
    const log = withConfig({ 'vm:101': { ide2: 'local:iso/d.iso,media=cdrom', scsi0: 'ceph:vm-101-disk-0' } });
    expect(log).toContain("info    121    node1/lrm: service vm:101 - start migrate to node 'node2'\n");
    expect(log).toContain(
      "err     121    node1/lrm: service 'vm:101' cannot be moved (local cd-rom image 'local:iso/d.iso' (ide2)), unable to migrate!\n",
    );
    expect(log).toContain('err     121    node1/lrm: service vm:101 not moved (migration error)\n');
    expect(log).toContain("err     140    node1/crm: service 'vm:101' - migration failed (exit code 1)\n");
    // vm:102 has no entry: an empty configuration, it moves
    expect(log).toContain("info    121    node1/lrm: service vm:102 - end migrate to node 'node2'\n");
  });

  it('a shared cd-rom image or none does not block', () => {
    const log = withConfig({ 'vm:101': { ide2: 'none,media=cdrom', ide3: 'cephfs:iso/d.iso,media=cdrom' } });
    expect(log).toContain("info    121    node1/lrm: service vm:101 - end migrate to node 'node2'\n");
  });

  it('the Env hands the configuration to the HA core: {} for a configured guest without entry, undefined for an unknown one', () => {
    const hw = new Hardware(twoNodes([], { guestConfig: { 'vm:101': { hostpci0: '01:00.0' } } }), {
      profile: 'pve-9.2',
    });
    expect(hw.getGuestConfig('vm:101')).toEqual({ hostpci0: '01:00.0' });
    expect(hw.getGuestConfig('vm:102')).toEqual({});
    expect(hw.getGuestConfig('vm:999')).toBeUndefined();
  });
});

describe('RunRecorder: a run recorded from the Simulation API', () => {
  it('records every balancer motion with its outcome, the samples and the summary', () => {
    const input = twoNodes([powerOn], { datacenterCfg: { ha: {}, crs: { ha: 'dynamic', 'ha-auto-rebalance': 1 } } });
    const sim = new Simulation(input, { profile: 'pve-9.2' });
    const recorder = new RunRecorder(sim);
    sim.run();
    // the hold: 40, 60, 80 above the threshold → vm:101 (2 cores, 4 GiB) moves to node2 at 80;
    // the migration ends in node1's LRM at 81, the manager reads the result at 100 and node2's
    // LRM starts it at 103: the sample after that round (120) is the first with it on node2
    expect(recorder.motions).toEqual([
      { time: 80, resources: ['vm:101'], source: 'node1', target: 'node2', ok: true, outcomeAt: 100, landedAt: [120] },
    ]);
    expect(recorder.resourceMoves()[0]!.landedAt).toBe(120);
    expect(recorder.nodes).toEqual(['node1', 'node2']);
    expect(recorder.rounds.time.slice(0, 3)).toEqual([0, 20, 40]);
    // before the start nothing is online: imbalance 0; at 40 both guests run on node1: 1
    expect(recorder.rounds.imbalance.slice(0, 3)).toEqual([0, 0, 1]);
    const summary = recorder.summary();
    expect(summary).toMatchObject({
      moves: 1,
      failedMoves: 0,
      movesBySid: { 'vm:101': 1 },
      pingPongs: 0,
      pressureSeconds: null,
      simSeconds: 620,
    });
    expect(summary.imbalanceTimeWeighted).toBeGreaterThan(0);
    expect(summary.imbalanceTimeWeighted).toBeLessThan(1);
  });

  it('pressureSeconds: node-seconds with cpu ≥ 10 % or memory ≥ 5 %, online nodes only', () => {
    const cmds = [
      [...powerOn, 'node node1 set-dynamic-stats pressurecpusome 9.9'], // slot 20: below 10 %
      ['node node2 set-dynamic-stats pressurememorysome 5'], // slot 120: node2 at 5 % memory
      ['node node1 set-dynamic-stats pressurecpusome 10'], // slot 220: node1 at 10 % cpu as well
      ['node node2 set-dynamic-stats pressurememorysome 4.9'], // slot 320: node2 below 5 %
      ['power node1 off'], // slot 420: node1 offline (its last value, 10 %, stays reported)
    ];
    const sim = new Simulation(twoNodes(cmds), { profile: 'pve-9.2' });
    const recorder = new RunRecorder(sim);
    sim.run();
    // a slot's change is in the sample taken at its round's end: node2 120..320 = 200 node-s,
    // node1 220..420 = 200 node-s, nothing once node1 is offline → 400
    expect(recorder.summary().pressureSeconds).toBe(400);
    // (wall seconds with some node under pressure would be 120..420 = 300: 220..320 counts twice here)
  });

  it('pressureSeconds is null without telemetry, 0 with telemetry below the levels', () => {
    const quiet = new Simulation(twoNodes([powerOn]), { profile: 'pve-9.2' });
    const r1 = new RunRecorder(quiet);
    quiet.run();
    expect(r1.summary().pressureSeconds).toBeNull();
    const low = new Simulation(twoNodes([[...powerOn, 'node node1 set-dynamic-stats pressurecpusome 3']]), {
      profile: 'pve-9.2',
    });
    const r2 = new RunRecorder(low);
    low.run();
    expect(r2.summary().pressureSeconds).toBe(0);
  });

  const motion = (time: number, sid: string, source: string, target: string, ok: boolean | null): ResourceMove => ({
    time,
    sid,
    source,
    target,
    ok,
    outcomeAt: ok === null ? null : time + 20,
  });

  it.each<[string, ResourceMove[], number]>([
    ['no moves', [], 0],
    ['one move', [motion(0, 'vm:1', 'a', 'b', true)], 0],
    // 1800 − 0 = 1800 ≤ 1800: still inside the window
    ['there and back within 30 min', [motion(0, 'vm:1', 'a', 'b', true), motion(1800, 'vm:1', 'b', 'a', true)], 1],
    // 1801 > 1800
    ['back after 30 min and 1 s', [motion(0, 'vm:1', 'a', 'b', true), motion(1801, 'vm:1', 'b', 'a', true)], 0],
    ['a failed return is no ping-pong', [motion(0, 'vm:1', 'a', 'b', true), motion(60, 'vm:1', 'b', 'a', false)], 0],
    ['an in-flight return is no ping-pong', [motion(0, 'vm:1', 'a', 'b', true), motion(60, 'vm:1', 'b', 'a', null)], 0],
    [
      'a failed first move left nothing',
      [motion(0, 'vm:1', 'a', 'b', false), motion(60, 'vm:1', 'a', 'c', true), motion(120, 'vm:1', 'c', 'a', true)],
      1,
    ],
    [
      'a → b → c → a: back to a within the window',
      [motion(0, 'vm:1', 'a', 'b', true), motion(60, 'vm:1', 'b', 'c', true), motion(120, 'vm:1', 'c', 'a', true)],
      1,
    ],
    ['another guest does not count', [motion(0, 'vm:1', 'a', 'b', true), motion(60, 'vm:2', 'b', 'a', true)], 0],
    // a→b, b→a (pp), a→b (pp: left b at 600, back at 1200), b→a (pp)
    [
      'an oscillation counts every return',
      [
        motion(0, 'vm:1', 'a', 'b', true),
        motion(600, 'vm:1', 'b', 'a', true),
        motion(1200, 'vm:1', 'a', 'b', true),
        motion(1800, 'vm:1', 'b', 'a', true),
      ],
      3,
    ],
    // back on a at 1900 (left at 0: 1900 > 1800, no), on b at 2000 (left at 1900: pp), on a at
    // 2100 (the latest departure from a is 2000, not 0: pp) → 2
    [
      'the latest departure counts',
      [
        motion(0, 'vm:1', 'a', 'b', true),
        motion(1900, 'vm:1', 'b', 'a', true),
        motion(2000, 'vm:1', 'a', 'b', true),
        motion(2100, 'vm:1', 'b', 'a', true),
      ],
      2,
    ],
  ])('ping-pongs: %s → %i', (_name, moves, expected) => {
    expect(countPingPongs(moves)).toBe(expected);
  });

  it('a bundle is one resource move per member, with the bundle’s outcome', () => {
    const motions: RecordedMotion[] = [
      {
        time: 80,
        resources: ['vm:101', 'vm:102'],
        source: 'node1',
        target: 'node2',
        ok: false,
        outcomeAt: 100,
        detail: 'migration error',
      },
      { time: 200, resources: ['vm:103'], source: 'node1', target: 'node2', ok: null, outcomeAt: null },
    ];
    expect(resourceMoves(motions)).toEqual([
      {
        time: 80,
        sid: 'vm:101',
        source: 'node1',
        target: 'node2',
        ok: false,
        outcomeAt: 100,
        detail: 'migration error',
      },
      {
        time: 80,
        sid: 'vm:102',
        source: 'node1',
        target: 'node2',
        ok: false,
        outcomeAt: 100,
        detail: 'migration error',
      },
      { time: 200, sid: 'vm:103', source: 'node1', target: 'node2', ok: null, outcomeAt: null },
    ]);
    const run: RunRecord = {
      nodes: ['node1', 'node2'],
      rounds: {
        time: [0],
        imbalance: [0.5],
        online: [[true], [true]],
        pressureCpu: [[null], [null]],
        pressureMem: [[null], [null]],
      },
      moves: resourceMoves(motions),
      endTime: 300,
    };
    // 3 resource moves; the bundle's 2 failed; the in-flight one is not a failure
    expect(summarizeRun(run)).toEqual({
      guestContentionSeconds: null,
      migrationSeconds: null,
      moves: 3,
      failedMoves: 2,
      movesBySid: { 'vm:101': 1, 'vm:102': 1, 'vm:103': 1 },
      pingPongs: 0,
      imbalanceTimeWeighted: 0.5,
      pressureSeconds: null,
      simSeconds: 300,
    });
  });

  it.each<[string, Partial<RunRecord['rounds']>, { cpu: number; mem: number } | undefined, number | null]>([
    // samples at 0, 10, 40, end 100: durations 10, 30, 60
    [
      'two nodes under pressure count twice',
      {
        pressureCpu: [
          [20, 20, 0],
          [20, 0, 0],
        ],
      },
      undefined,
      2 * 10 + 30,
    ],
    [
      'memory at its own level',
      {
        pressureMem: [
          [4, 5, 5],
          [null, null, null],
        ],
      },
      undefined,
      30 + 60,
    ],
    [
      'custom levels',
      {
        pressureCpu: [
          [20, 20, 0],
          [20, 0, 0],
        ],
      },
      { cpu: 30, mem: 30 },
      0,
    ],
    [
      'an offline node is not counted',
      {
        pressureCpu: [
          [20, 20, 20],
          [0, 0, 0],
        ],
        online: [
          [true, false, true],
          [true, true, true],
        ],
      },
      undefined,
      10 + 60,
    ],
    ['no telemetry: null', {}, undefined, null],
  ])('pressureNodeSeconds: %s', (_name, over, thresholds, expected) => {
    const none = [
      [null, null, null],
      [null, null, null],
    ];
    const rounds = {
      time: [0, 10, 40],
      imbalance: [0, 0, 0],
      online: [
        [true, true, true],
        [true, true, true],
      ],
      pressureCpu: none,
      pressureMem: none,
      ...over,
    };
    expect(pressureNodeSeconds(rounds, 100, thresholds)).toBe(expected);
  });

  it.each<[number[], number[], number, number | null]>([
    // 0.5 for 20 s, 1 for 60 s: (10 + 60) / 80
    [[0, 20], [0.5, 1], 80, 0.875],
    [[0], [0.3], 100, 0.3],
    [[0], [0.3], 0, null],
    [[], [], 100, null],
  ])('time-weighted mean of %j / %j until %i is %s', (times, values, end, expected) => {
    expect(timeWeightedMean(times, values, end)).toBe(expected);
  });
});

describe('--set <crs-key>=<value>', () => {
  it.each<[string, string, number | string | boolean | undefined]>([
    ['ha-auto-rebalance-backoff=60', 'ha-auto-rebalance-backoff', 60],
    ['ha-auto-rebalance-preset=recommended', 'ha-auto-rebalance-preset', 'recommended'],
    ['ha-auto-rebalance-pressure-missing=hold', 'ha-auto-rebalance-pressure-missing', 'hold'],
    ['ha-auto-rebalance-check-migratable=1', 'ha-auto-rebalance-check-migratable', 1],
    ['ha-auto-rebalance-threshold=40', 'ha-auto-rebalance-threshold', 40],
    ['ha-auto-rebalance-method=topsis', 'ha-auto-rebalance-method', 'topsis'],
    ['ha=static', 'ha', 'static'],
    ['ha-auto-rebalance=true', 'ha-auto-rebalance', true],
    ['ha-auto-rebalance-memhost=false', 'ha-auto-rebalance-memhost', false],
    ['ha-auto-rebalance-cooldown=', 'ha-auto-rebalance-cooldown', undefined],
    // empty clears a key, a choice too (the lab's reference variant clears them all this way)
    ['ha-auto-rebalance-objective=', 'ha-auto-rebalance-objective', undefined],
  ])('accepts %s', (text, key, value) => {
    expect(parseCrsOverride(text)).toEqual({ key, value });
  });

  it.each([
    ['ha-auto-rebalance-backoff', "'--set ha-auto-rebalance-backoff': expected <crs-key>=<value>"],
    ['=60', "'--set =60': expected <crs-key>=<value>"],
    ['ha-auto-rebalance-bakoff=60', "'--set ha-auto-rebalance-bakoff=60': unknown crs key 'ha-auto-rebalance-bakoff'"],
    [
      'ha-auto-rebalance-backoff=abc',
      "'--set ha-auto-rebalance-backoff=abc': invalid value 'abc' for 'crs.ha-auto-rebalance-backoff' (seconds, 0 to 3600)",
    ],
    [
      'ha-auto-rebalance-backoff=7200',
      "'--set ha-auto-rebalance-backoff=7200': invalid value '7200' for 'crs.ha-auto-rebalance-backoff' (seconds, 0 to 3600)",
    ],
    [
      'ha-auto-rebalance-cooldown=-1',
      "'--set ha-auto-rebalance-cooldown=-1': invalid value '-1' for 'crs.ha-auto-rebalance-cooldown' (seconds, 0 to 86400)",
    ],
    [
      'ha-auto-rebalance-min-improvement=101',
      "invalid value '101' for 'crs.ha-auto-rebalance-min-improvement' (percentage points, 0 to 100)",
    ],
    ['ha-auto-rebalance-smoothing=x', "invalid value 'x' for 'crs.ha-auto-rebalance-smoothing'"],
    [
      'ha-auto-rebalance-cost-weight=2',
      "invalid value '2' for 'crs.ha-auto-rebalance-cost-weight' (fraction of the best improvement, 0 to 1)",
    ],
    ['ha-auto-rebalance-memhost=yes', "invalid value 'yes' for 'crs.ha-auto-rebalance-memhost' (0 or 1)"],
    [
      'ha-auto-rebalance-min-pressure-cpu=150',
      "invalid value '150' for 'crs.ha-auto-rebalance-min-pressure-cpu' (percent, 0 to 100)",
    ],
    [
      'ha-auto-rebalance-min-pressure-mem=-5',
      "invalid value '-5' for 'crs.ha-auto-rebalance-min-pressure-mem' (percent, 0 to 100)",
    ],
    [
      'ha-auto-rebalance-pressure-missing=ignore',
      "invalid value 'ignore' for 'crs.ha-auto-rebalance-pressure-missing' (one of balance, hold)",
    ],
    ['ha-auto-rebalance-check-migratable=2', "invalid value '2' for 'crs.ha-auto-rebalance-check-migratable' (0 or 1)"],
    [
      'ha-auto-rebalance-preset=aggressive',
      "invalid value 'aggressive' for 'crs.ha-auto-rebalance-preset' (one of recommended)",
    ],
    ['ha-auto-rebalance=yes', "'--set ha-auto-rebalance=yes': expected a flag (0, 1, true or false)"],
    ['ha-auto-rebalance=2', "'--set ha-auto-rebalance=2': expected a flag (0, 1, true or false)"],
    [
      'ha-auto-rebalance-threshold=-1',
      "'--set ha-auto-rebalance-threshold=-1': expected a finite number from 0 to 100",
    ],
    [
      'ha-auto-rebalance-hold-duration=1.5',
      "'--set ha-auto-rebalance-hold-duration=1.5': expected a whole number from 0 to 9007199254740991",
    ],
    ['ha-auto-rebalance-method=random', "'--set ha-auto-rebalance-method=random': expected bruteforce or topsis"],
    ['ha=bogus', "'--set ha=bogus': expected one of basic, static, dynamic"],
  ])('refuses %s', (text, message) => {
    let error: unknown;
    try {
      parseCrsOverride(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SimError);
    expect((error as SimError).code).toBe('bad-override');
    expect((error as SimError).message).toContain(message);
  });

  it('applies in order, removes on an empty value, and leaves the input as it was', () => {
    const input = twoNodes([], {
      datacenterCfg: { ha: {}, crs: { ha: 'dynamic', 'ha-auto-rebalance-cooldown': 600 } },
    });
    const out = withCrsOverrides(input, [
      'ha-auto-rebalance-backoff=60',
      'ha-auto-rebalance-backoff=120',
      'ha-auto-rebalance-cooldown=',
    ]);
    expect({ ...out.datacenterCfg.crs }).toEqual({ ha: 'dynamic', 'ha-auto-rebalance-backoff': 120 });
    expect(input.datacenterCfg.crs).toEqual({ ha: 'dynamic', 'ha-auto-rebalance-cooldown': 600 });
  });
});
