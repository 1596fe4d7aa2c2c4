import { imbalance } from '@poise/imbalance';
import { PlanError } from './errors';
import { type Problem, buildProblem } from './model';
import { evaluateAssignment, evaluateCurrent } from './objective';
import { balancedAssignment, constructAssignment } from './construct';
import { findFeasible } from './exact';
import { countingReasons, searchReasons } from './diagnose';
import { LARGE_UNITS, optimize } from './search';
import { lowerBound } from './bound';
import { schedule } from './schedule';
import { type CheckedInput, show, validatePlanInput } from './validate';
import type { FeasiblePlan, NodeUse, PlacementPlan, PlanInput, PlanOptions } from './types';
import { compareNames } from '@poise/usage';

/** Units up to which the search also starts from a balanced placement built from scratch. */
const FRESH_START_UNITS = LARGE_UNITS;

/** Options with every default applied. */
export interface CheckedOptions {
  readonly drain: readonly string[];
  readonly maxParallelPerNode: number;
  readonly seed: number;
  readonly effort: number;
  readonly metric: 'raw' | 'normalized';
}

/** Checks {@link PlanOptions} against a validated input; throws `PlanError` `invalid-options` naming the option. */
export function checkPlanOptions(options: PlanOptions | undefined, input: CheckedInput): CheckedOptions {
  const o = (options ?? {}) as Record<string, unknown>;
  if (typeof o !== 'object' || o === null || Array.isArray(o))
    throw new PlanError('invalid-options', `options must be an object, got ${show(o)}`);
  const known = ['drain', 'maxParallelPerNode', 'seed', 'effort', 'metric'];
  for (const key of Object.keys(o))
    if (!known.includes(key))
      throw new PlanError('invalid-options', `unknown option '${key}' (known: ${known.join(', ')})`);
  const nodes = new Set(input.nodes.map((n) => n.name));
  let drain: string[] = [];
  if (o.drain !== undefined) {
    if (!Array.isArray(o.drain))
      throw new PlanError('invalid-options', `options.drain must be an array of node names, got ${show(o.drain)}`);
    drain = o.drain.map((n: unknown, i) => {
      if (typeof n !== 'string' || !nodes.has(n))
        throw new PlanError('invalid-options', `options.drain[${i}] ${show(n)} is not one of the nodes`);
      return n;
    });
  }
  const integer = (key: string, fallback: number, min: number, max: number) => {
    const v = o[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      throw new PlanError('invalid-options', `options.${key} must be an integer in ${min}..${max}, got ${show(v)}`);
    return v;
  };
  const effort = o.effort === undefined ? 1 : o.effort;
  if (typeof effort !== 'number' || !Number.isFinite(effort) || effort <= 0 || effort > 1000) {
    throw new PlanError('invalid-options', `options.effort must be a finite number in (0, 1000], got ${show(effort)}`);
  }
  const metric = o.metric === undefined ? 'normalized' : o.metric;
  if (metric !== 'raw' && metric !== 'normalized')
    throw new PlanError('invalid-options', `options.metric must be 'raw' or 'normalized', got ${show(metric)}`);
  return {
    drain,
    maxParallelPerNode: integer('maxParallelPerNode', 1, 1, 1_000_000),
    seed: integer('seed', 1, 0, 2 ** 32 - 1),
    effort,
    metric,
  };
}

/**
 * Plans the cluster: a target placement in which every hard constraint holds (node affinity,
 * resource affinity, capacity, nodes in maintenance or drained left with only what cannot
 * move), chosen for the objective (`PlanObjective`: the weighted highest utilisation per
 * resource plus the cost of the migrations), the ordered steps that reach it safely, a lower
 * bound on the objective and the gap. An input that admits no such placement is answered with
 * `feasible: false` and the reasons.
 *
 * Throws `PlanError` (`invalid-input`, `invalid-options`) for malformed input only; nothing is
 * planned then. Pure and deterministic: the same input, options and seed give the same plan.
 */
export function planPlacement(input: PlanInput, options?: PlanOptions): PlacementPlan {
  const checked = validatePlanInput(input);
  const opts = checkPlanOptions(options, checked);
  return planChecked(checked, opts);
}

/** {@link planPlacement} on a validated input (what the batch placement and the what-if reuse). */
export function planChecked(checked: CheckedInput, opts: CheckedOptions): PlacementPlan {
  const p = buildProblem(checked, { drain: opts.drain });
  const current = evaluateCurrent(p);
  const reasons = [...p.reasons, ...(p.reasons.length === 0 ? countingReasons(p) : [])];
  if (reasons.length > 0) return { feasible: false, reasons, current, notes: p.notes };
  let start = constructAssignment(p);
  if (!start) {
    const exact = findFeasible(p);
    if (exact.kind !== 'feasible')
      return { feasible: false, reasons: searchReasons(p, exact), current, notes: p.notes };
    start = exact.assign;
  }
  const fresh = p.units.length <= FRESH_START_UNITS ? balancedAssignment(p) : undefined;
  const best = optimize(p, start, { seed: opts.seed, effort: opts.effort, fresh });
  return feasiblePlan(p, best.assign, opts);
}

/**
 * The plan of a target assignment that satisfies the constraints: its steps, objective, bound,
 * balance and notes (`violations`: the constraints the current placement breaks that the plan
 * fixes; default all of them).
 */
export function feasiblePlan(
  p: Problem,
  assign: Int32Array,
  opts: CheckedOptions,
  violations: readonly string[] = p.violations,
): FeasiblePlan {
  const current = evaluateCurrent(p);
  const objective = evaluateAssignment(p, assign);
  const bound = lowerBound(p, { upper: objective.value, assign });
  const steps = schedule(p, assign, opts.maxParallelPerNode);
  return {
    feasible: true,
    placement: placementOf(p, assign),
    steps: steps.steps,
    objective,
    current,
    bound,
    gap: objective.value > 0 ? Math.max(0, (objective.value - bound) / objective.value) : 0,
    imbalance: {
      current: imbalance(nodeLoads(p, currentLoads(p)), opts.metric),
      target: imbalance(nodeLoads(p, targetLoads(p, assign)), opts.metric),
    },
    nodes: nodeUses(p, assign),
    executable: steps.executable,
    ...(steps.blocked === undefined ? {} : { blocked: steps.blocked }),
    currentViolations: violations,
    notes: [...p.notes, ...steps.notes],
  };
}

/** Guest → node after the assignment, ids in byte order. */
function placementOf(p: Problem, assign: Int32Array): Map<string, string> {
  const out = new Map<string, string>();
  p.input.guests.forEach((g, i) => {
    if (!p.guestCounted[i]) return;
    const u = p.guestUnit[i]!;
    out.set(g.id, u >= 0 ? p.nodeNames[assign[u]!]! : g.node);
  });
  return new Map([...out].sort((a, b) => compareNames(a[0], b[0])));
}

/** cpu and memory per node (all nodes) with every counted guest where it is now. */
export function currentLoads(p: Problem): { cpu: Float64Array; mem: Float64Array; guests: Int32Array } {
  const cpu = Float64Array.from(p.fixCpu);
  const mem = Float64Array.from(p.fixMem);
  const guests = new Int32Array(p.nodeNames.length);
  p.input.guests.forEach((g, i) => {
    if (!p.guestCounted[i]) return;
    const n = p.nodeIndex.get(g.node)!;
    guests[n]! += 1;
    if (p.guestUnit[i]! < 0) return; // fixed guests are in the fixed load
    if (!p.input.nodes[n]!.online) return;
    cpu[n]! += g.cpu;
    mem[n]! += g.mem;
  });
  return { cpu, mem, guests };
}

/** cpu and memory per node after the assignment. */
function targetLoads(p: Problem, assign: Int32Array): { cpu: Float64Array; mem: Float64Array; guests: Int32Array } {
  const cpu = Float64Array.from(p.fixCpu);
  const mem = Float64Array.from(p.fixMem);
  const guests = new Int32Array(p.nodeNames.length);
  p.input.guests.forEach((g, i) => {
    if (!p.guestCounted[i]) return;
    const u = p.guestUnit[i]!;
    guests[u >= 0 ? assign[u]! : p.nodeIndex.get(g.node)!]! += 1;
  });
  for (let u = 0; u < p.units.length; u++) {
    cpu[assign[u]!]! += p.unitCpu[u]!;
    mem[assign[u]!]! += p.unitMem[u]!;
  }
  return { cpu, mem, guests };
}

/** The reference's node loads ((cpu/cores + mem/memory) / 2) over the usable nodes, byte order. */
export function nodeLoads(p: Problem, loads: { cpu: Float64Array; mem: Float64Array }): number[] {
  const out: number[] = [];
  for (let n = 0; n < p.nodeNames.length; n++)
    if (p.usable[n]) out.push((loads.cpu[n]! / p.capCpu[n]! + loads.mem[n]! / p.capMem[n]!) / 2);
  return out;
}

function nodeUses(p: Problem, assign: Int32Array): NodeUse[] {
  const loads = targetLoads(p, assign);
  const out: NodeUse[] = [];
  for (let n = 0; n < p.nodeNames.length; n++) {
    if (!p.usable[n]) continue;
    out.push({
      node: p.nodeNames[n]!,
      cpu: loads.cpu[n]! / p.capCpu[n]!,
      mem: loads.mem[n]! / p.capMem[n]!,
      guests: loads.guests[n]!,
    });
  }
  return out;
}
