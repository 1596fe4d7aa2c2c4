import { costAt } from './model';
import type { SearchState } from './state';

/** Slack of the level checks, in utilisation (float noise never makes a node count as above a level). */
const LEVEL_SLACK = 1e-9;
/** Added to a migration's cost when ranking units by gain per cost (a unit that moves for free ranks first, by gain). */
const RATIO_EPS = 1e-7;
/** Times a unit may move within one repair (a unit moved away can be pushed on once more, never back and forth). */
const MAX_MOVES_PER_UNIT = 2;
/** Sizes of units without a target remembered per round (see `LevelRepair.moveTo`). */
const FAILED_KEPT = 8;

/**
 * A *level repair*: brings every usable node to at most `levelCpu` cpu and `levelMem` memory
 * utilisation with cheap migrations, the primal side of the objective's trade-off between
 * balance and moves (the linear relaxation behind the bound moves exactly the load above its
 * levels, at the lowest cost per unit of load).
 *
 * Nodes above a level are taken most excess first. For each, repeatedly, the unit that removes
 * the most weighted excess per unit of migration cost (a unit that has already left its node
 * moves for free) goes to the node that takes it within both levels, limits and rules, where it
 * costs least and, among those, the one it leaves emptiest relative to the levels. When no unit
 * fits anywhere within the levels (the room for cpu is on nodes whose memory is at its level,
 * say), the move that lowers the total excess most per unit of cost is made even though its
 * target ends above a level, and that target is repaired in turn: the exchanges a
 * two-resource balance needs. A resource whose weight is 0 has no level.
 *
 * Every move keeps the hard constraints (capacity, rules), so the state stays a valid placement
 * whatever happens; the levels are a target, not a constraint. Moves are recorded in `journal`
 * as (unit, from) pairs (undo: move them back in reverse order). `run` returns whether every
 * node ended within both levels.
 */
export class LevelRepair {
  private readonly st: SearchState;
  private readonly moved: Uint8Array;
  private readonly skip: Int32Array;
  private stamp = 0;
  /** Scratch: units ranked by {@link ratios} (gain per cost, by unit). */
  private readonly order: Int32Array;
  private readonly ratios: Float64Array;
  /** Per unit: {@link leaveCost} from the node it is on (kept up to date by {@link moveUnit}). */
  private readonly leave: Float64Array;
  /** Scratch: per node its excess (see {@link pushOut}). */
  private readonly nodeExcess: Float64Array;
  /** Per unit: 1 when every usable node is allowed and it has no negative partner. */
  private readonly plain: Uint8Array;
  /** Sizes of plain units that found no target since the last move (see {@link moveTo}). */
  private failed = 0;
  private readonly failedCpu = new Float64Array(FAILED_KEPT);
  private readonly failedMem = new Float64Array(FAILED_KEPT);
  private readonly failedCores = new Float64Array(FAILED_KEPT);

  constructor(st: SearchState) {
    this.st = st;
    const p = st.p;
    let usable = 0;
    for (let n = 0; n < st.N; n++) usable += p.usable[n]!;
    this.nodeExcess = new Float64Array(st.N);
    this.leave = new Float64Array(st.U);
    this.plain = new Uint8Array(st.U);
    for (let u = 0; u < st.U; u++)
      this.plain[u] = p.allowedList[u]!.length === usable && p.negatives[u]!.length === 0 ? 1 : 0;
    this.moved = new Uint8Array(st.U);
    this.skip = new Int32Array(st.U);
    this.order = new Int32Array(st.U);
    this.ratios = new Float64Array(st.U);
  }

  /** The weighted excess of node `n` above the levels, with `dc` cores and `dm` bytes added. */
  private excess(n: number, levelCpu: number, levelMem: number, dc: number, dm: number): number {
    const st = this.st;
    const c = (st.cpu[n]! + dc) * st.invCpu[n]! - levelCpu;
    const m = (st.mem[n]! + dm) * st.invMem[n]! - levelMem;
    return (c > LEVEL_SLACK ? st.wCpu * c : 0) + (m > LEVEL_SLACK ? st.wMem * m : 0);
  }

  /** Cost of unit `u` leaving node `s` for the cheapest other node it may use (0 for a unit already away from home). */
  private leaveCost(u: number, s: number): number {
    const p = this.st.p;
    const stays = p.stays[u]!;
    if (stays.length === 0) return 0;
    if (stays.length === 1) return stays[0]![0] === s ? stays[0]![1] : 0;
    let min = Infinity;
    for (const t of p.allowedList[u]!) if (t !== s) min = Math.min(min, costAt(p, u, t));
    return min === Infinity ? Infinity : Math.max(0, min - costAt(p, u, s));
  }

  /**
   * Repairs to the levels (see the class); true when every node ended within them. It stops
   * early (false) once the migrations made cost more than `budget`.
   */
  run(levelCpuIn: number, levelMemIn: number, journal: number[], budget = Infinity): boolean {
    const st = this.st;
    const p = st.p;
    const N = st.N;
    // a resource without weight has no level
    const levelCpu = st.wCpu > 0 ? levelCpuIn : Infinity;
    const levelMem = st.wMem > 0 ? levelMemIn : Infinity;
    for (let u = 0; u < st.U; u++) this.leave[u] = this.leaveCost(u, st.assign[u]!);
    this.moved.fill(0);
    const work: number[] = [];
    for (let n = 0; n < N; n++) if (p.usable[n] && this.excess(n, levelCpu, levelMem, 0, 0) > 0) work.push(n);
    // most excess last: popped first
    work.sort((a, b) => this.excess(a, levelCpu, levelMem, 0, 0) - this.excess(b, levelCpu, levelMem, 0, 0) || b - a);
    let ok = true;
    let guard = 0;
    while (work.length > 0) {
      const s = work.pop()!;
      if (!this.shed(s, levelCpu, levelMem, journal, work, budget)) ok = false;
      if (st.cost > budget) {
        ok = false;
        break;
      }
      if (++guard > 4 * N + 16) {
        ok = false;
        break;
      }
    }
    st.rank();
    return ok;
  }

  /**
   * Sheds node `s` down to the levels; false when it cannot. Each round ranks the units of `s` by
   * excess removed per unit of cost and moves the first that has a target (a unit without one
   * keeps none while `s` sheds: the other nodes only fill up).
   */
  private shed(
    s: number,
    levelCpu: number,
    levelMem: number,
    journal: number[],
    work: number[],
    budget: number,
  ): boolean {
    const st = this.st;
    const p = st.p;
    const list = st.onNode[s]!;
    const order = this.order;
    const ratios = this.ratios;
    this.stamp++;
    this.failed = 0;
    for (;;) {
      const excess = this.excess(s, levelCpu, levelMem, 0, 0);
      if (excess <= 0) return true;
      if (st.cost > budget) return false;
      const overC = Math.max(0, st.cpu[s]! * st.invCpu[s]! - levelCpu);
      const overM = Math.max(0, st.mem[s]! * st.invMem[s]! - levelMem);
      // the best-ranked unit first; only when it has no target are the others ranked in full
      let count = 0;
      let first = -1;
      let firstRatio = 0;
      const skip = this.skip;
      const stamp = this.stamp;
      const movedCount = this.moved;
      const leave = this.leave;
      const unitCpu = p.unitCpu;
      const unitMem = p.unitMem;
      const wC = st.wCpu * st.invCpu[s]!;
      const wM = st.wMem * st.invMem[s]!;
      const capC = overC / st.invCpu[s]!;
      const capM = overM / st.invMem[s]!;
      for (let i = 0; i < list.length; i++) {
        const u = list[i]!;
        if (skip[u] === stamp || movedCount[u]! >= MAX_MOVES_PER_UNIT) continue;
        const a = unitCpu[u]!;
        const b = unitMem[u]!;
        const gain = wC * (a < capC ? a : capC) + wM * (b < capM ? b : capM);
        if (gain <= 0) continue;
        const ratio = gain / (leave[u]! + RATIO_EPS);
        ratios[u] = ratio;
        order[count++] = u;
        if (first < 0 || ratio > firstRatio || (ratio === firstRatio && u < first)) {
          first = u;
          firstRatio = ratio;
        }
      }
      let moved = first >= 0 && this.moveTo(first, s, levelCpu, levelMem, journal);
      if (!moved && count > 1) {
        const ranked = order.subarray(0, count).sort((x, y) => ratios[y]! - ratios[x]! || x - y);
        for (let k = 1; k < ranked.length && !moved; k++)
          moved = this.moveTo(ranked[k]!, s, levelCpu, levelMem, journal);
      }
      if (moved) this.failed = 0;
      if (!moved) {
        if (!this.pushOut(s, levelCpu, levelMem, journal, work)) return false;
        this.stamp++; // room changed: every unit may be offered again
        this.failed = 0;
      }
    }
  }

  /**
   * Moves unit `u` off `s` to its {@link target}; false (and `u` skipped while `s` sheds) when it
   * has none. A plain unit (every usable node allowed, no negative partner) at least as large in
   * cpu, memory and cores as a plain unit that found no target since the last move finds none
   * either, and is skipped without looking.
   */
  private moveTo(u: number, s: number, levelCpu: number, levelMem: number, journal: number[]): boolean {
    const p = this.st.p;
    const plain = this.plain[u] === 1;
    if (plain) {
      const a = p.unitCpu[u]!;
      const b = p.unitMem[u]!;
      const c = p.unitCores[u]!;
      for (let k = 0; k < this.failed; k++) {
        if (a >= this.failedCpu[k]! && b >= this.failedMem[k]! && c >= this.failedCores[k]!) {
          this.skip[u] = this.stamp;
          return false;
        }
      }
    }
    const t = this.target(u, s, levelCpu, levelMem);
    if (t < 0) {
      this.skip[u] = this.stamp;
      if (plain && this.failed < FAILED_KEPT) {
        this.failedCpu[this.failed] = p.unitCpu[u]!;
        this.failedMem[this.failed] = p.unitMem[u]!;
        this.failedCores[this.failed++] = p.unitCores[u]!;
      }
      return false;
    }
    this.moveUnit(u, s, t, journal);
    return true;
  }

  /** Moves unit `u` from `s` to `t`, recorded. */
  private moveUnit(u: number, s: number, t: number, journal: number[]): void {
    journal.push(u, s);
    this.moved[u]! += 1;
    this.st.move(u, t, false);
    this.leave[u] = this.leaveCost(u, t);
  }

  /** The node that takes unit `u` (from `s`) within both levels: cheapest, then emptiest; −1 when none. */
  private target(u: number, s: number, levelCpu: number, levelMem: number): number {
    const st = this.st;
    const p = st.p;
    const a = p.unitCpu[u]!;
    const b = p.unitMem[u]!;
    let best = -1;
    let bestCost = Infinity;
    let bestFill = Infinity;
    for (const t of p.allowedList[u]!) {
      if (t === s) continue;
      const fc = (st.cpu[t]! + a) * st.invCpu[t]! - levelCpu;
      const fm = (st.mem[t]! + b) * st.invMem[t]! - levelMem;
      if (fc > LEVEL_SLACK || fm > LEVEL_SLACK || !st.canMove(u, t)) continue;
      const cost = costAt(p, u, t);
      const fill = Math.max(st.wCpu > 0 ? fc : -Infinity, st.wMem > 0 ? fm : -Infinity);
      if (cost < bestCost || (cost === bestCost && fill < bestFill)) {
        best = t;
        bestCost = cost;
        bestFill = fill;
      }
    }
    return best;
  }

  /**
   * No unit of `s` fits anywhere within the levels: the move that lowers the total excess most
   * per unit of cost even though its target ends above a level (the target is repaired later).
   * False when no move lowers the total excess.
   */
  private pushOut(s: number, levelCpu: number, levelMem: number, journal: number[], work: number[]): boolean {
    const st = this.st;
    const p = st.p;
    const excess = this.excess(s, levelCpu, levelMem, 0, 0);
    const now = this.nodeExcess;
    for (let n = 0; n < st.N; n++) now[n] = p.usable[n] ? this.excess(n, levelCpu, levelMem, 0, 0) : 0;
    let bestU = -1;
    let bestT = -1;
    let bestRatio = 0;
    for (const u of st.onNode[s]!) {
      if (this.moved[u]! >= MAX_MOVES_PER_UNIT) continue;
      const a = p.unitCpu[u]!;
      const b = p.unitMem[u]!;
      const gain = excess - this.excess(s, levelCpu, levelMem, -a, -b);
      // no target can make the ratio better than the gain alone at the cheapest cost
      if (gain <= 0 || gain / (this.leave[u]! + RATIO_EPS) <= bestRatio) continue;
      for (const t of p.allowedList[u]!) {
        if (t === s) continue;
        const net = gain - (this.excess(t, levelCpu, levelMem, a, b) - now[t]!);
        if (net <= 0) continue;
        const ratio = net / (Math.max(0, costAt(p, u, t) - costAt(p, u, s)) + RATIO_EPS);
        if (ratio > bestRatio && st.canMove(u, t)) {
          bestRatio = ratio;
          bestU = u;
          bestT = t;
        }
      }
    }
    if (bestU < 0) return false;
    this.moveUnit(bestU, s, bestT, journal);
    if (!work.includes(bestT)) work.unshift(bestT);
    return true;
  }
}

/** Golden-section steps of each line search over a level. */
const LINE_STEPS = [7] as const;
/** The second pass searches this fraction of the first pass's range around the best level. */
const REFINE_SPAN = 1 / 8;
const PHI = (Math.sqrt(5) - 1) / 2;

/**
 * The levels to repair to, searched: the objective after a level repair from `base`, as a
 * function of the cpu and memory levels, minimised by golden-section line searches, first over
 * the cpu level (memory level at the current highest), then over the memory level, then both
 * again within {@link REFINE_SPAN} of the range around the best. Every repair yields a valid
 * placement; the best one is copied into `base` (unchanged when none is better). Returns the
 * number of repairs.
 */
export function levelSearch(base: SearchState, floors: { readonly cpu: number; readonly mem: number }): number {
  const work = base.clone();
  const repair = new LevelRepair(work);
  const journal: number[] = [];
  let bestValue = base.value;
  let best: Int32Array | undefined;
  let repairs = 0;
  // no placement is below the floors: a repair whose migrations cost more than the best value
  // less the floors cannot end better, and stops
  const floorValue = base.wCpu * floors.cpu + base.wMem * floors.mem;
  const value = (levelCpu: number, levelMem: number): number => {
    work.copyFrom(base);
    journal.length = 0;
    repair.run(levelCpu, levelMem, journal, bestValue - floorValue);
    repairs++;
    const v = work.value;
    if (v < bestValue) {
      bestValue = v;
      best = Int32Array.from(work.assign);
    }
    return v;
  };
  const topCpu = base.maxCpu;
  const topMem = base.maxMem;
  let levelCpu = topCpu;
  let levelMem = topMem;
  const cpuOn = base.wCpu > 0 && topCpu > floors.cpu;
  const memOn = base.wMem > 0 && topMem > floors.mem;
  for (let pass = 0; pass < LINE_STEPS.length; pass++) {
    const span = pass === 0 ? 1 : REFINE_SPAN;
    if (cpuOn) {
      const half = (topCpu - floors.cpu) * span;
      levelCpu = golden(
        pass === 0 ? floors.cpu : Math.max(floors.cpu, levelCpu - half),
        pass === 0 ? topCpu : Math.min(topCpu, levelCpu + half),
        LINE_STEPS[pass]!,
        (x) => value(x, levelMem),
      );
    }
    if (memOn) {
      const half = (topMem - floors.mem) * span;
      levelMem = golden(
        pass === 0 ? floors.mem : Math.max(floors.mem, levelMem - half),
        pass === 0 ? topMem : Math.min(topMem, levelMem + half),
        LINE_STEPS[pass]!,
        (x) => value(levelCpu, x),
      );
    }
  }
  if (best) base.setAssignment(best);
  return repairs;
}

/** Golden-section search of `f` over [lo, hi] with `steps` narrowing steps; the best point seen. */
function golden(lo: number, hi: number, steps: number, f: (x: number) => number): number {
  let a = lo;
  let b = hi;
  let x1 = b - PHI * (b - a);
  let x2 = a + PHI * (b - a);
  let f1 = f(x1);
  let f2 = f(x2);
  for (let i = 0; i < steps; i++) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - PHI * (b - a);
      f1 = f(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + PHI * (b - a);
      f2 = f(x2);
    }
  }
  return f1 <= f2 ? x1 : x2;
}
