/**
 * The families of the load pressure model: how a node's PSI "some" share (the share of time at
 * least one task is stalled, 0..1) follows from its load ratio `x` (cpu demand / cores, or
 * memory in use / physical memory). Pure functions; every family is non-decreasing in `x`, 0
 * at `x` = 0 (piecewise: its first point), and at most its maximum. See the package README,
 * *Load pressure model*, for the formulas and why each family is there.
 */

/** `queue`: an M/M/k queue whose servers are the node's cores grouped by the load's burstiness. */
export interface QueueCurve {
  readonly family: 'queue';
  /**
   * How bursty the load is (≥ 1): the node behaves like k = ⌊cores / burstiness⌋ servers (at
   * least 1). 1 is Poisson arrivals on every core (the knee late and sharp); larger values move
   * the knee earlier and soften it, as bursts of many threads do.
   */
  readonly burstiness: number;
  /** The share reached at and above saturation (x ≥ 1), percent. */
  readonly maxPercent: number;
}

/** `logistic`: a smooth knee at `knee` of width `width`, normalised to 0 at x = 0. */
export interface LogisticCurve {
  readonly family: 'logistic';
  /** The load ratio of the curve's midpoint (> 0). */
  readonly knee: number;
  /** The curve's scale: from 12 % to 88 % of its rise in ±2 widths around the knee (> 0). */
  readonly width: number;
  /** The share approached far above the knee, percent. */
  readonly maxPercent: number;
}

/** `piecewise`: straight lines between measured points, flat after the last. */
export interface PiecewiseCurve {
  readonly family: 'piecewise';
  /** `[load ratio, percent]`, the first at ratio 0, ratios strictly increasing, percents non-decreasing. */
  readonly points: readonly (readonly [number, number])[];
}

/** One resource's curve. */
export type PressureCurve = QueueCurve | LogisticCurve | PiecewiseCurve;

/** The families, in the order the README lists them. */
export const CURVE_FAMILIES = ['queue', 'logistic', 'piecewise'] as const;
export type CurveFamily = (typeof CURVE_FAMILIES)[number];

/**
 * Erlang's C formula: the probability that an arrival waits in an M/M/k queue with `servers`
 * servers (an integer ≥ 1) and offered load `offered` (Erlangs, 0 ≤ offered < servers). Computed
 * through Erlang B's recursion B(0) = 1, B(j) = A·B(j−1) / (j + A·B(j−1)), then
 * C = k·B / (k − A·(1 − B)), which stays finite and exact to rounding for any k (no factorials).
 * O(k).
 */
export function erlangC(servers: number, offered: number): number {
  if (!(offered > 0)) return 0;
  if (offered >= servers) return 1;
  let b = 1;
  for (let j = 1; j <= servers; j++) b = (offered * b) / (j + offered * b);
  return (servers * b) / (servers - offered * (1 - b));
}

/** Servers of the `queue` family for a node of `cores` (already scaled by its capacity factor). */
export function queueServers(cores: number, burstiness: number): number {
  return Math.max(1, Math.floor(cores / burstiness));
}

/**
 * The `queue` family: the time-average probability that at least one task waits in an M/M/k
 * queue at utilisation x, P(N > k) = x · C(k, x·k), times `maxPercent` / 100; `maxPercent` / 100
 * from x ≥ 1 on (the queue no longer drains: some task always waits).
 */
export function queueShare(x: number, cores: number, curve: QueueCurve): number {
  const max = curve.maxPercent / 100;
  if (!(x > 0)) return 0;
  if (x >= 1) return max;
  const k = queueServers(cores, curve.burstiness);
  return max * x * erlangC(k, x * k);
}

function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

/**
 * The `logistic` family: s(x) = max · (σ((x − knee)/width) − σ(−knee/width)) / (1 − σ(−knee/width)),
 * σ(z) = 1 / (1 + e^−z): 0 at x = 0, half of its rise at the knee, approaching `maxPercent` / 100.
 */
export function logisticShare(x: number, curve: LogisticCurve): number {
  if (!(x > 0)) return 0;
  const floor = sigmoid(-curve.knee / curve.width);
  return ((curve.maxPercent / 100) * (sigmoid((x - curve.knee) / curve.width) - floor)) / (1 - floor);
}

/** The `piecewise` family: linear interpolation between the points, the last point's value beyond it. */
export function piecewiseShare(x: number, curve: PiecewiseCurve): number {
  const pts = curve.points;
  if (!(x > pts[0]![0])) return pts[0]![1] / 100;
  for (let i = 1; i < pts.length; i++) {
    const [x1, y1] = pts[i]!;
    if (x <= x1) {
      const [x0, y0] = pts[i - 1]!;
      return (y0 + ((y1 - y0) * (x - x0)) / (x1 - x0)) / 100;
    }
  }
  return pts[pts.length - 1]![1] / 100;
}

/**
 * A curve's PSI "some" share (0..1) at load ratio `x` on a node of `cores` (the `queue` family's
 * servers depend on them; the others ignore them).
 */
export function curveShare(curve: PressureCurve, x: number, cores: number): number {
  switch (curve.family) {
    case 'queue':
      return queueShare(x, cores, curve);
    case 'logistic':
      return logisticShare(x, curve);
    case 'piecewise':
      return piecewiseShare(x, curve);
  }
}
