/**
 * The report of the reference's `test_rules_config.pl` for one rules file, i.e. the content
 * of `rules_cfgs/<name>.cfg.expect`.
 */
import { canonicalJson } from './canonical-json';
import { compileRules } from './compile';
import { parseRulesConfig } from './config';
import { transformRules } from './transform';

/** The nodes the reference test harness passes to transform and compile. */
const RULES_TEST_NODES: readonly string[] = ['node1', 'node2', 'node3'];

/**
 * `--- Log ---`, one line per drop message, `--- Config ---`, the transformed config as
 * canonical JSON, `--- Compiled Config ---`, the compiled rules as canonical JSON.
 * Parse warnings are not part of the report (the reference prints them on stderr).
 */
export function rulesCheckReport(text: string, nodes: readonly string[] = RULES_TEST_NODES): string {
  const { config } = parseRulesConfig(text);
  const messages = transformRules(config, nodes);
  const compiled = compileRules(config, nodes);
  return [
    '--- Log ---\n',
    ...messages.map((message) => `${message}\n`),
    '--- Config ---\n',
    canonicalJson({ digest: config.digest, ids: config.ids, order: config.order }),
    '--- Compiled Config ---\n',
    canonicalJson(compiled),
  ].join('');
}
