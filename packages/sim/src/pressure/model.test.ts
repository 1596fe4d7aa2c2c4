import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseLoadPressure } from './config';
import { LoadPressureModel, decay, guestCpuStall, wantShare, type GuestLoad, type NodeLoad } from './model';

const GIB = 1024 ** 3;

function model(settings: unknown = {}, nodes = ['node1', 'node2'], seed = 1): LoadPressureModel {
  return new LoadPressureModel(parseLoadPressure(settings, 'test', ['load-pressure'], nodes), nodes, seed);
}

function load(node: string, guests: GuestLoad[], extra: Partial<NodeLoad> = {}): NodeLoad {
  return { node, cores: 8, memBytes: 32 * GIB, hostCpu: 0, hostMemBytes: 0, guests, ...extra };
}

const guest = (sid: string, cpu: number, vcpus = 4, memGiB = 4): GuestLoad => ({
  sid,
  cpu,
  vcpus,
  memBytes: memGiB * GIB,
});

describe('wantShare: the share of time a guest has a vcpu runnable', () => {
  it.each([
    // u = 1/2, v = 2: 1 − 0.5² = 0.75
    [1, 2, 0.75],
    [0.5, 1, 0.5],
    // u = 0.5, v = 4: 1 − 0.5⁴ = 0.9375
    [2, 4, 0.9375],
    [0, 4, 0],
    // more demand than vcpus: always runnable
    [8, 4, 1],
  ])('cpu %f on %i vcpus → %f', (cpu, vcpus, expected) => {
    expect(wantShare(cpu, vcpus)).toBeCloseTo(expected, 12);
  });
});

describe('decay: the avg10-like delay', () => {
  it('moves towards the share with time constant τ', () => {
    // from 0 at a constant 50 % for 20 s with τ = 10 s: 0.5 · (1 − e^−2) = 0.432332
    expect(decay(0, 0.5, 20, 10)).toBeCloseTo(0.4323323584, 9);
    // one τ: 63.2 % of the way
    expect(decay(0, 1, 10, 10)).toBeCloseTo(1 - Math.exp(-1), 12);
    // down as well as up
    expect(decay(0.5, 0, 20, 10)).toBeCloseTo(0.5 * Math.exp(-2), 12);
    // no delay
    expect(decay(0.3, 0.7, 20, 0)).toBe(0.7);
  });

  it('a longer delay reacts more slowly (avg60 vs avg10)', () => {
    expect(decay(0, 1, 20, 60)).toBeLessThan(decay(0, 1, 20, 10));
  });
});

describe('LoadPressureModel', () => {
  it('evaluates a node by hand: queue family, 2 servers, half loaded', () => {
    const m = model({ cpu: { family: 'queue', burstiness: 4 } });
    // 8 cores, 2 guests of 2 cores: x = 4/8 = 0.5; k = 8/4 = 2 servers, A = 1:
    // some = 0.5 · C(2, 1) = 0.5 · 1/3 = 1/6
    const p = m.evaluateNode(load('node1', [guest('vm:1', 2), guest('vm:2', 2)]));
    expect(p.cpuRatio).toBe(0.5);
    expect(p.cpuShare).toBeCloseTo(1 / 6, 12);
    // 8 GiB of 32: far below the memory knee (logistic 0.95 ± 0.015)
    expect(p.memRatio).toBe(0.25);
    expect(p.memShare).toBeLessThan(1e-15);
  });

  it('counts the host processes in the demand, and the capacity factor in the cores', () => {
    const m = model({
      cpu: {
        family: 'piecewise',
        points: [
          [0, 0],
          [1, 100],
        ],
      },
      nodes: { node2: { 'capacity-factor': 0.5 } },
    });
    // (2 host + 2 guest) / 8 = 0.5 → 50 %
    expect(m.evaluateNode(load('node1', [guest('vm:1', 2)], { hostCpu: 2 })).cpuShare).toBeCloseTo(0.5, 12);
    // node2 counts as 4 cores: 2 / 4 = 0.5
    expect(m.evaluateNode(load('node2', [guest('vm:1', 2)])).cpuShare).toBeCloseTo(0.5, 12);
  });

  it('accrues each guest’s stall over a round: want share × node share', () => {
    const m = model({
      cpu: {
        family: 'piecewise',
        points: [
          [0, 0],
          [1, 100],
        ],
      },
      memory: {
        family: 'piecewise',
        points: [
          [0, 0],
          [1, 100],
        ],
      },
    });
    // node1: 4 + 2 = 6 of 8 cores → cpu some 75 %; 16 + 8 GiB of 32 → memory some 75 %
    m.begin([load('node1', [guest('vm:1', 4, 8, 16), guest('vm:2', 2, 2, 8)]), load('node2', [])]);
    m.end(20);
    const g = m.guestTotals();
    // vm:1: u = 0.5, v = 8: want 1 − 0.5⁸ = 0.99609375; × 0.75 × 20 s = 14.94140625
    expect(g.get('vm:1')!.cpuStallSeconds).toBeCloseTo(14.94140625, 9);
    // vm:2: u = 1 (2 of 2): want 1; × 0.75 × 20 = 15
    expect(g.get('vm:2')!.cpuStallSeconds).toBeCloseTo(15, 9);
    // memory: 0.75 × 20 s each
    expect(g.get('vm:1')!.memStallSeconds).toBeCloseTo(15, 9);
    expect(m.nodeTotals().get('node1')).toEqual({
      cpuStallSeconds: expect.closeTo(29.94140625, 9),
      memStallSeconds: expect.closeTo(30, 9),
      migrationStallSeconds: 0,
    });
    expect(m.nodeTotals().get('node2')).toEqual({ cpuStallSeconds: 0, memStallSeconds: 0, migrationStallSeconds: 0 });
    // a guest that stops running keeps its totals and accrues no more
    m.begin([load('node1', [guest('vm:2', 2, 2, 8)]), load('node2', [])]);
    m.end(20);
    expect(m.guestTotals().get('vm:1')!.cpuStallSeconds).toBeCloseTo(14.94140625, 9);
    expect(m.guestTotals().get('vm:1')!.node).toBeUndefined();
  });

  it('reports the average with avg10’s delay, rounded to 2 decimals like the kernel', () => {
    const m = model({
      cpu: {
        family: 'piecewise',
        points: [
          [0, 0],
          [1, 100],
        ],
      },
    });
    expect(m.reported('node1')).toEqual({ cpu: 0, mem: 0 });
    m.begin([load('node1', [guest('vm:1', 4, 4, 0)]), load('node2', [])]);
    m.end(20);
    // 50 % for 20 s with τ = 10: 50 · (1 − e^−2) = 43.2332 → 43.23
    expect(m.reported('node1')!.cpu).toBe(43.23);
    m.end(20);
    // 20 s more: 50 · (1 − e^−4) = 49.0842 → 49.08
    expect(m.reported('node1')!.cpu).toBe(49.08);
    // the load leaves: down with the same delay, 49.0842 · e^−2 = 6.6429 → 6.64
    m.begin([load('node1', []), load('node2', [])]);
    m.end(20);
    expect(m.reported('node1')!.cpu).toBe(6.64);
  });

  it('a node without PSI reports nothing; its guests still count', () => {
    const m = model({
      cpu: {
        family: 'piecewise',
        points: [
          [0, 0],
          [1, 100],
        ],
      },
      nodes: { node1: { psi: false } },
    });
    m.begin([load('node1', [guest('vm:1', 4, 4, 0)]), load('node2', [])]);
    m.end(20);
    expect(m.reported('node1')).toBeUndefined();
    expect(m.guestTotals().get('vm:1')!.cpuStallSeconds).toBeGreaterThan(0);
  });

  it('charges a live migration the migration model’s price, a relocation the restart', () => {
    const m = model({ migration: { 'bandwidth-mib-per-second': 1024, 'setup-seconds': 0, 'relocate-seconds': 30 } });
    // 4 GiB, 2 of 4 vcpus busy: 64 MiB/s dirtied over 1024 MiB/s, λ = 1/16; stop at 102.4 MiB:
    // 4096 → 256 → 16 MiB: two rounds, 4368 MiB in 4.2656 s, paused 16/1024 = 0.015625 s; the
    // guest pays 10 % of its activity (½) for the duration, plus the pause
    const e = m.priceMigration('node1', 'node2', { cpu: 2, vcpus: 4, memBytes: 4 * GIB });
    expect(e.rounds).toBe(2);
    expect(e.durationSeconds).toBeCloseTo(4368 / 1024, 12);
    expect(e.guestSeconds).toBeCloseTo(0.1 * 0.5 * (4368 / 1024) + 16 / 1024, 12);
    expect(m.chargeMigration('vm:1', 'node1', 'node2', e)).toBe(e.guestSeconds);
    expect(m.chargeMigration('vm:2', 'node2', 'node1', undefined)).toBe(30);
    expect(m.guestTotals().get('vm:1')!.migrationStallSeconds).toBe(e.guestSeconds);
    expect(m.nodeTotals().get('node1')!.migrationStallSeconds).toBe(e.guestSeconds);
    expect(m.nodeTotals().get('node2')!.migrationStallSeconds).toBe(30);
  });

  it('keeps the finished live migrations as a cluster’s task logs report them (not relocations)', () => {
    const m = model({ migration: { 'setup-seconds': 0 } });
    const e = m.priceMigration('node1', 'node2', { cpu: 1, vcpus: 2, memBytes: 2 * GIB });
    m.chargeMigration('vm:1', 'node1', 'node2', e);
    m.chargeMigration('vm:2', 'node1', 'node2', undefined);
    expect(m.finishedMigrations()).toEqual([
      {
        sid: 'vm:1',
        source: 'node1',
        target: 'node2',
        durationSeconds: e.durationSeconds,
        transferredBytes: e.transferredBytes,
        converged: true,
      },
    ]);
  });

  it('a running transfer shares the link: a second migration from the same node gets half', () => {
    const m = model({ migration: { 'setup-seconds': 0 } });
    const g = { cpu: 1, vcpus: 2, memBytes: 8 * GIB };
    const first = m.priceMigration('node1', 'node2', g);
    m.chargeMigration('vm:1', 'node1', 'node2', first);
    const second = m.priceMigration('node1', 'node2', g);
    expect(second.rateBytesPerSecond).toBe(first.rateBytesPerSecond / 2);
  });

  it('the transfer’s cpu raises both ends’ pressure while it runs, charged to their guests’ migration stall', () => {
    // cpu share = load ratio (piecewise 0 → 0, 1 → 100 %); 8 cores; one transfer core on each end
    const m = model({
      cpu: {
        family: 'piecewise',
        points: [
          [0, 0],
          [1, 100],
        ],
        'delay-seconds': 0,
      },
      migration: { 'setup-seconds': 0, 'transfer-cores': 1 },
    });
    const loads = () => [load('node1', [guest('vm:1', 4, 4, 0)]), load('node2', [guest('vm:2', 4, 4, 16)])];
    // vm:2 (32 GiB to copy, 4 busy cores) moves from node2 to node1, priced and charged mid-round
    const e = m.priceMigration('node2', 'node1', { cpu: 4, vcpus: 4, memBytes: 32 * GIB });
    expect(e.durationSeconds).toBeGreaterThan(20);
    m.begin(loads());
    m.chargeMigration('vm:2', 'node2', 'node1', e);
    m.end(20); // the round it started in: not yet
    expect(m.guestTotals().get('vm:1')!.migrationStallSeconds).toBe(0);
    expect(m.reported('node1')!.cpu).toBe(50);
    m.begin(loads());
    m.end(20);
    // node1: 4 + 1 cores of 8: 62.5 % instead of 50 %; vm:1 wants cpu all the time (4 of 4
    // busy): 0.125 × 20 s = 2.5 guest-seconds of migration stall, and node1 reports 62.5
    expect(m.guestTotals().get('vm:1')!.migrationStallSeconds).toBeCloseTo(2.5, 12);
    expect(m.guestTotals().get('vm:1')!.cpuStallSeconds).toBeCloseTo(0.5 * 40, 12);
    expect(m.reported('node1')!.cpu).toBe(62.5);
    // once the transfer is over (it lasts e.durationSeconds), nothing more is charged
    for (let t = 40; t < 20 + e.durationSeconds + 40; t += 20) {
      m.begin(loads());
      m.end(20);
    }
    const before = m.guestTotals().get('vm:1')!.migrationStallSeconds;
    m.begin(loads());
    m.end(20);
    expect(m.guestTotals().get('vm:1')!.migrationStallSeconds).toBe(before);
    expect(m.reported('node1')!.cpu).toBe(50);
    // charged for exactly the transfer's duration: 0.125 × duration
    expect(before).toBeCloseTo(0.125 * e.durationSeconds, 9);
  });

  it('noise and outliers: within their bounds, the same for the same seed, others for another', () => {
    const settings = {
      cpu: {
        family: 'piecewise',
        points: [
          [0, 0],
          [1, 100],
        ],
        'noise-percent': 2,
        'outlier-probability': 0.1,
        'outlier-percent': 30,
      },
    };
    const run = (seed: number) => {
      const m = model(settings, ['node1', 'node2'], seed);
      const out: number[] = [];
      m.begin([load('node1', [guest('vm:1', 4, 4, 0)]), load('node2', [])]);
      for (let i = 0; i < 200; i++) {
        m.end(20);
        out.push(m.reported('node1')!.cpu, m.reported('node2')!.cpu);
      }
      return out;
    };
    const a = run(7);
    expect(run(7)).toEqual(a);
    expect(run(8)).not.toEqual(a);
    // node1 settles at 50 %: noise keeps it within 48..52 except outliers (+30)
    const node1 = a.filter((_, i) => i % 2 === 0).slice(5);
    const outliers = node1.filter((v) => v > 52.0001);
    for (const v of node1) expect(v >= 47.99 && (v <= 52.01 || (v >= 77.99 && v <= 82.01))).toBe(true);
    // 10 % of 195 rounds ≈ 19.5; a seeded draw, so loose bounds
    expect(outliers.length).toBeGreaterThan(5);
    expect(outliers.length).toBeLessThan(45);
    // the idle node2 is never negative
    for (const v of a.filter((_, i) => i % 2 === 1)) expect(v).toBeGreaterThanOrEqual(0);
  });

  it('heterogeneity draws capacity factors in [1 − h, 1 + h]; a configured factor wins', () => {
    const names = Array.from({ length: 50 }, (_, i) => `node${String(i).padStart(2, '0')}`);
    const m = new LoadPressureModel(
      parseLoadPressure(
        { heterogeneity: 0.3, nodes: { node07: { 'capacity-factor': 2 } } },
        'test',
        ['load-pressure'],
        names,
      ),
      names,
      3,
    );
    const factors = names.map((n) => m.capacityFactor(n));
    expect(factors[7]).toBe(2);
    for (const [i, f] of factors.entries()) if (i !== 7) expect(f >= 0.7 && f <= 1.3).toBe(true);
    expect(new Set(factors).size).toBeGreaterThan(40);
    // without heterogeneity every node is 1
    expect(model().capacityFactor('node1')).toBe(1);
  });

  describe('monotonicity: more demand never less pressure, never less guest contention', () => {
    const families = [
      { family: 'queue', burstiness: 4 },
      { family: 'logistic', knee: 0.7, width: 0.08, 'max-percent': 90 },
      {
        family: 'piecewise',
        points: [
          [0, 0],
          [0.6, 2],
          [0.9, 30],
          [1.2, 70],
        ],
      },
    ];
    const guests = fc.array(
      fc.record({
        cpu: fc.double({ min: 0, max: 6, noNaN: true }),
        vcpus: fc.integer({ min: 1, max: 8 }),
        mem: fc.double({ min: 0, max: 12, noNaN: true }),
      }),
      { minLength: 1, maxLength: 8 },
    );

    it.each(families)('%o', (family) => {
      const m = model({ cpu: family, memory: family });
      fc.assert(
        fc.property(
          guests,
          fc.nat(7),
          fc.double({ min: 0, max: 4, noNaN: true }),
          fc.double({ min: 0, max: 8, noNaN: true }),
          (gs, pick, extraCpu, extraMem) => {
            const i = pick % gs.length;
            const base = gs.map((g, k) => guest(`vm:${k}`, g.cpu, g.vcpus, g.mem));
            const more = base.map((g, k) =>
              k === i ? { ...g, cpu: g.cpu + extraCpu, memBytes: g.memBytes + extraMem * GIB } : g,
            );
            const p0 = m.evaluateNode(load('node1', base));
            const p1 = m.evaluateNode(load('node1', more));
            expect(p1.cpuShare).toBeGreaterThanOrEqual(p0.cpuShare - 1e-12);
            expect(p1.memShare).toBeGreaterThanOrEqual(p0.memShare - 1e-12);
            // every guest's cpu stall share, the others' included, is no smaller
            base.forEach((g, k) => {
              const before = guestCpuStall(wantShare(g.cpu, g.vcpus), p0.cpuShare);
              const after = guestCpuStall(wantShare(more[k]!.cpu, more[k]!.vcpus), p1.cpuShare);
              expect(after).toBeGreaterThanOrEqual(before - 1e-12);
            });
          },
        ),
      );
    });
  });
});
