import { describe, expect, it } from 'vitest';
import { PolicyError } from '@poise/policy';
import { type ContentionPluginOptions, createContentionPlugin } from './index';
import { CONTENTION_PACE } from './pace';
import { contentionGate } from './gate';
import { SPELL_MOTIONS_KEPT, contentionPace, recordMotions, requiredGain, settledAt } from './pace';
import { GIB, KNEE, cluster, guests, lines, loadDriven, pipelineFor } from './testing/support';

const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
const CONTENTION = { 'ha-auto-rebalance-objective': 'contention' };
const pipeline = (options: ContentionPluginOptions = {}) =>
  pipelineFor(CONTENTION, REF, [createContentionPlugin(options)]);

/** The README's cluster: node1 runs six guests of 2 cores, (1 + 12)/16 = 81 % → 42.5 % cpu pressure. */
const hotNode = () => cluster(guests('node1', 101, 6, 2));

describe('the pace options', () => {
  it.each([
    [{ settleSeconds: -1 }, "contention pace settleSeconds must be a finite number >= 0, got '-1'"],
    [{ settleSeconds: Number.NaN }, "contention pace settleSeconds must be a finite number >= 0, got 'NaN'"],
    [{ windowSeconds: 0 }, "contention pace windowSeconds must be a finite number > 0, got '0'"],
    [
      { windowSeconds: Number.POSITIVE_INFINITY },
      "contention pace windowSeconds must be a finite number > 0, got 'Infinity'",
    ],
    [{ factor: 0.5 }, "contention pace factor must be a finite number >= 1, got '0.5'"],
  ])('%j is refused', (pace, message) => {
    expect(() => createContentionPlugin({ pace })).toThrow(new PolicyError('invalid-config', message));
    expect(() => contentionGate({ pace })).toThrow(message);
  });

  it('absent options are the defaults', () => {
    expect(contentionPace()).toEqual(CONTENTION_PACE);
    expect(contentionPace({ factor: 3 })).toEqual({ ...CONTENTION_PACE, factor: 3 });
  });
});

describe('the motions the pace remembers', () => {
  const pace = { settleSeconds: 60, windowSeconds: 1000, factor: 2 };
  const outcome = (at: number, ok: boolean, sid = 'vm:101') => ({
    resources: [sid],
    source: 'node1',
    target: 'node2',
    ok,
    at,
  });

  it('keeps the landed ones, not the failed ones nor a repeat, and forgets them after the window once calm', () => {
    const first = recordMotions([], null, [outcome(100, true), outcome(120, false, 'vm:102')], 120, pace, 50);
    expect(first).toEqual({
      motions: [{ at: 100, resources: ['vm:101'], source: 'node1', target: 'node2' }],
      lastOutcomeAt: 120,
    });
    // a host that reports an outcome again (same or older time) adds nothing
    expect(recordMotions(first.motions, first.lastOutcomeAt, [outcome(100, true)], 140, pace, 50).motions).toHaveLength(
      1,
    );
    // past the window: kept while its hot spell lasts (calm last at 50, or never), dropped once a calm round followed it
    expect(recordMotions(first.motions, first.lastOutcomeAt, [], 1100, pace, 50).motions).toHaveLength(1);
    expect(recordMotions(first.motions, first.lastOutcomeAt, [], 1100, pace, null).motions).toHaveLength(1);
    expect(recordMotions(first.motions, first.lastOutcomeAt, [], 1100, pace, 900).motions).toEqual([]);
    // within the window a motion is kept across a calm round: it still holds its guest
    expect(recordMotions(first.motions, first.lastOutcomeAt, [], 900, pace, 800).motions).toHaveLength(1);
  });

  it('keeps at most SPELL_MOTIONS_KEPT motions older than the window, the newest, however long the spell', () => {
    // a cluster that never calms: 100 motions, one every 100 s, all but the last 9 older than the window
    let state = { motions: [] as ReturnType<typeof recordMotions>['motions'], lastOutcomeAt: null as number | null };
    for (let i = 1; i <= 100; i++) {
      state = recordMotions(
        state.motions,
        state.lastOutcomeAt,
        [outcome(i * 100, true, `vm:${i}`)],
        i * 100,
        pace,
        null,
      );
    }
    const ats = state.motions.map((m) => m.at);
    expect(ats).toHaveLength(SPELL_MOTIONS_KEPT + 10);
    expect(ats[0]).toBe((100 - 9 - SPELL_MOTIONS_KEPT) * 100);
    expect(ats.at(-1)).toBe(10_000);
  });

  it('asks factor^n of the minimum for the n-th motion of a hot spell; a calm round starts a new one', () => {
    const motions = [
      { at: 100, resources: ['vm:101'], source: 'node1', target: 'node2' },
      { at: 300, resources: ['vm:102'], source: 'node1', target: 'node3' },
    ];
    const gain = (calmAt: number | null, now: number, source = 'node1', list = motions) =>
      requiredGain(30, list, calmAt, now, pace, source);
    expect(gain(null, 400, 'node1', [])).toEqual({ required: 30, recent: 0, atSource: 0 });
    expect(gain(null, 400)).toEqual({ required: 120, recent: 2, atSource: 2 });
    expect(gain(200, 400)).toEqual({ required: 60, recent: 1, atSource: 1 });
    // off another source: the motions of the window count (the window is 1000 s)
    expect(gain(null, 400, 'node4')).toEqual({ required: 120, recent: 2, atSource: 0 });
    expect(gain(null, 1200, 'node4')).toEqual({ required: 60, recent: 1, atSource: 0 });
    expect(gain(null, 5000, 'node4')).toEqual({ required: 30, recent: 0, atSource: 0 });
    // off the same source, or off a node a motion of the spell loaded, the whole spell counts
    expect(gain(null, 5000)).toEqual({ required: 120, recent: 0, atSource: 2 });
    expect(gain(50, 5000)).toEqual({ required: 120, recent: 0, atSource: 2 });
    expect(gain(4000, 5000)).toEqual({ required: 30, recent: 0, atSource: 0 });
    expect(gain(null, 5000, 'node2')).toEqual({ required: 60, recent: 0, atSource: 1 });
    expect(gain(200, 5000, 'node2')).toEqual({ required: 30, recent: 0, atSource: 0 });
    expect(settledAt(motions, 320, pace)).toBe(360);
    expect(settledAt([], 320, pace)).toBeNull();
  });
});

describe('the pace in a replay', () => {
  it('judges again only once the last move shows in the pressure', () => {
    const paced = hotNode();
    paced.run(pipeline(), { until: 1800, beforeRound: loadDriven(KNEE) });
    const eager = hotNode();
    eager.run(pipeline({ pace: { settleSeconds: 0 } }), { until: 1800, beforeRound: loadDriven(KNEE) });
    // the first round after the first move lands that is judged (a stop or a move the log shows)
    const nextJudged = (c: ReturnType<typeof hotNode>) => {
      const landed = c.outcomes()[0]!.time;
      const next = c.events.find((e) => e.time > landed && (e.type === 'stop' || e.type === 'move'))!;
      return next.time - landed;
    };
    // three hold rounds of 20 s: judged in the second round after the landing; with the pace the
    // hold counts again 60 s after it
    expect(nextJudged(eager)).toBe(40);
    expect(nextJudged(paced)).toBe(100);
    expect(paced.moves()).toHaveLength(2);
  });

  it('a second move must spare factor times the minimum: with a steep factor the first move stays alone', () => {
    const steep = hotNode();
    steep.run(pipeline({ pace: { factor: 10 } }), { until: 1800, beforeRound: loadDriven(KNEE) });
    const flat = hotNode();
    flat.run(pipeline({ pace: { factor: 1 } }), { until: 1800, beforeRound: loadDriven(KNEE) });
    expect(flat.moves()).toHaveLength(2);
    expect(steep.moves()).toHaveLength(1);
    expect(
      lines(steep).some((l) => /stop below-min-gain: .* below 300 \(1 move in this hot spell's last 7200 s\)$/.test(l)),
    ).toBe(true);
  });

  it('the minimum is the key ha-auto-rebalance-contention-min-gain: at 100 the second move waits until it spares 100', () => {
    const keyed = (minGain: number) =>
      pipelineFor({ ...CONTENTION, 'ha-auto-rebalance-contention-min-gain': minGain }, REF, [
        createContentionPlugin({ pace: { factor: 1 } }),
      ]);
    const movedAt = (c: ReturnType<typeof hotNode>) => c.events.filter((e) => e.type === 'move').map((e) => e.time);
    const loose = hotNode();
    loose.run(keyed(30), { until: 1800, beforeRound: loadDriven(KNEE) });
    const strict = hotNode();
    strict.run(keyed(100), { until: 1800, beforeRound: loadDriven(KNEE) });
    expect(movedAt(loose)).toEqual([160, 280]);
    // at 280 the model is less sure of node1's curve: 97; at 340, with three more rounds learned, 127
    expect(movedAt(strict)).toEqual([160, 340]);
    expect(lines(strict)).toContain(
      "280 stop below-min-gain: contention: vm:102 to node3 spares 97 guest-seconds, below 100 (1 move in this hot spell's last 7200 s)",
    );
  });

  it('off a node that stays hot the whole spell counts, not only the window', () => {
    // the window (300 s) passes while node1 stays hot: its second move (sparing 97) still has
    // to spare 300; a count of the window alone would let it go once the window passed
    const spell = hotNode();
    spell.run(pipeline({ pace: { factor: 10, windowSeconds: 300 } }), { until: 1800, beforeRound: loadDriven(KNEE) });
    expect(spell.moves()).toHaveLength(1);
    expect(lines(spell)).toContain(
      "280 stop below-min-gain: contention: vm:102 to node3 spares 97 guest-seconds, below 300 (1 move in this hot spell's last 300 s)",
    );
  });

  it('a guest it moved is not moved again within the window, even when that would spare the most', () => {
    // node1 runs 6 cores of its own and vm:101 (8 cores): (6 + 8)/16 = 88 % → 55 %; it moves vm:101 away,
    // then its new node fills up with work of its own and vm:101 is the only guest that could leave
    const make = () => cluster([{ sid: 'vm:101', node: 'node1', cpu: 8, maxcpu: 8, mem: 8 * GIB }], [{ cpu: 6 }]);
    const script = (c: ReturnType<typeof make>) => {
      if (c.time === 300) c.setNode(c.nodeOf('vm:101'), { cpu: 7 });
      loadDriven(KNEE)(c);
    };
    const held = make();
    held.run(pipeline(), { until: 900, beforeRound: script });
    expect(held.moves()).toHaveLength(1);
    const landed = held.outcomes()[0]!.time;
    expect(lines(held)).toContain(
      `${
        lines(held)
          .find((l) => l.includes('guest-held'))
          ?.split(' ')[0]
      } stop guest-held: contention: vm:101 moved recently (held until ${landed + 7200})`,
    );
    const short = make();
    short.run(pipeline({ pace: { windowSeconds: 60 } }), { until: 900, beforeRound: script });
    expect(short.moves()).toHaveLength(2);
  });
});

describe('the pace in the gate state', () => {
  const gate = contentionGate();
  const base = gate.initialState();

  it('restores its motions, and a state saved before the pace as having none', () => {
    const motions = [{ at: 100, resources: ['vm:101'], source: 'node1', target: 'node2' }];
    const saved = JSON.parse(JSON.stringify({ ...base, motions, lastOutcomeAt: 100, calmAt: 40 }));
    expect(gate.validateState!(saved)).toEqual({ ...base, motions, lastOutcomeAt: 100, calmAt: 40 });
    const { motions: _m, lastOutcomeAt: _l, calmAt: _c, ...before } = base;
    expect(gate.validateState!(JSON.parse(JSON.stringify(before)))).toEqual(base);
  });

  it.each([
    [{ motions: [{ at: 'soon', resources: [], source: 'node1', target: 'node2' }] }, "'motions.0.at'"],
    [{ motions: [{ at: 1, resources: [7], source: 'node1', target: 'node2' }] }, "'motions.0.resources.0'"],
    [{ motions: {} }, "'motions'"],
    [{ calmAt: 'never' }, "'calmAt'"],
  ])('a corrupt %j is invalid-state naming the field', (corrupt, field) => {
    const value = JSON.parse(JSON.stringify({ ...base, ...corrupt }));
    expect(() => gate.validateState!(value)).toThrow(PolicyError);
    expect(() => gate.validateState!(value)).toThrow(field);
  });
});
