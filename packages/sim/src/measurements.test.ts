import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HardwareNode } from './case';
import type { Command } from './commands';
import { Measurements, type GuestPlacement } from './measurements';
import { parseLoadPressure } from './pressure/config';
import { LoadPressureModel } from './pressure/model';

const NODES = ['node1', 'node2', 'node3'];
const SIDS = ['vm:1', 'vm:2', 'vm:3', 'vm:4', 'vm:5'];

/** A mutable placement: where each service is configured and whether it runs there. */
function placement(): GuestPlacement & { config: Map<string, string>; running: Set<string> } {
  const hw = new Map<string, HardwareNode>(
    NODES.map((n, i) => [n, { power: 'on', network: 'on', maxcpu: 8 + 8 * i, maxmem: 32 * 1024 ** 3 }]),
  );
  const config = new Map(SIDS.map((sid, i) => [sid, NODES[i % NODES.length]!]));
  const running = new Set(SIDS);
  return {
    config,
    running,
    nodeNames: NODES,
    nodeHardware: (node) => hw.get(node),
    sortedSids: () => [...config.keys()].sort(),
    configNode: (sid) => config.get(sid),
    isRunning: (node, sid) => config.get(sid) === node && running.has(sid),
  };
}

type Op =
  | { op: 'toggle'; sid: string }
  | { op: 'move'; sid: string; node: string }
  | { op: 'command'; command: Command }
  | { op: 'noise-step' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('toggle' as const), sid: fc.constantFrom(...SIDS) }),
  fc.record({ op: fc.constant('move' as const), sid: fc.constantFrom(...SIDS), node: fc.constantFrom(...NODES) }),
  fc.record({
    op: fc.constant('command' as const),
    command: fc.record({
      kind: fc.constant('service-stats' as const),
      sid: fc.constantFrom(...SIDS),
      which: fc.constantFrom('static' as const, 'dynamic' as const),
      values: fc.array(
        fc.tuple(fc.constantFrom('maxcpu' as const, 'cpu' as const, 'mem' as const, 'memhost' as const), fc.nat(64)),
        { minLength: 1, maxLength: 3 },
      ),
    }),
  }),
  fc.record({
    op: fc.constant('command' as const),
    command: fc.record({
      kind: fc.constantFrom('node-stats' as const, 'node-noise' as const),
      node: fc.constantFrom(...NODES),
      values: fc.array(fc.tuple(fc.constantFrom('cpu' as const, 'mem' as const), fc.nat(4096)), {
        minLength: 1,
        maxLength: 2,
      }),
    }),
  }),
  fc.constant({ op: 'noise-step' as const }),
);

function measurements(p: GuestPlacement): Measurements {
  const loadModel = new LoadPressureModel(parseLoadPressure(undefined, 'test', ['load-pressure'], NODES), NODES, 7);
  return new Measurements({ staticServiceStats: {}, dynamicServiceStats: {} }, p, {
    legacy: false,
    loadModel,
    seed: 7,
    log: () => {},
  });
}

/** Applies a command or a noise step to `m` (the placement ops are the caller's). */
function apply(m: Measurements, op: Op): void {
  if (op.op === 'noise-step') m.resampleNoise();
  else if (op.op === 'command') {
    if (op.command.kind === 'service-stats') m.setServiceStats(op.command);
    else if (op.command.kind === 'node-stats' || op.command.kind === 'node-noise') m.setNode(op.command);
  }
}

describe('Measurements.nodeLoads and pressureTruth (cached by version)', () => {
  it('equal what a fresh instance with the same history computes, after every change', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 30 }), (ops) => {
        const p = placement();
        const cached = measurements(p);
        const history: Op[] = [];
        // read before any change too, so a stale cache would show
        cached.nodeLoads();
        cached.pressureTruth();
        for (const op of ops) {
          if (op.op === 'toggle') {
            if (p.running.has(op.sid)) p.running.delete(op.sid);
            else p.running.add(op.sid);
            cached.placementChanged();
          } else if (op.op === 'move') {
            p.config.set(op.sid, op.node);
            cached.placementChanged();
          } else {
            apply(cached, op);
            history.push(op);
          }
          const fresh = measurements(p);
          for (const h of history) apply(fresh, h);
          expect(cached.nodeLoads()).toEqual(fresh.nodeLoads());
          expect(cached.pressureTruth()).toEqual(fresh.pressureTruth());
        }
      }),
      { numRuns: 200 },
    );
  });

  it('hand out the same arrays while nothing changed', () => {
    const m = measurements(placement());
    const loads = m.nodeLoads();
    const truth = m.pressureTruth();
    expect(m.nodeLoads()).toBe(loads);
    expect(m.pressureTruth()).toBe(truth);
    m.placementChanged();
    expect(m.nodeLoads()).not.toBe(loads);
  });
});
