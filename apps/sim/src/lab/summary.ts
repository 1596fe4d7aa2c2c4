import type { RunTrace, TraceMove } from './trace';
import { byteCompare } from './trace';

/** A resource moved back to a node it left at most this many seconds earlier is a ping-pong. */
export const PING_PONG_WINDOW_SECONDS = 1800;
/** A node counts as under pressure while its cpu or memory PSI "some" avg10 reaches this (percent). */
export const PRESSURE_THRESHOLD_PERCENT = 10;

/**
 * The summary metrics of one run (the JSON of `poise-sim summary`, issue 8). Keys in this order.
 */
export interface RunSummary {
  /** Motions the balancer issued (one per resource, failed ones included). */
  moves: number;
  /** Motions that failed or were refused (`ok === false`; in-flight ones are not failures). */
  failedMoves: number;
  /** Motions per resource, sids in byte order. */
  movesBySid: Record<string, number>;
  /** Successful moves that brought a resource back to a node it left ≤ 30 min earlier. */
  pingPongs: number;
  /** Time-weighted mean of the imbalance (0..1) over [first sample, end]; null without samples or duration. */
  imbalanceTimeWeighted: number | null;
  /** Node-seconds under pressure (cpu or memory PSI ≥ 10 %); null when the trace has no pressure telemetry. */
  pressureSeconds: number | null;
  /** Simulated seconds of the run. */
  simSeconds: number;
}

/**
 * Count of ping-pongs: successful moves of a resource to a node it left (by an earlier
 * successful move) at most `window` seconds before. Failed and in-flight moves neither leave
 * nor arrive. Each returning move counts once.
 */
export function countPingPongs(moves: readonly TraceMove[], window = PING_PONG_WINDOW_SECONDS): number {
  // sid → node → time the resource last left that node
  const left = new Map<string, Map<string, number>>();
  let count = 0;
  for (const m of moves) {
    if (m.ok !== true) continue;
    let bySid = left.get(m.sid);
    if (!bySid) left.set(m.sid, (bySid = new Map()));
    const t = bySid.get(m.target);
    if (t !== undefined && m.time - t <= window) count++;
    bySid.set(m.source, m.time);
  }
  return count;
}

/**
 * Time-weighted mean of a step function: `values[r]` holds from `times[r]` until
 * `times[r + 1]` (the last until `end`). Null when there is no sample or no elapsed time.
 */
export function timeWeightedMean(times: readonly number[], values: readonly number[], end: number): number | null {
  const n = times.length;
  if (n === 0) return null;
  const duration = end - times[0]!;
  if (!(duration > 0)) return null;
  let acc = 0;
  for (let r = 0; r < n; r++) {
    const until = r + 1 < n ? times[r + 1]! : end;
    acc += values[r]! * (until - times[r]!);
  }
  return acc / duration;
}

/**
 * Node-seconds under pressure: for each sample interval, its length × the number of nodes
 * whose cpu or memory pressure (when reported) reaches `threshold`. Null without telemetry.
 */
export function pressureSeconds(trace: RunTrace, threshold = PRESSURE_THRESHOLD_PERCENT): number | null {
  const { time, pressureCpu, pressureMem } = trace.rounds;
  if (pressureCpu === undefined && pressureMem === undefined) return null;
  let acc = 0;
  for (let r = 0; r < time.length; r++) {
    const dt = (r + 1 < time.length ? time[r + 1]! : trace.endTime) - time[r]!;
    let under = 0;
    for (let i = 0; i < trace.nodes.length; i++) {
      const c = pressureCpu?.[i]?.[r];
      const m = pressureMem?.[i]?.[r];
      if ((c != null && c >= threshold) || (m != null && m >= threshold)) under++;
    }
    acc += dt * under;
  }
  return acc;
}

/** The summary metrics of a (validated) trace. Pure; O(rounds × nodes + moves). */
export function summarize(trace: RunTrace): RunSummary {
  const bySid = new Map<string, number>();
  let failed = 0;
  for (const m of trace.moves) {
    bySid.set(m.sid, (bySid.get(m.sid) ?? 0) + 1);
    if (m.ok === false) failed++;
  }
  const movesBySid: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const sid of [...bySid.keys()].sort(byteCompare)) movesBySid[sid] = bySid.get(sid)!;
  return {
    moves: trace.moves.length,
    failedMoves: failed,
    movesBySid,
    pingPongs: countPingPongs(trace.moves),
    imbalanceTimeWeighted: timeWeightedMean(trace.rounds.time, trace.rounds.imbalance, trace.endTime),
    pressureSeconds: pressureSeconds(trace),
    simSeconds: trace.endTime,
  };
}
