import type { MoveAssessment } from '@poise/contention';
import type { BalanceCandidate, BalanceContext, ScoredMigration } from '@poise/policy';
import { describe, expect, it } from 'vitest';
import { blindSourceFirst, contentionScorer } from './score';
import { pressureNow, stubAssessment, stubObjective } from './testing/support';

/** A ranked move of `leader` off node1 freeing `cpu` cores, scored `net`, the source's cpu pressure `before → after`. */
function move(leader: string, cpu: number, net: number, before = 99, after = 99) {
  const a = stubAssessment({ rateBefore: 2, rateAfter: 1, movingRate: 0.5, cpuBefore: before, cpuAfter: after });
  const assessment: MoveAssessment = { ...a, movedCpu: cpu, netSeconds: net };
  const candidate: BalanceCandidate = { leader, resources: [leader], source: 'node1', targets: ['node2'] };
  return { candidate, assessment };
}

const leaders = (ranked: readonly { candidate: BalanceCandidate }[]) => ranked.map((r) => r.candidate.leader);

describe('a saturated source the model cannot see fall', () => {
  it('moves the guest freeing the most cores first, of those the pace lets go', () => {
    // ranked by expected saving: the small guests escape the most, none is predicted to relieve node1
    const ranked = [move('vm:101', 1, 200), move('vm:102', 2, 150), move('vm:103', 8, 100), move('vm:104', 12, 20)];
    expect(leaders(blindSourceFirst(ranked, 60))).toEqual(['vm:103']);
    // the largest guest spares enough once the pace asks less
    expect(leaders(blindSourceFirst(ranked, 10))).toEqual(['vm:104']);
    // none spares what the pace asks: the largest worth making (the margin then says why not)
    expect(leaders(blindSourceFirst(ranked, 500))).toEqual(['vm:104']);
  });

  it('leaves the ranking alone where the model predicts a fall, below saturation, or when nothing is worth it', () => {
    const falls = [move('vm:101', 1, 200, 99, 97), move('vm:103', 8, 100, 99, 60)];
    expect(leaders(blindSourceFirst(falls, 30))).toEqual(['vm:101', 'vm:103']);
    const calm = [move('vm:101', 1, 200, 30, 30), move('vm:103', 8, 100, 30, 30)];
    expect(leaders(blindSourceFirst(calm, 30))).toEqual(['vm:101', 'vm:103']);
    const none = [move('vm:101', 1, -5), move('vm:103', 8, -10)];
    expect(leaders(blindSourceFirst(none, 30))).toEqual(['vm:101', 'vm:103']);
    expect(blindSourceFirst([], 30)).toEqual([]);
  });
});

describe('contention-score at a blind saturated source', () => {
  const small = move('vm:101', 1, 200).assessment;
  const large = move('vm:104', 12, 100).assessment;
  const candidates = ['vm:101', 'vm:104'].map((leader) => ({
    leader,
    resources: [leader],
    targets: ['node2'],
    source: 'node1',
  }));
  const objective = {
    ...stubObjective(small, { pressures: [pressureNow('node1', 99), pressureNow('node2', 0)] }),
    assess: (c: BalanceCandidate) => (c.leader === 'vm:104' ? large : small),
  };
  // the imbalance after each move (0.2 now, threshold 0.3): the large guest's as given
  const round = (largeAfter: number) => {
    const score = (moves: readonly { leader: string; targets: readonly string[] }[]): ScoredMigration[] =>
      moves.map((m) => ({
        sid: m.leader,
        source: 'node1',
        target: m.targets[0]!,
        imbalance: m.leader === 'vm:104' ? largeAfter : 0.25,
      }));
    const context: BalanceContext = {
      now: 0,
      motionInFlight: false,
      imbalance: () => 0.2,
      candidates: () => candidates,
      score,
    };
    return contentionScorer({ method: 'bruteforce', limit: 4, threshold: 0.3 }).run(
      context,
      { candidates, objective },
      null,
    );
  };

  it('hands on only the largest guest, which the expected saving ranks second', () => {
    expect(round(0.1)).toMatchObject({ plan: { scored: [{ sid: 'vm:104' }] } });
  });

  it("falls back to the ranking when the largest guest's moves would raise the imbalance", () => {
    expect(round(0.35)).toMatchObject({ plan: { scored: [{ sid: 'vm:101' }] } });
  });
});
