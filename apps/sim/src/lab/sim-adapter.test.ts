import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkVariantSupported, runOne } from './sim-adapter';
import { summarize } from './summary';
import { validateTrace } from './trace';

const SCENARIO = fileURLToPath(new URL('../../scenarios/rebalance-and-failover', import.meta.url));
const defaults = { name: 'defaults', crs: {} };

describe('sim-adapter runOne (today’s simulator)', () => {
  it('samples each round and reads the balancer’s moves from the log', () => {
    const t = validateTrace(runOne({ name: 'rf', dir: SCENARIO }, defaults, 1), 'trace');
    // log: exit simulation at 1100; rounds sampled from 20 (nodes power on at 20) to 1080
    expect(t.endTime).toBe(1100);
    expect(t.rounds.time.slice(0, 3)).toEqual([20, 40, 60]);
    expect(t.rounds.time).toHaveLength(54);
    // 60 s: all six guests run on node1: cpu 8.2 / 16 = 0.5125, mem 17.5 / 64 GiB = 0.2734375,
    // nodes 2 and 3 idle → all load on one of three nodes: normalised imbalance 1 (log: 100.0%)
    expect(t.rounds.cpu[0]![2]).toBeCloseTo(0.5125, 12);
    expect(t.rounds.mem[0]![2]).toBeCloseTo(0.2734375, 12);
    expect(t.rounds.imbalance[2]).toBeCloseTo(1, 12);
    // 120 s: vm:101 (3.2 cores, 6 GiB) runs on node2: the log's expected 54.6 %
    expect(t.rounds.imbalance[5]).toBeCloseTo(0.5457, 4);
    expect(t.moves).toEqual([
      { time: 80, sid: 'vm:101', source: 'node1', target: 'node2', ok: true },
      { time: 160, sid: 'vm:102', source: 'node1', target: 'node3', ok: true },
      // after node3's failure vm:102 was recovered to node2, then balanced back to node1
      { time: 680, sid: 'vm:102', source: 'node2', target: 'node1', ok: true },
    ]);
    // vm:102 left node1 at 160 and came back at 680 (520 s ≤ 30 min)
    expect(summarize(t)).toMatchObject({ moves: 3, failedMoves: 0, pingPongs: 1, simSeconds: 1100, pressureSeconds: null });
  });

  it('records a failing motion as failed, each time the balancer issues it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-adapter-'));
    const GiB = 1024 ** 3;
    const off = { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GiB };
    writeFileSync(join(dir, 'hardware_status'), JSON.stringify({ node1: off, node2: off }));
    // fa:1090: c = 9, its first 9 migrations fail
    writeFileSync(join(dir, 'service_config'), JSON.stringify({ 'fa:1090': { node: 'node1', state: 'started' }, 'vm:101': { node: 'node1', state: 'started' }, 'vm:102': { node: 'node1', state: 'started' } }));
    writeFileSync(join(dir, 'static_service_stats'), JSON.stringify({ 'fa:1090': { maxcpu: 8, maxmem: 8 * GiB }, 'vm:101': { maxcpu: 4, maxmem: 4 * GiB }, 'vm:102': { maxcpu: 1, maxmem: GiB } }));
    // moving fa:1090 leaves loads 0.137 / 0.3125 (imbalance 0.39), moving vm:101 0.332 / 0.117 (0.48): the balancer picks fa:1090
    writeFileSync(join(dir, 'dynamic_service_stats'), JSON.stringify({ 'fa:1090': { cpu: 8, mem: 8 * GiB }, 'vm:101': { cpu: 3, mem: 3 * GiB }, 'vm:102': { cpu: 0.5, mem: 0.5 * GiB } }));
    writeFileSync(join(dir, 'datacenter.cfg'), JSON.stringify({ crs: { ha: 'dynamic', 'ha-auto-rebalance': 1 } }));
    writeFileSync(join(dir, 'cmdlist'), JSON.stringify([['power node1 on', 'power node2 on'], ['delay 900']]));
    const t = validateTrace(runOne({ name: 'fa', dir }, defaults, 1), 'trace');
    // fa:1090 fails 9 migrations, the 10th works
    expect(t.moves.map((m) => m.ok)).toEqual([false, false, false, false, false, false, false, false, false, true]);
    for (const m of t.moves) expect(m).toMatchObject({ sid: 'fa:1090', source: 'node1', target: 'node2' });
    expect(summarize(t)).toMatchObject({ moves: 10, failedMoves: 9, pingPongs: 0 });
  });

  it('a variant applies its crs keys: without auto-rebalance nothing moves', () => {
    const t = runOne({ name: 'rf', dir: SCENARIO }, { name: 'off', crs: { 'ha-auto-rebalance': 0 } }, 1);
    expect(t.moves).toEqual([]);
  });

  it('a key the simulator does not implement yet is refused before the run', () => {
    expect(() => checkVariantSupported({ name: 'recommended', crs: { 'ha-auto-rebalance-preset': 'recommended' } })).toThrow(
      "variant 'recommended': crs key 'ha-auto-rebalance-preset' is not implemented by the simulator yet",
    );
  });

  it('a simulator abort is an error naming the time', () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-adapter-long-'));
    writeFileSync(join(dir, 'cmdlist'), JSON.stringify([['power node1 on'], ['delay 11000']]));
    expect(() => runOne({ name: 'long', dir }, defaults, 1)).toThrow(/^the simulator stopped at \d+ s: simulation end - time limit reached$/);
  });
});
