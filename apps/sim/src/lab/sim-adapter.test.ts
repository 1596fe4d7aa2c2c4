import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadCase } from '@poise/sim';
import { main } from '../main';
import { runOne, variantOverrides } from './sim-adapter';
import { summarize } from './summary';
import { validateTrace } from './trace';

const scenario = (name: string) => ({ name, dir: fileURLToPath(new URL(`../../scenarios/${name}`, import.meta.url)) });
const defaults = { name: 'defaults', crs: {} };
const GiB = 1024 ** 3;

function tmpCase(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'poise-adapter-'));
  for (const [name, value] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(value));
  return dir;
}

describe('sim-adapter runOne: the trace is the RunRecorder’s', () => {
  it('samples before the first round and after every round, and the balancer’s motions with outcomes', () => {
    const t = validateTrace(runOne(scenario('rebalance-and-failover'), defaults, 1), 'trace');
    // log: exit simulation at 1100; a sample at 0 (the recorder attaches), then one per round
    expect(t.endTime).toBe(1100);
    expect(t.rounds.time.slice(0, 4)).toEqual([0, 20, 40, 60]);
    expect(t.rounds.time).toHaveLength(55);
    // at 0 nothing is powered: offline, imbalance 0; at 60 all six guests run on node1:
    // cpu 8.2 / 16 = 0.5125, mem 17.5 / 64 GiB = 0.2734375, nodes 2 and 3 idle → imbalance 1
    expect(t.rounds.online.map((c) => c[0])).toEqual([false, false, false]);
    expect(t.rounds.cpu[0]![3]).toBeCloseTo(0.5125, 12);
    expect(t.rounds.mem[0]![3]).toBeCloseTo(0.2734375, 12);
    expect(t.rounds.imbalance[3]).toBeCloseTo(1, 12);
    // 120 s: vm:101 (3.2 cores, 6 GiB) runs on node2: the log's expected 54.6 %
    expect(t.rounds.imbalance[6]).toBeCloseTo(0.5457, 4);
    expect(t.moves.map(({ outcomeAt: _, landedAt: __, ...m }) => m)).toEqual([
      { time: 80, sid: 'vm:101', source: 'node1', target: 'node2', ok: true },
      { time: 160, sid: 'vm:102', source: 'node1', target: 'node3', ok: true },
      // after node3's failure vm:102 was recovered to node2, then balanced back to node1
      { time: 680, sid: 'vm:102', source: 'node2', target: 'node1', ok: true },
    ]);
    for (const m of t.moves) expect(m.outcomeAt).toBeGreaterThan(m.time);
    // each ran on its target from the sample after the round its target's LRM started it
    for (const m of t.moves) expect(m.landedAt).toBeGreaterThan(m.outcomeAt!);
    // scripted pressure: no ground truth
    expect(t.rounds.truth).toBeUndefined();
    expect(summarize(t).guestContentionSeconds).toBeNull();
    // no node reports pressure in this case: no telemetry (all null), not "no pressure"
    expect(t.rounds.pressureCpu.flat().every((v) => v === null)).toBe(true);
    expect(summarize(t)).toMatchObject({
      moves: 3,
      failedMoves: 0,
      pingPongs: 1,
      simSeconds: 1100,
      pressureSeconds: null,
    });
  });

  it('the lab’s summary of a trace is `poise-sim summary` of the same run, number for number', () => {
    for (const name of ['rebalance-and-failover', 'idle-cluster-pressure', 'failing-migration-local-cdrom']) {
      const io = { out: [] as string[], err: [] as string[] };
      expect(
        main(['summary', scenario(name).dir], {
          out: (l) => io.out.push(l),
          err: (l) => io.err.push(l),
          write: () => undefined,
        }),
      ).toBe(0);
      const seed = loadCase(scenario(name).dir).simOptions?.seed ?? 0;
      expect(JSON.stringify(summarize(runOne(scenario(name), defaults, seed)))).toBe(io.out[0]);
    }
  });

  it('records a failing motion as failed, each time the balancer issues it', () => {
    // fa:1090: c = 9, its first 9 migrations fail
    const dir = tmpCase({
      hardware_status: {
        node1: { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GiB },
        node2: { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GiB },
      },
      service_config: {
        'fa:1090': { node: 'node1', state: 'started' },
        'vm:101': { node: 'node1', state: 'started' },
        'vm:102': { node: 'node1', state: 'started' },
      },
      static_service_stats: {
        'fa:1090': { maxcpu: 8, maxmem: 8 * GiB },
        'vm:101': { maxcpu: 4, maxmem: 4 * GiB },
        'vm:102': { maxcpu: 1, maxmem: GiB },
      },
      // moving fa:1090 leaves loads 0.137 / 0.3125 (imbalance 0.39), moving vm:101 0.332 / 0.117 (0.48): the balancer picks fa:1090
      dynamic_service_stats: {
        'fa:1090': { cpu: 8, mem: 8 * GiB },
        'vm:101': { cpu: 3, mem: 3 * GiB },
        'vm:102': { cpu: 0.5, mem: 0.5 * GiB },
      },
      'datacenter.cfg': { crs: { ha: 'dynamic', 'ha-auto-rebalance': 1 } },
      cmdlist: [['power node1 on', 'power node2 on'], ['delay 900']],
    });
    const t = validateTrace(runOne({ name: 'fa', dir }, defaults, 1), 'trace');
    // fa:1090 fails 9 migrations, the 10th works
    expect(t.moves.map((m) => m.ok)).toEqual([false, false, false, false, false, false, false, false, false, true]);
    for (const m of t.moves) expect(m).toMatchObject({ sid: 'fa:1090', source: 'node1', target: 'node2' });
    expect(t.moves[0]!.detail).toBe('migration error');
    expect(summarize(t)).toMatchObject({ moves: 10, failedMoves: 9, pingPongs: 0 });
  });

  it('a variant applies its crs keys, the balancer’s variant keys included', () => {
    expect(
      runOne(scenario('rebalance-and-failover'), { name: 'off', crs: { 'ha-auto-rebalance': 0 } }, 1).moves,
    ).toEqual([]);
    // symptom 1: the reference re-issues the failing motion 17 times; the migratability check never tries it
    const cdrom = scenario('failing-migration-local-cdrom');
    expect(summarize(runOne(cdrom, defaults, 0))).toMatchObject({ moves: 17, failedMoves: 17 });
    const checked = summarize(runOne(cdrom, { name: 'check', crs: { 'ha-auto-rebalance-check-migratable': 1 } }, 0));
    expect(checked.failedMoves).toBe(0);
    expect(checked.movesBySid['vm:101']).toBeUndefined();
    expect(
      variantOverrides({
        name: 'r',
        crs: {
          'ha-auto-rebalance-preset': 'recommended',
          'ha-auto-rebalance-backoff': 60,
          'ha-auto-rebalance-memhost': true,
        },
      }),
    ).toEqual([
      'ha-auto-rebalance-preset=recommended',
      'ha-auto-rebalance-backoff=60',
      'ha-auto-rebalance-memhost=true',
    ]);
  });

  it('a value the simulator refuses is an error naming the variant and the key', () => {
    expect(() =>
      runOne(scenario('rebalance-and-failover'), { name: 'slow', crs: { 'ha-auto-rebalance-backoff': 'soon' } }, 1),
    ).toThrow(
      "variant 'slow': '--set ha-auto-rebalance-backoff=soon': invalid value 'soon' for 'crs.ha-auto-rebalance-backoff'",
    );
  });

  it('the seed seeds the node noise: same seed, the same trace bytes; another seed, another run', () => {
    const noisy = scenario('noisy-dominant-guest');
    const a = JSON.stringify(runOne(noisy, defaults, 7));
    expect(JSON.stringify(runOne(noisy, defaults, 7))).toBe(a);
    const b = runOne(noisy, defaults, 8);
    expect(JSON.stringify({ ...b, seed: 7 })).not.toBe(a);
    // the noise is on node1's base load: its cpu series differs, not only the moves
    expect(b.rounds.cpu[0]).not.toEqual((JSON.parse(a) as typeof b).rounds.cpu[0]);
    // a case without noise runs the same for every seed
    const quiet = scenario('rebalance-and-failover');
    expect(JSON.stringify({ ...runOne(quiet, defaults, 2), seed: 1 })).toBe(JSON.stringify(runOne(quiet, defaults, 1)));
  });

  it('pressure series: the PSI each node reports, per sample', () => {
    const t = runOne(scenario('idle-cluster-pressure'), defaults, 0);
    expect(t.rounds.pressureCpu).toHaveLength(t.nodes.length);
    expect(Math.max(...t.rounds.pressureCpu.flat().map((v) => v ?? 0))).toBeGreaterThanOrEqual(10);
    expect(summarize(t).pressureSeconds).toBeGreaterThan(0);
  });

  it('honours sim_options max-time: past it the run aborts, and a longer one lets a long case run', () => {
    // no delay alone outlasts the limit (the loader refuses one that does); together they do
    const files = { cmdlist: [['power node1 on'], ['delay 6000'], ['delay 6000']] };
    // without sim_options: the reference's 10,000 s limit
    expect(() => runOne({ name: 'long', dir: tmpCase(files) }, defaults, 1)).toThrow(
      /^the simulator stopped at \d+ s: simulation end - time limit reached$/,
    );
    const t = runOne({ name: 'long', dir: tmpCase({ ...files, sim_options: { 'max-time': 20000 } }) }, defaults, 1);
    // 'delay 6000' at 120 postpones the next slot to about 6,120 s, whose 'delay 6000' postpones
    // the next to about 12,120 s, where the run ends (no list left)
    expect(t.endTime).toBeGreaterThan(12000);
    expect(t.endTime).toBeLessThan(12300);
    expect(() =>
      runOne(
        {
          name: 'short',
          dir: tmpCase({
            cmdlist: [['power node1 on'], ['delay 400'], ['delay 400']],
            sim_options: { 'max-time': 500 },
          }),
        },
        defaults,
        1,
      ),
    ).toThrow(/^the simulator stopped at 5\d\d s: simulation end - time limit reached$/);
    // a delay that alone outlasts the limit is refused when the case loads, naming it
    expect(() =>
      runOne({ name: 'too-long', dir: tmpCase({ cmdlist: [['power node1 on'], ['delay 11000']] }) }, defaults, 1),
    ).toThrow(
      /^scenario 'too-long': '.*cmdlist' \[1\]\[0\] 'delay 11000': the delay ends after the time limit of 10000 s/,
    );
  });

  it('a case that does not load is an error naming the scenario', () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-adapter-bad-'));
    writeFileSync(join(dir, 'cmdlist'), '[["power node1 on"');
    expect(() => runOne({ name: 'bad', dir }, defaults, 1)).toThrow(/^scenario 'bad': invalid JSON in '.*cmdlist'/);
  });
});
