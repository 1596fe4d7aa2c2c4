import { PolicyError, PolicyRegistry } from '@poise/policy';
import { describe, expect, it } from 'vitest';
import { type StableSettings, stablePlugin } from './index';

const REFERENCE = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
const registry = new PolicyRegistry([stablePlugin]);
/** The settings a host reads from a `crs` section, and every problem (the preset's, then the keys'). */
const parse = (crs: unknown) => {
  const read = registry.read(crs);
  return { settings: registry.settingsOf(read, stablePlugin), problems: read.problems.map((p) => p.message) };
};
/** The stage parts the plug-in turns on for these settings, as the registry asks for them. */
const stagesOf = (settings: StableSettings) => stablePlugin.stages!(settings, { reference: REFERENCE });

/** Every stage off: the reference balancer. */
const OFF = {
  backoffSeconds: 0,
  cooldownSeconds: 0,
  minImprovementPoints: 0,
  smoothingHalfLifeSeconds: 0,
  costWeight: 0,
  memhost: false,
};

const RECOMMENDED = {
  backoffSeconds: 60,
  cooldownSeconds: 600,
  minImprovementPoints: 5,
  smoothingHalfLifeSeconds: 300,
  costWeight: 0.2,
  memhost: true,
};

describe('reading the keys', () => {
  it('no keys: every stage off, the reference pipeline', () => {
    for (const crs of [undefined, {}, { ha: 'dynamic', 'ha-auto-rebalance': 1 }]) {
      expect(parse(crs)).toEqual({ settings: OFF, problems: [] });
    }
    expect(stagesOf(OFF)).toEqual([]);
    expect(registry.pipeline(registry.off, REFERENCE).stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'threshold-hold',
      'candidates',
      'score-bruteforce',
      'select-best',
      'relative-margin',
    ]);
  });

  it('the recommended preset turns every stage on', () => {
    expect(parse({ 'ha-auto-rebalance-preset': 'recommended' })).toEqual({ settings: RECOMMENDED, problems: [] });
  });

  it('explicit keys override the preset, an explicit 0 turns a stage off', () => {
    expect(
      parse({
        'ha-auto-rebalance-preset': 'recommended',
        'ha-auto-rebalance-backoff': 0,
        'ha-auto-rebalance-cooldown': '900',
        'ha-auto-rebalance-memhost': '0',
      }).settings,
    ).toEqual({
      ...RECOMMENDED,
      backoffSeconds: 0,
      cooldownSeconds: 900,
      memhost: false,
    });
  });

  it('reads numbers given as decimal strings, as datacenter.cfg stores them', () => {
    expect(
      parse({
        'ha-auto-rebalance-min-improvement': '2.5',
        'ha-auto-rebalance-cost-weight': '1e-1',
        'ha-auto-rebalance-memhost': 1,
      }).settings,
    ).toEqual({
      ...OFF,
      minImprovementPoints: 2.5,
      costWeight: 0.1,
      memhost: true,
    });
  });

  it.each([
    [
      'ha-auto-rebalance-backoff',
      'abc',
      "datacenter.cfg: invalid value 'abc' for 'crs.ha-auto-rebalance-backoff' (seconds, 0 to 3600), falling back to 0 (off)",
    ],
    [
      'ha-auto-rebalance-backoff',
      4000,
      "invalid value '4000' for 'crs.ha-auto-rebalance-backoff' (seconds, 0 to 3600)",
    ],
    ['ha-auto-rebalance-cooldown', -1, "invalid value '-1' for 'crs.ha-auto-rebalance-cooldown' (seconds, 0 to 86400)"],
    ['ha-auto-rebalance-smoothing', '0x10', "invalid value '0x10' for 'crs.ha-auto-rebalance-smoothing'"],
    ['ha-auto-rebalance-smoothing', ' 5', "invalid value ' 5' for 'crs.ha-auto-rebalance-smoothing'"],
    [
      'ha-auto-rebalance-min-improvement',
      NaN,
      "invalid value 'NaN' for 'crs.ha-auto-rebalance-min-improvement' (percentage points, 0 to 100)",
    ],
    [
      'ha-auto-rebalance-cost-weight',
      1.5,
      "invalid value '1.5' for 'crs.ha-auto-rebalance-cost-weight' (fraction of the best improvement, 0 to 1)",
    ],
    ['ha-auto-rebalance-cost-weight', true, "invalid value 'true' for 'crs.ha-auto-rebalance-cost-weight'"],
    ['ha-auto-rebalance-cost-weight', { x: 1 }, 'invalid value (an object) for'],
    [
      'ha-auto-rebalance-memhost',
      'yes',
      "datacenter.cfg: invalid value 'yes' for 'crs.ha-auto-rebalance-memhost' (0 or 1), falling back to 0 (off)",
    ],
    ['ha-auto-rebalance-memhost', 2, "invalid value '2' for 'crs.ha-auto-rebalance-memhost' (0 or 1)"],
  ])('%s = %j is a problem naming the key, and that stage is off even under the preset', (key, value, message) => {
    const { settings, problems } = parse({ 'ha-auto-rebalance-preset': 'recommended', [key]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message);
    const field = {
      'ha-auto-rebalance-backoff': 'backoffSeconds',
      'ha-auto-rebalance-cooldown': 'cooldownSeconds',
      'ha-auto-rebalance-smoothing': 'smoothingHalfLifeSeconds',
      'ha-auto-rebalance-min-improvement': 'minImprovementPoints',
      'ha-auto-rebalance-cost-weight': 'costWeight',
      'ha-auto-rebalance-memhost': 'memhost',
    }[key] as keyof typeof OFF;
    expect(settings[field]).toBe(OFF[field]);
    // the other stages keep the preset's values
    expect(Object.values(settings).filter((v, i) => v !== Object.values(RECOMMENDED)[i])).toHaveLength(1);
  });

  it('a bad preset or a crs that is not an object is one problem, and everything is off', () => {
    expect(parse({ 'ha-auto-rebalance-preset': 'fast' })).toEqual({
      settings: OFF,
      problems: [
        "datacenter.cfg: invalid value 'fast' for 'crs.ha-auto-rebalance-preset' (one of recommended), using no preset",
      ],
    });
    expect(parse('dynamic')).toEqual({
      settings: OFF,
      problems: ['datacenter.cfg: \'crs\' must be an object, got "dynamic"; the balancer stages are off'],
    });
  });

  it('keys named like object internals are just absent keys', () => {
    expect(parse(JSON.parse('{"__proto__": {"ha-auto-rebalance-backoff": 60}, "toString": 1}'))).toEqual({
      settings: OFF,
      problems: [],
    });
  });
});

describe('the stages', () => {
  it('recommended: every stage in its slot, composing the documented order', () => {
    const pipeline = registry.pipeline(registry.read({ 'ha-auto-rebalance-preset': 'recommended' }), REFERENCE);
    expect(pipeline.stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'smoothing',
      'backoff-series',
      'threshold-hold',
      'candidates',
      'cooldown',
      'backoff',
      'score-bruteforce',
      'select-cost',
      'relative-margin',
      'min-improvement',
    ]);
  });

  it('converts the dead band from percentage points to the imbalance fraction', () => {
    const [part] = stagesOf(parse({ 'ha-auto-rebalance-min-improvement': 5 }).settings);
    const stop = part!.stage.run(
      {} as never,
      { imbalance: 0.5, selected: { sid: 'a', source: 'n1', target: 'n2', imbalance: 0.46 } },
      null,
    );
    // 0.5 − 0.46 = 0.04 < 5 / 100
    expect(stop).toMatchObject({ code: 'below-min-improvement', stop: 'improvement 0.04 below min-improvement 0.05' });
  });

  it('asks the scorer for more migrations only when cost is on', () => {
    expect(stagesOf(parse({ 'ha-auto-rebalance-cost-weight': 0.2 }).settings).map((p) => p.scoreLimit)).toEqual([16]);
    expect(stagesOf(parse({ 'ha-auto-rebalance-cooldown': 600 }).settings).map((p) => p.scoreLimit)).toEqual([
      undefined,
    ]);
  });

  it('rejects settings out of range (reading never yields them)', () => {
    expect(() => stagesOf({ ...OFF, backoffSeconds: NaN })).toThrow(
      new PolicyError(
        'invalid-config',
        "stable setting 'backoffSeconds' must be a finite number in 0..3600 (seconds), got 'NaN'",
      ),
    );
    expect(() => stagesOf({ ...OFF, costWeight: 2 })).toThrow("'costWeight'");
  });

  it('a JSON schema lists every key with its range and default', () => {
    const schema = registry.jsonSchema() as { properties: Record<string, { default: unknown }> };
    expect(Object.keys(schema.properties)).toEqual([
      'ha-auto-rebalance-preset',
      'ha-auto-rebalance-backoff',
      'ha-auto-rebalance-cooldown',
      'ha-auto-rebalance-min-improvement',
      'ha-auto-rebalance-smoothing',
      'ha-auto-rebalance-cost-weight',
      'ha-auto-rebalance-memhost',
    ]);
    expect(schema.properties['ha-auto-rebalance-backoff']).toMatchObject({
      default: 0,
      anyOf: [{ type: 'number', minimum: 0, maximum: 3600 }, { type: 'string' }],
    });
  });
});
