/**
 * Rules at scale: a generated config of 1,000 blocks (21,000 rules over 32,000 resources, see
 * `large-config.ts`) parses, checks, transforms and compiles to the results known by
 * construction. Time is measured in `bench/rules.ts`, never here.
 */
import { describe, expect, test } from 'vitest';

import {
  cloneRulesConfig,
  compileRules,
  getNodeAffinity,
  parseRulesConfig,
  transformRules,
  writeRulesConfig,
} from './index';
import { canonicalJson } from './canonical-json';
import { dropRuleMessage } from './transform';
import { getNegativePartners, getPositivePartners } from './queries';
import {
  LARGE_CONFIG_NODES,
  LARGE_CONFIG_RULES_PER_BLOCK,
  largeConfigBlockDrops,
  largeConfigRuleId,
  largeRulesConfigText,
} from './testing/large-config';
import { referenceTransform } from './testing/reference';
import { compareNames } from '@poise/usage';

const BLOCKS = 1000;

describe('a generated config of 21,000 rules over 32,000 resources', () => {
  const text = largeRulesConfigText(BLOCKS);
  const { config, warnings } = parseRulesConfig(text);
  const parsed = cloneRulesConfig(config);
  const messages = transformRules(config, LARGE_CONFIG_NODES);
  const compiled = compileRules(config, LARGE_CONFIG_NODES);

  test('parses every rule without warnings', () => {
    expect(warnings).toEqual([]);
    expect(Object.keys(parsed.ids)).toHaveLength(BLOCKS * LARGE_CONFIG_RULES_PER_BLOCK);
  });

  test('drops exactly the 11 infeasible rules of every block, one message per conflict, by rule id', () => {
    const expected: Array<[string, string]> = [];
    for (let b = 0; b < BLOCKS; b++) expected.push(...largeConfigBlockDrops(b));
    // stable by rule id: a rule's messages keep their check order
    expected.sort((x, y) => compareNames(x[0], y[0]));
    expect(messages).toHaveLength(11 * BLOCKS);
    expect(messages).toEqual(expected.map(([id, reason]) => dropRuleMessage(id, reason)));
  });

  test('keeps, merges and infers the rules of every block', () => {
    // per block: na1..na4, n1, n2, pc, off (8) + _merged-pa-pb + 2 implicit negatives = 11
    expect(Object.keys(config.ids)).toHaveLength(11 * BLOCKS);
    const b = 737;
    const s = (k: number) => `vm:${32 * b + k}`;
    const merged = `_merged-${largeConfigRuleId('pa', b)}-${largeConfigRuleId('pb', b)}`;
    expect(Object.keys(config.ids[merged]?.resources ?? {}).sort(compareNames)).toEqual(
      [s(2), s(3), s(4)].sort(compareNames),
    );
    expect(config.order[merged]).toBe(parsed.order[largeConfigRuleId('pa', b)]);
    for (const sid of [s(2), s(3)]) {
      expect(config.ids[`_implicit-negative-${merged}-${sid}-${s(5)}`]?.resources).toEqual({ [sid]: 1, [s(5)]: 1 });
    }
    expect(Object.keys(config.ids[largeConfigRuleId('na1', b)]?.resources ?? {}).sort(compareNames)).toEqual(
      [s(1), s(2), s(3), s(4)].sort(compareNames),
    );
    expect(config.ids[largeConfigRuleId('off', b)]?.disable).toBe(1);
  });

  test('compiles the lookups placement reads', () => {
    // per block: 7 resources with node affinity (s1..s4 via na1, s6, s7, s11)
    expect(Object.keys(compiled['node-affinity'])).toHaveLength(7 * BLOCKS);
    expect(Object.keys(compiled['resource-affinity'].positive)).toHaveLength(5 * BLOCKS);
    expect(Object.keys(compiled['resource-affinity'].negative)).toHaveLength(7 * BLOCKS);
    const b = 421;
    const s = (k: number) => `vm:${32 * b + k}`;
    const home = LARGE_CONFIG_NODES[b % 5] as string;
    expect(getNodeAffinity(compiled, s(4), LARGE_CONFIG_NODES)).toEqual({
      allowed: new Set([home]),
      pri: new Set([home]),
    });
    expect(getNodeAffinity(compiled, s(11), LARGE_CONFIG_NODES).pri).toEqual(new Set(['node4']));
    expect(getPositivePartners(compiled, s(3))).toEqual([s(2), s(4)].sort(compareNames));
    expect(getNegativePartners(compiled, s(5))).toEqual([s(2), s(3), s(4)].sort(compareNames));
  });

  test('writes back to text that parses to the same rules', () => {
    expect(canonicalJson(parseRulesConfig(writeRulesConfig(parsed)).config.ids)).toBe(canonicalJson(parsed.ids));
  });
});

test('a smaller generated config transforms exactly as the pairwise reference', () => {
  const { config } = parseRulesConfig(largeRulesConfigText(40));
  const slow = cloneRulesConfig(config);
  expect(transformRules(config, LARGE_CONFIG_NODES)).toEqual(referenceTransform(slow, LARGE_CONFIG_NODES));
  expect(canonicalJson(config)).toBe(canonicalJson(slow));
});
