/**
 * Migration of legacy HA groups to node-affinity rules (PVE::HA::Groups), in memory every
 * manager round (spec §3.4 step 8) and persistently once the cluster is upgraded (step 4).
 */
import { cloneRulesConfig, writeRulesConfig, cloneNodePriorities } from './config';
import { getOwn, nullRecord } from './records';
import { lowestOrder } from './rule-set';
import type { Group, GroupsConfig, NodeAffinityRule, RulesConfig, ServiceConfigEntry, SidSet } from './types';
import { sortNames } from '@poise/usage';

/** Id of the node-affinity rule generated from group `group`. */
export function groupRuleId(group: string): string {
  return `ha-group-${group}`;
}

/** Comment of the node-affinity rule generated from group `group`. */
function groupRuleComment(group: string): string {
  return `Generated from HA group '${group}'.`;
}

/** The group a service config entry names, read as Perl does: missing, '' and '0' are none. */
export function serviceGroup(entry: Readonly<ServiceConfigEntry> | undefined): string | undefined {
  const group = entry?.group;
  if (typeof group === 'number') return group === 0 ? undefined : String(group);
  return typeof group === 'string' && group !== '' && group !== '0' ? group : undefined;
}

/** The group `id` of a groups config (own entries only: `constructor` is a name like any other). */
function findGroup(groups: Pick<GroupsConfig, 'ids'>, id: string): Group | undefined {
  return getOwn(groups.ids, id);
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
  serviceConfig: Readonly<Record<string, Readonly<ServiceConfigEntry>>>,
): RulesConfig {
  const groupResources = new Map<string, SidSet>();
  for (const sid of sortNames(Object.keys(serviceConfig))) {
    const group = serviceGroup(serviceConfig[sid]);
    if (group === undefined) continue;
    let resources = groupResources.get(group);
    if (resources === undefined) groupResources.set(group, (resources = nullRecord<1>()));
    resources[sid] = 1;
  }

  let order = lowestOrder(rules.order);
  for (const group of sortNames(groupResources.keys())) {
    const definition = findGroup(groups, group);
    if (!definition) continue;
    const rule: NodeAffinityRule = {
      type: 'node-affinity',
      resources: groupResources.get(group) as SidSet,
      nodes: cloneNodePriorities(definition.nodes),
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
export function migrateGroupsToResources<T extends Record<string, ServiceConfigEntry>>(
  groups: Pick<GroupsConfig, 'ids'>,
  serviceConfig: T,
): T {
  for (const sid of Object.keys(serviceConfig)) {
    const entry = serviceConfig[sid] as ServiceConfigEntry;
    const group = serviceGroup(entry);
    if (group === undefined) continue;
    entry.failback = findGroup(groups, group)?.nofailback ? 0 : 1;
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
 *
 * @throws RulesError `invalid-value` when a rule cannot be written (see `writeRulesConfig`).
 */
export function buildPersistentGroupMigration(
  rules: RulesConfig,
  groups: Pick<GroupsConfig, 'ids'>,
  serviceConfig: Readonly<Record<string, Readonly<ServiceConfigEntry>>>,
): PersistentGroupMigration {
  const migrated = migrateGroupsToRules(cloneRulesConfig(rules), groups, serviceConfig);
  const serviceUpdates: PersistentGroupMigration['serviceUpdates'] = nullRecord();
  for (const sid of sortNames(Object.keys(serviceConfig))) {
    const group = serviceGroup(serviceConfig[sid]);
    if (group === undefined) continue;
    const update: { delete: string[]; set: { failback?: number } } = { delete: ['group'], set: {} };
    if (findGroup(groups, group)?.nofailback) update.set.failback = 0;
    serviceUpdates[sid] = update;
  }
  return { rules: migrated, rulesText: writeRulesConfig(migrated), serviceUpdates };
}
