/**
 * The status page's pure parts (`web/page/series.ts`, `web/page/order.ts`): node names in
 * natural order, the history held in typed columns, and the down-sampling that keeps each
 * slice's lowest and highest value (a spike of one round stays on the chart).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { naturalCompare, naturalSort } from '../../web/page/order';
import { chartWindow, type HistoryDoc, HistoryStore, minMaxLine, sliceStats } from '../../web/page/series';

/** A reply of `/api/history` for rounds `from`..`to` (10 s apart), node a's cpu = the round / 100. */
function reply(from: number, to: number, nodes: readonly string[] = ['a']): HistoryDoc {
  const rounds = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  return {
    intervalSeconds: 10,
    keptSeconds: 86_400,
    thresholdPercent: 30,
    rounds,
    time: rounds.map((r) => 1000 + r * 10),
    imbalance: rounds.map((r) => (r % 5 === 0 ? null : r / 1000)),
    nodes: Object.fromEntries(nodes.map((n) => [n, { cpu: rounds.map((r) => r / 100), mem: rounds.map(() => 0.5) }])),
  };
}

describe('natural order of node names', () => {
  it.each([
    [
      ['node10', 'node2', 'node1', 'node19', 'node3'],
      ['node1', 'node2', 'node3', 'node10', 'node19'],
    ],
    [
      ['pve-b10', 'pve-a2', 'pve-b9'],
      ['pve-a2', 'pve-b9', 'pve-b10'],
    ],
    // leading zeros: the same number, then byte order
    [
      ['n02', 'n2', 'n1'],
      ['n1', 'n02', 'n2'],
    ],
    [
      ['x', 'x1', 'x01a', 'x1a'],
      ['x', 'x1', 'x01a', 'x1a'],
    ],
  ])('%j → %j', (names, sorted) => {
    expect(naturalSort(names)).toEqual(sorted);
  });

  it('is a total order: antisymmetric, and 0 only for equal names', () => {
    const name = fc.stringMatching(/^[a-c0-9]{0,6}$/);
    fc.assert(
      fc.property(name, name, (a, b) => {
        const ab = Math.sign(naturalCompare(a, b));
        expect(ab + Math.sign(naturalCompare(b, a)) === 0).toBe(true);
        expect(ab === 0).toBe(a === b);
      }),
    );
  });
});

describe('the history store', () => {
  it('appends the new rounds of each reply, skips those it holds, drops the oldest beyond its bound', () => {
    const store = new HistoryStore(300);
    expect(store.append(reply(1, 200))).toBe(200);
    // a reply that overlaps what is held: only rounds 201..250 are new
    expect(store.append(reply(150, 250))).toBe(50);
    expect([store.length, store.rounds[0], store.lastRound]).toEqual([250, 1, 250]);
    expect(store.append(reply(251, 400))).toBe(150);
    // 400 rounds, bound 300: rounds 101..400 kept, aligned in every column
    expect([store.length, store.rounds[0], store.lastRound]).toEqual([300, 101, 400]);
    expect(store.nodes.get('a')!.cpu[0]).toBeCloseTo(1.01, 5);
    expect(store.time[0]).toBe(1000 + 101 * 10);
    expect(Number.isNaN(store.imbalance[4]!)).toBe(true); // round 105: no value
  });

  it('a node that appears later has no values before it, one that is not listed none in those rounds', () => {
    const store = new HistoryStore(100);
    store.append(reply(1, 3, ['a']));
    store.append(reply(4, 5, ['b']));
    const b = store.nodes.get('b')!;
    const a = store.nodes.get('a')!;
    expect([...b.cpu.subarray(0, 5)].map((x) => (Number.isNaN(x) ? null : Math.round(x * 100)))).toEqual([
      null,
      null,
      null,
      4,
      5,
    ]);
    expect(Number.isNaN(a.cpu[3]!)).toBe(true);
  });

  it('older pieces go before the rounds held, as many as the bound leaves room for', () => {
    const store = new HistoryStore(250);
    store.append(reply(201, 300));
    store.append(reply(301, 310, ['a', 'b']));
    // a piece of rounds 101..200 (and one it holds, ignored)
    expect(store.prepend(reply(101, 201))).toBe(100);
    expect([store.length, store.firstRound, store.lastRound]).toEqual([210, 101, 310]);
    expect(store.time[0]).toBe(1000 + 101 * 10);
    expect(store.nodes.get('a')!.cpu[0]).toBeCloseTo(1.01, 5);
    expect(store.nodes.get('a')!.cpu[209]).toBeCloseTo(3.1, 5);
    // node b came with round 301: nothing before
    expect(Number.isNaN(store.nodes.get('b')!.cpu[0]!)).toBe(true);
    expect(store.nodes.get('b')!.cpu[200]).toBeCloseTo(3.01, 5);
    // room for 40 more: the newest 40 of rounds 1..100
    expect(store.prepend(reply(1, 100))).toBe(40);
    expect([store.length, store.firstRound, store.full]).toEqual([250, 61, true]);
    expect(store.prepend(reply(1, 60))).toBe(0);
  });

  it('refuses a bound that is no whole number ≥ 1', () => {
    expect(() => new HistoryStore(0)).toThrow("the page's history bound must be a whole number ≥ 1, got 0");
  });
});

describe('down-sampling for the charts', () => {
  it('keeps every round when the window has fewer rounds than slices', () => {
    const store = new HistoryStore(100);
    store.append(reply(1, 10));
    const w = chartWindow(store, 0, 500);
    expect(w.buckets).toBe(10);
    expect(minMaxLine(store.time, store.nodes.get('a')!.cpu, w).map((p) => Math.round(p.v! * 100))).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
  });

  it('a spike of one round among thousands stays visible, at its time', () => {
    const store = new HistoryStore(10_000);
    const doc = reply(1, 8640);
    const cpu = doc.nodes.a!.cpu as number[];
    cpu.fill(0.2);
    cpu[4321] = 0.97;
    cpu[777] = 0.01;
    store.append(doc);
    const w = chartWindow(store, 0, 300);
    const line = minMaxLine(store.time, store.nodes.get('a')!.cpu, w);
    // 300 slices, at most two points each
    expect(line.length).toBeLessThanOrEqual(600);
    const values = line.map((p) => p.v!);
    expect(Math.max(...values)).toBeCloseTo(0.97, 5);
    expect(Math.min(...values)).toBeCloseTo(0.01, 5);
    expect(line.find((p) => p.v! > 0.9)!.t).toBe(doc.time[4321]);
    // times in order
    expect(line.every((p, i) => i === 0 || p.t >= line[i - 1]!.t)).toBe(true);
    const stats = sliceStats(store.time, store.nodes.get('a')!.cpu, w);
    expect(Math.max(...stats.max)).toBeCloseTo(0.97, 5);
  });

  it('the last 6 h of a day: the window starts 6 h before the last round; a slice without a value is a gap', () => {
    const store = new HistoryStore(10_000);
    store.append(reply(1, 8640));
    const w = chartWindow(store, 21_600, 200);
    // rounds 10 s apart: 6 h back from round 8640 is round 6480
    expect(store.rounds[w.start]).toBe(6480);
    expect(w.end - w.start).toBe(2161);
    const gaps = minMaxLine(store.time, store.imbalance, chartWindow(store, 100, 1000));
    // rounds 8630..8640, every fifth without a value
    expect(gaps.filter((p) => p.v === null).map((p) => (p.t - 1000) / 10)).toEqual([8630, 8635, 8640]);
  });
});
