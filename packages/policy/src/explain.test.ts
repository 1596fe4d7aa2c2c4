import { describe, expect, it } from 'vitest';
import { FRACTION_REASON_FORMAT, type ReasonQuantity, formatCompared, percentReasonFormat } from './explain';

describe('formatCompared: numbers in stop reasons', () => {
  it.each([
    // 4 significant digits: 1/13 = 0.076923… → 0.07692
    [1 / 13, 0.3, '0.07692'],
    // float noise disappears: 0.25 − 2^−54
    [0.24999999999999997, 0.3, '0.25'],
    [0.2, 0.3, '0.2'],
    // a value just below its bound keeps every digit, so the reason never reads "0.05 below 0.05"
    [0.35 - 0.3, 0.05, '0.04999999999999999'],
    // equal to the bound: printed as the bound
    [0.05, 0.05, '0.05'],
    [Number.NaN, 0.1, 'NaN'],
  ])('%s against %s is %s', (value, bound, shown) => {
    expect(formatCompared(value, bound)).toBe(shown);
  });
});

describe('reason formats: the host chooses the units of the reasons', () => {
  const percent = percentReasonFormat();
  const cases: Array<{
    name: string;
    quantity: ReasonQuantity;
    value: number;
    compared?: number;
    fraction: string;
    percent: string;
  }> = [
    // 0.27381 against threshold 0.3: 4 significant digits; 27.381 → 27.4
    {
      name: 'an imbalance compared with the threshold',
      quantity: 'imbalance',
      value: 0.27381,
      compared: 0.3,
      fraction: '0.2738',
      percent: '27.4%',
    },
    // (0.5 − 0.50586) / 0.5 = −0.01172 → −1.172 % → −1.2 %
    {
      name: 'a negative relative improvement against the margin',
      quantity: 'relative-improvement',
      value: -0.01172,
      compared: 0.1,
      fraction: '-0.01172',
      percent: '-1.2%',
    },
    // an improvement alone (the cost notice): 0.18369 → 4 decimals / 18.369 pp → 18.4 pp
    { name: 'an improvement alone', quantity: 'improvement', value: 0.18369, fraction: '0.1837', percent: '18.4 pp' },
    // (1 − 0.9) / 1 = 0.09999999999999998: 10.0 against 10.0 needs 15 decimals to differ
    {
      name: 'a value that rounds to its bound',
      quantity: 'relative-improvement',
      value: (1 - 0.9) / 1,
      compared: 0.1,
      fraction: '0.09999999999999998',
      percent: '9.999999999999998%',
    },
    // 0.35 − 0.3 = 0.04999999999999999 against min-improvement 0.05: 4.999999999999999 pp
    {
      name: 'an improvement just below the dead band',
      quantity: 'improvement',
      value: 0.35 - 0.3,
      compared: 0.05,
      fraction: '0.04999999999999999',
      percent: '4.999999999999999 pp',
    },
    // equal to its bound: printed like the bound
    {
      name: 'a value equal to its bound',
      quantity: 'imbalance',
      value: 0.3,
      compared: 0.3,
      fraction: '0.3',
      percent: '30.0%',
    },
    // an imbalance alone (the undefined relative improvement's 0 to 0)
    { name: 'an imbalance alone', quantity: 'imbalance', value: 0, fraction: '0', percent: '0.0%' },
  ];
  it.each(cases)('$name: $fraction / $percent', ({ quantity, value, compared, fraction, percent: shown }) => {
    expect(FRACTION_REASON_FORMAT.value(quantity, value, compared)).toBe(fraction);
    expect(percent.value(quantity, value, compared)).toBe(shown);
  });

  it.each([
    ['imbalance', 0.3, '0.3', '30.0%'],
    ['relative-improvement', 0.1, '0.1', '10.0%'],
    ['improvement', 0.05, '0.05', '5.0 pp'],
  ] as const)('prints the bound of a %s (%s) as %s / %s', (quantity, bound, fraction, shown) => {
    expect(FRACTION_REASON_FORMAT.bound(quantity, bound)).toBe(fraction);
    expect(percent.bound(quantity, bound)).toBe(shown);
  });

  it('prints digits with the host’s own printer (here: a decimal comma)', () => {
    const comma = percentReasonFormat((value, digits) => value.toFixed(digits).replace('.', ','));
    expect(comma.value('imbalance', 0.27381, 0.3)).toBe('27,4%');
    expect(comma.bound('improvement', 0.05)).toBe('5,0 pp');
  });

  it('never prints a value as its bound when they differ (a value an ulp or two below every bound 0.01..1)', () => {
    for (let i = 1; i <= 100; i++) {
      const bound = i / 100;
      const below = bound - Number.EPSILON * bound;
      if (below === bound) continue;
      expect(percent.value('imbalance', below, bound)).not.toBe(percent.bound('imbalance', bound));
      expect(FRACTION_REASON_FORMAT.value('imbalance', below, bound)).not.toBe(
        FRACTION_REASON_FORMAT.bound('imbalance', bound),
      );
    }
  });
});
