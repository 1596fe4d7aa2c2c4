import { type Problem, buildProblem } from './model';
import { SequentialPlacer } from './placer';
import { type CheckedOptions, checkPlanOptions, currentLoads, planChecked } from './planner';
import { type CheckedInput, validatePlanInput } from './validate';
import type { NodeUse, PlanInput } from './types';
import { compareNames } from '@poise/usage';

/** What happens when one node fails. */
export interface NodeFailureCase {
  readonly node: string;
  /** The HA resources on it that HA must recover (byte order). */
  readonly recover: readonly string[];
  /** Guests that go down with it and are not recovered: not HA resources, or ignored by HA. */
  readonly lost: readonly string[];
  /** HA's recovery (in sid order, each on its best start score within capacity and rules) places every one. */
  readonly recovered: boolean;
  /** Where HA's recovery puts each recovered guest. */
  readonly placement: ReadonlyMap<string, string>;
  /** Guests HA's recovery could not place, and why. */
  readonly unrecovered: readonly { readonly id: string; readonly reason: string }[];
  /**
   * Some placement recovers them all within capacity and rules (the planner, every other guest
   * where it is): `true` whenever `recovered`; when HA's order fails but this holds, moving
   * guests first (or recovering in another order) would make room.
   */
  readonly placementExists: boolean;
  /** After HA's recovery: highest utilisation per resource, reference imbalance, per usable node. */
  readonly after: {
    readonly cpu: number;
    readonly mem: number;
    readonly imbalance: number;
    readonly nodes: readonly NodeUse[];
  };
}

/** The N+1 capacity report of {@link nodeFailureReport}. */
export interface NodeFailureReport {
  /** One case per online node (byte order). */
  readonly cases: readonly NodeFailureCase[];
  /** Every single node failure is recovered by HA within capacity and rules. */
  readonly survivesAnyNodeFailure: boolean;
}

/**
 * What-if node failure (an N+1 capacity report): for each online node, whether HA can recover
 * its HA resources on the other usable nodes within the capacity limits and the rules, as HA
 * recovers them (one by one in sid order, each on the allowed node with the best start score
 * that has room and holds no negative-affinity partner; a positive-affinity group together, with
 * its members on other nodes if it has any), and the balance afterwards. A guest that cannot be
 * migrated counts as not recoverable (a local disk is lost with its node). When HA's order
 * fails, the planner decides whether any placement would recover them all.
 *
 * Options as `planPlacement` (`drain`: nodes that take nothing; `metric`). Throws `PlanError`
 * for malformed input only.
 */
export function nodeFailureReport(
  input: PlanInput,
  options?: { drain?: readonly string[]; metric?: 'raw' | 'normalized' },
): NodeFailureReport {
  const checked = validatePlanInput(input);
  const opts = checkPlanOptions(options, checked);
  const cases: NodeFailureCase[] = [];
  for (const node of checked.nodes) {
    if (!node.online) continue;
    cases.push(failure(checked, node.name, opts));
  }
  return { cases, survivesAnyNodeFailure: cases.every((c) => c.recovered) };
}

function failure(checked: CheckedInput, failed: string, opts: CheckedOptions): NodeFailureCase {
  const down: CheckedInput = {
    ...checked,
    nodes: checked.nodes.map((n) => (n.name === failed ? { ...n, online: false } : n)),
  };
  const p = buildProblem(down, { drain: opts.drain });
  const f = p.nodeIndex.get(failed)!;
  const guests = p.input.guests;
  const recover: string[] = [];
  const lost: string[] = [];
  guests.forEach((g, i) => {
    if (g.node !== failed) return;
    if (p.guestCounted[i] && !g.ignored) recover.push(g.id);
    else lost.push(g.id);
  });
  // fixed guests on the failed node that are counted are HA resources that cannot move: not recoverable
  const loads = currentLoads(p);
  // the cores assigned on each node before the placer copies them: every guest that stays counts
  const cores = Float64Array.from(p.fixCores);
  const staying: [string, number][] = [];
  guests.forEach((g, i) => {
    const n = p.nodeIndex.get(g.node)!;
    if (n === f || !p.guestCounted[i] || !p.input.nodes[n]!.online) return;
    staying.push([g.id, n]);
    if (p.guestUnit[i]! >= 0) cores[n]! += g.cores;
  });
  const placer = new SequentialPlacer(p, { cpu: loads.cpu, mem: loads.mem, cores }, opts.metric);
  for (const [id, n] of staying) placer.where.set(id, n);
  // the units with a member on the failed node, in sid order of their first member there
  const units = unitsOnFailed(p, f);
  const placement = new Map<string, string>();
  const unrecovered: { id: string; reason: string }[] = [];
  // HA resources on the failed node that are no unit: they cannot move (the model says why)
  for (const id of recover) {
    const i = guests.findIndex((g) => g.id === id);
    if (p.guestUnit[i]! >= 0) continue;
    unrecovered.push({
      id,
      reason: p.reasons.find((r) => r.includes(id)) ?? `${id} ${guests[i]!.reason ?? 'cannot be migrated'}`,
    });
  }
  for (const u of units) {
    const unit = p.units[u]!;
    const elsewhere = unit.guests.map((m) => p.nodeIndex.get(guests[m]!.node)!).filter((n) => n !== f);
    let allowed = [...p.allowedList[u]!];
    if (elsewhere.length > 0) allowed = allowed.filter((n) => n === elsewhere[0]);
    const onFailed = unit.guests.filter((m) => guests[m]!.node === failed);
    const ids = onFailed.map((m) => guests[m]!.id);
    const negatives: string[] = [];
    for (const v of p.negatives[u]!) negatives.push(...p.units[v]!.ids);
    const at = placer.place({
      ids,
      cpu: onFailed.reduce((s, m) => s + guests[m]!.cpu, 0),
      cores: onFailed.reduce((s, m) => s + guests[m]!.cores, 0),
      mem: onFailed.reduce((s, m) => s + guests[m]!.mem, 0),
      allowed,
      negatives,
    });
    if ('reason' in at) for (const id of ids) unrecovered.push({ id, reason: at.reason });
    else for (const id of ids) placement.set(id, p.nodeNames[at.node]!);
  }
  const recovered = unrecovered.length === 0;
  let placementExists = recovered;
  if (!recovered && unrecovered.every((u) => p.guestUnit[guests.findIndex((g) => g.id === u.id)]! >= 0)) {
    // the planner with every other guest pinned where it is
    const pinned: CheckedInput = {
      ...down,
      guests: down.guests.map((g) =>
        g.node === failed || !g.migratable ? g : { ...g, migratable: false, reason: 'stays where it is' },
      ),
    };
    placementExists = planChecked(pinned, { ...opts, seed: opts.seed }).feasible;
  }
  const guestsOn = Int32Array.from(loads.guests);
  guestsOn[f] = 0;
  for (const node of placement.values()) guestsOn[p.nodeIndex.get(node)!]! += 1;
  const balance = placer.balance(opts.metric);
  return {
    node: failed,
    recover: recover.sort(compareNames),
    lost: lost.sort(compareNames),
    recovered,
    placement,
    unrecovered: unrecovered.map((u) => ({ id: u.id, reason: u.reason })),
    placementExists,
    after: { cpu: balance.cpu, mem: balance.mem, imbalance: balance.imbalance, nodes: placer.uses(guestsOn) },
  };
}

/** Units with a member on node `f`, ordered by their first such member's id. */
function unitsOnFailed(p: Problem, f: number): number[] {
  const first = new Map<number, string>();
  p.input.guests.forEach((g, i) => {
    const u = p.guestUnit[i]!;
    if (u < 0 || p.nodeIndex.get(g.node) !== f) return;
    if (!first.has(u) || compareNames(g.id, first.get(u)!) < 0) first.set(u, g.id);
  });
  return [...first].sort((a, b) => compareNames(a[1], b[1])).map(([u]) => u);
}
