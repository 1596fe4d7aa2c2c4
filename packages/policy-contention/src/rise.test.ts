import { describe, expect, it } from 'vitest';
import { stateCheck } from '@poise/policy';
import { type PressureSample, checkRises, checkSamples, detectRises, lastingRises, recordSamples } from './rise';
import { GIB, cluster, guests, lines, pipelineFor } from './testing/support';

/** node1's samples every 20 s from 0 to 120: cpu load and pressure per time. */
function series(load: (t: number) => number, cpu: (t: number) => number, mem: (t: number) => number | null = () => 0) {
  const out: PressureSample[] = [];
  for (let t = 0; t <= 120; t += 20)
    out.push({ node: 'node1', at: t, cpuLoad: load(t), memLoad: 0.3, cpu: cpu(t), mem: mem(t) });
  return out;
}
const none = () => 0;
const step = (t: number) => (t <= 60 ? 2 : 25);

describe('detectRises: pressure that rose while the load did not', () => {
  it('a calm node that starts waiting at the same load: unexplained, with the figures', () => {
    expect(
      detectRises(
        series(() => 0.401, step),
        120,
        none,
        5,
      ),
    ).toEqual([
      {
        node: 'node1',
        dimension: 'cpu',
        at: 120,
        why: 'cpu pressure rose 2.0% → 25.0% in 60 s while its load stayed within 40.1%–40.1%',
      },
    ]);
  });

  it('a rise with the load: explained', () => {
    expect(
      detectRises(
        series((t) => (t < 80 ? 0.4 : 0.7), step),
        120,
        none,
        5,
      ),
    ).toEqual([]);
    // within the steadiness (2 % of capacity) the load counts as steady
    expect(
      detectRises(
        series((t) => (t < 80 ? 0.4 : 0.415), step),
        120,
        none,
        5,
      ),
    ).toHaveLength(1);
  });

  it('a rise the learned curve predicts for the load change: explained', () => {
    expect(
      detectRises(
        series((t) => (t < 80 ? 0.4 : 0.415), step),
        120,
        () => 14,
        5,
      ),
    ).toEqual([]);
  });

  it('a node already waiting that waits more, a small rise, memory: not judged', () => {
    const steady = () => 0.4;
    const judged = (cpu: (t: number) => number, mem?: (t: number) => number) =>
      detectRises(series(steady, cpu, mem), 120, none, 5);
    expect(judged((t) => (t <= 60 ? 30 : 60))).toEqual([]);
    expect(judged((t) => (t <= 60 ? 2 : 11))).toEqual([]);
    expect(
      judged(
        () => 2,
        (t) => (t <= 60 ? 0 : 40),
      ),
    ).toEqual([]);
  });

  it('too little history (nothing 60 s old) or no report now: nothing to judge', () => {
    expect(detectRises(series(() => 0.4, step).slice(4), 120, none, 5)).toEqual([]);
    const silent = series(() => 0.4, step).map((s) => (s.at === 120 ? { ...s, cpu: null } : s));
    expect(detectRises(silent, 120, none, 5)).toEqual([]);
  });
});

describe('keeping the rises and the samples', () => {
  const rise = (node: string, at: number) => ({ node, dimension: 'cpu' as const, at, why: `at ${at}` });

  it('a rise lasts while its node stays hot; a newer one replaces it', () => {
    const previous = [rise('node1', 100), rise('node2', 100)];
    expect(lastingRises(previous, [rise('node2', 140)], (n) => n !== 'node1')).toEqual([rise('node2', 140)]);
    expect(lastingRises(previous, [], () => true)).toEqual(previous);
  });

  it('samples of the last 180 s, of the nodes in the round', () => {
    const node = (name: string, pressureCpu?: number) => ({
      node: name,
      cpu: 4,
      maxcpu: 16,
      mem: 16 * GIB,
      maxmem: 64 * GIB,
      servicesCpu: 0,
      servicesMem: 0,
      pressureCpu,
    });
    const old = [
      { node: 'node1', at: 0, cpuLoad: 0.25, memLoad: 0.25, cpu: 1, mem: null },
      { node: 'node1', at: 100, cpuLoad: 0.25, memLoad: 0.25, cpu: 1, mem: null },
      { node: 'gone', at: 100, cpuLoad: 0.25, memLoad: 0.25, cpu: 1, mem: null },
    ];
    expect(recordSamples(old, [node('node1', 3)], 200)).toEqual([
      old[1],
      { node: 'node1', at: 200, cpuLoad: 0.25, memLoad: 0.25, cpu: 3, mem: null },
    ]);
  });

  it('names a corrupt restored value; a state saved before the rule has none', () => {
    const check = stateCheck('contention');
    expect(checkSamples(check, undefined, 'samples')).toEqual([]);
    expect(checkRises(check, 'contention', undefined, 'unexplained')).toEqual([]);
    expect(() =>
      checkSamples(check, [{ node: 'node1', at: 0, cpuLoad: -1, memLoad: 0, cpu: null, mem: null }], 'samples'),
    ).toThrow("stage 'contention': state field 'samples.0.cpuLoad' must be a finite number");
    expect(() =>
      checkRises(check, 'contention', [{ node: 'node1', dimension: 'io', at: 0, why: 'x' }], 'unexplained'),
    ).toThrow("stage 'contention': state field 'unexplained.0.dimension' must be 'cpu' or 'mem', got \"io\"");
  });
});

describe('the gate: a node whose pressure does not follow its load is no source', () => {
  const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
  const pipeline = () => pipelineFor({ 'ha-auto-rebalance-objective': 'contention' }, REF);

  it('the only contention unexplained: said once, and the rounds go to the imbalance', () => {
    // node1 runs 12 of its 16 cores for six guests; at 600 its PSI jumps from 2 % to 30 % at the same load
    const c = cluster(guests('node1', 101, 6, 2));
    c.run(pipeline(), {
      until: 1200,
      beforeRound: (r) => r.setNode('node1', { pressureCpu: r.time < 600 ? 2 : 30, pressureMem: 0 }),
    });
    const said = lines(c).filter((l) => l.includes('contention-unexplained'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^6[0-9]0 notice contention-unexplained: node1's cpu pressure rose 2\.0% → 30\.0% in [0-9]+ s while its load stayed within 81\.3%–81\.3%: not its guests' doing; no move off it for the contention while it lasts$/,
    );
    // before the jump no guest waits; after it the imbalance moves (no contention move is announced)
    expect(c.moves().every((m) => m.time > 600)).toBe(true);
    expect(c.moves().length).toBeGreaterThan(0);
    expect(lines(c).some((l) => l.includes('contention-move'))).toBe(false);
  });

  it('the same jump with the load: the contention objective moves', () => {
    // node1: six guests of 1 core and 1 core of its own (44 %); at 600 its own load grows by 6 cores (81 %)
    const c = cluster(guests('node1', 101, 6, 1));
    c.run(pipeline(), {
      until: 1200,
      beforeRound: (r) => {
        if (r.time >= 600) r.setNode('node1', { cpu: 7 });
        const n = r.telemetry().find((t) => t.node === 'node1')!;
        r.setNode('node1', { pressureCpu: n.cpu / n.maxcpu > 0.7 ? 30 : 2, pressureMem: 0 });
      },
    });
    expect(lines(c).some((l) => l.includes('contention-unexplained'))).toBe(false);
    expect(lines(c).some((l) => l.includes('contention-move'))).toBe(true);
  });
});
