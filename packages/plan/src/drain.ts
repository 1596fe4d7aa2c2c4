import { type Problem, buildProblem, GIB } from './model';
import { CAPACITY_SLACK, evaluateCurrent } from './objective';
import { findFeasible } from './exact';
import { constructAssignment } from './construct';
import { checkPlanOptions, feasiblePlan } from './planner';
import { PlanError } from './errors';
import { validatePlanInput } from './validate';
import type { DrainSummary, PlacementPlan, PlanInput, PlanOptions, RoomMove } from './types';

/**
 * Guests at most that a drain moves off one node to make room for one guest of a drained node
 * (each to a node where it fits as it is): past that, the drain stops with the reason rather
 * than reshuffle the cluster.
 */
export const MAX_ROOM_MOVES_PER_GUEST = 4;

/**
 * Search nodes the exact search may visit to place the drained guests without moving anyone
 * else, when placing them one by one (largest first) left some without room.
 */
const DRAIN_EXACT_BUDGET = 200_000;

const gib = (bytes: number) => `${(bytes / GIB).toFixed(1)} GiB`;
const coresText = (n: number) => `${Number.isInteger(n) ? n : n.toFixed(1)}`;

/**
 * Plans a drain that moves only what it must: every guest on a drained node (and one that must
 * leave a node in maintenance or be recovered from an offline one) goes to a node where it
 * fits, hardest first (fewest nodes allowed, then largest), each where the node's weighted
 * utilisation after is lowest; every other guest stays where it is, whatever the balance, its
 * rules or its node's limits say now (a drain is not a rebalancing: `planPlacement` is).
 *
 * When some guest of a drained node fits nowhere, an exact search first looks for a split of
 * the drained guests alone; only when there is none does the drain move other guests, off one
 * node the guest may use, to nodes where they fit as they are: the fewest that make room
 * (at most `MAX_ROOM_MOVES_PER_GUEST`), then the least memory to copy. Each such move is
 * named with why in `plan.drain.makeRoom` and the notes (`vm:123 node7 → node9 to make room
 * for vm:101 (needs 8.0 GiB, node7 has 3.0 GiB free)`). When that is not enough either, the
 * answer is infeasible with the reason, and nothing is planned.
 *
 * Options as `planPlacement` (`drain` must name at least one node; `maxParallelPerNode` for the
 * steps). Throws `PlanError` for malformed input only. Pure and deterministic.
 */
export function planDrain(input: PlanInput, options: PlanOptions): PlacementPlan {
  const checked = validatePlanInput(input);
  const opts = checkPlanOptions(options, checked);
  if (opts.drain.length === 0)
    throw new PlanError('invalid-options', 'options.drain must name at least one node to drain, got none');
  const p = buildProblem(checked, { drain: opts.drain });
  const current = evaluateCurrent(p);
  if (p.reasons.length > 0) return { feasible: false, reasons: p.reasons, current, notes: p.notes };
  const placed = drainAssignment(p);
  if ('reasons' in placed) return { feasible: false, reasons: placed.reasons, current, notes: p.notes };
  const violations = p.violations.filter((v) => placed.required.some((u) => v.startsWith(p.units[u]!.ids[0]!)));
  const plan = feasiblePlan(p, placed.assign, opts, violations);
  const summary: DrainSummary = {
    nodes: opts.drain,
    required: placed.required.reduce((s, u) => s + p.units[u]!.guests.length, 0),
    makeRoom: placed.makeRoom,
    motions: plan.steps.reduce((s, step) => s + step.length, 0),
  };
  return { ...plan, notes: [...plan.notes, ...placed.makeRoom.map((m) => m.reason)], drain: summary };
}

/** The state of a drain being placed: loads per node, where each unit goes. */
interface DrainState {
  readonly target: Int32Array;
  readonly mem: Float64Array;
  readonly cores: Float64Array;
  readonly cpu: Float64Array;
  readonly limMem: Float64Array;
  readonly limCores: Float64Array;
}

/** Whether unit `u` may join node `n` as the state stands (rules, limits, negative partners). */
function fits(p: Problem, s: DrainState, u: number, n: number): boolean {
  const N = p.nodeNames.length;
  if (p.allowed[u * N + n] !== 1) return false;
  if (s.mem[n]! + p.unitMem[u]! > s.limMem[n]! || s.cores[n]! + p.unitCores[u]! > s.limCores[n]!) return false;
  for (const v of p.negatives[u]!) if (s.target[v] === n) return false;
  return true;
}

function put(p: Problem, s: DrainState, u: number, n: number): void {
  s.target[u] = n;
  s.mem[n]! += p.unitMem[u]!;
  s.cores[n]! += p.unitCores[u]!;
  s.cpu[n]! += p.unitCpu[u]!;
}

function take(p: Problem, s: DrainState, u: number): void {
  const n = s.target[u]!;
  s.target[u] = -1;
  s.mem[n]! -= p.unitMem[u]!;
  s.cores[n]! -= p.unitCores[u]!;
  s.cpu[n]! -= p.unitCpu[u]!;
}

/** The node among those `u` fits on where the node's weighted utilisation after is lowest (−1: none), never `avoid`. */
function bestNode(p: Problem, s: DrainState, u: number, avoid = -1): number {
  const w = p.input.weights;
  let best = -1;
  let bestScore = Infinity;
  for (const n of p.allowedList[u]!) {
    if (n === avoid || !fits(p, s, u, n)) continue;
    const score = Math.max(
      w.cpu * ((s.cpu[n]! + p.unitCpu[u]!) / p.capCpu[n]!),
      w.mem * ((s.mem[n]! + p.unitMem[u]!) / p.capMem[n]!),
    );
    if (score < bestScore) {
      best = n;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Where every unit goes in the drain (see {@link planDrain}): the units that must move placed,
 * the others at home but those named in `makeRoom`; or why the drain cannot be done.
 */
function drainAssignment(
  p: Problem,
): { assign: Int32Array; required: number[]; makeRoom: RoomMove[] } | { reasons: string[] } {
  const N = p.nodeNames.length;
  const U = p.units.length;
  const guests = p.input.guests;
  const position = (m: number) => p.nodeIndex.get(guests[m]!.node)!;
  const s: DrainState = {
    target: new Int32Array(U).fill(-1),
    mem: Float64Array.from(p.fixMem),
    cores: Float64Array.from(p.fixCores),
    cpu: Float64Array.from(p.fixCpu),
    limMem: p.limMem.map((l) => l + CAPACITY_SLACK * l),
    limCores: p.limCores.map((l) => l + CAPACITY_SLACK * l),
  };
  // a unit must move when a member is on a node that takes no guests (drained, in maintenance, offline)
  const required: number[] = [];
  const stationary = new Uint8Array(U);
  for (let u = 0; u < U; u++) {
    if (p.units[u]!.guests.some((m) => !p.usable[position(m)]) || p.home[u]! < 0) required.push(u);
    else {
      stationary[u] = 1;
      put(p, s, u, p.home[u]!);
    }
  }
  const order = [...required].sort(
    (a, b) => p.allowedList[a]!.length - p.allowedList[b]!.length || p.unitMem[b]! - p.unitMem[a]! || a - b,
  );
  const left: number[] = [];
  for (const u of order) {
    const n = bestNode(p, s, u);
    if (n < 0) left.push(u);
    else put(p, s, u, n);
  }
  if (left.length > 0) {
    // the drained guests alone may still fit in another split: nobody else moves then
    const exact = findFeasible(restricted(p, required, s.target), undefined, DRAIN_EXACT_BUDGET);
    if (exact.kind === 'feasible') {
      for (const u of required) if (s.target[u]! >= 0) take(p, s, u);
      required.forEach((u, k) => put(p, s, u, exact.assign[k]!));
      left.length = 0;
    }
  }
  const makeRoom: RoomMove[] = [];
  const reasons: string[] = [];
  for (const u of left) {
    const room = makeRoomFor(p, s, u, stationary);
    if (typeof room === 'string') {
      reasons.push(room);
      continue;
    }
    makeRoom.push(...room);
  }
  if (left.length > 0) {
    // the planner's own search for any placement, then every other guest taken back home where it fits
    const other = wholeSearch(p, required, stationary);
    if (other !== undefined && (reasons.length > 0 || other.makeRoom.length < makeRoom.length))
      return { assign: other.assign, required, makeRoom: other.makeRoom };
  }
  if (reasons.length > 0) return { reasons };
  // invariant: every unit has a node
  for (let u = 0; u < U; u++) if (s.target[u]! < 0 || s.target[u]! >= N) throw new Error(`unit ${u} unplaced`);
  return { assign: s.target, required, makeRoom };
}

/**
 * The problem of placing only the units `required` (in that order), every other unit fixed
 * where `target` has it: for the exact search.
 */
function restricted(p: Problem, required: readonly number[], target: Int32Array): Problem {
  const N = p.nodeNames.length;
  const index = new Map(required.map((u, k) => [u, k]));
  const fixMem = Float64Array.from(p.fixMem);
  const fixCores = Float64Array.from(p.fixCores);
  const fixCpu = Float64Array.from(p.fixCpu);
  for (let u = 0; u < p.units.length; u++) {
    if (index.has(u)) continue;
    const n = target[u]!;
    fixMem[n]! += p.unitMem[u]!;
    fixCores[n]! += p.unitCores[u]!;
    fixCpu[n]! += p.unitCpu[u]!;
  }
  const allowedList: Int32Array[] = [];
  const allowed = new Uint8Array(required.length * N);
  const negatives: Int32Array[] = [];
  required.forEach((u, k) => {
    // a partner that stays excludes its node
    const excluded = new Set<number>();
    const partners: number[] = [];
    for (const v of p.negatives[u]!) {
      const kv = index.get(v);
      if (kv === undefined) excluded.add(target[v]!);
      else partners.push(kv);
    }
    const list = p.allowedList[u]!.filter((n) => !excluded.has(n));
    allowedList.push(list);
    for (const n of list) allowed[k * N + n] = 1;
    negatives.push(Int32Array.from(partners.sort((a, b) => a - b)));
  });
  const pick = (a: Float64Array) => Float64Array.from(required, (u) => a[u]!);
  return {
    ...p,
    fixMem,
    fixCores,
    fixCpu,
    units: required.map((u) => p.units[u]!),
    unitCpu: pick(p.unitCpu),
    unitMem: pick(p.unitMem),
    unitCores: pick(p.unitCores),
    fullCost: pick(p.fullCost),
    unitBytes: pick(p.unitBytes),
    unitMoves: Int32Array.from(required, (u) => p.unitMoves[u]!),
    home: Int32Array.from(required, (u) => p.home[u]!),
    stays: required.map((u) => p.stays[u]!),
    allowedList,
    allowed,
    negatives,
  };
}

/**
 * Makes room for unit `u` (of a drained node) on one node it may use by moving the fewest
 * other units off it (drained units placed there first, which costs no extra motion; then
 * units that stay otherwise, largest first, each to the node it fits on best), and places `u`
 * there. Returns the extra moves with why, or the reason it cannot (nothing changed then).
 */
function makeRoomFor(p: Problem, s: DrainState, u: number, stationary: Uint8Array): RoomMove[] | string {
  const U = p.units.length;
  const label = p.units[u]!.ids.join(' + ');
  type Option = { node: number; moves: [number, number][]; extra: number; bytes: number };
  let best: Option | undefined;
  let partnerNodes = 0;
  for (const n of p.allowedList[u]!) {
    if (p.negatives[u]!.some((v) => s.target[v] === n)) {
      partnerNodes++;
      continue;
    }
    const on = [];
    for (let v = 0; v < U; v++) if (s.target[v] === n && v !== u) on.push(v);
    // drained units already placed here move on for free; then the largest that stay otherwise
    const whole = (v: number) => p.units[v]!.guests.every((m) => p.nodeIndex.get(p.input.guests[m]!.node) === n);
    const movable = on.filter((v) => stationary[v] === 0 || whole(v));
    const free = movable.filter((v) => stationary[v] === 0);
    const paid = movable
      .filter((v) => stationary[v] === 1)
      .sort((a, b) => p.unitMem[b]! - p.unitMem[a]! || p.unitCores[b]! - p.unitCores[a]! || a - b);
    const tried = tryFree(p, s, u, n, [...free, ...paid], stationary);
    if (tried === undefined) continue;
    // one paid move: the smallest that makes room alone copies the least
    let option: Option = { node: n, ...tried };
    if (tried.extra === 1) {
      for (const v of [...paid].reverse()) {
        const alone = tryFree(p, s, u, n, [...free, v], stationary);
        if (alone !== undefined && alone.extra === 1) {
          option = { node: n, ...alone };
          break;
        }
      }
    }
    if (best === undefined || option.extra < best.extra || (option.extra === best.extra && option.bytes < best.bytes))
      best = option;
  }
  if (best === undefined) {
    let most = -1;
    for (const n of p.allowedList[u]!)
      if (most < 0 || s.limMem[n]! - s.mem[n]! > s.limMem[most]! - s.mem[most]!) most = n;
    const size = `${gib(p.unitMem[u]!)}${p.input.cpuOvercommitRatio !== undefined ? `, ${coresText(p.unitCores[u]!)} cores` : ''}`;
    const drained = [...new Set(p.units[u]!.guests.map((m) => p.input.guests[m]!.node))].join(', ');
    const partners = partnerNodes > 0 ? `; ${partnerNodes} of them hold a negative-affinity partner` : '';
    const where =
      most >= 0
        ? ` (the most room: ${p.nodeNames[most]} with ${gib(Math.max(0, p.limMem[most]! - s.mem[most]!))} free${partners})`
        : '';
    return `${drained} cannot be drained: ${label} (${size}) fits on no node it may use, not even after moving up to ${MAX_ROOM_MOVES_PER_GUEST} other guests off one of them${where}`;
  }
  // apply
  const n = best.node;
  const before = { mem: Math.max(0, p.limMem[n]! - s.mem[n]!), cores: p.limCores[n]! - s.cores[n]! };
  for (const [v] of best.moves) take(p, s, v);
  const out: RoomMove[] = [];
  for (const [v, w] of best.moves) {
    put(p, s, v, w);
    if (stationary[v] === 0) continue;
    const needs: string[] = [];
    if (p.unitMem[u]! > before.mem)
      needs.push(`needs ${gib(p.unitMem[u]!)}, ${p.nodeNames[n]} has ${gib(before.mem)} free`);
    if (p.unitCores[u]! > before.cores)
      needs.push(
        `needs ${coresText(p.unitCores[u]!)} cores, ${p.nodeNames[n]} allows ${coresText(Math.max(0, before.cores))} more`,
      );
    const why = needs.length > 0 ? needs.join('; ') : `${p.nodeNames[n]} cannot take it otherwise`;
    out.push({
      guests: p.units[v]!.ids,
      source: p.nodeNames[n]!,
      target: p.nodeNames[w]!,
      for: p.units[u]!.ids[0]!,
      reason: `${p.units[v]!.ids.join(' + ')} ${p.nodeNames[n]} → ${p.nodeNames[w]} to make room for ${label} (${why})`,
    });
  }
  put(p, s, u, n);
  return out;
}

/**
 * Takes units of `candidates` (in order) off node `n` until `u` fits there, each to the node
 * it fits on best; at most `MAX_ROOM_MOVES_PER_GUEST` of them paid (units that would stay
 * otherwise). The state is restored before returning. The moves (unit, node), how many are
 * paid and the memory they copy, or undefined when `u` still does not fit.
 */
function tryFree(
  p: Problem,
  s: DrainState,
  u: number,
  n: number,
  candidates: readonly number[],
  stationary: Uint8Array,
): { moves: [number, number][]; extra: number; bytes: number } | undefined {
  const moves: [number, number][] = [];
  let extra = 0;
  let bytes = 0;
  const roomFor = () => s.mem[n]! + p.unitMem[u]! <= s.limMem[n]! && s.cores[n]! + p.unitCores[u]! <= s.limCores[n]!;
  // u sits on n while the others look for a node, so none of them goes where u's partners are
  let ok = roomFor();
  for (const v of candidates) {
    if (ok) break;
    if (stationary[v] === 1 && extra >= MAX_ROOM_MOVES_PER_GUEST) break;
    take(p, s, v);
    const w = bestNode(p, s, v, n);
    if (w < 0 || p.negatives[u]!.includes(v)) {
      put(p, s, v, n);
      continue;
    }
    put(p, s, v, w);
    moves.push([v, w]);
    if (stationary[v] === 1) {
      extra++;
      bytes += p.unitBytes[v]!;
    }
    ok = roomFor();
  }
  // restore
  for (let k = moves.length - 1; k >= 0; k--) {
    const [v] = moves[k]!;
    take(p, s, v);
    put(p, s, v, n);
  }
  return ok ? { moves, extra, bytes } : undefined;
}

/**
 * A drain from any placement the planner finds for the whole cluster (`constructAssignment`,
 * else the exact search), with every unit that need not move taken back to its node wherever it
 * fits there (its node's limits, or no more than the node holds now), largest first, until none
 * can: the fallback when moving a few guests off one node is not enough. Undefined when no
 * placement is found.
 */
function wholeSearch(
  p: Problem,
  required: readonly number[],
  stationary: Uint8Array,
): { assign: Int32Array; makeRoom: RoomMove[] } | undefined {
  let start = constructAssignment(p);
  if (start === undefined) {
    const exact = findFeasible(p, undefined, DRAIN_EXACT_BUDGET);
    if (exact.kind !== 'feasible') return undefined;
    start = exact.assign;
  }
  const U = p.units.length;
  const s: DrainState = {
    target: new Int32Array(U).fill(-1),
    mem: Float64Array.from(p.fixMem),
    cores: Float64Array.from(p.fixCores),
    cpu: Float64Array.from(p.fixCpu),
    limMem: p.limMem.map((l) => l + CAPACITY_SLACK * l),
    limCores: p.limCores.map((l) => l + CAPACITY_SLACK * l),
  };
  // what each node holds now (what may come back to it even above its limits)
  const nowMem = Float64Array.from(p.fixMem);
  const nowCores = Float64Array.from(p.fixCores);
  for (let u = 0; u < U; u++) {
    put(p, s, u, start[u]!);
    if (stationary[u]) {
      nowMem[p.home[u]!]! += p.unitMem[u]!;
      nowCores[p.home[u]!]! += p.unitCores[u]!;
    }
  }
  const away = () =>
    Array.from({ length: U }, (_, u) => u)
      .filter((u) => stationary[u] === 1 && s.target[u] !== p.home[u])
      .sort((a, b) => p.unitBytes[b]! - p.unitBytes[a]! || a - b);
  for (let changed = true; changed; ) {
    changed = false;
    for (const u of away()) {
      const h = p.home[u]!;
      const mem = s.mem[h]! + p.unitMem[u]!;
      const cores = s.cores[h]! + p.unitCores[u]!;
      if (mem > Math.max(s.limMem[h]!, nowMem[h]!) || cores > Math.max(s.limCores[h]!, nowCores[h]!)) continue;
      if (p.negatives[u]!.some((v) => s.target[v] === h)) continue;
      take(p, s, u);
      put(p, s, u, h);
      changed = true;
    }
  }
  const makeRoom = away().map((u): RoomMove => {
    const from = p.home[u]!;
    const to = s.target[u]!;
    const arriving = required.find((v) => s.target[v] === from);
    const label = p.units[u]!.ids.join(' + ');
    const why =
      arriving === undefined
        ? 'the drained guests fit only with it moved'
        : `the drained guests fit only with it moved (${p.units[arriving]!.ids.join(' + ')} goes to ${p.nodeNames[from]})`;
    return {
      guests: p.units[u]!.ids,
      source: p.nodeNames[from]!,
      target: p.nodeNames[to]!,
      for: arriving === undefined ? p.units[required[0]!]!.ids[0]! : p.units[arriving]!.ids[0]!,
      reason: `${label} ${p.nodeNames[from]} → ${p.nodeNames[to]} to make room: ${why}`,
    };
  });
  return { assign: s.target, makeRoom };
}
