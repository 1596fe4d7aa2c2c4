/**
 * Test support (not exported): random small clusters and the exact MILP of the planner's
 * objective, written from the definitions in `types.ts` (not from the planner's index form),
 * solved by HiGHS compiled to WebAssembly (`highs`, a dev dependency).
 */
import { createRequire } from 'node:module';
import { mulberry32 } from '@poise/test-support/prng';
import { constructAssignment } from '../construct';
import { countingReasons } from '../diagnose';
import { type Problem, buildProblem } from '../model';
import { SearchState } from '../state';
import type { PlanGuest, PlanInput, PlanNode, PlanRule } from '../types';
import { type CheckedInput, validatePlanInput } from '../validate';

const GIB = 1024 ** 3;

/** The part of the loaded solver the oracle uses (one per process; every model is a fresh native instance). */
export interface Highs {
  readonly constants: { readonly modelStatus: { readonly optimal: number; readonly infeasible: number } };
  withModel<R>(source: { format: 'lp'; data: string }, use: (model: HighsModel) => R): R;
}

/** A HiGHS model (the persistent API of `highs`). */
interface HighsModel {
  readonly options: { set(options: Record<string, unknown>): unknown };
  readonly info: { get(name: string): unknown };
  run(): unknown;
  getModelStatus(): number;
  getObjectiveValue(): number;
  getSolution(): { readonly colValue: Float64Array };
  getColByName(name: string): number;
}

/**
 * Branch-and-bound nodes HiGHS may process per question by default (`mip_max_nodes`): a limit
 * on work, not on time, so that a verdict never depends on the machine's speed or load (HiGHS
 * in WebAssembly runs single-threaded and is deterministic).
 */
export const MILP_MAX_NODES = 2000;
/** HiGHS's `primal_solution_status` of a feasible solution. */
const FEASIBLE_SOLUTION = 2;

let loaded: Promise<Highs> | undefined;
export function loadHighs(): Promise<Highs> {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    const loader = require('highs') as (options?: unknown) => Promise<Highs>;
    loaded = loader();
  }
  return loaded;
}

/** Shape of a random instance. */
export interface RandomOptions {
  readonly maxNodes: number;
  readonly maxGuests: number;
}

/**
 * A random cluster of up to `maxNodes` nodes and `maxGuests` guests: mixed node sizes, guests
 * piled unevenly, some guests not migratable, ignored or not HA, nodes in maintenance or
 * offline, capacity limits that are sometimes tight, and node-affinity (strict, non-strict,
 * priorities), positive and negative resource-affinity rules.
 */
export function randomInstance(seed: number, options: RandomOptions): { input: PlanInput; drain: string[] } {
  const rnd = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const nodeCount = int(2, options.maxNodes);
  const nodes: PlanNode[] = [];
  // at most one node out of service, and only in clusters of three or more
  const out = nodeCount >= 3 && rnd() < 0.3 ? int(1, nodeCount) : 0;
  for (let i = 1; i <= nodeCount; i++) {
    const r = i === out ? rnd() : 0.5;
    nodes.push({
      name: `node${i}`,
      cpuCores: pick([8, 16, 16, 24, 32]),
      memBytes: pick([32, 64, 64, 96, 128]) * GIB,
      ...(r < 0.6 ? {} : r < 0.85 ? { maintenance: true } : { online: false }),
      ...(rnd() < 0.3 ? { baseCpu: int(0, 10) / 10, baseMem: int(0, 4) * GIB } : {}),
    });
  }
  // mostly small instances, a third up to the largest size
  const guestCount = rnd() < 0.67 ? int(3, Math.min(15, options.maxGuests)) : int(3, options.maxGuests);
  // fill: guests' memory sum as a share of the cluster's memory, from roomy to over-full
  const totalMem = nodes.reduce((s, n) => s + n.memBytes, 0);
  const fill = 0.25 + rnd() * 0.65;
  const meanMem = (fill * totalMem) / guestCount;
  const weights = nodes.map(() => 0.2 + rnd() * 2);
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const guests: PlanGuest[] = [];
  for (let i = 0; i < guestCount; i++) {
    let x = rnd() * weightSum;
    let node = 0;
    while (x > weights[node]! && node < nodeCount - 1) x -= weights[node++]!;
    const mem = Math.max(0.5, Math.round(((meanMem * (0.2 + rnd() * 1.6)) / GIB) * 2) / 2) * GIB;
    const cpu = Math.round((0.1 + rnd() * 6) * 10) / 10;
    const kind = rnd() < 0.7 ? 'vm' : 'ct';
    const r = rnd();
    guests.push({
      id: `${kind}:${100 + i}`,
      kind,
      node: nodes[node]!.name,
      cpu,
      ...(rnd() < 0.5 ? { cores: Math.max(1, Math.ceil(cpu + rnd() * 3)) } : {}),
      mem,
      ...(rnd() < 0.15 ? { memhost: mem + int(1, 4) * 256 * 1024 * 1024 } : {}),
      ha: rnd() < 0.85,
      ...(r < 0.07 ? { migratable: false, reason: 'has a local disk' } : {}),
      ...(r > 0.96 ? { ignored: true } : {}),
    });
  }
  const rules: PlanRule[] = [];
  const ids = guests.map((g) => g.id);
  const ruleCount = int(0, 4);
  for (let k = 0; k < ruleCount; k++) {
    const t = rnd();
    const members = [...new Set(Array.from({ length: int(2, Math.min(4, ids.length)) }, () => pick(ids)))];
    if (t < 0.35) {
      const listed = [...new Set(Array.from({ length: int(1, Math.min(3, nodeCount)) }, () => pick(nodes).name))];
      rules.push({
        id: `na-${k}`,
        type: 'node-affinity',
        resources: members.slice(0, int(1, members.length)),
        nodes: listed.map((node) => ({ node, priority: rnd() < 0.4 ? int(0, 2) : 0 })),
        strict: rnd() < 0.5,
      });
    } else if (t < 0.6) {
      rules.push({ id: `pos-${k}`, type: 'resource-affinity', affinity: 'positive', resources: members.slice(0, 2) });
    } else if (members.length >= 2) {
      rules.push({
        id: `neg-${k}`,
        type: 'resource-affinity',
        affinity: 'negative',
        resources: members.slice(0, Math.max(2, nodeCount - 1)),
      });
    }
  }
  const r = rnd();
  const capacity = {
    ...(r < 0.4 ? { cpuOvercommitRatio: pick([1.5, 2, 4]) } : {}),
    ...(rnd() < 0.4 ? { memoryHeadroomPercent: pick([5, 10, 20]) } : {}),
  };
  const drain = nodeCount >= 3 && out === 0 && rnd() < 0.1 ? [pick(nodes).name] : [];
  const weightsIn =
    rnd() < 0.25
      ? {
          cpu: pick([0, 0.5, 1, 2]),
          mem: pick([0.5, 1, 2]),
          move: pick([0, 0.001, 0.01]),
          gib: pick([0, 0.0001, 0.001]),
        }
      : undefined;
  return { input: { nodes, guests, rules, capacity, ...(weightsIn ? { weights: weightsIn } : {}) }, drain };
}

/**
 * {@link randomInstance} as a search starts on it: the problem, the constructed start and a
 * search state there; undefined when the instance is infeasible on its face or no start is found.
 */
export function randomStart(
  seed: number,
  options: RandomOptions,
): { p: Problem; start: Int32Array; st: SearchState } | undefined {
  const { input, drain } = randomInstance(seed, options);
  const p = buildProblem(validatePlanInput(input), { drain });
  if (p.reasons.length > 0 || countingReasons(p).length > 0) return undefined;
  const start = constructAssignment(p);
  return start ? { p, start, st: new SearchState(p, start) } : undefined;
}

/** What to ask the MILP. */
export interface MilpQuery {
  /** Feasibility only (objective 0). */
  readonly feasibilityOnly?: boolean;
  /** Only solutions with an objective below this count (HiGHS `objective_bound`): `infeasible` proves there is none. */
  readonly below?: number;
  /** Only solutions with at most this many migrations. */
  readonly maxMoves?: number;
  /** Every guest fixed where this placement puts it (checks a placement and evaluates its objective independently). */
  readonly fixed?: ReadonlyMap<string, string>;
  /** Branch-and-bound nodes at most (default {@link MILP_MAX_NODES}); `Infinity` for none. */
  readonly maxNodes?: number;
  /**
   * Stop at the first solution found (the question is whether one exists, e.g. with `below`):
   * the answer is then `solution`, not `optimal`.
   */
  readonly anySolution?: boolean;
}

/**
 * The MILP's answer: `optimal` (proven), `solution` (a feasible one, when `anySolution` asked
 * for no more), `infeasible` (proven), or `unknown` (the node limit ran out first).
 */
export type MilpResult =
  | { readonly status: 'infeasible' }
  | { readonly status: 'unknown' }
  | {
      readonly status: 'optimal' | 'solution';
      readonly value: number;
      readonly moves: number;
      readonly placement: Map<string, string>;
    };

/**
 * The planner's objective and hard constraints as a MILP, from the definitions (`types.ts`):
 * x[g][n] = 1 when guest g ends on node n; positive affinity ties members' x; negative affinity
 * allows one member per node; node affinity, usable nodes, guests that cannot move or are
 * ignored, capacity; the objective is weights.cpu · Uc + weights.mem · Um + Σ cost(g) · moved(g)
 * with Uc, Um ≥ each usable node's utilisation.
 */
export function solveMilp(highs: Highs, raw: PlanInput, drain: readonly string[], query: MilpQuery = {}): MilpResult {
  const input: CheckedInput = validatePlanInput(raw);
  const nodes = input.nodes;
  const N = nodes.length;
  const idx = new Map(nodes.map((n, i) => [n.name, i]));
  const usable = nodes.map((n) => n.online && !n.maintenance && !drain.includes(n.name));
  const w = input.weights;
  const guests = input.guests;
  const on = guests.map((g) => idx.get(g.node)!);
  // guests the rules and the objective see: not ignored, and online or HA (to be recovered)
  const counted = guests.map((g, i) => !g.ignored && (nodes[on[i]!]!.online || g.ha));
  const fixedCpu = nodes.map((n) => (n.online ? n.baseCpu : 0));
  const fixedMem = nodes.map((n) => (n.online ? n.baseMem : 0));
  const fixedCores = nodes.map(() => 0);
  // a drain must empty its node, and HA leaves an ignored guest where it is
  if (guests.some((g, i) => g.ignored && nodes[on[i]!]!.online && drain.includes(nodes[on[i]!]!.name)))
    return { status: 'infeasible' };
  guests.forEach((g, i) => {
    if (g.ignored && nodes[on[i]!]!.online) {
      fixedCpu[on[i]!]! += g.cpu;
      fixedMem[on[i]!]! += g.mem;
      fixedCores[on[i]!]! += g.cores;
    }
  });
  // positive partners (transitive through the constraints themselves)
  const positivePartner: Set<number>[] = guests.map(() => new Set());
  const gi = new Map(guests.map((g, i) => [g.id, i]));
  for (const rule of input.rules) {
    if (rule.type === 'resource-affinity' && rule.affinity === 'positive') {
      const ms = rule.resources.map((s) => gi.get(s)!).filter((m) => counted[m]);
      for (const a of ms) for (const b of ms) if (a !== b) positivePartner[a]!.add(b);
    }
  }
  // allowed nodes per guest
  const allowed: Set<number>[] = guests.map((g, i) => {
    if (!counted[i]) return new Set();
    if (!g.migratable) {
      const n = on[i]!;
      return nodes[n]!.online && !drain.includes(nodes[n]!.name) ? new Set([n]) : new Set();
    }
    let set = new Set<number>();
    for (let n = 0; n < N; n++) if (usable[n]) set.add(n);
    for (const rule of input.rules) {
      if (rule.type !== 'node-affinity' || !rule.resources.includes(g.id)) continue;
      let top = -Infinity;
      for (const [node, pr] of rule.nodes) if (usable[idx.get(node)!]) top = Math.max(top, pr);
      const ok = new Set<number>();
      if (top === -Infinity) {
        if (!rule.strict) for (let n = 0; n < N; n++) if (usable[n]) ok.add(n);
      } else for (const [node, pr] of rule.nodes) if (pr === top && usable[idx.get(node)!]) ok.add(idx.get(node)!);
      set = new Set([...set].filter((n) => ok.has(n)));
    }
    // a movable guest whose positive group has a member that cannot move, all on its node, stays with it
    const n = on[i]!;
    const group = groupOf(i);
    const pinnedHere = group.some((m) => !guests[m]!.migratable && on[m] === n);
    if (pinnedHere && group.every((m) => on[m] === n)) set.add(n);
    return set;
  });
  function groupOf(i: number): number[] {
    const seen = new Set([i]);
    const stack = [i];
    while (stack.length)
      for (const b of positivePartner[stack.pop()!]!) {
        if (seen.has(b)) continue;
        seen.add(b);
        stack.push(b);
      }
    return [...seen];
  }
  const x = (g: number, n: number) => `x_${g}_${n}`;
  const cap = input.cpuOvercommitRatio;
  const limMem = nodes.map((n) => (1 - input.memoryHeadroomPercent / 100) * n.memBytes);
  const obj: string[] = [];
  const rows: string[] = [];
  const bins: string[] = [];
  let constant = 0;
  const term = (coef: number, v: string) => `${coef >= 0 ? '+' : '-'} ${Math.abs(coef)} ${v}`;
  if (w.cpu > 0) obj.push(term(w.cpu, 'uc'));
  if (w.mem > 0) obj.push(term(w.mem, 'um'));
  const stayVars: string[] = [];
  let countedGuests = 0;
  guests.forEach((g, i) => {
    if (!counted[i]) return;
    const recover = !nodes[on[i]!]!.online;
    const cost = w.move + (recover ? 0 : (w.gib * g.mem) / GIB);
    constant += cost;
    countedGuests++;
    if (allowed[i]!.has(on[i]!)) stayVars.push(x(i, on[i]!));
    if (allowed[i]!.has(on[i]!) && cost > 0) obj.push(term(-cost, x(i, on[i]!)));
    const fixedTo = query.fixed?.get(g.id);
    if (fixedTo !== undefined) {
      const n = idx.get(fixedTo)!;
      rows.push(`fix_${i}: ${allowed[i]!.has(n) ? `+ ${x(i, n)}` : '0 uc'} = 1`);
    }
    const vars = [...allowed[i]!].map((n) => x(i, n));
    for (const v of vars) bins.push(v);
    rows.push(`assign_${i}: ${vars.length ? vars.map((v) => `+ ${v}`).join(' ') : '0 uc'} = 1`);
  });
  for (let a = 0; a < guests.length; a++) {
    for (const b of positivePartner[a]!) {
      if (b <= a) continue;
      for (let n = 0; n < N; n++) {
        const ha = allowed[a]!.has(n);
        const hb = allowed[b]!.has(n);
        if (ha && hb) rows.push(`pos_${a}_${b}_${n}: + ${x(a, n)} - ${x(b, n)} = 0`);
        else if (ha) rows.push(`pos_${a}_${b}_${n}: + ${x(a, n)} = 0`);
        else if (hb) rows.push(`pos_${a}_${b}_${n}: + ${x(b, n)} = 0`);
      }
    }
  }
  input.rules.forEach((rule, r) => {
    if (rule.type !== 'resource-affinity' || rule.affinity !== 'negative') return;
    const ms = rule.resources.map((s) => gi.get(s)!).filter((m) => counted[m]);
    for (let n = 0; n < N; n++) {
      const vars = ms.filter((m) => allowed[m]!.has(n)).map((m) => x(m, n));
      if (vars.length > 1) rows.push(`neg_${r}_${n}: ${vars.map((v) => `+ ${v}`).join(' ')} <= 1`);
    }
  });
  for (let n = 0; n < N; n++) {
    if (!usable[n]) continue;
    const here = guests.map((g, i) => [g, i] as const).filter(([, i]) => allowed[i]!.has(n));
    const cpuTerms = here.map(([g, i]) => term(g.cpu / nodes[n]!.cpuCores, x(i, n))).join(' ');
    const memTerms = here.map(([g, i]) => term(g.mem / nodes[n]!.memBytes, x(i, n))).join(' ');
    rows.push(`ucpu_${n}: ${cpuTerms} - 1 uc <= ${-fixedCpu[n]! / nodes[n]!.cpuCores}`);
    rows.push(`umem_${n}: ${memTerms} - 1 um <= ${-fixedMem[n]! / nodes[n]!.memBytes}`);
    if (here.length > 0) {
      rows.push(
        `lmem_${n}: ${here.map(([g, i]) => term(g.mem / GIB, x(i, n))).join(' ')} <= ${(limMem[n]! - fixedMem[n]!) / GIB}`,
      );
      if (cap !== undefined)
        rows.push(
          `lcor_${n}: ${here.map(([g, i]) => term(g.cores, x(i, n))).join(' ')} <= ${cap * nodes[n]!.cpuCores - fixedCores[n]!}`,
        );
    } else if (fixedMem[n]! > limMem[n]! || (cap !== undefined && fixedCores[n]! > cap * nodes[n]!.cpuCores)) {
      rows.push(`over_${n}: 0 uc >= 1`);
    }
  }
  if (query.maxMoves !== undefined) {
    // moved guests = counted − stays ≤ maxMoves
    rows.push(
      `moves: ${stayVars.length ? stayVars.map((v) => `+ ${v}`).join(' ') : '0 uc'} >= ${countedGuests - query.maxMoves}`,
    );
  }
  if (query.below !== undefined && obj.length > 0) rows.push(`cut: ${obj.join(' ')} <= ${query.below - constant}`);
  else if (query.below !== undefined && query.below - constant < 0) rows.push('cut: 0 uc >= 1');
  if (query.feasibilityOnly) {
    obj.length = 0;
    constant = 0;
  }
  const lp = [
    'Minimize',
    ` obj: ${obj.length ? obj.join(' ') : '0 uc'}`,
    'Subject To',
    ...rows.map((r) => ` ${r}`),
    'Bounds',
    ' uc >= 0',
    ' um >= 0',
    'Binary',
    ...bins.map((b) => ` ${b}`),
    'End',
  ].join('\n');
  const options: Record<string, unknown> = {
    mip_rel_gap: 1e-6,
    mip_abs_gap: 1e-9,
    primal_feasibility_tolerance: 1e-9,
    mip_feasibility_tolerance: 1e-9,
    output_flag: false,
    ...(query.maxNodes === Infinity ? {} : { mip_max_nodes: query.maxNodes ?? MILP_MAX_NODES }),
    ...(query.anySolution ? { mip_max_improving_sols: 1 } : {}),
  };
  return highs.withModel({ format: 'lp', data: lp }, (model) => {
    model.options.set(options);
    model.run();
    const status = model.getModelStatus();
    const codes = highs.constants.modelStatus;
    if (status === codes.infeasible) return { status: 'infeasible' } as const;
    const columns = model.getSolution().colValue;
    const value = (name: string) => {
      const col = model.getColByName(name);
      return col >= 0 ? columns[col]! : 0;
    };
    // otherwise stopped by a limit: at the first solution when any was asked for, else undecided
    const feasibleSolution = model.info.get('primal_solution_status') === FEASIBLE_SOLUTION;
    const found = status === codes.optimal ? 'optimal' : query.anySolution && feasibleSolution ? 'solution' : undefined;
    if (found === undefined) return { status: 'unknown' } as const;
    const placement = new Map<string, string>();
    let moves = 0;
    guests.forEach((g, i) => {
      if (!counted[i]) return;
      for (const n of allowed[i]!) {
        if (value(x(i, n)) > 0.5) {
          placement.set(g.id, nodes[n]!.name);
          if (n !== on[i]) moves++;
        }
      }
    });
    return { status: found, value: model.getObjectiveValue() + constant, moves, placement };
  });
}
