import { PolicyError, PolicyRegistry } from '@poise/policy';
import { describe, expect, it } from 'vitest';
import { type PressureSettings, pressurePlugin } from './index';

const REFERENCE = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'topsis' as const };
const registry = new PolicyRegistry([pressurePlugin]);
/** The settings a host reads from a `crs` section, and every problem (the preset's, then the keys'). */
const parse = (crs: unknown) => {
  const read = registry.read(crs);
  return { settings: registry.settingsOf(read, pressurePlugin), problems: read.problems.map((p) => p.message) };
};
/** The stage parts the plug-in turns on for these settings, as the registry asks for them. */
const stagesOf = (settings: PressureSettings) => pressurePlugin.stages!(settings, { reference: REFERENCE });
/** Every stage off: the reference balancer. */
const OFF = {
  minPressureCpuPercent: 0,
  minPressureMemPercent: 0,
  pressureMissing: 'balance',
  checkMigratable: false,
} as const;
const RECOMMENDED = {
  minPressureCpuPercent: 10,
  minPressureMemPercent: 5,
  pressureMissing: 'balance',
  checkMigratable: true,
};

describe('reading the keys', () => {
  it('no keys: off; the preset turns everything on; explicit keys override it', () => {
    expect(parse({})).toEqual({ settings: OFF, problems: [] });
    expect(stagesOf(OFF)).toEqual([]);
    expect(parse({ 'ha-auto-rebalance-preset': 'recommended' })).toEqual({ settings: RECOMMENDED, problems: [] });
    expect(
      parse({
        'ha-auto-rebalance-preset': 'recommended',
        'ha-auto-rebalance-min-pressure-mem': '0',
        'ha-auto-rebalance-pressure-missing': 'hold',
        'ha-auto-rebalance-check-migratable': 0,
      }).settings,
    ).toEqual({ ...RECOMMENDED, minPressureMemPercent: 0, pressureMissing: 'hold', checkMigratable: false });
  });

  it.each([
    [
      'ha-auto-rebalance-min-pressure-cpu',
      '10%',
      "datacenter.cfg: invalid value '10%' for 'crs.ha-auto-rebalance-min-pressure-cpu' (percent, 0 to 100), falling back to 0 (off)",
    ],
    [
      'ha-auto-rebalance-min-pressure-mem',
      150,
      "datacenter.cfg: invalid value '150' for 'crs.ha-auto-rebalance-min-pressure-mem' (percent, 0 to 100), falling back to 0 (off)",
    ],
    [
      'ha-auto-rebalance-pressure-missing',
      'skip',
      "datacenter.cfg: invalid value 'skip' for 'crs.ha-auto-rebalance-pressure-missing' (one of balance, hold), falling back to 'balance' (the default)",
    ],
    [
      'ha-auto-rebalance-check-migratable',
      'on',
      "datacenter.cfg: invalid value 'on' for 'crs.ha-auto-rebalance-check-migratable' (0 or 1), falling back to 0 (off)",
    ],
  ])('%s = %j is a problem naming the key; that stage falls back to off', (key, value, message) => {
    const { settings, problems } = parse({ 'ha-auto-rebalance-preset': 'recommended', [key]: value });
    expect(problems).toEqual([message]);
    const field = {
      'ha-auto-rebalance-min-pressure-cpu': 'minPressureCpuPercent',
      'ha-auto-rebalance-min-pressure-mem': 'minPressureMemPercent',
      'ha-auto-rebalance-pressure-missing': 'pressureMissing',
      'ha-auto-rebalance-check-migratable': 'checkMigratable',
    }[key] as keyof typeof OFF;
    expect(settings[field]).toBe(OFF[field]);
  });
});

describe('the stages', () => {
  it('recommended: the gate before the threshold, the source filter first and the migratability check last', () => {
    const pipeline = registry.pipeline(registry.read({ 'ha-auto-rebalance-preset': 'recommended' }), REFERENCE);
    expect(pipeline.stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'pressure',
      'threshold-hold',
      'candidates',
      'pressure-source',
      'migratable',
      'score-topsis',
      'select-best',
      'relative-margin',
    ]);
  });

  it('only the migratability check, or only memory pressure', () => {
    expect(stagesOf({ ...OFF, checkMigratable: true }).map((p) => p.stage.name)).toEqual(['migratable']);
    expect(stagesOf({ ...OFF, minPressureMemPercent: 5 }).map((p) => p.stage.name)).toEqual([
      'pressure',
      'pressure-source',
    ]);
  });

  it('rejects settings out of range, and the schema lists the keys', () => {
    expect(() => stagesOf({ ...OFF, minPressureCpuPercent: -1 })).toThrow(
      new PolicyError(
        'invalid-config',
        "pressure setting 'minPressureCpuPercent' must be a finite number in 0..100 (percent), got '-1'",
      ),
    );
    expect(Object.keys((registry.jsonSchema() as { properties: object }).properties)).toEqual([
      'ha-auto-rebalance-preset',
      'ha-auto-rebalance-min-pressure-cpu',
      'ha-auto-rebalance-min-pressure-mem',
      'ha-auto-rebalance-pressure-missing',
      'ha-auto-rebalance-check-migratable',
    ]);
  });
});
