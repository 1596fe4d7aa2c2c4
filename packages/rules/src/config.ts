/**
 * Rules and groups configs: the property schemas of the `node-affinity`, `resource-affinity`
 * and `group` section types, and their parse/write entry points.
 */
import {
  parseSectionConfig,
  writeSectionConfig,
  type DecodeResult,
  type PropertySchema,
  type SectionPlugin,
} from './section-config';
import { copyRecord, nullRecord } from './records';
import type {
  GroupsConfig,
  NodePriorities,
  NodePriority,
  ParseResult,
  Group,
  Rule,
  RulesConfig,
  SidSet,
} from './types';
import { compareNames, sortNames } from '@poise/usage';

/** Default file name of the rules config, used in warnings. */
export const RULES_CONFIG_FILE = 'ha/rules.cfg';
/** Default file name of the HA groups config, used in warnings. */
export const GROUPS_CONFIG_FILE = 'ha/groups.cfg';

/** HA resource id (pve-ha-resource-id): `<type>:<name>`, e.g. `vm:101`, `ct:200`, `fa:120001`. */
const SID_PATTERN = /^[a-z]+:\S+$/;
/** `node[:priority]` entry of a node list; node names follow pve-node, priorities are >= 0. */
const NODE_ENTRY_PATTERN = /^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)(?::(\d+))?$/;
/** Maximum comment length of the reference schema. */
const COMMENT_MAX_LENGTH = 4096;

/** PVE::Tools::split_list: `,` `;` and whitespace separate entries, empty entries vanish. */
export function splitList(text: string): string[] {
  return text
    .replace(/[,;]/g, ' ')
    .trim()
    .split(/\s+/)
    .filter((entry) => entry !== '');
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** PVE::Tools::encode_text: control, non-ASCII, `:` and `%` characters as `%XX`. */
export function encodeText(text: string): string {
  const bytes = utf8Encoder.encode(text);
  let out = '';
  for (const byte of bytes) {
    const escape = byte < 0x20 || byte >= 0x7f || byte === 0x3a || byte === 0x25;
    out += escape ? `%${byte.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(byte);
  }
  return out;
}

/** PVE::Tools::decode_text: `%XX` back to bytes, read as UTF-8. */
export function decodeText(text: string): string {
  if (!text.includes('%')) return text;
  const input = utf8Encoder.encode(text);
  const bytes = new Uint8Array(input.length);
  let length = 0;
  for (let i = 0; i < input.length; i++) {
    const byte = input[i] as number;
    const high = hexValue(input[i + 1]);
    const low = hexValue(input[i + 2]);
    if (byte === 0x25 && high >= 0 && low >= 0) {
      bytes[length++] = high * 16 + low;
      i += 2;
    } else {
      bytes[length++] = byte;
    }
  }
  return utf8Decoder.decode(bytes.subarray(0, length));
}

/** Value of an ASCII hex digit byte, -1 for anything else (or undefined). */
function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x41 + 10;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1;
}

/** Parses a `resources` list into a set; any invalid id rejects the whole property. */
function decodeResources(raw: string): DecodeResult {
  const resources: SidSet = nullRecord<1>();
  for (const sid of splitList(raw)) {
    if (!SID_PATTERN.test(sid)) {
      return { ok: false, reason: `invalid format - value '${sid}' does not look like a valid ha resource id` };
    }
    resources[sid] = 1;
  }
  return { ok: true, value: resources };
}

/** Parses a `node[:prio]` list into `{ node: { priority } }`; priority defaults to 0. */
function decodeNodes(raw: string): DecodeResult {
  const nodes: NodePriorities = nullRecord<NodePriority>();
  for (const entry of splitList(raw)) {
    const match = NODE_ENTRY_PATTERN.exec(entry);
    if (!match) return { ok: false, reason: `invalid format - value '${entry}' is not a valid node entry` };
    nodes[match[1] as string] = { priority: match[3] === undefined ? 0 : Number(match[3]) };
  }
  return { ok: true, value: nodes };
}

function encodeResources(value: unknown): string {
  return sortNames(Object.keys(value as SidSet)).join(',');
}

function encodeNodes(value: unknown): string {
  const nodes = value as NodePriorities;
  return Object.keys(nodes)
    .sort(compareNames)
    .map((node) => {
      const priority = nodes[node]?.priority ?? 0;
      return priority ? `${node}:${priority}` : node;
    })
    .join(',');
}

function decodeComment(raw: string): DecodeResult {
  const text = decodeText(raw);
  if (text.length > COMMENT_MAX_LENGTH) {
    return { ok: false, reason: `value may only be ${COMMENT_MAX_LENGTH} characters long` };
  }
  return { ok: true, value: text };
}

function decodeAffinity(raw: string): DecodeResult {
  if (raw === 'positive' || raw === 'negative') return { ok: true, value: raw };
  return { ok: false, reason: `value '${raw}' does not have a value in the enumeration 'positive, negative'` };
}

const comment: PropertySchema = {
  kind: 'string',
  optional: true,
  decode: decodeComment,
  encode: (value) => encodeText(String(value)),
};
const resources: PropertySchema = {
  kind: 'string',
  optional: false,
  decode: decodeResources,
  encode: encodeResources,
};
const nodes: PropertySchema = { kind: 'string', optional: false, decode: decodeNodes, encode: encodeNodes };
const flag: PropertySchema = { kind: 'boolean', optional: true };

/** Rule plugins in registration order: node-affinity, then resource-affinity. */
const RULE_PLUGINS: readonly SectionPlugin[] = [
  {
    type: 'node-affinity',
    properties: { resources, nodes, strict: flag, disable: flag, comment },
  },
  {
    type: 'resource-affinity',
    properties: {
      resources,
      affinity: { kind: 'string', optional: false, decode: decodeAffinity },
      disable: flag,
      comment,
    },
  },
];

/** The legacy HA group plugin. */
const GROUP_PLUGINS: readonly SectionPlugin[] = [
  {
    type: 'group',
    properties: { nodes, restricted: flag, nofailback: flag, comment },
  },
];

/** Parses rules config text; problems are returned as warnings, never thrown. */
export function parseRulesConfig(raw: string, file: string = RULES_CONFIG_FILE): ParseResult<Rule> {
  return parseSectionConfig<Rule>(file, raw, RULE_PLUGINS);
}

/** Serialises a rules config in the SectionConfig format (throws RulesError on unwritable values). */
export function writeRulesConfig(config: Pick<RulesConfig, 'ids' | 'order'>): string {
  return writeSectionConfig(config, RULE_PLUGINS);
}

/** Parses HA groups config text; problems are returned as warnings, never thrown. */
export function parseGroupsConfig(raw: string, file: string = GROUPS_CONFIG_FILE): ParseResult<Group> {
  return parseSectionConfig<Group>(file, raw, GROUP_PLUGINS);
}

/** Serialises a groups config in the SectionConfig format. */
export function writeGroupsConfig(config: Pick<GroupsConfig, 'ids' | 'order'>): string {
  return writeSectionConfig(config, GROUP_PLUGINS);
}

/** An empty rules config, as the reference reads a missing file (digest of ''). */
export function emptyRulesConfig(): RulesConfig {
  return parseRulesConfig('').config;
}

/** Copy of `{ node: { priority } }` as a new prototype-free record. */
export function cloneNodePriorities(nodes: Readonly<NodePriorities>): NodePriorities {
  const copy = nullRecord<NodePriority>();
  for (const [node, entry] of Object.entries(nodes)) copy[node] = { priority: entry.priority };
  return copy;
}

/** Copy of a rule whose `resources` and `nodes` are new prototype-free records. */
function cloneRule(rule: Rule): Rule {
  if (rule.type === 'node-affinity') {
    return { ...rule, resources: copyRecord(rule.resources), nodes: cloneNodePriorities(rule.nodes) };
  }
  return { ...rule, resources: copyRecord(rule.resources) };
}

/**
 * Deep copy of a rules config (transforms mutate their argument); the copy's records have no
 * prototype, like a parsed config's. Cost: linear in the config's size.
 */
export function cloneRulesConfig(config: RulesConfig): RulesConfig {
  const ids = nullRecord<Rule>();
  for (const id of Object.keys(config.ids)) ids[id] = cloneRule(config.ids[id] as Rule);
  return { ids, order: copyRecord(config.order), digest: config.digest };
}
