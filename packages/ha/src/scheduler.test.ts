import { describe, expect, test } from 'vitest';
import type { ServiceStatus } from '@poise/env';
import { BasicUsage, serviceUsageNodes } from './scheduler';

const online = (n: string) => n !== 'node3';

describe('serviceUsageNodes (which nodes a service loads)', () => {
  test.each([
    { sd: { state: 'stopped', node: 'node1' }, expected: { current: undefined, target: undefined, running: false } },
    {
      sd: { state: 'request_start', node: 'node1' },
      expected: { current: undefined, target: undefined, running: false },
    },
    { sd: { state: 'started', node: 'node1' }, expected: { current: 'node1', target: undefined, running: false } },
    {
      sd: { state: 'started', node: 'node1', running: 1 },
      expected: { current: 'node1', target: undefined, running: true },
    },
    {
      sd: { state: 'migrate', node: 'node1', target: 'node2' },
      expected: { current: 'node1', target: 'node2', running: true },
    },
    // request_start_balance only loads its target
    {
      sd: { state: 'request_start_balance', node: 'node1', target: 'node2' },
      expected: { current: undefined, target: 'node2', running: false },
    },
    // offline nodes do not count
    { sd: { state: 'fence', node: 'node3' }, expected: { current: undefined, target: undefined, running: false } },
    {
      sd: { state: 'relocate', node: 'node1', target: 'node3' },
      expected: { current: 'node1', target: undefined, running: true },
    },
  ] as Array<{ sd: ServiceStatus; expected: object }>)('$sd.state on $sd.node', ({ sd, expected }) => {
    expect(serviceUsageNodes(sd, online)).toEqual(expected);
  });
});

describe('BasicUsage', () => {
  test('counts services on their current and target node, and forgets them on removal', () => {
    const u = new BasicUsage(['node1', 'node2', 'node3']);
    u.addServiceUsage('vm:101', { state: 'started', node: 'node1' });
    u.addServiceUsage('vm:102', { state: 'migrate', node: 'node1', target: 'node2' });
    u.addServiceUsage('vm:103', { state: 'stopped', node: 'node3' });
    expect(Object.fromEntries(u.scoreNodesToStartService())).toEqual({ node1: 2, node2: 1, node3: 0 });
    // re-adding replaces the old placement
    u.addServiceUsage('vm:102', { state: 'started', node: 'node2' });
    expect(Object.fromEntries(u.scoreNodesToStartService())).toEqual({ node1: 1, node2: 1, node3: 0 });
    u.removeServiceUsage('vm:101');
    u.removeServiceUsage('vm:101');
    expect(Object.fromEntries(u.scoreNodesToStartService())).toEqual({ node1: 0, node2: 1, node3: 0 });
    expect(u.calculateNodeImbalance()).toBeUndefined();
  });
});

import { jsonClone } from './tools';

describe('jsonClone', () => {
  test('copies deeply and behaves like a JSON round trip', () => {
    const src = { a: 1, b: 'x', c: [1, { d: true }, undefined], e: undefined, f: null, g: { h: [] } };
    const copy = jsonClone(src);
    expect(copy).toEqual(JSON.parse(JSON.stringify(src)));
    expect(Object.keys(copy)).toEqual(['a', 'b', 'c', 'f', 'g']);
    (copy.c[1] as { d: boolean }).d = false;
    expect((src.c[1] as { d: boolean }).d).toBe(true);
  });

  test("copies a __proto__ key as a key (it used to set the copy's prototype)", () => {
    const copy = jsonClone(JSON.parse('{"__proto__": {"online": true}}') as Record<string, unknown>);
    expect(Object.keys(copy)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(copy)).toBeNull();
  });
});
