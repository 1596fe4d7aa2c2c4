import { describe, expect, test } from 'vitest';
import { MAX_ROOM_MOVES_PER_GUEST, planDrain } from './drain';
import { PlanError } from './errors';
import { nodeFailureReport } from './what-if';
import { placeGuests } from './place';
import { planPlacement } from './planner';
import { generatedCluster } from './testing/generated-cluster';
import type { FeasiblePlan, PlacementPlan, PlanGuest, PlanInput, PlanNode } from './types';

const GIB = 1024 ** 3;
const node = (name: string, memGib = 16, extra: Partial<PlanNode> = {}): PlanNode => ({
  name,
  cpuCores: 16,
  memBytes: memGib * GIB,
  ...extra,
});
const vm = (id: string, on: string, memGib: number, extra: Partial<PlanGuest> = {}): PlanGuest => ({
  id,
  kind: 'vm',
  node: on,
  ha: true,
  cpu: 1,
  mem: memGib * GIB,
  ...extra,
});
const feasible = (plan: PlacementPlan): FeasiblePlan => {
  if (!plan.feasible) throw new Error(`infeasible: ${plan.reasons.join('; ')}`);
  return plan;
};
const motions = (plan: FeasiblePlan) => plan.steps.flat().map((m) => `${m.guests.join('+')} ${m.source}→${m.target}`);

describe('a drain moves only what it must', () => {
  test("the drained node's guests move, nobody else, however unbalanced the rest", () => {
    // node2 is far fuller than node3 and node4: a rebalancing would move some of it; a drain does not
    const input: PlanInput = {
      nodes: [node('node1'), node('node2'), node('node3'), node('node4')],
      guests: [
        vm('vm:101', 'node1', 2),
        vm('vm:102', 'node1', 1),
        vm('vm:103', 'node1', 1),
        vm('vm:201', 'node2', 6),
        vm('vm:202', 'node2', 6),
      ],
    };
    const plan = feasible(planDrain(input, { drain: ['node1'] }));
    // 3 guests on node1 → exactly 3 motions, all off node1
    expect(motions(plan)).toHaveLength(3);
    expect(plan.steps.flat().every((m) => m.source === 'node1')).toBe(true);
    expect(plan.drain).toEqual({ nodes: ['node1'], required: 3, makeRoom: [], motions: 3 });
    expect(plan.placement.get('vm:201')).toBe('node2');
    expect(plan.placement.get('vm:202')).toBe('node2');
    // the largest goes to the emptiest node: vm:101 (2 GiB) to node3, then the 1 GiB ones spread
    expect(plan.placement.get('vm:101')).toBe('node3');
    expect(plan.currentViolations).toEqual([
      'vm:101 must leave node1 (being drained)',
      'vm:102 must leave node1 (being drained)',
      'vm:103 must leave node1 (being drained)',
    ]);
    // the rebalancing planner moves a guest off node2 too
    const full = feasible(planPlacement(input, { drain: ['node1'] }));
    expect(full.steps.flat().some((m) => m.source === 'node2')).toBe(true);
  });

  test('no other guest moves when another split of the drained guests fits (the exact search finds it)', () => {
    // node2 has 6 GiB free, node3 5 GiB. One by one, largest first: 5 → node2 (lower use after),
    // 3 → node3, then 3 fits nowhere (node2 1 GiB, node3 2 GiB free). The split 5 → node3,
    // 3 + 3 → node2 fits without moving anyone else.
    const input: PlanInput = {
      nodes: [node('node1'), node('node2'), node('node3')],
      guests: [
        vm('vm:101', 'node1', 5),
        vm('vm:102', 'node1', 3),
        vm('vm:103', 'node1', 3),
        vm('vm:201', 'node2', 10),
        vm('vm:301', 'node3', 11),
      ],
    };
    const plan = feasible(planDrain(input, { drain: ['node1'] }));
    expect(plan.drain?.makeRoom).toEqual([]);
    expect(plan.placement.get('vm:101')).toBe('node3');
    expect(plan.placement.get('vm:102')).toBe('node2');
    expect(plan.placement.get('vm:103')).toBe('node2');
    expect(motions(plan)).toHaveLength(3);
  });

  test('one other guest moves where that is the only way to make room, and the plan says why', () => {
    // vm:101 needs 8 GiB; node2 has 3 GiB free (13 of 16 used), node3 6 GiB free. Moving
    // vm:201 (5 GiB) from node2 to node3 leaves node2 8 GiB free: 2 motions, 1 of them extra.
    const input: PlanInput = {
      nodes: [node('node1'), node('node2'), node('node3')],
      guests: [vm('vm:101', 'node1', 8), vm('vm:201', 'node2', 5), vm('vm:202', 'node2', 8), vm('vm:301', 'node3', 10)],
    };
    const plan = feasible(planDrain(input, { drain: ['node1'] }));
    expect(plan.drain).toEqual({
      nodes: ['node1'],
      required: 1,
      makeRoom: [
        {
          guests: ['vm:201'],
          source: 'node2',
          target: 'node3',
          for: 'vm:101',
          reason: 'vm:201 node2 → node3 to make room for vm:101 (needs 8.0 GiB, node2 has 3.0 GiB free)',
        },
      ],
      motions: 2,
    });
    // the extra move goes first: vm:101 waits for the room
    expect(plan.steps.map((s) => s.map((m) => m.guests[0]))).toEqual([['vm:201'], ['vm:101']]);
    expect(plan.notes).toContain(
      'vm:201 node2 → node3 to make room for vm:101 (needs 8.0 GiB, node2 has 3.0 GiB free)',
    );
    expect(plan.placement.get('vm:202')).toBe('node2');
    expect(plan.placement.get('vm:301')).toBe('node3');
  });

  test('when moving others is not enough either, it stops with the reason and plans nothing', () => {
    // vm:101 needs 12 GiB; every other node has 4 GiB free and their guests (10 GiB each) fit nowhere else
    const input: PlanInput = {
      nodes: [node('node1'), node('node2'), node('node3')],
      guests: [vm('vm:101', 'node1', 12), vm('vm:201', 'node2', 12), vm('vm:301', 'node3', 12)],
    };
    const plan = planDrain(input, { drain: ['node1'] });
    expect(plan).toMatchObject({
      feasible: false,
      reasons: [
        `node1 cannot be drained: vm:101 (12.0 GiB) fits on no node it may use, not even after moving up to ${MAX_ROOM_MOVES_PER_GUEST} other guests off one of them (the most room: node2 with 4.0 GiB free)`,
      ],
    });
    expect('steps' in plan).toBe(false);
  });

  test('a guest that cannot be migrated makes the drain of its node infeasible, naming it', () => {
    const input: PlanInput = {
      nodes: [node('node1'), node('node2')],
      guests: [
        vm('vm:101', 'node1', 1),
        vm('vm:105', 'node1', 1, {
          migratable: false,
          reason: "cannot be migrated: local cd-rom image 'local:iso/d.iso' (ide2)",
        }),
      ],
    };
    expect(planDrain(input, { drain: ['node1'] })).toMatchObject({
      feasible: false,
      reasons: ["node1 cannot be drained: vm:105 cannot be migrated: local cd-rom image 'local:iso/d.iso' (ide2)"],
    });
  });

  test('a drain must name a node', () => {
    const input: PlanInput = { nodes: [node('node1')], guests: [] };
    expect(() => planDrain(input, { drain: [] })).toThrow(PlanError);
    expect(() => planDrain(input, { drain: [] })).toThrow(/options\.drain must name at least one node/);
    expect(() => planDrain(input, { drain: ['node9'] })).toThrow(/options\.drain\[0\] 'node9' is not one of the nodes/);
  });

  test.each([
    [36, 720],
    [64, 5000],
  ])('generated %i × %i: the motions are the guests of the node plus the extra moves it names', (nodes, guests) => {
    const input = generatedCluster(7, nodes, guests, Math.round(guests / 10));
    const drained = input.nodes[1]!.name;
    const plan = feasible(planDrain(input, { drain: [drained], maxParallelPerNode: 4 }));
    const on = input.guests.filter((g) => g.node === drained).length;
    const moved = plan.steps.flat();
    expect(moved.length).toBeLessThanOrEqual(on + plan.drain!.makeRoom.length);
    // every guest that moves is the drained node's or named as making room
    const named = new Set(plan.drain!.makeRoom.flatMap((m) => m.guests));
    for (const m of moved) for (const id of m.guests) expect(m.source === drained || named.has(id)).toBe(true);
    // nobody is left on the drained node
    expect([...plan.placement.values()]).not.toContain(drained);
  });
});

/**
 * The fewest guests any placement moves to drain `drained` (every guest on it leaves; the others
 * stay or move; rules as the planner keeps them are not part of these instances), by trying
 * every assignment: the optimum the drain's count is checked against.
 */
function fewestMoves(input: PlanInput, drained: string): number | undefined {
  const nodes = input.nodes.filter((n) => n.name !== drained);
  const g = input.guests;
  let best: number | undefined;
  const mem = new Map(nodes.map((n) => [n.name, 0]));
  const walk = (i: number, moves: number) => {
    if (best !== undefined && moves >= best) return;
    if (i === g.length) {
      best = moves;
      return;
    }
    for (const n of nodes) {
      const add = g[i]!.mem;
      if (mem.get(n.name)! + add > n.memBytes) continue;
      mem.set(n.name, mem.get(n.name)! + add);
      walk(i + 1, moves + (n.name === g[i]!.node ? 0 : 1));
      mem.set(n.name, mem.get(n.name)! - add);
    }
  };
  walk(0, 0);
  return best;
}

describe('the count of a drain against the fewest moves possible (every placement tried)', () => {
  // 4 nodes of 16 GiB, 9 guests of 1–8 GiB packed tightly, node1 drained: 300 seeded instances
  const instances = Array.from({ length: 300 }, (_, k) => {
    let x = (k + 1) * 2654435761;
    const rand = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const nodes = ['node1', 'node2', 'node3', 'node4'].map((n) => node(n, 16));
    const used = new Map(nodes.map((n) => [n.name, 0]));
    const guests: PlanGuest[] = [];
    for (let i = 0; guests.length < 9 && i < 100; i++) {
      const size = 1 + Math.floor(rand() * 8);
      const on = nodes[Math.floor(rand() * 4)]!.name;
      if (used.get(on)! + size > 16) continue;
      used.set(on, used.get(on)! + size);
      guests.push(vm(`vm:${101 + guests.length}`, on, size));
    }
    return { nodes, guests } satisfies PlanInput;
  });

  test('feasibility agrees, and the drain moves the fewest guests possible in at least 95 % of them', () => {
    let optimal = 0;
    let asked = 0;
    for (const input of instances) {
      const best = fewestMoves(input, 'node1');
      const plan = planDrain(input, { drain: ['node1'] });
      if (best === undefined) {
        expect(plan.feasible).toBe(false);
        continue;
      }
      const on = input.guests.filter((g) => g.node === 'node1').length;
      // a drain that needs more than its bound of moves per guest may stop; every other is found
      if (best - on > MAX_ROOM_MOVES_PER_GUEST) continue;
      asked++;
      const got = feasible(plan).objective.moves;
      expect(got).toBeGreaterThanOrEqual(best);
      if (got === best) optimal++;
    }
    // measured: 284 asked, 278 at the optimum (97.9 %); the 6 others are instances that need
    // other guests moved, where the drain moves 1 to 6 guests more than the fewest possible
    expect(asked).toBeGreaterThan(250);
    expect(optimal / asked).toBeGreaterThanOrEqual(0.95);
  });
});

describe('an offline node (PVE: 0 cores and memory) takes nothing; it is not bad input', () => {
  const input: PlanInput = {
    nodes: [node('node1'), node('node2'), node('node3'), { name: 'node4', cpuCores: 0, memBytes: 0, online: false }],
    guests: [vm('vm:101', 'node1', 4), vm('vm:102', 'node1', 4), vm('ct:103', 'node2', 1, { kind: 'ct' })],
  };

  test('plan, drain, place and what-if answer without it', () => {
    const plan = feasible(planPlacement(input));
    expect([...plan.placement.values()]).not.toContain('node4');
    expect(plan.nodes.map((n) => n.node)).toEqual(['node1', 'node2', 'node3']);
    const drain = feasible(planDrain(input, { drain: ['node1'] }));
    expect(drain.steps.flat().map((m) => m.target)).not.toContain('node4');
    const placed = placeGuests(input, { guests: [{ cores: 1, mem: GIB, count: 3 }] });
    expect(placed.unplaced).toEqual([]);
    expect([...placed.placed.values()]).not.toContain('node4');
    const report = nodeFailureReport(input);
    expect(report.cases.map((c) => c.node)).toEqual(['node1', 'node2', 'node3']);
    expect(report.survivesAnyNodeFailure).toBe(true);
    for (const v of [plan.objective.value, drain.objective.value, report.cases[0]!.after.imbalance])
      expect(Number.isFinite(v)).toBe(true);
  });

  test.each<[string, Partial<PlanNode>, RegExp]>([
    [
      'an online node without cores',
      { cpuCores: 0 },
      /node 'node4' \(nodes\[3\]\): cpuCores must be a finite number > 0/,
    ],
    [
      'an online node without memory',
      { memBytes: 0 },
      /node 'node4' \(nodes\[3\]\): memBytes must be a finite number > 0/,
    ],
    ['an offline node with negative cores', { online: false, cpuCores: -1 }, /cpuCores must be a finite number >= 0/],
  ])('%s is still bad input', (_, change, message) => {
    const bad: PlanInput = { ...input, nodes: [...input.nodes.slice(0, 3), { ...node('node4'), ...change }] };
    expect(() => planPlacement(bad)).toThrow(message);
  });
});
