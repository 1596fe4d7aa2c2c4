/**
 * How many moves a run needed to balance the cluster, and how many it could have needed: the
 * lab's balance metrics (greedy vs planned) and the hindsight oracle.
 *
 * - **Balanced**: the node imbalance (the trace's `rounds.imbalance`, the `pve-9.2` normalised
 *   metric of the measured loads) below {@link BALANCED_THRESHOLD} at every sample from some
 *   time to the end of the run. The run is balanced *from* the first sample of that last stretch
 *   below the line; a run whose last sample is at or above it never reached balance.
 *   **Moves to balance**: the balancer moves (resources, as `moves` counts them) issued at or
 *   before that time.
 * - **Hindsight oracle**: from the run's initial placement, with the loads and node states the
 *   run ended with, the fewest migrations that reach a placement *at least as balanced* as the
 *   one the run ended with, where "at least as balanced" is the planner's own balance measure:
 *   no usable node's cpu or memory utilisation above the highest the run ended with. `@poise/plan`
 *   expresses that exactly: the two highest utilisations become capacity limits (cpu as an
 *   overcommit ratio over cores in use, memory as a node size scaled to the limit), and the
 *   objective counts migrations only (weights cpu 0, memory 0, move 1, GiB 0). The planner is a
 *   heuristic: its answer is an upper bound on the fewest moves, its bound a lower bound; the
 *   run's own final placement is a second upper bound (the guests it left elsewhere than they
 *   started), and the oracle is the smaller of the two. The reference imbalance of the oracle's
 *   placement is reported beside the run's (the planner cannot bound that metric: it is a
 *   dispersion, not a per-node limit).
 * - **Regret**: the run's balancer moves / the oracle's moves. Conventions: both 0 → 1 (nothing
 *   needed, nothing done); oracle 0 and moves k > 0 → `null` (unbounded; `excess` = k says how
 *   far); no oracle (the placement was not recorded, or no placement meets the run's balance
 *   within the rules) → `null` with the reason. `excess` = moves − oracle is always a number
 *   when the oracle is.
 *
 * Pure: no I/O, no clock; the planner's seed is fixed.
 */
import { PlanError, planPlacement, type PlanGuest, type PlanInput, type PlanNode } from '@poise/plan';
import { normalizedImbalance } from '@poise/imbalance';
import { LabError } from './errors';
import type { PlacementGuest, PlacementNode, RunTrace, TracePlacement } from './trace';

export type { PlacementGuest, PlacementNode, TracePlacement } from './trace';

/**
 * The line below which a run counts as balanced: 30 %, the current release's default
 * `ha-auto-rebalance-threshold`, the same line for every variant (a variant's own threshold
 * would let a variant define its own success).
 */
export const BALANCED_THRESHOLD = 0.3;

/** Relative tolerance on the utilisation limits: the run's own placement must meet them despite rounding. */
const LIMIT_TOLERANCE = 1e-9;

/** When a run became balanced and the moves it took to get there. */
export interface BalanceReach {
  /** The first sample time of the last stretch below the line; null = never balanced. */
  at: number | null;
  /** Balancer moves issued at or before `at`; null = never balanced. */
  moves: number | null;
}

/** See the module comment: *balanced*, *moves to balance*. O(samples + moves). */
export function movesToBalance(
  trace: { rounds: Pick<RunTrace['rounds'], 'time' | 'imbalance'>; moves: readonly { time: number }[] },
  threshold = BALANCED_THRESHOLD,
): BalanceReach {
  if (!Number.isFinite(threshold) || threshold <= 0 || threshold > 1) {
    throw new LabError('bad-trace', `balanced threshold must be in (0, 1], got ${threshold}`);
  }
  const { time, imbalance } = trace.rounds;
  let first = -1;
  for (let r = imbalance.length - 1; r >= 0 && imbalance[r]! < threshold; r--) first = r;
  if (first < 0) return { at: null, moves: null };
  const at = time[first]!;
  return { at, moves: trace.moves.filter((m) => m.time <= at).length };
}

/** The hindsight oracle of a run (see the module comment). */
export interface OracleResult {
  /** The highest cpu and memory utilisation over the usable nodes when the run ended: the balance to reach. */
  target: { cpu: number; mem: number };
  /** Guests on another node at the end than at the start (the run's own placement, an upper bound). */
  runDisplaced: number;
  /** Whether the run's final placement keeps every hard constraint (rules, maintenance nodes empty). */
  runValid: boolean;
  /** The planner's fewest moves from the initial placement; null when it found none. */
  plannerMoves: number | null;
  /**
   * A lower bound on the fewest moves: the larger of the planner's bound (rounded up) and the
   * relaxation of {@link movesLowerBound}; null when the planner found no placement.
   */
  bound: number | null;
  /** The oracle: the smaller of `plannerMoves` and (when valid) `runDisplaced`; null = none meets the balance. */
  moves: number | null;
  /** Which upper bound the oracle is. */
  source: 'planner' | 'run' | 'both' | null;
  /** Reference imbalance (normalised, online nodes) of the run's final placement and of the oracle's. */
  imbalance: { run: number; oracle: number | null };
  /** Why there is no oracle, or what limits it (e.g. the planner's reasons). */
  note?: string;
}

/** Regret of a run: moves / the oracle's moves, with the conventions of the module comment. */
export function regret(moves: number, oracleMoves: number | null): { regret: number | null; excess: number | null } {
  if (!Number.isInteger(moves) || moves < 0)
    throw new LabError('bad-trace', `moves must be an integer ≥ 0, got ${moves}`);
  if (oracleMoves === null) return { regret: null, excess: null };
  if (!Number.isInteger(oracleMoves) || oracleMoves < 0)
    throw new LabError('bad-trace', `oracle moves must be an integer ≥ 0, got ${oracleMoves}`);
  const excess = moves - oracleMoves;
  if (oracleMoves === 0) return { regret: moves === 0 ? 1 : null, excess };
  return { regret: moves / oracleMoves, excess };
}

const usable = (n: PlacementNode) => n.online && !n.maintenance;

/** Highest cpu and memory utilisation over the usable nodes. */
function highest(nodes: readonly PlacementNode[]): { cpu: number; mem: number } {
  let cpu = 0;
  let mem = 0;
  for (const n of nodes) {
    if (!usable(n)) continue;
    cpu = Math.max(cpu, n.cpu / n.cpuCores);
    mem = Math.max(mem, n.mem / n.memBytes);
  }
  return { cpu, mem };
}

/** Normalised imbalance of node loads ((cpu/cores + mem/memory)/2) over the online nodes. */
function imbalanceOf(
  nodes: readonly PlacementNode[],
  cpu: ReadonlyMap<string, number>,
  mem: ReadonlyMap<string, number>,
): number {
  return normalizedImbalance(
    nodes.filter((n) => n.online).map((n) => (cpu.get(n.name)! / n.cpuCores + mem.get(n.name)! / n.memBytes) / 2),
  );
}

/**
 * The planner's input for "from `at` (each guest's initial or final node), reach the target
 * balance with the fewest migrations": base load as an ignored guest per node, the utilisation
 * limits as capacity, migrations as the only cost.
 */
function oracleInput(p: TracePlacement, at: 'initial' | 'final', target: { cpu: number; mem: number }): PlanInput {
  const cpuLimit = target.cpu * (1 + LIMIT_TOLERANCE);
  const memLimit = target.mem * (1 + LIMIT_TOLERANCE);
  const onNode = new Map<string, { cpu: number; mem: number }>(p.nodes.map((n) => [n.name, { cpu: 0, mem: 0 }]));
  for (const g of p.guests) {
    const s = onNode.get(g.final)!;
    s.cpu += g.cpu;
    s.mem += g.mem;
  }
  const nodes: PlanNode[] = p.nodes.map((n) => ({
    name: n.name,
    cpuCores: n.cpuCores,
    // the memory limit as the node's size: in use ≤ memLimit × memory (no limit when nothing is in use)
    memBytes: memLimit > 0 ? n.memBytes * memLimit : n.memBytes,
    online: n.online,
    maintenance: n.maintenance,
  }));
  const base: PlanGuest[] = p.nodes.map((n) => {
    const cpu = Math.max(0, n.cpu - onNode.get(n.name)!.cpu);
    return {
      id: `base:${n.name}`,
      kind: 'vm',
      node: n.name,
      cpu,
      cores: cpu,
      mem: Math.max(0, n.mem - onNode.get(n.name)!.mem),
      ignored: true,
    };
  });
  const guests: PlanGuest[] = p.guests.map((g) => ({
    id: g.sid,
    kind: g.sid.startsWith('ct:') ? 'ct' : 'vm',
    node: g.ignored ? g.final : g[at],
    ha: true,
    cpu: g.cpu,
    cores: g.cpu,
    mem: g.mem,
    ...(g.migratable ? {} : { migratable: false, reason: g.reason ?? 'cannot be migrated' }),
    ...(g.ignored ? { ignored: true } : {}),
  }));
  return {
    nodes,
    guests: [...guests, ...base],
    rules: p.rules,
    capacity: cpuLimit > 0 ? { cpuOvercommitRatio: cpuLimit } : {},
    weights: { cpu: 0, mem: 0, move: 1, gib: 0 },
  };
}

/**
 * The hindsight oracle of a recorded placement (see the module comment). Throws
 * {@link LabError} `bad-trace` when the planner refuses the recorded cluster (naming the field);
 * an unreachable balance is an answer (`moves: null` with a note).
 */
export function hindsightOracle(p: TracePlacement, where = 'placement'): OracleResult {
  const target = highest(p.nodes);
  const plan = (at: 'initial' | 'final') => {
    try {
      return planPlacement(oracleInput(p, at, target), { seed: 1 });
    } catch (err) {
      if (err instanceof PlanError)
        throw new LabError('bad-trace', `'${where}': the planner refuses the recorded cluster: ${err.message}`, {
          cause: err,
        });
      throw err;
    }
  };
  const runDisplaced = p.guests.filter((g) => !g.ignored && g.initial !== g.final).length;
  const fromFinal = plan('final');
  const runValid = fromFinal.feasible && fromFinal.currentViolations.length === 0;
  const fromInitial = plan('initial');
  const plannerMoves = fromInitial.feasible ? fromInitial.objective.moves : null;
  const bound = fromInitial.feasible
    ? Math.max(0, Math.ceil(fromInitial.bound - 1e-9), movesLowerBound(p, target))
    : null;
  const uppers = [plannerMoves, runValid ? runDisplaced : null].filter((x): x is number => x !== null);
  const moves = uppers.length === 0 ? null : Math.min(...uppers);
  const source =
    moves === null
      ? null
      : plannerMoves === moves && runValid && runDisplaced === moves
        ? 'both'
        : plannerMoves === moves
          ? 'planner'
          : 'run';

  // the reference imbalance of both placements, from the same loads
  const sums = (node: (g: PlacementGuest) => string) => {
    const cpu = new Map(p.nodes.map((n) => [n.name, n.cpu]));
    const mem = new Map(p.nodes.map((n) => [n.name, n.mem]));
    for (const g of p.guests) {
      const from = g.final;
      const to = node(g);
      cpu.set(from, cpu.get(from)! - g.cpu);
      mem.set(from, mem.get(from)! - g.mem);
      cpu.set(to, cpu.get(to)! + g.cpu);
      mem.set(to, mem.get(to)! + g.mem);
    }
    return imbalanceOf(p.nodes, cpu, mem);
  };
  const run = sums((g) => g.final);
  let oracleImbalance: number | null = null;
  if (source === 'run' || source === 'both') oracleImbalance = run;
  else if (source === 'planner' && fromInitial.feasible)
    oracleImbalance = sums((g) => fromInitial.placement.get(g.sid) ?? g.final);
  const notes: string[] = [];
  if (!fromInitial.feasible) notes.push(`planner: ${fromInitial.reasons[0]}`);
  if (!runValid)
    notes.push(
      fromFinal.feasible
        ? `the run's final placement breaks a constraint: ${fromFinal.currentViolations[0]}`
        : `the run's final placement is not a valid witness`,
    );
  return {
    target,
    runDisplaced,
    runValid,
    plannerMoves,
    bound,
    moves,
    source,
    imbalance: { run, oracle: oracleImbalance },
    ...(notes.length > 0 ? { note: notes.join('; ') } : {}),
  };
}

/**
 * A lower bound on the migrations that bring every usable node within `limit` (utilisation
 * fractions) from each guest's initial node: every movable guest on a node that is not usable
 * must leave; from a usable node above a limit, at least as many guests as it takes to shed the
 * excess when the largest leave first (per resource, the larger count). A relaxation: rules,
 * guests that cannot move and the room on other nodes are ignored, and a guest counts once
 * because it leaves one node.
 */
function movesLowerBound(p: TracePlacement, limit: { cpu: number; mem: number }): number {
  let total = 0;
  for (const n of p.nodes) {
    const here = p.guests.filter((g) => !g.ignored && g.initial === n.name);
    if (!usable(n)) {
      total += here.filter((g) => g.migratable).length;
      continue;
    }
    const finals = p.guests.filter((g) => g.final === n.name);
    const base = {
      cpu: n.cpu - finals.reduce((a, g) => a + g.cpu, 0),
      mem: n.mem - finals.reduce((a, g) => a + g.mem, 0),
    };
    const ignored = p.guests.filter((g) => g.ignored && g.final === n.name);
    const shed = (key: 'cpu' | 'mem', cap: number) => {
      let excess =
        Math.max(0, base[key]) + [...here, ...ignored].reduce((a, g) => a + g[key], 0) - cap * (1 + LIMIT_TOLERANCE);
      let count = 0;
      for (const g of here.filter((x) => x.migratable).sort((a, b) => b[key] - a[key])) {
        if (excess <= 0) break;
        excess -= g[key];
        count++;
      }
      return count;
    };
    total += Math.max(shed('cpu', limit.cpu * n.cpuCores), shed('mem', limit.mem * n.memBytes));
  }
  return total;
}

/** A run's balance figures, as the lab keeps them per run. */
export interface RunBalance {
  /** Which balancer the run recorded (null: no placement record). */
  balancer: 'greedy' | 'planned' | null;
  /** Balancer moves of the run (resources). */
  moves: number;
  reach: BalanceReach;
  /** Null when the trace carries no placement (a trace recorded without it). */
  oracle: OracleResult | null;
  regret: number | null;
  excess: number | null;
}

/** The balance figures of a (validated) trace. */
export function runBalance(trace: RunTrace): RunBalance {
  const moves = trace.moves.length;
  const oracle = trace.placement
    ? hindsightOracle(trace.placement, `${trace.scenario}/${trace.variant}/seed-${trace.seed}`)
    : null;
  return {
    balancer: trace.placement?.balancer ?? null,
    moves,
    reach: movesToBalance(trace),
    oracle,
    ...regret(moves, oracle?.moves ?? null),
  };
}
