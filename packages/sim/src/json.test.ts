import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { JsonSyntaxError, MAX_JSON_DEPTH, parseStrictJson } from './json';

function syntaxError(text: string): JsonSyntaxError {
  try {
    parseStrictJson(text);
  } catch (err) {
    expect(err).toBeInstanceOf(JsonSyntaxError);
    return err as JsonSyntaxError;
  }
  throw new Error('no error');
}

describe('parseStrictJson', () => {
  test('refuses a duplicate key (JSON.parse keeps the last one silently), pointing at it', () => {
    const text = '{\n  "node1": {"power": "on"},\n  "node1": {"power": "off"}\n}';
    expect(JSON.parse(text)).toEqual({ node1: { power: 'off' } });
    const err = syntaxError(text);
    expect(err.reason).toBe("duplicate key 'node1'");
    expect([err.line, err.column]).toEqual([3, 3]);
    expect(err.message).toBe("line 3, column 3: duplicate key 'node1'");
  });

  test('objects have no prototype: __proto__, toString and constructor are plain keys', () => {
    const v = parseStrictJson('{"__proto__": {"power": "on"}, "toString": 1, "constructor": [2]}') as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(v)).toBeNull();
    expect(Object.keys(v)).toEqual(['__proto__', 'toString', 'constructor']);
    expect(v.__proto__).toEqual({ power: 'on' });
    // eslint-disable-next-line @typescript-eslint/unbound-method -- reads the member to show it is absent; nothing is called
    expect(v.hasOwnProperty).toBeUndefined();
  });

  test.each([
    ['', 'unexpected end of input', 1, 1],
    ['{"a": 1,}', "expected a key string, got '}'", 1, 9],
    ['[1 2]', "expected ',' or ']', got '2'", 1, 4],
    ['{"a" 1}', "expected ':', got '1'", 1, 6],
    ['"abc', 'unterminated string', 1, 5],
    ['"a\\qb"', "invalid escape '\\q'", 1, 3],
    ['"a\\u12g4"', 'invalid \\u escape', 1, 3],
    ['"tab\there"', 'control character in string', 1, 5],
    ['{"a": 1} x', "unexpected 'x' after the value", 1, 10],
    ['\ufeff{}', "unexpected '\ufeff'", 1, 1],
    ['NaN', "unexpected 'N'", 1, 1],
    ['01', "unexpected '1' after the value", 1, 2],
  ])('%j: %s at line %d, column %d', (text, reason, line, column) => {
    const err = syntaxError(text);
    expect([err.reason, err.line, err.column]).toEqual([reason, line, column]);
  });

  test(`nesting deeper than ${MAX_JSON_DEPTH} levels is refused, not a stack overflow`, () => {
    expect(syntaxError('['.repeat(100_000)).reason).toBe(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  });

  test('numbers as JSON.parse reads them, a literal too large for a double included', () => {
    expect(parseStrictJson('[0, -1.5, 2e3, 1e999, -0]')).toEqual([0, -1.5, 2000, Infinity, -0]);
  });

  test('keepMember: refused top-level members are checked for syntax but left out', () => {
    const keep = (key: string) => key.startsWith('vm:1');
    expect(
      parseStrictJson('{"vm:1": {"cpu": 1}, "vm:2": {"cpu": [1, {"a": "\\u0041"}], "x": null}, "vm:10": 2}', {
        keepMember: keep,
      }),
    ).toEqual({ 'vm:1': { cpu: 1 }, 'vm:10': 2 });
    // only the top level is filtered
    expect(parseStrictJson('{"vm:1": {"vm:2": 3}}', { keepMember: keep })).toEqual({ 'vm:1': { 'vm:2': 3 } });
    const errorIn = (text: string) => {
      try {
        parseStrictJson(text, { keepMember: keep });
      } catch (err) {
        return [(err as JsonSyntaxError).reason, (err as JsonSyntaxError).column];
      }
      return undefined;
    };
    expect(errorIn('{"vm:2": {"a": 1,}}')).toEqual(["expected a key string, got '}'", 18]);
    expect(errorIn('{"vm:2": [1 2]}')).toEqual(["expected ',' or ']', got '2'", 13]);
    expect(errorIn('{"vm:2": "a\\qb"}')).toEqual(["invalid escape '\\q'", 12]);
    expect(errorIn('{"vm:2": tru}')).toEqual(["unexpected 't'", 10]);
    expect(errorIn(`{"vm:2": ${'['.repeat(1000)}}`)).toEqual([
      `nested deeper than ${MAX_JSON_DEPTH} levels`,
      10 + MAX_JSON_DEPTH,
    ]);
    // a repeated key that is kept is still a duplicate
    expect(errorIn('{"vm:1": 1, "vm:1": 2}')).toEqual(["duplicate key 'vm:1'", 13]);
  });

  test('property: with keepMember, the kept members read as JSON.parse reads them', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.func(fc.boolean()), (dict, keep) => {
        const text = JSON.stringify(dict);
        const expected = Object.fromEntries(
          Object.entries(JSON.parse(text) as Record<string, unknown>).filter(([k]) => keep(k)),
        );
        expect(JSON.stringify(parseStrictJson(text, { keepMember: (k) => keep(k) }))).toBe(JSON.stringify(expected));
      }),
    );
  });

  test('property: any JSON without duplicate keys reads as JSON.parse reads it', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(JSON.stringify(parseStrictJson(text))).toBe(JSON.stringify(JSON.parse(text)));
      }),
    );
  });
});
