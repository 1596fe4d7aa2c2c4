/**
 * How long a hot spell lasts, learned from a node's own history: the horizon over which a
 * move's saving is counted. Pure maths.
 */
import { ContentionError, showValue } from './errors';
import { median } from './robust';

/**
 * Spells a node must have shown before its own history sets its horizon: with fewer, the
 * median of one or two spells says little (judgement), and the default holds.
 */
export const HORIZON_MIN_SPELLS = 3;
/** The newest spells kept per node: the horizon follows a node whose workload changes (judgement: a few days of spells). */
export const HORIZON_SPELLS_KEPT = 9;
/** The learned horizon is kept within these bounds, seconds: a round's worth at least (60 s), a day at most. */
const HORIZON_BOUNDS = [60, 86_400] as const;

/**
 * The horizon of a node: the median of its last {@link HORIZON_SPELLS_KEPT} hot spells'
 * durations (seconds) once it has shown `HORIZON_MIN_SPELLS`, within
 * `HORIZON_BOUNDS`; `fallbackSeconds` before. The median, not the mean: one spell that
 * lasted all night does not make every move look worth it. Throws `invalid-argument` for a
 * duration that is not a finite number ≥ 0 (naming its index) or a bad fallback.
 */
export function spellHorizon(durations: readonly number[], fallbackSeconds: number): number {
  if (typeof fallbackSeconds !== 'number' || !Number.isFinite(fallbackSeconds) || !(fallbackSeconds > 0))
    throw new ContentionError(
      'invalid-argument',
      `fallbackSeconds must be a finite number > 0, got ${showValue(fallbackSeconds)}`,
    );
  if (!Array.isArray(durations))
    throw new ContentionError('invalid-argument', `durations must be an array, got ${showValue(durations)}`);
  durations.forEach((d, i) => {
    if (typeof d !== 'number' || !Number.isFinite(d) || d < 0)
      throw new ContentionError(
        'invalid-argument',
        `durations.${i} must be a finite number of seconds >= 0, got ${showValue(d)}`,
      );
  });
  if (durations.length < HORIZON_MIN_SPELLS) return fallbackSeconds;
  const m = median(durations.slice(-HORIZON_SPELLS_KEPT));
  return Math.min(HORIZON_BOUNDS[1], Math.max(HORIZON_BOUNDS[0], m));
}
