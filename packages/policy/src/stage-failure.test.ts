import { describe, expect, it } from 'vitest';
import {
  type BalanceContext,
  Pipeline,
  PolicyError,
  PolicyRegistry,
  StageError,
  type Stage,
  type StageFailure,
  definePlugin,
  hasErrorCode,
  hostCandidates,
  jsonProblem,
  selectBest,
  usageScorer,
} from './index';

/** A host with two nodes and one candidate whose move balances them. */
function host(now = 60): BalanceContext {
  return {
    now,
    motionInFlight: false,
    imbalance: () => 0.5,
    candidates: () => [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2'] }],
    score: () => [{ sid: 'vm:101', source: 'node1', target: 'node2', imbalance: 0.1 }],
  };
}

/** A gate whose `run` is `run`, state `initial`. */
function gate(run: Stage['run'], initial: () => unknown = () => null, name = 'odd'): Stage {
  return { name, kind: 'gate', initialState: initial, run };
}

/** A pipeline: the gate, then the reference's candidates, scorer and selection. */
function withGate(stage: Stage, owners?: ReadonlyMap<string, string>): Pipeline {
  return new Pipeline([stage, hostCandidates(), usageScorer({ method: 'bruteforce' }), selectBest()], {
    ...(owners ? { owners } : {}),
  });
}

/** What `pipeline.run(ctx, {})` threw, checked to be a StageError. */
function failure(pipeline: Pipeline, ctx: BalanceContext = host(), state = {}): StageError {
  try {
    pipeline.run(ctx, state);
  } catch (err) {
    expect(err).toBeInstanceOf(StageError);
    expect(hasErrorCode(err, 'stage-failed')).toBe(true);
    return err as StageError;
  }
  throw new Error('expected the round to fail');
}

const passOn: Stage['run'] = (_ctx, plan, state) => ({ plan, state });

describe('a stage that breaks its contract fails the round with one StageError', () => {
  const cases: Array<{ name: string; run: Stage['run']; problem: string }> = [
    {
      name: 'throws',
      run: () => {
        throw new Error('kaboom');
      },
      problem: 'threw: kaboom',
    },
    {
      name: 'throws a non-Error',
      run: () => {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- a plug-in may throw anything
        throw 'a string';
      },
      problem: 'threw: a string',
    },
    {
      name: 'returns undefined',
      run: () => undefined as never,
      problem: 'returned undefined, expected {plan, state} or {stop, state}',
    },
    { name: 'returns a number', run: () => 7 as never, problem: 'returned 7, expected {plan, state} or {stop, state}' },
    {
      name: 'returns no state',
      run: (_c, plan) => ({ plan }) as never,
      problem: "returned no 'state', expected {plan, state} or {stop, state}",
    },
    {
      name: 'returns neither plan nor stop',
      run: (_c, _plan, state) => ({ state }) as never,
      problem: "returned 'plan' undefined and no 'stop', expected {plan, state} or {stop, state}",
    },
    {
      name: 'returns an empty stop reason',
      run: (_c, _plan, state) => ({ stop: '', state }),
      problem: `returned 'stop' "", expected a non-empty string (the reason)`,
    },
    {
      name: 'returns a stop code that is not a string',
      run: (_c, _plan, state) => ({ stop: 'no', code: 3, state }) as never,
      problem: "returned 'code' 3, expected a non-empty string or nothing",
    },
    {
      name: 'returns notices that are not notices',
      run: (_c, plan, state) => ({ plan, state, notices: [{ code: 'x', severity: 'loud', message: 'm' }] }) as never,
      problem: "returned 'notices.0' an object, expected {code, severity: info|warning, message}",
    },
    {
      name: 'returns a plan with a NaN imbalance',
      run: (_c, plan, state) => ({ plan: { ...plan, imbalance: Number.NaN }, state }),
      problem: "returned 'plan.imbalance' NaN, expected a finite number >= 0",
    },
    {
      name: 'keeps a function in its state',
      run: (_c, plan) => ({ plan, state: { n: 1, x: () => 1 } }),
      problem: 'returned a state that is not plain JSON: state.x is a function',
    },
    {
      name: 'keeps NaN in its state',
      run: (_c, plan) => ({ plan, state: { pairs: [{ until: Number.NaN }] } }),
      problem: 'returned a state that is not plain JSON: state.pairs.0.until is NaN',
    },
    {
      name: 'keeps a Map in its state',
      run: (_c, plan) => ({ plan, state: { seen: new Map() } }),
      problem: 'returned a state that is not plain JSON: state.seen is a Map',
    },
    {
      name: 'keeps an undefined field in its state',
      run: (_c, plan) => ({ plan, state: { last: undefined } }),
      problem: 'returned a state that is not plain JSON: state.last is undefined',
    },
    {
      name: 'returns undefined as its state',
      run: (_c, plan) => ({ plan, state: undefined }),
      problem: 'returned a state that is not plain JSON: state is undefined',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: the message names the plug-in, the stage, the round and the problem`, () => {
      const pipeline = withGate(gate(c.run), new Map([['odd', 'odd-plugin']]));
      expect(() => pipeline.run(host(20), {})).toThrow(StageError); // round 1 fails too; the count goes on
      const err = failure(pipeline, host(40));
      const expected: StageFailure = {
        plugin: 'odd-plugin',
        stage: 'odd',
        hook: 'run',
        round: 2,
        now: 40,
        problem: c.problem,
      };
      expect({ ...err, message: err.message }).toMatchObject({
        ...expected,
        code: 'stage-failed',
        message: `plug-in 'odd-plugin': stage 'odd' failed in round 2 (at 40): run() ${c.problem}`,
      });
    });
  }

  it('keeps what the stage threw as the cause', () => {
    const thrown = new Error('kaboom');
    const err = failure(
      withGate(
        gate(() => {
          throw thrown;
        }),
      ),
    );
    expect(err.cause).toBe(thrown);
    // a stage of no plug-in is the reference pipeline's: no plug-in named
    expect(err.message).toBe("stage 'odd' failed in round 1 (at 60): run() threw: kaboom");
    expect(err.name).toBe('StageError');
    expect(err).toBeInstanceOf(PolicyError);
  });

  it('fails observe, breakStreak and initialState the same way', () => {
    const observing: Stage = {
      ...gate(passOn),
      observe: () => ({ state: { at: Infinity } }),
    };
    expect(failure(withGate(observing)).message).toBe(
      "stage 'odd' failed in round 1 (at 60): observe() returned a state that is not plain JSON: state.at is Infinity",
    );
    const noObserved: Stage = { ...gate(passOn), observe: () => undefined as never };
    expect(failure(withGate(noObserved)).problem).toBe('returned undefined, expected {state}');

    const breaking: Stage = { ...gate(passOn, () => null, 'later'), breakStreak: (): unknown => 10n };
    const stopper = gate(
      (_c, _plan, state) => ({ stop: 'no', breaksStreak: true, state }),
      () => null,
      'first',
    );
    const pipeline = new Pipeline([
      stopper,
      breaking,
      hostCandidates(),
      usageScorer({ method: 'bruteforce' }),
      selectBest(),
    ]);
    expect(failure(pipeline).message).toBe(
      "stage 'later' failed in round 1 (at 60): breakStreak() returned a state that is not plain JSON: state is a BigInt",
    );
    // a host breaking the streaks on a round it does not run: its round named, if it gives one
    expect(() => pipeline.breakStreaks({ later: null })).toThrow(
      "stage 'later' failed: breakStreak() returned a state that is not plain JSON: state is a BigInt",
    );
    expect(() => pipeline.breakStreaks({ later: null }, 12)).toThrow(
      "stage 'later' failed in round 12: breakStreak() returned a state that is not plain JSON: state is a BigInt",
    );
    // the host's number of the round, when it gives one to run
    expect(() => pipeline.run(host(80), {}, 41)).toThrow("stage 'later' failed in round 41 (at 80): breakStreak()");

    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const badStart = withGate(gate(passOn, () => cyclic));
    expect(() => badStart.initialState()).toThrow(
      "stage 'odd' failed: initialState() returned a state that is not plain JSON: state.self is a cycle (it contains itself)",
    );
  });

  it('lets invalid-input stop the round and invalid-context and the host’s own errors through', () => {
    const invalid = gate(() => {
      throw Object.assign(new Error('bad host data'), { code: 'invalid-input' });
    });
    const { decision } = withGate(invalid).run(host(), {});
    expect(decision).toMatchObject({ action: 'none', stage: 'odd', code: 'invalid-input', reason: 'bad host data' });

    const needy = gate(() => {
      throw new PolicyError('invalid-context', "stage 'odd' needs 'ctx.nodes()', which the host does not provide");
    });
    expect(() => withGate(needy).run(host(), {})).toThrow(
      new PolicyError('invalid-context', "stage 'odd' needs 'ctx.nodes()', which the host does not provide"),
    );

    const fromHost = new Error('cannot read the cluster');
    const reading = gate((ctx, plan, state) => {
      ctx.candidates();
      return { plan, state };
    });
    const ctx = {
      ...host(),
      candidates: () => {
        throw fromHost;
      },
    };
    expect(() => withGate(reading).run(ctx, {})).toThrow(fromHost);
  });

  it('leaves a valid round as it was: the same decision and state', () => {
    const counting = gate(
      (_c, plan, state) => ({ plan, state: { n: (state as { n: number }).n + 1 } }),
      () => ({
        n: 0,
      }),
    );
    const out = withGate(counting).run(host(), {});
    expect(out.decision.action).toBe('move');
    expect(out.state.odd).toEqual({ n: 1 });
  });
});

describe('PolicyRegistry: the stages of a plug-in are named by it', () => {
  const KEY = { key: 'boom', type: 'flag', off: false, recommended: false, description: 'd', why: 'w' } as const;
  const boom = definePlugin({
    name: 'boom',
    keys: { on: KEY },
    stages: (s) =>
      s.on
        ? [
            {
              slot: 'gate' as const,
              order: 0,
              stage: gate(
                () => {
                  throw new Error('kaboom');
                },
                () => null,
                'boom-gate',
              ),
            },
          ]
        : [],
  });
  const reference = { threshold: 0.3, holdRounds: 0, margin: 0.1, method: 'bruteforce' as const };

  it('names the plug-in and shows the error to the listener of `reporting`', () => {
    const seen: StageError[] = [];
    const registry = new PolicyRegistry([boom]).reporting((err) => seen.push(err));
    const pipeline = registry.pipeline(registry.read({ boom: 1 }), reference);
    expect(pipeline.pluginOf('boom-gate')).toBe('boom');
    expect(pipeline.pluginOf('select-best')).toBeUndefined();
    expect(() => pipeline.run(host(), {})).toThrow(
      "plug-in 'boom': stage 'boom-gate' failed in round 1 (at 60): run() threw: kaboom",
    );
    expect(seen.map((e) => e.stage)).toEqual(['boom-gate']);
    // `with` keeps the listener
    const more = registry.with([{ plugin: { name: 'other', keys: {} }, origin: './other.js' }]);
    expect(() => more.pipeline(more.read({ boom: 1 }), reference).run(host(), {})).toThrow(StageError);
    expect(seen).toHaveLength(2);
  });

  it('refuses a stage part without a stage, naming the plug-in', () => {
    const broken = { name: 'broken', keys: {}, stages: () => [{ slot: 'gate', order: 0 }] };
    const registry = new PolicyRegistry([broken]);
    expect(() => registry.pipeline(registry.read({}), reference)).toThrow(
      "plug-in 'broken': stages() must return stage parts ({slot, order, stage}); part 0 has no stage, got an object",
    );
  });
});

describe('jsonProblem', () => {
  const table: Array<[string, unknown, string | undefined]> = [
    ['null', null, undefined],
    ['nested plain data', { a: [1, 'x', true, null, { b: -0.5 }] }, undefined],
    ['an object without prototype', Object.assign(Object.create(null) as object, { a: 1 }), undefined],
    ['-Infinity', { a: [-Infinity] }, 'state.a.0 is -Infinity'],
    ['a Date', { at: new Date(0) }, 'state.at is a Date'],
    ['a class instance', { x: new (class Model {})() }, 'state.x is a Model'],
    ['a symbol', { s: Symbol('s') }, 'state.s is a symbol'],
    // eslint-disable-next-line no-sparse-arrays -- the hole is the case
    ['a sparse array', { a: [1, , 3] }, 'state.a.1 is a hole (a sparse array)'],
    ['a Set', new Set([1]), 'state is a Set'],
  ];
  for (const [name, value, problem] of table)
    it(`${name}: ${problem ?? 'plain JSON'}`, () => expect(jsonProblem(value)).toBe(problem));

  it('a shared object is no cycle', () => {
    const shared = { n: 1 };
    expect(jsonProblem({ a: shared, b: [shared, shared] })).toBeUndefined();
  });
});
