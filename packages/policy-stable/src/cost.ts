import {
  type BalanceCandidate,
  type NoticeInit,
  PolicyError,
  type ScoredMigration,
  type Stage,
  evaluatorOf,
  reasonFormatOf,
  stateCheck,
} from '@poise/policy';

/** How many best-scored migrations the cost stage compares (the scorer's limit when it is on). */
export const COST_SCORE_LIMIT = 16;

const GIB = 1024 ** 3;

function formatBytes(bytes: number | undefined): string {
  return bytes === undefined ? 'an unknown amount' : `${(bytes / GIB).toFixed(1)} GiB`;
}

/**
 * Prefers the cheaper of nearly equally good moves (name `select-cost`, replaces
 * `select-best`). Of the scored migrations (best first, at most `limit`), with
 * `improvement = before − after` and `best` the largest improvement among them, the eligible
 * ones are those with `improvement ≥ best · (1 − weight)`: within `weight` (a fraction of the
 * best improvement) of it. Among the eligible, the one whose bundle copies the least memory
 * (`candidate.transferBytes`) is selected; an unknown cost counts as more than any known one,
 * and ties keep the scorer's order. Example: best improves by 0.10, weight 0.2 → every move
 * improving by ≥ 0.08 is eligible. When no move improves (`best ≤ 0`) the scorer's first is
 * selected (the margin rejects it anyway). A different choice than the scorer's first raises
 * a `cost-preferred` info notice (improvements in the host's units, `BalanceContext.format`).
 * `weight` in (0, 1]; `limit` an integer ≥ 1 (default {@link COST_SCORE_LIMIT}; a cheaper move
 * ranked below it is not seen). Stop code `nothing-selected` when nothing was scored.
 *
 * When the round minimises another objective than the imbalance (`plan.objective`, e.g. guest
 * contention), a move's improvement is the objective's gain (`objective.gain(candidate,
 * target)`; a move it cannot judge has none) and the notice prints gains the objective's way.
 */
export function costSelect(options: { weight: number; limit?: number }): Stage<null> {
  const weight = options.weight;
  const limit = options.limit ?? COST_SCORE_LIMIT;
  if (!Number.isFinite(weight) || weight <= 0 || weight > 1)
    throw new PolicyError('invalid-config', `cost weight must be in (0, 1], got '${weight}'`);
  if (!Number.isInteger(limit) || limit < 1)
    throw new PolicyError('invalid-config', `cost limit must be an integer >= 1, got '${limit}'`);
  const check = stateCheck('select-cost');
  return {
    name: 'select-cost',
    kind: 'select',
    initialState: () => null,
    validateState: (value) => check.none(value),
    run: (ctx, plan, state) => {
      const scored = (plan.scored ?? []).slice(0, limit);
      if (scored.length === 0) return { stop: 'nothing to select', code: 'nothing-selected', state };
      const byLeader = new Map<string, BalanceCandidate>();
      for (const c of plan.candidates ?? []) byLeader.set(c.leader, c);
      const objective = plan.objective;
      const before = objective ? 0 : (plan.imbalance ?? evaluatorOf(ctx, plan).imbalance());
      const improvementOf = (m: ScoredMigration): number => {
        if (!objective) return before - m.imbalance;
        const candidate = byLeader.get(m.sid);
        return (candidate && objective.gain(candidate, m.target)) ?? Number.NEGATIVE_INFINITY;
      };
      const improvements = scored.map(improvementOf);
      const best = Math.max(...improvements);
      if (!(best > 0)) return { plan: { ...plan, selected: scored[0]! }, state };
      const floor = best * (1 - weight);
      const cost = (m: ScoredMigration) => byLeader.get(m.sid)?.transferBytes;
      let chosen = -1;
      for (let i = 0; i < scored.length; i++) {
        if (!(improvements[i]! >= floor)) continue;
        if (chosen < 0) {
          chosen = i;
          continue;
        }
        const a = cost(scored[i]!);
        const b = cost(scored[chosen]!);
        if (a !== undefined && (b === undefined || a < b)) chosen = i;
      }
      const selected = scored[chosen]!;
      const notices: NoticeInit[] = [];
      if (chosen !== 0) {
        const first = scored[0]!;
        const improvement = (i: number) =>
          objective
            ? `${objective.name} gain ${objective.formatGain(improvements[i]!)}`
            : `improvement ${reasonFormatOf(ctx).value('improvement', improvements[i]!)}`;
        notices.push({
          code: 'cost-preferred',
          severity: 'info',
          message:
            `preferred ${selected.sid} to ${selected.target} (copies ${formatBytes(cost(selected))}, ${improvement(chosen)})` +
            ` over ${first.sid} to ${first.target} (copies ${formatBytes(cost(first))}, ${improvement(0)})`,
        });
      }
      return { plan: { ...plan, selected }, state, notices };
    },
  };
}
