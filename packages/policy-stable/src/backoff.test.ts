import { describe, expect, it } from 'vitest';
import { BACKOFF_FORGET_SECONDS, type BackoffState, backoffDelay, backoffFilter, backoffSeriesGate } from './backoff';
import { candidate, failed, observeAndRun, passed, succeeded } from './testing/support';

const EMPTY: BackoffState = { lastOutcomeAt: null, pairs: [], series: [] };
const CANDIDATES = [candidate('fa:109', ['node2', 'node3']), candidate('vm:102', ['node2', 'node3'])];

describe('backoffDelay: base · 2^(failures − 1), capped', () => {
  it.each([
    [1, 60], // 60 · 2^0
    [2, 120], // 60 · 2^1
    [3, 240],
    [6, 1920], // 60 · 32
    [7, 3600], // 60 · 64 = 3840 > 3600
    [2000, 3600], // 2^1999 overflows to Infinity; the cap keeps it finite
  ])('%i failures → %i s', (failures, seconds) => {
    expect(backoffDelay(60, 3600, failures)).toBe(seconds);
  });
});

describe('backoff filter: recording outcomes', () => {
  const stage = backoffFilter({ baseSeconds: 60 });

  it('a failure backs the pair off from its outcome time and tells once', () => {
    const { observed } = observeAndRun(stage, EMPTY, 100, [failed(['fa:109'], 'node2', 100)], {
      candidates: CANDIDATES,
    });
    expect(observed.state).toEqual({
      lastOutcomeAt: 100,
      // until = 100 + 60
      pairs: [{ resources: ['fa:109'], target: 'node2', failures: 1, until: 160, lastFailureAt: 100 }],
      series: [{ resources: ['fa:109'], target: 'node2' }],
    });
    expect(observed.notices).toEqual([
      {
        code: 'motion-failed',
        severity: 'warning',
        message:
          'fa:109 to node2 did not succeed (attempt 1): not retried in this series, backed off for 60s until 160',
      },
    ]);
  });

  it('consecutive failures double the delay; a success of the pair resets it', () => {
    let state = stage.observe!({ now: 100, outcomes: [failed(['fa:109'], 'node2', 100)] }, EMPTY).state;
    state = stage.observe!({ now: 300, outcomes: [failed(['fa:109'], 'node2', 300)] }, state).state;
    // 2nd failure: 300 + 60 · 2 = 420
    expect(state.pairs).toEqual([
      { resources: ['fa:109'], target: 'node2', failures: 2, until: 420, lastFailureAt: 300 },
    ]);
    state = stage.observe!({ now: 500, outcomes: [succeeded(['fa:109'], 'node2', 500)] }, state).state;
    expect(state.pairs).toEqual([]);
    expect(state.series).toEqual([]);
  });

  it('a repeated report (same time) is ignored, so a replaying host does not double count', () => {
    const once = stage.observe!({ now: 100, outcomes: [failed(['fa:109'], 'node2', 100)] }, EMPTY);
    const twice = stage.observe!({ now: 120, outcomes: [failed(['fa:109'], 'node2', 100)] }, once.state);
    expect(twice.state.pairs[0]!.failures).toBe(1);
    expect(twice.notices ?? []).toEqual([]);
  });

  it('keys a pair by the whole bundle, whatever the leader or member order', () => {
    // the bundle {vm:101, vm:102} failed to node2; a host that now names vm:102 the leader
    // (or lists the members the other way round) still offers the same pair
    const state = stage.observe!({ now: 100, outcomes: [failed(['vm:102', 'vm:101'], 'node2', 100)] }, EMPTY).state;
    expect(state.pairs[0]!.resources).toEqual(['vm:101', 'vm:102']);
    const plan = {
      candidates: [
        candidate('vm:102', ['node2', 'node3'], { resources: ['vm:102', 'vm:101'] }),
        // a different bundle (one more member) is a different motion
        candidate('vm:100', ['node2'], { resources: ['vm:100', 'vm:101', 'vm:102'] }),
      ],
    };
    expect(passed(stage.run({ now: 120 } as never, plan, state))).toEqual(['vm:102→node3', 'vm:100→node2']);
  });

  it('forgets a record a day after its last failure once its delay is over', () => {
    const state = stage.observe!({ now: 100, outcomes: [failed(['fa:109'], 'node2', 100)] }, EMPTY).state;
    expect(stage.observe!({ now: 100 + BACKOFF_FORGET_SECONDS - 1, outcomes: [] }, state).state.pairs).toHaveLength(1);
    expect(stage.observe!({ now: 100 + BACKOFF_FORGET_SECONDS, outcomes: [] }, state).state.pairs).toEqual([]);
  });
});

describe('backoff filter: excluding pairs', () => {
  const stage = backoffFilter({ baseSeconds: 60 });
  const state: BackoffState = {
    lastOutcomeAt: 300,
    pairs: [
      { resources: ['fa:109'], target: 'node2', failures: 2, until: 420, lastFailureAt: 300 },
      { resources: ['fa:109'], target: 'node3', failures: 1, until: 200, lastFailureAt: 140 },
    ],
    series: [{ resources: ['fa:109'], target: 'node3' }],
  };
  const cases: Array<{
    name: string;
    now: number;
    continueSeries: boolean;
    candidates: typeof CANDIDATES;
    expected: string[] | string;
  }> = [
    {
      name: 'a backed-off target is dropped, other targets stay',
      now: 400,
      continueSeries: false,
      candidates: CANDIDATES,
      expected: ['fa:109→node3', 'vm:102→node2', 'vm:102→node3'],
    },
    {
      name: 'at the until time the pair is tried again (now < until skips)',
      now: 420,
      continueSeries: false,
      candidates: CANDIDATES,
      expected: ['fa:109→node2', 'fa:109→node3', 'vm:102→node2', 'vm:102→node3'],
    },
    {
      name: 'in a continued series a pair that failed in it is excluded even after its delay',
      now: 400,
      continueSeries: true,
      candidates: CANDIDATES,
      expected: ['vm:102→node2', 'vm:102→node3'],
    },
    {
      name: 'everything excluded stops with the reasons',
      now: 400,
      continueSeries: true,
      candidates: [candidate('fa:109', ['node2', 'node3'])],
      expected: 'backoff of fa:109 to node2 until 420, fa:109 to node3 failed earlier in this series',
    },
  ];
  it.each(cases)('$name', ({ now, continueSeries, candidates, expected }) => {
    const out = stage.run({ now } as never, { candidates, continueSeries }, state);
    expect(passed(out)).toEqual(expected);
    if ('stop' in out) {
      expect(out.code).toBe('backoff');
      expect(out.key).toBe(`backoff:${expected as string}`);
    }
  });

  it('outside a continued series the series list is dropped from the state', () => {
    expect(stage.run({ now: 400 } as never, { candidates: CANDIDATES }, state).state.series).toEqual([]);
    expect(stage.run({ now: 400 } as never, { candidates: CANDIDATES, continueSeries: true }, state).state).toBe(state);
  });
});

describe('backoff series gate', () => {
  const gate = backoffSeriesGate();
  it('continues the series in the round after a failure, once', () => {
    const afterFailure = gate.observe!(
      { now: 100, outcomes: [failed(['fa:109'], 'node2', 100)] },
      gate.initialState(),
    ).state;
    expect(afterFailure).toEqual({ retry: true, lastOutcomeAt: 100 });
    const retry = gate.run({} as never, {}, afterFailure);
    expect(retry).toEqual({ plan: { continueSeries: true }, state: { retry: false, lastOutcomeAt: 100 } });
    // the next round without a new outcome does not continue it
    expect(gate.run({} as never, {}, retry.state)).toEqual({ plan: {}, state: retry.state });
  });

  it('a success ends the series; the last outcome of a batch decides', () => {
    const s = gate.observe!(
      { now: 100, outcomes: [failed(['a'], 'n2', 90), succeeded(['b'], 'n2', 100)] },
      gate.initialState(),
    ).state;
    expect(s.retry).toBe(false);
  });
});

describe('backoff state is validated when restored', () => {
  const stage = backoffFilter({ baseSeconds: 60 });
  it.each([
    [
      { ...EMPTY, pairs: [{ resources: ['a'], target: 'n', failures: 0, until: 1, lastFailureAt: 0 }] },
      "stage 'backoff': state field 'pairs.0.failures' must be an integer from 1 to 9007199254740991, got 0",
    ],
    [
      { ...EMPTY, pairs: [{ resources: ['a'], target: 'n', failures: 1, until: 'x', lastFailureAt: 0 }] },
      "stage 'backoff': state field 'pairs.0.until' must be a finite number, got \"x\"",
    ],
    [
      { ...EMPTY, series: [{ resources: ['a', 'a'], target: 'n' }] },
      "stage 'backoff': state field 'series.0.resources.1' must be a name not listed before, got \"a\"",
    ],
    [
      { ...EMPTY, lastOutcomeAt: NaN },
      "stage 'backoff': state field 'lastOutcomeAt' must be a finite number or null, got NaN",
    ],
    [{ lastOutcomeAt: null, pairs: [] }, "stage 'backoff': state field 'series' must be an array, got undefined"],
  ])('%j', (value, message) => {
    expect(() => stage.validateState!(value)).toThrow(message);
    expect(() => stage.validateState!(value)).toThrow(
      expect.objectContaining({ name: 'PolicyError', code: 'invalid-state' }),
    );
  });

  it('rejects a bad configuration', () => {
    expect(() => backoffFilter({ baseSeconds: 0 })).toThrow("backoff baseSeconds must be a finite number > 0, got '0'");
    expect(() => backoffFilter({ baseSeconds: 60, maxSeconds: 30 })).toThrow('maxSeconds');
  });
});
