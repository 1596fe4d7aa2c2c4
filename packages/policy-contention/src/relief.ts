import { type StateCheck, formatPercent } from '@poise/policy';
import type { NodePressureNow } from './objective';
import type { RecentMotion } from './pace';

/**
 * Whether a move relieved its source as predicted. PSI tells that a node's work waits, not
 * why: a node whose pressure comes from something else than its guests' load (a host process,
 * a storage stall, another tenant of the hardware) shows it again after the move, and the next
 * move off it would not help either. A confident prediction that missed says so; the source is
 * then left alone until its hot spell ends.
 */

/** A move the objective made, with what it predicted for the source (percent). */
export interface PredictedRelief {
  /** Seconds: when the move was decided. */
  readonly at: number;
  readonly resources: readonly string[];
  readonly source: string;
  readonly cpuBefore: number;
  readonly cpuAfter: number;
  readonly memBefore: number;
  readonly memAfter: number;
}

/** A source whose confident relief did not show: no move off it until its hot spell ends. */
export interface Unrelieved {
  readonly node: string;
  /** Seconds: when the miss was seen. */
  readonly at: number;
  /** Why, for the stop: `the move of vm:104 off node1 at 29320 left it at cpu 25.0% (predicted 2.0%)`. */
  readonly why: string;
}

/** A prediction is judged only when its source's fall was this sure (the lowest confidence of the source's predictions). */
export const JUDGED_CONFIDENCE = 0.5;

/**
 * The miss that counts, percentage points: the source shows more than the predicted pressure
 * after by at least this and by half the predicted fall (a fall of 26 points that shows 13 is
 * an error of the model's degree, one that shows none is not).
 */
const MISS_POINTS = 5;

/**
 * Judges the last move once it landed and settled (`settleSeconds` after its outcome): the
 * source's pressure now against what was predicted after. Returns the source if the relief
 * did not show in a dimension predicted to fall, `null` if it showed; `undefined` while the
 * move is not judged yet (not landed, not settled).
 */
export function judgeRelief(
  last: PredictedRelief,
  motions: readonly RecentMotion[],
  pressures: readonly NodePressureNow[],
  now: number,
  settleSeconds: number,
): Unrelieved | null | undefined {
  const landed = motions.find(
    (m) => m.at >= last.at && m.source === last.source && m.resources.join('\u0000') === last.resources.join('\u0000'),
  );
  if (!landed || now < landed.at + settleSeconds) return undefined;
  const shows = pressures.find((p) => p.node === last.source);
  if (!shows) return null;
  for (const [dim, before, after, now_] of [
    ['cpu', last.cpuBefore, last.cpuAfter, shows.cpu.percent],
    ['mem', last.memBefore, last.memAfter, shows.mem.percent],
  ] as const) {
    const fall = before - after;
    if (fall <= 0) continue;
    if (now_ - after >= Math.max(MISS_POINTS, fall / 2)) {
      const why =
        `the move of ${last.resources.join('+')} off ${last.source} at ${landed.at} left it at ${dim} ` +
        `${formatPercent(now_)} (predicted ${formatPercent(after)})`;
      return { node: last.source, at: now, why };
    }
  }
  return null;
}

/** A restored prediction (or `null`), checked field by field. */
export function checkPredicted(check: StateCheck, value: unknown, path: string): PredictedRelief | null {
  if (value === null || value === undefined) return null;
  const o = check.object(value, path);
  return {
    at: check.number(o.at, `${path}.at`),
    resources: check.array(o.resources, `${path}.resources`).map((r, i) => check.string(r, `${path}.resources.${i}`)),
    source: check.string(o.source, `${path}.source`),
    cpuBefore: check.number(o.cpuBefore, `${path}.cpuBefore`, { min: 0, max: 100 }),
    cpuAfter: check.number(o.cpuAfter, `${path}.cpuAfter`, { min: 0, max: 100 }),
    memBefore: check.number(o.memBefore, `${path}.memBefore`, { min: 0, max: 100 }),
    memAfter: check.number(o.memAfter, `${path}.memAfter`, { min: 0, max: 100 }),
  };
}

/** A restored list of unrelieved sources, checked field by field. */
export function checkUnrelieved(check: StateCheck, value: unknown, path: string): Unrelieved[] {
  if (value === undefined) return [];
  return check.array(value, path).map((v, i) => {
    const o = check.object(v, `${path}.${i}`);
    return {
      node: check.string(o.node, `${path}.${i}.node`),
      at: check.number(o.at, `${path}.${i}.at`),
      why: check.string(o.why, `${path}.${i}.why`),
    };
  });
}
