/**
 * The contention model's cost per balancing round: learning one round of observations, fitting
 * the model and predicting every (guest, target) move a round scores, and the size of the state
 * a host persists, for models that learned every load of every node (the worst case: all bins
 * full). Prints one table row per cluster size (median of `--reps` warm runs, default 7, after
 * one warm-up). Run: `pnpm bench:contention` (or `--nodes 3,30,64 --reps 7`).
 */
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import {
  LOAD_BINS,
  LOAD_MAX,
  emptyModel,
  fitModel,
  moveScorer,
  observeNodes,
  type ContentionModelState,
  type NodeObservation,
} from '../packages/contention/src/index';
import { mulberry32 } from '../tools/test-support/prng';

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1]! : fallback;
}

const sizes = option('nodes', '3,30,64').split(',').map(Number);
const reps = Number(option('reps', '7'));
const GUESTS_PER_NODE = 30;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

function time(run: () => void): number {
  run();
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const start = performance.now();
    run();
    out.push(performance.now() - start);
  }
  return median(out);
}

/** A model in which every node visited every bin often enough to fill it (cpu and memory). */
function saturatedModel(nodes: number): ContentionModelState {
  const random = mulberry32(nodes);
  let state = emptyModel();
  let now = 0;
  const names = Array.from({ length: nodes }, (_, i) => `node${i + 1}`);
  for (let pass = 0; pass < 8; pass++) {
    for (let bin = 0; bin < LOAD_BINS; bin++) {
      const load = ((bin + 0.5) / LOAD_BINS) * LOAD_MAX;
      for (let r = 0; r < 2; r++, now += 10) {
        const round: NodeObservation[] = names.map((node) => ({
          node,
          cpuLoad: load,
          memLoad: load,
          pressureCpu: Math.min(100, 60 * load * load + 4 * random()),
          pressureMem: Math.min(100, 40 * load ** 4 + random()),
        }));
        state = observeNodes(state, now, round);
      }
    }
  }
  return state;
}

const GIB = 1024 ** 3;
console.log(
  `| nodes | learn one round (ms) | fit + score ${GUESTS_PER_NODE} guests × (nodes − 1) targets per node (ms) | moves scored | state (JSON bytes) |`,
);
console.log('|---|---|---|---|---|');
for (const nodes of sizes) {
  const state = saturatedModel(nodes);
  const names = state.nodes.map((n) => n.node);
  const round: NodeObservation[] = names.map((node, i) => ({
    node,
    cpuLoad: 0.5 + i / (4 * nodes),
    memLoad: 0.5,
    pressureCpu: 10,
    pressureMem: 1,
  }));
  const learn = time(() => void observeNodes(state, 8 * LOAD_BINS * 20 + 10, round));
  let moves = 0;
  const scoring = time(() => {
    moves = 0;
    const score = moveScorer(fitModel(state));
    for (const [s, source] of names.entries()) {
      const src = {
        node: source,
        cpu: 16 * (0.5 + s / (4 * nodes)),
        maxcpu: 16,
        mem: 64 * GIB,
        maxmem: 128 * GIB,
        activity: GUESTS_PER_NODE / 2,
      };
      for (let g = 0; g < GUESTS_PER_NODE; g++) {
        for (const target of names) {
          if (target === source) continue;
          const dst = {
            node: target,
            cpu: 8,
            maxcpu: 16,
            mem: 64 * GIB,
            maxmem: 128 * GIB,
            activity: GUESTS_PER_NODE / 2,
          };
          score({
            source: src,
            target: dst,
            bundle: { cpu: 0.5 + (g % 4) / 2, mem: 2 * GIB, activity: 0.5, guests: 1, transferBytes: 2 * GIB },
          });
          moves++;
        }
      }
    }
  });
  console.log(
    `| ${nodes} | ${learn.toFixed(2)} | ${scoring.toFixed(1)} | ${moves} | ${JSON.stringify(state).length} |`,
  );
}
