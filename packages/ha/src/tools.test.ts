import { describe, expect, test } from 'vitest';
import { snapshot } from '@poise/env';
import { isEmptyRecord, memo, own, sortedKeys } from './tools';

describe('own: lookups by names from input', () => {
  const names = ['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__', 'isPrototypeOf'];
  test.each(names)('%s is found only as an own key, in plain and null-prototype objects', (name) => {
    const plain: Record<string, unknown> = {};
    expect(own(plain, name)).toBeUndefined();
    expect(own(Object.create(null), name)).toBeUndefined();
    const withKey = JSON.parse(`{"${name}": 1}`) as Record<string, unknown>;
    expect(own(withKey, name)).toBe(1);
    expect(own(snapshot(withKey), name)).toBe(1);
  });

  test('ordinary keys, and absent objects', () => {
    expect(own({ 'vm:101': 2 }, 'vm:101')).toBe(2);
    expect(own({ 'vm:101': 2 }, 'vm:102')).toBeUndefined();
    expect(own(undefined, 'x')).toBeUndefined();
  });
});

describe('memo and friends: derived values per snapshot', () => {
  test('remembered for a snapshot, computed afresh for anything else', () => {
    const s = snapshot({ b: 1, a: 2 });
    let calls = 0;
    const f = () => ++calls;
    expect(memo(s, 'k', f)).toBe(1);
    expect(memo(s, 'k', f)).toBe(1);
    const plain = { b: 1 };
    expect(memo(plain, 'k', f)).toBe(2);
    expect(memo(plain, 'k', f)).toBe(3);
    expect(sortedKeys(s)).toEqual(['a', 'b']);
    expect(sortedKeys(s)).toBe(sortedKeys(s));
  });

  test('isEmptyRecord', () => {
    expect(isEmptyRecord(snapshot({}))).toBe(true);
    expect(isEmptyRecord(snapshot({ a: 1 }))).toBe(false);
    expect(isEmptyRecord(undefined)).toBe(true);
    expect(isEmptyRecord(Object.create(null))).toBe(true);
  });
});
