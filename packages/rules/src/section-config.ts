/**
 * The PVE SectionConfig text format (pve-common `SectionConfig.pm` parse_config / write_config),
 * reduced to what the HA rules and groups files use.
 *
 * ```
 * <type>: <id>
 * <TAB><key> <value>
 * <TAB><boolean-key>            # a bare boolean key means 1
 *
 * # comment lines are skipped; an empty line ends a section
 * ```
 *
 * Bad content never throws: like the reference, every problem becomes a warning and the
 * offending property (or section) is skipped.
 */
import { RulesError } from './errors';
import { copyRecord, getOwn, hasOwn, nullRecord } from './records';
import { sha1Hex } from './sha1';
import type { ConfigWarning, ParseResult, SectionConfigData } from './types';
import { compareNames } from '@poise/usage';

/** Result of decoding one raw property value. */
export type DecodeResult = { ok: true; value: unknown } | { ok: false; reason: string };

/** Schema of one property of a section type. */
export interface PropertySchema {
  /** `boolean` accepts only `1`/`0`, and a bare key means 1. */
  kind: 'boolean' | 'string';
  /** A section missing a non-optional property is skipped. */
  optional: boolean;
  /** Validates and decodes the raw text (only for `string`); defaults to the text itself. */
  decode?: (raw: string) => DecodeResult;
  /** Encodes the decoded value back to its one-line text; defaults to `String(value)`. */
  encode?: (value: unknown) => string;
}

/** A section type ("plugin" in the reference) with its properties. */
export interface SectionPlugin {
  type: string;
  properties: Record<string, PropertySchema>;
}

/** Header line: `type: id` (the type is lowercased); the reference's pattern. */
export const HEADER_PATTERN = /^(\S+):\s*(\S+)\s*$/;
/** Property line: indented `key [value]`; the reference's pattern. */
export const PROPERTY_PATTERN = /^\s+(\S+)(\s+(.*\S))?\s*$/;
/** Line terminators other than `\n`, which `.` in the patterns does not match. */
const LINE_TERMINATOR = /[\r\u2028\u2029]/;

/**
 * `HEADER_PATTERN.exec(line)` as `[type, id]` or null, in linear time (the pattern itself
 * backtracks quadratically on long lines of colons).
 */
export function matchHeader(line: string): [type: string, id: string] | null {
  const text = line.trimEnd();
  if (text === '' || /^\s/.test(text)) return null;
  const space = text.search(/\s/);
  if (space >= 0) {
    // two runs of non-space: `type:` and the id
    const first = text.slice(0, space);
    const id = text.slice(space).trimStart();
    if (/\s/.test(id) || first.length < 2 || !first.endsWith(':')) return null;
    return [first.slice(0, -1), id];
  }
  // one run: the type is as long as it can be, the id is not empty
  const colon = text.lastIndexOf(':', text.length - 2);
  return colon < 1 ? null : [text.slice(0, colon), text.slice(colon + 1)];
}

/**
 * `PROPERTY_PATTERN.exec(line)` as `[key, value | undefined]` or null, in linear time (the
 * pattern itself backtracks quadratically on long runs of blanks).
 */
export function matchProperty(line: string): [key: string, value: string | undefined] | null {
  const text = line.trimEnd();
  const head = /^\s+(\S+)/.exec(text);
  if (!head) return null;
  const rest = text.slice(head[0].length);
  if (rest === '') return [head[1] as string, undefined];
  const value = rest.trimStart();
  return LINE_TERMINATOR.test(value) ? null : [head[1] as string, value];
}
/** Section ids (pve-configid), case-insensitive. */
const CONFIG_ID_PATTERN = /^[a-z][a-z0-9_-]+$/i;
const COMMENT_PATTERN = /^\s*#/;

/** SHA1 hex of the raw text's UTF-8 bytes, the reference's config digest. */
export function configDigest(raw: string): string {
  return sha1Hex(raw);
}

function decodeBoolean(raw: string | undefined): DecodeResult {
  if (raw === undefined || raw === '1') return { ok: true, value: 1 };
  if (raw === '0') return { ok: true, value: 0 };
  return { ok: false, reason: `type check ('boolean') failed - got '${raw}'` };
}

function decodeProperty(schema: PropertySchema, raw: string | undefined): DecodeResult {
  if (schema.kind === 'boolean') return decodeBoolean(raw);
  if (raw === undefined) return { ok: false, reason: 'missing value' };
  return schema.decode ? schema.decode(raw) : { ok: true, value: raw };
}

/**
 * Parses SectionConfig text. `order` is the 1-based position among the accepted sections; a
 * section dropped for a missing required property still uses up its number (the reference keeps
 * it as an undefined entry, which every consumer skips).
 */
export function parseSectionConfig<T>(file: string, raw: string, plugins: readonly SectionPlugin[]): ParseResult<T> {
  const pluginByType = new Map(plugins.map((plugin) => [plugin.type, plugin]));
  const ids = nullRecord<T>();
  const order = nullRecord<number>();
  const warnings: ConfigWarning[] = [];
  const digest = configDigest(raw);

  // Perl's split(/\n/) drops trailing empty fields.
  const lines = raw.split('\n');
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();

  let index = 0;
  let lineNo = 0;
  const nextLine = (): string | undefined => {
    while (index < lines.length) {
      const line = lines[index++] as string;
      lineNo++;
      if (!COMMENT_PATTERN.test(line)) return line;
    }
    return undefined;
  };
  const warn = (reason: string, message: string, extra: { sectionId?: string; key?: string } = {}) => {
    warnings.push({ file, line: lineNo, ...extra, reason, message });
  };
  // Perl truthiness of a line: '' and '0' end a section.
  const isFalsy = (line: string | undefined) => line === undefined || line === '' || line === '0';

  let position = 1;
  while (index < lines.length) {
    const line = nextLine();
    if (isFalsy(line)) continue;
    const prefix = () => `file ${file} line ${lineNo}`;
    const header = matchHeader(line);
    if (!header) {
      warn('ignore config line', `${prefix()} - ignore config line: ${line}`);
      continue;
    }
    const type = header[0].toLowerCase();
    const sectionId = header[1];
    const plugin = pluginByType.get(type);
    let skipReason: string | undefined;
    if (!CONFIG_ID_PATTERN.test(sectionId)) skipReason = `invalid configuration ID '${sectionId}'`;
    else if (!plugin) skipReason = `unsupported type '${type}'`;
    if (skipReason !== undefined) {
      warn(skipReason, `${prefix()} (skip section '${sectionId}'): ${skipReason}`, { sectionId });
    }

    const section = nullRecord<unknown>();
    for (let propertyLine = nextLine(); !isFalsy(propertyLine); propertyLine = nextLine()) {
      if (skipReason !== undefined || !plugin) continue;
      const text = propertyLine;
      const match = matchProperty(text);
      if (!match) {
        const reason = `ignore config line: ${text}`;
        warn(reason, `${prefix()} (section '${sectionId}') - ${reason}`, { sectionId });
        continue;
      }
      const key = match[0];
      const schema = getOwn(plugin.properties, key);
      let result: DecodeResult;
      if (!schema) result = { ok: false, reason: `unexpected property '${key}'` };
      else if (section[key] !== undefined) result = { ok: false, reason: 'duplicate attribute' };
      else result = decodeProperty(schema, match[1]);
      if (!result.ok) {
        warn(
          result.reason,
          `${prefix()} (section '${sectionId}') - unable to parse value of '${key}': ${result.reason}`,
          { sectionId, key },
        );
        continue;
      }
      section[key] = result.value;
    }
    if (skipReason !== undefined || !plugin) continue;

    const missing = Object.keys(plugin.properties)
      .filter((key) => !plugin.properties[key]?.optional && section[key] === undefined)
      .sort(compareNames);
    const sectionPosition = position++;
    if (missing.length > 0) {
      const reason = `missing value for required option '${missing[0]}'`;
      warn(reason, `${prefix()} (skip section '${sectionId}'): ${reason}`, {
        sectionId,
        key: missing[0] as string,
      });
      delete ids[sectionId];
      delete order[sectionId];
      continue;
    }
    if (hasOwn(ids, sectionId)) {
      const reason = `duplicate section '${sectionId}', the later one wins`;
      warn(reason, `${prefix()} (section '${sectionId}') - ${reason}`, { sectionId });
    }
    ids[sectionId] = { type, ...section } as T;
    order[sectionId] = sectionPosition;
  }

  return { config: { ids, order, digest }, warnings };
}

/**
 * Writes sections as SectionConfig text (write_config): sections by `order` (ids without one
 * are appended in id order), `comment` and `disable` first, then the required properties in
 * key order, then the optional ones; every section is followed by an empty line.
 *
 * @throws RulesError `unknown-type` for a section without a plugin, `invalid-value` for a
 *   missing required property or a value containing a line feed.
 */
export function writeSectionConfig(
  config: Pick<SectionConfigData<{ type: string }>, 'ids' | 'order'>,
  plugins: readonly SectionPlugin[],
): string {
  const pluginByType = new Map(plugins.map((plugin) => [plugin.type, plugin]));
  const order = copyRecord(config.order);
  let maxOrder = 0;
  for (const id of Object.keys(config.ids)) maxOrder = Math.max(maxOrder, order[id] ?? 0);
  for (const id of Object.keys(config.ids).sort(compareNames)) {
    if (order[id] === undefined) order[id] = ++maxOrder;
  }
  const sectionIds = Object.keys(config.ids).sort(
    (a, b) => (order[a] as number) - (order[b] as number) || compareNames(a, b),
  );

  const out: string[] = [];
  for (const id of sectionIds) {
    const section = config.ids[id] as { type: string } & Record<string, unknown>;
    const plugin = pluginByType.get(section.type);
    if (!plugin) {
      throw new RulesError('unknown-type', `section '${id}' has unsupported type '${section.type}'`);
    }
    const line = (key: string, value: unknown): string => {
      const schema = plugin.properties[key] as PropertySchema;
      if (schema.kind === 'boolean') return `\t${key} ${value ? 1 : 0}\n`;
      const text = schema.encode ? schema.encode(value) : String(value);
      if (/[\n\r]/.test(text)) {
        throw new RulesError('invalid-value', `section '${id}' property '${key}' contains a line feed`);
      }
      return text === '' ? '' : `\t${key} ${text}\n`;
    };
    let data = `${section.type}: ${id}\n`;
    const done = new Set<string>();
    if (plugin.properties.comment && section.comment) data += line('comment', section.comment);
    if (plugin.properties.disable && section.disable) data += '\tdisable\n';
    done.add('comment');
    done.add('disable');
    const keys = Object.keys(plugin.properties).sort(compareNames);
    for (const key of keys) {
      if (done.has(key) || plugin.properties[key]?.optional) continue;
      done.add(key);
      if (section[key] === undefined) {
        throw new RulesError('invalid-value', `section '${id}' is missing required option '${key}'`);
      }
      data += line(key, section[key]);
    }
    for (const key of keys) {
      if (done.has(key) || section[key] === undefined || section[key] === null) continue;
      data += line(key, section[key]);
    }
    out.push(`${data}\n`);
  }
  return out.join('');
}
