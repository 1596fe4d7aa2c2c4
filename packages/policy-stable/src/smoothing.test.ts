import { type AdjustedNodeUsage, type NodeTelemetry, PolicyError } from '@poise/policy';
import { describe, expect, it } from 'vitest';
import { type SmoothingState, decayWeight, smoothingGate } from './smoothing';
import { fixedContext } from './testing/support';

const stage = smoothingGate({ halfLifeSeconds: 300 });

const node = (name: string, cpu: number, servicesCpu: number, mem = 0, servicesMem = 0): NodeTelemetry => ({
  node: name,
  cpu,
  maxcpu: 16,
  mem,
  maxmem: 64,
  servicesCpu,
  servicesMem,
});

/** Runs the gate at `now` on `nodes`; returns what it asked the host to evaluate and its state. */
function round(now: number, nodes: NodeTelemetry[], state: SmoothingState) {
  let adjusted: readonly AdjustedNodeUsage[] = [];
  const ctx = fixedContext({
    now,
    nodes: () => nodes,
    adjust: (list) => ((adjusted = list), { imbalance: () => 0, score: () => [] }),
  });
  const out = stage.run(ctx, {}, state);
  if ('stop' in out) throw new Error('smoothing never stops');
  expect(out.plan.evaluator).toBeDefined();
  return { adjusted, state: out.state };
}

describe('decayWeight: 2^(−dt / halfLife)', () => {
  it.each([
    [0, 1],
    [300, 0.5],
    [600, 0.25],
    [3000, 2 ** -10],
  ])('after %i s of a 300 s half-life: %f', (dt, w) => {
    expect(decayWeight(dt, 300)).toBe(w);
  });
});

describe('smoothing the residual', () => {
  it('first round: the residual as measured (adjusted = measured)', () => {
    // node1: residual cpu 3 − 2 = 1, mem 10 − 6 = 4
    const { adjusted, state } = round(0, [node('node1', 3, 2, 10, 6)], { nodes: [] });
    expect(adjusted).toEqual([{ node: 'node1', cpu: 3, mem: 10 }]);
    expect(state).toEqual({ nodes: [{ node: 'node1', at: 0, cpu: 1, mem: 4, weight: 1 }] });
  });

  it('one half-life later the old sample weighs ½ beside the new one', () => {
    const first = round(0, [node('node1', 3, 2)], { nodes: [] }).state;
    // residual 5 − 2 = 3; old weight ½ · 1; weight 1.5; mean (½ · 1 + 3) / 1.5 = 2.333…
    const { adjusted, state } = round(300, [node('node1', 5, 2)], first);
    expect(state.nodes[0]).toEqual({ node: 'node1', at: 300, cpu: 3.5 / 1.5, mem: 0, weight: 1.5 });
    expect(adjusted[0]!.cpu).toBe(2 + 3.5 / 1.5);
  });

  it('uses the time between samples, not a round count', () => {
    const at0 = round(0, [node('node1', 0, 0)], { nodes: [] }).state;
    // second sample residual 1 after dt: mean = 1 / (1 + 2^(−dt/300))
    const mean = (dt: number) => round(dt, [node('node1', 1, 0)], at0).state.nodes[0]!.cpu;
    expect(mean(300)).toBe(1 / 1.5);
    expect(mean(3000)).toBe(1 / (1 + 2 ** -10));
    expect(mean(20)).toBeCloseTo(1 / (1 + 2 ** (-20 / 300)), 15);
  });

  it('a second sample at the same time is ignored; a clock that went back restarts', () => {
    const first = round(100, [node('node1', 1, 0)], { nodes: [] }).state;
    expect(round(100, [node('node1', 9, 0)], first).state).toEqual(first);
    expect(round(50, [node('node1', 9, 0)], first).state.nodes[0]).toEqual({
      node: 'node1',
      at: 50,
      cpu: 9,
      mem: 0,
      weight: 1,
    });
  });

  it('a known structural change takes effect at once: only the residual is averaged', () => {
    // residual 1 core throughout; a 2-core guest leaves node1 (services 2 → 0)
    let state = round(0, [node('node1', 3, 2)], { nodes: [] }).state;
    state = round(20, [node('node1', 3, 2)], state).state;
    const { adjusted } = round(40, [node('node1', 1, 0)], state);
    expect(adjusted[0]!.cpu).toBe(1); // measured, not an average of 3 and 1
  });

  it('damps a noisy residual: 20 s rounds alternating ±0.16 cores settle near their mean', () => {
    let state: SmoothingState = { nodes: [] };
    let last = 0;
    for (let i = 0; i < 200; i++) {
      const r = round(i * 20, [node('node1', 1 + (i % 2 === 0 ? 0.16 : -0.16), 0)], state);
      state = r.state;
      last = r.adjusted[0]!.cpu;
    }
    // measured swings by ±0.16 around 1; the mean swings by 0.16 · (1 − d)/(1 + d) ≈ 0.0037 (d = 2^(−20/300))
    expect(Math.abs(last - 1)).toBeLessThan(0.005);
  });

  it('a node that joins starts fresh; a node that left is dropped', () => {
    const before = round(0, [node('node1', 1, 0), node('node2', 2, 0)], { nodes: [] }).state;
    const { state, adjusted } = round(20, [node('node1', 1, 0), node('node3', 4, 1)], before);
    expect(state.nodes.map((n) => n.node)).toEqual(['node1', 'node3']);
    expect(adjusted[1]).toEqual({ node: 'node3', cpu: 4, mem: 0 });
  });

  it('keeps adjusted stats non-negative and memory in whole bytes', () => {
    const first = round(0, [node('node1', 0, 0, 0, 0)], { nodes: [] }).state;
    // residual mem 7 − 8 = −1 (the services' stats lag the node's); cpu residual −2
    const { adjusted } = round(300, [node('node1', 0, 2, 7, 8)], first);
    // mean cpu (½·0 + −2) / 1.5 = −1.333 → 2 − 1.333 = 0.667; mem 8 + (−1/1.5) = 7.333 → 7
    expect(adjusted[0]).toEqual({ node: 'node1', cpu: 2 - 2 / 1.5, mem: 7 });
    const negative = round(600, [node('node1', 0, 0, 0, 0)], {
      nodes: [{ node: 'node1', at: 300, cpu: -5, mem: -5, weight: 1 }],
    });
    expect(negative.adjusted[0]).toEqual({ node: 'node1', cpu: 0, mem: 0 });
  });

  it('needs node telemetry and adjusted views from the host', () => {
    expect(() => stage.run(fixedContext(), {}, { nodes: [] })).toThrow(
      new PolicyError('invalid-context', "stage 'smoothing' needs 'ctx.nodes()', which the host does not provide"),
    );
    expect(() => stage.run(fixedContext({ nodes: () => [] }), {}, { nodes: [] })).toThrow("'ctx.adjust()'");
  });

  it('validates its state and options', () => {
    const good = { node: 'node1', at: 0, cpu: 1, mem: 4, weight: 1 };
    expect(stage.validateState!({ nodes: [good] })).toEqual({ nodes: [good] });
    expect(() => stage.validateState!({ nodes: [{ ...good, weight: 0.5 }] })).toThrow(
      "stage 'smoothing': state field 'nodes.0.weight' must be a finite number >= 1, got 0.5",
    );
    expect(() => stage.validateState!({ nodes: [{ ...good, cpu: Infinity }] })).toThrow(
      "state field 'nodes.0.cpu' must be a finite number in",
    );
    expect(() => stage.validateState!({ nodes: [good, good] })).toThrow("'nodes.1.node' lists 'node1' twice");
    expect(() => smoothingGate({ halfLifeSeconds: 0 })).toThrow(
      "smoothing halfLifeSeconds must be a finite number > 0, got '0'",
    );
  });
});
