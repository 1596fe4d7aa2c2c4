/**
 * `@poise/rules`: the Proxmox VE HA rules engine (`PVE::HA::Rules`, its node-affinity and
 * resource-affinity plugins, and the legacy HA groups), as pure functions.
 *
 * - Configs: `parseRulesConfig` / `writeRulesConfig`, `parseGroupsConfig` / `writeGroupsConfig`
 *   (SectionConfig text; bad content becomes `warnings`, never an exception).
 * - Feasibility: `RULE_CHECKS`, `findRuleConflicts`, `dropInfeasibleRules`.
 * - Transforms: `transformRules` (checks, drop, merge, implicit negatives, node affinity).
 * - Compile and query: `compileRules`, `getNodeAffinity`, `getResourceAffinity`, ….
 * - Groups: `migrateGroupsToRules`, `migrateGroupsToResources`, `buildPersistentGroupMigration`.
 * - Everything at once for a validator or a UI: `analyzeRules`.
 * - The reference's `rules_cfgs/*.expect` report: `rulesCheckReport`.
 *
 * No I/O, clock, logging or `node:*` imports: messages are returned as values. Records keyed by
 * rule ids, node names or sids are created without a prototype and read through own
 * properties, so `toString`, `constructor` or `__proto__` are names like any other.
 * Named exports only; each is documented where it is declared.
 */
export { RulesError } from './errors';
export type { RulesErrorCode } from './errors';
export { GROUPS_CONFIG_FILE, cloneRulesConfig, parseGroupsConfig, parseRulesConfig, writeRulesConfig } from './config';
export { enabledRules } from './rule-set';
export { compileRules, emptyCompiledRules } from './compile';
export {
  CURRENT_NODE_STATES,
  TARGET_NODE_STATES,
  applyNegativeResourceAffinity,
  applyPositiveResourceAffinity,
  findNegativeAffinityConflict,
  getBalancingCandidates,
  balancingCandidatesCache,
  type CachedBalancingCandidates,
  getNodeAffinity,
  getPositivePartnersToMove,
  getResourceAffinity,
  isAllowedOnNode,
} from './queries';
export type { BalancingCandidate, NodeAffinityResult, ResourceAffinityResult } from './queries';
export {
  buildPersistentGroupMigration,
  groupRuleId,
  migrateGroupsToResources,
  migrateGroupsToRules,
  serviceGroup,
} from './groups';
export type { PersistentGroupMigration } from './groups';
export type { CheckContext, PositiveComponent, RuleCheck, RuleConflict } from './checks';
export { findRuleConflicts, transformRules } from './transform';
export type { FoundConflict } from './transform';
export { rulesCheckReport } from './report';
export type {
  Affinity,
  AffinityPairs,
  CompiledNodeAffinity,
  CompiledRules,
  ConfigWarning,
  Flag,
  Group,
  GroupsConfig,
  NodeAffinityRule,
  NodePriorities,
  NodePriority,
  ParseResult,
  ResourceAffinityRule,
  Rule,
  RulesConfig,
  SectionConfigData,
  ServiceConfigEntry,
  ServiceStatus,
  ServiceStatusEntry,
  SidSet,
} from './types';
