import type { Problem } from './model';
import { CAPACITY_SLACK } from './objective';

/** Search nodes the exact feasibility search may visit before it gives up (default). */
const EXACT_SEARCH_BUDGET = 2_000_000;

/** Which constraints the exact search checks (to find out which family makes an input infeasible). */
export interface ExactChecks {
  readonly memory: boolean;
  readonly cores: boolean;
  readonly negatives: boolean;
}

/** The outcome of {@link findFeasible}. */
export type ExactResult =
  | { readonly kind: 'feasible'; readonly assign: Int32Array }
  | { readonly kind: 'infeasible' }
  | { readonly kind: 'unknown' };

/**
 * Exact feasibility: a depth-first search over the units (fewest allowed nodes first, then
 * largest memory) and their allowed nodes (most free memory first) with capacity and negative
 * affinity checked at every step, the total free memory and cores as a bound, and empty
 * identical nodes tried once (they are interchangeable). Decides whether any assignment
 * satisfies every hard constraint, unless it visits more than `budget` search nodes
 * (`unknown`). Used when the constructive heuristic fails, so a feasible input is never
 * reported infeasible by mistake on the sizes the oracle tests cover.
 */
export function findFeasible(
  p: Problem,
  checks: ExactChecks = { memory: true, cores: true, negatives: true },
  budget = EXACT_SEARCH_BUDGET,
): ExactResult {
  const N = p.nodeNames.length;
  const U = p.units.length;
  const mem = Float64Array.from(p.fixMem);
  const cores = Float64Array.from(p.fixCores);
  const limMem = p.limMem.map((l) => (checks.memory ? l + CAPACITY_SLACK * l : Infinity));
  const limCores = p.limCores.map((l) => (checks.cores ? l + CAPACITY_SLACK * l : Infinity));
  const count = new Int32Array(N);
  const assign = new Int32Array(U).fill(-1);
  const order = Array.from({ length: U }, (_, u) => u).sort(
    (a, b) =>
      p.allowedList[a]!.length - p.allowedList[b]!.length ||
      p.unitMem[b]! - p.unitMem[a]! ||
      p.unitCores[b]! - p.unitCores[a]! ||
      a - b,
  );
  // nodes that are interchangeable: same limits, same fixed load, allowed for the same units
  const klass = new Int32Array(N).fill(-1);
  const keys = new Map<string, number>();
  for (let n = 0; n < N; n++) {
    if (!p.usable[n]) continue;
    let key = `${p.limMem[n]}|${p.limCores[n]}|${p.fixMem[n]}|${p.fixCores[n]}|`;
    for (let u = 0; u < U; u++) key += p.allowed[u * N + n];
    if (!keys.has(key)) keys.set(key, keys.size);
    klass[n] = keys.get(key)!;
  }
  // suffix sums of what is left to place, for the capacity bound
  const restMem = new Float64Array(U + 1);
  const restCores = new Float64Array(U + 1);
  for (let k = U - 1; k >= 0; k--) {
    restMem[k] = restMem[k + 1]! + p.unitMem[order[k]!]!;
    restCores[k] = restCores[k + 1]! + p.unitCores[order[k]!]!;
  }
  let visits = 0;
  let exhausted = false;
  const candidates: Int32Array[] = Array.from({ length: U }, () => new Int32Array(N));

  const free = (lim: Float64Array, load: Float64Array) => {
    let sum = 0;
    for (let n = 0; n < N; n++) if (p.usable[n]) sum += Math.max(0, lim[n]! - load[n]!);
    return sum;
  };

  const place = (k: number): boolean => {
    if (k === U) return true;
    if (++visits > budget) {
      exhausted = true;
      return false;
    }
    if (checks.memory && restMem[k]! > free(limMem, mem)) return false;
    if (checks.cores && restCores[k]! > free(limCores, cores)) return false;
    const u = order[k]!;
    const list = candidates[k]!;
    let size = 0;
    for (const n of p.allowedList[u]!) {
      if (mem[n]! + p.unitMem[u]! > limMem[n]!) continue;
      if (cores[n]! + p.unitCores[u]! > limCores[n]!) continue;
      if (checks.negatives) {
        let clash = false;
        for (const v of p.negatives[u]!) if (assign[v] === n) clash = true;
        if (clash) continue;
      }
      list[size++] = n;
    }
    const sorted = Array.from(list.subarray(0, size)).sort(
      (a, b) => limMem[b]! - mem[b]! - (limMem[a]! - mem[a]!) || a - b,
    );
    const triedEmpty = new Set<number>();
    for (const n of sorted) {
      if (count[n] === 0) {
        if (triedEmpty.has(klass[n]!)) continue;
        triedEmpty.add(klass[n]!);
      }
      assign[u] = n;
      mem[n]! += p.unitMem[u]!;
      cores[n]! += p.unitCores[u]!;
      count[n]! += 1;
      if (place(k + 1)) return true;
      mem[n]! -= p.unitMem[u]!;
      cores[n]! -= p.unitCores[u]!;
      count[n]! -= 1;
      assign[u] = -1;
      if (exhausted) return false;
    }
    return false;
  };

  if (place(0)) return { kind: 'feasible', assign };
  return exhausted ? { kind: 'unknown' } : { kind: 'infeasible' };
}
