import { describe, expect, test } from 'vitest';
import { loadHighs } from './testing/oracle';
import { ORACLE_SAMPLE, oracleSample } from './testing/oracle-shard';

// The exact oracle on a fixed sample of the full sweep's seeds (fast tier; the sweep itself is
// oracle-<k>.slow.test.ts): see testing/oracle-shard.ts.
describe('oracle sample', () => {
  test(`the planner agrees with HiGHS on ${ORACLE_SAMPLE} random small clusters`, async () => {
    const tally = oracleSample(await loadHighs());
    expect(tally.failures).toEqual([]);
    expect(tally.instances).toBe(ORACLE_SAMPLE);
  });
});
