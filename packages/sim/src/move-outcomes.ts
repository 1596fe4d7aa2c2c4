/**
 * What each balancer move did to the pressure of its source and target, from a recorded run
 * under the load pressure model: the yardstick for a policy that predicts a move's effect
 * (prediction vs realisation, per move). Pure; O(moves × log samples).
 */
import type { RunRecord } from './summary';

/** A node's pressure at one sample: the model's PSI some shares, percent (noise-free, without the average's delay). */
interface NodePressurePoint {
  readonly cpu: number;
  readonly mem: number;
}

/** What a node reported at one sample (PSI some avg10, percent); null when it reported none. */
interface ReportedPressurePoint {
  readonly cpu: number | null;
  readonly mem: number | null;
}

/** One landed resource move and the pressure of its two nodes before and after it. */
export interface MoveOutcome {
  readonly sid: string;
  /** When the balancer issued it, seconds. */
  readonly time: number;
  readonly source: string;
  readonly target: string;
  /** The first sample at which the resource ran on the target, seconds. */
  readonly landedAt: number;
  /** At the last sample at or before `time`: what the balancer's round saw happen. */
  readonly before: { readonly source: NodePressurePoint; readonly target: NodePressurePoint };
  /** At the sample `landedAt`: the state with the resource on the target (other changes of that round included). */
  readonly after: { readonly source: NodePressurePoint; readonly target: NodePressurePoint };
  /**
   * What the nodes reported at the sample after `landedAt` (the reported average lags the state
   * by a round); null when the run ended first.
   */
  readonly reportedAfter: { readonly source: ReportedPressurePoint; readonly target: ReportedPressurePoint } | null;
}

/** Index of the last sample at or before `t` (−1 when none). */
function sampleAt(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid]! <= t) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/**
 * Every successful resource move of `run` that landed (`landedAt` a sample time), in issue order,
 * with the model's pressure of source and target before and after it. `undefined` when the run
 * has no load pressure model (`rounds.truth` absent): there is no ground truth to compare with.
 */
export function moveOutcomes(run: RunRecord): MoveOutcome[] | undefined {
  const truth = run.rounds.truth;
  if (!truth) return undefined;
  const times = run.rounds.time;
  const column = new Map(run.nodes.map((n, i) => [n, i]));
  const point = (node: string, r: number): NodePressurePoint => {
    const i = column.get(node)!;
    return { cpu: truth.cpuSome[i]![r]!, mem: truth.memSome[i]![r]! };
  };
  const reported = (node: string, r: number): ReportedPressurePoint => {
    const i = column.get(node)!;
    return { cpu: run.rounds.pressureCpu[i]![r] ?? null, mem: run.rounds.pressureMem[i]![r] ?? null };
  };
  const out: MoveOutcome[] = [];
  for (const m of run.moves) {
    if (m.ok !== true || m.landedAt == null || !column.has(m.source) || !column.has(m.target)) continue;
    const b = sampleAt(times, m.time);
    const a = sampleAt(times, m.landedAt);
    if (b < 0 || a < 0 || times[a] !== m.landedAt) continue;
    out.push({
      sid: m.sid,
      time: m.time,
      source: m.source,
      target: m.target,
      landedAt: m.landedAt,
      before: { source: point(m.source, b), target: point(m.target, b) },
      after: { source: point(m.source, a), target: point(m.target, a) },
      reportedAfter:
        a + 1 < times.length ? { source: reported(m.source, a + 1), target: reported(m.target, a + 1) } : null,
    });
  }
  return out;
}
