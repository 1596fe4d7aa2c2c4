import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import {
  isSnapshot,
  lazyRecord,
  lazyRecordEntries,
  nullRecord,
  openRecord,
  sealRecord,
  snapshot,
  thaw,
} from './snapshot';

describe('snapshot', () => {
  test('is deeply frozen: changing it throws instead of changing stored state', () => {
    const s = snapshot({ service_status: { 'vm:101': { state: 'started', node: 'node1', failed_nodes: ['node2'] } } });
    expect(Object.isFrozen(s)).toBe(true);
    expect(() => {
      (s.service_status['vm:101'] as { state: string }).state = 'stopped';
    }).toThrow(TypeError);
    expect(() => {
      (s.service_status['vm:101'].failed_nodes as string[]).push('node3');
    }).toThrow(TypeError);
    expect(s.service_status['vm:101'].state).toBe('started');
  });

  test('names that are Object.prototype keys are plain keys', () => {
    const source = nullRecord<unknown>();
    source['__proto__'] = { online: true };
    source['toString'] = 'node';
    const s = snapshot(source) as Record<string, unknown>;
    expect(Object.keys(s).sort()).toEqual(['__proto__', 'toString']);
    expect(s.__proto__).toEqual({ online: true });
    // no inherited members: an absent name reads as undefined
    expect(s.constructor).toBeUndefined();
    // eslint-disable-next-line @typescript-eslint/unbound-method -- reads the member to show it is absent; nothing is called
    expect(s.hasOwnProperty).toBeUndefined();
    // eslint-disable-next-line @typescript-eslint/unbound-method -- as above
    expect(s.valueOf).toBeUndefined();
  });

  test('drops undefined values as JSON does, and turns undefined array items into null', () => {
    const s = snapshot({ a: 1, b: undefined, c: [1, undefined] });
    expect(Object.keys(s)).toEqual(['a', 'c']);
    expect(s.c).toEqual([1, null]);
  });

  test('a new version shares every unchanged subtree with the previous one', () => {
    const doc = {
      service_status: { 'vm:101': { state: 'started', node: 'node1' }, 'vm:102': { state: 'stopped', node: 'node2' } },
      timestamp: 20,
    };
    const v1 = snapshot(doc);
    doc.service_status['vm:102'].state = 'started';
    doc.timestamp = 40;
    const v2 = snapshot(doc, v1);
    expect(v2).not.toBe(v1);
    expect(v2.service_status['vm:101']).toBe(v1.service_status['vm:101']);
    expect(v2.service_status['vm:102']).not.toBe(v1.service_status['vm:102']);
    expect(v2.service_status['vm:102'].state).toBe('started');
    // the old version is untouched
    expect(v1.service_status['vm:102'].state).toBe('stopped');
    // nothing changed: the same object comes back
    expect(snapshot(doc, v2)).toBe(v2);
  });

  test('a removed key makes a new object even when every remaining child is unchanged', () => {
    const v1 = snapshot({ a: { x: 1 }, b: { y: 2 } });
    const v2 = snapshot({ a: { x: 1 } }, v1);
    expect(Object.keys(v2)).toEqual(['a']);
    expect(v2.a).toBe(v1.a);
  });

  test('a snapshot given to snapshot() is returned as it is', () => {
    const s = snapshot({ a: [1, 2] });
    expect(snapshot(s)).toBe(s);
    expect(isSnapshot(s)).toBe(true);
    expect(isSnapshot(s.a)).toBe(true);
    expect(isSnapshot({ a: [1, 2] })).toBe(false);
  });

  test('thaw makes an explicit mutable copy; the snapshot stays as it was', () => {
    const s = snapshot({ node_status: { node1: 'online' }, list: ['a'] });
    const copy = thaw<{ node_status: Record<string, string>; list: string[] }>(s);
    copy.node_status.node1 = 'fence';
    copy.list.push('b');
    expect(s.node_status.node1).toBe('online');
    expect(s.list).toEqual(['a']);
    expect(Object.getPrototypeOf(copy.node_status)).toBeNull();
  });

  test('openRecord/sealRecord assemble a document from entry snapshots without copying them', () => {
    const entry = snapshot({ node: 'node1' });
    const rec = openRecord<{ node: string }>();
    rec['vm:101'] = entry;
    const doc = sealRecord(rec);
    expect(doc['vm:101']).toBe(entry);
    expect(isSnapshot(doc)).toBe(true);
    expect(() => sealRecord(nullRecord())).toThrow(TypeError);
  });

  // JSON-like values: the snapshot equals a JSON round trip of the input, and a snapshot taken
  // with any previous version equals one taken without (sharing never changes content)
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(null, true, false),
      fc.integer(),
      fc.string(),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom('a', 'b', 'toString', '__proto__', 'constructor'), tie('value'), { maxKeys: 4 }),
    ),
  })).value;
  test('property: content equals a JSON round trip, with or without a previous version', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const expected = JSON.parse(JSON.stringify(a ?? null));
        const fresh = snapshot(a);
        const shared = snapshot(a, snapshot(b) as never);
        expect(JSON.parse(JSON.stringify(fresh ?? null))).toEqual(expected);
        expect(JSON.parse(JSON.stringify(shared ?? null))).toEqual(expected);
      }),
    );
  });
});

describe('lazyRecord', () => {
  const entries = () =>
    new Map<string, ReturnType<typeof snapshot<{ sid: string; exit_code: number }>>>([
      ['node1-2', snapshot({ sid: 'vm:102', exit_code: 0 })],
      ['node1-1', snapshot({ sid: 'vm:101', exit_code: 1 })],
    ]);
  const sealed = (map: ReturnType<typeof entries>) => {
    const r = openRecord<{ sid: string; exit_code: number }>();
    for (const [k, v] of map) r[k] = v;
    return sealRecord(r);
  };

  test('reads as the sealed record of the same entries: keys, order, values, JSON', () => {
    const map = entries();
    const lazy = lazyRecord(map);
    const plain = sealed(map);
    expect(Object.keys(lazy)).toEqual(['node1-2', 'node1-1']);
    expect(JSON.stringify(lazy)).toBe(JSON.stringify(plain));
    expect(lazy['node1-1']).toBe(map.get('node1-1'));
    expect('node1-2' in lazy).toBe(true);
    expect(Object.hasOwn(lazy, 'node1-3')).toBe(false);
    const seen: string[] = [];
    for (const key in lazy) seen.push(key);
    expect(seen).toEqual(['node1-2', 'node1-1']);
    expect(thaw(lazy)).toEqual(thaw(plain));
  });

  test('integer-like keys come first in the record, as in any object; the entries keep the given order', () => {
    const lazy = lazyRecord(
      new Map([
        ['b', 1],
        ['2', 2],
        ['a', 3],
        ['1', 4],
      ]),
    );
    expect(Object.keys(lazy)).toEqual(['1', '2', 'b', 'a']);
    expect([...lazyRecordEntries(lazy)!.keys()]).toEqual(['b', '2', 'a', '1']);
  });

  test('is a frozen snapshot: shared by snapshot() as it is, changing it throws', () => {
    const lazy = lazyRecord(entries());
    expect(isSnapshot(lazy)).toBe(true);
    expect(Object.isFrozen(lazy)).toBe(true);
    const doc = snapshot({ results: lazy, timestamp: 1 });
    expect(doc.results).toBe(lazy);
    expect(() => {
      (lazy as Record<string, unknown>)['node1-9'] = 1;
    }).toThrow(TypeError);
    expect(() => {
      delete (lazy as Record<string, unknown>)['node1-1'];
    }).toThrow(TypeError);
    expect(Object.keys(lazy)).toEqual(['node1-2', 'node1-1']);
  });

  test('changing the map after the record was made changes nothing (a copy), unless it was handed over', () => {
    const map = entries();
    const lazy = lazyRecord(map);
    map.delete('node1-1');
    map.set('node1-3', snapshot({ sid: 'vm:103', exit_code: 0 }));
    expect(Object.keys(lazy)).toEqual(['node1-2', 'node1-1']);
    expect([...lazyRecordEntries(lazy)!.keys()]).toEqual(['node1-2', 'node1-1']);
    const owned = entries();
    const handed = lazyRecord(owned, { handOver: true });
    expect(lazyRecordEntries(handed)).toBe(owned);
  });

  test('lazyRecordEntries: the entries of a lazy record, undefined for anything else', () => {
    const map = entries();
    const lazy = lazyRecord(map);
    expect([...lazyRecordEntries(lazy)!]).toEqual([...map]);
    expect(lazyRecordEntries(sealed(map))).toBeUndefined();
    expect(lazyRecordEntries(snapshot({ a: 1 }))).toBeUndefined();
    expect(lazyRecordEntries(undefined)).toBeUndefined();
  });

  test('names that are Object.prototype keys are plain keys', () => {
    const lazy = lazyRecord(
      new Map([
        ['__proto__', 1],
        ['toString', 2],
      ]),
    ) as Record<string, number>;
    expect(Object.keys(lazy)).toEqual(['__proto__', 'toString']);
    expect(Object.getOwnPropertyDescriptor(lazy, 'toString')?.value).toBe(2);
    expect(Object.getOwnPropertyDescriptor(lazy, '__proto__')?.value).toBe(1);
    expect(JSON.stringify(lazy)).toBe('{"__proto__":1,"toString":2}');
  });
});
