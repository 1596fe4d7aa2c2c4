// Helpers shared by this package's tests and the benchmark (not exported from the package).

import { scoreFlatInPlace } from '@poise/topsis';
import { type ClusterView, prepareLoads, writeCriteria } from '../fast';
import type { Scratch } from '../scratch';
import { CRITERIA_COUNT, schedulerCriteria } from '../kernels';

/** mulberry32 (tools/test-support/prng.ts): every random test case is reproducible. */
export { mulberry32 as prng } from '@poise/test-support/prng';

/**
 * The start kernel the fused one (`./start-kernel`) replaced, as `scoreNodesToStart` ran it: per
 * node the criteria of its state written by `writeCriteria` (prefix folds, top-3 maxima), then
 * `scoreFlatInPlace` over the matrix. The scores of the view's nodes in `scratch.scores[0..n)`
 * (returned); the tests compare the fused kernel with it bit for bit, the benchmark times both.
 */
export function previousStartKernel(view: ClusterView, addCpu: number, addMem: number, scratch: Scratch): Float64Array {
  const n = view.n;
  scratch.ensure(n, n);
  prepareLoads(view, scratch);
  for (let k = 0; k < n; k++) {
    const cpu = view.cpu[k]! + (addCpu === 0 ? view.maxcpu[k]! : addCpu);
    const mem = view.mem[k]! + addMem;
    writeCriteria(
      scratch,
      n,
      scratch.matrix,
      k * CRITERIA_COUNT,
      k,
      cpu / view.maxcpu[k]!,
      mem / view.maxmem[k]!,
      -1,
      0,
      0,
    );
  }
  return scoreFlatInPlace(
    schedulerCriteria,
    { data: scratch.matrix, rows: n, cols: CRITERIA_COUNT },
    scratch.scores,
    scratch.ideal,
  );
}
