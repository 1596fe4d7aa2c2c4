// Pipeline-level replays on the in-memory host (ReplayCluster of @poise/policy): seed symptom 3
// (an idle cluster), the pressure episodes of the seed's patch 7, and symptom 1 with the
// migratability check; then both variant packages composed together.
import fc from 'fast-check';
import { type BalanceContext, type PipelineState, PolicyRegistry, referencePipeline } from '@poise/policy';
import { ReplayCluster, type ReplayEvent } from '@poise/policy/testing';
import { stablePlugin } from '@poise/policy-stable';
import { describe, expect, it } from 'vitest';
import { pressurePlugin } from './index';
import { GIB, idleCluster } from './testing/support';

const REFERENCE = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
const pressure = new PolicyRegistry([pressurePlugin]);
/** The pipeline of this package's stages for a datacenter.cfg `crs` section (the simulator's JSON form). */
const withPressure = (crs: Record<string, unknown>) => pressure.pipeline(pressure.read(crs), REFERENCE);
/** Every key off: the reference balancer. */
const OFF = {};
const RECOMMENDED = { 'ha-auto-rebalance-preset': 'recommended' };

const stops = (events: readonly ReplayEvent[]) =>
  events.flatMap((e) => (e.type === 'stop' ? [`${e.time} ${e.reason}`] : []));
const EIGHT_HOURS = 8 * 3600;

describe('seed symptom 3: an idle cluster with a high imbalance', () => {
  it('the reference moves with nothing to gain; the pressure gate moves nothing in 8 h and says so once', () => {
    const reference = idleCluster();
    reference.run(withPressure(OFF), { until: EIGHT_HOURS });
    expect(reference.moves().length).toBeGreaterThanOrEqual(1);

    const gated = idleCluster();
    gated.run(withPressure(RECOMMENDED), { until: EIGHT_HOURS });
    expect(gated.moves()).toEqual([]);
    expect(stops(gated.events)).toEqual([
      '0 pressure gate: no node under pressure (highest cpu 3.1% < 10.0%, mem 0.0% < 5.0%)',
    ]);
  });

  it('cpu pressure of 10 % on node1: a guest leaves node1 within 2 minutes', () => {
    const cluster = idleCluster();
    const pipeline = withPressure(RECOMMENDED);
    const state = cluster.run(pipeline, { until: 3600 });
    cluster.setNode('node1', { pressureCpu: 12 });
    cluster.run(pipeline, { until: 3600 + 120, state });
    const [move] = cluster.moves();
    expect(move).toMatchObject({ source: 'node1' });
    // three rounds above the threshold with pressure: 3600, 3620, 3640
    expect(move!.time).toBe(3640);
  });

  it('every node under pressure: nothing moves, and the need for capacity is said once', () => {
    const cluster = idleCluster();
    for (const node of ['node1', 'node2', 'node3']) cluster.setNode(node, { pressureCpu: 25 });
    cluster.setNode('node3', { pressureCpu: 2, pressureMem: 8 });
    cluster.run(withPressure(RECOMMENDED), { until: 3600 });
    expect(cluster.moves()).toEqual([]);
    expect(stops(cluster.events)).toEqual([
      '0 pressure gate: every node under pressure (node1 cpu 25.0%, node2 cpu 25.0%, node3 mem 8.0%): the cluster needs more capacity',
    ]);
  });

  it("missing telemetry: 'balance' keeps the reference behaviour, 'hold' moves nothing", () => {
    const blind = (missing: 'balance' | 'hold') => {
      const cluster = idleCluster();
      for (const node of ['node1', 'node2', 'node3'])
        cluster.setNode(node, { pressureCpu: undefined, pressureMem: undefined });
      cluster.run(
        withPressure({
          ...RECOMMENDED,
          'ha-auto-rebalance-pressure-missing': missing,
          'ha-auto-rebalance-check-migratable': 0,
        }),
        { until: 3600 },
      );
      return cluster;
    };
    const reference = idleCluster();
    reference.run(withPressure(OFF), { until: 3600 });
    const balance = blind('balance');
    expect(balance.moves().map((m) => m.type === 'move' && m.resources)).toEqual(
      reference.moves().map((m) => m.type === 'move' && m.resources),
    );
    expect(balance.events.filter((e) => e.type === 'notice').map((e) => e.type === 'notice' && e.code)).toEqual([
      'pressure-missing',
    ]);
    const hold = blind('hold');
    expect(hold.moves()).toEqual([]);
    expect(stops(hold.events)).toEqual([
      '0 pressure gate: no pressure telemetry for node1 (cpu, mem), node2 (cpu, mem), node3 (cpu, mem)',
    ]);
  });
});

describe('seed symptom 1 with the migratability check', () => {
  it('a guest with a local cd-rom image is never tried; the others balance', () => {
    const cluster = new ReplayCluster({
      nodes: ['node1', 'node2', 'node3'].map((name) => ({ name, maxcpu: 24, maxmem: 32 * GIB })),
      guests: [
        {
          sid: 'vm:101',
          node: 'node1',
          cpu: 1,
          mem: 4 * GIB,
          failures: 1_000_000,
          config: { ide2: 'local:iso/d.iso,media=cdrom', scsi0: 'ceph:vm-101-disk-0' },
        },
        ...['vm:102', 'vm:103', 'vm:104'].map((sid) => ({
          sid,
          node: 'node1',
          cpu: 1,
          mem: 4 * GIB,
          config: { scsi0: `ceph:${sid}-disk-0` },
        })),
      ],
      start: 40,
    });
    cluster.run(withPressure({ 'ha-auto-rebalance-check-migratable': 1 }), { until: 40 + 1200 });
    expect(cluster.moves().every((m) => m.type === 'move' && !m.resources.includes('vm:101'))).toBe(true);
    expect(cluster.outcomes().every((o) => o.type === 'outcome' && o.ok)).toBe(true);
    expect(cluster.moves().length).toBeGreaterThanOrEqual(2);
    const told = cluster.events.filter((e) => e.type === 'notice').map((e) => (e.type === 'notice' ? e.message : ''));
    expect(told).toEqual(["vm:101 cannot be migrated: local cd-rom image 'local:iso/d.iso' (ide2)"]);
  });
});

describe('both variant packages composed', () => {
  const offNumber = fc.constantFrom(undefined, null, '', 0, '0', '0.0');
  const offFlag = fc.constantFrom(undefined, 0, '0', false);
  const both = new PolicyRegistry([stablePlugin, pressurePlugin]);
  const keys = both.keys();

  it('with every key off (any spelling), decisions and state transitions equal the reference pipeline on random rounds', () => {
    const crsArb = fc.record(
      Object.fromEntries(
        keys.map((k) => [
          k.key,
          k.type === 'flag' ? offFlag : k.type === 'choice' ? fc.constantFrom(undefined, 'balance', 'hold') : offNumber,
        ]),
      ),
      { requiredKeys: [] },
    );
    const roundArb = fc.record({
      dt: fc.integer({ min: 0, max: 60 }),
      motionInFlight: fc.boolean(),
      imbalance: fc.double({ min: 0, max: 1.5, noNaN: true }),
      after: fc.double({ min: 0, max: 1.5, noNaN: true }),
      target: fc.constantFrom('node2', 'node3'),
      empty: fc.boolean(),
    });
    fc.assert(
      fc.property(crsArb, fc.array(roundArb, { maxLength: 25 }), (crs, rounds) => {
        const settings = both.read(crs);
        expect(settings.problems).toEqual([]);
        const composed = both.pipeline(settings, REFERENCE);
        const reference = referencePipeline(REFERENCE);
        let a: PipelineState = composed.initialState();
        let b: PipelineState = reference.initialState();
        let now = 0;
        for (const r of rounds) {
          now += r.dt;
          const ctx = (): BalanceContext => ({
            now,
            motionInFlight: r.motionInFlight,
            outcomes: [{ resources: ['vm:101'], source: 'node1', target: r.target, ok: r.empty, at: now }],
            imbalance: () => r.imbalance,
            candidates: () =>
              r.empty
                ? []
                : [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2', 'node3'], source: 'node1' }],
            score: (_c, _m, limit) =>
              [{ sid: 'vm:101', source: 'node1', target: r.target, imbalance: r.after }].slice(0, limit),
          });
          const x = composed.run(ctx(), a);
          const y = reference.run(ctx(), b);
          expect(x).toEqual(y);
          a = x.state;
          b = y.state;
        }
      }),
    );
  });

  it('recommended (all stages) on the idle cluster with a pressure episode: one move, off the pressured node, state plain JSON', () => {
    const pipeline = both.pipeline(both.read(RECOMMENDED), REFERENCE);
    const cluster = idleCluster();
    let state = cluster.run(pipeline, { until: 1800 });
    cluster.setNode('node1', { pressureCpu: 30 });
    state = cluster.run(pipeline, { until: 1800 + 600, state });
    cluster.setNode('node1', { pressureCpu: 1 });
    state = cluster.run(pipeline, { until: EIGHT_HOURS, state });
    expect(
      cluster.moves().map((m) => m.type === 'move' && `${m.resources.join('+')} ${m.source}→${m.target}`),
    ).toHaveLength(1);
    expect(cluster.moves()[0]).toMatchObject({ source: 'node1' });
    expect(pipeline.restore(JSON.parse(JSON.stringify(state)))).toEqual(state);
  });
});
