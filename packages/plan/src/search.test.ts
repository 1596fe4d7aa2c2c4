import { describe, expect, test } from 'vitest';
import { constructAssignment } from './construct';
import { buildProblem } from './model';
import { assignmentViolations } from './objective';
import { randomStart } from './testing/oracle';
import { mulberry32 } from '@poise/test-support/prng';
import { findSwap, findSwapByScan, lowerTo } from './search';
import { SearchState } from './state';
import { validatePlanInput } from './validate';
import type { PlanInput } from './types';

const GIB = 1024 ** 3;

/** Random moves that keep the hard constraints (units away from where they run: migrations that may come back). */
function scatter(st: SearchState, rnd: () => number, moves: number): void {
  for (let k = 0; k < moves; k++) {
    const u = Math.floor(rnd() * st.U);
    const allowed = st.p.allowedList[u]!;
    const t = allowed[Math.floor(rnd() * allowed.length)]!;
    if (t !== st.assign[u] && st.canMove(u, t)) st.move(u, t);
  }
}

describe('best swap', () => {
  test('the pruned search picks the swap of the plain scan (the same pair, ties in the scan order)', () => {
    let found = 0;
    let none = 0;
    for (let seed = 1; seed <= 150; seed++) {
      // up to 14 nodes: more than the 8 least-used nodes a swap looks at
      const random = randomStart(seed, { maxNodes: 14, maxGuests: 160 });
      if (!random) continue;
      const { p, st } = random;
      const rnd = mulberry32(seed);
      for (let round = 0; round < 12; round++) {
        if (round % 4 === 0) scatter(st, rnd, 1 + Math.floor(rnd() * 6));
        const scan = findSwapByScan(st);
        expect(findSwap(st), `seed ${seed} round ${round}`).toEqual(scan);
        if (!scan) {
          none++;
          continue;
        }
        found++;
        const before = st.value;
        const [u, v] = scan;
        const s = st.assign[u]!;
        st.move(u, st.assign[v]!, false);
        st.move(v, s);
        expect(st.value, `seed ${seed} round ${round}`).toBeLessThan(before);
        expect(assignmentViolations(p, st.assign), `seed ${seed} round ${round}`).toEqual([]);
      }
    }
    // both outcomes, many times (a property that holds only vacuously is worth nothing)
    expect(found).toBeGreaterThan(200);
    expect(none).toBeGreaterThan(50);
  });

  test('among equal swaps the first in the scan order wins, as in the scan', () => {
    // node1 at 75 % memory (8 × 6 GiB), node2 and node3 at 25 % (8 × 2 GiB each), 64 GiB each; every
    // swap of a 6 GiB guest with a 2 GiB one lowers node1 to 68.75 % (44 GiB) at the same cost (two
    // migrations, 8 GiB). The scan takes the units of node1 in turn, each with every node: vm:100 may
    // not go to node2, so its swap with node3's first guest comes first (not vm:101 with node2's)
    const guests = (node: string, first: number, memGib: number) =>
      Array.from({ length: 8 }, (_, i) => ({
        id: `vm:${first + i}`,
        kind: 'vm' as const,
        node,
        cpu: 1,
        mem: memGib * GIB,
      }));
    const input: PlanInput = {
      nodes: ['node1', 'node2', 'node3'].map((name) => ({ name, cpuCores: 16, memBytes: 64 * GIB })),
      guests: [...guests('node1', 100, 6), ...guests('node2', 200, 2), ...guests('node3', 300, 2)],
      rules: [
        {
          id: 'na',
          type: 'node-affinity',
          resources: ['vm:100'],
          nodes: ['node1', 'node3'].map((node) => ({ node, priority: 0 })),
          strict: true,
        },
      ],
      // memory only: every node has the same cpu load
      weights: { cpu: 0, mem: 1, move: 0.001, gib: 0.0001 },
    };
    const p = buildProblem(validatePlanInput(input), { drain: [] });
    const st = new SearchState(p, constructAssignment(p)!);
    const scan = findSwapByScan(st);
    expect(scan?.map((u) => p.units[u]!.ids)).toEqual([['vm:100'], ['vm:300']]);
    expect(findSwap(st)).toEqual(scan);
  });
});

describe('lowerTo', () => {
  // node1 is the cpu top, node2 the memory top; bringing node1's cpu down means sending vm:2 to node2,
  // which raises node2's memory (the memory top) from 40 to 48 GiB
  const input: PlanInput = {
    nodes: [
      { name: 'node1', cpuCores: 8, memBytes: 64 * GIB },
      { name: 'node2', cpuCores: 8, memBytes: 64 * GIB },
    ],
    guests: [
      { id: 'vm:1', kind: 'vm', node: 'node1', cpu: 4, mem: 8 * GIB, ha: true },
      { id: 'vm:2', kind: 'vm', node: 'node1', cpu: 2, mem: 8 * GIB, ha: true },
      { id: 'vm:3', kind: 'vm', node: 'node2', cpu: 1, mem: 40 * GIB, ha: true },
    ],
  };
  const setup = () => {
    const p = buildProblem(validatePlanInput(input), { drain: [] });
    const st = new SearchState(p, p.home.slice());
    const [n1, n2] = [p.nodeNames.indexOf('node1'), p.nodeNames.indexOf('node2')];
    const vm2 = p.units.findIndex((u) => u.ids.includes('vm:2'));
    // node1's cpu without vm:2
    const level = (st.cpu[n1]! - p.unitCpu[vm2]!) * st.invCpu[n1]!;
    const memAfter = (st.mem[n2]! + p.unitMem[vm2]!) * st.invMem[n2]!;
    return { p, st, n1, n2, vm2, level, memAfter };
  };

  test('holds the other resource: no node brought down where that would raise its top', () => {
    const { st, level } = setup();
    const before = Array.from(st.assign);
    const journal: number[] = [];
    expect(lowerTo(st, 0, level, journal)).toBe(false);
    for (let k = journal.length - 2; k >= 0; k -= 2) st.move(journal[k]!, journal[k + 1]!, false);
    expect(Array.from(st.assign)).toEqual(before);
  });

  test('a trade lets the other top rise to its limit, and no further', () => {
    const { st, n1, n2, vm2, level, memAfter } = setup();
    const maxMem = st.maxMem;
    expect(memAfter).toBeGreaterThan(maxMem);
    const short: number[] = [];
    expect(lowerTo(st, 0, level, short, memAfter - 1e-3)).toBe(false);
    for (let k = short.length - 2; k >= 0; k -= 2) st.move(short[k]!, short[k + 1]!, false);
    st.rank();
    const journal: number[] = [];
    expect(lowerTo(st, 0, level, journal, memAfter)).toBe(true);
    expect(st.assign[vm2]).toBe(n2);
    expect(st.cpu[n1]! * st.invCpu[n1]!).toBeLessThanOrEqual(level + 1e-12);
    expect(st.maxMem).toBeCloseTo(memAfter, 12);
    expect(journal).toEqual([vm2, n1]);
  });
});
