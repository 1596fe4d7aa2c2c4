import { GIB, type Problem } from './model';
import type { PlanObjective } from './types';

/**
 * The objective of an assignment of the movable units (unit → node), computed directly from
 * its definition (`PlanObjective`): the obviously-correct evaluation the search's incremental
 * sums are tested against, and what every reported figure comes from.
 */
export function evaluateAssignment(p: Problem, assign: Int32Array): PlanObjective {
  const N = p.nodeNames.length;
  const cpu = Float64Array.from(p.fixCpu);
  const mem = Float64Array.from(p.fixMem);
  let moves = 0;
  let bytes = 0;
  let cost = 0;
  const guests = p.input.guests;
  const w = p.input.weights;
  for (let u = 0; u < p.units.length; u++) {
    const n = assign[u]!;
    cpu[n]! += p.unitCpu[u]!;
    mem[n]! += p.unitMem[u]!;
    for (const m of p.units[u]!.guests) {
      const g = guests[m]!;
      const from = p.nodeIndex.get(g.node)!;
      if (from === n) continue;
      moves++;
      const recover = !p.input.nodes[from]!.online;
      if (!recover) bytes += g.mem;
      cost += w.move + (recover ? 0 : (w.gib * g.mem) / GIB);
    }
  }
  let maxCpu = 0;
  let maxMem = 0;
  for (let n = 0; n < N; n++) {
    if (!p.usable[n]) continue;
    maxCpu = Math.max(maxCpu, cpu[n]! / p.capCpu[n]!);
    maxMem = Math.max(maxMem, mem[n]! / p.capMem[n]!);
  }
  return { value: w.cpu * maxCpu + w.mem * maxMem + cost, cpu: maxCpu, mem: maxMem, moves, bytes };
}

/**
 * The objective of the placement as it is now: every counted guest on its current node (units
 * on nodes that are not usable count nowhere), no migration.
 */
export function evaluateCurrent(p: Problem): PlanObjective {
  const N = p.nodeNames.length;
  const cpu = Float64Array.from(p.fixCpu);
  const mem = Float64Array.from(p.fixMem);
  const guests = p.input.guests;
  for (let u = 0; u < p.units.length; u++) {
    for (const m of p.units[u]!.guests) {
      const n = p.nodeIndex.get(guests[m]!.node)!;
      cpu[n]! += guests[m]!.cpu;
      mem[n]! += guests[m]!.mem;
    }
  }
  let maxCpu = 0;
  let maxMem = 0;
  for (let n = 0; n < N; n++) {
    if (!p.usable[n]) continue;
    maxCpu = Math.max(maxCpu, cpu[n]! / p.capCpu[n]!);
    maxMem = Math.max(maxMem, mem[n]! / p.capMem[n]!);
  }
  const w = p.input.weights;
  return { value: w.cpu * maxCpu + w.mem * maxMem, cpu: maxCpu, mem: maxMem, moves: 0, bytes: 0 };
}

/** Relative slack of the capacity checks: float noise never turns an exact fit into an overflow. */
export const CAPACITY_SLACK = 1e-9;

/** Whether `load` stays within `limit` (with {@link CAPACITY_SLACK}). */
export function fits(load: number, limit: number): boolean {
  return load <= limit + CAPACITY_SLACK * limit;
}

/**
 * Every hard constraint an assignment breaks, in words (empty: it satisfies them all): unit on
 * a node it may not use, capacity, negative affinity. The check the tests hold the search to.
 */
export function assignmentViolations(p: Problem, assign: Int32Array): string[] {
  const N = p.nodeNames.length;
  const out: string[] = [];
  const mem = Float64Array.from(p.fixMem);
  const cores = Float64Array.from(p.fixCores);
  for (let u = 0; u < p.units.length; u++) {
    const n = assign[u]!;
    if (n < 0 || n >= N || !p.allowed[u * N + n])
      out.push(`${p.units[u]!.ids.join('+')} on ${p.nodeNames[n] ?? n} is not allowed`);
    mem[n]! += p.unitMem[u]!;
    cores[n]! += p.unitCores[u]!;
    for (const v of p.negatives[u]!)
      if (v > u && assign[v] === n) out.push(`${p.units[u]!.ids[0]} and ${p.units[v]!.ids[0]} share ${p.nodeNames[n]}`);
  }
  for (let n = 0; n < N; n++) {
    if (!p.usable[n]) continue;
    if (!fits(mem[n]!, p.limMem[n]!)) out.push(`${p.nodeNames[n]} memory ${mem[n]} above ${p.limMem[n]}`);
    if (!fits(cores[n]!, p.limCores[n]!)) out.push(`${p.nodeNames[n]} cores ${cores[n]} above ${p.limCores[n]}`);
  }
  return out;
}
