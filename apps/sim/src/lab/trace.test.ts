import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TRACE_FORMAT, readTrace, validateTrace } from './trace';

const good = () => ({
  format: TRACE_FORMAT,
  scenario: 's',
  variant: 'v',
  seed: 1,
  endTime: 60,
  nodes: ['node1', 'node2'],
  rounds: {
    time: [20, 40],
    imbalance: [0.5, 0.1],
    cpu: [
      [0.1, 0.2],
      [0, 0],
    ],
    mem: [
      [0.3, 0.3],
      [0.1, 0.1],
    ],
    online: [
      [true, true],
      [true, false],
    ],
    pressureCpu: [
      [5, null],
      [0, 0],
    ],
    pressureMem: [
      [null, null],
      [null, null],
    ],
  },
  moves: [
    {
      time: 30,
      sid: 'vm:101',
      source: 'node1',
      target: 'node2',
      ok: true as boolean | null,
      outcomeAt: 40 as number | null,
    },
  ],
});

/** The load pressure model's columns for good()'s two nodes and two samples. */
const truth = () => ({
  cpuSome: [
    [10, 12],
    [0, 1],
  ],
  memSome: [
    [0, 0],
    [0, 0],
  ],
  cpuStall: [
    [3, 4],
    [0, 0],
  ],
  memStall: [
    [0, 0],
    [0, 0],
  ],
  migrationStall: [
    [0, 0.9],
    [0, 0],
  ],
});

/** A placement record of the good trace's two nodes, its one guest edited by `guest`. */
const placement = (guest: Record<string, unknown>) => ({
  nodes: ['node1', 'node2'].map((name) => ({
    name,
    cpuCores: 4,
    memBytes: 2 ** 32,
    online: true,
    maintenance: false,
    cpu: 1,
    mem: 2 ** 30,
  })),
  guests: [
    {
      sid: 'vm:101',
      initial: 'node1',
      final: 'node2',
      cpu: 1,
      mem: 2 ** 30,
      migratable: true,
      ignored: false,
      ...guest,
    },
  ],
  rules: [],
});

describe('validateTrace', () => {
  it('accepts a well-formed trace', () => {
    expect(validateTrace(good(), 'f.json').moves).toHaveLength(1);
    expect(validateTrace({ ...good(), placement: placement({}) }, 'f.json').placement?.guests).toHaveLength(1);
  });
  it('accepts the load pressure model’s columns and landing times', () => {
    const t = good();
    const v = validateTrace(
      { ...t, rounds: { ...t.rounds, truth: truth() }, moves: [{ ...t.moves[0]!, landedAt: 60 }] },
      'f.json',
    );
    expect(v.rounds.truth?.migrationStall[0]).toEqual([0, 0.9]);
    expect(v.moves[0]!.landedAt).toBe(60);
  });
  const bad: { name: string; edit: (t: ReturnType<typeof good>) => unknown; error: string }[] = [
    {
      name: 'another format',
      edit: (t) => ({ ...t, format: 'x' }),
      error: "format: expected 'poise-run-trace/3' (a trace of another format: run it again with this poise-sim)",
    },
    {
      name: 'the first format (no online, no outcome times)',
      edit: (t) => ({ ...t, format: 'poise-run-trace/1' }),
      error: "format: expected 'poise-run-trace/3'",
    },
    {
      name: 'the second format (no landing times)',
      edit: (t) => ({ ...t, format: 'poise-run-trace/2' }),
      error: "format: expected 'poise-run-trace/3'",
    },
    {
      name: 'a missing online series',
      edit: (t) => ((t.rounds.online = [[true, true]]), t),
      error: 'rounds.online: expected 2 series (one per node), got 1',
    },
    {
      name: 'a missing pressure column',
      edit: (t) => {
        const { pressureMem: _, ...rounds } = t.rounds;
        return { ...t, rounds };
      },
      error: 'rounds.pressureMem: ',
    },
    {
      name: 'an outcome time for a move in flight',
      edit: (t) => ((t.moves[0]!.ok = null), t),
      error: 'moves[0].outcomeAt: a move in flight has no outcome time',
    },
    {
      name: 'an outcome without its time',
      edit: (t) => ((t.moves[0]!.outcomeAt = null), t),
      error: 'moves[0].outcomeAt: a move with an outcome needs its time',
    },
    {
      name: 'an outcome before the move',
      edit: (t) => ((t.moves[0]!.outcomeAt = 10), t),
      error: 'moves[0].outcomeAt: outcome time 10 is not within 30..60',
    },
    {
      name: 'an imbalance above 1',
      edit: (t) => ((t.rounds.imbalance[1] = 1.5), t),
      error: 'rounds.imbalance[1]: expected an imbalance in 0..1',
    },
    { name: 'NaN load', edit: (t) => ((t.rounds.cpu[1]![0] = Number.NaN), t), error: 'rounds.cpu[1][0]: ' },
    {
      name: 'a negative load',
      edit: (t) => ((t.rounds.mem[0]![1] = -0.1), t),
      error: 'rounds.mem[0][1]: expected a number ≥ 0',
    },
    {
      name: 'a series too short',
      edit: (t) => ((t.rounds.cpu[1] = [0]), t),
      error: 'rounds.cpu[1]: expected 2 values (one per sample time), got 1',
    },
    {
      name: 'a missing node series',
      edit: (t) => ((t.rounds.mem = [[0, 0]]), t),
      error: 'rounds.mem: expected 2 series (one per node), got 1',
    },
    {
      name: 'a landing before the outcome',
      edit: (t) => Object.assign(t, { moves: [{ ...t.moves[0]!, landedAt: 35 }] }),
      error: 'moves[0].landedAt: landing time 35 is not within 40..60',
    },
    {
      name: 'a failed move that landed',
      edit: (t) => Object.assign(t, { moves: [{ ...t.moves[0]!, ok: false, landedAt: 60 }] }),
      error: 'moves[0].landedAt: only a successful move lands',
    },
    {
      name: 'a truth column short of a node',
      edit: (t) => Object.assign(t, { rounds: { ...t.rounds, truth: { ...truth(), cpuStall: [[0, 0]] } } }),
      error: 'rounds.truth.cpuStall: expected 2 series (one per node), got 1',
    },
    {
      name: 'a truth series too short',
      edit: (t) => Object.assign(t, { rounds: { ...t.rounds, truth: { ...truth(), memSome: [[0], [0, 0]] } } }),
      error: 'rounds.truth.memSome[0]: expected 2 values (one per sample time), got 1',
    },
    {
      name: 'a negative stall',
      edit: (t) =>
        Object.assign(t, {
          rounds: {
            ...t.rounds,
            truth: {
              ...truth(),
              migrationStall: [
                [0, -1],
                [0, 0],
              ],
            },
          },
        }),
      error: 'rounds.truth.migrationStall[0][1]: expected a number ≥ 0',
    },
    {
      name: 'a truth share above 100 %',
      edit: (t) =>
        Object.assign(t, {
          rounds: {
            ...t.rounds,
            truth: {
              ...truth(),
              cpuSome: [
                [0, 101],
                [0, 0],
              ],
            },
          },
        }),
      error: 'rounds.truth.cpuSome[0][1]: expected a percentage in 0..100',
    },
    {
      name: 'times going back',
      edit: (t) => ((t.rounds.time = [40, 20]), t),
      error: 'rounds.time[1]: sample times must be strictly increasing',
    },
    {
      name: 'a sample after the end',
      edit: (t) => ((t.endTime = 30), t),
      error: "rounds.time[1]: sample time 40 is after 'endTime' 30",
    },
    {
      name: 'nodes out of byte order',
      edit: (t) => ((t.nodes = ['node2', 'node1']), t),
      error: 'nodes[0]: node names must be unique and in byte order',
    },
    {
      name: 'a move to an unknown node',
      edit: (t) => ((t.moves[0]!.target = 'node9'), t),
      error: "moves[0].target: unknown node 'node9'",
    },
    {
      name: 'a move to its own node',
      edit: (t) => ((t.moves[0]!.target = 'node1'), t),
      error: 'moves[0].target: a move needs a target other than its source',
    },
    {
      name: 'a placement guest on an unknown node',
      edit: (t) => ({ ...t, placement: placement({ initial: 'node9' }) }),
      error: "placement.guests[0].initial: unknown node 'node9'",
    },
    {
      name: 'a placement node with no cores',
      edit: (t) => ({
        ...t,
        placement: { ...placement({}), nodes: placement({}).nodes.map((n) => ({ ...n, cpuCores: 0 })) },
      }),
      error: 'placement.nodes[0].cpuCores: expected a number > 0',
    },
    {
      name: 'placement nodes out of the trace’s order',
      edit: (t) => ({ ...t, placement: { ...placement({}), nodes: [...placement({}).nodes].reverse() } }),
      error: "placement.nodes[0].name: expected 'node1' (the trace's nodes, in order)",
    },
    {
      name: 'a bad sid',
      edit: (t) => ((t.moves[0]!.sid = 'vm101'), t),
      error: "moves[0].sid: expected a service id such as 'vm:101'",
    },
    {
      name: 'pressure above 100',
      edit: (t) => ((t.rounds.pressureCpu[0]![0] = 101), t),
      error: 'rounds.pressureCpu[0][0]: expected a percentage in 0..100',
    },
    { name: 'an unknown field', edit: (t) => ({ ...t, extra: 1 }), error: '(top level): unrecognized key: "extra"' },
    { name: 'a fractional seed', edit: (t) => ({ ...t, seed: 1.5 }), error: 'seed: ' },
    {
      name: 'a curve family short of a node',
      edit: (t) => ({ ...t, cpuFamilies: ['queue'] }),
      error: 'cpuFamilies: expected 2 families (one per node), got 1',
    },
    { name: 'an empty curve family', edit: (t) => ({ ...t, cpuFamilies: ['queue', ''] }), error: 'cpuFamilies[1]: ' },
  ];
  for (const c of bad) {
    it(`rejects ${c.name}, naming the field`, () => {
      expect(() => validateTrace(c.edit(good()), 'f.json')).toThrow(`'f.json': ${c.error}`);
    });
  }
});

describe('readTrace', () => {
  it('names the file for unreadable, invalid JSON and bad fields', () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-trace-'));
    expect(() => readTrace(join(dir, 'none.json'))).toThrow(/^cannot read '.*none\.json'/);
    writeFileSync(join(dir, 'bad.json'), '{');
    expect(() => readTrace(join(dir, 'bad.json'))).toThrow(/^'.*bad\.json': invalid JSON/);
    writeFileSync(join(dir, 'ok.json'), JSON.stringify(good()));
    expect(readTrace(join(dir, 'ok.json')).scenario).toBe('s');
  });
});
