/**
 * Properties of the planner on random clusters (test support): the search and the schedule
 * checked on the oracle's random instances. The fast tier checks a sample of the seeds
 * (planner.test.ts), the slow tier the rest (planner.slow.test.ts).
 */
import { expect } from 'vitest';
import { lowerBound } from '../bound';
import { constructAssignment } from '../construct';
import { countingReasons } from '../diagnose';
import { buildProblem } from '../model';
import { assignmentViolations, evaluateAssignment } from '../objective';
import { randomInstance } from './oracle';
import { planPlacement } from '../planner';
import { optimize } from '../search';
import type { FeasiblePlan, PlanInput } from '../types';
import { validatePlanInput } from '../validate';

/** The seeds of the properties' sweep. */
export const PROPERTY_SEEDS: readonly number[] = Array.from({ length: 120 }, (_, i) => 5000 + i);
/** How many of them the fast tier checks. */
export const PROPERTY_SAMPLE = 40;

/** The search keeps every hard constraint, its incremental objective equals the direct one, and the bound is below it. */
export function searchProperties(seeds: readonly number[]): void {
  for (const seed of seeds) {
    const { input, drain } = randomInstance(seed, { maxNodes: 6, maxGuests: 30 });
    const p = buildProblem(validatePlanInput(input), { drain });
    if (p.reasons.length > 0 || countingReasons(p).length > 0) continue;
    const start = constructAssignment(p);
    if (!start) continue;
    expect(assignmentViolations(p, start), `seed ${seed} start`).toEqual([]);
    const st = optimize(p, start, { seed: 1, effort: 0.2 });
    expect(assignmentViolations(p, st.assign), `seed ${seed}`).toEqual([]);
    const direct = evaluateAssignment(p, st.assign).value;
    expect(Math.abs(st.value - direct), `seed ${seed}`).toBeLessThan(1e-9 * Math.max(1, direct));
    expect(lowerBound(p, { upper: direct, assign: st.assign }), `seed ${seed}`).toBeLessThanOrEqual(direct + 1e-9);
  }
}

/** Every step keeps capacity and anti-affinity, moves bundles whole, respects the per-node limit, and ends on the placement. */
export function stepProperties(seeds: readonly number[]): void {
  for (const seed of seeds) {
    const { input, drain } = randomInstance(seed, { maxNodes: 6, maxGuests: 30 });
    const parallel = 1 + (seed % 3);
    const plan = planPlacement(input, { drain, maxParallelPerNode: parallel });
    if (!plan.feasible) continue;
    checkSteps(input, plan, parallel, `seed ${seed}`);
  }
}

/** Replays the steps and checks the invariants the schedule promises. */
function checkSteps(input: PlanInput, plan: FeasiblePlan, parallel: number, label: string): void {
  const checked = validatePlanInput(input);
  const limitMem = new Map(
    checked.nodes.map((n) => [n.name, (1 - checked.memoryHeadroomPercent / 100) * n.memBytes * (1 + 1e-9)]),
  );
  const limitCores = new Map(
    checked.nodes.map((n) => [
      n.name,
      checked.cpuOvercommitRatio === undefined ? Infinity : checked.cpuOvercommitRatio * n.cpuCores * (1 + 1e-9),
    ]),
  );
  const online = new Set(checked.nodes.filter((n) => n.online).map((n) => n.name));
  const where = new Map(checked.guests.map((g) => [g.id, g.node]));
  const byId = new Map(checked.guests.map((g) => [g.id, g]));
  const load = (n: string, key: 'mem' | 'cores') => {
    let sum = key === 'mem' ? (online.has(n) ? checked.nodes.find((x) => x.name === n)!.baseMem : 0) : 0;
    for (const [id, at] of where)
      if (at === n && online.has(n) && (plan.placement.has(id) || byId.get(id)!.ignored)) sum += byId.get(id)![key];
    return sum;
  };
  // connected positive groups (rules sharing a guest form one bundle)
  const positives: string[][] = [];
  for (const r of checked.rules) {
    if (r.type !== 'resource-affinity' || r.affinity !== 'positive') continue;
    let group = r.resources.filter((id) => plan.placement.has(id) && !byId.get(id)!.ignored);
    for (const other of positives.filter((g) => g.some((id) => group.includes(id)))) {
      group = [...new Set([...group, ...other])];
      positives.splice(positives.indexOf(other), 1);
    }
    positives.push(group);
  }
  const negatives = checked.rules
    .filter((r) => r.type === 'resource-affinity' && r.affinity === 'negative')
    .map((r) => r.resources.filter((id) => plan.placement.has(id) && !byId.get(id)!.ignored));
  for (const [k, step] of plan.steps.entries()) {
    const count = new Map<string, number>();
    const incoming = new Map<string, { mem: number; cores: number; ids: string[] }>();
    const arrivals = new Set<string>();
    for (const mv of step) {
      // a bundle split over nodes arrives as one motion
      const bundle = positives.find((g) => g.includes(mv.guests[0]!))?.join('+') ?? mv.guests[0]!;
      if (online.has(mv.source)) count.set(mv.source, (count.get(mv.source) ?? 0) + 1);
      if (!arrivals.has(`${mv.target}|${bundle}`)) count.set(mv.target, (count.get(mv.target) ?? 0) + 1);
      arrivals.add(`${mv.target}|${bundle}`);
      const inc = incoming.get(mv.target) ?? { mem: 0, cores: 0, ids: [] };
      for (const id of mv.guests) {
        expect(where.get(id), `${label} step ${k}: ${id} moves from where it is`).toBe(mv.source);
        inc.mem += byId.get(id)!.mem;
        inc.cores += byId.get(id)!.cores;
        inc.ids.push(id);
      }
      incoming.set(mv.target, inc);
    }
    for (const [n, c] of count) expect(c, `${label} step ${k}: motions at ${n}`).toBeLessThanOrEqual(parallel);
    for (const [n, inc] of incoming) {
      expect(load(n, 'mem') + inc.mem, `${label} step ${k}: memory of ${n} while the step runs`).toBeLessThanOrEqual(
        limitMem.get(n)!,
      );
      expect(load(n, 'cores') + inc.cores, `${label} step ${k}: cores of ${n} while the step runs`).toBeLessThanOrEqual(
        limitCores.get(n)!,
      );
      for (const group of negatives) {
        const arriving = group.filter((id) => inc.ids.includes(id));
        const present = group.filter((id) => where.get(id) === n && !inc.ids.includes(id));
        if (arriving.length > 0)
          expect([...arriving, ...present].length, `${label} step ${k}: negative partners on ${n}`).toBe(1);
      }
    }
    for (const mv of step) for (const id of mv.guests) where.set(id, mv.target);
    for (const group of positives) {
      const moved = step.filter((mv) => mv.guests.some((id) => group.includes(id)));
      if (moved.length > 0)
        expect(new Set(group.map((id) => where.get(id))).size, `${label} step ${k}: bundle together`).toBe(1);
    }
  }
  if (plan.executable)
    for (const [id, n] of plan.placement) expect(where.get(id), `${label}: ${id} ends on its target`).toBe(n);
}
