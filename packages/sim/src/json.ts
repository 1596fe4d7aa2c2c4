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

/** Options of {@link parseStrictJson}. */
export interface JsonReadOptions {
  /**
   * Called with each key of the top-level object: a member whose key it refuses is checked for
   * syntax but not built (nothing of its value is allocated) and left out of the result. A
   * file of a million entries the reader does not need then costs one scan. Default: every
   * member is kept.
   */
  keepMember?: (key: string) => boolean;
}

/** Parses `text` as one JSON value; throws {@link JsonSyntaxError}. */
export function parseStrictJson(text: string, options: JsonReadOptions = {}): JsonValue {
  const keepMember = options.keepMember;
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

  /** Reads a string at its opening quote; builds its value only when `build`. */
  const scanString = (build: boolean): string => {
    pos++;
    let out = '';
    for (;;) {
      PLAIN_STRING.lastIndex = pos;
      PLAIN_STRING.exec(text);
      if (build) out += text.slice(pos, PLAIN_STRING.lastIndex);
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
          if (build) out += String.fromCharCode(parseInt(hex, 16));
          pos += 6;
        } else if (e !== undefined && ESCAPES[e] !== undefined) {
          if (build) out += ESCAPES[e];
          pos += 2;
        } else {
          fail(`invalid escape '\\${e ?? ''}'`);
        }
        continue;
      }
      fail('control character in string');
    }
  };
  const parseString = (): string => scanString(true);

  /** Checks one value's syntax without building it (the same grammar as `parseValue`). */
  const skipValue = (depth: number): void => {
    if (depth > MAX_JSON_DEPTH) fail(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    skipSpace();
    const c = text[pos];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      pos++;
      skipSpace();
      if (text[pos] === close) {
        pos++;
        return;
      }
      for (;;) {
        skipSpace();
        if (close === '}') {
          if (text[pos] !== '"') fail(`expected a key string, got ${describe(pos)}`);
          scanString(false);
          skipSpace();
          if (text[pos] !== ':') fail(`expected ':', got ${describe(pos)}`);
          pos++;
        }
        skipValue(depth + 1);
        skipSpace();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === close) {
          pos++;
          return;
        }
        fail(`expected ',' or '${close}', got ${describe(pos)}`);
      }
    }
    if (c === '"') {
      scanString(false);
      return;
    }
    parseScalar();
  };

  /** `true`, `false`, `null` or a number. */
  const parseScalar = (): JsonValue => {
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
        // a refused member of the top-level object: scanned, not built (a repeat of its key
        // would be refused the same way, so no value can silently replace another)
        if (depth === 0 && keepMember && !keepMember(key)) skipValue(depth + 1);
        else obj[key] = parseValue(depth + 1);
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
    return parseScalar();
  };

  const value = parseValue(0);
  skipSpace();
  if (pos < text.length) fail(`unexpected ${describe(pos)} after the value`);
  return value;
}
