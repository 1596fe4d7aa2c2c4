import {
  CONFIDENCE_SAMPLES,
  EXTRAPOLATION_SCALE,
  LOAD_BINS,
  MIN_SAMPLES,
  NEAR_BINS,
  OUTLIER_DEVIATIONS,
  OUTLIER_MIN_PERCENT,
  PRIOR_SHAPE_FACTOR,
  USAGE_CONFIDENCE,
} from './constants';
import { type FitTables, type PressureCurve, STEEPEST_RISE, USAGE_PRIOR, curveAt, fitCurveFamilyWith } from './curves';
import { ContentionError, showValue } from './errors';
import { binOf } from './learn';
import { isotonicSortedMedians, median, sortedCopy } from './robust';
import type { BinState, ContentionModelState, CurveState, NodeModelState } from './state';

/** A pressure dimension: PSI cpu some or PSI memory some. */
export type PressureDimension = 'cpu' | 'mem';

/**
 * Why a prediction is what it is:
 * - `in-range`: the node's learned curve, at a load it has been observed near;
 * - `extrapolated`: the node's learned curve extended beyond the loads it has been observed at,
 *   with the shape of its fitted curve (or of the usage prior until its rise shows);
 * - `too-little-history`: the node reports this pressure but fewer than `MIN_SAMPLES` settled
 *   samples were learned: the usage-based prior;
 * - `no-psi`: the node never reported this pressure: the usage-based prior;
 * - `unknown-node`: the model never observed the node: the usage-based prior.
 */
export type PredictionReason = 'in-range' | 'extrapolated' | 'too-little-history' | 'no-psi' | 'unknown-node';

/** A predicted pressure and how far to trust it. */
export interface PressurePrediction {
  /** PSI some avg10 the node is predicted to show at the load, percent 0..100. */
  readonly percent: number;
  /** 0..1: grows with the samples learned near the load, decays beyond the observed loads; `USAGE_CONFIDENCE` for the prior. */
  readonly confidence: number;
  /** `learned` (the node's own curve) or `usage` (the usage-based prior: the model cannot know). */
  readonly basis: 'learned' | 'usage';
  readonly reason: PredictionReason;
}

/** A node's learned curve as the predictions use it (for explanations and tests). */
export interface CurveSummary {
  /** Samples ever learned (the bins' counts summed). */
  readonly samples: number;
  /** The monotone points: each bin's median load and its isotonic pressure, ascending. */
  readonly loads: readonly number[];
  readonly pressures: readonly number[];
  /** The curve fitted to the points (robust, L1; see `fitCurveFamily`), or `undefined` while the rise has not shown. */
  readonly fit: PressureCurve | undefined;
}

/** Predictions from a learned model (see {@link fitModel}). */
export interface FittedModel {
  /** Nodes the model knows, byte order. */
  readonly nodes: readonly string[];
  /**
   * The pressure `node` is predicted to show at `load` (a fraction of its capacity: a finite
   * number ≥ 0). Never throws for an unknown node (usage prior, reason `unknown-node`); throws
   * {@link ContentionError} `invalid-argument` for a bad load or dimension.
   */
  predict(node: string, dimension: PressureDimension, load: number): PressurePrediction;
  /** The learned curve used for `node`'s `dimension`, or `undefined` when the prediction falls back to the prior. */
  curve(node: string, dimension: PressureDimension): CurveSummary | undefined;
}

interface Fitted extends CurveSummary {
  /** First and last bin index with samples. */
  readonly firstBin: number;
  readonly lastBin: number;
  /** Prefix sums of the bins' counts over all LOAD_BINS bins (length LOAD_BINS + 1). */
  readonly cumulative: Float64Array;
  /** The shape predictions follow between and beyond the points: `fit`, else the prior's. */
  readonly shape: PressureCurve;
  /** The curve's dimension (for its `STEEPEST_RISE`). */
  readonly dimension: PressureDimension;
  /** The bin of each point. */
  readonly pointBins: readonly number[];
  /** `shape` at each point's load (what the interpolation between two points scales by). */
  readonly shapeAt: Float64Array;
}

/** What the fit reads of a bin, worked out once per bin (a bin is never changed: learning replaces it). */
interface BinSummary extends FitTables {
  /** The median of its loads and of its pressures. */
  readonly load: number;
  readonly pressure: number;
  /** Its pressures sorted ascending (for the isotonic medians). */
  readonly sortedPressures: readonly number[];
}

const BIN_SUMMARIES = new WeakMap<BinState, BinSummary>();

function summaryOf(bin: BinState): BinSummary {
  let summary = BIN_SUMMARIES.get(bin);
  if (!summary) {
    summary = {
      load: median(bin.loads),
      pressure: median(bin.pressures),
      sortedPressures: sortedCopy(bin.pressures),
      powers: undefined,
      logistic: undefined,
    };
    BIN_SUMMARIES.set(bin, summary);
  }
  return summary;
}

/** The confidence of the samples in the bins within NEAR_BINS of `bin`: `n / (n + CONFIDENCE_SAMPLES)`. */
function confidenceNear(f: Fitted, bin: number): number {
  const lo = Math.max(0, bin - NEAR_BINS);
  const hi = Math.min(LOAD_BINS - 1, bin + NEAR_BINS);
  const n = f.cumulative[hi + 1]! - f.cumulative[lo]!;
  return n / (n + CONFIDENCE_SAMPLES);
}

/**
 * The bins to learn from: all of them, except those whose median lies far from the robust fit
 * (see `OUTLIER_DEVIATIONS`); never fewer than two, nor any when the fit is unknown.
 */
function inliers(loads: readonly number[], medians: readonly number[], fit: PressureCurve | undefined): boolean[] {
  const keep = loads.map(() => true);
  if (!fit) return keep;
  const residuals = loads.map((x, j) => Math.abs(medians[j]! - curveAt(fit, x)));
  const spread = 1.4826 * median(residuals);
  const limit = Math.max(OUTLIER_MIN_PERCENT, OUTLIER_DEVIATIONS * spread);
  const kept = residuals.filter((r) => r <= limit).length;
  if (kept < 2) return keep;
  return residuals.map((r) => r <= limit);
}

function fitCurve(curve: CurveState, dimension: PressureDimension): Fitted | undefined {
  let samples = 0;
  for (const b of curve.bins) samples += b.count;
  if (curve.reportedAt === null || samples < MIN_SAMPLES || curve.bins.length === 0) return undefined;
  const all = curve.bins;
  const summaries = all.map(summaryOf);
  const allLoads = summaries.map((b) => b.load);
  const allPressures = summaries.map((b) => b.pressure);
  const fit = fitCurveFamilyWith(
    allLoads,
    allPressures,
    all.map((b) => b.loads.length),
    summaries,
  );
  const keep = inliers(allLoads, allPressures, fit);
  const bins = all.filter((_, j) => keep[j]);
  const loads = allLoads.filter((_, j) => keep[j]);
  const pressures = isotonicSortedMedians(summaries.filter((_, j) => keep[j]).map((b) => b.sortedPressures));
  const cumulative = new Float64Array(LOAD_BINS + 1);
  for (const b of bins) cumulative[b.index + 1] = b.count;
  for (let i = 1; i <= LOAD_BINS; i++) cumulative[i]! += cumulative[i - 1]!;
  const shape = fit ?? USAGE_PRIOR[dimension];
  return {
    samples,
    loads,
    pressures,
    fit,
    firstBin: bins[0]!.index,
    lastBin: bins[bins.length - 1]!.index,
    cumulative,
    shape,
    dimension,
    pointBins: bins.map((b) => b.index),
    shapeAt: Float64Array.from(loads, (x) => curveAt(shape, x)),
  };
}

/** The index of the point at or below `x` whose next point is at or above it (`x` within the points, at least two). */
function bracketOf(loads: readonly number[], x: number): number {
  let j = 0;
  while (j < loads.length - 2 && loads[j + 1]! < x) j++;
  return j;
}

/** `x` within the points: shape-preserving interpolation between the two neighbours. */
function between(f: Fitted, x: number): number {
  const { loads, pressures, shape, shapeAt } = f;
  const j = bracketOf(loads, x);
  const xa = loads[j]!;
  const xb = loads[j + 1]!;
  const ya = pressures[j]!;
  const yb = pressures[j + 1]!;
  const fa = shapeAt[j]!;
  const fb = shapeAt[j + 1]!;
  const t = fb - fa > 1e-9 ? (curveAt(shape, x) - fa) / (fb - fa) : xb > xa ? (x - xa) / (xb - xa) : 1;
  return ya + (yb - ya) * Math.min(1, Math.max(0, t));
}

function learned(f: Fitted, load: number): PressurePrediction {
  const { loads, pressures, shape } = f;
  const lo = loads[0]!;
  const hi = loads[loads.length - 1]!;
  let percent: number;
  if (load > hi)
    percent = Math.min(
      100,
      pressures[pressures.length - 1]! + Math.max(0, curveAt(shape, load) - f.shapeAt[loads.length - 1]!),
    );
  else if (load < lo) percent = Math.max(0, pressures[0]! - Math.max(0, f.shapeAt[0]! - curveAt(shape, load)));
  else percent = loads.length === 1 ? pressures[0]! : between(f, load);
  const bin = binOf(load);
  if (bin >= f.firstBin && bin <= f.lastBin) {
    // near samples, or, in a gap between two points, the monotone bracket: the pressure lies
    // between theirs, as sure as they are and as narrow as their difference
    let confidence = confidenceNear(f, bin);
    if (loads.length > 1 && load >= lo && load <= hi) {
      const j = bracketOf(loads, load);
      const ends = Math.min(confidenceNear(f, f.pointBins[j]!), confidenceNear(f, f.pointBins[j + 1]!));
      confidence = Math.max(confidence, ends * (1 - (pressures[j + 1]! - pressures[j]!) / 100));
    }
    return { percent, confidence, basis: 'learned', reason: 'in-range' };
  }
  // beyond the points the pressure can lie anywhere between the prediction and the end point
  // moved along the steepest expected rise (STEEPEST_RISE): the confidence loses that
  // interval's share of 100 %, less near the points and with a fitted shape
  const above = load > hi;
  const envelope = STEEPEST_RISE[f.dimension];
  const bound = above
    ? Math.min(100, pressures[pressures.length - 1]! + Math.max(0, curveAt(envelope, load) - curveAt(envelope, hi)))
    : Math.max(0, pressures[0]! - Math.max(0, curveAt(envelope, lo) - curveAt(envelope, load)));
  const room = Math.abs(bound - percent) / 100;
  const distance = above ? load - hi : lo - load;
  const kept = Math.exp(-distance / EXTRAPOLATION_SCALE) * (f.fit ? 1 : PRIOR_SHAPE_FACTOR);
  const confidence = confidenceNear(f, above ? f.lastBin : f.firstBin) * (1 - room * (1 - kept));
  return { percent, confidence, basis: 'learned', reason: 'extrapolated' };
}

/** The usage-based prediction: the prior curve of the load alone (see `USAGE_PRIOR`). */
function usagePrediction(dimension: PressureDimension, load: number, reason: PredictionReason): PressurePrediction {
  return { percent: curveAt(USAGE_PRIOR[dimension], load), confidence: USAGE_CONFIDENCE, basis: 'usage', reason };
}

function checkDimension(dimension: unknown): PressureDimension {
  if (dimension !== 'cpu' && dimension !== 'mem')
    throw new ContentionError('invalid-argument', `dimension must be 'cpu' or 'mem', got ${showValue(dimension)}`);
  return dimension;
}

/** Checks a load argument: a finite number ≥ 0 (a fraction of capacity). */
export function checkLoadArgument(load: unknown, field: string): number {
  if (typeof load !== 'number' || !Number.isFinite(load) || load < 0) {
    throw new ContentionError(
      'invalid-argument',
      `${field} must be a finite number >= 0 (a fraction of capacity), got ${showValue(load)}`,
    );
  }
  return load;
}

/**
 * The predictions of a learned state. Per node and dimension: the median load and pressure of
 * each bin's samples (robust to outliers), made monotone by isotonic regression; between those
 * points and beyond them the values follow the robust curve fit of the points (`fitCurveFamily`),
 * or the usage prior's shape until the node's rise shows. Where the node never reported the
 * pressure, or has fewer than `MIN_SAMPLES` samples, the usage-based prior answers, and the
 * prediction says so. Curves are fitted lazily, once, on first use. Pure and deterministic; `state` is read as immutable (as `observeNodes` makes it: a bin
 * that learns is replaced, never changed in place).
 */
export function fitModel(state: ContentionModelState): FittedModel {
  const nodes = new Map<string, FittedNode>();
  for (const n of state.nodes) nodes.set(n.node, { state: n, cpu: null, mem: null });
  return {
    nodes: state.nodes.map((n) => n.node),
    predict: (node, dimension, load) => {
      const dim = checkDimension(dimension);
      const x = checkLoadArgument(load, 'load');
      const entry = nodes.get(node);
      if (!entry) return usagePrediction(dim, x, 'unknown-node');
      const f = fittedCurve(entry, dim);
      if (f) return learned(f, x);
      return usagePrediction(dim, x, entry.state[dim].reportedAt === null ? 'no-psi' : 'too-little-history');
    },
    curve: (node, dimension) => {
      const entry = nodes.get(node);
      const f = entry ? fittedCurve(entry, checkDimension(dimension)) : undefined;
      return f ? { samples: f.samples, loads: f.loads, pressures: f.pressures, fit: f.fit } : undefined;
    },
  };
}

/** A node of a fitted model: its state and its curves, fitted on first use (`null` = not yet, `undefined` = the prior answers). */
interface FittedNode {
  readonly state: NodeModelState;
  cpu: Fitted | undefined | null;
  mem: Fitted | undefined | null;
}

function fittedCurve(entry: FittedNode, dimension: PressureDimension): Fitted | undefined {
  if (entry[dimension] === null) entry[dimension] = fitCurve(entry.state[dimension], dimension);
  return entry[dimension]!;
}
