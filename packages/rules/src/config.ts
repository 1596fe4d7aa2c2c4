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
import { byteCompare, sortedStrings } from './sort';
import type {
  GroupsConfig,
  NodePriorities,
  ParseResult,
  Group,
  Rule,
  RulesConfig,
  SidSet,
} from './types';

/** Default file names, used in warnings. */
export const RULES_CONFIG_FILE = 'ha/rules.cfg';
export const GROUPS_CONFIG_FILE = 'ha/groups.cfg';

/** HA resource id (pve-ha-resource-id): `<type>:<name>`, e.g. `vm:101`, `ct:200`, `fa:120001`. */
export const SID_PATTERN = /^[a-z]+:\S+$/;
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

/** PVE::Tools::encode_text: control, non-ASCII, `:` and `%` characters as `%XX`. */
export function encodeText(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let out = '';
  for (const byte of bytes) {
    const escape = byte < 0x20 || byte >= 0x7f || byte === 0x3a || byte === 0x25;
    out += escape ? `%${byte.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(byte);
  }
  return out;
}

/** PVE::Tools::decode_text: `%XX` back to bytes, read as UTF-8. */
export function decodeText(text: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === '%' && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...new TextEncoder().encode(text[i] as string));
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** Parses a `resources` list into a set; any invalid id rejects the whole property. */
export function decodeResources(raw: string): DecodeResult {
  const resources: SidSet = {};
  for (const sid of splitList(raw)) {
    if (!SID_PATTERN.test(sid)) {
      return { ok: false, reason: `invalid format - value '${sid}' does not look like a valid ha resource id` };
    }
    resources[sid] = 1;
  }
  return { ok: true, value: resources };
}

/** Parses a `node[:prio]` list into `{ node: { priority } }`; priority defaults to 0. */
export function decodeNodes(raw: string): DecodeResult {
  const nodes: NodePriorities = {};
  for (const entry of splitList(raw)) {
    const match = NODE_ENTRY_PATTERN.exec(entry);
    if (!match) return { ok: false, reason: `invalid format - value '${entry}' is not a valid node entry` };
    nodes[match[1] as string] = { priority: match[3] === undefined ? 0 : Number(match[3]) };
  }
  return { ok: true, value: nodes };
}

function encodeResources(value: unknown): string {
  return sortedStrings(Object.keys(value as SidSet)).join(',');
}

function encodeNodes(value: unknown): string {
  const nodes = value as NodePriorities;
  return Object.keys(nodes)
    .sort(byteCompare)
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
export const RULE_PLUGINS: readonly SectionPlugin[] = [
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
export const GROUP_PLUGINS: readonly SectionPlugin[] = [
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

/** Deep copy of a rules config (transforms mutate their argument). */
export function cloneRulesConfig(config: RulesConfig): RulesConfig {
  return structuredClone(config);
}
