/**
 * Migration of legacy HA groups to node-affinity rules (PVE::HA::Groups), in memory every
 * manager round (spec §3.4 step 8) and persistently once the cluster is upgraded (step 4).
 */
import { writeRulesConfig } from './config';
import { sortedStrings } from './sort';
import type {
  GroupsConfig,
  NodeAffinityRule,
  NodePriorities,
  RulesConfig,
  ServiceConfig,
  SidSet,
} from './types';

/** Id of the node-affinity rule generated from group `group`. */
export function groupRuleId(group: string): string {
  return `ha-group-${group}`;
}

/** Comment of the node-affinity rule generated from group `group`. */
export function groupRuleComment(group: string): string {
  return `Generated from HA group '${group}'.`;
}

/** Smallest `order` value, or 0 for none (the reference sorts ascending and takes the first). */
export function lowestOrder(order: Record<string, number>): number {
  const values = Object.values(order);
  return values.length === 0 ? 0 : Math.min(...values);
}

/**
 * Adds one node-affinity rule per group that services use (migrate_groups_to_rules): id
 * `ha-group-<group>`, the services with `group` as resources, the group's nodes and priorities,
 * `strict` = the group's `restricted` (omitted if unset) and a generated comment. Groups that
 * do not exist are skipped. Orders continue from the lowest existing order + 1 (a reference
 * quirk), groups taken in byte order. Mutates `rules` and returns it.
 */
export function migrateGroupsToRules(
  rules: RulesConfig,
  groups: Pick<GroupsConfig, 'ids'>,
  serviceConfig: ServiceConfig,
): RulesConfig {
  const groupResources = new Map<string, SidSet>();
  for (const sid of sortedStrings(Object.keys(serviceConfig))) {
    const group = serviceConfig[sid]?.group;
    if (!group) continue;
    const resources = groupResources.get(group) ?? {};
    resources[sid] = 1;
    groupResources.set(group, resources);
  }

  let order = lowestOrder(rules.order);
  for (const group of sortedStrings(groupResources.keys())) {
    const definition = groups.ids[group];
    if (!definition) continue;
    const nodes: NodePriorities = {};
    for (const [node, entry] of Object.entries(definition.nodes)) nodes[node] = { priority: entry.priority };
    const rule: NodeAffinityRule = {
      type: 'node-affinity',
      resources: groupResources.get(group) as SidSet,
      nodes,
      comment: groupRuleComment(group),
    };
    if (definition.restricted !== undefined) rule.strict = definition.restricted;
    const id = groupRuleId(group);
    rules.ids[id] = rule;
    rules.order[id] = ++order;
  }
  return rules;
}

/**
 * Sets `failback` of every service with a `group` to the group's `!nofailback`, 1 when the
 * group is unknown (migrate_groups_to_resources). Mutates `serviceConfig` and returns it.
 */
export function migrateGroupsToResources(
  groups: Pick<GroupsConfig, 'ids'>,
  serviceConfig: ServiceConfig,
): ServiceConfig {
  for (const sid of Object.keys(serviceConfig)) {
    const entry = serviceConfig[sid];
    if (!entry?.group) continue;
    entry.failback = groups.ids[entry.group]?.nofailback ? 0 : 1;
  }
  return serviceConfig;
}

/** What the persistent group migration writes (spec §3.4 step 4). */
export interface PersistentGroupMigration {
  /** The rules config with the generated rules added. */
  rules: RulesConfig;
  /** Its SectionConfig text, to write to the rules file. */
  rulesText: string;
  /**
   * Per-service config updates: `delete` the listed keys (always `group`), then `set` the
   * given values (`failback: 0` for services of a `nofailback` group).
   */
  serviceUpdates: Record<string, { delete: string[]; set: { failback?: number } }>;
}

/**
 * Builds everything the persistent migration writes, without touching the inputs: the rules
 * config (existing rules + generated ones) and its text, and the service config updates. The
 * caller writes the rules, applies the updates, then deletes the groups file.
 */
export function buildPersistentGroupMigration(
  rules: RulesConfig,
  groups: Pick<GroupsConfig, 'ids'>,
  serviceConfig: ServiceConfig,
): PersistentGroupMigration {
  const migrated = migrateGroupsToRules(structuredClone(rules), groups, serviceConfig);
  const serviceUpdates: PersistentGroupMigration['serviceUpdates'] = {};
  for (const sid of sortedStrings(Object.keys(serviceConfig))) {
    const group = serviceConfig[sid]?.group;
    if (!group) continue;
    const update: { delete: string[]; set: { failback?: number } } = { delete: ['group'], set: {} };
    if (groups.ids[group]?.nofailback) update.set.failback = 0;
    serviceUpdates[sid] = update;
  }
  return { rules: migrated, rulesText: writeRulesConfig(migrated), serviceUpdates };
}
