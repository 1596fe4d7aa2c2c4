import { type CheckedInput, type CheckedRule, compareNames } from './validate';

/** Bytes per GiB. */
export const GIB = 1024 ** 3;

/**
 * A set of guests placed as one: a guest, or a connected group of positive resource affinity
 * (they share a node and move together, as HA moves them).
 */
export interface Unit {
  /** Guest indices (into `CheckedInput.guests`), in byte order of id. */
  readonly guests: readonly number[];
  readonly ids: readonly string[];
}

/**
 * The placement problem in index form: what the search, the bound, the scheduler and the oracle
 * share. Nodes are indexed in byte order of name; `units` are the movable units only (a unit
 * that cannot move is folded into the node's fixed load).
 */
export interface Problem {
  readonly input: CheckedInput;
  readonly nodeNames: readonly string[];
  readonly nodeIndex: ReadonlyMap<string, number>;
  /** Per node: 1 when guests may be placed there (online, not in maintenance, not drained). */
  readonly usable: Uint8Array;
  /** Per node: cores and memory bytes (the utilisation denominators). */
  readonly capCpu: Float64Array;
  readonly capMem: Float64Array;
  /** Per node: the capacity limits (assigned cores, memory bytes); `Infinity` when unlimited. */
  readonly limCores: Float64Array;
  readonly limMem: Float64Array;
  /** Per node: load that stays (base load, guests that cannot move, ignored guests). */
  readonly fixCpu: Float64Array;
  readonly fixMem: Float64Array;
  readonly fixCores: Float64Array;
  /** Movable units and their sizes. */
  readonly units: readonly Unit[];
  readonly unitCpu: Float64Array;
  readonly unitMem: Float64Array;
  readonly unitCores: Float64Array;
  /** Per unit: the nodes it may be placed on (ascending), and the same as a flat 0/1 matrix `unit * N + node`. */
  readonly allowedList: readonly Int32Array[];
  readonly allowed: Uint8Array;
  /** Per unit: the movable units it must not share a node with (ascending, no duplicates). */
  readonly negatives: readonly Int32Array[];
  /** Per unit: the cost of placing it anywhere but where its members are now (every member migrates). */
  readonly fullCost: Float64Array;
  /** Per unit: (node, saving) for nodes some members are on now: cost there = fullCost − saving. */
  readonly stays: readonly (readonly (readonly [number, number])[])[];
  /** Per unit: members, bytes copied when every member migrates. */
  readonly unitMoves: Int32Array;
  readonly unitBytes: Float64Array;
  /** Per unit: its current node (where most of its members are; the lowest index on a tie), −1 if none is usable. */
  readonly home: Int32Array;
  /** Per guest index: its unit, or −1 (fixed, ignored or left out). */
  readonly guestUnit: Int32Array;
  /** Per guest index: counted at all (false: on an offline node and not recovered). */
  readonly guestCounted: Uint8Array;
  /** Infeasibility found while building (constraints that contradict each other or the cluster). */
  readonly reasons: string[];
  /** Facts worth reporting (guests that stay on a node in maintenance, rules that skip ignored guests). */
  readonly notes: string[];
  /** Constraints the current placement breaks. */
  readonly violations: string[];
  /** Negative rules as unit groups, with the nodes of fixed members, for the diagnosis. */
  readonly negativeRules: readonly {
    readonly id: string;
    readonly units: readonly number[];
    readonly fixedNodes: readonly number[];
  }[];
}

/** Options of {@link buildProblem}. */
export interface ProblemOptions {
  /** Nodes to empty completely. */
  readonly drain?: readonly string[] | undefined;
}

/** Union-find over guest indices. */
function unionFind(n: number): { find(i: number): number; union(a: number, b: number): void } {
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  return {
    find,
    union: (a, b) => {
      const ra = find(a);
      const rb = find(b);
      if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
    },
  };
}

/** `a, b and c`. */
export function listText(items: readonly string[], max = 6): string {
  const shown = items.length > max ? [...items.slice(0, max), `${items.length - max} more`] : [...items];
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}

/** A guest's reason for not moving, for messages: `vm:104 has a local disk`. */
function pinnedText(id: string, reason: string | undefined): string {
  return `${id} ${reason ?? 'cannot be migrated'}`;
}

/** Builds the index form of a validated input (see {@link Problem}). */
export function buildProblem(input: CheckedInput, options: ProblemOptions = {}): Problem {
  const N = input.nodes.length;
  const nodeNames = input.nodes.map((n) => n.name);
  const nodeIndex = new Map(nodeNames.map((n, i) => [n, i]));
  const drained = new Set(options.drain ?? []);
  const usable = new Uint8Array(N);
  const capCpu = new Float64Array(N);
  const capMem = new Float64Array(N);
  const limCores = new Float64Array(N);
  const limMem = new Float64Array(N);
  const fixCpu = new Float64Array(N);
  const fixMem = new Float64Array(N);
  const fixCores = new Float64Array(N);
  const reasons: string[] = [];
  const notes: string[] = [];
  const violations: string[] = [];
  input.nodes.forEach((n, i) => {
    usable[i] = n.online && !n.maintenance && !drained.has(n.name) ? 1 : 0;
    capCpu[i] = n.cpuCores;
    capMem[i] = n.memBytes;
    limCores[i] = input.cpuOvercommitRatio === undefined ? Infinity : input.cpuOvercommitRatio * n.cpuCores;
    limMem[i] = (1 - input.memoryHeadroomPercent / 100) * n.memBytes;
    if (n.online) {
      fixCpu[i] = n.baseCpu;
      fixMem[i] = n.baseMem;
    }
  });
  const usableCount = usable.reduce((a, b) => a + b, 0);
  const online = (node: number) => input.nodes[node]!.online;
  const why = (node: number) => {
    const n = input.nodes[node]!;
    if (!n.online) return 'offline';
    if (n.maintenance) return 'in maintenance';
    return drained.has(n.name) ? 'being drained' : 'usable';
  };

  const guests = input.guests;
  const G = guests.length;
  const guestIndex = new Map(guests.map((g, i) => [g.id, i]));
  const guestNode = Int32Array.from(guests, (g) => nodeIndex.get(g.node)!);
  // counted: online, or an HA resource on an offline node (to be recovered); ruled: rules apply
  const guestCounted = new Uint8Array(G);
  const ruled = new Uint8Array(G);
  for (let i = 0; i < G; i++) {
    const g = guests[i]!;
    const on = online(guestNode[i]!);
    if (g.ignored) {
      guestCounted[i] = on ? 1 : 0;
      continue;
    }
    if (!on && !g.ha) {
      notes.push(`${g.id} is on offline node ${g.node} and is not an HA resource: left out`);
      continue;
    }
    guestCounted[i] = 1;
    ruled[i] = 1;
  }

  // positive groups
  const uf = unionFind(G);
  const positiveRuleOf = new Map<number, string>();
  for (const rule of input.rules) {
    if (rule.type !== 'resource-affinity' || rule.affinity !== 'positive') continue;
    const members = ruledMembers(rule, guestIndex, ruled, guests, notes);
    for (let k = 1; k < members.length; k++) uf.union(members[0]!, members[k]!);
    for (const m of members) positiveRuleOf.set(m, rule.id);
  }
  const groups = new Map<number, number[]>();
  for (let i = 0; i < G; i++) {
    if (!ruled[i]) continue;
    const root = uf.find(i);
    const list = groups.get(root);
    if (list) list.push(i);
    else groups.set(root, [i]);
  }

  // node affinity per guest: the allowed usable nodes (HA's highest priority among usable)
  const affinity = new Map<number, { rule: string; nodes: Set<number>; strict: boolean }>();
  for (const rule of input.rules) {
    if (rule.type !== 'node-affinity') continue;
    const pri = affinityNodes(rule, nodeIndex, usable);
    for (const m of ruledMembers(rule, guestIndex, ruled, guests, notes)) {
      const had = affinity.get(m);
      if (had) {
        const both = new Set([...had.nodes].filter((n) => pri.has(n)));
        affinity.set(m, { rule: `${had.rule}' and '${rule.id}`, nodes: both, strict: had.strict || rule.strict });
      } else affinity.set(m, { rule: rule.id, nodes: pri, strict: rule.strict });
    }
  }

  const guestUnit = new Int32Array(G).fill(-1);
  const units: Unit[] = [];
  const unitAllowed: (readonly number[])[] = [];
  const usableList: number[] = [];
  for (let n = 0; n < N; n++) if (usable[n]) usableList.push(n);
  const fixedUnitNode = new Map<number, number>(); // guest → node of its fixed unit
  const fixLoad = (gi: number, node: number) => {
    const g = guests[gi]!;
    fixCpu[node]! += g.cpu;
    fixMem[node]! += g.mem;
    fixCores[node]! += g.cores;
  };
  for (let i = 0; i < G; i++) {
    if (!guests[i]!.ignored || !guestCounted[i]) continue;
    fixLoad(i, guestNode[i]!);
    // HA leaves an ignored guest where it is: a drain cannot empty its node
    if (drained.has(guests[i]!.node))
      reasons.push(
        `${guests[i]!.node} cannot be drained: ${guests[i]!.id} is ignored by HA (state 'ignored'): it stays`,
      );
  }

  const sortedGroups = [...groups.values()].sort((a, b) => a[0]! - b[0]!);
  for (const members of sortedGroups) {
    if (members.length === 1 && guests[members[0]!]!.migratable) {
      // the common case (a movable guest without positive affinity), without the group's bookkeeping
      const m = members[0]!;
      const a = affinity.get(m);
      const allowed = a ? usableList.filter((n) => a.nodes.has(n)) : usableList;
      if (allowed.length === 0) {
        reasons.push(
          drainedPinReason(guests[m]!, affinity.get(m), input.rules, drained) ??
            noNodeReason(guests[m]!.id, members, affinity, usableCount, nodeNames, why, N),
        );
        continue;
      }
      guestUnit[m] = units.length;
      units.push({ guests: members, ids: [guests[m]!.id] });
      unitAllowed.push(allowed);
      continue;
    }
    const ids = members.map((m) => guests[m]!.id);
    const label =
      members.length > 1 ? `positive affinity '${positiveRuleOf.get(members[0]!)}' (${listText(ids)})` : ids[0]!;
    const pinned = members.filter((m) => !guests[m]!.migratable);
    const pinnedNodes = [...new Set(pinned.map((m) => guestNode[m]!))];
    if (pinnedNodes.length > 1) {
      reasons.push(
        `${label} must share a node, but ${listText(pinned.map((m) => `${pinnedText(guests[m]!.id, guests[m]!.reason)} (on ${guests[m]!.node})`))}`,
      );
      continue;
    }
    // allowed: usable nodes in the node affinity of every member that can move (one that cannot
    // stays where it is, whatever its rules say); ascending
    let allowed: readonly number[] = usableList;
    for (const m of members) {
      const a = guests[m]!.migratable ? affinity.get(m) : undefined;
      if (a) allowed = allowed.filter((n) => a.nodes.has(n));
    }
    if (pinnedNodes.length === 1) {
      const p = pinnedNodes[0]!;
      const pg = guests[pinned[0]!]!;
      const allThere = members.every((m) => guestNode[m] === p);
      if (!online(p)) {
        reasons.push(`${pinnedText(pg.id, pg.reason)} and is on offline node ${nodeNames[p]}: it cannot be recovered`);
        continue;
      }
      if (drained.has(nodeNames[p]!)) {
        reasons.push(`${nodeNames[p]} cannot be drained: ${pinnedText(pg.id, pg.reason)}`);
        continue;
      }
      if (allThere && (!usable[p] || !allowed.includes(p))) {
        for (const m of members) fixLoad(m, p);
        for (const m of members) fixedUnitNode.set(m, p);
        notes.push(
          !usable[p]
            ? `${label} stays on ${nodeNames[p]} (${why(p)}): ${pinnedText(pg.id, pg.reason)}`
            : `${label} stays on ${nodeNames[p]} against its node affinity: ${pinnedText(pg.id, pg.reason)}`,
        );
        continue;
      }
      if (!usable[p] || !allowed.includes(p)) {
        reasons.push(
          `${label} must share a node, but ${pinnedText(pg.id, pg.reason)} and stays on ${nodeNames[p]}, where the others may not go (${!usable[p] ? why(p) : 'node affinity'})`,
        );
        continue;
      }
      if (allThere) {
        for (const m of members) fixLoad(m, p);
        for (const m of members) fixedUnitNode.set(m, p);
        continue;
      }
      allowed = [p];
    }
    if (allowed.length === 0) {
      const pin = members
        .map((m) => drainedPinReason(guests[m]!, affinity.get(m), input.rules, drained))
        .find((r) => r !== undefined);
      reasons.push(pin ?? noNodeReason(label, members, affinity, usableCount, nodeNames, why, N));
      continue;
    }
    const u = units.length;
    units.push({ guests: members, ids });
    unitAllowed.push(allowed);
    for (const m of members) guestUnit[m] = u;
  }

  const U = units.length;
  const unitCpu = new Float64Array(U);
  const unitMem = new Float64Array(U);
  const unitCores = new Float64Array(U);
  const fullCost = new Float64Array(U);
  const unitMoves = new Int32Array(U);
  const unitBytes = new Float64Array(U);
  const home = new Int32Array(U).fill(-1);
  const stays: (readonly [number, number])[][] = [];
  const allowedFlat = new Uint8Array(U * N);
  const allowedList: Int32Array[] = [];
  const w = input.weights;
  const everyUsable = Int32Array.from(usableList);
  for (let u = 0; u < U; u++) {
    // units that may use every usable node share one list (never changed in place)
    const list = unitAllowed[u] === usableList ? everyUsable : Int32Array.from(unitAllowed[u]!);
    allowedList.push(list);
    for (const n of list) allowedFlat[u * N + n] = 1;
    const members = units[u]!.guests;
    if (members.length === 1) {
      // the common case, without maps
      const g = guests[members[0]!]!;
      const node = guestNode[members[0]!]!;
      const recover = !online(node);
      const cost = w.move + (recover ? 0 : (w.gib * g.mem) / GIB);
      unitCpu[u] = g.cpu;
      unitMem[u] = g.mem;
      unitCores[u] = g.cores;
      fullCost[u] = cost;
      unitMoves[u] = 1;
      unitBytes[u] = recover ? 0 : g.mem;
      stays.push(recover ? [] : [[node, cost]]);
      home[u] = !recover && usable[node] ? node : -1;
      continue;
    }
    const byNode = new Map<number, number>();
    const countOn = new Map<number, number>();
    for (const m of members) {
      const g = guests[m]!;
      unitCpu[u]! += g.cpu;
      unitMem[u]! += g.mem;
      unitCores[u]! += g.cores;
      const node = guestNode[m]!;
      const recover = !online(node);
      const cost = w.move + (recover ? 0 : (w.gib * g.mem) / GIB);
      fullCost[u]! += cost;
      unitMoves[u]! += 1;
      unitBytes[u]! += recover ? 0 : g.mem;
      if (!recover) {
        byNode.set(node, (byNode.get(node) ?? 0) + cost);
        countOn.set(node, (countOn.get(node) ?? 0) + 1);
      }
    }
    stays.push([...byNode].sort((a, b) => a[0] - b[0]));
    let best = -1;
    let bestCount = 0;
    for (const [node, count] of [...countOn].sort((a, b) => a[0] - b[0])) {
      if (usable[node] && count > bestCount) {
        best = node;
        bestCount = count;
      }
    }
    home[u] = best;
  }

  // negative affinity between units; fixed partners exclude their node
  const negSets = new Map<number, Set<number>>();
  const partners = (u: number): Set<number> => {
    let set = negSets.get(u);
    if (!set) negSets.set(u, (set = new Set()));
    return set;
  };
  const negativeRules: { id: string; units: number[]; fixedNodes: number[] }[] = [];
  for (const rule of input.rules) {
    if (rule.type !== 'resource-affinity' || rule.affinity !== 'negative') continue;
    const members = ruledMembers(rule, guestIndex, ruled, guests, notes);
    const ruleUnits = new Set<number>();
    const fixedNodes: number[] = [];
    for (let a = 0; a < members.length; a++) {
      const ma = members[a]!;
      const ua = guestUnit[ma]!;
      if (ua >= 0) ruleUnits.add(ua);
      else if (fixedUnitNode.has(ma)) fixedNodes.push(fixedUnitNode.get(ma)!);
      for (let b = a + 1; b < members.length; b++) {
        const mb = members[b]!;
        const ub = guestUnit[mb]!;
        const ida = guests[ma]!.id;
        const idb = guests[mb]!.id;
        if (ua >= 0 && ua === ub) {
          reasons.push(
            `positive affinity '${positiveRuleOf.get(ma)}' keeps ${ida} and ${idb} together, negative affinity '${rule.id}' keeps them apart`,
          );
          continue;
        }
        const fa = fixedUnitNode.get(ma);
        const fb = fixedUnitNode.get(mb);
        if (fa !== undefined && fb !== undefined) {
          if (fa === fb)
            reasons.push(
              `negative affinity '${rule.id}': ${ida} and ${idb} are both on ${nodeNames[fa]} and neither can move`,
            );
          continue;
        }
        if (fa !== undefined && ub >= 0) excludeNode(ub, fa);
        else if (fb !== undefined && ua >= 0) excludeNode(ua, fb);
        else if (ua >= 0 && ub >= 0) {
          partners(ua).add(ub);
          partners(ub).add(ua);
        }
      }
    }
    if (members.length > 1)
      negativeRules.push({
        id: rule.id,
        units: [...ruleUnits].sort((a, b) => a - b),
        fixedNodes: [...new Set(fixedNodes)],
      });
  }
  function excludeNode(u: number, node: number): void {
    if (!allowedFlat[u * N + node]) return;
    allowedFlat[u * N + node] = 0;
    allowedList[u] = allowedList[u]!.filter((n) => n !== node);
  }
  for (let u = 0; u < U; u++) {
    if (allowedList[u]!.length === 0 && !reasons.some((r) => r.includes(units[u]!.ids[0]!))) {
      reasons.push(
        `${units[u]!.ids.join(' + ')} has no node left: every node its rules allow holds a negative-affinity partner that cannot move`,
      );
    }
  }

  // what the current placement breaks
  for (let u = 0; u < U; u++) {
    const unit = units[u]!;
    if (unit.guests.length === 1) {
      const node = guestNode[unit.guests[0]!]!;
      if (usable[node] && allowedFlat[u * N + node]) continue;
    }
    const nodes = new Set(unit.guests.map((m) => guestNode[m]!));
    for (const node of nodes) {
      if (!online(node))
        violations.push(
          `${listText(unit.guests.filter((m) => guestNode[m] === node).map((m) => guests[m]!.id))} on offline ${nodeNames[node]} must be recovered`,
        );
      else if (!usable[node])
        violations.push(
          `${listText(unit.guests.filter((m) => guestNode[m] === node).map((m) => guests[m]!.id))} must leave ${nodeNames[node]} (${why(node)})`,
        );
      else if (!allowedFlat[u * N + node])
        violations.push(
          `${listText(unit.guests.filter((m) => guestNode[m] === node).map((m) => guests[m]!.id))} on ${nodeNames[node]} breaks its rules`,
        );
    }
    if (nodes.size > 1 && unit.guests.length > 1) violations.push(`${listText(unit.ids)} are not on one node`);
  }
  const none = new Int32Array(0);
  const negatives: Int32Array[] = new Array<Int32Array>(U).fill(none);
  for (const [u, set] of negSets) negatives[u] = Int32Array.from([...set].sort((a, b) => a - b));
  for (let u = 0; u < U; u++) {
    for (const v of negatives[u]!) {
      if (v <= u) continue;
      if (home[u]! >= 0 && home[u] === home[v])
        violations.push(
          `${units[u]!.ids[0]} and ${units[v]!.ids[0]} share ${nodeNames[home[u]!]} against a negative affinity`,
        );
    }
  }
  return {
    input,
    nodeNames,
    nodeIndex,
    usable,
    capCpu,
    capMem,
    limCores,
    limMem,
    fixCpu,
    fixMem,
    fixCores,
    units,
    unitCpu,
    unitMem,
    unitCores,
    allowedList,
    allowed: allowedFlat,
    negatives,
    fullCost,
    stays,
    unitMoves,
    unitBytes,
    home,
    guestUnit,
    guestCounted,
    reasons,
    notes,
    violations,
    negativeRules,
  };
}

/** The members of a rule the rules apply to (not ignored, counted); a note for each one skipped. */
function ruledMembers(
  rule: CheckedRule,
  guestIndex: ReadonlyMap<string, number>,
  ruled: Uint8Array,
  guests: CheckedInput['guests'],
  notes: string[],
): number[] {
  const out: number[] = [];
  for (const sid of rule.resources) {
    const i = guestIndex.get(sid)!;
    if (ruled[i]) out.push(i);
    else if (guests[i]!.ignored) notes.push(`rule '${rule.id}' does not apply to ${sid}: HA ignores it`);
  }
  return out;
}

/**
 * The usable nodes a node-affinity rule lets its resources run on, as HA places them: the
 * listed usable nodes of the highest priority; for a non-strict rule without a usable listed
 * node, every usable node.
 */
function affinityNodes(
  rule: Extract<CheckedRule, { type: 'node-affinity' }>,
  nodeIndex: ReadonlyMap<string, number>,
  usable: Uint8Array,
): Set<number> {
  let top = -Infinity;
  for (const [node, priority] of rule.nodes) if (usable[nodeIndex.get(node)!]) top = Math.max(top, priority);
  const out = new Set<number>();
  if (top === -Infinity) {
    if (!rule.strict) for (let n = 0; n < usable.length; n++) if (usable[n]) out.add(n);
    return out;
  }
  for (const [node, priority] of rule.nodes)
    if (priority === top && usable[nodeIndex.get(node)!]) out.add(nodeIndex.get(node)!);
  return out;
}

/**
 * When a guest on a drained node has no usable node because a strict node-affinity rule allows
 * only drained or unusable nodes: `node1 cannot be drained: vm:101 may run only on node1
 * (strict node affinity 'pin')`; otherwise undefined.
 */
function drainedPinReason(
  guest: { readonly id: string; readonly node: string },
  affinity: { rule: string; strict: boolean } | undefined,
  rules: readonly CheckedRule[],
  drained: ReadonlySet<string>,
): string | undefined {
  if (affinity === undefined || !affinity.strict || !drained.has(guest.node)) return undefined;
  const names = new Set(affinity.rule.split("' and '"));
  const listed = new Set<string>();
  for (const r of rules)
    if (r.type === 'node-affinity' && r.strict && names.has(r.id)) for (const n of r.nodes.keys()) listed.add(n);
  return `${guest.node} cannot be drained: ${guest.id} may run only on ${listText(sortNames(listed))} (strict node affinity '${affinity.rule}')`;
}

function noNodeReason(
  label: string,
  members: readonly number[],
  affinity: ReadonlyMap<number, { rule: string; nodes: Set<number>; strict: boolean }>,
  usableCount: number,
  nodeNames: readonly string[],
  why: (node: number) => string,
  N: number,
): string {
  if (usableCount === 0) {
    const states = Array.from({ length: N }, (_, n) => `${nodeNames[n]} ${why(n)}`);
    return `no node can take guests (${listText(states)}), and ${label} must be placed`;
  }
  const rules = [...new Set(members.map((m) => affinity.get(m)?.rule).filter((r): r is string => r !== undefined))];
  return `${label} has no usable node: node affinity '${rules.join("' and '")}' allows none of the usable nodes`;
}

/** Cost of unit `u` on node `n` (objective units): its members that are not on `n` now migrate. */
export function costAt(p: Problem, u: number, n: number): number {
  let c = p.fullCost[u]!;
  const stays = p.stays[u]!;
  for (let k = 0; k < stays.length; k++) if (stays[k]![0] === n) c -= stays[k]![1];
  return c;
}

/** Sorted copy of names (byte order). */
export function sortNames(names: Iterable<string>): string[] {
  return [...names].sort(compareNames);
}
