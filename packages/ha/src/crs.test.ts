import { describe, expect, test } from 'vitest';
import type { Env } from '@poise/env';
import { readCrsSettings } from './crs';

const envWith = (crs: Record<string, unknown>) => ({ getDatacenterSettings: () => ({ ha: {}, crs }) }) as unknown as Env;

describe('readCrsSettings', () => {
  test('defaults: basic, no balancing, fractions under pve-5.2.0 and percent under pve-9.2', () => {
    expect(readCrsSettings(envWith({}), 'pve-5.2.0')).toEqual({
      settings: { scheduler: 'basic', rebalanceOnRequestStart: false, autoRebalance: false, threshold: 0.3, method: 'bruteforce', holdRounds: 3, margin: 0.1 },
      problems: [],
    });
    const { settings } = readCrsSettings(envWith({}), 'pve-9.2');
    expect([settings.threshold, settings.margin]).toEqual([30, 10]);
  });

  test('reads the configured values', () => {
    const { settings } = readCrsSettings(
      envWith({ ha: 'dynamic', 'ha-rebalance-on-start': 1, 'ha-auto-rebalance': '1', 'ha-auto-rebalance-threshold': 0.5, 'ha-auto-rebalance-method': 'topsis', 'ha-auto-rebalance-hold-duration': 0, 'ha-auto-rebalance-margin': 0.2 }),
      'pve-5.2.0',
    );
    expect(settings).toEqual({ scheduler: 'dynamic', rebalanceOnRequestStart: true, autoRebalance: true, threshold: 0.5, method: 'topsis', holdRounds: 0, margin: 0.2 });
  });

  test('an invalid number falls back to the default and names the field', () => {
    const { settings, problems } = readCrsSettings(envWith({ 'ha-auto-rebalance-threshold': 'high', 'ha-auto-rebalance-hold-duration': 1.5 }), 'pve-5.2.0');
    expect(settings.threshold).toBe(0.3);
    expect(settings.holdRounds).toBe(3);
    expect(problems).toEqual([
      "datacenter.cfg: invalid value 'high' for 'crs.ha-auto-rebalance-threshold', using the default 0.3",
      "datacenter.cfg: invalid value '1.5' for 'crs.ha-auto-rebalance-hold-duration', using the default 3",
    ]);
  });
});
