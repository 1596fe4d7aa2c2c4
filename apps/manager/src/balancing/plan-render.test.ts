import { type PlanInput, planPlacement } from '@poise/plan';
import { describe, expect, it } from 'vitest';
import { GIB } from '../testing/support';
import { describeMove, gib, MAX_VIOLATIONS_SHOWN, pct, planText } from './plan-render';

describe('plan text', () => {
  it('writes fractions as percent and bytes as GiB, one decimal', () => {
    expect(pct(0.4567)).toBe('45.7 %');
    expect(gib(1.25 * GIB)).toBe('1.3 GiB');
    expect(
      describeMove({ guests: ['vm:1', 'vm:2'], source: 'a', target: 'b', bytes: 2 * GIB, kind: 'temporary' }),
    ).toBe('vm:1+vm:2 a → b (2.0 GiB, together (positive affinity), temporary: it moves on later)');
  });

  it('lists the first constraints a drain breaks and counts the rest', () => {
    // seven guests on node1, drained: seven "must leave" constraints, five shown
    const input: PlanInput = {
      nodes: ['node1', 'node2', 'node3'].map((name) => ({ name, cpuCores: 16, memBytes: 64 * GIB })),
      guests: Array.from({ length: 7 }, (_, i) => ({
        id: `vm:${101 + i}`,
        kind: 'vm' as const,
        node: 'node1',
        cpu: 1,
        mem: GIB,
      })),
    };
    const plan = planPlacement(input, { drain: ['node1'] });
    const lines = planText(plan, { description: 'test', problems: ['a note'], drain: ['node1'] });
    expect(lines.slice(0, 2)).toEqual(['cluster: test', 'note: a note']);
    const broken = lines.filter((l) => l.startsWith('now broken'));
    expect(broken).toHaveLength(MAX_VIOLATIONS_SHOWN + 1);
    expect(broken.at(-1)).toBe('now broken (the plan fixes it): … and 2 more (--json lists them all)');
    expect(lines.filter((l) => /^ {2}vm:1\d\d node1 → node[23] \(1\.0 GiB\)$/.test(l))).toHaveLength(7);
  });
});
