import { describe, expect, it } from 'vitest';
import {
  type ChoiceKeySpec,
  type FlagKeySpec,
  type NumberKeySpec,
  PolicyError,
  checkSettingRange,
  readCrs,
  readCrsKeys,
} from './index';

const SECONDS: NumberKeySpec = {
  key: 'ha-auto-rebalance-x',
  type: 'number',
  unit: 'seconds',
  min: 0,
  max: 3600,
  off: 0,
  recommended: 60,
  description: 'x',
  why: 'x',
};
const FLAG: FlagKeySpec = {
  key: 'ha-auto-rebalance-y',
  type: 'flag',
  off: false,
  recommended: true,
  description: 'y',
  why: 'y',
};
const CHOICE: ChoiceKeySpec<'balance' | 'hold'> = {
  key: 'ha-auto-rebalance-z',
  type: 'choice',
  choices: ['balance', 'hold'],
  off: 'balance',
  recommended: 'hold',
  description: 'z',
  why: 'z',
};
const FIELDS = { xSeconds: SECONDS, y: FLAG, z: CHOICE };

describe('readCrsKeys: a variant package’s keys into its settings object', () => {
  it.each([
    { name: 'every key absent: off', crs: {}, settings: { xSeconds: 0, y: false, z: 'balance' }, problems: [] },
    {
      name: 'the preset: every recommended value',
      crs: { 'ha-auto-rebalance-preset': 'recommended' },
      settings: { xSeconds: 60, y: true, z: 'hold' },
      problems: [],
    },
    {
      name: 'explicit keys override the preset (a decimal string is a number, 0 turns a stage off)',
      crs: { 'ha-auto-rebalance-preset': 'recommended', 'ha-auto-rebalance-x': '90', 'ha-auto-rebalance-y': 0 },
      settings: { xSeconds: 90, y: false, z: 'hold' },
      problems: [],
    },
    {
      name: 'bad values: that field off, one problem per key in the order of the fields',
      crs: { 'ha-auto-rebalance-z': 'later', 'ha-auto-rebalance-x': '60s', 'ha-auto-rebalance-y': 2 },
      settings: { xSeconds: 0, y: false, z: 'balance' },
      problems: [
        "datacenter.cfg: invalid value '60s' for 'crs.ha-auto-rebalance-x' (seconds, 0 to 3600), falling back to 0 (off)",
        "datacenter.cfg: invalid value '2' for 'crs.ha-auto-rebalance-y' (0 or 1), falling back to 0 (off)",
        "datacenter.cfg: invalid value 'later' for 'crs.ha-auto-rebalance-z' (one of balance, hold), falling back to 'balance' (the default)",
      ],
    },
  ])('$name', ({ crs, settings, problems }) => {
    const read = readCrsKeys(readCrs(crs), FIELDS);
    expect(read.settings).toEqual(settings);
    expect(read.problems.map((p) => p.message)).toEqual(problems);
  });
});

describe('checkSettingRange: a stage builder’s number setting against its key’s range', () => {
  it.each([0, 1.5, 3600])('accepts %s', (value) => {
    expect(() => checkSettingRange("setting 'xSeconds'", value, SECONDS)).not.toThrow();
  });
  it.each([-1, 3601, Number.NaN, Number.POSITIVE_INFINITY, '60' as unknown as number])(
    'rejects %s with invalid-config',
    (value) => {
      const check = () => checkSettingRange("setting 'xSeconds'", value, SECONDS);
      expect(check).toThrow(PolicyError);
      expect(check).toThrow(`setting 'xSeconds' must be a finite number in 0..3600 (seconds), got '${String(value)}'`);
    },
  );
});
