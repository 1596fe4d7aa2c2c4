import { describe, expect, test } from 'vitest';
import { snapshot } from '@poise/env';
import { Crm } from './crm';
import { MemoryEnv } from './testing/memory-env';

describe('Crm: a service config that cannot be read', () => {
  test("logs 'could not read service config' and does not take part in the election", () => {
    const env = new MemoryEnv('node1', ['node1', 'node2', 'node3']);
    env.managerStatus = snapshot({});
    env.readServiceConfig = () => {
      throw new Error('cfs connection refused - not mounted?\n');
    };
    const crm = new Crm(env, { profile: 'pve-9.2' });
    expect(crm.doOneIteration()).toBe(true);
    expect(crm.currentState).toBe('wait_for_quorum');
    expect(env.lines).toEqual([
      'info 0 status change startup => wait_for_quorum',
      'err 0 could not read service config: cfs connection refused - not mounted?\n',
    ]);
  });
});
