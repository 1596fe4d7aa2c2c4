import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runBalance } from './regret';
import { runOne } from './sim-adapter';

// The scenario `plan-fewer-moves` (apps/sim/scenarios): four nodes of three sizes, three guests
// on the smallest. The greedy balancer's best single move sends vm:101 to the mid-size node3 and
// moves it again to node2 once vm:103 has left; the planned balancer sends it to node2 at once.
const dir = fileURLToPath(new URL('../../scenarios/plan-fewer-moves', import.meta.url));
const scenario = { name: 'plan-fewer-moves', dir };

describe('plan-fewer-moves: the planned balancer reaches balance in fewer moves than greedy', () => {
  const planned = runOne(scenario, { name: 'planned', crs: {} }, 0);
  const greedy = runOne(scenario, { name: 'greedy', crs: { 'ha-auto-rebalance-plan': 0 } }, 0);
  const bp = runBalance(planned);
  const bg = runBalance(greedy);

  it('both end balanced in the same placement; greedy needs one move more, all its own', () => {
    expect(bp.reach.moves).toBe(3);
    expect(bg.reach.moves).toBe(4);
    const final = (t: typeof planned) => Object.fromEntries(t.placement!.guests.map((g) => [g.sid, g.final]));
    expect(final(greedy)).toEqual(final(planned));
    // greedy moves vm:101 twice; the planner moves every guest at most once
    expect(greedy.moves.filter((m) => m.sid === 'vm:101').map((m) => m.target)).toEqual(['node3', 'node2']);
    expect(new Set(planned.moves.map((m) => m.sid)).size).toBe(planned.moves.length);
  });

  it('the hindsight oracle is the planned run: regret 1 for planned, 4/3 for greedy', () => {
    expect(bp.oracle).toMatchObject({ moves: 3, runDisplaced: 3, runValid: true });
    // the relaxation's bound: no placement as balanced is reached in fewer than 2 moves
    expect(bp.oracle?.bound).toBe(2);
    expect(bp.regret).toBe(1);
    expect(bg.oracle?.moves).toBe(3);
    expect(bg.regret).toBeCloseTo(4 / 3, 12);
    expect(bg.excess).toBe(1);
  });
}, 120_000);
