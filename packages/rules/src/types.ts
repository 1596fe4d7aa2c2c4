/**
 * Data types of the HA rules engine (`PVE::HA::Rules` and its plugins, `PVE::HA::Groups`).
 *
 * Shapes mirror the reference's Perl hashes so that the canonical JSON dump of a config is
 * byte-identical to the reference's `rules_cfgs/*.cfg.expect`: sets are `{ key: 1 }` records,
 * booleans are the numbers `0 | 1`, priorities are numbers.
 */

/** A set as the reference stores it: `{ sid: 1 }`. */
export type SidSet = Record<string, 1>;

/** Node entry of a node-affinity rule or HA group; a higher priority is preferred. */
export interface NodePriority {
  priority: number;
}

/** `{ node: { priority } }` as parsed from `node[:prio]` lists (prio defaults to 0). */
export type NodePriorities = Record<string, NodePriority>;

/** Boolean as the reference keeps it after the schema check: only `0` or `1`. */
export type Flag = 0 | 1;

/** Positive: keep the resources on one node; negative: keep them on different nodes. */
export type Affinity = 'positive' | 'negative';

interface RuleBase {
  resources: SidSet;
  /** Present (whatever its value) means the rule is disabled, as in the reference. */
  disable?: Flag;
  comment?: string;
}

/** Keeps `resources` on (strict) or preferably on (non-strict) the listed nodes. */
export interface NodeAffinityRule extends RuleBase {
  type: 'node-affinity';
  nodes: NodePriorities;
  /** 1: only the listed nodes are allowed; absent or 0: other nodes get priority -1. */
  strict?: Flag;
}

/** Keeps `resources` on one node (positive) or on pairwise different nodes (negative). */
export interface ResourceAffinityRule extends RuleBase {
  type: 'resource-affinity';
  affinity: Affinity;
}

/** A rule of the rules config. */
export type Rule = NodeAffinityRule | ResourceAffinityRule;

/** A parsed SectionConfig: sections by id, their 1-based file order, SHA1 hex of the raw text. */
export interface SectionConfigData<T> {
  ids: Record<string, T>;
  order: Record<string, number>;
  digest: string;
}

/** A parsed rules config (`ha/rules.cfg`). */
export type RulesConfig = SectionConfigData<Rule>;

/** A legacy HA group (`group: <id>` in `ha/groups.cfg`). */
export interface Group {
  type: 'group';
  nodes: NodePriorities;
  restricted?: Flag;
  nofailback?: Flag;
  comment?: string;
}

/** A parsed HA groups config (`ha/groups.cfg`). */
export type GroupsConfig = SectionConfigData<Group>;

/**
 * The subset of a service config entry the group migration reads and writes. `group` is read
 * as the reference does (a missing, empty or `'0'` group is no group); `failback` is written
 * as 0 or 1 and may hold anything before.
 */
export interface ServiceConfigEntry {
  node?: string;
  state?: string;
  group?: string;
  failback?: unknown;
  [key: string]: unknown;
}

/** Service config entries by sid. */
export type ServiceConfig = Record<string, ServiceConfigEntry>;

/** Compiled node affinity of one resource (NodeAffinity.pm compile). */
export interface CompiledNodeAffinity {
  nodes: NodePriorities;
}

/** `{ sid: { csid: 1 } }`, symmetric. */
export type AffinityPairs = Record<string, Record<string, 1>>;

/** Output of `compileRules`: what the manager's placement queries read. */
export interface CompiledRules {
  'node-affinity': Record<string, CompiledNodeAffinity>;
  'resource-affinity': {
    positive: AffinityPairs;
    negative: AffinityPairs;
  };
}

/** A recoverable problem found while parsing a SectionConfig file (the reference `warn`s). */
export interface ConfigWarning {
  /** File name given to the parser. */
  file: string;
  /** 1-based line number. */
  line: number;
  /** Section the problem belongs to, when known. */
  sectionId?: string;
  /** Property the problem belongs to, when known. */
  key?: string;
  /** Lower-case reason without the location prefix. */
  reason: string;
  /** Full message in the reference's wording, e.g. `file x line 3 (section 'a') - ...`. */
  message: string;
}

/** What a parser returns: the config (problems skipped) and the problems. */
export interface ParseResult<T> {
  config: SectionConfigData<T>;
  warnings: ConfigWarning[];
}

/** Service status entry as the manager keeps it (the subset the rule queries read). */
export interface ServiceStatusEntry {
  state: string;
  node: string;
  target?: string;
}

/** Service status entries by sid. */
export type ServiceStatus = Record<string, ServiceStatusEntry>;
