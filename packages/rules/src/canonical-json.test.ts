import { describe, expect, test } from 'vitest';

import { canonicalJson } from './canonical-json';

describe('canonicalJson', () => {
  test.each([
    ['an empty object', {}, '{}\n'],
    ['an empty array', [], '[]\n'],
    ['a scalar', 'x', '"x"\n'],
    ['a number', -1, '-1\n'],
    ['a fraction', 0.5, '0.5\n'],
    ['null and booleans', [null, true, false], '[\n   null,\n   true,\n   false\n]\n'],
  ])('writes %s', (_name, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  test('sorts keys in byte order, indents by 3 and puts spaces around the colon', () => {
    const value = { 'vm:101': 1, node2: { priority: 0 }, node10: {}, B: [1, 'a'] };
    expect(canonicalJson(value)).toBe(
      [
        '{',
        '   "B" : [',
        '      1,',
        '      "a"',
        '   ],',
        '   "node10" : {},',
        '   "node2" : {',
        '      "priority" : 0',
        '   },',
        '   "vm:101" : 1',
        '}',
        '',
      ].join('\n'),
    );
  });

  test('escapes quotes, backslashes and control characters but not slashes or non-ascii', () => {
    expect(canonicalJson('a"b\\c/d\n\t\u0001ü')).toBe('"a\\"b\\\\c/d\\n\\t\\u0001ü"\n');
  });

  test('omits undefined members', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{\n   "b" : 1\n}\n');
  });
});
