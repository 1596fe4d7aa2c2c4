// Test-only: a plain JavaScript runOne that imports a workspace package (under the source
// condition that import resolves to TypeScript, so the worker needs tsx even for a .js module).
import { normalizedImbalance } from '@poise/imbalance';

export function runOne(scenario, variant, seed) {
  return {
    format: 'poise-run-trace/3',
    scenario: scenario.name,
    variant: variant.name,
    seed,
    endTime: 40,
    nodes: ['node1', 'node2'],
    rounds: {
      time: [0, 20],
      imbalance: [normalizedImbalance([0.2, 0.6]), 0],
      cpu: [
        [0.2, 0.4],
        [0.6, 0.4],
      ],
      mem: [
        [0, 0],
        [0, 0],
      ],
      online: [
        [true, true],
        [true, true],
      ],
      pressureCpu: [
        [null, null],
        [null, null],
      ],
      pressureMem: [
        [null, null],
        [null, null],
      ],
    },
    moves: [],
  };
}
