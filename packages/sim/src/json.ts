/**
 * A strict JSON reader for case files. Unlike `JSON.parse` it refuses a duplicate key (the
 * second value would silently win), and every object it returns has a null prototype, so a
 * name such as `__proto__`, `toString` or `constructor` is an ordinary key. Errors carry the
 * line and column. Numbers follow `JSON.parse` (a literal too large for a double is Infinity).
 */

/** Nesting deeper than this is refused (no case file comes close; it bounds the recursion). */
export const MAX_JSON_DEPTH = 256;

/** A JSON syntax problem: what, and where (1-based line and column). */
export class JsonSyntaxError extends SyntaxError {
  override readonly name = 'JsonSyntaxError';
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`line ${line}, column ${column}: ${reason}`);
  }
}

/** A JSON object as this reader builds it (null prototype). */
export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// eslint-disable-next-line no-control-regex -- JSON strings cannot hold U+0000..U+001F unescaped: the match stops there
const PLAIN_STRING = /[^"\\\u0000-\u001f]*/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** Parses `text` as one JSON value; throws {@link JsonSyntaxError}. */
export function parseStrictJson(text: string): JsonValue {
  let pos = 0;

  const fail = (reason: string, at = pos): never => {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at && i < text.length; i++) {
      if (text.charCodeAt(i) === 10) {
        line++;
        lineStart = i + 1;
      }
    }
    throw new JsonSyntaxError(reason, line, at - lineStart + 1);
  };

  const skipSpace = (): void => {
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) pos++;
      else return;
    }
  };

  const describe = (at: number): string => (at >= text.length ? 'end of input' : `'${text[at]}'`);

  const parseString = (): string => {
    // at the opening quote
    pos++;
    let out = '';
    for (;;) {
      PLAIN_STRING.lastIndex = pos;
      PLAIN_STRING.exec(text);
      out += text.slice(pos, PLAIN_STRING.lastIndex);
      pos = PLAIN_STRING.lastIndex;
      if (pos >= text.length) fail('unterminated string');
      const c = text[pos]!;
      if (c === '"') {
        pos++;
        return out;
      }
      if (c === '\\') {
        const e = text[pos + 1];
        if (e === 'u') {
          const hex = text.slice(pos + 2, pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('invalid \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          pos += 6;
        } else if (e !== undefined && ESCAPES[e] !== undefined) {
          out += ESCAPES[e];
          pos += 2;
        } else {
          fail(`invalid escape '\\${e ?? ''}'`);
        }
        continue;
      }
      fail('control character in string');
    }
  };

  const parseValue = (depth: number): JsonValue => {
    if (depth > MAX_JSON_DEPTH) fail(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    skipSpace();
    const c = text[pos];
    if (c === '{') {
      pos++;
      const obj = Object.create(null) as JsonObject;
      skipSpace();
      if (text[pos] === '}') {
        pos++;
        return obj;
      }
      for (;;) {
        skipSpace();
        if (text[pos] !== '"') fail(`expected a key string, got ${describe(pos)}`);
        const keyAt = pos;
        const key = parseString();
        if (Object.hasOwn(obj, key)) fail(`duplicate key '${key}'`, keyAt);
        skipSpace();
        if (text[pos] !== ':') fail(`expected ':', got ${describe(pos)}`);
        pos++;
        obj[key] = parseValue(depth + 1);
        skipSpace();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === '}') {
          pos++;
          return obj;
        }
        fail(`expected ',' or '}', got ${describe(pos)}`);
      }
    }
    if (c === '[') {
      pos++;
      const arr: JsonValue[] = [];
      skipSpace();
      if (text[pos] === ']') {
        pos++;
        return arr;
      }
      for (;;) {
        arr.push(parseValue(depth + 1));
        skipSpace();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === ']') {
          pos++;
          return arr;
        }
        fail(`expected ',' or ']', got ${describe(pos)}`);
      }
    }
    if (c === '"') return parseString();
    if (text.startsWith('true', pos)) {
      pos += 4;
      return true;
    }
    if (text.startsWith('false', pos)) {
      pos += 5;
      return false;
    }
    if (text.startsWith('null', pos)) {
      pos += 4;
      return null;
    }
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (m) {
      pos = NUMBER.lastIndex;
      return Number(m[0]);
    }
    return fail(`unexpected ${describe(pos)}`);
  };

  const value = parseValue(0);
  skipSpace();
  if (pos < text.length) fail(`unexpected ${describe(pos)} after the value`);
  return value;
}
