import { describe, expect, test } from 'vitest';
import { snapshot } from '@poise/env';
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
});

describe('sidType', () => {
  test('the type parseSid gives, with its error for a bad id', () => {
    expect(sidType('vm:101')).toBe('vm');
    expect(sidType('fa:1001')).toBe('fa');
    expect(() => sidType('nocolon')).toThrow("unable to parse service id 'nocolon'");
  });
});
