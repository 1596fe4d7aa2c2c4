import {
  lazyRecordEntries,
  nullRecord,
  thaw,
  type Env,
  type ServiceConfig,
  type ServiceStatus,
  type Snapshot,
} from '@poise/env';
import {
  GROUPS_CONFIG_FILE,
  buildPersistentGroupMigration,
  cloneRulesConfig,
  compileRules,
  emptyCompiledRules,
  getNodeAffinity,
  getResourceAffinity,
  migrateGroupsToResources,
  migrateGroupsToRules,
  parseGroupsConfig,
  parseRulesConfig,
  transformRules,
  type CompiledRules,
  type Group,
  type GroupsConfig,
  type ParseResult,
  type Rule,
} from '@poise/rules';
import { compareDebianVersions } from './version';
import { memo } from './tools';

/** The questions placement and motion ask the compiled rules. */
export interface RulesView {
  /** allowed: nodes the service may run on; pri: the highest-priority ones (fresh sets). */
  nodeAffinity(sid: string, onlineNodes: string[]): { allowed: Set<string>; pri: Set<string> };
  /** Per node, how many positive partners want it (together) / negative partners use it (separate). */
  resourceAffinity(
    sid: string,
    ss: Record<string, ServiceStatus>,
  ): { together: Map<string, number>; separate: Map<string, number> };
  readonly compiled: CompiledRules;
  /** True when no rule names `sid` (no node affinity, no resource affinity partner). */
  unconstrained(sid: string): boolean;
}

function viewOf(compiled: CompiledRules, onlineNodes: () => string[]): RulesView {
  const affinity = compiled['resource-affinity'];
  // the services some rule names, gathered at the first question (the master asks for every
  // started service every round: one lookup in a set of the few named ones instead of three in
  // the compiled records; the compiled rules never change once made)
  let named: ReadonlySet<string> | undefined;
  return {
    compiled,
    unconstrained: (sid) =>
      !(named ??= new Set([
        ...Object.keys(compiled['node-affinity']),
        ...Object.keys(affinity.positive),
        ...Object.keys(affinity.negative),
      ])).has(sid),
    // a service no node-affinity rule names may run anywhere (asked as an own key: a service
    // id such as `toString` must not find Object.prototype's member in the compiled rules)
    nodeAffinity: (sid, online) =>
      Object.hasOwn(compiled['node-affinity'], sid)
        ? getNodeAffinity(compiled, sid, online)
        : unconstrainedNodes(online),
    // a service without resource-affinity partners: nothing to count (and no set of the
    // online nodes to build, once per service the balancer or placement asks about)
    resourceAffinity: (sid, ss) =>
      !Object.hasOwn(affinity.positive, sid) && !Object.hasOwn(affinity.negative, sid)
        ? { together: new Map(), separate: new Map() }
        : getResourceAffinity(compiled, sid, ss, onlineNodes()),
  };
}

/**
 * Every online node, allowed and preferred: two fresh sets, the allowed one made when it is first
 * read (the balancer asks for the preferred nodes of every candidate and never reads it).
 */
function unconstrainedNodes(online: string[]): { allowed: Set<string>; pri: Set<string> } {
  let allowed: Set<string> | undefined;
  return {
    get allowed(): Set<string> {
      return (allowed ??= new Set(online));
    },
    pri: new Set(online),
  };
}

/**
 * The config with group failback applied (migrate_groups_to_resources): `sc` as it is when no
 * service has a group; otherwise a shallow copy whose grouped entries are fresh copies, so the
 * snapshot read from the Env is never changed. O(services) pointer copies when groups are used.
 */
function withGroupFailback(sc: Snapshot<ServiceConfig>, groups: GroupsConfig): Snapshot<ServiceConfig> {
  const grouped = memo(sc, 'groupedServices', () => Object.keys(sc).filter((sid) => sc[sid]!.group));
  if (grouped.length === 0) return sc;
  const copy: ServiceConfig = Object.assign(nullRecord(), sc);
  for (const sid of grouped) copy[sid] = thaw(sc[sid]!);
  migrateGroupsToResources(groups, copy as Parameters<typeof migrateGroupsToResources>[1]);
  return copy;
}

/** No rules at all: every online node is allowed, nothing is affine. */
export const NO_RULES: RulesView = viewOf(emptyCompiledRules(), () => []);

/** Manage rounds before the first persistent group migration attempt. */
export const GROUP_MIGRATION_FIRST_ROUND = 3;
/** Manage rounds between group migration attempts. */
const GROUP_MIGRATION_RETRY_ROUNDS = 6;
/** The pve-manager version every node needs before groups are migrated to rules. */
const GROUP_MIGRATION_MIN_VERSION = '9.0.0~16';

/**
 * Service states the LRM does not count as active work (its active_service_count): an LRM
 * waiting for its agent lock with no service in any other state on its node is idle.
 */
const LRM_INACTIVE_SERVICE_STATES: ReadonlySet<string> = new Set(['stopped', 'freeze', 'error', 'request_start']);

/** What the rules state needs from the manager round. */
export interface RulesHost {
  readonly env: Env;
  nodeState(node: string): string;
  listNodes(): string[];
  onlineNodes(): string[];
  /**
   * The default profile's handling of config problems (true under pve-9.2): bad lines and
   * values of the rules and groups configs are logged (once per change), a broken groups
   * config stops the persistent migration with an error naming file, line, section and
   * property, and a failed read of it is logged and retried instead of aborting the round.
   * False (pve-5.2.0) keeps the reference's log: it prints parse problems on stderr only.
   */
  readonly logConfigWarnings: boolean;
}

/** Parses `text` unless it is the text parsed last time (the result is never mutated). */
class ParseCache<T> {
  private text: string | undefined;
  private result: ParseResult<T> | undefined;

  constructor(private readonly parse: (text: string) => ParseResult<T>) {}

  get(text: string): ParseResult<T> {
    if (this.result === undefined || text !== this.text) {
      this.result = this.parse(text);
      this.text = text;
    }
    return this.result;
  }
}

/**
 * The manager's rules: read every round, parsed only when the text changed, and transformed and
 * compiled again only when the rules, the groups or the node list changed. Also runs the
 * persistent groups → rules migration.
 */
export class RulesState {
  view: RulesView;
  private lastRulesDigest: string | undefined;
  private lastGroupsDigest: string | undefined;
  private lastNodes: string | undefined;
  private compiledOnce = false;
  private lastWarnedDigests: string | undefined;
  private nextGroupMigrationRound = GROUP_MIGRATION_FIRST_ROUND;
  private readonly rulesCache = new ParseCache<Rule>((text) => parseRulesConfig(text));
  private readonly groupsCache = new ParseCache<Group>((text) => parseGroupsConfig(text));

  constructor(private readonly host: RulesHost) {
    this.view = viewOf(emptyCompiledRules(), () => host.onlineNodes());
  }

  /**
   * Reads rules and groups and recompiles if needed. Returns the service config the round
   * works with: `sc` itself, or, when services belong to a group, a copy in which those
   * services' `failback` follows their group (the reference edits its in-memory copy).
   */
  update(readConfig: Snapshot<ServiceConfig>, groupsText: string): Snapshot<ServiceConfig> {
    const env = this.host.env;
    const parsedRules = this.rulesCache.get(env.readRulesConfig());
    const parsedGroups = this.groupsCache.get(groupsText);
    const groups = parsedGroups.config;
    const rulesDigest = parsedRules.config.digest;
    if (this.host.logConfigWarnings) {
      // once per content change, not every round
      const key = `${rulesDigest}/${groups.digest}`;
      if (key !== this.lastWarnedDigests) {
        for (const w of [...parsedRules.warnings, ...parsedGroups.warnings]) env.log('warning', w.message);
        this.lastWarnedDigests = key;
      }
    }
    const sc = withGroupFailback(readConfig, groups);

    const nodes = this.host.listNodes();
    const nodesKey = nodes.join(',');
    if (
      this.compiledOnce &&
      nodesKey === this.lastNodes &&
      rulesDigest === this.lastRulesDigest &&
      groups.digest === this.lastGroupsDigest
    ) {
      return sc;
    }
    // the transforms mutate: work on a copy, the cached parse stays as read
    const rules = cloneRulesConfig(parsedRules.config);
    migrateGroupsToRules(rules, groups, sc);
    for (const msg of transformRules(rules, nodes)) env.log('info', msg);
    const compiled = compileRules(rules, nodes);
    this.view = viewOf(compiled, () => this.host.onlineNodes());
    this.compiledOnce = true;
    this.lastNodes = nodesKey;
    this.lastRulesDigest = rulesDigest;
    this.lastGroupsDigest = groups.digest;
    return sc;
  }

  /** Whether `node`'s LRM counts as active for the migration: `active`, or idle (see below). */
  private lrmIsActiveOrIdle(node: string, lrmState: string): boolean {
    if (lrmState === 'active') return true;
    if (lrmState !== 'wait_for_agent_lock') return false;
    // waiting for the agent lock is idle only with nothing to do on the node (the last
    // service status the manager wrote, which is this round's until the round ends)
    const services = this.host.env.readManagerStatus().service_status ?? {};
    const entries = lazyRecordEntries(services) ?? new Map(Object.entries(services));
    for (const sd of entries.values()) if (sd.node === node && !LRM_INACTIVE_SERVICE_STATES.has(sd.state)) return false;
    return true;
  }

  /**
   * Migrates legacy HA groups into node-affinity rules once every node is online, runs a new
   * enough pve-manager and has an active (or idle) LRM in mode active (first in manage round
   * 3, then every 6 rounds). Under pve-9.2 a groups config with bad lines or values is
   * reported and not migrated (its broken groups would be lost with the file).
   */
  tryPersistentGroupMigration(round: number, lrmModes: Record<string, string>): void {
    const env = this.host.env;
    if (round < this.nextGroupMigrationRound) return;
    let groupsText: string;
    try {
      groupsText = env.readGroupConfig();
    } catch (err) {
      // the reference's read dies out of the manager round
      if (!this.host.logConfigWarnings) throw err;
      env.log('notice', 'start ha group migration...');
      return this.failGroupMigration(
        round,
        `abort ha groups migration: could not read '${GROUPS_CONFIG_FILE}' - ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const parsed = parseGroupsConfig(groupsText);
    const groups = parsed.config;
    const broken = this.host.logConfigWarnings && parsed.warnings.length > 0;
    if (Object.keys(groups.ids).length === 0 && !broken) return;

    env.log('notice', 'start ha group migration...');
    if (broken) {
      for (const warning of parsed.warnings) env.log('err', `ha groups migration: ${warning.message}`);
      const count = parsed.warnings.length;
      return this.failGroupMigration(
        round,
        `abort ha groups migration: '${GROUPS_CONFIG_FILE}' has ${count} ${count === 1 ? 'problem' : 'problems'}, fix ${count === 1 ? 'it' : 'them'} first`,
      );
    }

    for (const node of this.host.listNodes()) {
      const state = this.host.nodeState(node);
      env.log('notice', `ha groups migration: node '${node}' is in state '${state}'`);
      if (state !== 'online')
        return this.failGroupMigration(round, `abort ha groups migration: node '${node}' is not online`);
      const lrm = env.readLrmStatus(node);
      const lrmState = lrm.state ?? 'unknown';
      const lrmMode = lrmModes[node] ?? lrm.mode ?? 'active';
      env.log('notice', `ha groups migration: lrm '${node}' is in state '${lrmState}' and mode '${lrmMode}'`);
      if (!this.lrmIsActiveOrIdle(node, lrmState)) {
        return this.failGroupMigration(
          round,
          `abort ha groups migration: lrm '${node}' is not in state 'active' or 'idle'`,
        );
      }
      if (lrmMode !== 'active') {
        return this.failGroupMigration(round, `abort ha groups migration: lrm '${node}' is not in mode 'active'`);
      }
      const version = env.getNodeVersion(node) ?? '';
      env.log('notice', `ha groups migration: node '${node}' has version '${version}'`);
      if (compareDebianVersions(version, GROUP_MIGRATION_MIN_VERSION) < 0) {
        return this.failGroupMigration(
          round,
          `abort ha groups migration: node '${node}' needs at least pve-manager version '${GROUP_MIGRATION_MIN_VERSION}'`,
        );
      }
    }

    try {
      const rules = parseRulesConfig(env.readRulesConfig()).config;
      const plan = buildPersistentGroupMigration(rules, groups, env.readServiceConfig());
      env.writeRulesConfig(plan.rulesText);
      env.log('notice', 'ha groups migration: migration to rules config successful');
      for (const [sid, upd] of Object.entries(plan.serviceUpdates)) {
        env.updateServiceConfig(sid, upd.set, upd.delete);
      }
      env.log('notice', 'ha groups migration: migration to resources config successful');
      env.deleteGroupConfig();
      env.log('notice', 'ha groups migration: group config deletion successful');
      env.log('notice', 'ha groups migration successful');
      this.nextGroupMigrationRound = Number.POSITIVE_INFINITY;
    } catch (err) {
      this.failGroupMigration(round, `abort ha groups migration: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private failGroupMigration(round: number, reason: string): void {
    const env = this.host.env;
    env.log('err', reason);
    env.log('err', 'ha groups migration failed');
    env.log(
      'notice',
      `retry ha groups migration in ${GROUP_MIGRATION_RETRY_ROUNDS} rounds (~ ${GROUP_MIGRATION_RETRY_ROUNDS * 10} seconds)`,
    );
    this.nextGroupMigrationRound = round + GROUP_MIGRATION_RETRY_ROUNDS;
  }
}
