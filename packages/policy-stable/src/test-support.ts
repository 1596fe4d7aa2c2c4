// Fixture builders for this package's tests (not exported from the package).
import type { BalanceCandidate, BalanceContext, MotionOutcome, Plan, ScoredMigration, Stage, StageOutcome } from '@poise/policy';

export const GIB = 1024 ** 3;

/** A context whose values are fixed; `score` returns `scored` cut to the limit. */
export function fixedContext(over: Partial<BalanceContext> & { scored?: ScoredMigration[]; imbalanceValue?: number } = {}): BalanceContext {
  const { scored = [], imbalanceValue = 0.5, ...rest } = over;
  return {
    now: 100,
    motionInFlight: false,
    imbalance: () => imbalanceValue,
    candidates: () => [],
    score: (_c, _m, limit) => scored.slice(0, limit),
    ...rest,
  };
}

export const candidate = (leader: string, targets: string[], extra: Partial<BalanceCandidate> = {}): BalanceCandidate => ({
  leader,
  resources: [leader],
  targets,
  source: 'node1',
  ...extra,
});

export const failed = (resources: string[], target: string, at: number): MotionOutcome => ({ resources, source: 'node1', target, ok: false, at });
export const succeeded = (resources: string[], target: string, at: number): MotionOutcome => ({ resources, source: 'node1', target, ok: true, at });

/** Observes `outcomes` at `now`, then runs the stage on `plan`. */
export function observeAndRun<S>(stage: Stage<S>, state: S, now: number, outcomes: MotionOutcome[], plan: Plan, ctx?: BalanceContext) {
  const seen = stage.observe ? stage.observe({ now, outcomes }, state) : { state };
  const out: StageOutcome<S> = stage.run(ctx ?? fixedContext({ now }), plan, seen.state);
  return { observed: seen, out };
}

/** The candidates a stage passed on as `leader→target` strings, or its stop reason. */
export function passed<S>(out: StageOutcome<S>): string[] | string {
  if ('stop' in out) return out.stop;
  return (out.plan.candidates ?? []).flatMap((c) => c.targets.map((t) => `${c.leader}→${t}`));
}
