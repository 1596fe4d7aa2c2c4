/**
 * How well `@poise/contention` predicts a node's cpu pressure after a move: per landed move of a
 * run under the load pressure model, a model learned from what the balancer saw until the move
 * (node load and reported PSI, every sample before it) predicts the cpu pressure of source and
 * target at the loads they show once the guest runs on the target; the realised pressure is the
 * load pressure model's PSI cpu some share at that sample (its ground truth: without the
 * average's noise or delay). The load after the move is the one measured, so the error is the
 * learned curve's, not an estimate of the guest's load. Pure.
 */
import { quantileSeq } from 'mathjs';
import { emptyModel, fitModel, observeNodes, type ContentionModelState, type NodeObservation } from '@poise/contention';
import type { RunTrace } from './trace';

/** One node's predicted and realised cpu pressure after one move. */
export interface PredictionPoint {
  readonly sid: string;
  /** The move's issue time, seconds. */
  readonly time: number;
  readonly node: string;
  readonly role: 'source' | 'target';
  /** The node's cpu curve family in the simulator (`cpuFamilies`). */
  readonly family: string;
  /** Predicted PSI cpu some, percent. */
  readonly predicted: number;
  /** The model's PSI cpu some share at the landing sample, percent. */
  readonly realised: number;
  /** `learned` (the node's own curve) or `usage` (the prior: too little history, no PSI). */
  readonly basis: 'learned' | 'usage';
}

/** What the balancer saw of the online nodes at sample `r` (loads as fractions, PSI in percent). */
function observations(trace: RunTrace, r: number): NodeObservation[] {
  const { rounds } = trace;
  const out: NodeObservation[] = [];
  trace.nodes.forEach((node, i) => {
    if (!rounds.online[i]![r]) return;
    out.push({
      node,
      cpuLoad: rounds.cpu[i]![r]!,
      memLoad: rounds.mem[i]![r]!,
      pressureCpu: rounds.pressureCpu[i]![r],
      pressureMem: rounds.pressureMem[i]![r],
    });
  });
  return out;
}

/**
 * Every prediction point of `trace`, in move order; empty without the load pressure model's
 * ground truth or the nodes' families. A move that failed, never landed, or landed on a node
 * that was offline then is left out. O(samples · nodes + moves · fit).
 */
export function predictionPoints(trace: RunTrace): PredictionPoint[] {
  const { rounds, cpuFamilies } = trace;
  const truth = rounds.truth;
  if (!truth || !cpuFamilies) return [];
  const column = new Map(trace.nodes.map((n, i) => [n, i]));
  const out: PredictionPoint[] = [];
  let state: ContentionModelState = emptyModel();
  let learned = 0;
  for (const m of trace.moves) {
    if (m.ok !== true || m.landedAt == null) continue;
    // learn every sample the balancer had seen when it issued the move
    while (learned < rounds.time.length && rounds.time[learned]! <= m.time) {
      state = observeNodes(state, rounds.time[learned]!, observations(trace, learned));
      learned++;
    }
    const a = rounds.time.indexOf(m.landedAt);
    if (a < 0) continue;
    const model = fitModel(state);
    for (const [role, node] of [
      ['source', m.source],
      ['target', m.target],
    ] as const) {
      const i = column.get(node)!;
      if (!rounds.online[i]![a]) continue;
      const p = model.predict(node, 'cpu', rounds.cpu[i]![a]!);
      out.push({
        sid: m.sid,
        time: m.time,
        node,
        role,
        family: cpuFamilies[i]!,
        predicted: p.percent,
        realised: truth.cpuSome[i]![a]!,
        basis: p.basis,
      });
    }
  }
  return out;
}

/** Absolute errors of a set of points, per family: count, median and 90th percentile (pp). */
export interface PredictionErrorStats {
  readonly family: string;
  readonly n: number;
  /** Points predicted from the usage-based prior (no learned curve). */
  readonly usage: number;
  readonly median: number;
  readonly p90: number;
  readonly max: number;
}

/** Per family (in first-seen order) the absolute prediction errors' statistics; families without points are absent. */
export function predictionErrorStats(points: readonly PredictionPoint[]): PredictionErrorStats[] {
  const byFamily = new Map<string, PredictionPoint[]>();
  for (const p of points) {
    const list = byFamily.get(p.family) ?? [];
    list.push(p);
    byFamily.set(p.family, list);
  }
  return [...byFamily].map(([family, list]) => {
    const errors = list.map((p) => Math.abs(p.predicted - p.realised)).sort((x, y) => x - y);
    return {
      family,
      n: list.length,
      usage: list.filter((p) => p.basis === 'usage').length,
      // the quantiles of the lab's statistics (mathjs, type 7)
      median: Number(quantileSeq(errors, 0.5, true)),
      p90: Number(quantileSeq(errors, 0.9, true)),
      max: errors[errors.length - 1]!,
    };
  });
}
