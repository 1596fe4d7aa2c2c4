import fc from 'fast-check';
import {
  type BalanceCandidate,
  type BalanceContext,
  type Decision,
  type PipelineState,
  PolicyRegistry,
  referencePipeline,
} from '@poise/policy';
import { ReplayCluster } from '@poise/policy/testing';
import { describe, expect, it } from 'vitest';
import { stablePlugin } from './index';
import { mulberry32 } from '@poise/test-support/prng';
import { GIB } from './testing/support';

const REFERENCE = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
const registry = new PolicyRegistry([stablePlugin]);
const RECOMMENDED = { 'ha-auto-rebalance-preset': 'recommended' };
const CANDIDATES: BalanceCandidate[] = [
  { leader: 'vm:101', resources: ['vm:101'], targets: ['node2', 'node3'], source: 'node1', transferBytes: 4 * GIB },
  { leader: 'vm:102', resources: ['vm:102', 'vm:103'], targets: ['node3'], source: 'node1', transferBytes: 8 * GIB },
];

const roundArb = fc.record({
  dt: fc.integer({ min: 0, max: 120 }),
  motionInFlight: fc.boolean(),
  imbalance: fc.double({ min: 0, max: 1.5, noNaN: true }),
  after: fc.double({ min: 0, max: 1.5, noNaN: true }),
  pick: fc.constantFrom<[string, string]>(['vm:101', 'node2'], ['vm:101', 'node3'], ['vm:102', 'node3']),
  outcome: fc.option(fc.record({ ok: fc.boolean(), pick: fc.constantFrom(0, 1) }), { nil: undefined }),
});

type Round = typeof roundArb extends fc.Arbitrary<infer R> ? R : never;

function contextOf(now: number, r: Round): BalanceContext {
  const sid = r.pick[0];
  const target = r.pick[1];
  const c = CANDIDATES[r.outcome?.pick ?? 0]!;
  return {
    now,
    motionInFlight: r.motionInFlight,
    outcomes: r.outcome
      ? [{ resources: c.resources, source: 'node1', target: c.targets[0]!, ok: r.outcome.ok, at: now }]
      : [],
    imbalance: () => r.imbalance,
    candidates: () => CANDIDATES,
    score: (_c, _m, limit) => [{ sid: sid, source: 'node1', target: target, imbalance: r.after }].slice(0, limit),
    nodes: () => [{ node: 'node1', cpu: 1, maxcpu: 4, mem: GIB, maxmem: 8 * GIB, servicesCpu: 1, servicesMem: GIB }],
    adjust: () => ({
      imbalance: () => r.imbalance,
      score: (_c, _m, limit) => [{ sid: sid, source: 'node1', target: target, imbalance: r.after }].slice(0, limit),
    }),
  };
}

/** Every value allowed to mean "off": absent, blank, or 0 in any spelling of the key's type. */
const offNumber = fc.constantFrom(undefined, null, '', 0, '0', '0.0', -0, '-0');
const offFlag = fc.constantFrom(undefined, null, '', 0, '0', false);

describe('properties', () => {
  it('with every key off, the composed pipeline decides and keeps state exactly like the reference', () => {
    const crsArb = fc.record(
      Object.fromEntries(registry.keys().map((k) => [k.key, k.type === 'flag' ? offFlag : offNumber])),
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(crsArb, fc.array(roundArb, { maxLength: 25 }), (crs, rounds) => {
        const settings = registry.read(crs);
        expect(settings.problems).toEqual([]);
        const composed = registry.pipeline(settings, REFERENCE);
        const reference = referencePipeline(REFERENCE);
        let a: PipelineState = composed.initialState();
        let b: PipelineState = reference.initialState();
        let now = 0;
        for (const r of rounds) {
          now += r.dt;
          const x = composed.run(contextOf(now, r), a);
          const y = reference.run(contextOf(now, r), b);
          expect(x).toEqual(y);
          a = x.state;
          b = y.state;
        }
      }),
    );
  });

  it('recommended on random rounds: states are plain JSON, restore to themselves, and no decision holds a non-finite number', () => {
    const pipeline = registry.pipeline(registry.read(RECOMMENDED), REFERENCE);
    const finite = (d: Decision) => d.action === 'none' || [d.imbalanceBefore, d.imbalanceAfter].every(Number.isFinite);
    fc.assert(
      fc.property(fc.array(roundArb, { maxLength: 25 }), (rounds) => {
        let state: PipelineState = pipeline.initialState();
        let now = 0;
        for (const r of rounds) {
          now += r.dt;
          const out = pipeline.run(contextOf(now, r), state);
          expect(finite(out.decision)).toBe(true);
          const json = JSON.parse(JSON.stringify(out.state)) as PipelineState;
          expect(json).toEqual(out.state);
          expect(pipeline.restore(json)).toEqual(out.state);
          state = json;
        }
      }),
    );
  });

  it('recommended on random clusters: every move clears the 5 pp dead band and the margin; a series never retries a pair that failed in it', () => {
    const guestArb = fc.record({
      cpu: fc.double({ min: 0, max: 8, noNaN: true }),
      mem: fc.integer({ min: 0, max: 32 }),
      node: fc.integer({ min: 0, max: 2 }),
      failures: fc.integer({ min: 0, max: 3 }),
    });
    fc.assert(
      fc.property(
        fc.array(guestArb, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        (guests, seed) => {
          const random = mulberry32(seed);
          const cluster = new ReplayCluster({
            nodes: ['node1', 'node2', 'node3'].map((name) => ({ name, maxcpu: 16, maxmem: 64 * GIB })),
            guests: guests.map((g, i) => ({
              sid: `vm:${100 + i}`,
              node: `node${g.node + 1}`,
              cpu: g.cpu,
              mem: g.mem * GIB,
              failures: g.failures,
            })),
          });
          cluster.run(registry.pipeline(registry.read(RECOMMENDED), REFERENCE), {
            until: 1200,
            beforeRound: (c) => {
              for (const n of ['node1', 'node2', 'node3'])
                c.setNode(n, { cpu: random() * 2, mem: Math.floor(random() * 4 * GIB) });
            },
          });
          for (const m of cluster.moves()) {
            if (m.type !== 'move') continue;
            expect(m.imbalanceBefore - m.imbalanceAfter).toBeGreaterThanOrEqual(0.05);
            expect((m.imbalanceBefore - m.imbalanceAfter) / m.imbalanceBefore).toBeGreaterThanOrEqual(0.1);
          }
          // a series: a move, and each move issued in the round its predecessor's failure is known
          const failed = new Set<string>();
          let failedAt: number | undefined;
          for (const e of cluster.events) {
            if (e.type !== 'move' && e.type !== 'outcome') continue;
            const pair = `${e.resources.join('+')}>${e.target}`;
            if (e.type === 'outcome') {
              if (e.ok) failed.clear();
              else failed.add(pair);
              failedAt = e.ok ? undefined : e.time;
            } else if (e.time === failedAt) {
              expect(failed.has(pair)).toBe(false);
            } else {
              failed.clear();
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
