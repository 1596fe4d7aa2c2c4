import { describe, expect, test } from 'vitest';

import {
  buildPersistentGroupMigration,
  compileRules,
  migrateGroupsToResources,
  migrateGroupsToRules,
  parseGroupsConfig,
  parseRulesConfig,
} from './index';
import { emptyRulesConfig } from './config';
import { type ServiceConfig } from './types';

const groups = parseGroupsConfig(
  'group: group1\n\tnodes node1\n\trestricted 1\n\ngroup: group2\n\tnodes node2:2,node3\n\tnofailback 1\n\n' +
    'group: unused\n\tnodes node1\n',
).config;

const services = (): ServiceConfig => ({
  'vm:101': { node: 'node1', state: 'started', group: 'group1' },
  'vm:102': { node: 'node2', state: 'started', group: 'group2' },
  'vm:103': { node: 'node3', state: 'started', group: 'group2' },
  'vm:104': { node: 'node3', state: 'started', group: 'missing' },
  'vm:105': { node: 'node3', state: 'started' },
});

describe('migrateGroupsToRules', () => {
  test('each used, existing group becomes a node-affinity rule ha-group-<id>, restricted → strict', () => {
    const rules = migrateGroupsToRules(emptyRulesConfig(), groups, services());
    expect(rules.ids).toEqual({
      'ha-group-group1': {
        type: 'node-affinity',
        resources: { 'vm:101': 1 },
        nodes: { node1: { priority: 0 } },
        strict: 1,
        comment: "Generated from HA group 'group1'.",
      },
      'ha-group-group2': {
        type: 'node-affinity',
        resources: { 'vm:102': 1, 'vm:103': 1 },
        nodes: { node2: { priority: 2 }, node3: { priority: 0 } },
        comment: "Generated from HA group 'group2'.",
      },
    });
    expect(rules.order).toEqual({ 'ha-group-group1': 1, 'ha-group-group2': 2 });
  });

  test('orders continue from the lowest existing order, like the reference', () => {
    const { config } = parseRulesConfig(
      'resource-affinity: ra\n\tresources vm:1,vm:2\n\taffinity positive\n\n' +
        'resource-affinity: rb\n\tresources vm:3,vm:4\n\taffinity positive\n',
    );
    migrateGroupsToRules(config, groups, services());
    // lowest existing order is 1 → 2, 3 (colliding with 'rb', which the reference accepts)
    expect(config.order).toEqual({ ra: 1, rb: 2, 'ha-group-group1': 2, 'ha-group-group2': 3 });
  });

  test('the compiled group rules keep restricted groups strict and open the others', () => {
    const rules = migrateGroupsToRules(emptyRulesConfig(), groups, services());
    const compiled = compileRules(rules, ['node1', 'node2', 'node3']);
    expect(compiled['node-affinity']['vm:101']).toEqual({ nodes: { node1: { priority: 0 } } });
    expect(compiled['node-affinity']['vm:102']).toEqual({
      nodes: { node1: { priority: -1 }, node2: { priority: 2 }, node3: { priority: 0 } },
    });
  });
});

describe('migrateGroupsToResources', () => {
  test('failback is the negated nofailback of the group, 1 for unknown groups, untouched without group', () => {
    const config = migrateGroupsToResources(groups, services());
    expect(Object.fromEntries(Object.entries(config).map(([sid, entry]) => [sid, entry.failback]))).toEqual({
      'vm:101': 1,
      'vm:102': 0,
      'vm:103': 0,
      'vm:104': 1,
      'vm:105': undefined,
    });
  });
});

describe('buildPersistentGroupMigration', () => {
  test('builds the rules text and service updates without mutating the inputs', () => {
    const rules = emptyRulesConfig();
    const config = services();
    const migration = buildPersistentGroupMigration(rules, groups, config);
    expect(rules.ids).toEqual({});
    expect(config['vm:102']?.failback).toBeUndefined();
    expect(migration.rulesText).toBe(
      "node-affinity: ha-group-group1\n\tcomment Generated from HA group 'group1'.\n\tnodes node1\n\tresources vm:101\n\tstrict 1\n\n" +
        "node-affinity: ha-group-group2\n\tcomment Generated from HA group 'group2'.\n\tnodes node2:2,node3\n\tresources vm:102,vm:103\n\n",
    );
    expect(parseRulesConfig(migration.rulesText).config.ids).toEqual(migration.rules.ids);
    expect(migration.serviceUpdates).toEqual({
      'vm:101': { delete: ['group'], set: {} },
      'vm:102': { delete: ['group'], set: { failback: 0 } },
      'vm:103': { delete: ['group'], set: { failback: 0 } },
      'vm:104': { delete: ['group'], set: {} },
    });
  });
});
