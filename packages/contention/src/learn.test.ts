import { describe, expect, it } from 'vitest';
import {
  ContentionError,
  LOAD_BINS,
  checkModelState,
  emptyModel,
  observeNodes,
  type ContentionModelState,
  type NodeObservation,
} from './index';
import { BIN_SAMPLES, RETAIN_SECONDS, SETTLE_MAX_GAP_SECONDS } from './constants';
import { binOf } from './learn';
import { CURVES, learnAll, synthetic } from './testing/support';

const obs = (cpuLoad: number, pressureCpu?: number | null, extra: Partial<NodeObservation> = {}): NodeObservation => ({
  node: 'node1',
  cpuLoad,
  memLoad: 0.2,
  pressureCpu,
  pressureMem: 0,
  ...extra,
});

const cpuBins = (state: ContentionModelState, node = 'node1') => state.nodes.find((n) => n.node === node)!.cpu.bins;

describe('observeNodes: what is learned', () => {
  it('learns a sample only once the load has settled (PSI avg10 lags a load step)', () => {
    // t=0: first sight, nothing to compare with; t=10: same load → learned;
    // t=20: load steps 0.30 → 0.80, the pressure still shows the old load → not learned;
    // t=30: steady at 0.80 → learned
    const state = learnAll([obs(0.3, 1), obs(0.3, 1), obs(0.8, 2), obs(0.8, 40)]);
    const bins = cpuBins(state);
    expect(bins.map((b) => [b.index, b.pressures])).toEqual([
      [binOf(0.3), [1]],
      [binOf(0.8), [40]],
    ]);
  });

  it('does not learn across a gap longer than SETTLE_MAX_GAP_SECONDS, nor from a clock that went back', () => {
    let state = observeNodes(emptyModel(), 0, [obs(0.5, 10)]);
    state = observeNodes(state, SETTLE_MAX_GAP_SECONDS + 1, [obs(0.5, 10)]);
    expect(cpuBins(state)).toEqual([]);
    state = observeNodes(state, 100, [obs(0.5, 10)]);
    expect(cpuBins(state)).toEqual([]);
  });

  it('keeps the BIN_SAMPLES most recent samples of a bin (a ring) and counts them all', () => {
    const state = learnAll(Array.from({ length: 20 }, (_, i) => obs(0.5, i)));
    const [bin] = cpuBins(state);
    // 19 settled samples (the first round has nothing to compare with): pressures 1..19
    expect(bin!.count).toBe(19);
    expect([...bin!.pressures].sort((a, b) => a - b)).toEqual([13, 14, 15, 16, 17, 18, 19]);
    expect(bin!.loads).toHaveLength(BIN_SAMPLES);
  });

  it('records that a node reports no pressure (reportedAt stays null) and learns nothing for it', () => {
    const state = learnAll([obs(0.5, undefined), obs(0.5, null), obs(0.5, undefined)]);
    expect(state.nodes[0]!.cpu).toEqual({ reportedAt: null, bins: [] });
    expect(state.nodes[0]!.mem.reportedAt).toBe(20);
  });

  it('forgets bins and nodes not seen for RETAIN_SECONDS', () => {
    let state = learnAll([obs(0.5, 10), obs(0.5, 10), [obs(0.5, 10), { ...obs(0.1, 0), node: 'node2' }]]);
    expect(state.nodes.map((n) => n.node)).toEqual(['node1', 'node2']);
    // node1 keeps being observed, at another load; node2 disappears
    state = observeNodes(state, 20 + RETAIN_SECONDS - 5, [obs(0.9, 50)]);
    state = observeNodes(state, 20 + RETAIN_SECONDS + 5, [obs(0.9, 50)]);
    expect(state.nodes.map((n) => n.node)).toEqual(['node1']);
    expect(cpuBins(state).map((b) => b.index)).toEqual([binOf(0.9)]);
  });

  it('stays bounded: at most LOAD_BINS bins of BIN_SAMPLES samples per curve, whatever it sees', () => {
    const state = learnAll(
      synthetic('node1', CURVES.knee!, 'cpu', {
        seed: 3,
        levels: 2000,
        roundsPerLevel: 3,
        low: 0,
        high: 3,
        noise: 5,
        outliers: 0.2,
      }),
    );
    const bins = cpuBins(state);
    expect(bins.length).toBeLessThanOrEqual(LOAD_BINS);
    expect(bins.every((b) => b.loads.length <= BIN_SAMPLES && b.pressures.length === b.loads.length)).toBe(true);
    // loads above LOAD_MAX count in the last bin
    expect(bins[bins.length - 1]!.index).toBe(LOAD_BINS - 1);
    expect(JSON.stringify(state).length).toBeLessThan(40_000);
  });

  it('is deterministic, leaves its input untouched, and its state survives JSON', () => {
    const rounds = [
      ...synthetic('node1', CURVES.logistic!, 'cpu', {
        seed: 11,
        levels: 50,
        roundsPerLevel: 4,
        low: 0,
        high: 1.2,
        noise: 2,
        outliers: 0.05,
      }),
    ];
    const a = learnAll(rounds);
    const b = learnAll(rounds);
    expect(b).toEqual(a);
    const frozen = JSON.stringify(a);
    const next = observeNodes(a, 1e6, [obs(0.4, 3)]);
    expect(JSON.stringify(a)).toBe(frozen);
    expect(next).not.toBe(a);
    expect(checkModelState(JSON.parse(frozen))).toEqual(a);
  });
});

describe('observeNodes: bad input is named', () => {
  it.each([
    ['now', () => observeNodes(emptyModel(), Number.NaN, []), 'now must be a finite number (seconds), got NaN'],
    ['observations', () => observeNodes(emptyModel(), 0, 'x' as never), "observations must be an array, got 'x'"],
    [
      'node',
      () => observeNodes(emptyModel(), 0, [obs(0.5, 1, { node: '' })]),
      "observations.0.node must be a non-empty string, got ''",
    ],
    [
      'duplicate node',
      () => observeNodes(emptyModel(), 0, [obs(0.5, 1), obs(0.5, 1)]),
      "observations.1.node must be a node not listed before, got 'node1'",
    ],
    [
      'cpuLoad',
      () => observeNodes(emptyModel(), 0, [obs(-0.1, 1)]),
      'observations.0.cpuLoad must be a finite number >= 0, got -0.1',
    ],
    [
      'memLoad',
      () => observeNodes(emptyModel(), 0, [obs(0.5, 1, { memLoad: Infinity })]),
      'observations.0.memLoad must be a finite number >= 0, got Infinity',
    ],
    [
      'pressureCpu',
      () => observeNodes(emptyModel(), 0, [obs(0.5, 130)]),
      'observations.0.pressureCpu must be a percentage in 0..100, undefined or null (not reported), got 130',
    ],
    [
      'pressureMem',
      () => observeNodes(emptyModel(), 0, [obs(0.5, 1, { pressureMem: '5' as never })]),
      "observations.0.pressureMem must be a percentage in 0..100, undefined or null (not reported), got '5'",
    ],
  ])('%s', (_name, call, message) => {
    expect(call).toThrow(new ContentionError('invalid-argument', message));
  });
});

/** A saved state as parsed JSON, loose enough to hold the wrong values the cases write into it. */
interface LooseBin {
  index: unknown;
  count: unknown;
  loads: unknown[];
  pressures: unknown[];
}
interface LooseState {
  version: unknown;
  nodes: Array<{ cpu: { bins: LooseBin[] }; mem: { reportedAt: unknown } }>;
}

describe('checkModelState', () => {
  const good = () =>
    JSON.parse(
      JSON.stringify(learnAll([obs(0.5, 10), obs(0.5, 12), [obs(0.5, 11), { ...obs(0.2, 0), node: 'node2' }]])),
    ) as LooseState;
  it.each([
    ['version', (s: LooseState) => (s.version = 2), "contention model state field 'version' must be 1, got 2"],
    [
      'nodes order',
      (s: LooseState) => s.nodes.reverse(),
      "contention model state field 'nodes.1.node' must be after 'node2' in byte order (sorted, no duplicates), got 'node1'",
    ],
    [
      'a pressure',
      (s: LooseState) => (s.nodes[0]!.cpu.bins[0]!.pressures[0] = 130),
      "contention model state field 'nodes.0.cpu.bins.0.pressures.0' must be a finite number in 0..100, got 130",
    ],
    [
      'a ring too long',
      (s: LooseState) => (s.nodes[0]!.cpu.bins[0]!.loads = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
      "contention model state field 'nodes.0.cpu.bins.0.loads' must be 1 to 7 samples, got [0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5]",
    ],
    [
      'ragged samples',
      (s: LooseState) => s.nodes[0]!.cpu.bins[0]!.pressures.push(1),
      "contention model state field 'nodes.0.cpu.bins.0.pressures' must be as many samples as 'loads' (2), got [12,11,1]",
    ],
    [
      'bin index',
      (s: LooseState) => (s.nodes[0]!.cpu.bins[0]!.index = 60),
      "contention model state field 'nodes.0.cpu.bins.0.index' must be a finite number in 0..59, got 60",
    ],
    [
      'count below the samples',
      (s: LooseState) => (s.nodes[0]!.cpu.bins[0]!.count = 1),
      "contention model state field 'nodes.0.cpu.bins.0.count' must be a finite number in 2..1000000, got 1",
    ],
    [
      'reportedAt',
      (s: LooseState) => (s.nodes[1]!.mem.reportedAt = 'x'),
      "contention model state field 'nodes.1.mem.reportedAt' must be a finite number in -1.7976931348623157e+308..1.7976931348623157e+308, got 'x'",
    ],
    ['top level', () => null, "contention model state field '(top level)' must be an object, got null"],
  ])('%s', (_name, spoil, message) => {
    const state = good();
    const spoilt = spoil(state) === null ? null : state;
    expect(() => checkModelState(spoilt)).toThrow(new ContentionError('invalid-state', message));
  });
});
