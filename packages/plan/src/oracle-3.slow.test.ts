import { describe, expect, test } from 'vitest';
import { loadHighs } from './testing/oracle';
import { oracleShard } from './testing/oracle-shard';

// The exact oracle, shard 3 of 4 (vitest runs the files on every core): see testing/oracle-shard.ts.
describe('oracle shard 3 of 4', () => {
  test('the planner agrees with HiGHS on random small clusters', async () => {
    const tally = oracleShard(await loadHighs(), 3, 4);
    expect(tally.failures).toEqual([]);
  }, 1_800_000);
});
