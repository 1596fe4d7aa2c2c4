import { DualBound } from './dual';
import { type Problem, GIB, costAt } from './model';

/** Supergradient steps of the Lagrangian bound at most (it stops earlier: see {@link DUAL_TOLERANCE}). */
const DUAL_ITERATIONS = 400;
/**
 * The Lagrangian ascent stops once within this (relative to the upper value) of the upper value,
 * or once it has gained less than this over its last steps.
 */
const DUAL_TOLERANCE = 1e-5;
/** Relative margin taken off the Lagrangian bound for float rounding in its sums. */
const FLOAT_MARGIN = 1e-9;

/** What the search found, to aim the bound: an objective some placement reaches, and that placement. */
export interface BoundHint {
  readonly upper: number;
  readonly assign: Int32Array;
}

/**
 * A lower bound on the objective of every assignment that satisfies the hard constraints: the
 * better of the Lagrangian bound (`dual.ts`, the linear relaxation's value, approached from below)
 * and the combinatorial bound ({@link combinatorialBound}, which counts whole migrations and is
 * the stronger one on small clusters).
 */
export function lowerBound(p: Problem, hint: BoundHint): number {
  const dual = lagrangianBound(p, hint);
  return p.units.length <= COMBINATORIAL_UNITS ? Math.max(combinatorialBound(p), dual) : dual;
}

/**
 * Units up to which the combinatorial bound is computed too: it counts whole migrations, which
 * matters when a few units carry a node's load; beyond, the Lagrangian bound is the stronger by
 * far (8 × 200 generated: 0.97 against 1.21) and the other costs O(units · nodes · log units).
 */
const COMBINATORIAL_UNITS = 60;

/**
 * The Lagrangian bound: a supergradient ascent of D(λ, μ) from multipliers on the most used nodes
 * of the hint's placement, Polyak steps towards the hint's objective; the best value, less a
 * float margin.
 */
export function lagrangianBound(p: Problem, hint: BoundHint): number {
  const dual = new DualBound(p);
  {
    const cpu = Float64Array.from(p.fixCpu);
    const mem = Float64Array.from(p.fixMem);
    for (let u = 0; u < p.units.length; u++) {
      cpu[hint.assign[u]!]! += p.unitCpu[u]!;
      mem[hint.assign[u]!]! += p.unitMem[u]!;
    }
    for (let n = 0; n < cpu.length; n++) {
      cpu[n]! /= p.capCpu[n]!;
      mem[n]! /= p.capMem[n]!;
    }
    dual.start(cpu, mem);
  }
  const best = dual.ascend(DUAL_ITERATIONS, hint.upper, DUAL_TOLERANCE);
  return best - FLOAT_MARGIN * Math.abs(best);
}

/** Splits of the move count between the two resources tried by {@link lowerBound} (any split is valid; the best is kept). */
const THETAS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];

/**
 * A lower bound on the objective of every assignment that satisfies the hard constraints, from
 * a relaxation that drops the rules between units and lets load split freely:
 *
 * - each resource's highest utilisation is at least its *floor*: the total load over the total
 *   capacity of the usable nodes, the fixed load of any node, and for each unit the lowest
 *   utilisation it gives the emptiest node it may use;
 * - every unit pays at least its cheapest placement (units that must leave their node);
 * - to bring a node down to level L, the units on it must lose the excess: at least as many
 *   migrations as its largest units need to cover it, and (memory) at least the excess in bytes
 *   copied. Migrations out of a node count once even when both resources need them, so the
 *   count is split between the resources by a weight θ (max(a, b) ≥ θa + (1−θ)b) and the best θ
 *   is kept.
 *
 * For each resource the bound minimises weight · L + the cost of reaching L over L ≥ floor; the
 * minimum is at the floor or where a node's count changes, so every such point is evaluated:
 * O(units · nodes · log units).
 */
function combinatorialBound(p: Problem): number {
  const U = p.units.length;
  const w = p.input.weights;
  let forced = 0;
  for (let u = 0; u < U; u++) {
    let min = Infinity;
    for (const n of p.allowedList[u]!) min = Math.min(min, costAt(p, u, n));
    forced += min === Infinity ? 0 : min;
  }
  const sides = [side(p, p.fixCpu, p.unitCpu, p.capCpu, false), side(p, p.fixMem, p.unitMem, p.capMem, true)];
  let best = -Infinity;
  for (const theta of THETAS) {
    const cpu = minimise(sides[0]!, w.cpu, theta * w.move, 0);
    const mem = minimise(sides[1]!, w.mem, (1 - theta) * w.move, w.gib / GIB);
    best = Math.max(best, forced + cpu + mem);
  }
  return best;
}

/** One resource's data for the bound: its floor and, per candidate level, the moves and bytes needed. */
interface Side {
  readonly floor: number;
  /** Candidate levels (≥ floor, ascending) with the migrations and excess bytes needed to reach them. */
  readonly levels: Float64Array;
  readonly moves: Float64Array;
  readonly bytes: Float64Array;
}

function side(p: Problem, fix: Float64Array, size: Float64Array, cap: Float64Array, memory: boolean): Side {
  const N = p.nodeNames.length;
  const U = p.units.length;
  let total = 0;
  let capSum = 0;
  let floor = 0;
  for (let n = 0; n < N; n++) {
    if (!p.usable[n]) continue;
    total += fix[n]!;
    capSum += cap[n]!;
    floor = Math.max(floor, fix[n]! / cap[n]!);
  }
  const guestNode = p.input.guests.map((g) => p.nodeIndex.get(g.node)!);
  const simple: number[][] = Array.from({ length: N }, () => []);
  const now = Float64Array.from(fix);
  const free = new Float64Array(N);
  for (let u = 0; u < U; u++) {
    total += size[u]!;
    let lowest = Infinity;
    for (const n of p.allowedList[u]!) lowest = Math.min(lowest, (fix[n]! + size[u]!) / cap[n]!);
    if (lowest < Infinity) floor = Math.max(floor, lowest);
    const h = p.home[u]!;
    if (h < 0 || !p.allowed[u * N + h]) continue;
    now[h]! += size[u]!;
    // a unit whose members are all on its node pays a migration to leave; any other leaves for free here
    if (p.units[u]!.guests.every((m) => guestNode[m] === h)) simple[h]!.push(size[u]!);
    else free[h]! += size[u]!;
  }
  if (capSum > 0) floor = Math.max(floor, total / capSum);
  // per node: prefix sums of its removable units, largest first
  const prefix: Float64Array[] = simple.map((list) => {
    const sorted = list.sort((a, b) => b - a);
    const out = new Float64Array(sorted.length + 1);
    for (let k = 0; k < sorted.length; k++) out[k + 1] = out[k]! + sorted[k]!;
    return out;
  });
  const candidates: number[] = [floor];
  for (let n = 0; n < N; n++) {
    if (!p.usable[n]) continue;
    const pre = prefix[n]!;
    for (let k = 0; k < pre.length; k++) {
      const level = (now[n]! - free[n]! - pre[k]!) / cap[n]!;
      if (level > floor) candidates.push(level);
    }
  }
  candidates.sort((a, b) => a - b);
  const levels = Float64Array.from(candidates);
  const moves = new Float64Array(levels.length);
  const bytes = new Float64Array(levels.length);
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i]!;
    let count = 0;
    let copied = 0;
    for (let n = 0; n < N; n++) {
      if (!p.usable[n]) continue;
      const excess = now[n]! - level * cap[n]! - free[n]!;
      if (excess <= 0) continue;
      const pre = prefix[n]!;
      // the fewest largest units covering the excess (binary search on the prefix sums)
      let lo = 1;
      let hi = pre.length - 1;
      if (hi < 1 || pre[hi]! < excess * (1 - 1e-12)) {
        count = Infinity;
        break;
      }
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (pre[mid]! >= excess * (1 - 1e-12)) hi = mid;
        else lo = mid + 1;
      }
      count += lo;
      if (memory) copied += excess;
    }
    moves[i] = count;
    bytes[i] = copied;
  }
  return { floor, levels, moves, bytes };
}

/** min over the candidate levels of weight · L + perMove · moves(L) + perByte · bytes(L). */
function minimise(s: Side, weight: number, perMove: number, perByte: number): number {
  let best = Infinity;
  for (let i = 0; i < s.levels.length; i++) {
    const m = s.moves[i]!;
    if (m === Infinity) continue;
    const v = weight * s.levels[i]! + (perMove > 0 ? perMove * m : 0) + (perByte > 0 ? perByte * s.bytes[i]! : 0);
    if (v < best) best = v;
  }
  return best === Infinity ? weight * s.floor : best;
}
