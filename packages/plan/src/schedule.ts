import { type Problem, GIB, listText } from './model';
import { CAPACITY_SLACK } from './objective';
import type { PlannedMove } from './types';

/** The steps from the current placement to a target assignment (see {@link schedule}). */
export interface Schedule {
  readonly steps: PlannedMove[][];
  readonly executable: boolean;
  readonly blocked?: string;
  readonly notes: string[];
}

const gib = (bytes: number) => `${(bytes / GIB).toFixed(1)} GiB`;

/**
 * Orders the migrations from the current placement to `target` (unit → node) into steps whose
 * motions run in parallel:
 *
 * - a motion moves every member of a unit that is not on its target (a positive-affinity
 *   bundle moves together, in one step; members on different nodes give one `PlannedMove` per
 *   source); it counts once at each node it leaves and once at its target, and no node takes
 *   part in more than `maxParallelPerNode` motions per step;
 * - while a step runs, a guest counts on its source and on its target, so a target must have
 *   room for everything arriving in the step on top of what it holds at the start of the step
 *   (what leaves it in the same step does not count as freed yet): no node exceeds its limits
 *   at any moment (a node that starts above them only gets lighter);
 * - a motion never goes to a node that holds, or receives in the same step, a guest it must not
 *   share a node with;
 * - motions that must happen (off nodes that are not usable) go first, then the largest.
 *
 * When no pending motion can run (a cycle: A waits for B to leave a full node, B for A), a
 * unit on the full target that is due to leave it anyway steps aside to a third node that has
 * room (a `temporary` motion; it moves on to its target later). When no unit can, the schedule
 * stops, `executable: false`, and `blocked` says which motions wait for what.
 */
export function schedule(p: Problem, target: Int32Array, maxParallelPerNode: number): Schedule {
  const N = p.nodeNames.length;
  const guests = p.input.guests;
  const online = p.input.nodes.map((n) => n.online);
  const position = Int32Array.from(guests, (g) => p.nodeIndex.get(g.node)!);
  const mem = Float64Array.from(p.fixMem);
  const cores = Float64Array.from(p.fixCores);
  const limMem = p.limMem.map((l) => l + CAPACITY_SLACK * l);
  const limCores = p.limCores.map((l) => l + CAPACITY_SLACK * l);
  for (let u = 0; u < p.units.length; u++) {
    for (const m of p.units[u]!.guests) {
      const n = position[m]!;
      if (!online[n]) continue;
      mem[n]! += guests[m]!.mem;
      cores[n]! += guests[m]!.cores;
    }
  }
  /** Where each unit is going next (its target, or a temporary node). */
  const goal = Int32Array.from(target);
  const pendingOf = (u: number) => p.units[u]!.guests.some((m) => position[m] !== goal[u]);
  let pending = Array.from({ length: p.units.length }, (_, u) => u).filter(pendingOf);
  const steps: PlannedMove[][] = [];
  const notes: string[] = [];
  /** The units with a member on each node (negative checks need them). */
  const unitsOn = (n: number) => {
    const out = new Set<number>();
    for (let u = 0; u < p.units.length; u++) for (const m of p.units[u]!.guests) if (position[m] === n) out.add(u);
    return out;
  };
  const moving = (u: number, to: number) => p.units[u]!.guests.filter((m) => position[m] !== to);
  const movingMem = (u: number, to: number) => moving(u, to).reduce((s, m) => s + guests[m]!.mem, 0);
  const movingCores = (u: number, to: number) => moving(u, to).reduce((s, m) => s + guests[m]!.cores, 0);
  const hasPartnerOn = (u: number, n: number, arriving: ReadonlySet<number>) => {
    for (const v of p.negatives[u]!) {
      if (arriving.has(v) && goal[v] === n) return true;
      for (const m of p.units[v]!.guests) if (position[m] === n) return true;
    }
    return false;
  };
  /** Per unit: the online nodes its motion leaves, the memory and cores it brings (until it moves again). */
  const motions = new Map<number, { sources: number[]; dm: number; dc: number }>();
  const motionOf = (u: number) => {
    let info = motions.get(u);
    if (!info) {
      const members = moving(u, goal[u]!);
      info = {
        sources: [...new Set(members.map((m) => position[m]!))].filter((s) => online[s]),
        dm: members.reduce((sum, m) => sum + guests[m]!.mem, 0),
        dc: members.reduce((sum, m) => sum + guests[m]!.cores, 0),
      };
      motions.set(u, info);
    }
    return info;
  };
  let temporaries = 0;
  const maxTemporaries = 2 * pending.length + 2;

  while (pending.length > 0) {
    const urgent = new Map(pending.map((u) => [u, urgency(u)]));
    pending.sort((a, b) => urgent.get(b)! - urgent.get(a)! || p.unitMem[b]! - p.unitMem[a]! || a - b);
    const count = new Int32Array(N);
    const inMem = new Float64Array(N);
    const inCores = new Float64Array(N);
    const arriving = new Set<number>();
    const step: number[] = [];
    for (const u of pending) {
      const t = goal[u]!;
      const { sources, dm, dc } = motionOf(u);
      if (count[t]! >= maxParallelPerNode || sources.some((s) => count[s]! >= maxParallelPerNode)) continue;
      if (mem[t]! + inMem[t]! + dm > limMem[t]! || cores[t]! + inCores[t]! + dc > limCores[t]!) continue;
      if (hasPartnerOn(u, t, arriving)) continue;
      count[t]! += 1;
      for (const s of sources) count[s]! += 1;
      inMem[t]! += dm;
      inCores[t]! += dc;
      arriving.add(u);
      step.push(u);
    }
    if (step.length === 0) {
      const aside = stepAside();
      if (aside === undefined || ++temporaries > maxTemporaries) {
        return { steps, executable: false, blocked: blockedText(), notes };
      }
      const [v, w] = aside;
      notes.push(
        `${p.units[v]!.ids.join(' + ')} steps aside to ${p.nodeNames[w]} to break a cycle (it moves on to ${p.nodeNames[target[v]!]} later)`,
      );
      goal[v] = w;
      motions.delete(v);
      steps.push(apply([v]));
      goal[v] = target[v]!;
      motions.delete(v);
      pending = pending.filter(pendingOf);
      continue;
    }
    steps.push(apply(step));
    pending = pending.filter(pendingOf);
  }
  return { steps, executable: true, notes };

  /** Higher first: a unit with a member on a node that is not usable must leave it. */
  function urgency(u: number): number {
    return p.units[u]!.guests.some((m) => !p.usable[position[m]!]) ? 1 : 0;
  }

  /** Moves the units of a step to their goals and returns its motions. */
  function apply(units: readonly number[]): PlannedMove[] {
    const out: PlannedMove[] = [];
    for (const u of units) {
      motions.delete(u);
      const t = goal[u]!;
      const bySource = new Map<number, number[]>();
      for (const m of moving(u, t)) {
        const s = position[m]!;
        bySource.set(s, [...(bySource.get(s) ?? []), m]);
      }
      for (const [s, members] of [...bySource].sort((a, b) => a[0] - b[0])) {
        let bytes = 0;
        for (const m of members) {
          if (online[s]) {
            mem[s]! -= guests[m]!.mem;
            cores[s]! -= guests[m]!.cores;
            bytes += guests[m]!.mem;
          }
          mem[t]! += guests[m]!.mem;
          cores[t]! += guests[m]!.cores;
          position[m] = t;
        }
        const kind = !online[s] ? 'recover' : t !== target[u] ? 'temporary' : 'move';
        out.push({
          guests: members.map((m) => guests[m]!.id),
          source: p.nodeNames[s]!,
          target: p.nodeNames[t]!,
          bytes,
          kind,
        });
      }
    }
    return out;
  }

  /** A unit on a blocked motion's target that is due to leave it, and a third node with room for it now. */
  function stepAside(): [number, number] | undefined {
    for (const u of pending) {
      const t = goal[u]!;
      for (const v of [...unitsOn(t)].sort((a, b) => p.unitMem[b]! - p.unitMem[a]! || a - b)) {
        if (v === u || !pending.includes(v)) continue;
        if (!p.units[v]!.guests.every((m) => position[m] === t)) continue;
        let best = -1;
        let room = -Infinity;
        for (const w of p.allowedList[v]!) {
          if (w === t || w === target[v]) continue;
          if (mem[w]! + p.unitMem[v]! > limMem[w]! || cores[w]! + p.unitCores[v]! > limCores[w]!) continue;
          if (hasPartnerOn(v, w, new Set())) continue;
          const free = limMem[w]! - mem[w]!;
          if (free > room) {
            room = free;
            best = w;
          }
        }
        if (best >= 0) return [v, best];
      }
    }
    return undefined;
  }

  function blockedText(): string {
    const waits = pending.slice(0, 4).map((u) => {
      const t = goal[u]!;
      const dm = movingMem(u, t);
      const why: string[] = [];
      if (mem[t]! + dm > limMem[t]!)
        why.push(`needs ${gib(dm)} free on ${p.nodeNames[t]}, which has ${gib(Math.max(0, p.limMem[t]! - mem[t]!))}`);
      if (cores[t]! + movingCores(u, t) > limCores[t]!)
        why.push(`needs ${movingCores(u, t)} cores on ${p.nodeNames[t]}`);
      if (hasPartnerOn(u, t, new Set())) why.push(`a negative-affinity partner is still on ${p.nodeNames[t]}`);
      return `${p.units[u]!.ids.join(' + ')} to ${p.nodeNames[t]} ${why.length > 0 ? why.join(' and ') : 'waits for the others'}`;
    });
    const more = pending.length > 4 ? ` (and ${pending.length - 4} more)` : '';
    return `the remaining motions wait for each other and no guest on a full node can step aside to a third node: ${listText(waits)}${more}`;
  }
}
