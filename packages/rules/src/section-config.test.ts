import fc from 'fast-check';
import { describe, expect, test } from 'vitest';

import { RulesError, parseGroupsConfig, parseRulesConfig, writeRulesConfig } from './index';
import { configDigest } from './section-config';
import { decodeText, encodeText, splitList, writeGroupsConfig } from './config';
import { HEADER_PATTERN, PROPERTY_PATTERN, matchHeader, matchProperty } from './section-config';

const NODE_RULE = 'node-affinity: r1\n\tresources vm:101\n\tnodes node1\n';

function parseRule(properties: string) {
  return parseRulesConfig(`node-affinity: r1\n\tresources vm:101\n\tnodes node1\n${properties}`);
}

describe('boolean properties', () => {
  test.each([
    ['a bare key means 1', '\tstrict\n', 1],
    ['1 is true', '\tstrict 1\n', 1],
    ['0 is false and kept', '\tstrict 0\n', 0],
    ['trailing blanks are ignored', '\tstrict 1  \n', 1],
  ])('%s', (_name, line, expected) => {
    const { config, warnings } = parseRule(line);
    expect(warnings).toEqual([]);
    expect(config.ids.r1).toMatchObject({ strict: expected });
  });

  test.each(['yes', 'true', 'on', '2', 'no'])(
    "'%s' is rejected with a warning and the property is dropped",
    (value) => {
      const { config, warnings } = parseRule(`\tstrict ${value}\n`);
      expect(config.ids.r1).toBeDefined();
      expect(config.ids.r1).not.toHaveProperty('strict');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ line: 4, sectionId: 'r1', key: 'strict' });
      expect(warnings[0]?.message).toBe(
        `file ha/rules.cfg line 4 (section 'r1') - unable to parse value of 'strict': type check ('boolean') failed - got '${value}'`,
      );
    },
  );
});

describe('sections and lines', () => {
  test('parses both rule types with order, type and decoded values', () => {
    const text =
      'node-affinity: na1\n\tresources vm:101, ct:102;fa:120001\n\tnodes node1:2,node2\n\tcomment hi%3A there\n\n' +
      'Resource-Affinity: ra1\n\tresources vm:101,vm:102\n\taffinity negative\n\tdisable\n';
    const { config, warnings } = parseRulesConfig(text);
    expect(warnings).toEqual([]);
    expect(config).toEqual({
      ids: {
        na1: {
          type: 'node-affinity',
          resources: { 'vm:101': 1, 'ct:102': 1, 'fa:120001': 1 },
          nodes: { node1: { priority: 2 }, node2: { priority: 0 } },
          comment: 'hi: there',
        },
        ra1: {
          type: 'resource-affinity',
          resources: { 'vm:101': 1, 'vm:102': 1 },
          affinity: 'negative',
          disable: 1,
        },
      },
      order: { na1: 1, ra1: 2 },
      digest: configDigest(text),
    });
  });

  test('comment lines are skipped inside and outside sections without ending them', () => {
    const { config, warnings } = parseRulesConfig(
      '# head\nnode-affinity: r1\n\tresources vm:101\n  # inner comment\n\tnodes node1\n',
    );
    expect(warnings).toEqual([]);
    expect(config.ids.r1).toMatchObject({ nodes: { node1: { priority: 0 } } });
  });

  test('an empty line ends a section, so later property lines are ignored with a warning', () => {
    const { config, warnings } = parseRulesConfig(`${NODE_RULE}\n\tstrict 1\n`);
    expect(config.ids.r1).not.toHaveProperty('strict');
    expect(warnings.map((w) => w.message)).toEqual(['file ha/rules.cfg line 5 - ignore config line: \tstrict 1']);
  });

  test.each([
    ['an unknown property', '\tcolour red\n', "unexpected property 'colour'"],
    ['a duplicate property', '\tnodes node2\n', 'duplicate attribute'],
    ['a string property without value', '\tcomment\n', 'missing value'],
    ['a non-indented line', 'strict 1\n', 'ignore config line: strict 1'],
  ])('%s gives a warning and keeps the section', (_name, lines, reason) => {
    const { config, warnings } = parseRulesConfig(`node-affinity: r1\n\tresources vm:101\n\tnodes node1\n${lines}`);
    expect(config.ids.r1).toBeDefined();
    expect(warnings.map((w) => w.reason)).toEqual([reason]);
  });

  test.each([
    [
      'an invalid sid',
      'node-affinity: r1\n\tresources vm:101,101\n\tnodes node1\n',
      "missing value for required option 'resources'",
    ],
    [
      'an invalid node entry',
      'node-affinity: r1\n\tresources vm:101\n\tnodes node1:x\n',
      "missing value for required option 'nodes'",
    ],
    [
      'an unknown affinity',
      'resource-affinity: r1\n\tresources vm:1,vm:2\n\taffinity maybe\n',
      "missing value for required option 'affinity'",
    ],
  ])('a section with %s loses the property and is skipped as incomplete', (_name, text, reason) => {
    const { config, warnings } = parseRulesConfig(text);
    expect(config.ids).toEqual({});
    expect(warnings.at(-1)?.reason).toBe(reason);
  });

  test('a skipped section still uses up its order number', () => {
    const { config } = parseRulesConfig(
      `node-affinity: bad\n\tresources vm:1\n\nnode-affinity: good\n\tresources vm:2\n\tnodes n1\n`,
    );
    expect(config.order).toEqual({ good: 2 });
  });

  test.each([
    ['an unsupported type', 'group: g1\n\tnodes node1\n', "unsupported type 'group'"],
    ['an invalid id', 'node-affinity: 1abc\n\tresources vm:1\n\tnodes n1\n', "invalid configuration ID '1abc'"],
    ['a one-character id', 'node-affinity: a\n\tresources vm:1\n\tnodes n1\n', "invalid configuration ID 'a'"],
  ])('%s skips the whole section', (_name, text, reason) => {
    const { config, warnings } = parseRulesConfig(text);
    expect(config.ids).toEqual({});
    expect(warnings.map((w) => w.reason)).toEqual([reason]);
  });

  test('the digest is the sha1 of the raw text and an empty file gives an empty config', () => {
    expect(parseRulesConfig('').config).toEqual({
      ids: {},
      order: {},
      digest: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
    });
  });

  test('groups parse with their own schema', () => {
    const { config, warnings } = parseGroupsConfig('group: g1\n\tnodes node2:2,node3\n\tnofailback 1\n\trestricted\n');
    expect(warnings).toEqual([]);
    expect(config.ids.g1).toEqual({
      type: 'group',
      nodes: { node2: { priority: 2 }, node3: { priority: 0 } },
      nofailback: 1,
      restricted: 1,
    });
  });
});

describe('helpers', () => {
  test.each([
    ['vm:1,vm:2', ['vm:1', 'vm:2']],
    ['  vm:1 ;vm:2,,\tvm:3 ', ['vm:1', 'vm:2', 'vm:3']],
    ['', []],
  ])('splitList(%j)', (text, expected) => {
    expect(splitList(text)).toEqual(expected);
  });

  test('encodeText escapes colon, percent, control and non-ascii characters and decodeText reverses it', () => {
    const text = "a:b 50% ü\n'x'";
    expect(encodeText(text)).toBe("a%3Ab 50%25 %C3%BC%0A'x'");
    expect(decodeText(encodeText(text))).toBe(text);
  });
});

describe('writer', () => {
  test('writes comment and disable first, then required keys, then optional keys, sections by order', () => {
    const text = writeRulesConfig({
      ids: {
        b: { type: 'resource-affinity', resources: { 'vm:2': 1, 'vm:10': 1 }, affinity: 'positive', disable: 1 },
        a: {
          type: 'node-affinity',
          resources: { 'vm:1': 1 },
          nodes: { node2: { priority: 0 }, node1: { priority: 3 } },
          strict: 0,
          comment: 'from: me',
        },
      },
      order: { a: 1, b: 2 },
    });
    expect(text).toBe(
      'node-affinity: a\n\tcomment from%3A me\n\tnodes node1:3,node2\n\tresources vm:1\n\tstrict 0\n\n' +
        'resource-affinity: b\n\tdisable\n\taffinity positive\n\tresources vm:10,vm:2\n\n',
    );
  });

  test('what is written parses back to the same sections', () => {
    const { config } = parseRulesConfig(
      'node-affinity: r1\n\tresources vm:101,vm:102\n\tnodes node1:2,node3\n\tstrict 1\n\tcomment x\n\n' +
        'resource-affinity: r2\n\tresources vm:101,vm:103\n\taffinity negative\n',
    );
    expect(parseRulesConfig(writeRulesConfig(config)).config.ids).toEqual(config.ids);
    const groups = parseGroupsConfig('group: g\n\tnodes n1:1\n\trestricted 1\n').config;
    expect(parseGroupsConfig(writeGroupsConfig(groups)).config.ids).toEqual(groups.ids);
  });

  test('sections without an order are appended in id order', () => {
    const text = writeRulesConfig({
      ids: {
        z: { type: 'resource-affinity', resources: { 'vm:1': 1, 'vm:2': 1 }, affinity: 'positive' },
        y: { type: 'resource-affinity', resources: { 'vm:1': 1, 'vm:2': 1 }, affinity: 'negative' },
        x: { type: 'resource-affinity', resources: { 'vm:1': 1, 'vm:2': 1 }, affinity: 'negative' },
      },
      order: { z: 5 },
    });
    expect(text.match(/^\S+: (\S+)$/gm)).toEqual([
      'resource-affinity: z',
      'resource-affinity: x',
      'resource-affinity: y',
    ]);
  });

  test('a missing required property throws a RulesError naming section and option', () => {
    const write = () =>
      writeRulesConfig({
        ids: { r: { type: 'resource-affinity', resources: { 'vm:1': 1 } } as never },
        order: { r: 1 },
      });
    expect(write).toThrow(RulesError);
    expect(write).toThrow("section 'r' is missing required option 'affinity'");
    try {
      write();
    } catch (error) {
      expect(error).toMatchObject({ name: 'RulesError', code: 'invalid-value' });
    }
  });
});

describe('line patterns in linear time', () => {
  const alphabet = fc.constantFrom(' ', '\t', ':', 'a', 'B', '#', '\r', '\u2028', '\u00a0', '1');
  const line = fc.array(alphabet, { maxLength: 12 }).map((chars) => chars.join(''));

  test('matchHeader agrees with the reference pattern', () => {
    fc.assert(
      fc.property(line, (text) => {
        const match = HEADER_PATTERN.exec(text);
        expect(matchHeader(text)).toEqual(match ? [match[1], match[2]] : null);
      }),
      { numRuns: 20000, seed: 3 },
    );
  });

  test('matchProperty agrees with the reference pattern', () => {
    fc.assert(
      fc.property(line, (text) => {
        const match = PROPERTY_PATTERN.exec(text);
        expect(matchProperty(text)).toEqual(match ? [match[1], match[3]] : null);
      }),
      { numRuns: 20000, seed: 5 },
    );
  });

  test.each([
    ['a header of 200,000 colons', `${':'.repeat(200_000)} a b\n`],
    ['a property of 200,000 blanks', `node-affinity: r1\n\tcomment${' '.repeat(200_000)}x\u2028y\n`],
  ])('%s is refused with a warning', (_name, text) => {
    // with the patterns themselves this took minutes (quadratic backtracking)
    const { warnings } = parseRulesConfig(text);
    expect(warnings.map((w) => w.reason)[0]).toMatch(/^ignore config line/);
  });
});
