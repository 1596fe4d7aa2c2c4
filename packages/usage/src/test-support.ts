// Helpers shared by this package's tests (not exported from the package).

/** mulberry32 (tools/test-support/prng.ts): every random test case is reproducible. */
export { mulberry32 as prng } from '../../../tools/test-support/prng';
