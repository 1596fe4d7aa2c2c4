import { describe, expect, it } from 'vitest';
import {
  PolicyError,
  PolicyRegistry,
  type ReferenceBalancerConfig,
  composePipeline,
  referencePipeline,
} from '@poise/policy';
import { type ContentionSettings, contentionPlugin, createContentionPlugin } from './index';
import { COST_BENEFIT_KEY, MIN_GAIN_KEY, OBJECTIVE_KEY } from './settings';

const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'topsis' as const };
/** The reference's objective: no stage of this package. */
const OFF = { objective: 'imbalance', minGainSeconds: 30, costBenefit: false } as const;
const ON = { objective: 'contention', minGainSeconds: 30, costBenefit: false } as const;
const registry = new PolicyRegistry([contentionPlugin]);
/** The settings a host reads from a `crs` section, and every problem (the keys', then the plug-in's check). */
const parse = (crs: unknown) => {
  const read = registry.read(crs);
  return { settings: registry.settingsOf(read, contentionPlugin), problems: read.problems };
};
/** The objective the plug-in supplies for these settings, as the registry asks for it. */
const objectiveOf = (settings: ContentionSettings, reference: ReferenceBalancerConfig = REF) =>
  contentionPlugin.objective!(settings, { reference });

describe('ha-auto-rebalance-objective', () => {
  it.each([
    // crs, objective, problems
    [{}, 'imbalance', []],
    [{ 'ha-auto-rebalance-objective': 'contention' }, 'contention', []],
    [{ 'ha-auto-rebalance-objective': 'imbalance' }, 'imbalance', []],
    // the preset balances the guests' contention (issue 27, chosen by measurement); an explicit key overrides it
    [{ 'ha-auto-rebalance-preset': 'recommended' }, 'contention', []],
    [{ 'ha-auto-rebalance-preset': 'recommended', 'ha-auto-rebalance-objective': 'imbalance' }, 'imbalance', []],
    // empty is no choice: named, not read as absent
    [
      { 'ha-auto-rebalance-objective': '' },
      'imbalance',
      [
        "datacenter.cfg: invalid value '' for 'crs.ha-auto-rebalance-objective' (one of imbalance, contention), falling back to 'imbalance' (the default)",
      ],
    ],
    [
      { 'ha-auto-rebalance-objective': 'pressure' },
      'imbalance',
      [
        "datacenter.cfg: invalid value 'pressure' for 'crs.ha-auto-rebalance-objective' (one of imbalance, contention), falling back to 'imbalance' (the default)",
      ],
    ],
    [
      { 'ha-auto-rebalance-objective': 1 },
      'imbalance',
      [
        "datacenter.cfg: invalid value '1' for 'crs.ha-auto-rebalance-objective' (one of imbalance, contention), falling back to 'imbalance' (the default)",
      ],
    ],
  ])('%j → %s', (crs, objective, problems) => {
    const parsed = parse(crs);
    expect(parsed.settings).toEqual({ objective, minGainSeconds: 30, costBenefit: false });
    expect(parsed.problems.map((p) => p.message)).toEqual(problems);
  });

  it('imbalance supplies no objective: the composed pipeline is the reference', () => {
    expect(objectiveOf(OFF)).toBeUndefined();
    expect(registry.pipeline(registry.off, REF).stages.map((s) => s.name)).toEqual(
      referencePipeline(REF).stages.map((s) => s.name),
    );
  });

  it('contention is the objective: its gate, hold, scorer and margin', () => {
    const objective = objectiveOf(ON)!;
    expect(objective.name).toBe('contention');
    expect([objective.gate, objective.hold, objective.score, objective.margin].map((s) => s?.name)).toEqual([
      'contention',
      'contention-hold',
      'contention-score',
      'contention-margin',
    ]);
    const settings = registry.read({ 'ha-auto-rebalance-objective': 'contention' });
    expect(registry.settingsOf(settings, contentionPlugin)).toEqual(ON);
    expect(registry.pipeline(settings, REF).stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'contention',
      'contention-hold',
      'candidates',
      'contention-score',
      'select-best',
      'contention-margin',
    ]);
  });

  it('rejects a bad setting or reference value as a library argument', () => {
    expect(() => objectiveOf({ ...ON, objective: 'speed' as never })).toThrow(
      new PolicyError(
        'invalid-config',
        "contention setting 'objective' must be 'imbalance' or 'contention', got 'speed'",
      ),
    );
    expect(() => objectiveOf(ON, { ...REF, holdRounds: 1.5 })).toThrow(
      "contention holdRounds must be a non-negative integer, got '1.5'",
    );
    expect(() => objectiveOf(ON, { ...REF, margin: Number.NaN })).toThrow(
      "contention margin must be a finite number, got 'NaN'",
    );
    expect(() => objectiveOf(ON, { ...REF, threshold: -0.1 })).toThrow(
      "contention score threshold must be a finite number >= 0, got '-0.1'",
    );
    expect(() => objectiveOf({ ...ON, minGainSeconds: -5 })).toThrow(
      "contention minGainSeconds must be a finite number >= 0, got '-5'",
    );
    // the imbalance's stages, which judge the rounds handed to it (a cluster without PSI), check
    // the reference values where the pipeline is composed
    const objective = objectiveOf(ON);
    expect(() => composePipeline({ ...REF, threshold: -0.1 }, [], objective)).toThrow(
      "threshold must be a finite number >= 0, got '-0.1'",
    );
    expect(() => composePipeline({ ...REF, margin: -1 }, [], objective)).toThrow(
      "margin must be a finite number >= 0, got '-1'",
    );
  });

  it('as a plug-in with options: bad ones are refused when it is made, naming the field; good ones reach the gate', () => {
    expect(() => createContentionPlugin({ model: { horizonSeconds: 0 } })).toThrow(
      new PolicyError(
        'invalid-config',
        "contention option 'horizonSeconds' must be a number of seconds in (0, 1e9], got 0",
      ),
    );
    expect(() => createContentionPlugin({ pace: { factor: 0.5 } })).toThrow(
      new PolicyError('invalid-config', "contention pace factor must be a finite number >= 1, got '0.5'"),
    );
    const tuned = createContentionPlugin({ pace: { windowSeconds: 600 } });
    expect(tuned.name).toBe(contentionPlugin.name);
    expect(tuned.keys).toBe(contentionPlugin.keys);
    const gate = tuned.objective!(ON, { reference: REF })!.gate!;
    expect(gate.name).toBe('contention');
  });

  it('as a plug-in: its keys, the objective with contention, the description fragments', () => {
    expect(Object.values(contentionPlugin.keys)).toEqual([OBJECTIVE_KEY, MIN_GAIN_KEY, COST_BENEFIT_KEY]);
    expect(contentionPlugin.objective!(OFF, { reference: REF })).toBeUndefined();
    expect(contentionPlugin.objective!(ON, { reference: REF })?.name).toBe('contention');
    expect(contentionPlugin.describe!(OFF)).toEqual([]);
    expect(contentionPlugin.describe!(ON)).toEqual(['objective contention']);
    expect(contentionPlugin.describe!({ ...ON, minGainSeconds: 120 })).toEqual([
      'objective contention',
      'contention-min-gain 120 guest-seconds',
    ]);
    // the minimum alone, with the imbalance objective, changes nothing and is not described
    expect(contentionPlugin.describe!({ objective: 'imbalance', minGainSeconds: 120, costBenefit: false })).toEqual([]);
  });

  it('is in the JSON schema with its choices and default', () => {
    const schema = registry.jsonSchema() as {
      properties: Record<string, { enum?: unknown[]; default?: unknown }>;
    };
    expect(schema.properties['ha-auto-rebalance-objective']).toMatchObject({
      enum: ['imbalance', 'contention'],
      default: 'imbalance',
    });
    expect(schema.properties['ha-auto-rebalance-contention-min-gain']).toMatchObject({ default: 30 });
  });
});

describe('ha-auto-rebalance-contention-min-gain', () => {
  const KEY = 'ha-auto-rebalance-contention-min-gain';
  const bad = (raw: string) =>
    `datacenter.cfg: invalid value '${raw}' for 'crs.${KEY}' (guest-seconds, 0 to 86400), falling back to 30 (the default)`;
  it.each([
    // crs, minimum, problems
    [{}, 30, []],
    [{ 'ha-auto-rebalance-preset': 'recommended' }, 30, []],
    [{ [KEY]: 120 }, 120, []],
    [{ [KEY]: '240' }, 240, []],
    [{ [KEY]: 0 }, 0, []],
    [{ [KEY]: '' }, 30, []],
    [{ [KEY]: -1 }, 30, [bad('-1')]],
    [{ [KEY]: '60s' }, 30, [bad('60s')]],
    [{ [KEY]: 1e6 }, 30, [bad('1000000')]],
  ])('%j → %d', (crs, minGainSeconds, problems) => {
    const parsed = parse({ 'ha-auto-rebalance-objective': 'contention', ...crs });
    expect(parsed.settings).toEqual({ objective: 'contention', minGainSeconds, costBenefit: false });
    expect(parsed.problems.map((p) => p.message)).toEqual(problems);
  });

  it('a bad value as a library argument is refused (the replay in pace.test.ts shows it at work)', () => {
    expect(() => objectiveOf({ ...ON, minGainSeconds: Number.NaN })).toThrow(
      new PolicyError('invalid-config', "contention minGainSeconds must be a finite number >= 0, got 'NaN'"),
    );
  });
});

describe('ha-auto-rebalance-contention-min-gain beside the imbalance objective', () => {
  it.each([
    // crs, problems
    [
      { 'ha-auto-rebalance-contention-min-gain': 60 },
      [
        "datacenter.cfg: value 60 for 'crs.ha-auto-rebalance-contention-min-gain' has no effect while the objective is 'imbalance' (it applies with ha-auto-rebalance-objective contention)",
      ],
    ],
    [
      { 'ha-auto-rebalance-objective': 'imbalance', 'ha-auto-rebalance-contention-min-gain': '45' },
      [
        "datacenter.cfg: value '45' for 'crs.ha-auto-rebalance-contention-min-gain' has no effect while the objective is 'imbalance' (it applies with ha-auto-rebalance-objective contention)",
      ],
    ],
    [{ 'ha-auto-rebalance-objective': 'contention', 'ha-auto-rebalance-contention-min-gain': 60 }, []],
    [{}, []],
  ])('%j warns %j', (crs, problems) => {
    expect(parse(crs).problems.map((p) => p.message)).toEqual(problems);
  });
});

describe('ha-auto-rebalance-contention-cost-benefit', () => {
  const KEY = 'ha-auto-rebalance-contention-cost-benefit';
  it.each([
    // crs, on, problems
    [{}, false, []],
    [{ [KEY]: 1 }, true, []],
    [{ [KEY]: '1' }, true, []],
    [{ [KEY]: 0 }, false, []],
    [
      { [KEY]: 'yes' },
      false,
      [`datacenter.cfg: invalid value 'yes' for 'crs.${KEY}' (0 or 1), falling back to 0 (off)`],
    ],
  ])('%j → %s', (crs, on, problems) => {
    const parsed = parse({ 'ha-auto-rebalance-objective': 'contention', ...crs });
    expect(parsed.settings.costBenefit).toBe(on);
    expect(parsed.problems.map((p) => p.message)).toEqual(problems);
  });

  it('beside the imbalance objective it does nothing, and says so', () => {
    const parsed = parse({ [KEY]: 1 });
    expect(parsed.problems.map((p) => p.message)).toEqual([
      `datacenter.cfg: value 1 for 'crs.${KEY}' has no effect while the objective is 'imbalance' (it applies with ha-auto-rebalance-objective contention)`,
    ]);
  });

  it('asks the host for the finished migrations only with the contention objective and cost–benefit on', () => {
    expect(contentionPlugin.needs!({ ...ON, costBenefit: true })).toEqual({ migrationTasks: true });
    expect(contentionPlugin.needs!(ON)).toEqual({ migrationTasks: false });
    expect(contentionPlugin.needs!({ ...OFF, costBenefit: true })).toEqual({ migrationTasks: false });
  });

  it('is described when on, and in the JSON schema', () => {
    expect(contentionPlugin.describe!({ ...ON, costBenefit: true })).toEqual([
      'objective contention',
      'contention-cost-benefit',
    ]);
    const schema = registry.jsonSchema() as { properties: Record<string, unknown> };
    expect(schema.properties[KEY]).toBeDefined();
  });
});
