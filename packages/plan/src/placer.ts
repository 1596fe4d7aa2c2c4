import { ClusterUsage } from '@poise/usage';
import { imbalance } from '@poise/imbalance';
import { GIB, listText, type Problem } from './model';
import { CAPACITY_SLACK } from './objective';
import type { NodeUse } from './types';

/** Why node `n` takes no guest, for messages: `offline`, `in maintenance`, `being drained`. */
function nodeState(p: Problem, n: number): string {
  const node = p.input.nodes[n]!;
  if (!node.online) return 'offline';
  if (node.maintenance) return 'in maintenance';
  return p.usable[n] ? 'usable' : 'being drained';
}

/** A set of guests placed together by the {@link SequentialPlacer}. */
export interface PlacerUnit {
  readonly ids: readonly string[];
  /** Cores in use, assigned cores, memory bytes (sums over the members). */
  readonly cpu: number;
  readonly cores: number;
  readonly mem: number;
  /** Node indices it may use (usable nodes only), ascending. */
  readonly allowed: readonly number[];
  /** Ids it must not share a node with (placed ones and existing guests count). */
  readonly negatives: readonly string[];
}

/**
 * Places units one at a time, as the HA manager places a guest it starts or recovers: among
 * the nodes a unit may use that have room within the capacity limits and hold no
 * negative-affinity partner, the one with the best start score of `@poise/usage` (TOPSIS over
 * the usable nodes with the unit added, `dynamic` aggregation on the current node loads:
 * higher is better; ties to the first node in byte order). Each placed unit is added to the
 * usage, so the next one sees it.
 */
export class SequentialPlacer {
  readonly cpu: Float64Array;
  readonly mem: Float64Array;
  readonly cores: Float64Array;
  /** Where each placed or existing guest is (id → node index). */
  readonly where = new Map<string, number>();
  private readonly usage: ClusterUsage;
  private readonly usableNodes: number[];
  private readonly limMem: Float64Array;
  private readonly limCores: Float64Array;
  private counter = 0;
  /** The usage model's index (byte order of names) of each problem node index; -1 when not usable. */
  private readonly scoreIndex: Int32Array;
  /** Start scores, reused by every placement (no allocation per call). */
  private readonly scores: Float64Array;

  constructor(
    private readonly p: Problem,
    loads: { cpu: Float64Array; mem: Float64Array; cores: Float64Array },
    metric: 'raw' | 'normalized',
  ) {
    this.cpu = Float64Array.from(loads.cpu);
    this.mem = Float64Array.from(loads.mem);
    this.cores = Float64Array.from(loads.cores);
    this.limMem = p.limMem.map((l) => l + CAPACITY_SLACK * l);
    this.limCores = p.limCores.map((l) => l + CAPACITY_SLACK * l);
    this.usableNodes = [];
    for (let n = 0; n < p.nodeNames.length; n++) if (p.usable[n]) this.usableNodes.push(n);
    this.usage = new ClusterUsage({ aggregation: 'dynamic', metric });
    for (const n of this.usableNodes) {
      this.usage.addNode(p.nodeNames[n]!, {
        cpu: this.cpu[n]!,
        maxcpu: Math.max(1, p.capCpu[n]!),
        mem: Math.round(this.mem[n]!),
        maxmem: Math.max(1, p.capMem[n]!),
      });
    }
    const order = new Map(this.usage.nodeNames().map((name, k) => [name, k]));
    this.scoreIndex = Int32Array.from(p.nodeNames, (name) => order.get(name) ?? -1);
    this.scores = new Float64Array(order.size);
  }

  /** Places a unit; its node index, or why it could not be placed. */
  place(unit: PlacerUnit): { node: number } | { reason: string } {
    const p = this.p;
    const avoid = new Set<number>();
    for (const id of unit.negatives) {
      const at = this.where.get(id);
      if (at !== undefined) avoid.add(at);
    }
    const ok: number[] = [];
    let full = 0;
    for (const n of unit.allowed) {
      if (avoid.has(n)) continue;
      if (this.mem[n]! + unit.mem > this.limMem[n]! || this.cores[n]! + unit.cores > this.limCores[n]!) {
        full++;
        continue;
      }
      ok.push(n);
    }
    if (ok.length === 0) {
      const label = unit.ids.join(' + ');
      if (unit.allowed.length === 0) {
        if (this.usableNodes.length === 0) {
          // no rule is to blame: every node is offline, in maintenance or drained
          const states = p.nodeNames.map((name, n) => `${name} ${nodeState(p, n)}`);
          return { reason: `${label}: no node can take a guest (${listText(states)})` };
        }
        return { reason: `${label}: no usable node is allowed by its rules` };
      }
      const room = `room for ${(unit.mem / GIB).toFixed(1)} GiB${Number.isFinite(p.limCores[unit.allowed[0]!]!) ? ` and ${unit.cores} cores` : ''}`;
      if (full === 0) return { reason: `${label}: every node it may use holds a negative-affinity partner` };
      if (full === unit.allowed.length) return { reason: `${label}: no node it may use has ${room}` };
      return { reason: `${label}: the nodes it may use either lack ${room} or hold a negative-affinity partner` };
    }
    let node = ok[0]!;
    if (ok.length > 1) {
      const stats = {
        cpu: unit.cpu,
        maxcpu: Math.max(unit.cores, 1e-9),
        mem: Math.round(unit.mem),
        maxmem: Math.round(unit.mem),
      };
      this.usage.scoreNodesToStartInto(stats, this.scores);
      let best = -Infinity;
      for (const n of ok) {
        const s = this.scores[this.scoreIndex[n]!]!;
        if (s > best) {
          best = s;
          node = n;
        }
      }
    }
    this.cpu[node]! += unit.cpu;
    this.mem[node]! += unit.mem;
    this.cores[node]! += unit.cores;
    for (const id of unit.ids) this.where.set(id, node);
    const stats = {
      cpu: unit.cpu,
      maxcpu: Math.max(unit.cores, 1e-9),
      mem: Math.round(unit.mem),
      maxmem: Math.round(unit.mem),
    };
    this.usage.addResource(`\u0000placed-${this.counter++}`, {
      stats,
      state: 'starting',
      placement: { current: p.nodeNames[node]! },
    });
    return { node };
  }

  /** Per usable node, byte order: utilisation and guest count (`guests` per node index). */
  uses(guests: Int32Array): NodeUse[] {
    return this.usableNodes.map((n) => ({
      node: this.p.nodeNames[n]!,
      cpu: this.cpu[n]! / this.p.capCpu[n]!,
      mem: this.mem[n]! / this.p.capMem[n]!,
      guests: guests[n]!,
    }));
  }

  /** The highest utilisation per resource and the reference imbalance over the usable nodes. */
  balance(metric: 'raw' | 'normalized'): { cpu: number; mem: number; imbalance: number } {
    let cpu = 0;
    let mem = 0;
    const loads: number[] = [];
    for (const n of this.usableNodes) {
      const c = this.cpu[n]! / this.p.capCpu[n]!;
      const m = this.mem[n]! / this.p.capMem[n]!;
      cpu = Math.max(cpu, c);
      mem = Math.max(mem, m);
      loads.push((c + m) / 2);
    }
    return { cpu, mem, imbalance: imbalance(loads, metric) };
  }
}
