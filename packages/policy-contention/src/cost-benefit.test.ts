import { describe, expect, it } from 'vitest';
import { PolicyError } from '@poise/policy';
import { contentionGate } from './gate';
import { recordSpells } from './gate';
import { GIB, cluster, guests, lines, pipelineFor } from './testing/support';

const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };

describe('recordSpells: each node’s hot spells', () => {
  it('opens a spell when a node gets hot, closes it with its duration when it calms', () => {
    const hot = (...nodes: string[]) => new Set(nodes);
    let s = recordSpells([], ['node1', 'node2'], hot('node1'), 100);
    expect(s).toEqual([
      { node: 'node1', since: 100, durations: [] },
      { node: 'node2', since: null, durations: [] },
    ]);
    s = recordSpells(s, ['node1', 'node2'], hot('node1', 'node2'), 200); // node1 stays hot
    s = recordSpells(s, ['node1', 'node2'], hot(), 700); // both calm: 600 s and 500 s
    expect(s).toEqual([
      { node: 'node1', since: null, durations: [600] },
      { node: 'node2', since: null, durations: [500] },
    ]);
    // a node not seen this round keeps its spell as it is
    s = recordSpells(s, ['node1'], hot('node1'), 800);
    expect(s.find((x) => x.node === 'node2')).toEqual({ node: 'node2', since: null, durations: [500] });
  });

  it('keeps the newest nine durations', () => {
    let s = recordSpells([], ['node1'], new Set(), 0);
    for (let i = 0; i < 12; i++) {
      s = recordSpells(s, ['node1'], new Set(['node1']), i * 1000);
      s = recordSpells(s, ['node1'], new Set(), i * 1000 + 100 + i);
    }
    expect(s[0]!.durations).toEqual([103, 104, 105, 106, 107, 108, 109, 110, 111]);
  });
});

describe('the gate state keeps the spells', () => {
  const gate = contentionGate({ costBenefit: true });
  const base = gate.initialState();

  it('restores them, and a state saved before cost–benefit as having none', () => {
    const spells = [{ node: 'node1', since: 40, durations: [300, 900] }];
    const saved = JSON.parse(JSON.stringify({ ...base, spells, noTasks: true }));
    expect(gate.validateState!(saved)).toEqual({ ...base, spells, noTasks: true });
    const { spells: _s, noTasks: _n, badTasks: _b, ...before } = base;
    expect(gate.validateState!(JSON.parse(JSON.stringify(before)))).toEqual(base);
  });

  it.each([
    [{ spells: [{ node: 'node1', since: 'then', durations: [] }] }, "'spells.0.since'"],
    [{ spells: [{ node: 'node1', since: null, durations: [-3] }] }, "'spells.0.durations.0'"],
    [{ spells: [{ node: 7, since: null, durations: [] }] }, "'spells.0.node'"],
    [{ noTasks: 'no' }, "'noTasks'"],
    [{ badTasks: -1 }, "'badTasks'"],
  ])('a corrupt %j is invalid-state naming the field', (corrupt, field) => {
    const value = JSON.parse(JSON.stringify({ ...base, ...corrupt }));
    expect(() => gate.validateState!(value)).toThrow(PolicyError);
    expect(() => gate.validateState!(value)).toThrow(field);
  });
});

describe('cost–benefit in a replay', () => {
  // node1: six guests of 2 cores (of 4) and 1 core of its own: 13 of 16 cores (81 %), pressure 30 %
  const script = (r: ReturnType<typeof cluster>) => {
    for (const n of r.telemetry()) r.setNode(n.node, { pressureCpu: n.cpu / n.maxcpu > 0.7 ? 30 : 2, pressureMem: 0 });
  };
  const pipeline = (costBenefit: boolean) =>
    pipelineFor(
      {
        'ha-auto-rebalance-objective': 'contention',
        'ha-auto-rebalance-contention-min-gain': 30,
        'ha-auto-rebalance-contention-cost-benefit': costBenefit ? 1 : 0,
      },
      REF,
    );

  it('without finished migrations it says once that it prices at the default link rate, and still moves', () => {
    const c = cluster(guests('node1', 101, 6, 2, 8));
    c.run(pipeline(true), { until: 600, beforeRound: script });
    const said = lines(c).filter((l) => l.includes('contention-no-migration-tasks'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/the host reports no finished migrations: migrations priced at the default link rate$/);
    expect(c.moves().length).toBeGreaterThan(0);
  });

  it('with a slow link learned from finished migrations a move costs more: it waits where the fixed price moves', () => {
    // three migrations of 8 GiB that took 2 + 800 s: about 10 MiB/s; moving an 8 GiB guest then
    // takes some 14 minutes with a core busy on both nodes, longer than the 600 s horizon
    const make = (costBenefit: boolean) => {
      const c = cluster(guests('node1', 101, 6, 2, 8));
      c.migrationTasks = Array.from({ length: 3 }, () => ({ durationSeconds: 802, transferredBytes: 8 * GIB }));
      c.run(pipeline(costBenefit), { until: 600, beforeRound: script });
      return c;
    };
    expect(make(false).moves().length).toBeGreaterThan(0);
    const slow = make(true);
    expect(slow.moves()).toEqual([]);
    expect(lines(slow).some((l) => l.includes('contention-no-migration-tasks'))).toBe(false);
  });

  it('finished migrations without a positive duration or a byte count are left out, with a warning once', () => {
    const c = cluster(guests('node1', 101, 6, 2, 8));
    c.migrationTasks = [
      { durationSeconds: 0, transferredBytes: GIB },
      { durationSeconds: Number.NaN, transferredBytes: GIB },
      { durationSeconds: 10, transferredBytes: 8 * GIB },
    ];
    c.run(pipeline(true), { until: 400, beforeRound: script });
    const said = lines(c).filter((l) => l.includes('contention-bad-migration-tasks'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/2 finished migrations reported without a positive duration or a byte count: left out/);
    // one good task is fewer than three: the default link rate, said once
    expect(lines(c).filter((l) => l.includes('fewer than 3 finished migrations known (1)'))).toHaveLength(1);
  });
});
