/**
 * Synthetic telemetry with known curves, for the tests and the README figures: a node whose
 * load walks through steady levels and whose PSI follows a known function of the load, with
 * gaussian noise and outliers. Not exported by the package.
 */
import { mulberry32 } from '@poise/test-support/prng';
import { emptyModel, type ContentionModelState } from '../state';
import { observeNodes, type NodeObservation } from '../learn';

/** A known pressure curve: load (fraction) → percent. */
export type TrueCurve = (load: number) => number;

const clamp = (v: number) => Math.min(100, Math.max(0, v));

/** The curve families of the tests (each monotone, 0..100). */
export const CURVES: Readonly<Record<string, TrueCurve>> = {
  /** 40 % at full load, from 0. */
  linear: (x) => clamp(40 * x),
  /** Zero to 60 %, then 2 points per load percent (80 % at full). */
  knee: (x) => clamp(200 * Math.max(0, x - 0.6)),
  /** A logistic step centred at 85 %, 6 % wide (the queue forms around the knee and saturates). */
  logistic: (x) => 100 / (1 + Math.exp(-(x - 0.85) / 0.06)),
  /** Memory: nothing to 88 %, then a quadratic cliff (10 % at 93 %, 58 % at full). */
  steepMemory: (x) => clamp(4000 * Math.max(0, x - 0.88) ** 2),
};

/** Options of {@link synthetic}. */
export interface SyntheticOptions {
  readonly seed: number;
  /** Steady levels the load visits. */
  readonly levels: number;
  /** Rounds per level (≥ 2: the first round after a step is not settled). */
  readonly roundsPerLevel: number;
  /** Loads are drawn uniformly in [low, high]. */
  readonly low: number;
  readonly high: number;
  /** Standard deviation of the pressure noise, percentage points. */
  readonly noise: number;
  /** Share of rounds whose pressure is replaced by a uniform 0..100 outlier. */
  readonly outliers: number;
  /** Seconds between rounds (default 10). */
  readonly roundSeconds?: number;
}

/** A round's observation of one node: the true curve at the load, plus noise and outliers. */
export function* synthetic(
  node: string,
  curve: TrueCurve,
  dimension: 'cpu' | 'mem',
  o: SyntheticOptions,
): Generator<NodeObservation> {
  const random = mulberry32(o.seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  for (let level = 0; level < o.levels; level++) {
    const base = o.low + (o.high - o.low) * random();
    for (let r = 0; r < o.roundsPerLevel; r++) {
      const load = Math.max(0, base + 0.004 * (random() - 0.5));
      const pressure = random() < o.outliers ? 100 * random() : clamp(curve(load) + o.noise * gauss());
      yield dimension === 'cpu'
        ? { node, cpuLoad: load, memLoad: 0.3, pressureCpu: pressure, pressureMem: 0 }
        : { node, cpuLoad: 0.3, memLoad: load, pressureCpu: 0, pressureMem: pressure };
    }
  }
}

/** A model that learned every observation of `rounds`, one per round, `roundSeconds` apart from `start`. */
export function learnAll(
  rounds: Iterable<NodeObservation | readonly NodeObservation[]>,
  from: ContentionModelState = emptyModel(),
  start = 0,
  roundSeconds = 10,
): ContentionModelState {
  let state = from;
  let t = start;
  for (const r of rounds) {
    state = observeNodes(state, t, Array.isArray(r) ? (r as NodeObservation[]) : [r as NodeObservation]);
    t += roundSeconds;
  }
  return state;
}
