import { describe, expect, it } from 'vitest';
import { lazyRecord, lazyRecordEntries } from '@poise/env';
import { EntryList, keyIndexOf } from './entry-list';

describe('EntryList', () => {
  const keys = ['vm:102', 'vm:101', '__proto__', 'toString'];
  const values = [2, 1, 3, 4];

  it('answers as the Map of the same entries does', () => {
    const list = new EntryList(keys, values);
    const map = new Map(keys.map((k, i) => [k, values[i]!]));
    expect(list.size).toBe(map.size);
    for (const key of [...keys, 'vm:103', 'constructor', 'hasOwnProperty']) {
      expect(list.get(key)).toBe(map.get(key));
      expect(list.has(key)).toBe(map.has(key));
    }
    expect([...list]).toEqual([...map]);
    expect([...list.entries()]).toEqual([...map.entries()]);
    expect([...list.keys()]).toEqual([...map.keys()]);
    expect([...list.values()]).toEqual([...map.values()]);
    const seen: [string, number][] = [];
    list.forEach((v, k, m) => {
      expect(m).toBe(list);
      seen.push([k, v]);
    });
    expect(seen).toEqual([...map]);
  });

  it('shares a key index passed in and makes one only at the first lookup by key', () => {
    const first = new EntryList(keys, values);
    const index = first.keyIndex();
    expect(first.keyIndex()).toBe(index);
    // the next version: the same keys, new values, the same index
    const next = new EntryList(keys, [20, 10, 30, 40], index);
    expect(next.keyIndex()).toBe(index);
    expect(next.get('vm:101')).toBe(10);
    expect(next.get('vm:999')).toBeUndefined();
  });

  it('is what a lazy record hands back, and the record reads as the sealed record of its entries', () => {
    const list = new EntryList(keys, values);
    const record = lazyRecord(list, { handOver: true });
    expect(lazyRecordEntries(record)).toBe(list);
    expect(Object.keys(record)).toEqual(keys);
    expect(record['vm:101']).toBe(1);
    expect(JSON.stringify(record)).toBe(JSON.stringify(Object.fromEntries(keys.map((k, i) => [k, values[i]]))));
  });

  it.each([
    ['more keys than values', ['a', 'b'], [1], undefined, /2 keys but 1 values/],
    ['more values than keys', ['a'], [1, 2], undefined, /1 keys but 2 values/],
    ['an index of other size', ['a', 'b'], [1, 2], new Map([['a', 0]]), /an index of 1 keys for 2 entries/],
  ])('refuses %s', (_name, k, v, index, message) => {
    expect(() => new EntryList(k, v, index)).toThrow(message);
  });

  it('refuses a repeated key when it makes the index', () => {
    expect(() => keyIndexOf(['a', 'b', 'a'])).toThrow(/key 'a' appears twice/);
    const list = new EntryList(['a', 'a'], [1, 2]);
    expect(() => list.get('a')).toThrow(/key 'a' appears twice/);
  });
});
