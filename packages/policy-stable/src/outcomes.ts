import type { MotionOutcome } from '@poise/policy';

/**
 * The outcomes not seen before: those reported after `lastOutcomeAt` (all when `null`), in the
 * order reported, and the new watermark. A host that reports an outcome twice (same `at`) or
 * replays old ones after a restart is ignored; outcome times must not go backwards.
 */
export function freshOutcomes(
  outcomes: readonly MotionOutcome[],
  lastOutcomeAt: number | null,
): { fresh: MotionOutcome[]; lastOutcomeAt: number | null } {
  const fresh = lastOutcomeAt === null ? [...outcomes] : outcomes.filter((o) => o.at > lastOutcomeAt);
  let last = lastOutcomeAt;
  for (const o of fresh) if (last === null || o.at > last) last = o.at;
  return { fresh, lastOutcomeAt: last };
}
