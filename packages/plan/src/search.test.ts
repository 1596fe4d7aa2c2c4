import { describe, expect, test } from 'vitest';
import { buildProblem } from './model';
import { lowerTo } from './search';
import { SearchState } from './state';
import type { PlanInput } from './types';
import { validatePlanInput } from './validate';

const GIB = 1024 ** 3;

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
