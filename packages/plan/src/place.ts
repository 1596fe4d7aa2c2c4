import { PlanError } from './errors';
import { type Problem, buildProblem } from './model';
import { SequentialPlacer, type PlacerUnit } from './placer';
import { currentLoads, nodeLoads } from './planner';
import { imbalance } from '@poise/imbalance';
import { type CheckedInput, checkSize, show, validatePlanInput } from './validate';
import type { NodeUse, PlanInput, PlanRule } from './types';
import { compareNames } from '@poise/usage';

/** Guests to place (`count` copies of one size). */
export interface NewGuest {
  /** Id of the guest, or the prefix of the copies' ids (`<id>-1`, `<id>-2`, … when `count` > 1); default `new`. */
  readonly id?: string | undefined;
  readonly kind?: 'vm' | 'ct' | undefined;
  /** Assigned cores, finite > 0. */
  readonly cores: number;
  /** Cores it is expected to use, finite ≥ 0 (default: `cores`, every core busy). */
  readonly cpu?: number | undefined;
  /** Memory, bytes, finite > 0. */
  readonly mem: number;
  /** Copies, integer 1..100,000 (default 1). */
  readonly count?: number | undefined;
}

/** What {@link placeGuests} places. */
export interface PlacementRequest {
  readonly guests: readonly NewGuest[];
  /**
   * Rules for the new guests (they may also name existing guests): node affinity, positive
   * affinity (placed together, or with the existing guest), negative affinity (apart, also
   * from existing guests). The cluster's own rules apply to the existing guests as they are.
   */
  readonly rules?: readonly PlanRule[] | undefined;
}

/** Where the new guests go and what the cluster looks like after. */
export interface PlacementResult {
  /** New guest id → node, in the order they were placed. */
  readonly placed: ReadonlyMap<string, string>;
  /** New guests that fit nowhere, with the reason (the others are still placed). */
  readonly unplaced: readonly { readonly id: string; readonly reason: string }[];
  /** Per usable node after the placement. */
  readonly nodes: readonly NodeUse[];
  /** The highest utilisation per resource after, and the reference imbalance before and after. */
  readonly after: { readonly cpu: number; readonly mem: number };
  readonly imbalance: { readonly current: number; readonly after: number };
}

/** Options of {@link placeGuests}. */
export interface PlaceOptions {
  /** Nodes that take no new guest (as drained). */
  readonly avoid?: readonly string[] | undefined;
  readonly metric?: 'raw' | 'normalized' | undefined;
}

/**
 * Batch placement (the "best node" automation asks for): where `count` new guests of a size go,
 * one after the other in the order given, as the HA manager places a guest it starts
 * (`@poise/usage`'s start scoring over the usable nodes, each placed guest counted for the
 * next), honouring the capacity limits and the rules; existing guests stay where they are. A
 * guest that fits nowhere is reported with the reason and the others are still placed.
 *
 * Throws `PlanError` `invalid-input` for a malformed cluster or request (naming the field:
 * `request.guests[0].mem`, an id that clashes with an existing guest, a rule naming an unknown
 * guest), `invalid-options` for an unknown node in `avoid`.
 */
export function placeGuests(input: PlanInput, request: PlacementRequest, options: PlaceOptions = {}): PlacementResult {
  const checked = validatePlanInput(input);
  const metric = options.metric ?? 'normalized';
  if (metric !== 'raw' && metric !== 'normalized')
    throw new PlanError('invalid-options', `options.metric must be 'raw' or 'normalized', got ${show(metric)}`);
  const nodeNames = new Set(checked.nodes.map((n) => n.name));
  for (const [i, n] of (options.avoid ?? []).entries()) {
    if (!nodeNames.has(n))
      throw new PlanError('invalid-options', `options.avoid[${i}] ${show(n)} is not one of the nodes`);
  }
  const fresh = expandRequest(request, checked);
  // the cluster with the new guests on a node of their own would not validate; rules are checked against both id sets
  const allIds = new Set([...checked.guests.map((g) => g.id), ...fresh.map((g) => g.id)]);
  const rules = checkRequestRules(request.rules ?? [], allIds, nodeNames);
  const p = buildProblem(checked, { drain: options.avoid });
  const loads = currentLoads(p);
  const cores = Float64Array.from(p.fixCores);
  p.input.guests.forEach((g, i) => {
    if (p.guestCounted[i] && p.guestUnit[i]! >= 0 && p.input.nodes[p.nodeIndex.get(g.node)!]!.online)
      cores[p.nodeIndex.get(g.node)!]! += g.cores;
  });
  const placer = new SequentialPlacer(p, { cpu: loads.cpu, mem: loads.mem, cores }, metric);
  p.input.guests.forEach((g, i) => {
    if (p.guestCounted[i] && p.input.nodes[p.nodeIndex.get(g.node)!]!.online)
      placer.where.set(g.id, p.nodeIndex.get(g.node)!);
  });
  const before = imbalance(nodeLoads(p, loads), metric);
  const placed = new Map<string, string>();
  const unplaced: { id: string; reason: string }[] = [];
  const guestsOn = Int32Array.from(loads.guests);
  for (const unit of requestUnits(p, fresh, rules, placer)) {
    if ('reason' in unit) {
      for (const id of unit.ids) unplaced.push({ id, reason: unit.reason });
      continue;
    }
    const at = placer.place(unit);
    if ('reason' in at) {
      for (const id of unit.ids) unplaced.push({ id, reason: at.reason });
      continue;
    }
    for (const id of unit.ids) placed.set(id, p.nodeNames[at.node]!);
    guestsOn[at.node]! += unit.ids.length;
  }
  const after = placer.balance(metric);
  return {
    placed,
    unplaced,
    nodes: placer.uses(guestsOn),
    after: { cpu: after.cpu, mem: after.mem },
    imbalance: { current: before, after: after.imbalance },
  };
}

interface FreshGuest {
  readonly id: string;
  readonly cpu: number;
  readonly cores: number;
  readonly mem: number;
}

/** The request's guests, one per copy, checked. */
function expandRequest(request: PlacementRequest, checked: CheckedInput): FreshGuest[] {
  // checked through an `unknown` copy: Array.isArray would narrow the typed array itself to any[]
  const guests: unknown = (request as { guests?: unknown } | null)?.guests;
  if (typeof request !== 'object' || request === null || !Array.isArray(guests))
    throw new PlanError('invalid-input', `request.guests must be an array, got ${show(guests)}`);
  const existing = new Set(checked.guests.map((g) => g.id));
  const out: FreshGuest[] = [];
  const seen = new Set<string>();
  request.guests.forEach((g, i) => {
    const at = `request.guests[${i}]`;
    if (typeof g !== 'object' || g === null)
      throw new PlanError('invalid-input', `${at} must be an object, got ${show(g)}`);
    const cores = checkSize(g.cores, `${at}.cores`, true);
    const mem = checkSize(g.mem, `${at}.mem`, true);
    const cpu = g.cpu === undefined ? cores : checkSize(g.cpu, `${at}.cpu`, false);
    const count = g.count ?? 1;
    if (!Number.isInteger(count) || count < 1 || count > 100_000)
      throw new PlanError('invalid-input', `${at}.count must be an integer in 1..100000, got ${show(count)}`);
    if (g.id !== undefined && (typeof g.id !== 'string' || g.id === ''))
      throw new PlanError('invalid-input', `${at}.id must be a non-empty string, got ${show(g.id)}`);
    const base = g.id ?? 'new';
    for (let k = 1; k <= count; k++) {
      const id = count === 1 && g.id !== undefined ? base : `${base}-${k}`;
      if (existing.has(id)) throw new PlanError('invalid-input', `${at}: id '${id}' is already a guest of the cluster`);
      if (seen.has(id)) throw new PlanError('invalid-input', `${at}: id '${id}' is requested twice`);
      seen.add(id);
      out.push({ id, cpu, cores, mem });
    }
  });
  return out;
}

/** The request's rules, checked against the existing and new ids and the nodes. */
function checkRequestRules(
  rules: readonly PlanRule[],
  ids: ReadonlySet<string>,
  nodes: ReadonlySet<string>,
): PlanRule[] {
  // checked through `unknown` copies, as the guests above
  const given: unknown = rules;
  if (!Array.isArray(given)) throw new PlanError('invalid-input', `request.rules must be an array, got ${show(rules)}`);
  rules.forEach((rule, i) => {
    const at = `request.rules[${i}]`;
    const resources: unknown = (rule as { resources?: unknown } | null)?.resources;
    if (typeof rule !== 'object' || rule === null || !Array.isArray(resources))
      throw new PlanError('invalid-input', `${at} must be a rule with resources`);
    rule.resources.forEach((sid: string, k: number) => {
      if (!ids.has(sid))
        throw new PlanError(
          'invalid-input',
          `${at}.resources[${k}] ${show(sid)} is neither a guest of the cluster nor a requested one`,
        );
    });
    if (rule.type === 'node-affinity') {
      const ruleNodes: unknown = rule.nodes;
      if (!Array.isArray(ruleNodes)) throw new PlanError('invalid-input', `${at}.nodes must be an array`);
      rule.nodes.forEach((n: { node: string }, k: number) => {
        if (!nodes.has(n.node))
          throw new PlanError('invalid-input', `${at}.nodes[${k}] ${show(n.node)} is not one of the nodes`);
      });
    } else if (rule.type !== 'resource-affinity' || (rule.affinity !== 'positive' && rule.affinity !== 'negative')) {
      throw new PlanError(
        'invalid-input',
        `${at}: type must be 'node-affinity' or 'resource-affinity' with affinity 'positive' or 'negative'`,
      );
    }
  });
  return [...rules];
}

/**
 * The new guests as placement units, in request order: positive groups of new guests together
 * (at the first member's turn), pinned to an existing partner's node when they have one.
 */
function requestUnits(
  p: Problem,
  fresh: readonly FreshGuest[],
  rules: readonly PlanRule[],
  placer: SequentialPlacer,
): Array<PlacerUnit | { ids: string[]; reason: string }> {
  const N = p.nodeNames.length;
  const freshIds = new Set(fresh.map((g) => g.id));
  const group = new Map<string, string>(fresh.map((g) => [g.id, g.id]));
  const find = (id: string): string => {
    let r = id;
    while (group.get(r) !== r) r = group.get(r)!;
    return r;
  };
  const anchor = new Map<string, string>(); // group root → existing partner id
  for (const rule of rules) {
    if (rule.type !== 'resource-affinity' || rule.affinity !== 'positive') continue;
    const newOnes = rule.resources.filter((s) => freshIds.has(s));
    const old = rule.resources.filter((s) => !freshIds.has(s));
    for (let k = 1; k < newOnes.length; k++) {
      const a = find(newOnes[0]!);
      const b = find(newOnes[k]!);
      if (a !== b) group.set(compareNames(a, b) > 0 ? a : b, compareNames(a, b) > 0 ? b : a);
    }
    if (newOnes.length > 0 && old.length > 0) anchor.set(find(newOnes[0]!), old[0]!);
  }
  const members = new Map<string, FreshGuest[]>();
  for (const g of fresh) {
    const r = find(g.id);
    members.set(r, [...(members.get(r) ?? []), g]);
  }
  const out: Array<PlacerUnit | { ids: string[]; reason: string }> = [];
  const done = new Set<string>();
  for (const g of fresh) {
    const r = find(g.id);
    if (done.has(r)) continue;
    done.add(r);
    const ms = members.get(r)!;
    const ids = ms.map((m) => m.id);
    let allowed = new Set<number>();
    for (let n = 0; n < N; n++) if (p.usable[n]) allowed.add(n);
    for (const rule of rules) {
      if (rule.type !== 'node-affinity' || !rule.resources.some((s) => ids.includes(s))) continue;
      let top = -Infinity;
      for (const e of rule.nodes) if (p.usable[p.nodeIndex.get(e.node)!]) top = Math.max(top, e.priority ?? 0);
      const ok = new Set<number>();
      if (top === -Infinity) {
        if (!rule.strict) for (let n = 0; n < N; n++) if (p.usable[n]) ok.add(n);
      } else
        for (const e of rule.nodes)
          if ((e.priority ?? 0) === top && p.usable[p.nodeIndex.get(e.node)!]) ok.add(p.nodeIndex.get(e.node)!);
      allowed = new Set([...allowed].filter((n) => ok.has(n)));
    }
    const partner = anchor.get(r);
    if (partner !== undefined) {
      const at = placer.where.get(partner);
      if (at === undefined) {
        out.push({
          ids,
          reason: `${ids.join(' + ')}: its positive-affinity partner ${partner} is not on an online node`,
        });
        continue;
      }
      allowed = new Set([...allowed].filter((n) => n === at));
    }
    const negatives = new Set<string>();
    let contradiction = false;
    for (const rule of rules) {
      if (
        rule.type !== 'resource-affinity' ||
        rule.affinity !== 'negative' ||
        !rule.resources.some((s) => ids.includes(s))
      )
        continue;
      for (const s of rule.resources) if (!ids.includes(s)) negatives.add(s);
      if (rule.resources.filter((s) => ids.includes(s)).length > 1) contradiction = true;
    }
    if (contradiction) {
      out.push({ ids, reason: `${ids.join(' + ')}: a positive and a negative affinity rule name the same guests` });
      continue;
    }
    out.push({
      ids,
      cpu: ms.reduce((s, m) => s + m.cpu, 0),
      cores: ms.reduce((s, m) => s + m.cores, 0),
      mem: ms.reduce((s, m) => s + m.mem, 0),
      allowed: [...allowed].sort((a, b) => a - b),
      negatives: [...negatives].sort(compareNames),
    });
  }
  return out;
}
