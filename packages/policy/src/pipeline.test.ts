import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BalanceContext,
  type BalanceMethod,
  type Decision,
  type MigrationCandidate,
  Pipeline,
  type PipelineState,
  PolicyError,
  type ScoredMigration,
  type Stage,
  hostCandidates,
  motionInFlightGate,
  percentReasonFormat,
  referencePipeline,
  relativeMarginAccept,
  selectBest,
  thresholdHoldGate,
  usageScorer,
} from './index';

const CANDIDATES: MigrationCandidate[] = [
  { leader: 'vm:101', resources: ['vm:101'], targets: ['node2', 'node3'] },
  { leader: 'vm:102', resources: ['vm:102', 'vm:103'], targets: ['node3'] },
];
const BEST: ScoredMigration = { sid: 'vm:101', source: 'node1', target: 'node3', imbalance: 0.94 };
const SECOND: ScoredMigration = { sid: 'vm:102', source: 'node1', target: 'node3', imbalance: 1.2 };

interface FakeOptions {
  imbalance?: number;
  motionInFlight?: boolean;
  candidates?: MigrationCandidate[];
  scored?: ScoredMigration[];
}

/**
 * A host that counts how often each lazy value is asked for, so the tests can prove that a
 * stopped stage never pays for the later ones.
 */
function fakeContext(options: FakeOptions = {}) {
  const calls = { imbalance: 0, candidates: 0, score: 0 };
  const scoreArgs: Array<{ candidates: MigrationCandidate[]; method: BalanceMethod; limit: number }> = [];
  const ctx: BalanceContext = {
    now: 100,
    motionInFlight: options.motionInFlight ?? false,
    imbalance: () => {
      calls.imbalance++;
      return options.imbalance ?? 1.41;
    },
    candidates: () => {
      calls.candidates++;
      return options.candidates ?? CANDIDATES;
    },
    score: (candidates, method, limit) => {
      calls.score++;
      scoreArgs.push({ candidates, method, limit });
      return (options.scored ?? [BEST, SECOND]).slice(0, limit);
    },
  };
  return { ctx, calls, scoreArgs };
}

/** Freezes a pipeline state and its per-stage values, so any in-place write throws. */
function deepFreeze(state: PipelineState): PipelineState {
  for (const value of Object.values(state)) if (value && typeof value === 'object') Object.freeze(value);
  return Object.freeze(state);
}

/** Runs rounds with the given imbalances; returns every decision and the final state. */
function runRounds(pipeline: Pipeline, rounds: FakeOptions[]) {
  let state = pipeline.initialState();
  const decisions: Decision[] = [];
  for (const round of rounds) {
    const out = pipeline.run(fakeContext(round).ctx, deepFreeze(state));
    decisions.push(out.decision);
    state = out.state;
  }
  return { decisions, state };
}

const actions = (decisions: Decision[]) => decisions.map((d) => (d.action === 'move' ? 'move' : d.stage));
const held = (state: PipelineState) => (state['threshold-hold'] as { sustainedRounds: number }).sustainedRounds;

const ref = (holdRounds: number, margin = 0.1, method: BalanceMethod = 'bruteforce') =>
  referencePipeline({ threshold: 0.3, holdRounds, margin, method });

describe('threshold and hold rounds (spec §3.7 step 3)', () => {
  // threshold 0.3 throughout; H = an imbalance above it (0.5), L = at or below it
  const H = { imbalance: 0.5, scored: [{ ...BEST, imbalance: 0.2 }] }; // relative (0.5-0.2)/0.5 = 0.6 ≥ 0.1
  const L = { imbalance: 0.2 };
  const AT = { imbalance: 0.3 }; // equal to the threshold counts as "not above"
  const cases: Array<{ name: string; hold: number; rounds: FakeOptions[]; expected: string[]; finalHeld: number }> = [
    {
      name: 'hold 3 fires on the 3rd consecutive round above the threshold (like 40, 60, 80)',
      hold: 3,
      rounds: [H, H, H],
      expected: ['threshold-hold', 'threshold-hold', 'move'],
      finalHeld: 0,
    },
    {
      name: 'hold 3 resets after firing: the 4th round starts counting again',
      hold: 3,
      rounds: [H, H, H, H, H, H],
      expected: ['threshold-hold', 'threshold-hold', 'move', 'threshold-hold', 'threshold-hold', 'move'],
      finalHeld: 0,
    },
    {
      name: 'a round at or below the threshold resets the count',
      hold: 3,
      rounds: [H, H, L, H, H, H],
      expected: ['threshold-hold', 'threshold-hold', 'threshold-hold', 'threshold-hold', 'threshold-hold', 'move'],
      finalHeld: 0,
    },
    {
      name: 'an imbalance equal to the threshold is not above it and resets the count',
      hold: 3,
      rounds: [H, H, AT, H],
      expected: ['threshold-hold', 'threshold-hold', 'threshold-hold', 'threshold-hold'],
      finalHeld: 1,
    },
    { name: 'hold 0 fires at once', hold: 0, rounds: [H, H], expected: ['move', 'move'], finalHeld: 0 },
    { name: 'hold 1 fires at once too (1 of 1 rounds)', hold: 1, rounds: [H], expected: ['move'], finalHeld: 0 },
    {
      name: 'hold 0 still never fires at or below the threshold',
      hold: 0,
      rounds: [L, AT],
      expected: ['threshold-hold', 'threshold-hold'],
      finalHeld: 0,
    },
    {
      name: 'two rounds of hold 3 leave the count at 2',
      hold: 3,
      rounds: [H, H],
      expected: ['threshold-hold', 'threshold-hold'],
      finalHeld: 2,
    },
  ];
  it.each(cases)('$name', ({ hold, rounds, expected, finalHeld }) => {
    const { decisions, state } = runRounds(ref(hold), rounds);
    expect(actions(decisions)).toEqual(expected);
    expect(held(state)).toBe(finalHeld);
  });

  it('says why it holds: rounds so far and the hold, or the threshold', () => {
    const { decisions } = runRounds(ref(3), [H, L]);
    expect(decisions[0]).toEqual({
      action: 'none',
      stage: 'threshold-hold',
      code: 'holding',
      reason: 'imbalance above threshold for 1 of 3 rounds',
      key: 'threshold-hold:holding',
      quiet: true,
      notices: [],
    });
    expect(decisions[1]).toEqual({
      action: 'none',
      stage: 'threshold-hold',
      code: 'below-threshold',
      reason: 'imbalance 0.2 at or below threshold 0.3',
      key: 'threshold-hold:below-threshold',
      quiet: false,
      notices: [],
    });
  });
});

describe('motion in flight (spec §3.7 step 2)', () => {
  it('stops before the imbalance is read and leaves the hold counter untouched', () => {
    const pipeline = ref(3);
    // two rounds above the threshold: count 2
    let { state } = runRounds(pipeline, [{ imbalance: 0.5 }, { imbalance: 0.5 }]);
    expect(held(state)).toBe(2);
    const fake = fakeContext({ imbalance: 0.5, motionInFlight: true });
    const out = pipeline.run(fake.ctx, deepFreeze(state));
    expect(out.decision).toEqual({
      action: 'none',
      stage: 'motion-in-flight',
      code: 'motion-in-flight',
      reason: 'a motion is queued or running',
      key: 'motion-in-flight:motion-in-flight',
      quiet: false,
      notices: [],
    });
    expect(fake.calls).toEqual({ imbalance: 0, candidates: 0, score: 0 });
    expect(held(out.state)).toBe(2);
    // the next free round is the 3rd above the threshold: it fires
    state = out.state;
    expect(
      pipeline.run(fakeContext({ imbalance: 0.5, scored: [{ ...BEST, imbalance: 0.2 }] }).ctx, state).decision.action,
    ).toBe('move');
  });

  it('does not reset a count even when the imbalance has dropped meanwhile', () => {
    const { state } = runRounds(ref(3), [{ imbalance: 0.5 }, { imbalance: 0.1, motionInFlight: true }]);
    expect(held(state)).toBe(1);
  });
});

describe('laziness: a stopped stage never asks for later values', () => {
  const cases: Array<{
    name: string;
    round: FakeOptions;
    stage: string;
    calls: { imbalance: number; candidates: number; score: number };
  }> = [
    {
      name: 'motion gate',
      round: { motionInFlight: true },
      stage: 'motion-in-flight',
      calls: { imbalance: 0, candidates: 0, score: 0 },
    },
    {
      name: 'threshold gate',
      round: { imbalance: 0.1 },
      stage: 'threshold-hold',
      calls: { imbalance: 1, candidates: 0, score: 0 },
    },
    {
      name: 'no candidates',
      round: { candidates: [] },
      stage: 'candidates',
      calls: { imbalance: 1, candidates: 1, score: 0 },
    },
    {
      name: 'nothing scored',
      round: { scored: [] },
      stage: 'score-bruteforce',
      calls: { imbalance: 1, candidates: 1, score: 1 },
    },
    // a full round reads the imbalance once: the accept stage reuses the gate's value
    { name: 'a move', round: {}, stage: 'move', calls: { imbalance: 1, candidates: 1, score: 1 } },
  ];
  it.each(cases)('$name → $stage with calls $calls', ({ round, stage, calls }) => {
    const fake = fakeContext(round);
    const { decision } = ref(0).run(fake.ctx, ref(0).initialState());
    expect(decision.action === 'move' ? 'move' : decision.stage).toBe(stage);
    expect(fake.calls).toEqual(calls);
  });

  it('scores the host candidates with the configured method and limit 1', () => {
    for (const method of ['bruteforce', 'topsis'] as const) {
      const fake = fakeContext();
      const { decision } = ref(0, 0.1, method).run(fake.ctx, {});
      expect(fake.scoreArgs).toEqual([{ candidates: CANDIDATES, method, limit: 1 }]);
      expect(decision).toEqual({
        action: 'move',
        migration: BEST,
        resources: ['vm:101'],
        imbalanceBefore: 1.41,
        imbalanceAfter: 0.94,
        notices: [],
      });
    }
  });
});

describe('relative margin (spec §3.7 step 6: (before - after) / before ≥ margin)', () => {
  const cases: Array<{ name: string; before: number; after: number; margin: number; move: boolean }> = [
    // (1.41 - 0.94) / 1.41 = 0.47 / 1.41 = 0.3333… ≥ 0.1
    { name: '1.41 → 0.94 is 33 % better, above a 10 % margin', before: 1.41, after: 0.94, margin: 0.1, move: true },
    // 0.3333… < 0.4
    { name: '1.41 → 0.94 is 33 % better, below a 40 % margin', before: 1.41, after: 0.94, margin: 0.4, move: false },
    // (2 - 1.5) / 2 = 0.25 exactly: equal to the margin is accepted
    { name: 'exactly at the margin is accepted', before: 2, after: 1.5, margin: 0.25, move: true },
    // (1 - 0.9) / 1 = 0.09999999999999998 in doubles, like the reference: just below 0.1
    { name: 'float order decides: (1 - 0.9) / 1 is below 0.1', before: 1, after: 0.9, margin: 0.1, move: false },
    // (0.5 - 0.6) / 0.5 = -0.2: a worse move never passes a non-negative margin
    { name: 'a move that makes it worse is rejected', before: 0.5, after: 0.6, margin: 0, move: false },
    // (0.5 - 0.5) / 0.5 = 0 ≥ 0
    { name: 'margin 0 accepts a neutral move', before: 0.5, after: 0.5, margin: 0, move: true },
  ];
  it.each(cases)('$name', ({ before, after, margin, move }) => {
    const fake = fakeContext({ imbalance: before, scored: [{ ...BEST, imbalance: after }] });
    const { decision } = ref(0, margin).run(fake.ctx, {});
    if (move) {
      expect(decision).toEqual({
        action: 'move',
        migration: { ...BEST, imbalance: after },
        resources: ['vm:101'],
        imbalanceBefore: before,
        imbalanceAfter: after,
        notices: [],
      });
    } else {
      expect(decision.action).toBe('none');
      expect(decision.action === 'none' && decision.stage).toBe('relative-margin');
    }
  });

  it('reports the relative improvement when it rejects', () => {
    const { decision } = ref(0, 0.5).run(fakeContext({ imbalance: 2, scored: [{ ...BEST, imbalance: 1.5 }] }).ctx, {});
    expect(decision).toMatchObject({
      action: 'none',
      stage: 'relative-margin',
      code: 'below-margin',
      reason: 'relative improvement 0.25 below margin 0.5',
    });
  });

  it('speaks the host’s units when the host gives a reason format', () => {
    // (0.5 − 0.50586) / 0.5 = −0.01172: a move that makes it worse
    const fake = fakeContext({ imbalance: 0.5, scored: [{ ...BEST, imbalance: 0.50586 }] });
    const fractions = ref(0, 0.1).run(fake.ctx, {}).decision;
    const percent = ref(0, 0.1).run({ ...fake.ctx, format: percentReasonFormat() }, {}).decision;
    expect(fractions).toMatchObject({ code: 'below-margin', reason: 'relative improvement -0.01172 below margin 0.1' });
    expect(percent).toMatchObject({ code: 'below-margin', reason: 'relative improvement -1.2% below margin 10.0%' });
    // only the text differs: the key a host logs on is the same
    expect(percent.action === 'none' && percent.key).toBe(fractions.action === 'none' && fractions.key);
    const below = ref(3).run(
      { ...fakeContext({ imbalance: 0.27381 }).ctx, format: percentReasonFormat() },
      {},
    ).decision;
    expect(below).toMatchObject({ code: 'below-threshold', reason: 'imbalance 27.4% at or below threshold 30.0%' });
  });

  it.each([
    ['a string', 'percent'],
    ['an object without bound()', { value: () => '' }],
    ['null', null],
  ])('stops with invalid-input on a reason format that is %s', (_name, format) => {
    const ctx = { ...fakeContext().ctx, format } as unknown as BalanceContext;
    expect(ref(0).run(ctx, {}).decision).toMatchObject({ action: 'none', stage: 'pipeline', code: 'invalid-input' });
  });

  it('reads the imbalance from the host when no gate computed it', () => {
    const pipeline = new Pipeline([
      hostCandidates(),
      usageScorer({ method: 'bruteforce' }),
      selectBest(),
      relativeMarginAccept({ margin: 0.1 }),
    ]);
    const fake = fakeContext({ imbalance: 1.41 });
    expect(pipeline.run(fake.ctx, {}).decision).toMatchObject({
      action: 'move',
      migration: BEST,
      imbalanceBefore: 1.41,
      imbalanceAfter: 0.94,
    });
    expect(fake.calls.imbalance).toBe(1);
  });
});

describe('pipeline validation', () => {
  const gate = motionInFlightGate;
  const cand = hostCandidates;
  const score = () => usageScorer({ method: 'bruteforce' });
  const sel = selectBest;
  const filter = (name = 'filter'): Stage<null> => ({
    name,
    kind: 'filter',
    initialState: () => null,
    run: (_c, plan, state) => ({ plan, state }),
  });
  const cases: Array<{ name: string; stages: () => Stage[]; message: string }> = [
    {
      name: 'duplicate names',
      stages: () => [gate(), gate(), cand(), score(), sel()],
      message: "duplicate stage name 'motion-in-flight'",
    },
    {
      name: 'a gate after candidates',
      stages: () => [cand(), gate(), score(), sel()],
      message: "stage 'motion-in-flight' (gate) must come before the candidates stages",
    },
    {
      name: 'score before a filter',
      stages: () => [cand(), score(), filter(), sel()],
      message: "stage 'filter' (filter) must come before the score stages",
    },
    {
      name: 'select before score',
      stages: () => [cand(), sel(), score()],
      message: "stage 'score-bruteforce' (score) must come before the select stages",
    },
    {
      name: 'missing candidates',
      stages: () => [gate(), score(), sel()],
      message: "pipeline has no 'candidates' stage",
    },
    { name: 'missing score', stages: () => [gate(), cand(), sel()], message: "pipeline has no 'score' stage" },
    { name: 'missing select', stages: () => [cand(), score()], message: "pipeline has no 'select' stage" },
    { name: 'empty', stages: () => [], message: "pipeline has no 'candidates' stage" },
    {
      name: 'unknown kind',
      stages: () => [{ ...filter('odd'), kind: 'rank' as never }, cand(), score(), sel()],
      message: "stage 'odd' has unknown kind 'rank'",
    },
  ];
  it.each(cases)('rejects $name', ({ stages, message }) => {
    const build = () => new Pipeline(stages());
    expect(build).toThrow(PolicyError);
    expect(build).toThrow(message);
    try {
      build();
    } catch (err) {
      expect((err as PolicyError).code).toBe('invalid-pipeline');
    }
  });

  it('accepts several stages of one kind and optional filters in order', () => {
    const pipeline = new Pipeline([
      gate(),
      thresholdHoldGate({ threshold: 0, holdRounds: 0 }),
      cand(),
      filter('a'),
      filter('b'),
      score(),
      sel(),
    ]);
    expect(pipeline.stages.map((s) => s.kind)).toEqual([
      'gate',
      'gate',
      'candidates',
      'filter',
      'filter',
      'score',
      'select',
    ]);
  });

  const configCases: Array<{ name: string; build: () => unknown; message: string }> = [
    {
      name: 'negative hold',
      build: () => thresholdHoldGate({ threshold: 0.3, holdRounds: -1 }),
      message: "holdRounds must be an integer from 0 to 9007199254740991, got '-1'",
    },
    {
      name: 'fractional hold',
      build: () => thresholdHoldGate({ threshold: 0.3, holdRounds: 1.5 }),
      message: "got '1.5'",
    },
    // beyond 2^53 a count no longer counts (n + 1 === n)
    {
      name: 'a hold of 1e300',
      build: () => thresholdHoldGate({ threshold: 0.3, holdRounds: 1e300 }),
      message: "holdRounds must be an integer from 0 to 9007199254740991, got '1e+300'",
    },
    {
      name: 'NaN threshold',
      build: () => thresholdHoldGate({ threshold: NaN, holdRounds: 3 }),
      message: "threshold must be a finite number >= 0, got 'NaN'",
    },
    // the imbalance is never negative: a negative threshold would let a balanced cluster through
    {
      name: 'negative threshold',
      build: () => thresholdHoldGate({ threshold: -1, holdRounds: 3 }),
      message: "threshold must be a finite number >= 0, got '-1'",
    },
    {
      name: 'unknown method',
      build: () => usageScorer({ method: 'greedy' as BalanceMethod }),
      message: "unknown method 'greedy' (bruteforce|topsis)",
    },
    {
      name: 'infinite margin',
      build: () => relativeMarginAccept({ margin: Infinity }),
      message: "margin must be a finite number >= 0, got 'Infinity'",
    },
    // a negative margin would accept moves that make the imbalance worse
    {
      name: 'negative margin',
      build: () => relativeMarginAccept({ margin: -0.1 }),
      message: "margin must be a finite number >= 0, got '-0.1'",
    },
    { name: 'reference pipeline with a bad hold', build: () => ref(-2), message: 'holdRounds' },
    {
      name: 'reference pipeline with threshold -1',
      build: () => referencePipeline({ threshold: -1, holdRounds: 3, margin: 0.1, method: 'bruteforce' }),
      message: "threshold must be a finite number >= 0, got '-1'",
    },
    {
      name: 'reference pipeline with threshold -100',
      build: () => referencePipeline({ threshold: -100, holdRounds: 3, margin: 0.1, method: 'bruteforce' }),
      message: "threshold must be a finite number >= 0, got '-100'",
    },
    {
      name: 'reference pipeline with a threshold that is a string',
      build: () =>
        referencePipeline({ threshold: '0.3' as unknown as number, holdRounds: 3, margin: 0.1, method: 'bruteforce' }),
      message: "threshold must be a finite number >= 0, got '0.3'",
    },
  ];
  it.each(configCases)('rejects config: $name', ({ build, message }) => {
    expect(build).toThrow(PolicyError);
    expect(build).toThrow(message);
    try {
      build();
    } catch (err) {
      expect((err as PolicyError).code).toBe('invalid-config');
    }
  });
});

describe('state in, state out', () => {
  it('starts from every stage’s initial state, keyed by stage name', () => {
    expect(ref(3, 0.1, 'topsis').initialState()).toEqual({
      'motion-in-flight': null,
      'threshold-hold': { sustainedRounds: 0 },
      candidates: null,
      'score-topsis': null,
      'select-best': null,
      'relative-margin': null,
    });
  });

  it('returns a new state and leaves the input object as it was', () => {
    const pipeline = ref(3);
    const input = { ...pipeline.initialState(), 'threshold-hold': { sustainedRounds: 1 } };
    const copy = structuredClone(input);
    const out = pipeline.run(fakeContext({ imbalance: 0.5 }).ctx, input);
    expect(input).toEqual(copy);
    expect(out.state).not.toBe(input);
    expect(held(out.state)).toBe(2);
  });

  it('fills in the initial state of a stage missing from the input', () => {
    const out = ref(3).run(fakeContext({ imbalance: 0.5 }).ctx, {});
    expect(held(out.state)).toBe(1);
  });

  it('keeps the state of stages it does not know (e.g. from an older pipeline)', () => {
    const out = ref(3).run(fakeContext({ imbalance: 0.5 }).ctx, { 'old-stage': 7 });
    expect(out.state['old-stage']).toBe(7);
  });

  it('records the state of stages that ran, up to and including the stopping one', () => {
    let seen = 0;
    const counting: Stage<number> = {
      name: 'count',
      kind: 'filter',
      initialState: () => 0,
      run: (_c, plan, n) => ((seen = n), { plan, state: n + 1 }),
    };
    const pipeline = new Pipeline([hostCandidates(), counting, usageScorer({ method: 'bruteforce' }), selectBest()]);
    let state = pipeline.initialState();
    for (let i = 0; i < 3; i++) state = pipeline.run(fakeContext().ctx, deepFreeze(state)).state;
    expect(seen).toBe(2);
    expect(state.count).toBe(3);
    // when candidates stop the round, the filter does not run and keeps its count
    state = pipeline.run(fakeContext({ candidates: [] }).ctx, state).state;
    expect(state.count).toBe(3);
  });

  it('fails the select stage that passes without a selection', () => {
    const lazySelect: Stage<null> = {
      name: 'lazy',
      kind: 'select',
      initialState: () => null,
      run: (_c, plan, state) => ({ plan, state }),
    };
    const pipeline = new Pipeline([hostCandidates(), usageScorer({ method: 'bruteforce' }), lazySelect]);
    expect(() => pipeline.run(fakeContext().ctx, {})).toThrow(
      "stage 'lazy' failed in round 1 (at 100): run() passed on a plan without 'selected' (a select stage selects a move or stops the round)",
    );
  });

  it('lets a stage error through (the host reports it)', () => {
    const fake = fakeContext();
    fake.ctx.score = () => {
      throw new Error('cannot score');
    };
    expect(() => ref(0).run(fake.ctx, {})).toThrow('cannot score');
  });
});

describe('PolicyError', () => {
  it('has a name, a code and a cause', () => {
    const cause = new Error('inner');
    const err = new PolicyError('invalid-config', 'bad', { cause });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('PolicyError');
    expect(err.code).toBe('invalid-config');
    expect(err.message).toBe('bad');
    expect(err.cause).toBe(cause);
    expect(String(err)).toBe('PolicyError: bad');
  });
});

describe('properties of the reference pipeline', () => {
  const round = fc.record({ above: fc.boolean(), motionInFlight: fc.boolean() });
  it('moves exactly when the last max(hold, 1) free rounds were above the threshold since the previous move', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 }), fc.array(round, { maxLength: 40 }), (hold, rounds) => {
        const { decisions, state } = runRounds(
          ref(hold),
          rounds.map((r) => ({
            imbalance: r.above ? 0.5 : 0.1,
            motionInFlight: r.motionInFlight,
            scored: [{ ...BEST, imbalance: 0.2 }],
          })),
        );
        // model: count the free (no motion) rounds above the threshold since the last reset
        let streak = 0;
        rounds.forEach((r, i) => {
          let move = false;
          if (!r.motionInFlight) {
            streak = r.above ? streak + 1 : 0;
            if (streak >= Math.max(hold, 1)) {
              move = true;
              streak = 0;
            }
          }
          expect(decisions[i]!.action).toBe(move ? 'move' : 'none');
        });
        expect(held(state)).toBe(streak);
        expect(held(state)).toBeLessThan(Math.max(hold, 1));
      }),
    );
  });
});
