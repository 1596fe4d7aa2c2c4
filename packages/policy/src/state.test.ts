import { describe, expect, it } from 'vitest';
import { showValue } from './index';

describe('showValue: a value as an error message shows it', () => {
  it.each([
    ['a string, quoted', 'high', '"high"'],
    ['a number as it prints', -1, '-1'],
    ['NaN', NaN, 'NaN'],
    ['a boolean', true, 'true'],
    ['undefined', undefined, 'undefined'],
    ['null', null, 'null'],
    ['a bigint', 10n, '10'],
    ['an array by its kind', [1, 2], 'an array'],
    ['an object by its kind, never [object Object]', { percent: 5 }, 'an object'],
    ['a function by its kind, not its source', () => 1, 'a function'],
  ])('%s', (_name, value, shown) => {
    expect(showValue(value)).toBe(shown);
  });
});
