import { type Problem, costAt } from './model';
import { CAPACITY_SLACK } from './objective';

/** Improvements smaller than this are float noise, not progress. */
export const EPS = 1e-12;

/**
 * An assignment of the movable units with incremental sums: node loads, the top three node
 * utilisations per resource (a move changes two nodes, so the highest of the others is always
 * among them), negative-affinity partner counts per (unit, node), the units on each node, and
 * the migration cost. Every query is O(1) except the re-ranking after a change (O(nodes)).
 */
export class SearchState {
  readonly p: Problem;
  readonly N: number;
  readonly U: number;
  readonly assign: Int32Array;
  readonly cpu: Float64Array;
  readonly mem: Float64Array;
  readonly cores: Float64Array;
  /** Per unit with negative partners: its row in {@link negCount}; −1 otherwise. */
  readonly negRow: Int32Array;
  /** `row * N + node`: partners of the row's unit on the node. */
  readonly negCount: Int32Array;
  /** Units on each node (unordered) and each unit's position in its node's list. */
  readonly onNode: number[][];
  readonly slot: Int32Array;
  readonly wCpu: number;
  readonly wMem: number;
  /** Sum of the units' migration costs. */
  cost = 0;
  /** Top three usable nodes by cpu and memory utilisation: indices (−1 = none) and values. */
  readonly topCpu = new Int32Array(3);
  readonly topCpuV = new Float64Array(3);
  readonly topMem = new Int32Array(3);
  readonly topMemV = new Float64Array(3);
  /** Per node: bumped at every change of its units (lets a search skip what it tried on unchanged nodes). */
  readonly version: Int32Array;
  /** Splits tried without improvement: set key → node versions and outside maxima then. */
  readonly splitMemo = new Map<string, string>();
  /** Capacity limits with the slack applied. */
  readonly limMem: Float64Array;
  readonly limCores: Float64Array;
  readonly invCpu: Float64Array;
  readonly invMem: Float64Array;
  /** Per node × resource (`2 * node + r`): its units by size (see {@link sortedUnits}) and the node version then (−1 = none). */
  private readonly sorted: (SortedUnits | undefined)[];
  private readonly sortedAt: Int32Array;

  constructor(p: Problem, assign: Int32Array) {
    this.p = p;
    this.N = p.nodeNames.length;
    this.U = p.units.length;
    this.assign = Int32Array.from(assign);
    this.wCpu = p.input.weights.cpu;
    this.wMem = p.input.weights.mem;
    const N = this.N;
    this.cpu = Float64Array.from(p.fixCpu);
    this.mem = Float64Array.from(p.fixMem);
    this.cores = Float64Array.from(p.fixCores);
    this.limMem = p.limMem.map((l) => l + CAPACITY_SLACK * l);
    this.limCores = p.limCores.map((l) => l + CAPACITY_SLACK * l);
    this.invCpu = p.capCpu.map((c) => 1 / c);
    this.invMem = p.capMem.map((c) => 1 / c);
    this.version = new Int32Array(N);
    this.sorted = new Array<SortedUnits | undefined>(2 * N).fill(undefined);
    this.sortedAt = new Int32Array(2 * N).fill(-1);
    this.negRow = new Int32Array(this.U).fill(-1);
    let rows = 0;
    for (let u = 0; u < this.U; u++) if (p.negatives[u]!.length > 0) this.negRow[u] = rows++;
    this.negCount = new Int32Array(rows * N);
    this.onNode = Array.from({ length: N }, () => []);
    this.slot = new Int32Array(this.U);
    for (let u = 0; u < this.U; u++) {
      const n = this.assign[u]!;
      this.cpu[n]! += p.unitCpu[u]!;
      this.mem[n]! += p.unitMem[u]!;
      this.cores[n]! += p.unitCores[u]!;
      this.slot[u] = this.onNode[n]!.length;
      this.onNode[n]!.push(u);
      this.cost += costAt(p, u, n);
      for (const v of p.negatives[u]!) this.negCount[this.negRow[v]! * N + n]! += 1;
    }
    this.rank();
  }

  /** A copy (same problem). */
  clone(): SearchState {
    return new SearchState(this.p, this.assign);
  }

  /** Recomputes the top three per resource (O(nodes)). */
  rank(): void {
    top3(this.cpu, this.invCpu, this.p.usable, this.topCpu, this.topCpuV);
    top3(this.mem, this.invMem, this.p.usable, this.topMem, this.topMemV);
  }

  get maxCpu(): number {
    return this.topCpu[0]! < 0 ? 0 : this.topCpuV[0]!;
  }

  get maxMem(): number {
    return this.topMem[0]! < 0 ? 0 : this.topMemV[0]!;
  }

  /** The objective (see `PlanObjective`). */
  get value(): number {
    return this.wCpu * this.maxCpu + this.wMem * this.maxMem + this.cost;
  }

  /** Whether unit `u` may go to node `t` now (allowed, fits, no negative partner there); `t` ≠ its node. */
  canMove(u: number, t: number): boolean {
    const p = this.p;
    if (!p.allowed[u * this.N + t]) return false;
    if (this.mem[t]! + p.unitMem[u]! > this.limMem[t]!) return false;
    if (this.cores[t]! + p.unitCores[u]! > this.limCores[t]!) return false;
    const row = this.negRow[u]!;
    return row < 0 || this.negCount[row * this.N + t] === 0;
  }

  /** The objective after moving `u` to `t` (no check). */
  valueAfterMove(u: number, t: number): number {
    const p = this.p;
    const s = this.assign[u]!;
    const c = p.unitCpu[u]!;
    const m = p.unitMem[u]!;
    const cpuS = (this.cpu[s]! - c) * this.invCpu[s]!;
    const cpuT = (this.cpu[t]! + c) * this.invCpu[t]!;
    const memS = (this.mem[s]! - m) * this.invMem[s]!;
    const memT = (this.mem[t]! + m) * this.invMem[t]!;
    const maxC = Math.max(otherMax(this.topCpu, this.topCpuV, s, t), cpuS, cpuT);
    const maxM = Math.max(otherMax(this.topMem, this.topMemV, s, t), memS, memT);
    return this.wCpu * maxC + this.wMem * maxM + this.cost - costAt(p, u, s) + costAt(p, u, t);
  }

  /**
   * The units on node `n` in ascending order of their size in resource `r` (0 cpu, 1 memory;
   * equal sizes by unit index), with those sizes; kept until the node's units change.
   */
  sortedUnits(n: number, r: 0 | 1): SortedUnits {
    const key = 2 * n + r;
    const cached = this.sorted[key];
    if (cached && this.sortedAt[key] === this.version[n]) return cached;
    const size = r === 0 ? this.p.unitCpu : this.p.unitMem;
    const units = Int32Array.from(this.onNode[n]!).sort((a, b) => size[a]! - size[b]! || a - b);
    const sizes = new Float64Array(units.length);
    for (let k = 0; k < units.length; k++) sizes[k] = size[units[k]!]!;
    const entry = { units, sizes };
    this.sorted[key] = entry;
    this.sortedAt[key] = this.version[n]!;
    return entry;
  }

  /** Whether `u` (on s) and `v` (on t ≠ s) may trade places. */
  canSwap(u: number, v: number): boolean {
    const p = this.p;
    const N = this.N;
    const s = this.assign[u]!;
    const t = this.assign[v]!;
    if (!p.allowed[u * N + t] || !p.allowed[v * N + s]) return false;
    if (this.mem[t]! - p.unitMem[v]! + p.unitMem[u]! > this.limMem[t]!) return false;
    if (this.mem[s]! - p.unitMem[u]! + p.unitMem[v]! > this.limMem[s]!) return false;
    if (this.cores[t]! - p.unitCores[v]! + p.unitCores[u]! > this.limCores[t]!) return false;
    if (this.cores[s]! - p.unitCores[u]! + p.unitCores[v]! > this.limCores[s]!) return false;
    const ru = this.negRow[u]!;
    if (ru >= 0 && this.negCount[ru * N + t]! - (isPartner(p.negatives[u]!, v) ? 1 : 0) > 0) return false;
    const rv = this.negRow[v]!;
    return rv < 0 || this.negCount[rv * N + s]! - (isPartner(p.negatives[v]!, u) ? 1 : 0) === 0;
  }

  /** The objective after swapping `u` and `v` (no check). */
  valueAfterSwap(u: number, v: number): number {
    const p = this.p;
    const s = this.assign[u]!;
    const t = this.assign[v]!;
    const dc = p.unitCpu[v]! - p.unitCpu[u]!;
    const dm = p.unitMem[v]! - p.unitMem[u]!;
    const maxC = Math.max(
      otherMax(this.topCpu, this.topCpuV, s, t),
      (this.cpu[s]! + dc) * this.invCpu[s]!,
      (this.cpu[t]! - dc) * this.invCpu[t]!,
    );
    const maxM = Math.max(
      otherMax(this.topMem, this.topMemV, s, t),
      (this.mem[s]! + dm) * this.invMem[s]!,
      (this.mem[t]! - dm) * this.invMem[t]!,
    );
    const cost = this.cost - costAt(p, u, s) - costAt(p, v, t) + costAt(p, u, t) + costAt(p, v, s);
    return this.wCpu * maxC + this.wMem * maxM + cost;
  }

  /** Moves `u` to `t` (no check); `rerank: false` leaves the top three stale (call {@link rank}). */
  move(u: number, t: number, rerank = true): void {
    const p = this.p;
    const N = this.N;
    const s = this.assign[u]!;
    if (s === t) return;
    this.version[s]! += 1;
    this.version[t]! += 1;
    this.cost += costAt(p, u, t) - costAt(p, u, s);
    this.cpu[s]! -= p.unitCpu[u]!;
    this.mem[s]! -= p.unitMem[u]!;
    this.cores[s]! -= p.unitCores[u]!;
    this.cpu[t]! += p.unitCpu[u]!;
    this.mem[t]! += p.unitMem[u]!;
    this.cores[t]! += p.unitCores[u]!;
    for (const v of p.negatives[u]!) {
      const row = this.negRow[v]! * N;
      this.negCount[row + s]! -= 1;
      this.negCount[row + t]! += 1;
    }
    const list = this.onNode[s]!;
    const i = this.slot[u]!;
    const last = list.pop()!;
    if (last !== u) {
      list[i] = last;
      this.slot[last] = i;
    }
    this.slot[u] = this.onNode[t]!.length;
    this.onNode[t]!.push(u);
    this.assign[u] = t;
    if (rerank) this.rank();
  }

  /**
   * Takes unit `u` out (its load leaves its node; `assign[u]` becomes −1 − node): for ruin and
   * recreate, which puts it back with {@link place}. Leaves the top three stale.
   */
  lift(u: number): void {
    const p = this.p;
    const N = this.N;
    const s = this.assign[u]!;
    this.version[s]! += 1;
    this.cost -= costAt(p, u, s);
    this.cpu[s]! -= p.unitCpu[u]!;
    this.mem[s]! -= p.unitMem[u]!;
    this.cores[s]! -= p.unitCores[u]!;
    for (const v of p.negatives[u]!) this.negCount[this.negRow[v]! * N + s]! -= 1;
    const list = this.onNode[s]!;
    const i = this.slot[u]!;
    const last = list.pop()!;
    if (last !== u) {
      list[i] = last;
      this.slot[last] = i;
    }
    this.assign[u] = -1 - s;
  }

  /** Whether unit `u` is lifted out. */
  lifted(u: number): boolean {
    return this.assign[u]! < 0;
  }

  /** Whether a lifted unit may be placed on `t` (allowed, fits, no partner there). */
  canPlace(u: number, t: number): boolean {
    const p = this.p;
    if (!p.allowed[u * this.N + t]) return false;
    if (this.mem[t]! + p.unitMem[u]! > this.limMem[t]!) return false;
    if (this.cores[t]! + p.unitCores[u]! > this.limCores[t]!) return false;
    const row = this.negRow[u]!;
    return row < 0 || this.negCount[row * this.N + t] === 0;
  }

  /** The objective with a lifted unit placed on `t` (the other lifted units count nowhere). */
  valueAfterPlace(u: number, t: number): number {
    const p = this.p;
    const maxC = Math.max(otherMax(this.topCpu, this.topCpuV, t, t), (this.cpu[t]! + p.unitCpu[u]!) * this.invCpu[t]!);
    const maxM = Math.max(otherMax(this.topMem, this.topMemV, t, t), (this.mem[t]! + p.unitMem[u]!) * this.invMem[t]!);
    return this.wCpu * maxC + this.wMem * maxM + this.cost + costAt(p, u, t);
  }

  /** Puts a lifted unit on `t` and re-ranks. */
  place(u: number, t: number): void {
    const p = this.p;
    const N = this.N;
    this.version[t]! += 1;
    this.cost += costAt(p, u, t);
    this.cpu[t]! += p.unitCpu[u]!;
    this.mem[t]! += p.unitMem[u]!;
    this.cores[t]! += p.unitCores[u]!;
    for (const v of p.negatives[u]!) this.negCount[this.negRow[v]! * N + t]! += 1;
    this.slot[u] = this.onNode[t]!.length;
    this.onNode[t]!.push(u);
    this.assign[u] = t;
    this.rank();
  }

  /** Copies another state of the same problem into this one. */
  copyFrom(other: SearchState): void {
    for (let u = 0; u < this.U; u++) if (this.assign[u] !== other.assign[u]) this.move(u, other.assign[u]!, false);
    this.cost = other.cost;
    this.rank();
  }

  /** Moves every unit to where `assign` puts it (unit → node, no check) and re-ranks. */
  setAssignment(assign: Int32Array): void {
    for (let u = 0; u < this.U; u++) if (this.assign[u] !== assign[u]) this.move(u, assign[u]!, false);
    this.resum();
    this.rank();
  }

  /** Recomputes the cost from scratch (drops the float drift of many incremental updates). */
  resum(): void {
    let cost = 0;
    for (let u = 0; u < this.U; u++) cost += costAt(this.p, u, this.assign[u]!);
    this.cost = cost;
  }
}

/** A node's units in ascending order of size in one resource (see `SearchState.sortedUnits`). */
export interface SortedUnits {
  readonly units: Int32Array;
  /** `sizes[k]`: the size of `units[k]` (cores in use or bytes). */
  readonly sizes: Float64Array;
}

/** Whether `v` is in the ascending partner list. */
export function isPartner(partners: Int32Array, v: number): boolean {
  for (let k = 0; k < partners.length; k++) if (partners[k] === v) return true;
  return false;
}

/** The highest of the top three whose node is neither `s` nor `t` (0 when there is none). */
export function otherMax(idx: Int32Array, val: Float64Array, s: number, t: number): number {
  for (let k = 0; k < 3; k++) {
    const n = idx[k]!;
    if (n < 0) return 0;
    if (n !== s && n !== t) return val[k]!;
  }
  return 0;
}

function top3(load: Float64Array, inv: Float64Array, usable: Uint8Array, idx: Int32Array, val: Float64Array): void {
  idx.fill(-1);
  val.fill(-Infinity);
  for (let n = 0; n < load.length; n++) {
    if (!usable[n]) continue;
    const v = load[n]! * inv[n]!;
    if (v > val[0]!) {
      idx[2] = idx[1]!;
      val[2] = val[1]!;
      idx[1] = idx[0]!;
      val[1] = val[0]!;
      idx[0] = n;
      val[0] = v;
    } else if (v > val[1]!) {
      idx[2] = idx[1]!;
      val[2] = val[1]!;
      idx[1] = n;
      val[1] = v;
    } else if (v > val[2]!) {
      idx[2] = n;
      val[2] = v;
    }
  }
}
