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
export { configDigest } from './section-config';
export type { DecodeResult, PropertySchema, SectionPlugin } from './section-config';
export {
  GROUPS_CONFIG_FILE,
  SID_PATTERN,
  cloneRulesConfig,
  decodeText,
  emptyRulesConfig,
  encodeText,
  parseGroupsConfig,
  parseRulesConfig,
  splitList,
  writeGroupsConfig,
  writeRulesConfig,
} from './config';
export { enabledRules, sortedRuleIds } from './rule-set';
export type { EnabledRulesByType } from './rule-set';
export { compileRules, emptyCompiledRules } from './compile';
export {
  CURRENT_NODE_STATES,
  TARGET_NODE_STATES,
  applyNegativeResourceAffinity,
  applyPositiveResourceAffinity,
  findNegativeAffinityConflict,
  getActiveStationaryResourceBundles,
  getBalancingCandidates,
  balancingCandidatesCache,
  type CachedBalancingCandidates,
  getNegativePartners,
  getNodeAffinity,
  getPositivePartners,
  getPositivePartnersToMove,
  getResourceAffinity,
  getUsedServiceNodes,
  isAllowedOnNode,
} from './queries';
export type { BalancingCandidate, NodeAffinityResult, ResourceAffinityResult, UsedServiceNodes } from './queries';
export {
  buildPersistentGroupMigration,
  groupRuleId,
  migrateGroupsToResources,
  migrateGroupsToRules,
  serviceGroup,
} from './groups';
export type { PersistentGroupMigration } from './groups';
export {
  RULE_CHECKS,
  effectiveResourceAffinity,
  negativeFitsNodes,
  negativeNodeAffinityConsistency,
  positiveNegativeConsistency,
  positiveSingleNodeAffinity,
  singleNodeAffinityPerResource,
  singlePriorityNodeAffinityForResourceAffinity,
} from './checks';
export type { CheckContext, PositiveComponent, RuleCheck, RuleConflict } from './checks';
export { applyRuleTransforms, dropRuleMessage, findRuleConflicts, transformRules } from './transform';
export type { FoundConflict } from './transform';
export { analyzeRules } from './analyze';
export type { RulesAnalysis } from './analyze';
export { canonicalJson } from './canonical-json';
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
  RuleType,
  RulesConfig,
  SectionConfigData,
  ServiceConfig,
  ServiceConfigEntry,
  ServiceStatus,
  ServiceStatusEntry,
  SidSet,
} from './types';
