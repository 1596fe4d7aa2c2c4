import { describe, test } from 'vitest';
import { PROPERTY_SAMPLE, PROPERTY_SEEDS, searchProperties, stepProperties } from './testing/planner-properties';

// The planner's properties on the seeds the fast tier's sample (planner.test.ts) leaves out.
describe('properties on random clusters (the rest of the sweep)', () => {
  const seeds = PROPERTY_SEEDS.slice(PROPERTY_SAMPLE);
  test('the search keeps every hard constraint, its incremental objective equals the direct one, and the bound is below it', () =>
    searchProperties(seeds));
  test('every step keeps capacity and anti-affinity, moves bundles whole, respects the per-node limit, and ends on the placement', () =>
    stepProperties(seeds));
});
