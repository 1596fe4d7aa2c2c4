/**
 * Fast scoring over a cluster view in sorted node order. Every function returns exactly what
 * the reference ({@link ./reference}) returns: the shared kernels compute the per-node values,
 * sums are folded in the same order, and O(1) approximations are only used — with rigorous
 * error bounds — to discard alternatives that cannot be chosen (bruteforce) or to prove which
 * one the reference chooses (TOPSIS, `./topsis-separated`); reported values are always exact.
 */
import * as imbalanceModule from '@poise/imbalance';
import type { ImbalanceMetric } from '@poise/imbalance';
import * as topsisModule from '@poise/topsis';
import * as kernels from './kernels';
import * as separated from './topsis-separated';
import type { Scratch } from './scratch';
import * as viewModule from './view';
import type { ClusterView, IndexedCandidates } from './view';

export type { ClusterView, IndexedCandidates } from './view';

/*
 * Module-local copies of the imported bindings used on hot paths: some loaders (tsx's CommonJS
 * interop) turn every read of an imported binding into a getter call, which costs more than the
 * arithmetic around it (it was a quarter of the migration scoring time).
 */
const { ImbalanceAccumulator } = imbalanceModule;
const { imbalanceWithReplaced, TINY_MEAN } = imbalanceModule;
const { rankScores, scoreFlatInPlace } = topsisModule;
const { CRITERIA_COUNT, schedulerCriteria, compareNames, nodeLoad, truncateImbalance } = kernels;
const { separatedTopsisWinner } = separated;
const { candidateOfRow } = viewModule;
import type { ScoredMigration } from './types';

/**
 * How often the O(1) TOPSIS choice was proven or declined (then the exact path ran). Internal
 * diagnostics for tests and the benchmark; not part of the package API.
 */
export const topsisPathCounters = { separated: 0, exact: 0 };

/** Fills per-node cpu/mem loads, the prefix folds of their squares and the top-3 maxima. */
export function prepareLoads(view: ClusterView, scratch: Scratch): void {
  const { n, cpu, maxcpu, mem, maxmem } = view;
  const { cpuLoad, memLoad, cpuPrefix, memPrefix } = scratch;
  let cs = 0;
  let ms = 0;
  cpuPrefix[0] = 0;
  memPrefix[0] = 0;
  for (let i = 0; i < n; i++) {
    const c = cpu[i]! / maxcpu[i]!;
    const m = mem[i]! / maxmem[i]!;
    cpuLoad[i] = c;
    memLoad[i] = m;
    cs += c * c;
    ms += m * m;
    cpuPrefix[i + 1] = cs;
    memPrefix[i + 1] = ms;
  }
  scratch.cpuTop.reset(cpuLoad, n);
  scratch.memTop.reset(memLoad, n);
}

/**
 * Sum of squared loads with positions `a` (value `va`) and `b` (value `vb`, or -1) replaced,
 * folded exactly like the reference: the shared prefix, then the rest term by term.
 */
function foldSquares(
  loads: Float64Array,
  prefix: Float64Array,
  n: number,
  a: number,
  va: number,
  b: number,
  vb: number,
): number {
  const start = b === -1 || a < b ? a : b;
  let sum = prefix[start]!;
  for (let i = start; i < n; i++) {
    const x = i === a ? va : i === b ? vb : loads[i]!;
    sum += x * x;
  }
  return sum;
}

/** Writes the 4 criteria of the state with nodes a and b (b may be -1) at the given loads. */
export function writeCriteria(
  scratch: Scratch,
  n: number,
  out: Float64Array,
  offset: number,
  a: number,
  cpuA: number,
  memA: number,
  b: number,
  cpuB: number,
  memB: number,
): void {
  const cpuSquares = foldSquares(scratch.cpuLoad, scratch.cpuPrefix, n, a, cpuA, b, cpuB);
  const memSquares = foldSquares(scratch.memLoad, scratch.memPrefix, n, a, memA, b, memB);
  let cpuHighest = Math.max(scratch.cpuTop.maxExcept(a, b), cpuA);
  let memHighest = Math.max(scratch.memTop.maxExcept(a, b), memA);
  if (b !== -1) {
    cpuHighest = Math.max(cpuHighest, cpuB);
    memHighest = Math.max(memHighest, memB);
  }
  // the reference folds max from 0 over non-negative loads: same value
  cpuHighest = Math.max(0, cpuHighest);
  memHighest = Math.max(0, memHighest);
  out[offset] = 1 + Math.sqrt(cpuSquares / n);
  out[offset + 1] = 1 + cpuHighest;
  out[offset + 2] = 1 + Math.sqrt(memSquares / n);
  out[offset + 3] = 1 + memHighest;
}

/**
 * Hypothetical node stats after a bundle leaves `s` and arrives at `t` (never `s`: self-moves are
 * rejected when the candidates are indexed).
 */
function movedLoads(view: ClusterView, s: number, t: number, bc: number, bm: number, out: Float64Array): void {
  const { cpu, mem } = view;
  // remove_running_resource on the source, add_running_resource on the target
  out[0] = Math.max(0, cpu[s]! - bc);
  out[1] = Math.max(0, mem[s]! - bm);
  out[2] = cpu[t]! + bc;
  out[3] = mem[t]! + bm;
}

/** Exact imbalance after moving candidate k's bundle to `t`, by the direct fold. */
function exactMoveImbalance(
  view: ClusterView,
  loads: Float64Array,
  c: IndexedCandidates,
  k: number,
  t: number,
  metric: ImbalanceMetric,
): number {
  const st = new Float64Array(4);
  const s = c.source[k]!;
  movedLoads(view, s, t, c.bundleCpu[k]!, c.bundleMem[k]!, st);
  const ls = nodeLoad(st[0]!, view.maxcpu[s]!, st[1]!, view.maxmem[s]!);
  return imbalanceWithReplaced(loads, metric, s, ls, t, nodeLoad(st[2]!, view.maxcpu[t]!, st[3]!, view.maxmem[t]!));
}

function loadsOf(view: ClusterView): Float64Array {
  const loads = new Float64Array(view.n);
  for (let i = 0; i < view.n; i++) loads[i] = nodeLoad(view.cpu[i]!, view.maxcpu[i]!, view.mem[i]!, view.maxmem[i]!);
  return loads;
}

/** Keeps the `limit` smallest migrations by (imbalance, sid, source, target). */
function insertBest(best: ScoredMigration[], m: ScoredMigration, limit: number): void {
  let i = best.length;
  while (i > 0 && compareMigration(m, best[i - 1]!) < 0) i--;
  if (i >= limit) return;
  best.splice(i, 0, m);
  if (best.length > limit) best.pop();
}

function compareMigration(a: ScoredMigration, b: ScoredMigration): number {
  if (a.imbalance !== b.imbalance) return a.imbalance < b.imbalance ? -1 : 1;
  return compareNames(a.sid, b.sid) || compareNames(a.source, b.source) || compareNames(a.target, b.target);
}

/**
 * Relative and absolute margins of the bruteforce pre-filter over the truncation key: a pair is
 * skipped before its full interval is computed only when its lower bound exceeds the threshold
 * key by `threshold·1e-9 + 1e-13`, far more than the truncation step (1e-15), the spacing of the
 * keys near 32 (7e-15) and the rounding of the pre-filter itself (~1e-15 relative). A skipped
 * pair would therefore also have failed the key test `trunc(lo) > threshold`.
 */
const PREFILTER_RELATIVE = 1e-9;
const PREFILTER_ABSOLUTE = 1e-13;

/**
 * Bruteforce: O(1) bounds per (candidate, target) — the accumulator's interval
 * ({@link ImbalanceAccumulator.boundsWithReplaced}) inlined with the source side hoisted per
 * candidate and a root- and division-free pre-filter against the current threshold — and only
 * pairs whose lower bound's truncated key can reach the `limit`-th best upper bound are evaluated
 * with the exact fold (cached per identical hypothetical state). The result equals the reference.
 */
export function fastBruteforce(
  view: ClusterView,
  cands: IndexedCandidates,
  limit: number,
  metric: ImbalanceMetric,
): ScoredMigration[] {
  if (limit <= 0) return [];
  const n = view.n;
  const loads = loadsOf(view);
  const acc = new ImbalanceAccumulator(loads);
  const state = acc.boundState();
  const rel = state.relative;
  const shift = state.shift;
  const sum0 = state.sum;
  const sumError0 = state.sumError;
  const squares0 = state.shiftedSquares;
  const squaresError0 = state.squaresError;
  const scale = metric === 'raw' ? 1 : state.normalizer;
  const nShift = n * shift;
  const nReciprocal = 1 / n;
  const oldDev2 = new Float64Array(n);
  for (let i = 0; i < n; i++) oldDev2[i] = (loads[i]! - shift) * (loads[i]! - shift);
  // the `limit` smallest truncated upper bounds seen so far (ascending)
  const his: number[] = [];
  let threshold = Infinity;
  let cap = Infinity; // pre-filter: skip when varLo/n > cap² (cap grows with meanHi, see below)
  const capFactor = 1 / (1 - 2 * rel);
  let survivorRow: number[] = [];
  let survivorLo: number[] = [];
  let pruneAt = 1024;
  const { cpu, maxcpu, mem, maxmem } = view;
  const { source, bundleCpu, bundleMem, targetStart, targets } = cands;
  for (let ci = 0; ci < cands.count; ci++) {
    const s = source[ci]!;
    const bc = bundleCpu[ci]!;
    const bm = bundleMem[ci]!;
    // remove_running_resource on the source, once per candidate
    const sourceCpu = Math.max(0, cpu[s]! - bc);
    const sourceMem = Math.max(0, mem[s]! - bm);
    const ls = nodeLoad(sourceCpu, maxcpu[s]!, sourceMem, maxmem[s]!);
    // the source's share of the interval (see ImbalanceAccumulator.boundsWithReplaced)
    const oi = loads[s]!;
    const dli = ls - shift;
    const doi2 = oldDev2[s]!;
    const dli2 = dli * dli;
    const sumBase = sum0 - oi + ls;
    const sumErrorBase = sumError0 + rel * (sum0 + oi + ls);
    const squaresBase = squares0 - doi2 + dli2;
    const squaresErrorBase = squaresError0 + rel * (squares0 + doi2 + dli2);
    for (let row = targetStart[ci]!, end = targetStart[ci + 1]!; row < end; row++) {
      const t = targets[row]!;
      // every row has t !== s (self-moves are rejected when the candidates are indexed), hence n >= 2
      /* eslint-disable no-useless-assignment -- the initial values are what keeps them unboxed doubles */
      let lo = 0; // initialised: keeps the variable an unboxed double in optimised code
      let hi = 0;
      /* eslint-enable no-useless-assignment -- end of the unboxed initialisations */
      const lt = nodeLoad(cpu[t]! + bc, maxcpu[t]!, mem[t]! + bm, maxmem[t]!);
      const oj = loads[t]!;
      const doj2 = oldDev2[t]!;
      const dlj = lt - shift;
      const dlj2 = dlj * dlj;
      const sum = sumBase - oj + lt;
      const sumError = sumErrorBase + rel * (oj + lt);
      const squares = squaresBase - doj2 + dlj2;
      const delta = sum - nShift;
      const absDelta = Math.abs(delta);
      const deltaError = sumError + rel * (nShift + absDelta);
      // × 1/n instead of / n: one more rounding (2u), far inside the (1 ± rel) factors
      const deltaSq = delta * delta * nReciprocal;
      const squaresError = squaresErrorBase + rel * (doj2 + dlj2 + deltaSq);
      const dHi = absDelta + deltaError;
      let varLo = squares - squaresError - dHi * dHi * nReciprocal * (1 + rel);
      if (varLo < 0) varLo = 0;
      const meanLo = (sum - sumError) * nReciprocal * (1 - rel);
      const meanHi = (sum + sumError) * nReciprocal * (1 + rel);
      // (the validated stats keep every load below 2^100, so the mean never reaches the
      // accumulator's upper limit; only tiny means give the bound up)
      if (!(meanLo > TINY_MEAN)) {
        lo = 0;
        hi = Infinity;
      } else {
        // pre-filter: lo = √(varLo/n)/meanHi/scale·(1 − 2rel) > cap·meanHi... without root or division
        const c = cap * meanHi;
        if (varLo > c * c * n) continue;
        const dLo = absDelta > deltaError ? absDelta - deltaError : 0;
        let varHi = squares + squaresError - ((dLo * dLo) / n) * (1 - rel);
        if (varHi < 0) varHi = 0;
        const meanSlack = rel * meanHi;
        lo = (Math.sqrt(varLo / n) / meanHi / scale) * (1 - 2 * rel);
        hi = (Math.sqrt((varHi + n * meanSlack * meanSlack) / n) / meanLo / scale) * (1 + 2 * rel);
      }
      const loKey = truncateImbalance(lo);
      if (loKey > threshold) continue;
      const hiKey = truncateImbalance(hi);
      if (his.length < limit || hiKey < his[his.length - 1]!) {
        let i = his.length;
        while (i > 0 && his[i - 1]! > hiKey) i--;
        his.splice(i, 0, hiKey);
        if (his.length > limit) his.pop();
        if (his.length === limit) {
          threshold = his[limit - 1]!;
          // lo > threshold·(1 + 1e-9) + 1e-13 implies trunc(lo) > threshold (PREFILTER_*);
          // squared with a 1e-12 slack for the pre-filter's own rounding
          cap = (threshold * (1 + PREFILTER_RELATIVE) + PREFILTER_ABSOLUTE) * scale * capFactor * (1 + 1e-12);
        }
      }
      survivorRow.push(row);
      survivorLo.push(loKey);
      if (survivorLo.length >= pruneAt) {
        const keepRow: number[] = [];
        const keepLo: number[] = [];
        for (let k = 0; k < survivorLo.length; k++) {
          if (survivorLo[k]! <= threshold) {
            keepRow.push(survivorRow[k]!);
            keepLo.push(survivorLo[k]!);
          }
        }
        survivorRow = keepRow;
        survivorLo = keepLo;
        pruneAt = Math.max(1024, survivorLo.length * 2);
      }
    }
  }
  const best: ScoredMigration[] = [];
  const cache = new Map<string, number>();
  for (let k = 0; k < survivorLo.length; k++) {
    if (survivorLo[k]! > threshold) continue;
    const row = survivorRow[k]!;
    const ci = candidateOfRow(cands, row);
    const s = source[ci]!;
    const t = targets[row]!;
    const key = `${s}:${t}:${bundleCpu[ci]}:${bundleMem[ci]}`;
    let value = cache.get(key);
    if (value === undefined) {
      value = truncateImbalance(exactMoveImbalance(view, loads, cands, ci, t, metric));
      cache.set(key, value);
    }
    insertBest(best, { sid: cands.sids[ci]!, source: view.names[s]!, target: view.names[t]!, imbalance: value }, limit);
  }
  return best;
}

/**
 * TOPSIS migrations. For `limit` 1 the O(1)-per-pair approximation of `./topsis-separated`
 * proves the winner when it can; otherwise (and for larger limits) the 4 criteria of every
 * (candidate, target) state are computed exactly (shared prefix folds for the sums of squares,
 * top-3 maxima for the highest loads; identical states are computed once), then TOPSIS and a
 * stable rank; the first `limit` get their exact imbalance.
 */
export function fastTopsis(
  view: ClusterView,
  cands: IndexedCandidates,
  limit: number,
  metric: ImbalanceMetric,
  scratch: Scratch,
): ScoredMigration[] {
  if (limit <= 0) return [];
  const n = view.n;
  const rows = cands.targetStart[cands.count]!;
  if (rows === 0) return [];
  scratch.ensure(n, rows, cands.count);
  prepareLoads(view, scratch);
  const loads = loadsOf(view);
  if (limit === 1) {
    const winner = separatedTopsisWinner(view, cands, rows, scratch);
    if (winner !== -1) {
      topsisPathCounters.separated++;
      return [scoredRow(view, loads, cands, winner, metric)];
    }
  }
  topsisPathCounters.exact++;
  const matrix = scratch.matrix;
  const st = new Float64Array(4);
  const { maxcpu, maxmem } = view;
  const { source, bundleCpu, bundleMem, targetStart, targets } = cands;
  // identical bundles on the same source give identical states per target: compute once
  const bundleRow = new Map<string, Int32Array>();
  for (let ci = 0; ci < cands.count; ci++) {
    const s = source[ci]!;
    const bc = bundleCpu[ci]!;
    const bm = bundleMem[ci]!;
    const bundleKey = `${s}:${bc}:${bm}`;
    let known = bundleRow.get(bundleKey);
    if (known === undefined) {
      known = new Int32Array(n).fill(-1);
      bundleRow.set(bundleKey, known);
    }
    for (let row = targetStart[ci]!, end = targetStart[ci + 1]!; row < end; row++) {
      const t = targets[row]!;
      const offset = row * CRITERIA_COUNT;
      const earlier = known[t]!;
      if (earlier !== -1) {
        matrix.copyWithin(offset, earlier * CRITERIA_COUNT, earlier * CRITERIA_COUNT + CRITERIA_COUNT);
        continue;
      }
      known[t] = row;
      movedLoads(view, s, t, bc, bm, st);
      writeCriteria(
        scratch,
        n,
        matrix,
        offset,
        s,
        st[0]! / maxcpu[s]!,
        st[1]! / maxmem[s]!,
        t,
        st[2]! / maxcpu[t]!,
        st[3]! / maxmem[t]!,
      );
    }
  }
  const scores = scoreFlatInPlace(
    schedulerCriteria,
    { data: matrix, rows, cols: CRITERIA_COUNT },
    scratch.scores,
    scratch.ideal,
  );
  return rankTop(scores, rows, limit).map((r) => scoredRow(view, loads, cands, r, metric));
}

/** The scored migration of row `r` (candidate order, then target order) with its exact imbalance. */
function scoredRow(
  view: ClusterView,
  loads: Float64Array,
  cands: IndexedCandidates,
  r: number,
  metric: ImbalanceMetric,
): ScoredMigration {
  const ci = candidateOfRow(cands, r);
  const s = cands.source[ci]!;
  const t = cands.targets[r]!;
  return {
    sid: cands.sids[ci]!,
    source: view.names[s]!,
    target: view.names[t]!,
    imbalance: truncateImbalance(exactMoveImbalance(view, loads, cands, ci, t, metric)),
  };
}

/** The first `limit` indices of a stable descending sort of `scores[0..rows)`. */
function rankTop(scores: Float64Array, rows: number, limit: number): number[] {
  if (limit >= rows || limit > 16) return rankScores(scores.subarray(0, rows)).slice(0, limit);
  const top: number[] = [];
  for (let i = 0; i < rows; i++) {
    const v = scores[i]!;
    if (top.length === limit && !(v > scores[top[limit - 1]!]!)) continue;
    let k = top.length;
    while (k > 0 && v > scores[top[k - 1]!]!) k--;
    top.splice(k, 0, i);
    if (top.length > limit) top.pop();
  }
  return top;
}
