/**
 * The curve families the learner fits to a node's points, the usage-based prior, and the fit
 * itself (one module: the fit evaluates curves in its inner loop).
 */
import { LOAD_BIN_WIDTH, LOAD_MAX } from './constants';
import { isotonicMedians, weightedMedianOf } from './robust';

/** A learned point counts as part of the curve's rise from this pressure on (percent); below it is idle noise. */
const RISE_FLOOR_PERCENT = 2;

/**
 * A monotone curve `percent = min(100, scale · max(0, load − knee)^exponent)`: zero up to the
 * knee, then rising (linearly for exponent 1, ever steeper above). One of the families the
 * learner fits to a node's points, and the shape of the usage-based prior.
 */
export interface HingeCurve {
  readonly family: 'hinge';
  /** Load (fraction) where the pressure starts to rise, ≥ 0. */
  readonly knee: number;
  /** 1, 1.5, 2 or 3. */
  readonly exponent: number;
  /** Percent per unit of `(load − knee)^exponent`, > 0. */
  readonly scale: number;
}

/**
 * A logistic step `percent = 100 / (1 + e^(−(load − centre) / width))`: a queue that forms
 * around `centre` and saturates (all work waits) above it. The other family the learner fits.
 */
export interface LogisticCurve {
  readonly family: 'logistic';
  /** Load (fraction) at which half of the time some work waits. */
  readonly centre: number;
  /** Load (fraction, > 0) over which the step rises by a factor e in odds. */
  readonly width: number;
}

/** A monotone pressure curve of load: one of the families the learner fits. */
export type PressureCurve = HingeCurve | LogisticCurve;

/** The hinge exponents the fit tries (linear, between, quadratic, cubic: a cpu queue to a memory cliff). */
const HINGE_EXPONENTS = [1, 1.5, 2, 3] as const;

/** The logistic widths the fit tries (fractions of load: a sharp to a gradual step). */
const LOGISTIC_WIDTHS = [0.02, 0.03, 0.05, 0.08, 0.12, 0.2] as const;

/** Step of the knees and centres the fit tries (fraction of load), from 0 to the highest observed load. */
const CURVE_GRID_STEP = 0.02;

/**
 * The fit looks for a hinge's knee from this far (fraction of load) below the last point
 * without pressure up to the first point with it: a knee further down would have shown as
 * pressure at that quiet point.
 */
const KNEE_SEARCH_SPAN = 0.2;

/** How far (fraction of load) from the points' 50 % crossing the fit looks for a logistic step's centre. */
const LOGISTIC_CENTRE_SPAN = 0.1;

/** A hinge curve through `percentAtFull` at load 1 (the prior's parametrisation). */
function hingeThrough(knee: number, exponent: number, percentAtFull: number): HingeCurve {
  return { family: 'hinge', knee, exponent, scale: percentAtFull / (1 - knee) ** exponent };
}

/**
 * The usage-based prediction: pressure from the load alone, for nodes without (enough) PSI
 * history, and the shape the learner extrapolates with until a node's own curve shows its
 * rise. Judgement, not measurement (the simulator's model families are hidden from the
 * policy on purpose):
 *
 * - cpu: knee at 70 % of the cores, quadratic, 50 % at full load (5.6 % at 80 %, 22 % at 90 %):
 *   a run queue forms well before every core is busy, and work waits half of the time once
 *   the demand meets the cores;
 * - memory: knee at 85 %, quadratic, 60 % at full (6.7 % at 90 %, 27 % at 95 %): reclaim
 *   starts late and then stalls steeply (memory pressure "arrives late and is much more
 *   serious").
 */
export const USAGE_PRIOR: { readonly cpu: HingeCurve; readonly mem: HingeCurve } = {
  cpu: hingeThrough(0.7, 2, 50),
  mem: hingeThrough(0.85, 2, 60),
};

/**
 * The steepest rise a node is expected to show, for the confidence of an extrapolation: cpu a
 * line from 25 % of the cores to 100 % pressure at 75 % (2 points per percent of load), memory
 * from 50 % to 100 % at 90 % (2.5 points per percent). Beyond the loads a node was seen at, its
 * pressure is taken to lie between the prediction and the end point moved along this envelope
 * (the predictions themselves never use it). Judgement, like the prior.
 */
export const STEEPEST_RISE: { readonly cpu: HingeCurve; readonly mem: HingeCurve } = {
  cpu: { family: 'hinge', knee: 0.25, exponent: 1, scale: 200 },
  mem: { family: 'hinge', knee: 0.5, exponent: 1, scale: 250 },
};

/** Evaluates a curve at `load` (any finite number): a percentage in 0..100. */
export function curveAt(curve: PressureCurve, load: number): number {
  if (curve.family === 'logistic') return 100 / (1 + Math.exp(-(load - curve.centre) / curve.width));
  const over = load - curve.knee;
  if (!(over > 0)) return 0;
  const value = curve.scale * over ** curve.exponent;
  return value < 100 ? value : 100;
}

/**
 * The monotone curve closest to the points in weighted absolute error (robust to a bad
 * point), over two families on a grid of `CURVE_GRID_STEP`: hinge curves (every exponent of
 * `HINGE_EXPONENTS`, the knee from `KNEE_SEARCH_SPAN` below the last quiet point up to the
 * first point of the rise, the scale by weighted median: the L1 optimum for a fixed knee and
 * exponent) and logistic steps (every width of `LOGISTIC_WIDTHS`, the centre within
 * `LOGISTIC_CENTRE_SPAN` of where the points cross 50 %, or, when they never do, from that span
 * below the highest point to three spans above it). A point is quiet below
 * `RISE_FLOOR_PERCENT` and part of the rise at or above it, judged on the points made
 * monotone (a spoilt point does not move the search). `undefined` unless at least two points,
 * `2 · LOAD_BIN_WIDTH` apart, are part of the rise: before that the data cannot tell a knee.
 * Deterministic: the first best in the order hinge (exponent, knee), then logistic (width,
 * centre). Points ascending in load, weights > 0.
 */
export function fitCurveFamily(
  loads: readonly number[],
  pressures: readonly number[],
  weights: readonly number[],
): PressureCurve | undefined {
  return fitCurveFamilyWith(loads, pressures, weights, undefined);
}

/** The knees (`i · CURVE_GRID_STEP`) a {@link FitTables} table holds: every grid knee up to `LOAD_MAX`. */
const POWER_KNEES = Math.ceil(LOAD_MAX / CURVE_GRID_STEP) + 1;

/** The hinge exponents other than 1, whose powers a {@link FitTables} table keeps. */
const POWERED = HINGE_EXPONENTS.filter((e) => e !== 1);

/**
 * Where a point keeps its `(load − i · CURVE_GRID_STEP) ** exponent` for the grid knees `i` and
 * the hinge exponents other than 1 (and its logistic values): a table made on the point's first
 * fit, each value worked out on first use (NaN: not yet). A node's points change one at a time between fits
 * (one bin learns a sample), so the table kept with a point serves every later fit it takes
 * part in; the values are the very ones the fit would compute (a fit spends most of its time
 * on these powers otherwise).
 */
export interface FitTables {
  powers?: Float64Array;
  /** Likewise the logistic steps' values at the point, by width and grid centre (up to `LOGISTIC_CENTRES`). */
  logistic?: Float64Array;
}

/** The grid centres a point's logistic table holds: up to three spans above the highest load. */
const LOGISTIC_CENTRES = Math.ceil((LOAD_MAX + 3 * LOGISTIC_CENTRE_SPAN) / CURVE_GRID_STEP) + 1;

/**
 * {@link fitCurveFamily}, with each point's powers taken from (and kept in) `powers[j]` when
 * given (see {@link FitTables}): the same curve.
 */
export function fitCurveFamilyWith(
  loads: readonly number[],
  pressures: readonly number[],
  weights: readonly number[],
  powers: readonly FitTables[] | undefined,
): PressureCurve | undefined {
  const n = loads.length;
  const monotone = isotonicMedians(pressures.map((p) => [p]));
  const first = monotone.findIndex((p) => p >= RISE_FLOOR_PERCENT);
  if (first < 0) return undefined;
  let lastRising = first;
  for (let j = first; j < n; j++) if (monotone[j]! >= RISE_FLOOR_PERCENT) lastRising = j;
  if (lastRising === first || loads[lastRising]! - loads[first]! < 2 * LOAD_BIN_WIDTH - 1e-12) return undefined;
  const top = loads[n - 1]!;
  const quiet = first > 0 ? loads[first - 1]! : Math.max(0, loads[0]! - KNEE_SEARCH_SPAN);
  const gridFrom = (load: number) => Math.max(0, Math.floor(load / CURVE_GRID_STEP));
  let best: PressureCurve | undefined;
  let bestLoss = Infinity;
  // hinge: for each (exponent, knee) the L1-optimal scale, then the loss (the curve inlined)
  const shape = new Float64Array(n);
  const ratios = new Float64Array(n);
  const ratioWeights = new Float64Array(n);
  for (const exponent of HINGE_EXPONENTS) {
    const row = POWERED.indexOf(exponent as (typeof POWERED)[number]) * POWER_KNEES;
    for (let i = gridFrom(quiet - KNEE_SEARCH_SPAN); i * CURVE_GRID_STEP < loads[first]!; i++) {
      const knee = i * CURVE_GRID_STEP;
      const slot = powers !== undefined && row >= 0 && i < POWER_KNEES ? row + i : -1;
      let m = 0;
      for (let j = 0; j < n; j++) {
        const over = loads[j]! - knee;
        let g = 0;
        if (over > 0) {
          if (exponent === 1) g = over;
          else if (slot < 0) g = over ** exponent;
          else {
            const holder = powers![j]!;
            const table = (holder.powers ??= new Float64Array(POWERED.length * POWER_KNEES).fill(Number.NaN));
            g = table[slot]!;
            if (g !== g) g = table[slot] = over ** exponent;
          }
        }
        shape[j] = g;
        if (g > 0) {
          ratios[m] = pressures[j]! / g;
          ratioWeights[m++] = weights[j]! * g;
        }
      }
      if (m === 0) continue;
      const scale = weightedMedianOf(ratios, ratioWeights, m);
      if (!(scale > 0) || !Number.isFinite(scale)) continue;
      let loss = 0;
      // every term is ≥ 0: once the sum reaches the best loss this curve cannot win (as below)
      for (let j = 0; j < n && loss < bestLoss; j++) {
        const value = scale * shape[j]!;
        loss += weights[j]! * Math.abs(pressures[j]! - (value < 100 ? value : 100));
      }
      if (loss < bestLoss - 1e-9) {
        bestLoss = loss;
        best = { family: 'hinge', knee, exponent, scale };
      }
    }
  }
  // logistic: the centre is where the points cross 50 %, within LOGISTIC_CENTRE_SPAN; when they
  // never reach it, above the highest point (the step has not been seen whole yet)
  const half = monotone.findIndex((p) => p >= 50);
  const from = half >= 0 ? loads[half]! - LOGISTIC_CENTRE_SPAN : Math.max(quiet, top - LOGISTIC_CENTRE_SPAN);
  const to = half >= 0 ? loads[half]! + LOGISTIC_CENTRE_SPAN : top + 3 * LOGISTIC_CENTRE_SPAN;
  for (let w = 0; w < LOGISTIC_WIDTHS.length; w++) {
    const width = LOGISTIC_WIDTHS[w]!;
    for (let i = gridFrom(from); i * CURVE_GRID_STEP <= to; i++) {
      const centre = i * CURVE_GRID_STEP;
      const slot = powers !== undefined && i < LOGISTIC_CENTRES ? w * LOGISTIC_CENTRES + i : -1;
      let loss = 0;
      for (let j = 0; j < n && loss < bestLoss; j++) {
        let value: number;
        if (slot < 0) value = 100 / (1 + Math.exp(-(loads[j]! - centre) / width));
        else {
          const holder = powers![j]!;
          const table = (holder.logistic ??= new Float64Array(LOGISTIC_WIDTHS.length * LOGISTIC_CENTRES).fill(
            Number.NaN,
          ));
          value = table[slot]!;
          if (value !== value) value = table[slot] = 100 / (1 + Math.exp(-(loads[j]! - centre) / width));
        }
        loss += weights[j]! * Math.abs(pressures[j]! - value);
      }
      if (loss < bestLoss - 1e-9) {
        bestLoss = loss;
        best = { family: 'logistic', centre, width };
      }
    }
  }
  return best;
}
