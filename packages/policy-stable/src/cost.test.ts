import { describe, expect, it } from 'vitest';
import { type MoveObjective, percentReasonFormat } from '@poise/policy';
import { costSelect } from './cost';
import { minImprovementAccept } from './dead-band';
import { GIB, candidate, fixedContext } from './testing/support';

// before 0.5; A improves by 0.20 (16 GiB), B by 0.17 (4 GiB), C by 0.15 (1 GiB)
const A = { sid: 'vm:101', source: 'node1', target: 'node3', imbalance: 0.3 };
const B = { sid: 'vm:102', source: 'node1', target: 'node2', imbalance: 0.33 };
const C = { sid: 'vm:103', source: 'node1', target: 'node2', imbalance: 0.35 };
const candidates = (costC: number | undefined) => [
  candidate('vm:101', ['node2', 'node3'], { transferBytes: 16 * GIB }),
  candidate('vm:102', ['node2'], { transferBytes: 4 * GIB }),
  candidate('vm:103', ['node2'], { transferBytes: costC }),
];

function select(weight: number, scored = [A, B, C], costC?: number | null) {
  const out = costSelect({ weight }).run(
    fixedContext(),
    { imbalance: 0.5, scored, candidates: candidates(costC === null ? undefined : (costC ?? GIB)) },
    null,
  );
  if ('stop' in out) throw new Error(out.stop);
  return { selected: out.plan.selected, notices: out.notices ?? [] };
}

describe('cost select: the cheapest move within the tolerance of the best improvement', () => {
  it.each([
    // floor = 0.20 · (1 − 0.2) = 0.16: A (0.20) and B (0.17) are eligible; B copies less
    { weight: 0.2, expected: B },
    // floor = 0.20 · 0.7 = 0.14: C (0.15) is eligible too and copies least
    { weight: 0.3, expected: C },
    // floor = 0.20 · 0.9 = 0.18: only A
    { weight: 0.1, expected: A },
    // weight 1: every improving move is eligible
    { weight: 1, expected: C },
  ])('weight $weight selects $expected.sid', ({ weight, expected }) => {
    expect(select(weight).selected).toEqual(expected);
  });

  it('an unknown cost counts as more than any known one', () => {
    expect(select(0.3, [A, B, C], null).selected).toEqual(B);
  });

  it('equal costs keep the scorer order', () => {
    const out = costSelect({ weight: 0.3 }).run(
      fixedContext(),
      {
        imbalance: 0.5,
        scored: [A, B],
        candidates: [
          candidate('vm:101', ['node3'], { transferBytes: GIB }),
          candidate('vm:102', ['node2'], { transferBytes: GIB }),
        ],
      },
      null,
    );
    expect('plan' in out && out.plan.selected).toEqual(A);
  });

  it('when nothing improves, the scorer’s first is selected (the margin rejects it)', () => {
    const worse = [
      { ...A, imbalance: 0.6 },
      { ...B, imbalance: 0.7 },
    ];
    expect(select(0.5, worse).selected).toEqual(worse[0]);
  });

  it('says why it did not take the best', () => {
    expect(select(0.2).notices).toEqual([
      {
        code: 'cost-preferred',
        severity: 'info',
        message:
          'preferred vm:102 to node2 (copies 4.0 GiB, improvement 0.1700) over vm:101 to node3 (copies 16.0 GiB, improvement 0.2000)',
      },
    ]);
    expect(select(0.1).notices).toEqual([]);
  });

  it('prints the improvements in the host’s units (percentage points)', () => {
    // 0.5 − 0.33 = 0.17 → 17.0 pp; 0.5 − 0.3 = 0.2 → 20.0 pp
    const out = costSelect({ weight: 0.2 }).run(
      fixedContext({ format: percentReasonFormat() }),
      { imbalance: 0.5, scored: [A, B, C], candidates: candidates(GIB) },
      null,
    );
    expect(out.notices?.[0]?.message).toBe(
      'preferred vm:102 to node2 (copies 4.0 GiB, improvement 17.0 pp) over vm:101 to node3 (copies 16.0 GiB, improvement 20.0 pp)',
    );
  });

  it('stops when nothing was scored, and rejects bad options', () => {
    expect(costSelect({ weight: 0.2 }).run(fixedContext(), { scored: [] }, null)).toMatchObject({
      code: 'nothing-selected',
    });
    expect(() => costSelect({ weight: 0 })).toThrow("cost weight must be in (0, 1], got '0'");
    expect(() => costSelect({ weight: 1.5 })).toThrow('1.5');
    expect(() => costSelect({ weight: 0.2, limit: 0 })).toThrow("cost limit must be an integer >= 1, got '0'");
  });
});

describe('cost select under another objective (plan.objective)', () => {
  /** An objective whose gains are given per leader (undefined: the move cannot be judged). */
  const objective = (gains: Record<string, number | undefined>): MoveObjective => ({
    name: 'guest contention',
    gain: (c) => gains[c.leader],
    formatGain: (g) => `${g.toFixed(0)} guest-seconds`,
  });
  const run = (gains: Record<string, number | undefined>, weight = 0.2) =>
    costSelect({ weight }).run(
      fixedContext(),
      { scored: [A, B, C], candidates: candidates(GIB), objective: objective(gains) },
      null,
    );

  it.each([
    // best gain 100 (A), floor 80: A and B (90) eligible, B copies less (4 GiB < 16 GiB)
    { gains: { 'vm:101': 100, 'vm:102': 90, 'vm:103': 50 }, expected: B },
    // the imbalance would rank A first; the gains make B (100) and C (95) eligible, C copies least
    { gains: { 'vm:101': 10, 'vm:102': 100, 'vm:103': 95 }, expected: C },
    // a move the objective cannot judge is never eligible: A 100 alone is
    { gains: { 'vm:101': 100, 'vm:102': undefined, 'vm:103': undefined }, expected: A },
    // no gain anywhere: the scorer's first (the objective's margin rejects it)
    { gains: { 'vm:101': -5, 'vm:102': 0, 'vm:103': undefined }, expected: A },
  ])('compares the objective’s gains, not imbalance improvements: $expected.sid', ({ gains, expected }) => {
    const out = run(gains);
    expect('plan' in out && out.plan.selected).toEqual(expected);
  });

  it('says why in the objective’s terms', () => {
    expect(run({ 'vm:101': 100, 'vm:102': 90, 'vm:103': 50 }).notices).toEqual([
      {
        code: 'cost-preferred',
        severity: 'info',
        message:
          'preferred vm:102 to node2 (copies 4.0 GiB, guest contention gain 90 guest-seconds) over vm:101 to node3 (copies 16.0 GiB, guest contention gain 100 guest-seconds)',
      },
    ]);
  });
});

describe('the dead band under another objective', () => {
  it('applies to the imbalance only: with plan.objective the objective’s margin judges', () => {
    const stage = minImprovementAccept({ minImprovement: 0.05 });
    // 0.5 − 0.48 = 0.02 < 0.05
    const plan = { imbalance: 0.5, selected: { ...A, imbalance: 0.48 } };
    expect(stage.run(fixedContext(), plan, null)).toMatchObject({ code: 'below-min-improvement' });
    const objective: MoveObjective = { name: 'guest contention', gain: () => 1, formatGain: String };
    expect(stage.run(fixedContext(), { ...plan, objective }, null)).toEqual({
      plan: { ...plan, objective },
      state: null,
    });
  });
});
