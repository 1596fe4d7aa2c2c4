import { describe, it } from 'vitest';
import { ORACLE_RUNS, ORACLE_SAMPLE_RUNS, oracleAgreement, permutationInvariance } from './testing/oracle';

// The oracle properties' runs that the fast tier's sample (extremes.test.ts) leaves out.
describe(`mathjs oracle (80-digit BigNumbers), the other ${ORACLE_RUNS - ORACLE_SAMPLE_RUNS} runs`, () => {
  it('normalisation, ideal points, distances and scores match the oracle on columns scaled to the extremes', () =>
    oracleAgreement(ORACLE_RUNS - ORACLE_SAMPLE_RUNS));
  it('scores are invariant under row permutation (up to rounding) on any finite matrix', () =>
    permutationInvariance(ORACLE_RUNS - ORACLE_SAMPLE_RUNS));
});
