import { describe, expect, test } from 'vitest';

import { compileRules, parseRulesConfig, transformRules } from './index';
import { analyzeRules } from './analyze';
import { canonicalJson } from './canonical-json';

const TEXT =
  'node-affinity: na\n\tresources vm:1\n\tnodes node1:2,node2\n\n' +
  'resource-affinity: ra\n\tresources vm:1,vm:2\n\taffinity positive\n\n' +
  'resource-affinity: lonely\n\tresources vm:3\n\taffinity negative\n\n' +
  'resource-affinity: bad\n\tresources vm:4,vm:5\n\taffinity sideways\n';
const NODES = ['node1', 'node2', 'node3'];

describe('analyzeRules', () => {
  test('returns what transformRules and compileRules give, plus warnings, conflicts and dropped ids', () => {
    const analysis = analyzeRules(TEXT, NODES, 'my-rules.cfg');
    const { config } = parseRulesConfig(TEXT);
    const messages = transformRules(config, NODES);

    expect(analysis.dropMessages).toEqual(messages);
    expect(canonicalJson(analysis.transformed)).toBe(canonicalJson(config));
    expect(canonicalJson(analysis.compiled)).toBe(canonicalJson(compileRules(config, NODES)));
    expect(analysis.droppedRuleIds).toEqual(['lonely', 'na', 'ra']);
    expect(analysis.conflicts.map(({ ruleId, check }) => [ruleId, check])).toEqual([
      ['lonely', 'effective-resource-affinity'],
      ['na', 'single-priority-node-affinity-for-resource-affinity'],
      ['ra', 'single-priority-node-affinity-for-resource-affinity'],
    ]);
    expect(analysis.warnings.map((w) => [w.file, w.line, w.sectionId, w.key])).toEqual([
      ['my-rules.cfg', 15, 'bad', 'affinity'],
      ['my-rules.cfg', 15, 'bad', 'affinity'],
    ]);
  });

  test('leaves the parsed config as read', () => {
    const analysis = analyzeRules(TEXT, NODES);
    expect(Object.keys(analysis.parsed.ids)).toEqual(['na', 'ra', 'lonely']);
  });
});
