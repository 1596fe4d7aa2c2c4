import { describe, expect, it } from 'vitest';
import { evaluatePromql, parseExposition, parsePromql, SeriesStore } from './promql';

/** A store of one counter `c_total{via="ha"}` scraped at the given (time, value) points. */
function counter(points: readonly [number, number][]): SeriesStore {
  const store = new SeriesStore();
  for (const [t, v] of points) store.scrape(t, `# TYPE c_total counter\nc_total{via="ha"} ${v}\n`, { instance: 'a:1' });
  return store;
}

/** The shape of the dashboard's "Motions (24 h)" over `c_total`. */
const EXACT = 'sum(sum_over_time(((c_total - last_over_time(c_total[1h] offset 1m) >= 0) or c_total)[24h:1m]))';

describe('the PromQL subset of the dashboard tests', () => {
  it('parses the exposition format, label values with spaces, braces and escapes', () => {
    expect(parseExposition('# HELP x\nx_total{endpoint="GET /a/{sid}",m="q\\"x"} 2\ny 1.5\n')).toEqual([
      { name: 'x_total', labels: { endpoint: 'GET /a/{sid}', m: 'q"x' }, value: 2 },
      { name: 'y', labels: {}, value: 1.5 },
    ]);
    expect(() => parseExposition('x{a=1} 2')).toThrow(/line 1 .*bad label/);
    expect(() => parseExposition('x 1 2')).toThrow(/one value/);
  });

  it('selects with the 5 min lookback and matchers, and `sum` adds the series', () => {
    const store = new SeriesStore();
    store.scrape(100, 'c_total{via="ha"} 2\nc_total{via="guest"} 3\n', { instance: 'a:1' });
    expect(evaluatePromql('sum(c_total)', 100, store)).toEqual([{ labels: {}, value: 5 }]);
    expect(evaluatePromql('sum(c_total{via=~"g.*"})', 399, store)[0]?.value).toBe(3);
    // 300 s later the sample is out of the lookback (left-open)
    expect(evaluatePromql('sum(c_total)', 400, store)).toEqual([]);
    expect(evaluatePromql('c_total{via!="ha"} offset 1m', 160, store)).toHaveLength(1);
    expect(evaluatePromql('c_total{via!="ha"} offset 1m', 159, store)).toHaveLength(0);
  });

  it('evaluates the exact count: every step once, a restart counted from 0, a gap bridged', () => {
    // scrapes every 15 s: 0, 1 at 30 s, 3 at 60 s; a restart at 120 s (0), 2 at 150 s; steps at 0,
    // 60, 120, 180 s: 0 (no scrape before: `or` takes the value), 3 − 0, 0 − 3 < 0 (the restart:
    // `or` takes 0), 2 − 0 → 0 + 3 + 0 + 2 = 5
    const run = counter([
      [0, 0],
      [15, 0],
      [30, 1],
      [45, 1],
      [60, 3],
      [120, 0],
      [150, 2],
    ]);
    expect(evaluatePromql(EXACT, 180, run)[0]?.value).toBe(5);
    // a gap of 20 min between scrapes (no restart): 1 → 4 counts 3, not 4
    const gap = counter([
      [0, 1],
      [1200, 4],
    ]);
    expect(evaluatePromql(EXACT, 1260, gap)[0]?.value).toBe(4); // 1 (first seen) + 3
    // the window's first step takes the last scrape before it: scrapes every 30 min, 10 until the
    // last one (12) a day later: the window (60 s, 86 460 s] counts 2
    const day = counter(Array.from({ length: 49 }, (_, i) => [i * 1800, i === 48 ? 12 : 10] as [number, number]));
    expect(evaluatePromql(EXACT, 86_460, day)[0]?.value).toBe(2);
    // the limit the panel's description states: a gap of over an hour counts the value again
    const lost = counter([
      [0, 10],
      [86_400, 12],
    ]);
    expect(evaluatePromql(EXACT, 86_460, lost)[0]?.value).toBe(12);
  });

  it('refuses what is not in the subset, naming it', () => {
    expect(() => parsePromql('rate(c_total[5m])')).toThrow(/'rate' is not in the subset/);
    expect(() => parsePromql('sum by (via) (c_total)')).toThrow(/modifier/);
    expect(() => parsePromql('c_total * 2')).toThrow(/cannot tokenise|unexpected/);
    expect(() => evaluatePromql('sum(c_total[5m])', 0, new SeriesStore())).toThrow(/instant vector/);
  });
});
