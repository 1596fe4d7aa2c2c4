import { describe, expect, it } from 'vitest';
import { PolicyError, composePipeline, crsJsonSchema, readCrs, referencePipeline } from '@poise/policy';
import {
  CONTENTION_KEYS,
  CONTENTION_OFF,
  contentionObjective,
  contentionPlugin,
  parseContentionSettings,
} from './index';

const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'topsis' as const };
const ON = { objective: 'contention', minGainSeconds: 30, costBenefit: false } as const;

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
    const parsed = parseContentionSettings(readCrs(crs));
    expect(parsed.settings).toEqual({ objective, minGainSeconds: 30, costBenefit: false });
    expect(parsed.problems.map((p) => p.message)).toEqual(problems);
  });

  it('imbalance supplies no objective: the composed pipeline is the reference', () => {
    expect(contentionObjective(CONTENTION_OFF, REF)).toBeUndefined();
    expect(composePipeline(REF, [], contentionObjective(CONTENTION_OFF, REF)).stages.map((s) => s.name)).toEqual(
      referencePipeline(REF).stages.map((s) => s.name),
    );
  });

  it('contention is the objective: its gate, hold, scorer and margin', () => {
    const objective = contentionObjective(ON, REF)!;
    expect(objective.name).toBe('contention');
    expect([objective.gate, objective.hold, objective.score, objective.margin].map((s) => s?.name)).toEqual([
      'contention',
      'contention-hold',
      'contention-score',
      'contention-margin',
    ]);
    expect(composePipeline(REF, [], objective).stages.map((s) => s.name)).toEqual([
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
    expect(() => contentionObjective({ ...ON, objective: 'speed' as never }, REF)).toThrow(
      new PolicyError(
        'invalid-config',
        "contention setting 'objective' must be 'imbalance' or 'contention', got 'speed'",
      ),
    );
    expect(() => contentionObjective(ON, { ...REF, holdRounds: 1.5 })).toThrow(
      "contention holdRounds must be a non-negative integer, got '1.5'",
    );
    expect(() => contentionObjective(ON, { ...REF, margin: Number.NaN })).toThrow(
      "contention margin must be a finite number, got 'NaN'",
    );
    expect(() => contentionObjective(ON, { ...REF, threshold: -0.1 })).toThrow(
      "contention score threshold must be a finite number >= 0, got '-0.1'",
    );
    expect(() => contentionObjective({ ...ON, minGainSeconds: -5 }, REF)).toThrow(
      "contention minGainSeconds must be a finite number >= 0, got '-5'",
    );
    // the imbalance's stages, which judge the rounds handed to it (a cluster without PSI), check
    // the reference values where the pipeline is composed
    const objective = contentionObjective(ON, REF);
    expect(() => composePipeline({ ...REF, threshold: -0.1 }, [], objective)).toThrow(
      "threshold must be a finite number >= 0, got '-0.1'",
    );
    expect(() => composePipeline({ ...REF, margin: -1 }, [], objective)).toThrow(
      "margin must be a finite number >= 0, got '-1'",
    );
  });

  it('as a plug-in: its keys, the objective with contention, the description fragments', () => {
    expect(Object.values(contentionPlugin.keys)).toEqual([...CONTENTION_KEYS]);
    expect(contentionPlugin.objective!(CONTENTION_OFF, { reference: REF })).toBeUndefined();
    expect(contentionPlugin.objective!(ON, { reference: REF })?.name).toBe('contention');
    expect(contentionPlugin.describe!(CONTENTION_OFF)).toEqual([]);
    expect(contentionPlugin.describe!(ON)).toEqual(['objective contention']);
    expect(contentionPlugin.describe!({ ...ON, minGainSeconds: 120 })).toEqual([
      'objective contention',
      'contention-min-gain 120 guest-seconds',
    ]);
    // the minimum alone, with the imbalance objective, changes nothing and is not described
    expect(contentionPlugin.describe!({ objective: 'imbalance', minGainSeconds: 120, costBenefit: false })).toEqual([]);
  });

  it('is in the JSON schema with its choices and default', () => {
    const schema = crsJsonSchema(CONTENTION_KEYS) as {
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
    const parsed = parseContentionSettings(readCrs({ 'ha-auto-rebalance-objective': 'contention', ...crs }));
    expect(parsed.settings).toEqual({ objective: 'contention', minGainSeconds, costBenefit: false });
    expect(parsed.problems.map((p) => p.message)).toEqual(problems);
  });

  it('a bad value as a library argument is refused (the replay in pace.test.ts shows it at work)', () => {
    expect(() => contentionObjective({ ...ON, minGainSeconds: Number.NaN }, REF)).toThrow(
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
    expect(parseContentionSettings(readCrs(crs)).problems.map((p) => p.message)).toEqual(problems);
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
    const parsed = parseContentionSettings(readCrs({ 'ha-auto-rebalance-objective': 'contention', ...crs }));
    expect(parsed.settings.costBenefit).toBe(on);
    expect(parsed.problems.map((p) => p.message)).toEqual(problems);
  });

  it('beside the imbalance objective it does nothing, and says so', () => {
    const parsed = parseContentionSettings(readCrs({ [KEY]: 1 }));
    expect(parsed.problems.map((p) => p.message)).toEqual([
      `datacenter.cfg: value 1 for 'crs.${KEY}' has no effect while the objective is 'imbalance' (it applies with ha-auto-rebalance-objective contention)`,
    ]);
  });

  it('asks the host for the finished migrations only with the contention objective and cost–benefit on', () => {
    expect(contentionPlugin.needs!({ ...ON, costBenefit: true })).toEqual({ migrationTasks: true });
    expect(contentionPlugin.needs!(ON)).toEqual({ migrationTasks: false });
    expect(contentionPlugin.needs!({ ...CONTENTION_OFF, costBenefit: true })).toEqual({ migrationTasks: false });
  });

  it('is described when on, and in the JSON schema', () => {
    expect(contentionPlugin.describe!({ ...ON, costBenefit: true })).toEqual([
      'objective contention',
      'contention-cost-benefit',
    ]);
    const schema = crsJsonSchema(CONTENTION_KEYS) as { properties: Record<string, unknown> };
    expect(schema.properties[KEY]).toBeDefined();
  });
});
