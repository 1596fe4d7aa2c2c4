import { describe, expect, test } from 'vitest';
import type { Env } from '@poise/env';
import { contentionPlugin } from '@poise/policy-contention';
import { pressurePlugin } from '@poise/policy-pressure';
import { stablePlugin } from '@poise/policy-stable';
import { perlNumber, readCrsSettings } from './crs';
import { BUILTIN_REGISTRY } from './plugins';

const VARIANT_OFF = BUILTIN_REGISTRY.off;
const stable = (settings: { variant: Parameters<typeof BUILTIN_REGISTRY.settingsOf>[0] }) =>
  BUILTIN_REGISTRY.settingsOf(settings.variant, stablePlugin);
const pressure = (settings: { variant: Parameters<typeof BUILTIN_REGISTRY.settingsOf>[0] }) =>
  BUILTIN_REGISTRY.settingsOf(settings.variant, pressurePlugin);
const contention = (settings: { variant: Parameters<typeof BUILTIN_REGISTRY.settingsOf>[0] }) =>
  BUILTIN_REGISTRY.settingsOf(settings.variant, contentionPlugin);

const envWith = (crs: Record<string, unknown>) =>
  ({ getDatacenterSettings: () => ({ ha: {}, crs }) }) as unknown as Env;

describe('readCrsSettings', () => {
  test('defaults: basic, no balancing, fractions under pve-5.2.0 and percent under pve-9.2', () => {
    expect(readCrsSettings(envWith({}), 'pve-5.2.0')).toEqual({
      settings: {
        scheduler: 'basic',
        rebalanceOnRequestStart: false,
        autoRebalance: false,
        threshold: 0.3,
        method: 'bruteforce',
        holdRounds: 3,
        margin: 0.1,
        variant: VARIANT_OFF,
      },
      problems: [],
    });
    const { settings } = readCrsSettings(envWith({}), 'pve-9.2');
    expect([settings.threshold, settings.margin]).toEqual([30, 10]);
  });

  test('reads the configured values', () => {
    const { settings } = readCrsSettings(
      envWith({
        ha: 'dynamic',
        'ha-rebalance-on-start': 1,
        'ha-auto-rebalance': '1',
        'ha-auto-rebalance-threshold': 0.5,
        'ha-auto-rebalance-method': 'topsis',
        'ha-auto-rebalance-hold-duration': 0,
        'ha-auto-rebalance-margin': 0.2,
      }),
      'pve-5.2.0',
    );
    expect(settings).toEqual({
      scheduler: 'dynamic',
      rebalanceOnRequestStart: true,
      autoRebalance: true,
      threshold: 0.5,
      method: 'topsis',
      holdRounds: 0,
      margin: 0.2,
      variant: VARIANT_OFF,
    });
  });

  test('pve-9.2: an invalid number falls back to the default and names the field', () => {
    const { settings, problems } = readCrsSettings(
      envWith({
        'ha-auto-rebalance-threshold': 'high',
        'ha-auto-rebalance-hold-duration': 1.5,
        'ha-auto-rebalance-margin': { percent: 5 },
      }),
      'pve-9.2',
    );
    expect(settings.threshold).toBe(30);
    expect(settings.holdRounds).toBe(3);
    expect(settings.margin).toBe(10);
    expect(problems).toEqual([
      "datacenter.cfg: invalid value 'high' for 'crs.ha-auto-rebalance-threshold', using the default 30",
      "datacenter.cfg: invalid value '1.5' for 'crs.ha-auto-rebalance-hold-duration', using the default 3",
      "datacenter.cfg: invalid value an object for 'crs.ha-auto-rebalance-margin', using the default 10",
    ]);
  });

  test('pve-5.2.0 reads a bad number as Perl does and reports nothing (the reference logs nothing)', () => {
    const { settings, problems } = readCrsSettings(
      envWith({
        'ha-auto-rebalance-threshold': 'high',
        'ha-auto-rebalance-margin': '0.25x',
        'ha-auto-rebalance-hold-duration': 1.5,
      }),
      'pve-5.2.0',
    );
    // 'high' numifies to 0, '0.25x' to its prefix 0.25; `rounds < 1.5` first fails at 2 rounds
    expect([settings.threshold, settings.margin, settings.holdRounds]).toEqual([0, 0.25, 2]);
    expect(problems).toEqual([]);
  });

  test('pve-9.2: a threshold or margin outside 0..100 percent falls back to the default and names the field', () => {
    // above 100 % nothing could ever exceed the threshold or clear the margin: balancing would be off
    const { settings, problems } = readCrsSettings(
      envWith({
        'ha-auto-rebalance-threshold': 150,
        'ha-auto-rebalance-margin': '-1',
        'ha-auto-rebalance-hold-duration': '99999999999999999999',
      }),
      'pve-9.2',
    );
    expect([settings.threshold, settings.margin, settings.holdRounds]).toEqual([30, 10, 3]);
    expect(problems).toEqual([
      "datacenter.cfg: invalid value '150' for 'crs.ha-auto-rebalance-threshold' (percent, 0 to 100), using the default 30",
      "datacenter.cfg: invalid value '99999999999999999999' for 'crs.ha-auto-rebalance-hold-duration', using the default 3",
      "datacenter.cfg: invalid value '-1' for 'crs.ha-auto-rebalance-margin' (percent, 0 to 100), using the default 10",
    ]);
    // the bounds themselves are valid
    expect(
      readCrsSettings(envWith({ 'ha-auto-rebalance-threshold': 100, 'ha-auto-rebalance-margin': 0 }), 'pve-9.2')
        .problems,
    ).toEqual([]);
  });

  test('pve-5.2.0 keeps the values within what the pipeline accepts: a round never fails on a setting', () => {
    const { settings, problems } = readCrsSettings(
      envWith({
        'ha-auto-rebalance-threshold': '-1',
        'ha-auto-rebalance-margin': -0.5,
        'ha-auto-rebalance-hold-duration': 1e300,
      }),
      'pve-5.2.0',
    );
    expect([settings.threshold, settings.margin, settings.holdRounds]).toEqual([0, 0, Number.MAX_SAFE_INTEGER]);
    expect(problems).toEqual([]);
  });

  test.each(['pve-5.2.0', 'pve-9.2'] as const)(
    '%s: an empty or 0 crs.ha means basic, as an absent one (ha || basic)',
    (profile) => {
      expect(readCrsSettings(envWith({ ha: '' }), profile).settings.scheduler).toBe('basic');
      expect(readCrsSettings(envWith({ ha: '0' }), profile).settings.scheduler).toBe('basic');
      expect(readCrsSettings(envWith({ ha: 'static' }), profile).settings.scheduler).toBe('static');
    },
  );
});

describe('readCrsSettings: the variant keys', () => {
  test('pve-9.2 reads them in its units; any non-default value makes the variant active', () => {
    const { settings, problems } = readCrsSettings(
      envWith({ 'ha-auto-rebalance-backoff': 60, 'ha-auto-rebalance-min-pressure-cpu': '10' }),
      'pve-9.2',
    );
    expect(problems).toEqual([]);
    expect(settings.variant.active).toBe(true);
    expect(stable(settings).backoffSeconds).toBe(60);
    expect(pressure(settings).minPressureCpuPercent).toBe(10);
    expect(stable(settings).cooldownSeconds).toBe(0);
  });

  test('pve-9.2: the preset turns every stage on; an explicit key overrides it', () => {
    const { settings } = readCrsSettings(
      envWith({ 'ha-auto-rebalance-preset': 'recommended', 'ha-auto-rebalance-cooldown': 0 }),
      'pve-9.2',
    );
    expect(settings.variant.active).toBe(true);
    expect(stable(settings).backoffSeconds).toBeGreaterThan(0);
    expect(stable(settings).cooldownSeconds).toBe(0);
    expect(stable(settings).memhost).toBe(true);
    expect(pressure(settings).checkMigratable).toBe(true);
  });

  test('pve-9.2: a bad value names the key, and that stage is off', () => {
    const { settings, problems } = readCrsSettings(
      envWith({ 'ha-auto-rebalance-backoff': 'abc', 'ha-auto-rebalance-check-migratable': 2 }),
      'pve-9.2',
    );
    expect(stable(settings).backoffSeconds).toBe(0);
    expect(pressure(settings).checkMigratable).toBe(false);
    expect(settings.variant.active).toBe(false);
    expect(problems).toEqual([
      "datacenter.cfg: invalid value 'abc' for 'crs.ha-auto-rebalance-backoff' (seconds, 0 to 3600), falling back to 0 (off)",
      "datacenter.cfg: invalid value '2' for 'crs.ha-auto-rebalance-check-migratable' (0 or 1), falling back to 0 (off)",
    ]);
  });

  test('pve-9.2: the objective key turns the contention stages on; a bad value names it', () => {
    const on = readCrsSettings(envWith({ 'ha-auto-rebalance-objective': 'contention' }), 'pve-9.2');
    expect(on.problems).toEqual([]);
    expect(contention(on.settings)).toEqual({ objective: 'contention', minGainSeconds: 30, costBenefit: false });
    expect(on.settings.variant.active).toBe(true);
    const bad = readCrsSettings(envWith({ 'ha-auto-rebalance-objective': 'speed' }), 'pve-9.2');
    expect(contention(bad.settings)).toEqual({ objective: 'imbalance', minGainSeconds: 30, costBenefit: false });
    expect(bad.settings.variant.active).toBe(false);
    expect(bad.problems).toEqual([
      "datacenter.cfg: invalid value 'speed' for 'crs.ha-auto-rebalance-objective' (one of imbalance, contention), falling back to 'imbalance' (the default)",
    ]);
  });

  test('pve-5.2.0 ignores them (the reference knows none): every stage off, nothing reported', () => {
    const { settings, problems } = readCrsSettings(
      envWith({ 'ha-auto-rebalance-backoff': 60, 'ha-auto-rebalance-preset': 'bogus' }),
      'pve-5.2.0',
    );
    expect(settings.variant).toEqual(VARIANT_OFF);
    expect(problems).toEqual([]);
  });
});

describe('perlNumber', () => {
  test.each([
    [5, 5],
    ['7', 7],
    ['  2.5e1x', 25],
    ['.5', 0.5],
    ['-3', -3],
    ['abc', 0],
    ['', 0],
    [undefined, 0],
    [true, 1],
  ])('%j reads as %d', (raw, expected) => {
    expect(perlNumber(raw)).toBe(expected);
  });
});
