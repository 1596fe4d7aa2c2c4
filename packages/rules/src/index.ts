/**
 * The HA rules engine: SectionConfig parsing/writing of the rules and groups configs, group
 * migration, rule checks and transforms, compilation, and the placement queries the manager
 * uses. Named exports only.
 */
export { RulesError } from './errors';
export type { RulesErrorCode } from './errors';
export { byteCompare, sortedStrings } from './sort';
export {
  configDigest,
  parseSectionConfig,
  writeSectionConfig,
} from './section-config';
export type { DecodeResult, PropertySchema, SectionPlugin } from './section-config';
export {
  GROUPS_CONFIG_FILE,
  GROUP_PLUGINS,
  RULES_CONFIG_FILE,
  RULE_PLUGINS,
  SID_PATTERN,
  cloneRulesConfig,
  decodeNodes,
  decodeResources,
  decodeText,
  emptyRulesConfig,
  encodeText,
  parseGroupsConfig,
  parseRulesConfig,
  splitList,
  writeGroupsConfig,
  writeRulesConfig,
} from './config';
export { enabledRules, isRuleDisabled, sortedRuleIds } from './rule-set';
export { NON_STRICT_OTHER_NODE_PRIORITY, compileRules, emptyCompiledRules } from './compile';
export {
  CURRENT_NODE_STATES,
  TARGET_NODE_STATES,
  applyNegativeResourceAffinity,
  applyPositiveResourceAffinity,
  findNegativeAffinityConflict,
  getActiveStationaryResourceBundles,
  getNegativePartners,
  getNodeAffinity,
  getPositivePartners,
  getPositivePartnersToMove,
  getResourceAffinity,
  getUsedServiceNodes,
  isAllowedOnNode,
} from './queries';
export type { NodeAffinityResult, ResourceAffinityResult, UsedServiceNodes } from './queries';
export {
  buildPersistentGroupMigration,
  groupRuleComment,
  groupRuleId,
  lowestOrder,
  migrateGroupsToResources,
  migrateGroupsToRules,
} from './groups';
export type { PersistentGroupMigration } from './groups';
export {
  RULE_CHECKS,
  buildCheckContext,
  connectedRuleComponents,
  effectiveResourceAffinity,
  negativeFitsNodes,
  negativeNodeAffinityConsistency,
  positiveNegativeConsistency,
  positiveSingleNodeAffinity,
  singleNodeAffinityPerResource,
} from './checks';
export type { CheckContext, RuleCheck, RuleConflict } from './checks';
export {
  IMPLICIT_NEGATIVE_RULE_PREFIX,
  MERGED_RULE_PREFIX,
  dropInfeasibleRules,
  dropRuleMessage,
  inferImplicitNegativeRules,
  inferNodeAffinityForPositiveRules,
  mergeConnectedPositiveRules,
  transformRules,
} from './transform';
export { canonicalJson } from './canonical-json';
export { RULES_TEST_NODES, rulesCheckReport } from './report';
export { NODE_AFFINITY, RESOURCE_AFFINITY, RULE_TYPES } from './types';
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
