import { describe, expect, it } from 'vitest';
import { type ScoredMigration, stateCheck } from '@poise/policy';
import { contentionMarginAccept } from './margin';
import { contentionScorer } from './score';
import { type PredictedRelief, checkPredicted, checkUnrelieved, judgeRelief } from './relief';
import { balanceContext, pressureNow, selectedPlan, stubAssessment, stubObjective } from './testing/support';

const ctx = balanceContext;

// decided at 1000: vm:101 off node1, cpu predicted 30 % → 5 %
const LAST: PredictedRelief = {
  at: 1000,
  resources: ['vm:101'],
  source: 'node1',
  cpuBefore: 30,
  cpuAfter: 5,
  memBefore: 0,
  memAfter: 0,
};
const LANDED = [{ at: 1020, resources: ['vm:101'], source: 'node1', target: 'node2' }];

describe('judgeRelief: did the move relieve its source as predicted?', () => {
  it('waits until the move landed and settled', () => {
    expect(judgeRelief(LAST, [], [pressureNow('node1', 30)], 1200, 60)).toBeUndefined();
    expect(judgeRelief(LAST, LANDED, [pressureNow('node1', 30)], 1079, 60)).toBeUndefined();
  });

  it('a relief that shows (within the model’s degree of error) is no miss', () => {
    expect(judgeRelief(LAST, LANDED, [pressureNow('node1', 6)], 1080, 60)).toBeNull();
    // 12 points above the prediction, but less than half the predicted fall of 25
    expect(judgeRelief(LAST, LANDED, [pressureNow('node1', 17)], 1080, 60)).toBeNull();
  });

  it('a relief that does not show names the move, the node and the figures', () => {
    expect(judgeRelief(LAST, LANDED, [pressureNow('node1', 25)], 1080, 60)).toEqual({
      node: 'node1',
      at: 1080,
      why: 'the move of vm:101 off node1 at 1020 left it at cpu 25.0% (predicted 5.0%)',
    });
  });

  it('a dimension not predicted to fall is not judged', () => {
    const memOnly = { ...LAST, cpuBefore: 30, cpuAfter: 30, memBefore: 10, memAfter: 1 };
    expect(judgeRelief(memOnly, LANDED, [pressureNow('node1', 40, 2)], 1080, 60)).toBeNull();
    expect(judgeRelief(memOnly, LANDED, [pressureNow('node1', 40, 9)], 1080, 60)?.why).toBe(
      'the move of vm:101 off node1 at 1020 left it at mem 9.0% (predicted 1.0%)',
    );
  });

  it('names a corrupt restored value', () => {
    const check = stateCheck('contention-margin');
    expect(checkPredicted(check, null, 'last')).toBeNull();
    expect(() => checkPredicted(check, { ...LAST, cpuAfter: 130 }, 'last')).toThrow(
      "stage 'contention-margin': state field 'last.cpuAfter' must be a finite number in 0..100, got 130",
    );
    expect(() => checkUnrelieved(check, [{ node: 'node1', at: 'soon', why: 'x' }], 'unrelieved')).toThrow(
      "stage 'contention-margin': state field 'unrelieved.0.at'",
    );
  });
});

describe('contention-margin: a source whose confident relief did not show is left alone until it calms', () => {
  const margin = contentionMarginAccept({ margin: 0.1, minGainSeconds: 30 });
  // vm:101 off node1 spares 59 guest-seconds: node1 predicted 30 % → 5 %, confidently
  const move = stubAssessment({ rateBefore: 10, rateAfter: 9.9, movingRate: 0.3, cpuBefore: 30, cpuAfter: 5 });

  it('moves, sees the miss after the move settled, and stops moving off the source until a calm round', () => {
    const first = margin.run(ctx(1000), selectedPlan(stubObjective(move)), margin.initialState());
    expect(first).toMatchObject({ plan: expect.anything() });
    expect(first.state.last).toMatchObject({ at: 1000, source: 'node1', cpuBefore: 30, cpuAfter: 5 });

    // the move landed at 1020; at 1080 node1 still shows 25 %: the next move off it stops
    const later = stubObjective(move, { motions: LANDED, pressures: [pressureNow('node1', 25)], calmAt: 500 });
    const second = margin.run(ctx(1080), selectedPlan(later), first.state);
    expect(second).toMatchObject({
      code: 'source-not-relieved',
      stop: 'contention: the move of vm:101 off node1 at 1020 left it at cpu 25.0% (predicted 5.0%): no move off node1 until it calms',
      notices: [
        {
          code: 'contention-not-relieved',
          severity: 'warning',
          message:
            "the move of vm:101 off node1 at 1020 left it at cpu 25.0% (predicted 5.0%): its pressure does not follow its guests' load; no move off node1 until it calms",
        },
      ],
    });
    expect(second.state).toEqual({ last: null, unrelieved: [expect.objectContaining({ node: 'node1', at: 1080 })] });
    // still hot at 1200: still stopped, said once (no second notice)
    const third = margin.run(ctx(1200), selectedPlan(later), second.state);
    expect(third).toMatchObject({ code: 'source-not-relieved', notices: [] });
    // a round without contention at 1500 ended the hot spell: node1 may shed a guest again
    const calm = stubObjective(move, { motions: LANDED, pressures: [pressureNow('node1', 25)], calmAt: 1500 });
    expect(margin.run(ctx(1600), selectedPlan(calm), third.state)).toMatchObject({ plan: expect.anything() });
  });

  it('an uncertain prediction is not judged (its miss says nothing about the node)', () => {
    const unsure = stubAssessment({ rateBefore: 10, rateAfter: 9.8, movingRate: 0.3, cpuAfter: 5, confidence: 0.4 });
    const first = margin.run(ctx(1000), selectedPlan(stubObjective(unsure)), margin.initialState());
    expect(first).toMatchObject({ plan: expect.anything(), state: { last: null } });
  });

  it('reads the state a version without the check saved (null)', () => {
    expect(margin.validateState!(null)).toEqual({ last: null, unrelieved: [] });
  });
});

describe('contention-score: no move that raises the imbalance above the threshold and the imbalance now', () => {
  const candidates = [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2'], source: 'node1' }];
  const plan = (imbalanceAfter: number) => {
    const scored: ScoredMigration = { sid: 'vm:101', source: 'node1', target: 'node2', imbalance: imbalanceAfter };
    return {
      context: ctx(0, { imbalance: () => 0.2, score: () => [scored] }),
      plan: {
        candidates,
        objective: stubObjective(stubAssessment({ rateBefore: 10, rateAfter: 9, movingRate: 1 }), {
          pressures: [pressureNow('node1', 30), pressureNow('node2', 0)],
        }),
      },
    };
  };
  const scorer = contentionScorer({ method: 'bruteforce', limit: 4, threshold: 0.3 });

  it('up to the threshold a move may raise the imbalance; above it, not', () => {
    const within = plan(0.29);
    expect(scorer.run(within.context, within.plan, null)).toMatchObject({ plan: { scored: [{ imbalance: 0.29 }] } });
    const above = plan(0.35);
    expect(scorer.run(above.context, above.plan, null)).toMatchObject({
      code: 'raises-imbalance',
      stop: 'contention: every move that spares guest contention raises the imbalance above 0.3 (best: vm:101 to node2, 0.35)',
    });
  });

  it('rejects a bad threshold', () => {
    expect(() => contentionScorer({ method: 'bruteforce', limit: 1, threshold: Number.NaN })).toThrow(
      "contention score threshold must be a finite number >= 0, got 'NaN'",
    );
  });
});
