import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BalanceCandidate,
  type BalanceContext,
  type Decision,
  type HoldState,
  Pipeline,
  type PipelineObjective,
  type PipelineState,
  PolicyError,
  type ScoredMigration,
  type Stage,
  composePipeline,
  hostCandidates,
  referencePipeline,
  relativeMarginAccept,
  selectBest,
  thresholdHoldGate,
  usageScorer,
} from './index';
import { ReplayCluster, type ReplayOptions } from './testing';

const CANDIDATES: BalanceCandidate[] = [
  { leader: 'vm:101', resources: ['vm:101'], targets: ['node2', 'node3'] },
  { leader: 'vm:102', resources: ['vm:102', 'vm:103'], targets: ['node3'] },
];
const BEST: ScoredMigration = { sid: 'vm:101', source: 'node1', target: 'node3', imbalance: 0.2 };

/** A host whose every value can be replaced; `imbalance` 0.5 and one good move by default. */
function host(
  over: Partial<Record<keyof BalanceContext, unknown>> & {
    imbalanceValue?: unknown;
    scored?: unknown;
    candidateList?: unknown;
  } = {},
): BalanceContext {
  const { imbalanceValue, scored, candidateList, ...rest } = over;
  return {
    now: 100,
    motionInFlight: false,
    imbalance: () => ('imbalanceValue' in over ? imbalanceValue : 0.5) as number,
    candidates: () => (candidateList ?? CANDIDATES) as BalanceCandidate[],
    score: (_c, _m, limit) =>
      ((scored ?? [BEST]) as ScoredMigration[]).slice(
        0,
        Math.max(limit, (scored as unknown[] | undefined)?.length ?? 1),
      ),
    ...(rest as Partial<BalanceContext>),
  };
}

const ref = (hold = 0, threshold = 0.3, margin = 0.1) =>
  referencePipeline({ threshold, holdRounds: hold, margin, method: 'bruteforce' });
const stopOf = (d: Decision) =>
  d.action === 'none' ? { stage: d.stage, code: d.code } : { stage: 'move', code: 'move' };

describe('a non-finite or negative imbalance from the host never moves', () => {
  it.each([NaN, Infinity, -Infinity, -0.1, '0.5', undefined, null])(
    'imbalance %s stops the round at threshold-hold with invalid-input',
    (value) => {
      const out = ref().run(host({ imbalanceValue: value }), {});
      expect(stopOf(out.decision)).toEqual({ stage: 'threshold-hold', code: 'invalid-input' });
      expect(out.decision.action === 'none' && out.decision.reason).toMatch(
        /^the host imbalance must be a finite number >= 0, got /,
      );
    },
  );

  it('leaves the hold count as it was (the round did not count)', () => {
    const pipeline = ref(3);
    const { state } = pipeline.run(host(), {}); // 1 of 3
    const out = pipeline.run(host({ imbalanceValue: NaN }), state);
    expect(out.state['threshold-hold']).toEqual({ sustainedRounds: 1 });
  });

  it.each([
    { name: 'NaN after', scored: [{ ...BEST, imbalance: NaN }], message: 'scored.0.imbalance' },
    { name: 'infinite after', scored: [{ ...BEST, imbalance: Infinity }], message: 'scored.0.imbalance' },
    { name: 'negative after', scored: [{ ...BEST, imbalance: -0.5 }], message: 'scored.0.imbalance' },
    { name: 'a self-move', scored: [{ ...BEST, target: 'node1' }], message: "would move from 'node1' to itself" },
    {
      name: 'a pair that is not a candidate',
      scored: [{ ...BEST, target: 'node4' }],
      message: "'vm:101' to 'node4' is not one of the candidates",
    },
    { name: 'an unknown sid', scored: [{ ...BEST, sid: 'vm:999' }], message: 'is not one of the candidates' },
    {
      name: 'more results than the limit',
      scored: [BEST, { ...BEST, target: 'node2' }],
      message: 'more than the limit 1',
    },
    { name: 'not an array', scored: 'x', message: 'scored migrations must be an array' },
    {
      name: 'a missing target',
      scored: [{ sid: 'vm:101', source: 'node1', imbalance: 0.1 }],
      message: 'scored.0.target must be a non-empty string',
    },
  ])('a scored migration with $name stops at the scorer', ({ scored, message }) => {
    const ctx = host();
    ctx.score = () => scored as ScoredMigration[];
    const { decision } = ref().run(ctx, {});
    expect(stopOf(decision)).toEqual({ stage: 'score-bruteforce', code: 'invalid-input' });
    expect(decision.action === 'none' && decision.reason).toContain(message);
  });

  // no threshold gate (a threshold >= 0 stops imbalance 0), so that imbalance 0 reaches the margin
  const noThreshold = () =>
    new Pipeline([
      hostCandidates(),
      usageScorer({ method: 'bruteforce' }),
      selectBest(),
      relativeMarginAccept({ margin: 0.1 }),
    ]);

  it('an undefined relative improvement (imbalance 0 → 0) stops with invalid-improvement', () => {
    // (0 - 0) / 0 = NaN, which `NaN < margin` would accept
    const { decision } = noThreshold().run(host({ imbalanceValue: 0, scored: [{ ...BEST, imbalance: 0 }] }), {});
    expect(decision).toMatchObject({ action: 'none', stage: 'relative-margin', code: 'invalid-improvement' });
  });

  it('imbalance 0 → worse is below the margin ((0 - 0.1) / 0 = -Infinity)', () => {
    const { decision } = noThreshold().run(host({ imbalanceValue: 0, scored: [{ ...BEST, imbalance: 0.1 }] }), {});
    expect(decision).toMatchObject({ action: 'none', stage: 'relative-margin', code: 'below-margin' });
  });

  it('finite extremes: a subnormal imbalance to 0 is a relative improvement of exactly 1', () => {
    // (5e-324 - 0) / 5e-324 = 1 ≥ 0.1
    const low = ref(0, 0).run(host({ imbalanceValue: 5e-324, scored: [{ ...BEST, imbalance: 0 }] }), {});
    expect(low.decision).toMatchObject({ action: 'move', imbalanceBefore: 5e-324, imbalanceAfter: 0 });
  });
});

describe('candidates from the host are checked', () => {
  it.each([
    { name: 'not an array', list: {}, message: 'candidates must be an array' },
    {
      name: 'a duplicate leader',
      list: [CANDIDATES[0], CANDIDATES[0]],
      message: "candidate 'vm:101' (candidates.1): leader listed twice",
    },
    {
      name: 'a resource listed twice',
      list: [{ leader: 'vm:101', resources: ['vm:101', 'vm:101'], targets: ['node2'] }],
      message: "'resources' lists 'vm:101' twice",
    },
    {
      name: 'a leader outside its bundle',
      list: [{ leader: 'vm:101', resources: ['vm:102'], targets: ['node2'] }],
      message: "'resources' must include the leader",
    },
    {
      name: 'an empty bundle',
      list: [{ leader: 'vm:101', resources: [], targets: ['node2'] }],
      message: "'resources' must be a non-empty array",
    },
    {
      name: 'a target listed twice',
      list: [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2', 'node2'] }],
      message: "'targets' lists 'node2' twice",
    },
    {
      name: 'its source as a target',
      list: [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node1'], source: 'node1' }],
      message: "its source 'node1' is also a target",
    },
    // long lists (a large bundle, a large cluster) are checked through a set: the same answers
    {
      name: 'a resource listed twice in a bundle of 40',
      list: [
        {
          leader: 'vm:100',
          resources: [...Array.from({ length: 39 }, (_, i) => `vm:${100 + i}`), 'vm:120'],
          targets: ['node2'],
        },
      ],
      message: "'resources' lists 'vm:120' twice",
    },
    {
      name: 'a target listed twice among 40',
      list: [
        {
          leader: 'vm:101',
          resources: ['vm:101'],
          targets: [...Array.from({ length: 39 }, (_, i) => `node${i + 2}`), 'node30'],
        },
      ],
      message: "'targets' lists 'node30' twice",
    },
    {
      name: 'its source among 40 targets',
      list: [
        {
          leader: 'vm:101',
          resources: ['vm:101'],
          targets: Array.from({ length: 40 }, (_, i) => `node${i + 1}`),
          source: 'node40',
        },
      ],
      message: "its source 'node40' is also a target",
    },
    {
      name: 'a NaN cost',
      list: [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2'], transferBytes: NaN }],
      message: "'transferBytes' must be a finite number >= 0, got NaN",
    },
    {
      name: 'an empty leader',
      list: [{ leader: '', resources: ['vm:101'], targets: ['node2'] }],
      message: 'candidates.0.leader must be a non-empty string',
    },
  ])('$name stops at candidates with invalid-input', ({ list, message }) => {
    const { decision } = ref().run(host({ candidateList: list }), {});
    expect(stopOf(decision)).toEqual({ stage: 'candidates', code: 'invalid-input' });
    expect(decision.action === 'none' && decision.reason).toContain(message);
  });

  it('names like __proto__ and toString are ordinary candidates', () => {
    const list = [{ leader: '__proto__', resources: ['__proto__', 'toString'], targets: ['constructor'] }];
    const ctx = host({
      candidateList: list,
      scored: [{ sid: '__proto__', source: 'node1', target: 'constructor', imbalance: 0.1 }],
    });
    expect(ref().run(ctx, {}).decision).toMatchObject({ action: 'move', resources: ['__proto__', 'toString'] });
  });
});

describe('the context itself', () => {
  it.each([
    { over: { now: NaN }, reason: 'ctx.now must be a finite number, got NaN' },
    { over: { now: '100' }, reason: 'ctx.now must be a finite number, got "100"' },
    { over: { motionInFlight: 'no' }, reason: 'ctx.motionInFlight must be a boolean, got "no"' },
  ])('$reason: stage pipeline, code invalid-input, state unchanged', ({ over, reason }) => {
    const state = { 'threshold-hold': { sustainedRounds: 2 } };
    const out = ref(3).run(host(over), state);
    expect(out.decision).toEqual({
      action: 'none',
      stage: 'pipeline',
      code: 'invalid-input',
      reason,
      key: 'pipeline:invalid-input',
      quiet: false,
      notices: [],
    });
    expect(out.state['threshold-hold']).toEqual({ sustainedRounds: 2 });
  });

  it('an invalid outcome is dropped with a warning notice, the round goes on', () => {
    const outcomes = [{ resources: ['vm:101'], source: 'node1', target: 'node1', ok: false, at: 90 }, 'x'];
    const { decision } = ref().run(host({ outcomes }), {});
    expect(decision.action).toBe('move');
    expect(decision.notices.map((n) => [n.stage, n.code, n.message])).toEqual([
      [
        'pipeline',
        'invalid-outcome',
        "ignored an invalid motion outcome (outcomes.0): source and target are both 'node1'",
      ],
      ['pipeline', 'invalid-outcome', 'ignored an invalid motion outcome (outcomes.1): not an object ("x")'],
    ]);
  });

  it('node telemetry out of range stops the stage that reads it', () => {
    const reader: Stage<null> = {
      name: 'reader',
      kind: 'gate',
      initialState: () => null,
      run: (ctx, plan, state) => (ctx.nodes!(), { plan, state }),
    };
    const pipeline = new Pipeline([reader, hostCandidates(), usageScorer({ method: 'bruteforce' }), selectBest()]);
    const node = { node: 'node1', cpu: 1, maxcpu: 4, mem: 1, maxmem: 8, servicesCpu: 0, servicesMem: 0 };
    const cases: Array<[unknown, string]> = [
      [[{ ...node, cpu: NaN }], "node 'node1': 'cpu' must be a finite number >= 0 and <= 2^53, got NaN"],
      [[{ ...node, maxmem: 0 }], "node 'node1': 'maxmem' must be a finite number > 0"],
      [
        [{ ...node, pressureCpu: 101 }],
        "node 'node1': 'pressureCpu' must be a percentage in 0..100 or undefined (missing), got 101",
      ],
      [[node, node], "node 'node1': listed twice"],
      [[{ ...node, mem: 2 ** 54 }], "'mem' must be a finite number >= 0 and <= 2^53"],
    ];
    for (const [nodes, message] of cases) {
      const { decision } = pipeline.run(host({ nodes: () => nodes }), {});
      expect(stopOf(decision)).toEqual({ stage: 'reader', code: 'invalid-input' });
      expect(decision.action === 'none' && decision.reason).toContain(message);
    }
  });

  it('guest telemetry out of range stops the stage that reads it, and is read once per round', () => {
    let reads = 0;
    const reader: Stage<null> = {
      name: 'reader',
      kind: 'gate',
      initialState: () => null,
      run: (ctx, plan, state) => (ctx.guests!(), ctx.guests!(), { plan, state }),
    };
    const pipeline = new Pipeline([reader, hostCandidates(), usageScorer({ method: 'bruteforce' }), selectBest()]);
    const guest = { sid: 'vm:101', node: 'node1', cpu: 1, maxcpu: 4, mem: 1 };
    const ok = pipeline.run(host({ guests: () => (reads++, [guest]) }), {});
    expect(ok.decision.action).toBe('move');
    expect(reads).toBe(1);
    const cases: Array<[unknown, string]> = [
      ['x', 'guest telemetry must be an array, got "x"'],
      [[{ ...guest, sid: '' }], 'guests.0.sid must be a non-empty string, got ""'],
      [[{ ...guest, node: 7 }], "guest 'vm:101': 'node' must be a non-empty string, got 7"],
      [[{ ...guest, cpu: -1 }], "guest 'vm:101': 'cpu' must be a finite number >= 0 and <= 2^53, got -1"],
      [[{ ...guest, maxcpu: NaN }], "guest 'vm:101': 'maxcpu' must be a finite number >= 0 and <= 2^53, got NaN"],
      [[{ ...guest, mem: 2 ** 54 }], "guest 'vm:101': 'mem' must be a finite number >= 0 and <= 2^53"],
      [[guest, guest], "guest 'vm:101': listed twice in the guest telemetry"],
    ];
    for (const [guests, message] of cases) {
      const { decision } = pipeline.run(host({ guests: () => guests }), {});
      expect(stopOf(decision)).toEqual({ stage: 'reader', code: 'invalid-input' });
      expect(decision.action === 'none' && decision.reason).toContain(message);
    }
  });
});

describe('restored state is validated when a round starts', () => {
  const cases: Array<{ name: string; state: unknown; message: string }> = [
    {
      name: 'a negative hold count',
      state: { 'threshold-hold': { sustainedRounds: -1 } },
      message:
        "stage 'threshold-hold': state field 'sustainedRounds' must be an integer from 0 to 9007199254740991, got -1",
    },
    // 1e300 + 1 === 1e300: a count that no longer counts
    {
      name: 'a hold count of 1e300',
      state: JSON.parse('{"threshold-hold": {"sustainedRounds": 1e300}}'),
      message:
        "stage 'threshold-hold': state field 'sustainedRounds' must be an integer from 0 to 9007199254740991, got 1e+300",
    },
    { name: 'a count as a string', state: { 'threshold-hold': { sustainedRounds: '2' } }, message: 'got "2"' },
    { name: 'a fractional count', state: { 'threshold-hold': { sustainedRounds: 1.5 } }, message: 'got 1.5' },
    {
      name: 'a missing count',
      state: { 'threshold-hold': {} },
      message: "state field 'sustainedRounds' must be an integer from 0 to 9007199254740991, got undefined",
    },
    {
      name: 'a hold state that is not an object',
      state: { 'threshold-hold': 3 },
      message: "stage 'threshold-hold': state must be an object, got 3",
    },
    {
      name: 'state for a stateless stage',
      state: { candidates: { x: 1 } },
      message: "stage 'candidates': state must be null (the stage keeps no state), got an object",
    },
    { name: 'a pipeline state that is an array', state: [], message: 'pipeline state must be an object, got an array' },
    { name: 'a pipeline state that is null', state: null, message: 'pipeline state must be an object, got null' },
  ];
  it.each(cases)('$name is a PolicyError invalid-state naming the stage and field', ({ state, message }) => {
    const run = () => ref(3).run(host(), state as PipelineState);
    expect(run).toThrow(PolicyError);
    expect(run).toThrow(message);
    try {
      run();
    } catch (err) {
      expect((err as PolicyError).code).toBe('invalid-state');
    }
  });

  it('even when a gate stops the round before the corrupt stage would run', () => {
    expect(() => ref(3).run(host({ motionInFlight: true }), { 'threshold-hold': { sustainedRounds: -1 } })).toThrow(
      "state field 'sustainedRounds'",
    );
  });

  describe('a state the pipeline returned is not walked again; any other is', () => {
    // a gate with an object state that counts its checks
    const counting = () => {
      const checked: unknown[] = [];
      const gate: Stage<{ rounds: number }> = {
        name: 'counting',
        kind: 'gate',
        initialState: () => ({ rounds: 0 }),
        validateState: (value) => {
          checked.push(value);
          const rounds = (value as { rounds?: unknown }).rounds;
          if (typeof rounds !== 'number' || !Number.isInteger(rounds) || rounds < 0)
            throw new PolicyError(
              'invalid-state',
              `stage 'counting': state field 'rounds' must be an integer >= 0, got ${String(rounds)}`,
            );
          return value as { rounds: number };
        },
        run: (_ctx, plan, state) => ({ plan, state: { rounds: state.rounds + 1 } }),
      };
      const pipeline = new Pipeline([gate, hostCandidates(), usageScorer({ method: 'bruteforce' }), selectBest()]);
      return { pipeline, checked };
    };

    it('the state a round returned, handed back, is taken as it is', () => {
      const { pipeline, checked } = counting();
      let state: PipelineState = {};
      for (let i = 0; i < 3; i++) state = pipeline.run(host(), state).state;
      expect(state.counting).toEqual({ rounds: 3 });
      expect(checked).toEqual([]);
    });

    it('a persisted copy of it is checked, and a corrupt one refused', () => {
      const { pipeline, checked } = counting();
      const { state } = pipeline.run(host(), {});
      const copy = JSON.parse(JSON.stringify(state)) as PipelineState;
      expect(pipeline.run(host(), copy).state.counting).toEqual({ rounds: 2 });
      expect(checked).toEqual([{ rounds: 1 }]);
      expect(() => pipeline.run(host(), { ...copy, counting: { rounds: -1 } })).toThrow("state field 'rounds'");
    });

    it("another pipeline's state is checked, though its stage has the same name", () => {
      const a = counting();
      const b = counting();
      const { state } = a.pipeline.run(host(), {});
      b.pipeline.run(host(), state);
      expect(b.checked).toEqual([{ rounds: 1 }]);
    });
  });

  it('restore() checks a persisted state up front and fills in missing stages', () => {
    expect(ref(3).restore(JSON.parse('{"threshold-hold":{"sustainedRounds":2},"old":1}'))).toEqual({
      'motion-in-flight': null,
      'threshold-hold': { sustainedRounds: 2 },
      candidates: null,
      'score-bruteforce': null,
      'select-best': null,
      'relative-margin': null,
      old: 1,
    });
  });
});

describe('plan extensions the variant stages use', () => {
  it('a streak-breaking stop resets the hold count of the stages after it', () => {
    const gate = (breaksStreak: boolean): Stage<null> => ({
      name: 'quiet',
      kind: 'gate',
      initialState: () => null,
      run: (_c, _p, state) => ({ stop: 'nothing to gain', code: 'quiet', breaksStreak, state }),
    });
    for (const breaks of [true, false]) {
      const pipeline = composePipeline({ threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' }, [
        { slot: 'gate', order: 1, stage: gate(breaks) },
      ]);
      const state = { 'threshold-hold': { sustainedRounds: 2 } };
      expect(pipeline.run(host(), state).state['threshold-hold']).toEqual({ sustainedRounds: breaks ? 0 : 2 });
    }
  });

  it('a continued series skips the hold rounds but not the threshold', () => {
    const series: Stage<null> = {
      name: 'series',
      kind: 'gate',
      initialState: () => null,
      run: (_c, plan, state) => ({ plan: { ...plan, continueSeries: true }, state }),
    };
    const pipeline = composePipeline({ threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' }, [
      { slot: 'gate', order: 1, stage: series },
    ]);
    // above the threshold: moves at once, count untouched
    const above = pipeline.run(host(), {});
    expect(above.decision.action).toBe('move');
    expect(above.state['threshold-hold']).toEqual({ sustainedRounds: 0 });
    // at or below: stops and resets as usual
    expect(
      stopOf(pipeline.run(host({ imbalanceValue: 0.3 }), { 'threshold-hold': { sustainedRounds: 2 } }).decision),
    ).toEqual({
      stage: 'threshold-hold',
      code: 'below-threshold',
    });
  });

  it('an adjusted evaluator in the plan is what the threshold, scorer and margin read', () => {
    const adjusted = { imbalance: () => 0.8, score: () => [{ ...BEST, imbalance: 0.1 }] };
    const smoothing: Stage<null> = {
      name: 'adjust',
      kind: 'gate',
      initialState: () => null,
      run: (_c, plan, state) => ({ plan: { ...plan, evaluator: adjusted }, state }),
    };
    const pipeline = composePipeline({ threshold: 0.3, holdRounds: 0, margin: 0.1, method: 'bruteforce' }, [
      { slot: 'gate', order: 1, stage: smoothing },
    ]);
    // measured imbalance 0.1 would stop at the threshold; the adjusted 0.8 goes on
    expect(pipeline.run(host({ imbalanceValue: 0.1 }), {}).decision).toMatchObject({
      action: 'move',
      imbalanceBefore: 0.8,
      imbalanceAfter: 0.1,
    });
  });

  it('observe runs every round, even when the first gate stops', () => {
    const seen: number[] = [];
    const watcher: Stage<number> = {
      name: 'watch',
      kind: 'filter',
      initialState: () => 0,
      observe: (facts, n) => (seen.push(facts.now), { state: n + facts.outcomes.length }),
      run: (_c, plan, state) => ({ plan, state }),
    };
    const pipeline = composePipeline({ threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' }, [
      { slot: 'filter', order: 1, stage: watcher },
    ]);
    const outcome = { resources: ['vm:101'], source: 'node1', target: 'node2', ok: true, at: 100 };
    const { state } = pipeline.run(host({ motionInFlight: true, outcomes: [outcome] }), {});
    expect(seen).toEqual([100]);
    expect(state.watch).toBe(1);
  });
});

describe('composePipeline', () => {
  const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'topsis' as const };
  const stage = (name: string, kind: Stage['kind']): Stage<null> => ({
    name,
    kind,
    initialState: () => null,
    run: (_c, plan, state) =>
      kind === 'select' ? { plan: { ...plan, selected: plan.scored![0]! }, state } : { plan, state },
  });
  const holdStage = (name: string): Stage<HoldState> => ({
    name,
    kind: 'gate',
    initialState: () => ({ sustainedRounds: 0 }),
    run: (_c, plan, state) => ({ plan, state }),
  });

  it('with no parts is the reference pipeline, stage for stage', () => {
    expect(composePipeline(REF).stages.map((s) => s.name)).toEqual(referencePipeline(REF).stages.map((s) => s.name));
  });

  it('puts parts in their slots, ordered by order, then by position', () => {
    const pipeline = composePipeline(REF, [
      { slot: 'accept', order: 10, stage: stage('a1', 'accept') },
      { slot: 'filter', order: 30, stage: stage('f30', 'filter') },
      { slot: 'gate', order: 20, stage: stage('g20', 'gate') },
      { slot: 'filter', order: 10, stage: stage('f10', 'filter') },
      { slot: 'gate', order: 10, stage: stage('g10a', 'gate') },
      { slot: 'gate', order: 10, stage: stage('g10b', 'gate') },
      { slot: 'select', order: 0, stage: stage('pick', 'select'), scoreLimit: 8 },
    ]);
    expect(pipeline.stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'g10a',
      'g10b',
      'g20',
      'threshold-hold',
      'candidates',
      'f10',
      'f30',
      'score-topsis',
      'pick',
      'relative-margin',
      'a1',
    ]);
  });

  it('asks the scorer for the largest score limit any part requests', () => {
    const limits: number[] = [];
    const ctx = host();
    ctx.score = (_c, _m, limit) => (limits.push(limit), [BEST]);
    composePipeline({ ...REF, holdRounds: 0 }, [
      { slot: 'select', order: 0, stage: stage('pick', 'select'), scoreLimit: 8 },
    ]).run(ctx, {});
    expect(limits).toEqual([8]);
  });

  it("puts the objective's stages where the reference's were, its gate first", () => {
    const objective: PipelineObjective = {
      name: 'other',
      gate: stage('objective-gate', 'gate'),
      hold: holdStage('objective-hold'),
      score: stage('objective-score', 'score'),
      margin: stage('objective-margin', 'accept'),
    };
    const pipeline = composePipeline(
      REF,
      [
        { slot: 'accept', order: 10, stage: stage('a1', 'accept') },
        { slot: 'gate', order: 10, stage: stage('g10', 'gate') },
        { slot: 'select', order: 0, stage: stage('pick', 'select') },
      ],
      objective,
    );
    expect(pipeline.stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'objective-gate',
      'g10',
      'objective-hold',
      'candidates',
      'objective-score',
      'pick',
      'objective-margin',
      'a1',
    ]);
  });

  it('the select slot takes the part of highest precedence; the others are left out with their score limits', () => {
    const limits: number[] = [];
    const ctx = host();
    ctx.score = (_c, _m, limit) => (limits.push(limit), [BEST]);
    const pipeline = composePipeline({ ...REF, holdRounds: 0 }, [
      { slot: 'select', order: 0, stage: stage('cheap', 'select'), scoreLimit: 8 },
      { slot: 'select', order: 0, precedence: 1, stage: stage('planned', 'select') },
    ]);
    expect(pipeline.stages.map((s) => s.name)).toContain('planned');
    expect(pipeline.stages.map((s) => s.name)).not.toContain('cheap');
    pipeline.run(ctx, {});
    expect(limits).toEqual([1]);
  });

  it.each([
    {
      name: 'a part in the wrong slot',
      parts: [{ slot: 'gate' as const, order: 1, stage: stage('f', 'filter') }],
      message: "stage 'f' (filter) cannot go in the 'gate' slot",
    },
    {
      name: 'a former replacing slot (an objective is a parameter now)',
      parts: [{ slot: 'hold' as never, order: 1, stage: stage('h', 'gate') }],
      message: "stage 'h' has unknown slot 'hold'",
    },
    {
      name: 'an unknown slot',
      parts: [{ slot: 'toString' as never, order: 1, stage: stage('g', 'gate') }],
      message: "stage 'g' has unknown slot 'toString'",
    },
    {
      name: 'two select parts of the same precedence',
      parts: [
        { slot: 'select' as const, order: 1, stage: stage('s1', 'select') },
        { slot: 'select' as const, order: 2, stage: stage('s2', 'select') },
      ],
      message: "more than one select stage: 's1', 's2'",
    },
    {
      name: 'a NaN precedence',
      parts: [{ slot: 'select' as const, order: 1, precedence: NaN, stage: stage('s1', 'select') }],
      message: "stage 's1' has a non-finite precedence 'NaN'",
    },
    {
      name: 'a NaN order',
      parts: [{ slot: 'gate' as const, order: NaN, stage: stage('g', 'gate') }],
      message: "stage 'g' has a non-finite order 'NaN'",
    },
    {
      name: 'a reserved name',
      parts: [{ slot: 'gate' as const, order: 1, stage: stage('pipeline', 'gate') }],
      message: "stage name 'pipeline' is reserved",
    },
  ])('rejects $name', ({ parts, message }) => {
    expect(() => composePipeline(REF, parts)).toThrow(message);
  });

  it.each([
    [{ hold: stage('h', 'filter') }, "objective 'other': its hold stage 'h' (filter) must be a gate stage"],
    [{ score: stage('s', 'select') }, "objective 'other': its score stage 's' (select) must be a score stage"],
    [{ margin: stage('m', 'gate') }, "objective 'other': its margin stage 'm' (gate) must be a accept stage"],
    [{ gate: stage('g', 'accept') }, "objective 'other': its gate stage 'g' (accept) must be a gate stage"],
    [{ score: undefined }, "objective 'other': 'score' must be a stage"],
    [{ name: '' }, 'objective name must be a non-empty string, got ""'],
    [{ scoreLimit: 0 }, "objective asks for score limit '0' (an integer >= 1)"],
  ])('rejects an objective with %j', (over, message) => {
    // a bad objective, as a caller without types could pass it
    const objective = {
      name: 'other',
      hold: holdStage('objective-hold'),
      score: stage('objective-score', 'score'),
      margin: stage('objective-margin', 'accept'),
      ...over,
    } as unknown as PipelineObjective;
    expect(() => composePipeline(REF, [], objective)).toThrow(message);
  });
});

describe('an objective with a gate judges the rounds its gate marks; the imbalance judges the others', () => {
  const REF = { threshold: 0.3, holdRounds: 2, margin: 0.1, method: 'bruteforce' as const };
  /** A gate that marks the rounds at even seconds as the objective's. */
  const marking: Stage<null> = {
    name: 'marking',
    kind: 'gate',
    initialState: () => null,
    run: (ctx, plan, state) =>
      ctx.now % 2 === 0
        ? { plan: { ...plan, objective: { name: 'other', gain: () => 1, formatGain: String } }, state }
        : { plan, state },
  };
  /** Stages that record the rounds they judged. */
  const judged: string[] = [];
  const otherScore: Stage<number> = {
    name: 'other-score',
    kind: 'score',
    initialState: () => 7,
    run: (ctx, plan, state) => (
      judged.push(`${ctx.now} score`), { plan: { ...plan, scored: [BEST] }, state: state + 1 }
    ),
  };
  const otherMargin: Stage<string> = {
    name: 'other-margin',
    kind: 'accept',
    initialState: () => 'kept',
    run: (ctx, plan, state) => (judged.push(`${ctx.now} margin`), { plan, state }),
  };
  const objective: PipelineObjective = {
    name: 'other',
    gate: marking,
    hold: {
      name: 'other-hold',
      kind: 'gate',
      initialState: () => ({ sustainedRounds: 0 }),
      run: (ctx, plan, state) => {
        judged.push(`${ctx.now} hold`);
        // counts as the reference does, so that the count carries over
        const rounds = state.sustainedRounds + 1;
        return rounds < 2
          ? { stop: 'holding', code: 'holding', quiet: true, state: { sustainedRounds: rounds } }
          : { plan, state: { sustainedRounds: 0 } };
      },
    },
    score: otherScore,
    margin: otherMargin,
  };

  it('the hold count is shared, the imbalance stages run stateless, the objective keeps its state', () => {
    judged.length = 0;
    const pipeline = composePipeline(REF, [], objective);
    expect(pipeline.stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'marking',
      'other-hold',
      'candidates',
      'other-score',
      'select-best',
      'other-margin',
    ]);
    // 101: the imbalance's round (0.5 > 0.3): threshold-hold counts 1 of 2, in the shared state
    let run = pipeline.run(host({ now: 101 }), {});
    expect(run.decision).toMatchObject({ action: 'none', stage: 'other-hold', code: 'holding' });
    expect(run.state['other-hold']).toEqual({ sustainedRounds: 1 });
    // 102: the objective's round: its hold reaches 2 from the count the imbalance left, and it moves
    run = pipeline.run(host({ now: 102 }), run.state);
    expect(run.decision.action).toBe('move');
    expect(run.state['other-score']).toBe(8);
    expect(run.state['other-margin']).toBe('kept');
    // 103, 105: the imbalance judges: its scorer and margin (stateless) leave the objective's state alone
    run = pipeline.run(host({ now: 103 }), run.state);
    run = pipeline.run(host({ now: 105 }), run.state);
    expect(run.decision.action).toBe('move');
    expect(run.state['other-score']).toBe(8);
    expect(run.state['other-margin']).toBe('kept');
    expect(judged).toEqual(['102 hold', '102 score', '102 margin']);
  });
});

describe('composePipeline, limits', () => {
  const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'topsis' as const };
  const stage = (name: string, kind: Stage['kind']): Stage<null> => ({
    name,
    kind,
    initialState: () => null,
    run: (_c, plan, state) => ({ plan, state }),
  });
  it('rejects a score limit that is not a positive integer', () => {
    expect(() =>
      composePipeline(REF, [{ slot: 'select', order: 0, stage: stage('pick', 'select'), scoreLimit: 0 }]),
    ).toThrow("asks for score limit '0'");
    expect(() => usageScorer({ method: 'bruteforce', limit: 1.5 })).toThrow("limit must be an integer >= 1, got '1.5'");
  });
});

describe('properties', () => {
  const anyNumber = fc.oneof(
    fc.double(),
    fc.constantFrom(NaN, Infinity, -Infinity, 0, -0, 5e-324, 1e308),
    fc.double({ min: 0, max: 2, noNaN: true }),
  );
  const round = fc.record({
    motionInFlight: fc.boolean(),
    imbalance: anyNumber,
    after: anyNumber,
    target: fc.constantFrom('node2', 'node3', 'node1'),
  });

  it('never moves on a non-finite imbalance or improvement, and every move clears the margin', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(round, { maxLength: 20 }),
        (hold, margin, rounds) => {
          const pipeline = referencePipeline({ threshold: 0.3, holdRounds: hold, margin, method: 'bruteforce' });
          let state = pipeline.initialState();
          for (const r of rounds) {
            const ctx = host({
              motionInFlight: r.motionInFlight,
              imbalanceValue: r.imbalance,
              scored: [{ ...BEST, target: r.target, imbalance: r.after }],
            });
            const out = pipeline.run(ctx, state);
            state = out.state;
            if (out.decision.action === 'move') {
              const { imbalanceBefore: before, imbalanceAfter: after } = out.decision;
              expect(Number.isFinite(before) && before >= 0 && Number.isFinite(after) && after >= 0).toBe(true);
              expect(out.decision.migration.source).not.toBe(out.decision.migration.target);
              expect((before - after) / before).toBeGreaterThanOrEqual(margin);
            }
            // the state stays plain JSON
            expect(JSON.parse(JSON.stringify(state))).toEqual(state);
          }
        },
      ),
    );
  });

  it('a state survives a JSON round trip: the next round decides the same on either', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ imbalance: fc.double({ min: 0, max: 1, noNaN: true }), motionInFlight: fc.boolean() }), {
          maxLength: 15,
        }),
        (rounds) => {
          const pipeline = ref(3);
          let state = pipeline.initialState();
          for (const r of rounds) {
            const ctx = host({
              imbalanceValue: r.imbalance,
              motionInFlight: r.motionInFlight,
              scored: [{ ...BEST, imbalance: r.imbalance / 2 }],
            });
            const direct = pipeline.run(ctx, state);
            const viaJson = pipeline.run(ctx, JSON.parse(JSON.stringify(state)) as PipelineState);
            expect(viaJson).toEqual(direct);
            state = direct.state;
          }
        },
      ),
    );
  });

  it('thresholdHoldGate and the reference pipeline reject a bad config when built', () => {
    expect(() => thresholdHoldGate({ threshold: NaN, holdRounds: 0 })).toThrow(PolicyError);
  });
});

describe('ReplayCluster checks what it is given', () => {
  const node = { name: 'node1', maxcpu: 4, maxmem: 8 };
  it.each([
    [{ nodes: [{ ...node, maxcpu: 0 }], guests: [] }, "node 'node1': 'maxcpu' must be a finite number > 0, got 0"],
    [{ nodes: [{ ...node, mem: NaN }], guests: [] }, "node 'node1': 'mem' must be a finite number >= 0, got NaN"],
    [{ nodes: [node, node], guests: [] }, "node 'node1' listed twice"],
    [
      { nodes: [node], guests: [{ sid: 'vm:1', node: 'node2', cpu: 1, mem: 1 }] },
      "guest 'vm:1' is on unknown node 'node2'",
    ],
    [
      { nodes: [node], guests: [{ sid: 'vm:1', node: 'node1', cpu: -1, mem: 1 }] },
      "guest 'vm:1': 'cpu' must be a finite number >= 0, got -1",
    ],
    [
      { nodes: [node], guests: [{ sid: 'vm:1', node: 'node1', cpu: 1, mem: 1, failures: 1.5 }] },
      "guest 'vm:1': 'failures' must be an integer >= 0, got '1.5'",
    ],
  ])('%j', (options, message) => {
    expect(() => new ReplayCluster(options as ReplayOptions)).toThrow(new PolicyError('invalid-config', message));
  });

  it('a bad load set later is refused too; bad pressure goes to the pipeline, which stops the round', () => {
    const cluster = new ReplayCluster({
      nodes: [node, { ...node, name: 'node2' }],
      guests: [{ sid: 'vm:1', node: 'node1', cpu: 1, mem: 1 }],
    });
    expect(() => cluster.setNode('node1', { cpu: Infinity })).toThrow(
      "node 'node1': 'cpu' must be a finite number >= 0, got Infinity",
    );
    cluster.setNode('node1', { pressureCpu: 250 });
    const reader: Stage<null> = {
      name: 'reader',
      kind: 'gate',
      initialState: () => null,
      run: (ctx, plan, state) => (ctx.nodes!(), { plan, state }),
    };
    const pipeline = new Pipeline([reader, hostCandidates(), usageScorer({ method: 'bruteforce' }), selectBest()]);
    expect(cluster.round(pipeline, pipeline.initialState()).decision).toMatchObject({
      stage: 'reader',
      code: 'invalid-input',
    });
  });

  it('a stage without a name is refused when the pipeline is built', () => {
    expect(
      () => new Pipeline([{ ...hostCandidates(), name: '' }, usageScorer({ method: 'bruteforce' }), selectBest()]),
    ).toThrow(new PolicyError('invalid-pipeline', 'stage name must be a non-empty string, got ""'));
  });
});
