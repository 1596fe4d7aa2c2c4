import { type CheckedInput, type CheckedRule } from './validate';
import { sortNames } from '@poise/usage';

/** Bytes per GiB. */
export const GIB = 1024 ** 3;

/**
 * A set of guests placed as one: a guest, or a connected group of positive resource affinity
 * (they share a node and move together, as HA moves them).
 */
interface Unit {
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

/**
 * Builds the index form of a validated input (see {@link Problem}), in named steps:
 *
 * 1. {@link nodeTables}: capacities, limits, base load, and which nodes take guests;
 * 2. {@link guestTables}: which guests count and which the rules apply to;
 * 3. {@link positiveGroups} and {@link nodeAffinities}: the guests placed as one, the nodes each
 *    may run on;
 * 4. {@link formUnits}: the movable units (a group that cannot move is folded into its node's
 *    fixed load);
 * 5. {@link unitTables}: each unit's size, migration cost and current node;
 * 6. {@link negativeAffinities}: units kept apart, nodes a fixed partner excludes;
 * 7. {@link currentViolations}: what the current placement breaks.
 *
 * The steps add to `reasons`, `notes` and `violations` in this order.
 */
export function buildProblem(input: CheckedInput, options: ProblemOptions = {}): Problem {
  const reasons: string[] = [];
  const notes: string[] = [];
  const nodes = nodeTables(input, new Set(options.drain ?? []));
  const guests = guestTables(input, nodes, notes);
  const positive = positiveGroups(input, guests, notes);
  const affinity = nodeAffinities(input, nodes, guests, notes);
  const formed = formUnits(input.rules, nodes, guests, positive, affinity, reasons, notes);
  const tables = unitTables(input, nodes, guests, formed);
  const negative = negativeAffinities(input, nodes, guests, formed, tables, positive.ruleOf, reasons, notes);
  const violations = currentViolations(nodes, guests, formed.units, tables, negative.negatives);
  return {
    input,
    nodeNames: nodes.nodeNames,
    nodeIndex: nodes.nodeIndex,
    usable: nodes.usable,
    capCpu: nodes.capCpu,
    capMem: nodes.capMem,
    limCores: nodes.limCores,
    limMem: nodes.limMem,
    fixCpu: nodes.fixCpu,
    fixMem: nodes.fixMem,
    fixCores: nodes.fixCores,
    units: formed.units,
    unitCpu: tables.unitCpu,
    unitMem: tables.unitMem,
    unitCores: tables.unitCores,
    allowedList: tables.allowedList,
    allowed: tables.allowedFlat,
    negatives: negative.negatives,
    fullCost: tables.fullCost,
    stays: tables.stays,
    unitMoves: tables.unitMoves,
    unitBytes: tables.unitBytes,
    home: tables.home,
    guestUnit: formed.guestUnit,
    guestCounted: guests.guestCounted,
    reasons,
    notes,
    violations,
    negativeRules: negative.negativeRules,
  };
}

/** The node side of a problem being built (see {@link nodeTables}); the fixed loads grow while units form. */
interface NodeTables {
  readonly N: number;
  readonly nodeNames: readonly string[];
  readonly nodeIndex: ReadonlyMap<string, number>;
  readonly drained: ReadonlySet<string>;
  readonly usable: Uint8Array;
  readonly capCpu: Float64Array;
  readonly capMem: Float64Array;
  readonly limCores: Float64Array;
  readonly limMem: Float64Array;
  readonly fixCpu: Float64Array;
  readonly fixMem: Float64Array;
  readonly fixCores: Float64Array;
  /** The usable nodes, ascending. */
  readonly usableList: readonly number[];
  readonly usableCount: number;
  online(node: number): boolean;
  /** Why a node takes guests or not: `offline`, `in maintenance`, `being drained` or `usable`. */
  why(node: number): string;
}

/** Step 1: per node, capacities and limits, the base load of an online node, and whether it takes guests. */
function nodeTables(input: CheckedInput, drained: ReadonlySet<string>): NodeTables {
  const N = input.nodes.length;
  const nodeNames = input.nodes.map((n) => n.name);
  const nodeIndex = new Map(nodeNames.map((n, i) => [n, i]));
  const usable = new Uint8Array(N);
  const capCpu = new Float64Array(N);
  const capMem = new Float64Array(N);
  const limCores = new Float64Array(N);
  const limMem = new Float64Array(N);
  const fixCpu = new Float64Array(N);
  const fixMem = new Float64Array(N);
  const fixCores = new Float64Array(N);
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
  const usableList: number[] = [];
  for (let n = 0; n < N; n++) if (usable[n]) usableList.push(n);
  return {
    N,
    nodeNames,
    nodeIndex,
    drained,
    usable,
    capCpu,
    capMem,
    limCores,
    limMem,
    fixCpu,
    fixMem,
    fixCores,
    usableList,
    usableCount: usable.reduce((a, b) => a + b, 0),
    online: (node) => input.nodes[node]!.online,
    why: (node) => {
      const n = input.nodes[node]!;
      if (!n.online) return 'offline';
      if (n.maintenance) return 'in maintenance';
      return drained.has(n.name) ? 'being drained' : 'usable';
    },
  };
}

/** The guest side of a problem being built (see {@link guestTables}). */
interface GuestTables {
  readonly guests: CheckedInput['guests'];
  readonly G: number;
  readonly guestIndex: ReadonlyMap<string, number>;
  /** Per guest: the index of its node. */
  readonly guestNode: Int32Array;
  /** Per guest: counted at all (online, or an HA resource on an offline node, to be recovered). */
  readonly guestCounted: Uint8Array;
  /** Per guest: the rules apply to it (counted and not ignored). */
  readonly ruled: Uint8Array;
}

/** Step 2: which guests count and which the rules apply to; a note for each guest left out. */
function guestTables(input: CheckedInput, nodes: NodeTables, notes: string[]): GuestTables {
  const guests = input.guests;
  const G = guests.length;
  const guestIndex = new Map(guests.map((g, i) => [g.id, i]));
  const guestNode = Int32Array.from(guests, (g) => nodes.nodeIndex.get(g.node)!);
  const guestCounted = new Uint8Array(G);
  const ruled = new Uint8Array(G);
  for (let i = 0; i < G; i++) {
    const g = guests[i]!;
    const on = nodes.online(guestNode[i]!);
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
  return { guests, G, guestIndex, guestNode, guestCounted, ruled };
}

/** The guests placed as one (see {@link positiveGroups}). */
interface PositiveGroups {
  /** Every ruled guest's group (a guest alone is a group of one), members ascending, by first member. */
  readonly groups: readonly (readonly number[])[];
  /** Per guest in a positive rule: the rule's id. */
  readonly ruleOf: ReadonlyMap<number, string>;
}

/** Step 3a: the connected groups of positive resource affinity among the ruled guests. */
function positiveGroups(input: CheckedInput, guests: GuestTables, notes: string[]): PositiveGroups {
  const uf = unionFind(guests.G);
  const ruleOf = new Map<number, string>();
  for (const rule of input.rules) {
    if (rule.type !== 'resource-affinity' || rule.affinity !== 'positive') continue;
    const members = ruledMembers(rule, guests, notes);
    for (let k = 1; k < members.length; k++) uf.union(members[0]!, members[k]!);
    for (const m of members) ruleOf.set(m, rule.id);
  }
  const groups = new Map<number, number[]>();
  for (let i = 0; i < guests.G; i++) {
    if (!guests.ruled[i]) continue;
    const root = uf.find(i);
    const list = groups.get(root);
    if (list) list.push(i);
    else groups.set(root, [i]);
  }
  return { groups: [...groups.values()].sort((a, b) => a[0]! - b[0]!), ruleOf };
}

/** Per guest with node affinity: the rule(s), the usable nodes they allow, whether any is strict. */
type NodeAffinities = ReadonlyMap<number, { rule: string; nodes: Set<number>; strict: boolean }>;

/** Step 3b: node affinity per guest: the allowed usable nodes (HA's highest priority among usable). */
function nodeAffinities(input: CheckedInput, nodes: NodeTables, guests: GuestTables, notes: string[]): NodeAffinities {
  const affinity = new Map<number, { rule: string; nodes: Set<number>; strict: boolean }>();
  for (const rule of input.rules) {
    if (rule.type !== 'node-affinity') continue;
    const pri = affinityNodes(rule, nodes.nodeIndex, nodes.usable);
    for (const m of ruledMembers(rule, guests, notes)) {
      const had = affinity.get(m);
      if (had) {
        const both = new Set([...had.nodes].filter((n) => pri.has(n)));
        affinity.set(m, { rule: `${had.rule}' and '${rule.id}`, nodes: both, strict: had.strict || rule.strict });
      } else affinity.set(m, { rule: rule.id, nodes: pri, strict: rule.strict });
    }
  }
  return affinity;
}

/** The movable units (see {@link formUnits}). */
interface FormedUnits {
  readonly units: readonly Unit[];
  /** Per unit: the usable nodes it may be placed on, ascending (`NodeTables.usableList` itself when every one). */
  readonly unitAllowed: readonly (readonly number[])[];
  /** Per guest: its unit, or −1. */
  readonly guestUnit: Int32Array;
  /** Per guest of a group that cannot move: the node it stays on. */
  readonly fixedUnitNode: ReadonlyMap<number, number>;
}

/**
 * Step 4: the movable units, one per group that can move and has a node to go to. The load of
 * an ignored guest, and of a group that cannot move, is added to its node's fixed load (ignored
 * guests first, then groups in order of their first member); a group that cannot be placed
 * adds a reason.
 */
function formUnits(
  rules: readonly CheckedRule[],
  nodes: NodeTables,
  guests: GuestTables,
  positive: PositiveGroups,
  affinity: NodeAffinities,
  reasons: string[],
  notes: string[],
): FormedUnits {
  const { guestNode } = guests;
  const guestUnit = new Int32Array(guests.G).fill(-1);
  const units: Unit[] = [];
  const unitAllowed: (readonly number[])[] = [];
  const fixedUnitNode = new Map<number, number>();
  const fixLoad = (gi: number, node: number) => {
    const g = guests.guests[gi]!;
    nodes.fixCpu[node]! += g.cpu;
    nodes.fixMem[node]! += g.mem;
    nodes.fixCores[node]! += g.cores;
  };
  const fixGroup = (members: readonly number[], node: number) => {
    for (const m of members) fixLoad(m, node);
    for (const m of members) fixedUnitNode.set(m, node);
  };
  for (let i = 0; i < guests.G; i++) {
    const g = guests.guests[i]!;
    if (!g.ignored || !guests.guestCounted[i]) continue;
    fixLoad(i, guestNode[i]!);
    // HA leaves an ignored guest where it is: a drain cannot empty its node
    if (nodes.drained.has(g.node))
      reasons.push(`${g.node} cannot be drained: ${g.id} is ignored by HA (state 'ignored'): it stays`);
  }

  for (const members of positive.groups) {
    const g0 = guests.guests[members[0]!]!;
    if (members.length === 1 && g0.migratable) {
      // the common case (a movable guest without positive affinity), without the group's bookkeeping
      const m = members[0]!;
      const a = affinity.get(m);
      const allowed = a ? nodes.usableList.filter((n) => a.nodes.has(n)) : nodes.usableList;
      if (allowed.length === 0) {
        reasons.push(
          drainedPinReason(g0, affinity.get(m), rules, nodes.drained) ?? noNodeReason(g0.id, members, affinity, nodes),
        );
        continue;
      }
      guestUnit[m] = units.length;
      units.push({ guests: members, ids: [g0.id] });
      unitAllowed.push(allowed);
      continue;
    }
    const ids = members.map((m) => guests.guests[m]!.id);
    const allowed = groupNodes(rules, nodes, guests, members, ids, positive, affinity, fixGroup, reasons, notes);
    if (allowed === undefined) continue;
    const u = units.length;
    units.push({ guests: members, ids });
    unitAllowed.push(allowed);
    for (const m of members) guestUnit[m] = u;
  }
  return { units, unitAllowed, guestUnit, fixedUnitNode };
}

/**
 * The nodes a group of several guests, or a guest that cannot move, may be placed on, or
 * undefined when it forms no unit: it stays where it is (`fixGroup`, and a note when that is
 * on a node it may not use) or it cannot be placed (a reason).
 */
function groupNodes(
  rules: readonly CheckedRule[],
  nodes: NodeTables,
  guests: GuestTables,
  members: readonly number[],
  ids: readonly string[],
  positive: PositiveGroups,
  affinity: NodeAffinities,
  fixGroup: (members: readonly number[], node: number) => void,
  reasons: string[],
  notes: string[],
): readonly number[] | undefined {
  const { nodeNames, usable } = nodes;
  const { guestNode } = guests;
  const guestOf = (m: number) => guests.guests[m]!;
  const label =
    members.length > 1 ? `positive affinity '${positive.ruleOf.get(members[0]!)}' (${listText(ids)})` : ids[0]!;
  const pinned = members.filter((m) => !guestOf(m).migratable);
  const pinnedNodes = [...new Set(pinned.map((m) => guestNode[m]!))];
  if (pinnedNodes.length > 1) {
    reasons.push(
      `${label} must share a node, but ${listText(pinned.map((m) => `${pinnedText(guestOf(m).id, guestOf(m).reason)} (on ${guestOf(m).node})`))}`,
    );
    return undefined;
  }
  // allowed: usable nodes in the node affinity of every member that can move (one that cannot
  // stays where it is, whatever its rules say); ascending
  let allowed: readonly number[] = nodes.usableList;
  for (const m of members) {
    const a = guestOf(m).migratable ? affinity.get(m) : undefined;
    if (a) allowed = allowed.filter((n) => a.nodes.has(n));
  }
  if (pinnedNodes.length === 1) {
    const p = pinnedNodes[0]!;
    const pg = guestOf(pinned[0]!);
    const allThere = members.every((m) => guestNode[m] === p);
    if (!nodes.online(p)) {
      reasons.push(`${pinnedText(pg.id, pg.reason)} and is on offline node ${nodeNames[p]}: it cannot be recovered`);
      return undefined;
    }
    if (nodes.drained.has(nodeNames[p]!)) {
      reasons.push(`${nodeNames[p]} cannot be drained: ${pinnedText(pg.id, pg.reason)}`);
      return undefined;
    }
    if (allThere && (!usable[p] || !allowed.includes(p))) {
      fixGroup(members, p);
      notes.push(
        !usable[p]
          ? `${label} stays on ${nodeNames[p]} (${nodes.why(p)}): ${pinnedText(pg.id, pg.reason)}`
          : `${label} stays on ${nodeNames[p]} against its node affinity: ${pinnedText(pg.id, pg.reason)}`,
      );
      return undefined;
    }
    if (!usable[p] || !allowed.includes(p)) {
      reasons.push(
        `${label} must share a node, but ${pinnedText(pg.id, pg.reason)} and stays on ${nodeNames[p]}, where the others may not go (${!usable[p] ? nodes.why(p) : 'node affinity'})`,
      );
      return undefined;
    }
    if (allThere) {
      fixGroup(members, p);
      return undefined;
    }
    allowed = [p];
  }
  if (allowed.length === 0) {
    const pin = members
      .map((m) => drainedPinReason(guestOf(m), affinity.get(m), rules, nodes.drained))
      .find((r) => r !== undefined);
    reasons.push(pin ?? noNodeReason(label, members, affinity, nodes));
    return undefined;
  }
  return allowed;
}

/** Per unit: sizes, migration costs, current node and allowed nodes (see {@link unitTables}). */
interface UnitTables {
  readonly unitCpu: Float64Array;
  readonly unitMem: Float64Array;
  readonly unitCores: Float64Array;
  readonly fullCost: Float64Array;
  readonly unitMoves: Int32Array;
  readonly unitBytes: Float64Array;
  readonly home: Int32Array;
  readonly stays: readonly (readonly (readonly [number, number])[])[];
  /** `unit * N + node`: 1 when the unit may be placed on the node (negative affinity may still clear some). */
  readonly allowedFlat: Uint8Array;
  /** Per unit: the allowed nodes, ascending (replaced, never changed in place). */
  readonly allowedList: Int32Array[];
}

/**
 * Step 5: each unit's size, what moving it costs (every member off its node migrates; a member
 * on an offline node is recovered, which copies nothing), and its home: the usable node most of
 * its members are on (the lowest index on a tie).
 */
function unitTables(input: CheckedInput, nodes: NodeTables, guests: GuestTables, formed: FormedUnits): UnitTables {
  const { N, usable, usableList } = nodes;
  const { guestNode } = guests;
  const { units, unitAllowed } = formed;
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
      const g = guests.guests[members[0]!]!;
      const node = guestNode[members[0]!]!;
      const recover = !nodes.online(node);
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
      const g = guests.guests[m]!;
      unitCpu[u]! += g.cpu;
      unitMem[u]! += g.mem;
      unitCores[u]! += g.cores;
      const node = guestNode[m]!;
      const recover = !nodes.online(node);
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
  return { unitCpu, unitMem, unitCores, fullCost, unitMoves, unitBytes, home, stays, allowedFlat, allowedList };
}

/** Negative affinity in index form (see {@link negativeAffinities}). */
interface NegativeAffinities {
  readonly negatives: readonly Int32Array[];
  readonly negativeRules: Problem['negativeRules'];
}

/**
 * Step 6: negative affinity between units; a partner that cannot move excludes its node from
 * the other's allowed nodes (`tables.allowedFlat` and `tables.allowedList` change). Adds a
 * reason for a rule that contradicts a positive one, for partners that cannot move and share
 * a node, and for a unit left without a node.
 */
function negativeAffinities(
  input: CheckedInput,
  nodes: NodeTables,
  guests: GuestTables,
  formed: FormedUnits,
  tables: UnitTables,
  positiveRuleOf: ReadonlyMap<number, string>,
  reasons: string[],
  notes: string[],
): NegativeAffinities {
  const { N, nodeNames } = nodes;
  const { guestUnit, fixedUnitNode, units } = formed;
  const { allowedFlat, allowedList } = tables;
  const U = units.length;
  const negSets = new Map<number, Set<number>>();
  const partners = (u: number): Set<number> => {
    let set = negSets.get(u);
    if (!set) negSets.set(u, (set = new Set()));
    return set;
  };
  const excludeNode = (u: number, node: number): void => {
    if (!allowedFlat[u * N + node]) return;
    allowedFlat[u * N + node] = 0;
    allowedList[u] = allowedList[u]!.filter((n) => n !== node);
  };
  const negativeRules: { id: string; units: number[]; fixedNodes: number[] }[] = [];
  for (const rule of input.rules) {
    if (rule.type !== 'resource-affinity' || rule.affinity !== 'negative') continue;
    const members = ruledMembers(rule, guests, notes);
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
        const ida = guests.guests[ma]!.id;
        const idb = guests.guests[mb]!.id;
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
  for (let u = 0; u < U; u++) {
    if (allowedList[u]!.length === 0 && !reasons.some((r) => r.includes(units[u]!.ids[0]!))) {
      reasons.push(
        `${units[u]!.ids.join(' + ')} has no node left: every node its rules allow holds a negative-affinity partner that cannot move`,
      );
    }
  }
  const none = new Int32Array(0);
  const negatives: Int32Array[] = new Array<Int32Array>(U).fill(none);
  for (const [u, set] of negSets) negatives[u] = Int32Array.from([...set].sort((a, b) => a - b));
  return { negatives, negativeRules };
}

/**
 * Step 7: what the current placement breaks: guests on a node they must leave (offline, not
 * usable, against their rules), a group split over nodes, negative-affinity partners that share
 * their home.
 */
function currentViolations(
  nodes: NodeTables,
  guests: GuestTables,
  units: readonly Unit[],
  tables: UnitTables,
  negatives: readonly Int32Array[],
): string[] {
  const { N, nodeNames, usable } = nodes;
  const { guestNode } = guests;
  const { allowedFlat, home } = tables;
  const violations: string[] = [];
  const idsOn = (unit: Unit, node: number) =>
    listText(unit.guests.filter((m) => guestNode[m] === node).map((m) => guests.guests[m]!.id));
  for (let u = 0; u < units.length; u++) {
    const unit = units[u]!;
    if (unit.guests.length === 1) {
      const node = guestNode[unit.guests[0]!]!;
      if (usable[node] && allowedFlat[u * N + node]) continue;
    }
    const unitNodes = new Set(unit.guests.map((m) => guestNode[m]!));
    for (const node of unitNodes) {
      if (!nodes.online(node)) violations.push(`${idsOn(unit, node)} on offline ${nodeNames[node]} must be recovered`);
      else if (!usable[node])
        violations.push(`${idsOn(unit, node)} must leave ${nodeNames[node]} (${nodes.why(node)})`);
      else if (!allowedFlat[u * N + node])
        violations.push(`${idsOn(unit, node)} on ${nodeNames[node]} breaks its rules`);
    }
    if (unitNodes.size > 1 && unit.guests.length > 1) violations.push(`${listText(unit.ids)} are not on one node`);
  }
  for (let u = 0; u < units.length; u++) {
    for (const v of negatives[u]!) {
      if (v <= u) continue;
      if (home[u]! >= 0 && home[u] === home[v])
        violations.push(
          `${units[u]!.ids[0]} and ${units[v]!.ids[0]} share ${nodeNames[home[u]!]} against a negative affinity`,
        );
    }
  }
  return violations;
}

/** The members of a rule the rules apply to (not ignored, counted); a note for each one skipped. */
function ruledMembers(rule: CheckedRule, guests: GuestTables, notes: string[]): number[] {
  const out: number[] = [];
  for (const sid of rule.resources) {
    const i = guests.guestIndex.get(sid)!;
    if (guests.ruled[i]) out.push(i);
    else if (guests.guests[i]!.ignored) notes.push(`rule '${rule.id}' does not apply to ${sid}: HA ignores it`);
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

/** Why a unit (`label`) has no node: no node takes guests at all, or its node affinity allows none of them. */
function noNodeReason(label: string, members: readonly number[], affinity: NodeAffinities, nodes: NodeTables): string {
  if (nodes.usableCount === 0) {
    const states = Array.from({ length: nodes.N }, (_, n) => `${nodes.nodeNames[n]} ${nodes.why(n)}`);
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
