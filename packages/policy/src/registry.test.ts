import { describe, expect, it } from 'vitest';
import {
  type FlagKeySpec,
  type NumberKeySpec,
  PolicyError,
  PolicyRegistry,
  type Stage,
  checkPlugin,
  definePlugin,
  hasErrorCode,
} from './index';

const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };

const FREEZE = {
  key: 'freeze',
  type: 'flag',
  off: false,
  recommended: false,
  description: 'while set, the balancer moves nothing',
  why: 'an operator decision',
} as const satisfies FlagKeySpec;

const PAUSE = {
  key: 'pause-seconds',
  type: 'number',
  unit: 'seconds',
  min: 0,
  max: 600,
  off: 0,
  recommended: 60,
  description: 'a pause',
  why: 'judgement',
} as const satisfies NumberKeySpec;

const frozen: Stage<null> = {
  name: 'freeze',
  kind: 'gate',
  initialState: () => null,
  run: (_c, _p, state) => ({ stop: 'frozen', code: 'frozen', state }),
};

/** A plug-in as an out-of-tree module would write it: plain data and functions. */
const freeze = definePlugin({
  name: 'freeze',
  keys: { freeze: FREEZE },
  stages: (settings) => (settings.freeze ? [{ slot: 'gate', order: 0, stage: frozen }] : []),
  needs: (settings) => ({ guestConfigs: settings.freeze }),
  describe: (settings) => (settings.freeze ? ['freeze'] : []),
});

const pause = definePlugin({
  name: 'pause',
  keys: { seconds: PAUSE },
  needs: (settings) => ({ memhost: settings.seconds > 0 }),
  describe: (settings) => (settings.seconds > 0 ? [`pause ${settings.seconds} s`] : []),
});

describe('PolicyRegistry: reading the settings', () => {
  const registry = new PolicyRegistry([freeze, pause]);

  it('lists every key in the order of the plug-ins', () => {
    expect(registry.keys().map((k) => k.key)).toEqual(['freeze', 'pause-seconds']);
    expect(registry.spec('pause-seconds')).toBe(PAUSE);
    expect(registry.pluginOf('freeze')).toBe(freeze);
    expect(registry.spec('ha-auto-rebalance-threshold')).toBeUndefined();
  });

  it.each([
    // crs, freeze, pause, active, problems
    [{}, false, 0, false, []],
    [{ freeze: 1 }, true, 0, true, []],
    [{ freeze: '0', 'pause-seconds': '30' }, false, 30, true, []],
    // the preset takes each key's recommended value; an explicit key overrides it
    [{ 'ha-auto-rebalance-preset': 'recommended' }, false, 60, true, []],
    [{ 'ha-auto-rebalance-preset': 'recommended', 'pause-seconds': 0 }, false, 0, false, []],
    [
      { freeze: 'yes', 'pause-seconds': 601 },
      false,
      0,
      false,
      [
        "datacenter.cfg: invalid value 'yes' for 'crs.freeze' (0 or 1), falling back to 0 (off)",
        "datacenter.cfg: invalid value '601' for 'crs.pause-seconds' (seconds, 0 to 600), falling back to 0 (off)",
      ],
    ],
  ])('%j', (crs, frozenOn, seconds, active, problems) => {
    const settings = registry.read(crs);
    expect(registry.settingsOf(settings, freeze)).toEqual({ freeze: frozenOn });
    expect(registry.settingsOf(settings, pause)).toEqual({ seconds });
    expect(settings.active).toBe(active);
    expect(settings.problems.map((p) => p.message)).toEqual(problems);
  });

  it('off: every plug-in off, the key of the settings tells equal settings apart', () => {
    expect(registry.off.active).toBe(false);
    expect(registry.off.key).toBe(registry.read({}).key);
    expect(registry.read({ freeze: 1 }).key).not.toBe(registry.off.key);
  });

  it('checkValue judges one value as read would', () => {
    expect(registry.checkValue('freeze', 1)).toBeUndefined();
    expect(registry.checkValue('freeze', 2)?.message).toBe(
      "datacenter.cfg: invalid value '2' for 'crs.freeze' (0 or 1), falling back to 0 (off)",
    );
    expect(registry.checkValue('ha-auto-rebalance-preset', 'max')?.key).toBe('crs.ha-auto-rebalance-preset');
  });

  it('refusal words a bad value as every host refuses it, after the file and the key', () => {
    expect(registry.refusal('freeze', 1)).toBeUndefined();
    expect(registry.refusal('freeze', 2)).toBe("invalid value '2' (0 or 1)");
    expect(registry.refusal('pause-seconds', 'abc')).toMatch(/^invalid value 'abc' \(seconds, 0 to \d+\)$/);
    expect(registry.refusal('ha-auto-rebalance-preset', 'max')).toBe("invalid value 'max' (one of recommended)");
    // not a key of a plug-in: no judgement
    expect(registry.refusal('no-such-key', 'x')).toBeUndefined();
  });

  it('settingsOf refuses a plug-in of another registry', () => {
    const other = definePlugin({ name: 'other', keys: {} });
    expect(() => registry.settingsOf(registry.off, other)).toThrow("plug-in 'other' is not in this registry");
  });

  it('needs and describe: every plug-in, ORed and in order', () => {
    const settings = registry.read({ freeze: 1, 'pause-seconds': 5 });
    expect(registry.needs(registry.off)).toEqual({
      memhost: false,
      nodePressure: false,
      guestConfigs: false,
      planInput: false,
      migrationTasks: false,
    });
    expect(registry.needs(settings)).toEqual({
      memhost: true,
      nodePressure: false,
      guestConfigs: true,
      planInput: false,
      migrationTasks: false,
    });
    expect(registry.describe(settings)).toEqual(['freeze', 'pause 5 s']);
  });

  it('check: a plug-in names settings that mean nothing together; a broken check is a problem naming it, never a throw', () => {
    const paused = definePlugin({
      name: 'paused',
      keys: { freeze: FREEZE, pause: PAUSE },
      check: (settings, explicit) =>
        !settings.freeze && explicit('pause-seconds') !== undefined
          ? [{ key: 'crs.pause-seconds', value: explicit('pause-seconds'), message: 'pause without freeze' }]
          : [],
    });
    const r = new PolicyRegistry([paused]);
    expect(r.read({ 'pause-seconds': 5 }).problems.map((p) => p.message)).toEqual(['pause without freeze']);
    expect(r.read({ freeze: 1, 'pause-seconds': 5 }).problems).toEqual([]);
    // from the preset, not written: nothing to say
    expect(r.read({ 'ha-auto-rebalance-preset': 'recommended' }).problems).toEqual([]);
    // a value judged alone: the checks of settings together are not asked
    expect(r.checkValue('pause-seconds', 5)).toBeUndefined();
    const throwing = new PolicyRegistry([
      definePlugin({
        name: 'bad',
        keys: {},
        check: () => {
          throw new Error('boom');
        },
      }),
    ]);
    expect(throwing.read({}).problems.map((p) => p.message)).toEqual(["plug-in 'bad': check() failed: boom"]);
    const shape = new PolicyRegistry([checkPlugin({ name: 'shape', keys: {}, check: () => 'no' }, 'shape.js')]);
    expect(shape.read({}).problems.map((p) => p.message)).toEqual([
      'plug-in \'shape\': check() must return an array of problems, got "no"',
    ]);
    expect(() => checkPlugin({ name: 'x', keys: {}, check: 5 }, './x.js')).toThrow(
      "plug-in './x.js': 'check' must be a function, got 5",
    );
  });

  it('the JSON schema has the preset and every key', () => {
    const schema = registry.jsonSchema() as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties)).toEqual(['ha-auto-rebalance-preset', 'freeze', 'pause-seconds']);
  });
});

describe('PolicyRegistry: the pipeline', () => {
  it("puts each plug-in's stages in their slots; with every key off it is the reference", () => {
    const registry = new PolicyRegistry([freeze]);
    expect(registry.pipeline(registry.off, REF).stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'threshold-hold',
      'candidates',
      'score-bruteforce',
      'select-best',
      'relative-margin',
    ]);
    const on = registry.pipeline(registry.read({ freeze: 1 }), REF);
    expect(on.stages.map((s) => s.name).slice(0, 2)).toEqual(['motion-in-flight', 'freeze']);
    const { decision } = on.run(
      {
        now: 0,
        motionInFlight: false,
        imbalance: () => 0.5,
        candidates: () => [],
        score: () => [],
      },
      {},
    );
    expect(decision).toMatchObject({ action: 'none', stage: 'freeze', code: 'frozen' });
  });

  it('one objective at most', () => {
    const objective = (name: string) =>
      definePlugin({
        name,
        keys: {},
        objective: (_settings, { reference }) => ({
          name,
          hold: {
            name: `${name}-hold`,
            kind: 'gate',
            initialState: () => ({ sustainedRounds: 0 }),
            run: (_c, plan, state) => ({ plan, state }),
          },
          score: { ...frozen, name: `${name}-score`, kind: 'score' },
          margin: { ...frozen, name: `${name}-margin`, kind: 'accept' },
          scoreLimit: reference.holdRounds,
        }),
      });
    const one = new PolicyRegistry([objective('a')]);
    expect(one.pipeline(one.off, REF).stages.map((s) => s.name)).toContain('a-score');
    const two = new PolicyRegistry([objective('a'), objective('b')]);
    expect(() => two.pipeline(two.off, REF)).toThrow("plug-ins 'a' and 'b' both supply an objective ('a', 'b')");
  });

  it('a plug-in function that throws or returns the wrong shape is named in the error', () => {
    const throwing = definePlugin({
      name: 'throwing',
      keys: {},
      stages: () => {
        throw new Error('boom');
      },
    });
    const registry = new PolicyRegistry([throwing]);
    expect(() => registry.pipeline(registry.off, REF)).toThrow(
      new PolicyError('invalid-plugin', "plug-in 'throwing': stages() failed: boom"),
    );
    // a plug-in as an untyped module could give it
    const wrong = new PolicyRegistry([{ name: 'wrong', keys: {}, describe: () => 'freeze' }]);
    expect(() => wrong.describe(wrong.off)).toThrow(
      'plug-in \'wrong\': describe() must return an array of strings, got "freeze"',
    );
  });
});

describe('checkPlugin and the registry refuse what is not a plug-in, naming the field', () => {
  const spec = (over: Record<string, unknown>) => ({ name: 'p', keys: { f: { ...FREEZE, ...over } } });
  it.each([
    [undefined, "plug-in 'mod': expected an object, got undefined"],
    [[], "plug-in 'mod': expected an object, got an array"],
    [{ keys: {} }, "plug-in 'mod': 'name' must be a non-empty string, got undefined"],
    [{ name: 'p' }, "plug-in 'mod': 'keys' must be an object of key specs by settings field, got undefined"],
    [{ name: 'p', keys: { f: 'freeze' } }, "plug-in 'mod': 'keys.f' must be a key spec (an object), got \"freeze\""],
    [
      spec({ key: 'Freeze' }),
      "plug-in 'mod': 'keys.f.key' must be a key name of lower-case words joined by - (e.g. freeze), got \"Freeze\"",
    ],
    [
      spec({ key: 'ha-auto-rebalance-threshold' }),
      "plug-in 'mod': 'keys.f.key' must be a key of the plug-in's own (not one of the reference's crs keys or the preset), got \"ha-auto-rebalance-threshold\"",
    ],
    [spec({ type: 'bool' }), "plug-in 'mod': 'keys.f.type' must be 'number', 'flag' or 'choice', got \"bool\""],
    [spec({ off: 0 }), "plug-in 'mod': 'keys.f.off' must be a boolean, got 0"],
    [spec({ description: '' }), "plug-in 'mod': 'keys.f.description' must be a non-empty string, got \"\""],
    [
      { name: 'p', keys: { n: { ...PAUSE, recommended: 900 } } },
      "plug-in 'mod': 'keys.n.recommended' must be a number in 0..600, got 900",
    ],
    [
      { name: 'p', keys: { n: { ...PAUSE, min: 10, max: 5 } } },
      "plug-in 'mod': 'keys.n.max' must be a number >= min (10), got 5",
    ],
    [
      { name: 'p', keys: { n: { ...PAUSE, unit: undefined } } },
      "plug-in 'mod': 'keys.n.unit' must be a non-empty string, got undefined",
    ],
    [
      { name: 'p', keys: { c: { ...FREEZE, type: 'choice', choices: ['a', 'a'], off: 'a', recommended: 'a' } } },
      "plug-in 'mod': 'keys.c.choices.1' must be a non-empty word not listed before, got \"a\"",
    ],
    [
      { name: 'p', keys: { c: { ...FREEZE, type: 'choice', choices: ['a', 'b'], off: 'c', recommended: 'a' } } },
      "plug-in 'mod': 'keys.c.off' must be one of its choices, got \"c\"",
    ],
    [{ name: 'p', keys: {}, stages: [] }, "plug-in 'mod': 'stages' must be a function, got an array"],
  ])('%j', (value, message) => {
    expect(() => checkPlugin(value, 'mod')).toThrow(new PolicyError('invalid-plugin', message));
  });

  it('two plug-ins with one key or one name: the later one is named, with the field', () => {
    expect(() => new PolicyRegistry([freeze, { ...freeze, name: 'again' }])).toThrow(
      "plug-in 'again': 'keys.freeze.key' 'freeze' is already a key of plug-in 'freeze'",
    );
    expect(() =>
      new PolicyRegistry([freeze]).with([{ plugin: { ...pause, name: 'freeze' }, origin: './x.js' }]),
    ).toThrow("plug-in './x.js': 'name' 'freeze' is also the name of plug-in 'freeze'");
    expect(() => new PolicyRegistry([freeze]).with([{ plugin: 42, origin: './x.js' }])).toThrow(
      "plug-in './x.js': expected an object, got 42",
    );
  });

  it('with: more plug-ins after the registry own; none: the registry itself', () => {
    const base = new PolicyRegistry([freeze]);
    expect(base.with([])).toBe(base);
    expect(
      base
        .with([{ plugin: pause, origin: './pause.js' }])
        .keys()
        .map((k) => k.key),
    ).toEqual(['freeze', 'pause-seconds']);
  });
});

describe('errors are judged by their code, never by instanceof', () => {
  it('a plain Error with the code stops the round as a PolicyError would', () => {
    const plain = Object.assign(new Error('bad telemetry'), { code: 'invalid-input' });
    expect(hasErrorCode(plain, 'invalid-input')).toBe(true);
    expect(hasErrorCode(new PolicyError('invalid-input', 'x'), 'invalid-input')).toBe(true);
    expect(hasErrorCode(new Error('x'), 'invalid-input')).toBe(false);
    expect(hasErrorCode({ code: 'invalid-input' }, 'invalid-input')).toBe(false);
    const throwing: Stage<null> = {
      ...frozen,
      run: () => {
        throw plain;
      },
    };
    const registry = new PolicyRegistry([
      definePlugin({ name: 'throws', keys: {}, stages: () => [{ slot: 'gate', order: 0, stage: throwing }] }),
    ]);
    const { decision } = registry
      .pipeline(registry.off, REF)
      .run({ now: 0, motionInFlight: false, imbalance: () => 0.5, candidates: () => [], score: () => [] }, {});
    expect(decision).toMatchObject({ action: 'none', stage: 'freeze', code: 'invalid-input', reason: 'bad telemetry' });
  });
});
