import type { MoveAssessment } from '@poise/contention';
import type { BalanceCandidate } from '@poise/policy';
import { describe, expect, it } from 'vitest';
import { blindSourceFirst } from './score';
import { stubAssessment } from './test-support';

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
