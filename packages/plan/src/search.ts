import { type Problem, costAt } from './model';
import { levelSearch } from './levels';
import { EPS, SearchState, isPartner, otherMax } from './state';

/** Options of {@link optimize}. */
export interface SearchOptions {
  /** Seed of the perturbations (the search is deterministic for a seed). */
  readonly seed: number;
  /** Multiplier of the default number of perturbation rounds. */
  readonly effort: number;
  /** A second start (a balanced placement built from scratch) for small inputs; default true. */
  readonly fresh?: Int32Array | undefined;
}

/**
 * Perturbation rounds by default: this divided by the square of the number of units (a round's
 * descent grows with the units, and so does the number of rounds a fixed budget would need), at
 * least {@link MIN_KICKS}, at most {@link MAX_KICKS}: 400 up to 30 units, 14 at 200, the minimum
 * from about 400.
 */
const KICK_WORK = 640_000;
const MIN_KICKS = 4;
const MAX_KICKS = 400;
/** Units above which the search starts with level repairs (`levels.ts`) instead of perturbations. */
export const LARGE_UNITS = 60;
/** Units up to which the search ends with a branch and bound over all usable nodes. */
const EXACT_UNITS = 30;
/**
 * Search nodes that branch and bound may visit (about a second of CPU, on a loaded machine, when it does not
 * finish; oracle instance 983, 6 nodes × 19 guests, needs more than 1,000,000 to get within 1 %).
 */
const EXACT_BUDGET = 3_000_000;
/** Independent perturbation walks on inputs of up to {@link EXACT_UNITS} units (the best is kept). */
const WALKS = 2;
/** Units moved by one perturbation. */
const KICK_SIZE = 3;
/** Levels tried below the current highest utilisation, as fractions of the way to the floor. */
const LEVEL_STEPS = [1, 0.5, 0.25, 0.125, 0.0625, 0.015625];
/**
 * How far a level step lets the other resource's highest utilisation rise, as shares of what the
 * lowered one drops (weighted): 0 is a pure level step; the others are trades, which only pay
 * when the other rises by less than the drop.
 */
const TRADE_SHARES = [0.5, 0.9];
/** Nodes (lowest utilisation first) whose units are offered for swaps. */
const SWAP_NODES = 8;

/** xorshift32: the search's own small deterministic generator (seeded by the caller). */
function xorshift(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

/**
 * Local search for the objective from a feasible assignment, inside the feasible region:
 *
 * 1. descent: the best single move of a unit off a node at the highest utilisation, or of a
 *    unit that migrates back towards where it is now; then the best swap of a unit on such a
 *    node with one on the least-used nodes; then a *level step*: every node above a level is
 *    brought down to it by the fewest, cheapest moves, for a few levels between the highest
 *    utilisation and the fractional floor (what gets past ties and plateaus a single move
 *    cannot: two nodes at the same height, or gains that only pay for several moves together);
 *    when none of those improves, a *trade*: the same level step letting the other resource's
 *    highest utilisation rise by part of what this one drops (a lower cpu top bought with a
 *    slightly higher memory top, which no step that holds the other resource reaches);
 * 2. perturbation: a few random moves from the best assignment, then descent again; the best
 *    one found is kept ({@link WALKS} independent walks on inputs of up to {@link EXACT_UNITS}
 *    units, the best of them kept: one walk's result depends on where its first kicks land);
 * 3. on inputs of up to {@link EXACT_UNITS} units: a branch and bound over every usable node
 *    (at most {@link EXACT_BUDGET} search nodes) from the best value, to the optimum when it
 *    finishes (what no sequence of improving moves reaches).
 */
export function optimize(p: Problem, start: Int32Array, options: SearchOptions): SearchState {
  const st = new SearchState(p, start);
  if (p.units.length === 0) return st;
  const floors = levelFloors(p);
  if (p.units.length > LARGE_UNITS) {
    levelSearch(st, floors);
    for (let guard = 0; guard < 1_000_000; guard++) if (!bestMove(st) && !bestSwap(st)) break;
    st.resum();
    return st;
  }
  descend(st, floors);
  let best = st.clone();
  if (options.fresh) {
    const other = new SearchState(p, options.fresh);
    descend(other, floors);
    if (other.value < best.value - EPS) best = other;
  }
  const kicks = Math.max(
    MIN_KICKS,
    Math.min(MAX_KICKS, Math.round((KICK_WORK / (p.units.length + 10) ** 2) * options.effort)),
  );
  polish(best, floors);
  const start0 = best.clone();
  const work = best.clone();
  const walk = best.clone();
  const walks = p.units.length <= EXACT_UNITS ? WALKS : 1;
  for (let w = 0; w < walks; w++) {
    // each walk perturbs from the same start with its own generator; the best of the walks is kept
    const rnd = xorshift((options.seed + w * 0x9e3779b9) >>> 0);
    walk.copyFrom(start0);
    for (let k = 0; k < kicks; k++) {
      work.copyFrom(walk);
      if (k % 2 === 0 || !ruinAndRecreate(work, rnd)) kick(work, rnd);
      descend(work, floors);
      if (work.value < walk.value - EPS) {
        walk.copyFrom(work);
        polish(walk, floors);
      }
    }
    if (walk.value < best.value - EPS) best.copyFrom(walk);
  }
  // small inputs: branch and bound over every usable node (what the perturbations missed)
  if (p.units.length <= EXACT_UNITS) {
    const all: number[] = [];
    for (let n = 0; n < best.N; n++) if (p.usable[n]) all.push(n);
    if (splitNodes(best, all, EXACT_BUDGET)) polish(best, floors);
  }
  best.resum();
  return best;
}

/** The lowest level each resource's highest utilisation can reach (fractional fill), per resource. */
function levelFloors(p: Problem): { cpu: number; mem: number } {
  let cpu = 0;
  let mem = 0;
  let capC = 0;
  let capM = 0;
  for (let n = 0; n < p.nodeNames.length; n++) {
    if (!p.usable[n]) continue;
    cpu += p.fixCpu[n]!;
    mem += p.fixMem[n]!;
    capC += p.capCpu[n]!;
    capM += p.capMem[n]!;
  }
  for (let u = 0; u < p.units.length; u++) {
    cpu += p.unitCpu[u]!;
    mem += p.unitMem[u]!;
  }
  return { cpu: capC > 0 ? cpu / capC : 0, mem: capM > 0 ? mem / capM : 0 };
}

/** Descent until no neighbourhood improves. */
function descend(st: SearchState, floors: { cpu: number; mem: number }): void {
  for (let guard = 0; guard < 1_000_000; guard++) {
    if (bestMove(st)) continue;
    if (bestSwap(st)) continue;
    if (levelStep(st, floors, [0])) continue;
    if (levelStep(st, floors, TRADE_SHARES)) continue;
    return;
  }
}

/** Descent with the exact splits of two and three nodes on top, until neither improves. */
function polish(st: SearchState, floors: { cpu: number; mem: number }): void {
  do descend(st, floors);
  while (repartition(st));
}

/** Units a set of two, three, four nodes may hold together for {@link repartition} to split them exactly. */
const SPLIT_UNITS = [24, 18, 16];
/** Search nodes one exact split may visit. */
const SPLIT_BUDGET = 20_000;

/**
 * Exact re-split of two to four nodes: for each pair (then triple, then set of four) of usable
 * nodes holding at most {@link SPLIT_UNITS} units together, the best assignment of those
 * units to those nodes (every other node as it is), by branch and bound on the objective
 * (at most {@link SPLIT_BUDGET} search nodes each). Applies the first improving split; false when
 * none improves. What single moves and swaps cannot reach when capacity is tight (every
 * intermediate arrangement would overflow a node).
 */
function repartition(st: SearchState): boolean {
  const p = st.p;
  const nodes: number[] = [];
  for (let n = 0; n < st.N; n++) if (p.usable[n]) nodes.push(n);
  // sets with a top node first
  const topFirst = (n: number) => (n === st.topCpu[0] || n === st.topMem[0] ? 0 : 1);
  nodes.sort((a, b) => topFirst(a) - topFirst(b) || a - b);
  for (let size = 2; size <= SPLIT_UNITS.length + 1 && size <= nodes.length; size++) {
    const limit = SPLIT_UNITS[size - 2]!;
    for (const set of subsets(nodes, size)) {
      let units = 0;
      for (const n of set) units += st.onNode[n]!.length;
      if (units > limit) continue;
      // a split that did not improve is not tried again until its nodes or the others' highest use change
      const key = set.join(',');
      const sig = `${set.map((n) => st.version[n]).join(',')}|${otherMaxOf(st, set, 0)}|${otherMaxOf(st, set, 1)}`;
      if (st.splitMemo.get(key) === sig) continue;
      if (splitNodes(st, set)) return true;
      st.splitMemo.set(key, sig);
    }
  }
  return false;
}

/** The highest utilisation of resource `r` (0 cpu, 1 memory) among usable nodes outside `set`. */
function otherMaxOf(st: SearchState, set: readonly number[], r: 0 | 1): number {
  const idx = r === 0 ? st.topCpu : st.topMem;
  const val = r === 0 ? st.topCpuV : st.topMemV;
  for (let k = 0; k < 3; k++) {
    const n = idx[k]!;
    if (n < 0) return 0;
    if (!set.includes(n)) return val[k]!;
  }
  let max = 0;
  const load = r === 0 ? st.cpu : st.mem;
  const inv = r === 0 ? st.invCpu : st.invMem;
  for (let n = 0; n < st.N; n++) if (st.p.usable[n] && !set.includes(n)) max = Math.max(max, load[n]! * inv[n]!);
  return max;
}

/** The subsets of `items` of a size, in lexicographic order of positions. */
function* subsets(items: readonly number[], size: number): Generator<number[]> {
  const idx = Array.from({ length: size }, (_, i) => i);
  while (true) {
    yield idx.map((i) => items[i]!);
    let k = size - 1;
    while (k >= 0 && idx[k] === items.length - size + k) k--;
    if (k < 0) return;
    idx[k]! += 1;
    for (let j = k + 1; j < size; j++) idx[j] = idx[j - 1]! + 1;
  }
}

/**
 * Best split of the units on `set` over those nodes (at most `budget` search nodes); applies it
 * and returns true when it improves the objective.
 */
function splitNodes(st: SearchState, set: readonly number[], budget = SPLIT_BUDGET): boolean {
  const p = st.p;
  const N = st.N;
  const K = set.length;
  const units: number[] = [];
  for (const n of set) units.push(...st.onNode[n]!);
  const weight = (u: number) =>
    st.wCpu * p.unitCpu[u]! * st.invCpu[st.assign[u]!]! + st.wMem * p.unitMem[u]! * st.invMem[st.assign[u]!]!;
  units.sort((x, y) => weight(y) - weight(x) || x - y);
  const k = units.length;
  if (k === 0) return false;
  // the highest utilisation of the nodes outside the set
  const otherC = otherMaxOf(st, set, 0);
  const otherM = otherMaxOf(st, set, 1);
  const c = new Float64Array(K);
  const m = new Float64Array(K);
  const kc = new Float64Array(K);
  let baseCost = st.cost;
  set.forEach((n, i) => {
    c[i] = st.cpu[n]!;
    m[i] = st.mem[n]!;
    kc[i] = st.cores[n]!;
  });
  for (const u of units) {
    const i = set.indexOf(st.assign[u]!);
    baseCost -= costAt(p, u, st.assign[u]!);
    c[i]! -= p.unitCpu[u]!;
    m[i]! -= p.unitMem[u]!;
    kc[i]! -= p.unitCores[u]!;
  }
  const cost = new Float64Array(k * K);
  const minRest = new Float64Array(k + 1);
  // what is left to place, and the set's capacity: no placement of the rest keeps every node of
  // the set below the set's average fill
  const restCpu = new Float64Array(k + 1);
  const restMem = new Float64Array(k + 1);
  for (let a = k - 1; a >= 0; a--) {
    restCpu[a] = restCpu[a + 1]! + p.unitCpu[units[a]!]!;
    restMem[a] = restMem[a + 1]! + p.unitMem[units[a]!]!;
  }
  let capC = 0;
  let capM = 0;
  for (const n of set) {
    capC += p.capCpu[n]!;
    capM += p.capMem[n]!;
  }
  for (let a = 0; a < k; a++)
    for (let i = 0; i < K; i++)
      cost[a * K + i] = p.allowed[units[a]! * N + set[i]!] ? costAt(p, units[a]!, set[i]!) : Infinity;
  for (let a = k - 1; a >= 0; a--) {
    let min = Infinity;
    for (let i = 0; i < K; i++) min = Math.min(min, cost[a * K + i]!);
    minRest[a] = minRest[a + 1]! + min;
  }
  const side = new Int8Array(k);
  const bestSide = new Int8Array(k);
  let best = st.value - EPS;
  let found = false;
  let visits = 0;
  const wC = st.wCpu;
  const wM = st.wMem;
  const orders = new Int8Array(K * (k + 1));
  const keys = new Float64Array(K);
  const clash = (a: number, i: number): boolean => {
    const partners = p.negatives[units[a]!]!;
    if (partners.length === 0) return false;
    for (let b = 0; b < a; b++) if (side[b] === i && isPartner(partners, units[b]!)) return true;
    return false;
  };
  const dfs = (a: number, spent: number): void => {
    if (++visits > budget) return;
    let maxC = otherC;
    let maxM = otherM;
    let sumC = restCpu[a]!;
    let sumM = restMem[a]!;
    for (let i = 0; i < K; i++) {
      maxC = Math.max(maxC, c[i]! * st.invCpu[set[i]!]!);
      maxM = Math.max(maxM, m[i]! * st.invMem[set[i]!]!);
      sumC += c[i]!;
      sumM += m[i]!;
    }
    if (capC > 0) maxC = Math.max(maxC, sumC / capC);
    if (capM > 0) maxM = Math.max(maxM, sumM / capM);
    const bound = wC * maxC + wM * maxM + spent + minRest[a]!;
    if (bound >= best) return;
    if (a === k) {
      best = bound;
      bestSide.set(side);
      found = true;
      return;
    }
    const u = units[a]!;
    const uc = p.unitCpu[u]!;
    const um = p.unitMem[u]!;
    const uk = p.unitCores[u]!;
    // emptiest node first (insertion sort into this depth's row)
    const local = orders.subarray(a * K, a * K + K);
    for (let i = 0; i < K; i++) {
      const key = wC * c[i]! * st.invCpu[set[i]!]! + wM * m[i]! * st.invMem[set[i]!]!;
      keys[i] = key;
      let j = i;
      while (j > 0 && keys[local[j - 1]!]! > key) {
        local[j] = local[j - 1]!;
        j--;
      }
      local[j] = i;
    }
    for (let q = 0; q < K; q++) {
      const i = local[q]!;
      const n = set[i]!;
      const ci = cost[a * K + i]!;
      if (ci === Infinity || m[i]! + um > st.limMem[n]! || kc[i]! + uk > st.limCores[n]! || clash(a, i)) continue;
      side[a] = i;
      c[i]! += uc;
      m[i]! += um;
      kc[i]! += uk;
      dfs(a + 1, spent + ci);
      c[i]! -= uc;
      m[i]! -= um;
      kc[i]! -= uk;
    }
  };
  dfs(0, baseCost);
  if (!found) return false;
  for (let a = 0; a < k; a++) {
    const t = set[bestSide[a]!]!;
    if (st.assign[units[a]!] !== t) st.move(units[a]!, t, false);
  }
  st.rank();
  return true;
}

/** Applies the best improving single move; false when none improves. */
function bestMove(st: SearchState): boolean {
  const p = st.p;
  const N = st.N;
  const current = st.value;
  let bestValue = current - EPS;
  let bestU = -1;
  let bestT = -1;
  // targets: the least-used nodes (every node on small clusters); a move elsewhere cannot lower the top more
  const low = lowNodes(st);
  const tryUnit = (u: number) => {
    const allowed = p.allowedList[u]!;
    for (const t of allowed.length <= low.length ? allowed : low) {
      if (t === st.assign[u] || !p.allowed[u * N + t] || !st.canMove(u, t)) continue;
      const v = st.valueAfterMove(u, t);
      if (v < bestValue) {
        bestValue = v;
        bestU = u;
        bestT = t;
      }
    }
  };
  const topC = st.topCpu[0]!;
  const topM = st.topMem[0]!;
  if (st.wCpu > 0 && topC >= 0) for (const u of st.onNode[topC]!) tryUnit(u);
  if (st.wMem > 0 && topM >= 0 && topM !== topC) for (const u of st.onNode[topM]!) tryUnit(u);
  // units that migrate: towards a node some members are on now (the only way to save cost)
  for (let u = 0; u < st.U; u++) {
    const here = st.assign[u]!;
    if (costAt(p, u, here) <= 0) continue;
    for (const [t] of p.stays[u]!) {
      if (t === here || !p.usable[t] || !p.allowed[u * N + t] || !st.canMove(u, t)) continue;
      const v = st.valueAfterMove(u, t);
      if (v < bestValue) {
        bestValue = v;
        bestU = u;
        bestT = t;
      }
    }
  }
  if (bestU < 0) return false;
  st.move(bestU, bestT);
  return true;
}

/** Applies the best improving swap of a unit on a top node with one on the least-used nodes. */
function bestSwap(st: SearchState): boolean {
  const swap = findSwap(st);
  if (!swap) return false;
  const [u, v] = swap;
  const s = st.assign[u]!;
  const t = st.assign[v]!;
  st.move(u, t, false);
  st.move(v, s);
  return true;
}

/** Units `[u, v]`: `u` on a top node trades places with `v` on one of the least-used nodes. */
export type Swap = readonly [u: number, v: number];

/**
 * The swap {@link bestSwap} applies, by the plain scan: every unit on a node at the highest
 * utilisation (cpu, then memory) × every unit on each of the least-used nodes ({@link lowNodes});
 * the lowest objective below the current one, the first such swap in that order on a tie;
 * undefined when none improves. The reference for {@link findSwap}.
 */
export function findSwapByScan(st: SearchState): Swap | undefined {
  const p = st.p;
  const N = st.N;
  let bestValue = st.value - EPS;
  let best: Swap | undefined;
  const low = lowNodes(st);
  for (const s of swapTops(st)) {
    for (const u of st.onNode[s]!) {
      for (const t of low) {
        if (t === s || !p.allowed[u * N + t]) continue;
        for (const v of st.onNode[t]!) {
          if (!st.canSwap(u, v)) continue;
          const value = st.valueAfterSwap(u, v);
          if (value < bestValue) {
            bestValue = value;
            best = [u, v];
          }
        }
      }
    }
  }
  return best;
}

/** Slack of {@link findSwap}'s bounds, relative to the objective: float noise never prunes a swap the scan would take. */
const SWAP_BOUND_SLACK = 1e-9;

/** Scratch of {@link findSwap} (grown as needed): per unit of a least-used node, the change of migration cost of its move. */
let swapCostDelta = new Float64Array(64);
/** Scratch of {@link findSwap}: the units whose move to the top node lowers the migration cost, and their sizes (ascending). */
let swapCheaper = new Int32Array(64);
let swapCheaperSizes = new Float64Array(64);

/**
 * The same swap as {@link findSwapByScan}, without evaluating the swaps that cannot beat the
 * best one found so far. Top node `s` is at the highest utilisation of resource `r`. For a
 * least-used node `t` and a unit `u` on `s`, the objective after swapping `u` with a `v` on `t`
 * is what `r` contributes (the highest utilisation of `s`, `t` and the others) plus at least a
 * bound of the rest (the other resource's utilisation of `s` and `t` with the smallest and
 * largest `v` there; the cheapest move of a `v` to `s`). What `r` contributes stays below the
 * best value only for `v` in a window of sizes: small enough that `s` drops below the level
 * left, large enough that `t` stays below it. With `t`'s units in order of size in `r`
 * ({@link SearchState.sortedUnits}) a binary search finds the window, and only the swaps in it
 * are looked at (first by the objective without its float order, then exactly). The units of
 * `t` whose move to `s` lowers the migration cost (back towards where they run now) would
 * loosen the bound for all: they are looked at apart, each one. Ties are broken by the scan's
 * order, so the result is the scan's.
 */
export function findSwap(st: SearchState): Swap | undefined {
  const p = st.p;
  const N = st.N;
  const U = st.U;
  const low = lowNodes(st);
  const L = low.length;
  let bestValue = st.value - EPS;
  // the best swap's place in the scan's order (−1: nothing found yet, only a lower value counts)
  let bestPos = -1;
  let bestU = -1;
  let bestV = -1;
  const slack = SWAP_BOUND_SLACK * (1 + Math.abs(bestValue));
  const views = [resourceView(st, 0), resourceView(st, 1)] as const;
  // what `consider` looks at: resource r of s (R) and the other one (O), the nodes, unit u, t's units in order
  let R!: ResourceView;
  let O!: ResourceView;
  let s = -1;
  let t = -1;
  let u = -1;
  let posUT = 0;
  let costU = 0;
  let units!: Int32Array;
  let sizes!: Float64Array;
  let otherR = 0;
  let otherO = 0;
  // swap u with the q-th unit of t (in size order)
  const consider = (q: number): void => {
    const v = units[q]!;
    const dR = sizes[q]! - R.size[u]!;
    const dO = O.size[v]! - O.size[u]!;
    const approx =
      R.w * Math.max(otherR, (R.load[s]! + dR) * R.inv[s]!, (R.load[t]! - dR) * R.inv[t]!) +
      O.w * Math.max(otherO, (O.load[s]! + dO) * O.inv[s]!, (O.load[t]! - dO) * O.inv[t]!) +
      costU +
      swapCostDelta[q]!;
    if (approx > bestValue + slack) return;
    const value = st.valueAfterSwap(u, v);
    if (!(value <= bestValue)) return;
    const pos = posUT * U + st.slot[v]!;
    if (value === bestValue && !(pos < bestPos)) return;
    if (!st.canSwap(u, v)) return;
    bestValue = value;
    bestPos = pos;
    bestU = u;
    bestV = v;
  };
  const tops = swapTops(st);
  for (let si = 0; si < tops.length; si++) {
    s = tops[si]!;
    const r = st.wCpu > 0 && s === st.topCpu[0] ? 0 : 1;
    R = views[r];
    O = views[1 - r]!;
    const onS = st.onNode[s]!;
    for (let li = 0; li < L; li++) {
      t = low[li]!;
      if (t === s) continue;
      ({ units, sizes } = st.sortedUnits(t, r));
      const count = units.length;
      if (count === 0) continue;
      if (swapCostDelta.length < count) {
        swapCostDelta = new Float64Array(2 * count);
        swapCheaper = new Int32Array(2 * count);
        swapCheaperSizes = new Float64Array(2 * count);
      }
      // over t's units: the smallest and largest size in the other resource; the cost change of
      // each one's move to s, the least of those that do not fall and of those that do, and the latter
      let sizeOMin = Infinity;
      let sizeOMax = -Infinity;
      let costMin = Infinity;
      let cheaperCostMin = Infinity;
      let cheaper = 0;
      for (let q = 0; q < count; q++) {
        const v = units[q]!;
        sizeOMin = Math.min(sizeOMin, O.size[v]!);
        sizeOMax = Math.max(sizeOMax, O.size[v]!);
        const delta = costAt(p, v, s) - costAt(p, v, t);
        swapCostDelta[q] = delta;
        if (delta < 0) {
          swapCheaper[cheaper] = q;
          swapCheaperSizes[cheaper++] = sizes[q]!;
          cheaperCostMin = Math.min(cheaperCostMin, delta);
        } else costMin = Math.min(costMin, delta);
      }
      otherR = otherMax(R.top, R.topV, s, t);
      otherO = otherMax(O.top, O.topV, s, t);
      for (let k = 0; k < onS.length; k++) {
        u = onS[k]!;
        if (!p.allowed[u * N + t]) continue;
        posUT = (si * U + k) * L + li;
        costU = st.cost - costAt(p, u, s) + costAt(p, u, t);
        const sizeRu = R.size[u]!;
        const sizeOu = O.size[u]!;
        const boundO =
          O.w *
          Math.max(otherO, (O.load[s]! - sizeOu + sizeOMin) * O.inv[s]!, (O.load[t]! + sizeOu - sizeOMax) * O.inv[t]!);
        // the level r's highest utilisation must stay below for a swap to beat the best, for
        // either group of t's units; the window of sizes that keeps s and t below it
        const rest = bestValue + slack - boundO - costU;
        const level = levelFor(rest - costMin, R.w);
        if (otherR < level) {
          const to = firstAbove(sizes, count, level / R.inv[s]! - R.load[s]! + sizeRu);
          for (let q = firstAtLeast(sizes, count, R.load[t]! + sizeRu - level / R.inv[t]!); q < to; q++)
            if (swapCostDelta[q]! >= 0) consider(q);
        }
        const cheaperLevel = levelFor(rest - cheaperCostMin, R.w);
        if (cheaper > 0 && otherR < cheaperLevel) {
          const to = firstAbove(swapCheaperSizes, cheaper, cheaperLevel / R.inv[s]! - R.load[s]! + sizeRu);
          const from = firstAtLeast(swapCheaperSizes, cheaper, R.load[t]! + sizeRu - cheaperLevel / R.inv[t]!);
          for (let c = from; c < to; c++) consider(swapCheaper[c]!);
        }
      }
    }
  }
  return bestU < 0 ? undefined : [bestU, bestV];
}

/** One resource of a {@link SearchState} (0 cpu, 1 memory): unit sizes, node loads, 1 / capacity, weight, top three. */
interface ResourceView {
  readonly size: Float64Array;
  readonly load: Float64Array;
  readonly inv: Float64Array;
  readonly w: number;
  readonly top: Int32Array;
  readonly topV: Float64Array;
}

function resourceView(st: SearchState, r: 0 | 1): ResourceView {
  return r === 0
    ? { size: st.p.unitCpu, load: st.cpu, inv: st.invCpu, w: st.wCpu, top: st.topCpu, topV: st.topCpuV }
    : { size: st.p.unitMem, load: st.mem, inv: st.invMem, w: st.wMem, top: st.topMem, topV: st.topMemV };
}

/** The utilisation whose weighted value is `room` (± infinity for a resource without weight: anything or nothing fits). */
function levelFor(room: number, weight: number): number {
  if (weight > 0) return room / weight;
  return room > 0 ? Infinity : -Infinity;
}

/** The nodes {@link findSwap} takes units off: the highest by cpu, then by memory (weighted resources only). */
function swapTops(st: SearchState): number[] {
  const tops: number[] = [];
  if (st.wCpu > 0 && st.topCpu[0]! >= 0) tops.push(st.topCpu[0]!);
  if (st.wMem > 0 && st.topMem[0]! >= 0 && st.topMem[0] !== tops[0]) tops.push(st.topMem[0]!);
  return tops;
}

/** The first index of the ascending `sorted[0 .. length)` whose value is ≥ `x` (`length` when none). */
function firstAtLeast(sorted: Float64Array, length: number, x: number): number {
  return firstPast(sorted, length, x, true);
}

/** The first index of the ascending `sorted[0 .. length)` whose value is > `x` (`length` when none). */
function firstAbove(sorted: Float64Array, length: number, x: number): number {
  return firstPast(sorted, length, x, false);
}

/** Binary search: the first index whose value is above `x` (or equal to it, with `equal`). */
function firstPast(sorted: Float64Array, length: number, x: number, equal: boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const value = sorted[mid]!;
    if (value < x || (value === x && !equal)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The usable nodes with the lowest weighted utilisation (all of them on small clusters). */
function lowNodes(st: SearchState): number[] {
  const nodes: number[] = [];
  for (let n = 0; n < st.N; n++) if (st.p.usable[n]) nodes.push(n);
  if (nodes.length <= SWAP_NODES) return nodes;
  const load = (n: number) => st.wCpu * st.cpu[n]! * st.invCpu[n]! + st.wMem * st.mem[n]! * st.invMem[n]!;
  return nodes.sort((a, b) => load(a) - load(b) || a - b).slice(0, SWAP_NODES);
}

/**
 * One level step: for each weighted resource, tries levels between the highest utilisation and
 * its floor (and the level of the next lower node, to get past a tie), brings every node above
 * the level down to it ({@link lowerTo}), and keeps the best result if it improves. `shares`:
 * how far the other resource's highest utilisation may rise, as shares of the weighted drop
 * (`[0]`: not at all; {@link TRADE_SHARES}: the trades).
 */
function levelStep(st: SearchState, floors: { cpu: number; mem: number }, shares: readonly number[]): boolean {
  const start = st.value;
  let bestValue = start - EPS;
  let best: { r: 0 | 1; level: number; otherLimit: number } | undefined;
  for (const r of [0, 1] as const) {
    if ((r === 0 ? st.wCpu : st.wMem) <= 0) continue;
    const top = r === 0 ? st.maxCpu : st.maxMem;
    const floor = r === 0 ? floors.cpu : floors.mem;
    if (top <= floor + EPS) continue;
    const levels = new Set<number>();
    for (const step of LEVEL_STEPS) levels.add(top - (top - floor) * step);
    const vals = r === 0 ? st.topCpuV : st.topMemV;
    for (let k = 1; k < 3; k++) if (vals[k]! < top - EPS && vals[k]! > -Infinity) levels.add(vals[k]!);
    const w = r === 0 ? st.wCpu : st.wMem;
    const wOther = r === 0 ? st.wMem : st.wCpu;
    const otherMax = r === 0 ? st.maxMem : st.maxCpu;
    for (const level of levels) {
      // the other resource's highest utilisation may rise by a share of what this one drops
      // (a trade only pays when it rises by less than that, weighted)
      const room = wOther > 0 ? ((top - level) * w) / wOther : 0;
      for (const share of shares) {
        if (share > 0 && room <= EPS) break;
        const otherLimit = otherMax + room * share;
        const journal: number[] = [];
        const ok = lowerTo(st, r, level, journal, otherLimit);
        const value = st.value;
        undo(st, journal);
        if (ok && value < bestValue) {
          bestValue = value;
          best = { r, level, otherLimit };
        }
      }
    }
  }
  if (!best) return false;
  const journal: number[] = [];
  if (lowerTo(st, best.r, best.level, journal, best.otherLimit) && st.value < start - EPS) return true;
  undo(st, journal);
  return false;
}

/** Moves undone in reverse: pairs (unit, node it came from). */
function undo(st: SearchState, journal: number[]): void {
  for (let k = journal.length - 2; k >= 0; k -= 2) st.move(journal[k]!, journal[k + 1]!, false);
  st.rank();
}

/**
 * Brings every usable node whose utilisation of resource `r` (0 cpu, 1 memory) is above `level`
 * down to it, without raising the other resource's utilisation anywhere above `otherLimit` (by
 * default its highest utilisation now; a trade lets it rise): repeatedly, from the
 * node most above, the cheapest unit that covers the excess alone (else the largest) goes to the
 * least-used node that can take it within the level. Records (unit, from) in `journal`; false
 * when a node cannot be brought down (the moves made so far stay recorded).
 */
export function lowerTo(
  st: SearchState,
  r: 0 | 1,
  level: number,
  journal: number[],
  otherLimit = r === 0 ? st.maxMem : st.maxCpu,
): boolean {
  const p = st.p;
  const N = st.N;
  const load = r === 0 ? st.cpu : st.mem;
  const inv = r === 0 ? st.invCpu : st.invMem;
  const size = r === 0 ? p.unitCpu : p.unitMem;
  const other = r === 0 ? st.mem : st.cpu;
  const otherInv = r === 0 ? st.invMem : st.invCpu;
  const otherSize = r === 0 ? p.unitMem : p.unitCpu;
  const otherMax = otherLimit;
  const cap = r === 0 ? p.capCpu : p.capMem;
  const over: number[] = [];
  for (let n = 0; n < N; n++) if (p.usable[n] && load[n]! * inv[n]! > level + EPS) over.push(n);
  over.sort((a, b) => load[b]! * inv[b]! - load[a]! * inv[a]! || a - b);
  const targets: number[] = [];
  for (let n = 0; n < N; n++) if (p.usable[n]) targets.push(n);
  for (const n of over) {
    let guard = 0;
    while (load[n]! * inv[n]! > level + EPS) {
      if (++guard > st.U + 1) return false;
      const excess = load[n]! - level * cap[n]!;
      targets.sort((a, b) => load[a]! * inv[a]! - load[b]! * inv[b]! || a - b);
      let pick = -1;
      let pickTarget = -1;
      let pickCovers = false;
      let pickDelta = Infinity;
      let pickSize = 0;
      for (const u of st.onNode[n]!) {
        const s = size[u]!;
        if (s <= 0) continue;
        const covers = s >= excess;
        if (pickCovers && !covers) continue;
        // target: the least-used node that takes it within both levels
        let t = -1;
        for (const m of targets) {
          if (m === n) continue;
          if ((load[m]! + s) * inv[m]! > level + EPS) break;
          if ((other[m]! + otherSize[u]!) * otherInv[m]! > otherMax + EPS) continue;
          if (!st.canMove(u, m)) continue;
          t = m;
          break;
        }
        if (t < 0) continue;
        const delta = costAt(p, u, t) - costAt(p, u, n);
        // covering units: cheapest, then smallest; otherwise: largest, then cheapest; then the lower index
        let better: boolean;
        if (covers !== pickCovers) better = covers;
        else if (covers)
          better = delta < pickDelta || (delta === pickDelta && (s < pickSize || (s === pickSize && u < pick)));
        else better = s > pickSize || (s === pickSize && (delta < pickDelta || (delta === pickDelta && u < pick)));
        if (pick < 0 || better) {
          pick = u;
          pickTarget = t;
          pickDelta = delta;
          pickSize = s;
          pickCovers = covers;
        }
      }
      if (pick < 0) return false;
      journal.push(pick, n);
      st.move(pick, pickTarget, false);
    }
  }
  st.rank();
  return true;
}

/** Share of the units (besides those of the top nodes) a ruin-and-recreate perturbation takes out. */
const RUIN_SHARE = 0.15;

/**
 * Ruin and recreate: takes out the units of the most used node per resource and a random
 * {@link RUIN_SHARE} of the others, then puts them back one by one, largest first, each where
 * the objective grows least (within the limits and rules). False (state unchanged) when some
 * unit finds no place.
 */
function ruinAndRecreate(st: SearchState, rnd: () => number): boolean {
  const p = st.p;
  const out = new Set<number>();
  for (const top of [st.topCpu[0]!, st.topMem[0]!]) if (top >= 0) for (const u of st.onNode[top]!) out.add(u);
  for (let u = 0; u < st.U; u++) if (rnd() < RUIN_SHARE) out.add(u);
  const weight = (u: number) =>
    st.wCpu * p.unitCpu[u]! * st.invCpu[st.assign[u]!]! + st.wMem * p.unitMem[u]! * st.invMem[st.assign[u]!]!;
  const units = [...out].sort((a, b) => weight(b) - weight(a) || a - b);
  const from = units.map((u) => st.assign[u]!);
  for (const u of units) st.lift(u);
  st.rank();
  for (const u of units) {
    let best = -1;
    let bestValue = Infinity;
    for (const t of p.allowedList[u]!) {
      if (!st.canPlace(u, t)) continue;
      const v = st.valueAfterPlace(u, t);
      if (v < bestValue - EPS || (v < bestValue + EPS && rnd() < 0.3)) {
        bestValue = v;
        best = t;
      }
    }
    if (best < 0) {
      // undo: put every lifted unit back where it was
      for (let i = 0; i < units.length; i++) if (st.lifted(units[i]!)) st.place(units[i]!, from[i]!);
      for (let i = 0; i < units.length; i++) if (st.assign[units[i]!] !== from[i]) st.move(units[i]!, from[i]!, false);
      st.rank();
      return false;
    }
    st.place(u, best);
  }
  return true;
}

/** Moves {@link KICK_SIZE} random units (from the top nodes half the time) to random nodes that take them. */
function kick(st: SearchState, rnd: () => number): void {
  const p = st.p;
  for (let k = 0; k < KICK_SIZE; k++) {
    let u: number;
    const top = rnd() < 0.5 ? (rnd() < 0.5 ? st.topCpu[0]! : st.topMem[0]!) : -1;
    if (top >= 0 && st.onNode[top]!.length > 0) {
      const list = st.onNode[top]!;
      u = list[Math.floor(rnd() * list.length)]!;
    } else u = Math.floor(rnd() * st.U);
    const allowed = p.allowedList[u]!;
    for (let tries = 0; tries < 4; tries++) {
      const t = allowed[Math.floor(rnd() * allowed.length)]!;
      if (t !== st.assign[u] && st.canMove(u, t)) {
        st.move(u, t);
        break;
      }
    }
  }
}
