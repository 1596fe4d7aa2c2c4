import { type Problem, costAt } from './model';

/**
 * The Lagrangian dual of the objective's linear relaxation, for the lower bound and for the
 * search's sense of direction.
 *
 * With the per-node level rows `load(n) / capacity(n) ≤ L` of each resource priced by λ (cpu)
 * and μ (memory), λ, μ ≥ 0 summing to the resource weights, and the rules between units and the
 * capacity limits dropped, every unit independently takes the node where its migration cost plus
 * the prices of its load is lowest:
 *
 *   D(λ, μ) = Σ_n (λ_n · fixed cpu_n / cores_n + μ_n · fixed memory_n / memory_n)
 *           + Σ_u min over allowed n of (cost(u, n) + λ_n · cpu_u / cores_n + μ_n · mem_u / memory_n)
 *
 * For every placement that satisfies the constraints, its objective ≥ D(λ, μ) (weak duality:
 * weights.cpu · highest cpu use ≥ Σ λ_n · cpu use_n, and so on), whatever λ and μ are. The
 * bound is the best D found by a projected supergradient ascent (the supergradient is the node
 * utilisation under the units' choices), which converges to the linear relaxation's optimum.
 *
 * Evaluating D is O(units + nodes · log nodes): for a unit that may use every usable node and
 * has one home, the lowest price over all nodes is a query on the lower convex hull of the
 * points (λ_n / cores_n, μ_n / memory_n) in the direction of its (cpu, memory), and the units
 * are pre-sorted by that direction, so one sweep answers them all. Units with node affinity or
 * members on several nodes are evaluated directly.
 */
export class DualBound {
  private readonly p: Problem;
  /** Usable nodes. */
  private readonly nodes: Int32Array;
  /** Hull units, in ascending order of mem / (cpu + mem) (scaled to node sizes). */
  private readonly hullUnits: Int32Array;
  /** Per hull unit: the home node (−1 none) and its saving there. */
  private readonly hullHome: Int32Array;
  private readonly hullSave: Float64Array;
  /** Units evaluated directly (restricted nodes, several homes), with their allowed nodes and costs there (flat, from `directStart[i]`). */
  private readonly directUnits: Int32Array;
  private readonly directStart: Int32Array;
  private readonly directNodes: Int32Array;
  private readonly directCost: Float64Array;
  private readonly invCpu: Float64Array;
  private readonly invMem: Float64Array;
  /** Scratch: per node the cpu and memory the units choose, the hull. */
  readonly loadCpu: Float64Array;
  readonly loadMem: Float64Array;
  private readonly alpha: Float64Array;
  private readonly beta: Float64Array;
  private readonly order: Int32Array;
  private readonly hull: Int32Array;
  /** Current multipliers (per node; 0 on nodes that are not usable). */
  readonly lambda: Float64Array;
  readonly mu: Float64Array;
  /** Per unit: the node it chose at the last evaluation. */
  readonly choice: Int32Array;
  /** Best value found and its multipliers. */
  best = -Infinity;
  readonly bestLambda: Float64Array;
  readonly bestMu: Float64Array;

  constructor(p: Problem) {
    this.p = p;
    const N = p.nodeNames.length;
    const U = p.units.length;
    const usable: number[] = [];
    for (let n = 0; n < N; n++) if (p.usable[n]) usable.push(n);
    this.nodes = Int32Array.from(usable);
    this.invCpu = p.capCpu.map((c) => 1 / c);
    this.invMem = p.capMem.map((c) => 1 / c);
    let capC = 0;
    let capM = 0;
    for (const n of usable) {
      capC += p.capCpu[n]!;
      capM += p.capMem[n]!;
    }
    const hull: number[] = [];
    const direct: number[] = [];
    for (let u = 0; u < U; u++) {
      const stays = p.stays[u]!;
      if (p.allowedList[u]!.length === usable.length && stays.length <= 1) hull.push(u);
      else direct.push(u);
    }
    // direction of a unit's load relative to the cluster's size (any monotone key of mem/cpu works)
    const key = (u: number) => {
      const a = p.unitCpu[u]! / (capC || 1);
      const b = p.unitMem[u]! / (capM || 1);
      return a + b > 0 ? b / (a + b) : 0;
    };
    hull.sort((x, y) => key(x) - key(y) || x - y);
    this.hullUnits = Int32Array.from(hull);
    this.hullHome = new Int32Array(hull.length).fill(-1);
    this.hullSave = new Float64Array(hull.length);
    hull.forEach((u, i) => {
      const s = p.stays[u]![0];
      if (s && p.usable[s[0]] && p.allowed[u * N + s[0]]) {
        this.hullHome[i] = s[0];
        this.hullSave[i] = s[1];
      }
    });
    this.directUnits = Int32Array.from(direct);
    this.directStart = new Int32Array(direct.length + 1);
    direct.forEach((u, i) => (this.directStart[i + 1] = this.directStart[i]! + p.allowedList[u]!.length));
    this.directNodes = new Int32Array(this.directStart[direct.length]!);
    this.directCost = new Float64Array(this.directStart[direct.length]!);
    direct.forEach((u, i) => {
      let k = this.directStart[i]!;
      for (const n of p.allowedList[u]!) {
        this.directNodes[k] = n;
        this.directCost[k++] = costAt(p, u, n);
      }
    });
    this.loadCpu = new Float64Array(N);
    this.loadMem = new Float64Array(N);
    this.alpha = new Float64Array(N);
    this.beta = new Float64Array(N);
    this.order = new Int32Array(usable.length);
    this.hull = new Int32Array(usable.length);
    this.lambda = new Float64Array(N);
    this.mu = new Float64Array(N);
    this.bestLambda = new Float64Array(N);
    this.bestMu = new Float64Array(N);
    this.choice = new Int32Array(U);
  }

  /**
   * D(λ, μ) at the current multipliers; fills {@link choice} and the per-node utilisations the
   * choices give (`loadCpu`, `loadMem` as utilisations, fixed load included).
   */
  evaluate(): number {
    const p = this.p;
    const N = p.nodeNames.length;
    const nodes = this.nodes;
    const K = nodes.length;
    const alpha = this.alpha;
    const beta = this.beta;
    const loadCpu = this.loadCpu;
    const loadMem = this.loadMem;
    let value = 0;
    for (let k = 0; k < K; k++) {
      const n = nodes[k]!;
      alpha[n] = this.lambda[n]! * this.invCpu[n]!;
      beta[n] = this.mu[n]! * this.invMem[n]!;
      loadCpu[n] = p.fixCpu[n]!;
      loadMem[n] = p.fixMem[n]!;
      value += alpha[n] * p.fixCpu[n]! + beta[n] * p.fixMem[n]!;
    }
    // lower-left hull of (alpha, beta): by alpha ascending, then beta ascending
    const order = this.order;
    for (let k = 0; k < K; k++) order[k] = nodes[k]!;
    order.sort((x, y) => alpha[x]! - alpha[y]! || beta[x]! - beta[y]! || x - y);
    const hull = this.hull;
    let h = 0;
    for (let k = 0; k < K; k++) {
      const n = order[k]!;
      if (h > 0 && beta[n]! >= beta[hull[h - 1]!]!) continue; // dominated: not lower in beta
      while (h >= 2) {
        const a = hull[h - 2]!;
        const b = hull[h - 1]!;
        // keep b only if it lies strictly below the segment a → n
        const cross = (alpha[b]! - alpha[a]!) * (beta[n]! - beta[a]!) - (beta[b]! - beta[a]!) * (alpha[n]! - alpha[a]!);
        if (cross <= 0) h--;
        else break;
      }
      hull[h++] = n;
    }
    // sweep the hull units in direction order
    const units = this.hullUnits;
    const choice = this.choice;
    const unitCpu = p.unitCpu;
    const unitMem = p.unitMem;
    const fullCost = p.fullCost;
    const hullHome = this.hullHome;
    const hullSave = this.hullSave;
    let at = 0;
    for (let i = 0; i < units.length; i++) {
      const u = units[i]!;
      const a = unitCpu[u]!;
      const b = unitMem[u]!;
      let v = hull[at]!;
      let price = a * alpha[v]! + b * beta[v]!;
      while (at + 1 < h) {
        const w = hull[at + 1]!;
        const next = a * alpha[w]! + b * beta[w]!;
        if (next > price) break;
        at++;
        v = w;
        price = next;
      }
      let best = fullCost[u]! + price;
      let node = v;
      const home = hullHome[i]!;
      if (home >= 0) {
        const there = fullCost[u]! - hullSave[i]! + a * alpha[home]! + b * beta[home]!;
        if (there <= best) {
          best = there;
          node = home;
        }
      }
      value += best;
      choice[u] = node;
      loadCpu[node]! += a;
      loadMem[node]! += b;
    }
    // the other units over their allowed nodes, costs precomputed
    const directUnits = this.directUnits;
    const start = this.directStart;
    const dNodes = this.directNodes;
    const dCost = this.directCost;
    for (let i = 0; i < directUnits.length; i++) {
      const u = directUnits[i]!;
      const a = unitCpu[u]!;
      const b = unitMem[u]!;
      let best = Infinity;
      let node = -1;
      for (let k = start[i]!, end = start[i + 1]!; k < end; k++) {
        const n = dNodes[k]!;
        const c = dCost[k]! + a * alpha[n]! + b * beta[n]!;
        if (c < best) {
          best = c;
          node = n;
        }
      }
      if (node < 0) continue;
      value += best;
      choice[u] = node;
      loadCpu[node]! += a;
      loadMem[node]! += b;
    }
    for (let k = 0; k < K; k++) {
      const n = nodes[k]!;
      loadCpu[n]! *= this.invCpu[n]!;
      loadMem[n]! *= this.invMem[n]!;
    }
    if (value > this.best) {
      this.best = value;
      this.bestLambda.set(this.lambda);
      this.bestMu.set(this.mu);
    }
    void N;
    return value;
  }

  /**
   * Projected supergradient ascent from the current multipliers: at most `iterations` steps of
   * Polyak size towards `target` (an objective some placement reaches), the step factor halved
   * after {@link PATIENCE} steps without a better value; it stops once the best value is within
   * `tolerance` (relative) of the target, or has risen by less than that over the last
   * {@link STALL_STEPS} steps. Returns the best value.
   */
  ascend(iterations: number, target: number, tolerance: number): number {
    const p = this.p;
    const w = p.input.weights;
    const nodes = this.nodes;
    const K = nodes.length;
    if (K === 0) return this.best;
    let factor = 1;
    let since = 0;
    const close = tolerance * Math.abs(target);
    let last = this.best;
    const gl = new Float64Array(K);
    const gm = new Float64Array(K);
    const buf = new Float64Array(K);
    const scratch = new Float64Array(K);
    const history = new Float64Array(STALL_STEPS).fill(-Infinity);
    for (let it = 0; it < iterations; it++) {
      const value = this.evaluate();
      if (target - this.best <= close) break;
      if (it >= STALL_STEPS && this.best - history[it % STALL_STEPS]! <= close) break;
      history[it % STALL_STEPS] = this.best;
      if (value > last + 1e-12) {
        last = value;
        since = 0;
      } else if (++since >= PATIENCE) {
        factor /= 2;
        since = 0;
        if (factor < 1e-4) break;
      }
      // supergradient, projected onto the simplices' tangent space (mean removed)
      let mc = 0;
      let mm = 0;
      for (let k = 0; k < K; k++) {
        mc += this.loadCpu[nodes[k]!]!;
        mm += this.loadMem[nodes[k]!]!;
      }
      mc /= K;
      mm /= K;
      let norm = 0;
      for (let k = 0; k < K; k++) {
        gl[k] = w.cpu > 0 ? this.loadCpu[nodes[k]!]! - mc : 0;
        gm[k] = w.mem > 0 ? this.loadMem[nodes[k]!]! - mm : 0;
        norm += gl[k]! * gl[k]! + gm[k]! * gm[k]!;
      }
      if (norm <= 0) break;
      const step = (factor * Math.max(target - value, 1e-9 * Math.abs(target))) / norm;
      for (let k = 0; k < K; k++) buf[k] = this.lambda[nodes[k]!]! + step * gl[k]!;
      projectSimplex(buf, w.cpu, scratch);
      for (let k = 0; k < K; k++) this.lambda[nodes[k]!] = buf[k]!;
      for (let k = 0; k < K; k++) buf[k] = this.mu[nodes[k]!]! + step * gm[k]!;
      projectSimplex(buf, w.mem, scratch);
      for (let k = 0; k < K; k++) this.mu[nodes[k]!] = buf[k]!;
    }
    return this.best;
  }

  /**
   * Starts from multipliers concentrated on the most used nodes of a placement: per resource,
   * the weight spread over the usable nodes in proportion to exp((use − highest use) / τ) (with
   * τ = {@link START_TEMPERATURE}), where the optimum's multipliers are (the nodes at the highest
   * level); evenly without a placement.
   */
  start(cpuUse?: Float64Array, memUse?: Float64Array): void {
    const w = this.p.input.weights;
    spreadBy(this.nodes, this.lambda, w.cpu, cpuUse);
    spreadBy(this.nodes, this.mu, w.mem, memUse);
  }
}

/** Steps without a better value after which the ascent halves its step factor. */
const PATIENCE = 20;
/** Steps over which the ascent must gain more than its tolerance to go on. */
const STALL_STEPS = 60;

/** Temperature of the starting multipliers (utilisation): nodes within a few of it of the top share the weight. */
const START_TEMPERATURE = 0.005;

function spreadBy(nodes: Int32Array, out: Float64Array, total: number, use: Float64Array | undefined): void {
  let top = -Infinity;
  if (use) for (const n of nodes) top = Math.max(top, use[n]!);
  let sum = 0;
  for (const n of nodes) {
    out[n] = use ? Math.exp((use[n]! - top) / START_TEMPERATURE) : 1;
    sum += out[n];
  }
  for (const n of nodes) out[n] = sum > 0 ? (out[n]! * total) / sum : 0;
}

/** Euclidean projection of `v` onto { x ≥ 0, Σ x = total } (in place); `scratch` at least as long as `v`. */
export function projectSimplex(
  v: Float64Array,
  total: number,
  scratch: Float64Array = new Float64Array(v.length),
): void {
  const K = v.length;
  if (total <= 0) {
    v.fill(0);
    return;
  }
  const s = scratch.subarray(0, K);
  s.set(v);
  s.sort();
  // largest first: s[K − 1 − k]
  let sum = 0;
  let theta = 0;
  for (let k = 0; k < K; k++) {
    sum += s[K - 1 - k]!;
    const t = (sum - total) / (k + 1);
    if (k === K - 1 || s[K - 2 - k]! <= t) {
      theta = t;
      break;
    }
  }
  for (let k = 0; k < K; k++) v[k] = Math.max(0, v[k]! - theta);
}
