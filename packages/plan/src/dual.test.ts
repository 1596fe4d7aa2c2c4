import { describe, expect, test } from 'vitest';
import { generatedCluster } from './testing';
import { lagrangianBound, lowerBound } from './bound';
import { constructAssignment } from './construct';
import { DualBound, projectSimplex } from './dual';
import { type Problem, buildProblem, costAt } from './model';
import { evaluateAssignment } from './objective';
import { randomInstance } from './testing/oracle';
import { mulberry32 } from '@poise/test-support/prng';
import { optimize } from './search';
import { validatePlanInput } from './validate';
import type { PlanInput } from './types';

const GIB = 1024 ** 3;

/** D(λ, μ) straight from its definition (the reference the hull sweep is held to). */
function dualByDefinition(p: Problem, lambda: Float64Array, mu: Float64Array): number {
  let value = 0;
  for (let n = 0; n < p.nodeNames.length; n++) {
    if (!p.usable[n]) continue;
    value += (lambda[n]! * p.fixCpu[n]!) / p.capCpu[n]! + (mu[n]! * p.fixMem[n]!) / p.capMem[n]!;
  }
  for (let u = 0; u < p.units.length; u++) {
    let best = Infinity;
    for (const n of p.allowedList[u]!)
      best = Math.min(
        best,
        costAt(p, u, n) + (lambda[n]! * p.unitCpu[u]!) / p.capCpu[n]! + (mu[n]! * p.unitMem[u]!) / p.capMem[n]!,
      );
    value += best;
  }
  return value;
}

/** Random multipliers on the usable nodes summing to the weights. */
function randomMultipliers(p: Problem, seed: number): { lambda: Float64Array; mu: Float64Array } {
  const rnd = mulberry32(seed);
  const N = p.nodeNames.length;
  const lambda = new Float64Array(N);
  const mu = new Float64Array(N);
  for (const [out, total] of [
    [lambda, p.input.weights.cpu],
    [mu, p.input.weights.mem],
  ] as const) {
    let sum = 0;
    for (let n = 0; n < N; n++) {
      // some nodes at zero, some equal (ties in the hull)
      out[n] = !p.usable[n] ? 0 : rnd() < 0.2 ? 0 : rnd() < 0.2 ? 0.5 : rnd();
      sum += out[n]!;
    }
    for (let n = 0; n < N; n++) out[n] = sum > 0 ? (out[n]! * total) / sum : 0;
  }
  return { lambda, mu };
}

describe('the Lagrangian dual', () => {
  test('the hull sweep gives D(λ, μ) as its definition does, on random clusters and multipliers', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const { input, drain } = randomInstance(seed, { maxNodes: 6, maxGuests: 30 });
      const p = buildProblem(validatePlanInput(input), { drain });
      if (p.reasons.length > 0) continue;
      const dual = new DualBound(p);
      for (let k = 0; k < 3; k++) {
        const { lambda, mu } = randomMultipliers(p, seed * 7 + k);
        dual.lambda.set(lambda);
        dual.mu.set(mu);
        const expected = dualByDefinition(p, lambda, mu);
        expect(Math.abs(dual.evaluate() - expected), `seed ${seed}`).toBeLessThanOrEqual(
          1e-12 * Math.max(1, Math.abs(expected)),
        );
      }
    }
  });

  test('the sweep agrees at scale too (generated 16 × 600 cluster with rules)', () => {
    const p = buildProblem(validatePlanInput(generatedCluster(42, 16, 600, 60)));
    const dual = new DualBound(p);
    for (let k = 0; k < 5; k++) {
      const { lambda, mu } = randomMultipliers(p, k);
      dual.lambda.set(lambda);
      dual.mu.set(mu);
      const expected = dualByDefinition(p, lambda, mu);
      expect(Math.abs(dual.evaluate() - expected)).toBeLessThanOrEqual(1e-12 * expected);
    }
  });

  test('weak duality: D(λ, μ) is below the objective of every assignment the search reaches', () => {
    for (let seed = 200; seed <= 320; seed++) {
      const { input, drain } = randomInstance(seed, { maxNodes: 6, maxGuests: 30 });
      const p = buildProblem(validatePlanInput(input), { drain });
      if (p.reasons.length > 0) continue;
      const start = constructAssignment(p);
      if (!start) continue;
      const st = optimize(p, start, { seed: 1, effort: 0.2 });
      const value = evaluateAssignment(p, st.assign).value;
      const startValue = evaluateAssignment(p, start).value;
      const bound = lagrangianBound(p, { upper: value, assign: st.assign });
      expect(bound, `seed ${seed}`).toBeLessThanOrEqual(value + 1e-12);
      expect(bound, `seed ${seed}`).toBeLessThanOrEqual(startValue + 1e-12);
      expect(lowerBound(p, { upper: value, assign: st.assign }), `seed ${seed}`).toBeGreaterThanOrEqual(bound);
    }
  });

  test('the bound of a cluster that must rebalance: the two full nodes give up their excess in the relaxation', () => {
    // node1 holds 6 guests of 4 cores and 8 GiB: 24 of 32 cores and 48 of 64 GiB (75 %); node2 is empty.
    // The optimum moves 3 guests: 37.5 % cpu and memory on both, 3 moves (0.003) copying 24 GiB (0.0024),
    // 0.375 + 0.375 + 0.003 + 0.0024 = 0.7554. Splitting the load freely needs the same 3 guests' worth of
    // moves and bytes, so the relaxation's value is the optimum, and the ascent gets within its tolerance.
    const input: PlanInput = {
      nodes: [
        { name: 'node1', cpuCores: 32, memBytes: 64 * GIB },
        { name: 'node2', cpuCores: 32, memBytes: 64 * GIB },
      ],
      guests: Array.from({ length: 6 }, (_, i) => ({
        id: `vm:${101 + i}`,
        kind: 'vm' as const,
        node: 'node1',
        cpu: 4,
        mem: 8 * GIB,
      })),
    };
    const p = buildProblem(validatePlanInput(input));
    const optimum = 0.375 + 0.375 + 3 * 0.001 + 24 * 0.0001;
    const bound = lagrangianBound(p, { upper: optimum, assign: Int32Array.from([0, 0, 0, 1, 1, 1]) });
    expect(bound).toBeLessThanOrEqual(optimum + 1e-12);
    expect(bound).toBeGreaterThan(optimum - 1e-4);
  });
});

describe('projectSimplex', () => {
  test.each<[number[], number, number[]]>([
    // already on the simplex: unchanged
    [[0.25, 0.75], 1, [0.25, 0.75]],
    // shift by (sum − total) / k over the positive part: (2 + 1 − 1) / 2 = 1 → [1, 0]
    [[2, 1], 1, [1, 0]],
    // [0.5, 0.5, −1] → the negative one clipped, the others keep summing to 1
    [[0.5, 0.5, -1], 1, [0.5, 0.5, 0]],
    // a total of 0 (the resource has no weight): all zero
    [[0.3, 0.2], 0, [0, 0]],
  ])('%j onto total %d', (v, total, expected) => {
    const x = Float64Array.from(v);
    projectSimplex(x, total);
    expected.forEach((e, i) => expect(x[i]).toBeCloseTo(e, 12));
  });
});
