/**
 * Names that are also JavaScript object keys behave like any other name in every part of the
 * engine: as rule ids, node names, service ids and group names.
 */
import { describe, expect, test } from 'vitest';

import {
  buildPersistentGroupMigration,
  cloneRulesConfig,
  compileRules,
  findNegativeAffinityConflict,
  getNodeAffinity,
  getPositivePartnersToMove,
  getResourceAffinity,
  migrateGroupsToResources,
  migrateGroupsToRules,
  parseGroupsConfig,
  parseRulesConfig,
  transformRules,
  writeRulesConfig,
  type CompiledRules,
  type ServiceStatus,
} from './index';
import { canonicalJson } from './canonical-json';
import { emptyRulesConfig } from './config';
import { getActiveStationaryResourceBundles } from './queries';
import { sortedRuleIds } from './rule-set';
import { type ServiceConfig } from './types';

/** Valid as section ids and node names (pve-configid / pve-node); `__proto__` is not. */
const KEY_NAMES = ['toString', 'constructor', 'hasOwnProperty', 'valueOf'];

describe.each(KEY_NAMES)("the name '%s'", (name) => {
  test('is a rule id like any other: parsed once, no duplicate warning, transformed, written back', () => {
    const text =
      `node-affinity: ${name}\n\tresources vm:1\n\tnodes node1\n\tstrict 1\n\n` +
      `resource-affinity: r-${name}\n\tresources vm:1,vm:2\n\taffinity positive\n`;
    const { config, warnings } = parseRulesConfig(text);
    expect(warnings).toEqual([]);
    expect(Object.keys(config.ids)).toEqual([name, `r-${name}`]);
    expect(config.order[name]).toBe(1);
    expect(sortedRuleIds(config)).toEqual([name, `r-${name}`]);
    const transformed = cloneRulesConfig(config);
    expect(transformRules(transformed, ['node1', 'node2'])).toEqual([]);
    // vm:2 joins the node-affinity rule through the positive rule
    expect(Object.keys(transformed.ids[name]?.resources ?? {}).sort()).toEqual(['vm:1', 'vm:2']);
    expect(parseRulesConfig(writeRulesConfig(config)).config.ids).toEqual(config.ids);
  });

  test('is a property name like any other: unknown, so the line is refused with a warning', () => {
    const { config, warnings } = parseRulesConfig(`node-affinity: r1\n\tresources vm:1\n\tnodes node1\n\t${name} x\n`);
    expect(warnings.map((w) => w.reason)).toEqual([`unexpected property '${name}'`]);
    expect(Object.keys(config.ids.r1 ?? {}).sort()).toEqual(['nodes', 'resources', 'type']);
  });

  test('is a node name like any other: listed, added at -1 by a non-strict rule, and queried', () => {
    const { config } = parseRulesConfig(
      `node-affinity: strict\n\tresources vm:1\n\tnodes ${name}:2,node1\n\tstrict 1\n\n` +
        'node-affinity: loose\n\tresources vm:2\n\tnodes node1\n',
    );
    const nodes = ['node1', name];
    transformRules(config, nodes);
    const compiled = compileRules(config, nodes);
    expect(compiled['node-affinity']['vm:2']?.nodes).toEqual({ node1: { priority: 0 }, [name]: { priority: -1 } });
    const strict = getNodeAffinity(compiled, 'vm:1', nodes);
    expect([...strict.allowed].sort()).toEqual(['node1', name].sort());
    expect([...strict.pri]).toEqual([name]);
    const loose = getNodeAffinity(compiled, 'vm:2', nodes);
    expect([...loose.pri]).toEqual(['node1']);
  });

  test('is a group name like any other', () => {
    const groups = parseGroupsConfig(`group: ${name}\n\tnodes node2\n\tnofailback 1\n`).config;
    const services: ServiceConfig = {
      'vm:1': { node: 'node1', group: name },
      'vm:2': { node: 'node1', group: 'valueOf' },
    };
    const rules = migrateGroupsToRules(emptyRulesConfig(), groups, services);
    expect(Object.keys(rules.ids)).toEqual(name === 'valueOf' ? ['ha-group-valueOf'] : [`ha-group-${name}`]);
    const withFailback = migrateGroupsToResources(groups, structuredClone(services));
    expect(withFailback['vm:1']?.failback).toBe(0);
    const plan = buildPersistentGroupMigration(emptyRulesConfig(), groups, services);
    expect(plan.serviceUpdates['vm:1']).toEqual({ delete: ['group'], set: { failback: 0 } });
  });

  test('an unknown group of that name is unknown, not an inherited property', () => {
    const groups = parseGroupsConfig('group: other\n\tnodes node2\n').config;
    const services: ServiceConfig = { 'vm:1': { node: 'node1', group: name } };
    expect(migrateGroupsToRules(emptyRulesConfig(), groups, services).ids).toEqual({});
    expect(migrateGroupsToResources(groups, structuredClone(services))['vm:1']?.failback).toBe(1);
  });
});

describe.each([...KEY_NAMES, '__proto__'])("the service id and node name '%s' in queries", (name) => {
  const compiled = (): CompiledRules => {
    const { config } = parseRulesConfig(
      'resource-affinity: together\n\tresources vm:1,vm:2\n\taffinity positive\n\n' +
        'resource-affinity: apart\n\tresources vm:1,vm:3\n\taffinity negative\n',
    );
    transformRules(config, ['node1', 'node2']);
    return compileRules(config, ['node1', 'node2']);
  };

  test('a service id without rules has no affinity, and unknown partners are ignored', () => {
    const rules = compiled();
    const status: ServiceStatus = JSON.parse(
      `{"${name}": {"state": "started", "node": "node1"}, "vm:1": {"state": "started", "node": "node1"}}`,
    );
    expect(getNodeAffinity(rules, name, ['node1', 'node2']).allowed).toEqual(new Set(['node1', 'node2']));
    expect(getResourceAffinity(rules, name, status)).toEqual({ together: new Map(), separate: new Map() });
    // vm:1's partners vm:2 and vm:3 have no status: nothing counts
    expect(getResourceAffinity(rules, 'vm:1', status)).toEqual({ together: new Map(), separate: new Map() });
    expect(findNegativeAffinityConflict(rules, 'vm:1', 'node1', status)).toBeUndefined();
    expect(getPositivePartnersToMove(rules, 'vm:1', 'node2', status)).toEqual([]);
    const bundles = getActiveStationaryResourceBundles(rules, status);
    expect([...bundles.keys()].sort()).toEqual([name, 'vm:1'].sort());
  });

  test('a node of that name counts like any other node', () => {
    const rules = compiled();
    const status: ServiceStatus = {
      'vm:2': { state: 'started', node: name },
      'vm:3': { state: 'started', node: name },
    };
    expect(getResourceAffinity(rules, 'vm:1', status)).toEqual({
      together: new Map([[name, 1]]),
      separate: new Map([[name, 1]]),
    });
    expect(findNegativeAffinityConflict(rules, 'vm:1', name, status)).toBe('vm:3');
  });

  test('compiled output is plain data for that name', () => {
    const { config } = parseRulesConfig('node-affinity: loose\n\tresources vm:1\n\tnodes node1\n');
    const rules = compileRules(config, ['node1', name]);
    const nodes = rules['node-affinity']['vm:1']?.nodes ?? {};
    expect(Object.keys(nodes).sort()).toEqual(['node1', name].sort());
    expect(canonicalJson(nodes)).toContain(`"${name}" : {`);
  });
});
