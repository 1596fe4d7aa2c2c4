import { describe, expect, it } from 'vitest';
import { PolicyError, composePipeline, crsJsonSchema, readCrs, referencePipeline } from '@poise/policy';
import { CONTENTION_KEYS, CONTENTION_OFF, contentionStages, parseContentionSettings } from './index';

const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'topsis' as const };
const ON = { objective: 'contention', minGainSeconds: 30 } as const;

describe('ha-auto-rebalance-objective', () => {
  it.each([
    // crs, objective, problems
    [{}, 'imbalance', []],
    [{ 'ha-auto-rebalance-objective': 'contention' }, 'contention', []],
    [{ 'ha-auto-rebalance-objective': 'imbalance' }, 'imbalance', []],
    // the preset keeps the reference's objective; an explicit key overrides it
    [{ 'ha-auto-rebalance-preset': 'recommended' }, 'imbalance', []],
    [{ 'ha-auto-rebalance-preset': 'recommended', 'ha-auto-rebalance-objective': 'contention' }, 'contention', []],
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
    expect(parsed.settings).toEqual({ objective, minGainSeconds: 30 });
    expect(parsed.problems.map((p) => p.message)).toEqual(problems);
  });

  it('imbalance adds no stage: the composed pipeline is the reference', () => {
    expect(contentionStages(CONTENTION_OFF, REF)).toEqual([]);
    expect(composePipeline(REF, contentionStages(CONTENTION_OFF, REF)).stages.map((s) => s.name)).toEqual(
      referencePipeline(REF).stages.map((s) => s.name),
    );
  });

  it('contention replaces the hold, the scorer and the margin', () => {
    const parts = contentionStages(ON, REF);
    expect(parts.map((p) => [p.slot, p.stage.name])).toEqual([
      ['gate', 'contention'],
      ['hold', 'contention-hold'],
      ['score', 'contention-score'],
      ['margin', 'contention-margin'],
    ]);
    expect(composePipeline(REF, parts).stages.map((s) => s.name)).toEqual([
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
    expect(() => contentionStages({ ...ON, objective: 'speed' as never }, REF)).toThrow(
      new PolicyError(
        'invalid-config',
        "contention setting 'objective' must be 'imbalance' or 'contention', got 'speed'",
      ),
    );
    expect(() => contentionStages(ON, { ...REF, holdRounds: 1.5 })).toThrow(
      "holdRounds must be an integer from 0 to 9007199254740991, got '1.5'",
    );
    expect(() => contentionStages(ON, { ...REF, margin: Number.NaN })).toThrow(
      "margin must be a finite number >= 0, got 'NaN'",
    );
    // the reference's own stages (judging a cluster without PSI) check the reference values
    expect(() => contentionStages(ON, { ...REF, threshold: -0.1 })).toThrow(
      "threshold must be a finite number >= 0, got '-0.1'",
    );
    expect(() => contentionStages({ ...ON, minGainSeconds: -5 }, REF)).toThrow(
      "contention minGainSeconds must be a finite number >= 0, got '-5'",
    );
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
    expect(parsed.settings).toEqual({ objective: 'contention', minGainSeconds });
    expect(parsed.problems.map((p) => p.message)).toEqual(problems);
  });

  it('a bad value as a library argument is refused (the replay in pace.test.ts shows it at work)', () => {
    expect(() => contentionStages({ ...ON, minGainSeconds: Number.NaN }, REF)).toThrow(
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
