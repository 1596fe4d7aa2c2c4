import { describe, expect, test } from 'vitest';
import { lazyRecord, snapshot } from '@poise/env';
import { EntryList } from './entry-list';
import { KeyOrder, countFencedServices, isEmptyRecord, memo, own, serviceIndex, sidType, sortedKeys } from './tools';

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

describe('KeyOrder: byte order of key lists, sorted again only when the keys change', () => {
  test('the same keys in the same order give the same sorted array; any change sorts anew', () => {
    const order = new KeyOrder();
    const first = order.sort(['vm:2', 'vm:10', 'ct:1']);
    // byte order: 'ct:' < 'vm:', and 'vm:10' < 'vm:2'
    expect(first).toEqual(['ct:1', 'vm:10', 'vm:2']);
    expect(order.sort(['vm:2', 'vm:10', 'ct:1'])).toBe(first);
    expect(order.sort(['vm:2', 'vm:10', 'ct:2'])).toEqual(['ct:2', 'vm:10', 'vm:2']);
    expect(order.sort(['vm:2', 'vm:10'])).toEqual(['vm:10', 'vm:2']);
    expect(order.sort([])).toEqual([]);
  });

  test('positions: where each sorted key is in the list given; the same array again is not compared', () => {
    const order = new KeyOrder();
    const keys = ['vm:2', 'vm:10', 'ct:1'];
    const sorted = order.sort(keys);
    // sorted = ['ct:1', 'vm:10', 'vm:2']: list positions 2, 1, 0
    expect(order.positions()).toEqual([2, 1, 0]);
    expect(sorted.map((_, i) => keys[order.positions()[i]!])).toEqual(sorted);
    expect(order.sort(keys)).toBe(sorted);
    order.sort(['vm:10', 'vm:2']);
    expect(order.positions()).toEqual([0, 1]);
  });
});

describe('serviceIndex: what the daemons derive from a service status, in one pass', () => {
  const ss = snapshot({
    'vm:3': { state: 'started', node: 'n1', uid: 'u3' },
    'vm:10': { state: 'migrate', node: 'n1', target: 'n2', uid: 'u10' },
    'vm:2': { state: 'fence', node: 'n2', uid: 'u2' },
    'vm:4': { state: 'stopped', node: 'n2' },
    'vm:5': { state: 'request_start', node: 'n3', uid: 'u5' },
    'vm:6': { state: 'freeze', node: '', uid: 'u6' },
  });
  test('services per node in byte order, fenced and active counts, uids', () => {
    const index = serviceIndex(ss);
    expect(index.sorted).toEqual(['vm:10', 'vm:2', 'vm:3', 'vm:4', 'vm:5', 'vm:6']);
    // a service without a node is on no node
    expect(Object.fromEntries(index.byNode)).toEqual({ n1: ['vm:10', 'vm:3'], n2: ['vm:2', 'vm:4'], n3: ['vm:5'] });
    expect(countFencedServices(ss, 'n2')).toBe(1);
    expect(countFencedServices(ss, 'n1')).toBe(0);
    // active: n1 has vm:3 and the moving vm:10, n2 the fenced vm:2 and vm:10's target; stopped,
    // request_start and freeze do not count
    expect(Object.fromEntries(index.active)).toEqual({ n1: 2, n2: 2 });
    expect([...index.uids].sort()).toEqual(['u10', 'u2', 'u3', 'u5', 'u6']);
    expect(serviceIndex(ss)).toBe(index); // remembered per snapshot
  });

  test("the master's status (a lazy record over an entry list) gives the index a plain record gives", () => {
    const byId: Readonly<Record<string, { readonly state: string; readonly node: string }>> = ss;
    const keys = Object.keys(ss);
    const list = new EntryList(
      keys,
      keys.map((k) => byId[k]!),
    );
    const lazy = lazyRecord(list, { handOver: true });
    const plain = serviceIndex(ss);
    const index = serviceIndex(lazy);
    expect(index.sorted).toEqual(plain.sorted);
    expect(Object.fromEntries(index.byNode)).toEqual(Object.fromEntries(plain.byNode));
    expect(Object.fromEntries(index.active)).toEqual(Object.fromEntries(plain.active));
    expect(Object.fromEntries(index.fenced)).toEqual(Object.fromEntries(plain.fenced));
    expect([...index.uids].sort()).toEqual([...plain.uids].sort());
    // byNodeAt: where each node's services sit in the list, in byNode's order
    expect(plain.byNodeAt).toBeUndefined();
    for (const [node, sids] of index.byNode) {
      const at = index.byNodeAt!.get(node)!;
      expect(at.map((p) => keys[p])).toEqual(sids);
      expect(at.map((p) => list.valueList[p])).toEqual(sids.map((sid) => byId[sid]));
    }
    expect([...index.byNodeAt!.keys()]).toEqual([...index.byNode.keys()]);
  });

  test('a next status with the services on the same nodes shares the per-node lists; a move makes new ones', () => {
    const keys = ['vm:1', 'vm:2', 'vm:3'];
    const round = (nodes: string[], uid: string) =>
      lazyRecord(
        new EntryList(
          keys,
          nodes.map((node, i) => snapshot({ state: 'started', node, uid: `${uid}-${i}` })),
        ),
        { handOver: true },
      );
    const first = serviceIndex(round(['n1', 'n2', 'n1'], 'a'));
    const second = serviceIndex(round(['n1', 'n2', 'n1'], 'b'));
    expect(second).not.toBe(first);
    expect(second.byNode).toBe(first.byNode);
    expect(second.byNodeAt).toBe(first.byNodeAt);
    expect([...second.uids]).toEqual(['b-0', 'b-1', 'b-2']);
    const moved = serviceIndex(round(['n1', 'n2', 'n2'], 'c'));
    expect(moved.byNode).not.toBe(first.byNode);
    expect(Object.fromEntries(moved.byNode)).toEqual({ n1: ['vm:1'], n2: ['vm:2', 'vm:3'] });
    expect(Object.fromEntries(moved.byNodeAt!)).toEqual({ n1: [0], n2: [1, 2] });
    // the earlier index is unchanged
    expect(Object.fromEntries(first.byNode)).toEqual({ n1: ['vm:1', 'vm:3'], n2: ['vm:2'] });
  });
});

describe('sidType', () => {
  test('the type parseSid gives, with its error for a bad id', () => {
    expect(sidType('vm:101')).toBe('vm');
    expect(sidType('fa:1001')).toBe('fa');
    expect(() => sidType('nocolon')).toThrow("unable to parse service id 'nocolon'");
  });
});
