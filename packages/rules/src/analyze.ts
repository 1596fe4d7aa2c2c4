/** One call for a config validator or a UI: parse, check, transform and compile a rules file. */
import { compileRules } from './compile';
import { cloneRulesConfig, parseRulesConfig, RULES_CONFIG_FILE } from './config';
import { applyRuleTransforms, dropRuleMessage, findRuleConflicts, removeRules, type FoundConflict } from './transform';
import type { CompiledRules, ConfigWarning, RulesConfig } from './types';
import { compareNames } from '@poise/usage';

/** Everything the engine concludes about one rules file, as values (nothing is logged). */
export interface RulesAnalysis {
  /** The config as parsed; bad lines and values are skipped (see `warnings`). */
  parsed: RulesConfig;
  /** Parse problems, each naming file, line, section and property where known. */
  warnings: ConfigWarning[];
  /** Every conflict the checks found, one per conflict, by rule id, then check order. */
  conflicts: FoundConflict[];
  /** `Drop rule '<id>', because <reason>.`, one per conflict, in `conflicts` order (as `transformRules`). */
  dropMessages: string[];
  /** Ids of the dropped rules, each once, in byte order. */
  droppedRuleIds: string[];
  /** The config after dropping and the transforms (merged, implicit and inferred rules). */
  transformed: RulesConfig;
  /** What placement reads (`getNodeAffinity`, `getResourceAffinity`, …). */
  compiled: CompiledRules;
}

/**
 * Parses `text` (named `file` in warnings), checks and transforms it for the cluster `nodes`
 * and compiles it, exactly as the manager does (minus the groups migration). Never throws on
 * bad content. `transformRules` gives the same `dropMessages` and `transformed`.
 */
export function analyzeRules(text: string, nodes: readonly string[], file: string = RULES_CONFIG_FILE): RulesAnalysis {
  const { config: parsed, warnings } = parseRulesConfig(text, file);
  const transformed = cloneRulesConfig(parsed);
  const conflicts = findRuleConflicts(transformed, nodes);
  const dropped = new Set(conflicts.map((conflict) => conflict.ruleId));
  removeRules(transformed, dropped);
  applyRuleTransforms(transformed);
  return {
    parsed,
    warnings,
    conflicts,
    dropMessages: conflicts.map(({ ruleId, reason }) => dropRuleMessage(ruleId, reason)),
    droppedRuleIds: [...dropped].sort(compareNames),
    transformed,
    compiled: compileRules(transformed, nodes),
  };
}
