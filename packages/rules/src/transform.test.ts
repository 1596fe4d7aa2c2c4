import { describe, expect, test } from 'vitest';

import { cloneRulesConfig, compileRules, parseRulesConfig, transformRules } from './index';

const NODES = ['node1', 'node2', 'node3'];

function transform(text: string, nodes = NODES) {
  const { config } = parseRulesConfig(text);
  const messages = transformRules(config, nodes);
  return { config, messages };
}

describe('transformRules', () => {
  test('disabled rules are neither checked nor transformed, whatever the value of disable', () => {
    const text =
      'resource-affinity: lonely\n\tresources vm:1\n\taffinity positive\n\tdisable 0\n\n' +
      'resource-affinity: p1\n\tresources vm:2,vm:3\n\taffinity positive\n\tdisable\n\n' +
      'resource-affinity: p2\n\tresources vm:3,vm:4\n\taffinity positive\n';
    const { config, messages } = transform(text);
    expect(messages).toEqual([]);
    expect(Object.keys(config.ids).sort()).toEqual(['lonely', 'p1', 'p2']);
    expect(compileRules(config, NODES)['resource-affinity'].positive).toEqual({
      'vm:3': { 'vm:4': 1 },
      'vm:4': { 'vm:3': 1 },
    });
  });

  test('a rule failing several checks is dropped once, with one message per reason, sorted', () => {
    const { config, messages } = transform(
      'node-affinity: na1\n\tresources vm:1\n\tnodes node1\n\n' +
        'node-affinity: na2\n\tresources vm:1,vm:2\n\tnodes node2\n\n' +
        'resource-affinity: neg\n\tresources vm:1,vm:2,vm:3,vm:4\n\taffinity negative\n',
    );
    expect(config.ids).toEqual({});
    expect(config.order).toEqual({});
    expect(messages).toEqual([
      "Drop rule 'na1', because resource 'vm:1' is already used in another node affinity rule.",
      "Drop rule 'na2', because resource 'vm:1' is already used in another node affinity rule.",
      "Drop rule 'neg', because rule defines more resources than available nodes.",
    ]);
  });

  test('a merged rule takes the order of its first rule, implicit negatives the lowest order + 1', () => {
    const { config } = transform(
      'resource-affinity: neg\n\tresources vm:1,vm:9\n\taffinity negative\n\n' +
        'resource-affinity: pa\n\tresources vm:1,vm:2\n\taffinity positive\n\n' +
        'resource-affinity: pb\n\tresources vm:2,vm:3\n\taffinity positive\n',
    );
    expect(config.order).toEqual({
      neg: 1,
      '_merged-pa-pb': 2,
      '_implicit-negative-_merged-pa-pb-vm:2-vm:9': 2,
      '_implicit-negative-_merged-pa-pb-vm:3-vm:9': 2,
    });
  });

  test('members of a positive rule join the node-affinity rule of any member', () => {
    const { config } = transform(
      'node-affinity: na\n\tresources vm:2\n\tnodes node1\n\tstrict 1\n\n' +
        'resource-affinity: pos\n\tresources vm:1,vm:2\n\taffinity positive\n',
    );
    expect(config.ids.na?.resources).toEqual({ 'vm:1': 1, 'vm:2': 1 });
  });

  test('transformRules mutates its argument, cloneRulesConfig keeps the parsed config', () => {
    const { config } = parseRulesConfig('resource-affinity: lonely\n\tresources vm:1\n\taffinity positive\n');
    const copy = cloneRulesConfig(config);
    transformRules(copy, NODES);
    expect(Object.keys(config.ids)).toEqual(['lonely']);
    expect(Object.keys(copy.ids)).toEqual([]);
  });
});
