/**
 * Feasibility checks as the reference runs them (spec §3.8): every check sees the same enabled
 * rules, each conflict gives one message (a rule in conflict with two rules is reported twice),
 * the rules are dropped, and the messages are sorted.
 */
import { describe, expect, test } from 'vitest';

import { parseRulesConfig, transformRules } from './index';

const NODES = ['node1', 'node2', 'node3'];

/** Rules text from `[type, id, resources, extra lines]` tuples. */
function rules(...sections: Array<[string, string, string, ...string[]]>): string {
  return sections
    .map(([type, id, resources, ...extra]) =>
      [`${type}: ${id}`, `\tresources ${resources}`, ...extra.map((line) => `\t${line}`)].join('\n'),
    )
    .join('\n\n');
}

function drop(text: string, nodes = NODES) {
  const { config } = parseRulesConfig(text);
  const messages = transformRules(config, nodes);
  return { messages, kept: Object.keys(config.ids).sort() };
}

const MULTI_PRIORITY_NODE =
  'resources are in a resource affinity rule and cannot be in a node affinity rule with multiple priorities';
const MULTI_PRIORITY_RESOURCE = 'resources are in node affinity rules with multiple priorities';
const SHARES_NEGATIVE = 'rule shares two or more resources with a negative resource affinity rule';
const SHARES_POSITIVE = 'rule shares two or more resources with a positive resource affinity rule';
const NEGATIVE_RESTRICTS =
  'at least one resource is in a negative resource affinity rule and this rule would restrict these to less nodes than available to the resources';
const NEGATIVE_TOO_FEW = 'two or more resources are restricted to less nodes than available to the resources';
const POSITIVE_OTHER =
  'at least one resource is in a positive resource affinity rule and there are other resources in at least one other node affinity rule already';
const POSITIVE_MULTIPLE = 'resources are in multiple node affinity rules';

const dropped = (id: string, reason: string) => `Drop rule '${id}', because ${reason}.`;

describe('node affinity with several priority groups and resource affinity', () => {
  test.each([
    ['positive', 'node1:2,node2'],
    ['negative', 'node1:2,node2'],
    ['positive', 'node1,node2:1,node3:1'],
  ])(
    'a %s rule whose resource is in a node-affinity rule with nodes %s: both dropped, each with its message',
    (affinity, nodes) => {
      const { messages, kept } = drop(
        rules(
          ['node-affinity', 'na', 'vm:1', `nodes ${nodes}`],
          ['resource-affinity', 'ra', 'vm:1,vm:2', `affinity ${affinity}`],
        ),
      );
      expect(messages).toEqual([dropped('na', MULTI_PRIORITY_NODE), dropped('ra', MULTI_PRIORITY_RESOURCE)]);
      expect(kept).toEqual([]);
    },
  );

  test.each([
    ['one priority written twice', 'node1:2,node2:2'],
    ['default priorities only', 'node1,node2:0'],
    ['a single node', 'node3:7'],
  ])('%s is one priority group and keeps both rules', (_name, nodes) => {
    const { messages, kept } = drop(
      rules(
        ['node-affinity', 'na', 'vm:1', `nodes ${nodes}`, 'strict 1'],
        ['resource-affinity', 'ra', 'vm:1,vm:2', 'affinity positive'],
      ),
    );
    expect(messages).toEqual([]);
    expect(kept).toEqual(['na', 'ra']);
  });

  test('a node-affinity rule with several priorities and no resource affinity is kept', () => {
    const { messages } = drop(rules(['node-affinity', 'na', 'vm:1', 'nodes node1:2,node2']));
    expect(messages).toEqual([]);
  });

  test('a multi-priority node-affinity rule shared by two resource-affinity rules is reported twice', () => {
    const { messages, kept } = drop(
      rules(
        ['node-affinity', 'na', 'vm:1,vm:3', 'nodes node1:2,node2'],
        ['resource-affinity', 'ra1', 'vm:1,vm:2', 'affinity positive'],
        ['resource-affinity', 'ra2', 'vm:3,vm:4', 'affinity negative'],
      ),
    );
    expect(messages).toEqual([
      dropped('na', MULTI_PRIORITY_NODE),
      dropped('na', MULTI_PRIORITY_NODE),
      dropped('ra1', MULTI_PRIORITY_RESOURCE),
      dropped('ra2', MULTI_PRIORITY_RESOURCE),
    ]);
    expect(kept).toEqual([]);
  });

  test('a disabled resource-affinity rule does not take a multi-priority node-affinity rule with it', () => {
    const { messages, kept } = drop(
      rules(
        ['node-affinity', 'na', 'vm:1', 'nodes node1:2,node2'],
        ['resource-affinity', 'ra', 'vm:1,vm:2', 'affinity positive', 'disable'],
      ),
    );
    expect(messages).toEqual([]);
    expect(kept).toEqual(['na', 'ra']);
  });
});

describe('positive vs negative consistency on connected positive rules', () => {
  test('positive rules connected through a resource are judged together against a negative rule', () => {
    // p1 ∩ neg = {vm:1}, p2 ∩ neg = {vm:3}: one shared resource each, rule by rule no conflict;
    // merged, p1 ∪ p2 = {vm:1, vm:2, vm:3} shares vm:1 and vm:3 with neg → all three dropped.
    const { messages, kept } = drop(
      rules(
        ['resource-affinity', 'p1', 'vm:1,vm:2', 'affinity positive'],
        ['resource-affinity', 'p2', 'vm:2,vm:3', 'affinity positive'],
        ['resource-affinity', 'neg', 'vm:1,vm:3', 'affinity negative'],
        ['resource-affinity', 'other', 'vm:7,vm:8', 'affinity positive'],
      ),
    );
    expect(messages).toEqual([
      dropped('neg', SHARES_POSITIVE),
      dropped('p1', SHARES_NEGATIVE),
      dropped('p2', SHARES_NEGATIVE),
    ]);
    expect(kept).toEqual(['other']);
  });

  test('a positive group in conflict with two negative rules is reported once per negative rule', () => {
    const { messages } = drop(
      rules(
        ['resource-affinity', 'pos', 'vm:1,vm:2,vm:3', 'affinity positive'],
        ['resource-affinity', 'neg1', 'vm:1,vm:2', 'affinity negative'],
        ['resource-affinity', 'neg2', 'vm:2,vm:3', 'affinity negative'],
      ),
    );
    expect(messages).toEqual([
      dropped('neg1', SHARES_POSITIVE),
      dropped('neg2', SHARES_POSITIVE),
      dropped('pos', SHARES_NEGATIVE),
      dropped('pos', SHARES_NEGATIVE),
    ]);
  });

  test('a negative rule in conflict with two positive groups is reported once per group', () => {
    const { messages } = drop(
      rules(
        ['resource-affinity', 'pa', 'vm:1,vm:2', 'affinity positive'],
        ['resource-affinity', 'pb', 'vm:3,vm:4', 'affinity positive'],
        ['resource-affinity', 'neg', 'vm:1,vm:2,vm:3,vm:4', 'affinity negative'],
      ),
      ['node1', 'node2', 'node3', 'node4'],
    );
    expect(messages).toEqual([
      dropped('neg', SHARES_POSITIVE),
      dropped('neg', SHARES_POSITIVE),
      dropped('pa', SHARES_NEGATIVE),
      dropped('pb', SHARES_NEGATIVE),
    ]);
  });

  test('one shared resource is no conflict', () => {
    const { messages } = drop(
      rules(
        ['resource-affinity', 'pos', 'vm:1,vm:2', 'affinity positive'],
        ['resource-affinity', 'neg', 'vm:2,vm:3', 'affinity negative'],
      ),
    );
    expect(messages).toEqual([]);
  });
});

describe('one message per conflict', () => {
  test('a node-affinity rule restricting two negative rules is reported twice', () => {
    // neg1 places vm:1, vm:2 on {node1}: 1 node < 2 resources; neg2 likewise with vm:3, vm:4.
    const { messages, kept } = drop(
      rules(
        ['node-affinity', 'na', 'vm:1,vm:2,vm:3,vm:4', 'nodes node1', 'strict 1'],
        ['resource-affinity', 'neg1', 'vm:1,vm:2', 'affinity negative'],
        ['resource-affinity', 'neg2', 'vm:3,vm:4', 'affinity negative'],
      ),
    );
    expect(messages).toEqual([
      dropped('na', NEGATIVE_RESTRICTS),
      dropped('na', NEGATIVE_RESTRICTS),
      dropped('neg1', NEGATIVE_TOO_FEW),
      dropped('neg2', NEGATIVE_TOO_FEW),
    ]);
    expect(kept).toEqual([]);
  });

  test('a node-affinity rule paired with two positive groups that each span two node-affinity rules is reported twice', () => {
    const { messages } = drop(
      rules(
        ['node-affinity', 'na', 'vm:1,vm:3', 'nodes node1'],
        ['node-affinity', 'nb', 'vm:2', 'nodes node2'],
        ['node-affinity', 'nc', 'vm:4', 'nodes node3'],
        ['resource-affinity', 'pa', 'vm:1,vm:2', 'affinity positive'],
        ['resource-affinity', 'pb', 'vm:3,vm:4', 'affinity positive'],
      ),
    );
    expect(messages).toEqual([
      dropped('na', POSITIVE_OTHER),
      dropped('na', POSITIVE_OTHER),
      dropped('nb', POSITIVE_OTHER),
      dropped('nc', POSITIVE_OTHER),
      dropped('pa', POSITIVE_MULTIPLE),
      dropped('pb', POSITIVE_MULTIPLE),
    ]);
  });

  test('a node-affinity rule sharing two resources with another is reported once per resource', () => {
    const { messages } = drop(
      rules(['node-affinity', 'na', 'vm:1,vm:2', 'nodes node1'], ['node-affinity', 'nb', 'vm:1,vm:2', 'nodes node2']),
    );
    expect(messages).toEqual([
      "Drop rule 'na', because resource 'vm:1' is already used in another node affinity rule.",
      "Drop rule 'na', because resource 'vm:2' is already used in another node affinity rule.",
      "Drop rule 'nb', because resource 'vm:1' is already used in another node affinity rule.",
      "Drop rule 'nb', because resource 'vm:2' is already used in another node affinity rule.",
    ]);
  });

  test('every check sees the rules as written: a rule dropped by one check still conflicts in another', () => {
    // 'lonely' is ineffective (one resource) but still joins vm:1's two node-affinity rules
    // into one positive group, so 'na' and 'nb' get a second message; nothing cascades further.
    const { messages, kept } = drop(
      rules(
        ['node-affinity', 'na', 'vm:1', 'nodes node1'],
        ['node-affinity', 'nb', 'vm:1', 'nodes node2'],
        ['resource-affinity', 'lonely', 'vm:1', 'affinity positive'],
        ['resource-affinity', 'fine', 'vm:5,vm:6', 'affinity negative'],
      ),
    );
    expect(messages).toEqual([
      // by rule id; one rule's messages in check order: node-affinity plugin, resource-affinity
      // plugin, then the global checks
      "Drop rule 'lonely', because rule is ineffective as there are less than two resources.",
      "Drop rule 'lonely', because resources are in multiple node affinity rules.",
      "Drop rule 'na', because resource 'vm:1' is already used in another node affinity rule.",
      dropped('na', POSITIVE_OTHER),
      "Drop rule 'nb', because resource 'vm:1' is already used in another node affinity rule.",
      dropped('nb', POSITIVE_OTHER),
    ]);
    expect(kept).toEqual(['fine']);
  });

  test('messages are sorted by rule id in byte order', () => {
    // 'a-b' < 'aB' < 'ab' < 'bb' in byte order ('-' 0x2d < 'B' 0x42 < 'b' 0x62)
    const { messages } = drop(
      rules(
        ['resource-affinity', 'bb', 'vm:1', 'affinity positive'],
        ['resource-affinity', 'aB', 'vm:2', 'affinity negative'],
        ['resource-affinity', 'a-b', 'vm:3', 'affinity negative'],
        ['resource-affinity', 'ab', 'vm:4,vm:5,vm:6,vm:7', 'affinity negative'],
      ),
    );
    expect(messages).toEqual([
      "Drop rule 'a-b', because rule is ineffective as there are less than two resources.",
      "Drop rule 'aB', because rule is ineffective as there are less than two resources.",
      "Drop rule 'ab', because rule defines more resources than available nodes.",
      "Drop rule 'bb', because rule is ineffective as there are less than two resources.",
    ]);
  });
});
