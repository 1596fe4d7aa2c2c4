import type { MoveAssessment } from '@poise/contention';
import {
  type BalanceCandidate,
  type BalanceMethod,
  PolicyError,
  type ScoredMigration,
  type Stage,
  compareNames,
  evaluatorOf,
  formatList,
  formatPercent,
  reasonFormatOf,
  stateCheck,
} from '@poise/policy';
import { CONTENTION_FLOOR, MIN_GAIN_SECONDS, PREDICTED_FALL_POINTS, SATURATED, checkMinGainSeconds } from './limits';
import { contentionObjectiveOf, expectedSaving, formatGuestSeconds, reaches } from './objective';
import { heldGuests, requiredGain } from './pace';

/** Options of {@link contentionScorer}. */
export interface ContentionScorerOptions {
  /** How the imbalance after each handed-on move is computed (for the log; the choice is the contention's). */
  readonly method: BalanceMethod;
  /** How many moves to hand on, best first (an integer ≥ 1). */
  readonly limit: number;
  /**
   * The imbalance threshold (a fraction, finite, ≥ 0; default none): a move may not leave the
   * imbalance above both it and the imbalance now. The objective minimises contention; it does
   * not buy it by piling load where the figures say it does not belong.
   */
  readonly threshold?: number;
  /**
   * What a move must spare before the pace (guest-seconds, finite, ≥ 0; default
   * `MIN_GAIN_SECONDS`): the `contention-margin` stage's minimum, so that the guest chosen at a
   * saturated source the model cannot see fall is one the margin lets go (see the README).
   */
  readonly minGainSeconds?: number;
}

interface Ranked {
  readonly candidate: BalanceCandidate;
  readonly target: string;
  readonly assessment: MoveAssessment;
  /** 1 when the move is worth making (`netSeconds > 0`), else 0: worked out once, the sort compares it often. */
  readonly worth: number;
  /** Its {@link expectedSaving}, likewise. */
  readonly saving: number;
}

function rankedMove(candidate: BalanceCandidate, target: string, assessment: MoveAssessment): Ranked {
  return {
    candidate,
    target,
    assessment,
    worth: assessment.netSeconds > 0 ? 1 : 0,
    saving: expectedSaving(assessment),
  };
}

/**
 * The moves worth making (their gain counted with its confidence, net of the migration) first,
 * best expected saving first: the confidence decides whether a move is worth it, the
 * prediction as it is decides which; ties by leader and target in byte order.
 */
function byExpectedSaving(a: Ranked, b: Ranked): number {
  return (
    b.worth - a.worth ||
    (a.worth === 1 ? b.saving - a.saving : 0) ||
    b.assessment.netSeconds - a.assessment.netSeconds ||
    compareNames(a.candidate.leader, b.candidate.leader) ||
    compareNames(a.target, b.target)
  );
}

/**
 * The ranked moves (sorted by {@link byExpectedSaving}), or, when the best one's source is
 * saturated and blind, only the moves of the guest that frees the most cores there.
 *
 * Blind: the source's cpu pressure is saturated now (`SATURATED`) and the model predicts no
 * move off it to lower it (by `PREDICTED_FALL_POINTS`): it has seen the node calm and saturated,
 * nothing between. Its moves then differ only by what the moving guests escape, and the
 * staying guests' relief, unknown rather than nil, grows with the cores a move frees: of the
 * guests whose move spares at least `required` (what the pace asks now; any worth making when
 * none does), the largest goes first (as the imbalance would choose), to the target the saving
 * prefers.
 * Small guests first would each leave the node as saturated as before and take a move of the
 * spell's budget (see `ContentionPace.factor`).
 */
export function blindSourceFirst<
  T extends { readonly candidate: BalanceCandidate; readonly assessment: MoveAssessment },
>(ranked: readonly T[], required: number): readonly T[] {
  const best = ranked[0];
  if (!best || !(best.assessment.netSeconds > 0)) return ranked;
  const source = best.assessment.source.node;
  const off = ranked.filter((r) => r.assessment.source.node === source);
  const blind = off.every(
    ({ assessment: { source: s } }) =>
      s.cpu.before.percent >= SATURATED.cpuPercent &&
      s.cpu.after.percent > s.cpu.before.percent - PREDICTED_FALL_POINTS,
  );
  if (!blind) return ranked;
  const largestOf = (enough: (a: MoveAssessment) => boolean) => {
    let largest: T | undefined;
    for (const r of off) {
      if (enough(r.assessment) && (!largest || r.assessment.movedCpu > largest.assessment.movedCpu)) largest = r;
    }
    return largest;
  };
  const largest = largestOf((a) => a.netSeconds >= required && a.netSeconds > 0) ?? largestOf((a) => a.netSeconds > 0);
  return ranked.filter((r) => r.candidate.leader === largest!.candidate.leader);
}

/**
 * Ranks every (candidate, target) move by the guest contention it is predicted to spare
 * (name `contention-score`, the objective's `score`: in its rounds it scores where
 * `score-<method>` would),
 * from `plan.objective` (set by the `contention` gate): highest `netSeconds` first, ties by
 * leader and target in byte order. Candidates whose source has no contention (below
 * `CONTENTION_FLOOR`) are not scored: moving them relieves no one; nor are those with a member
 * the balancer moved within the pace window (moved again, a guest would chase the load it
 * shifted; stop `guest-held` when that leaves none, e.g. `contention: vm:101 moved recently (held until 7300)`). Hands on the best `limit` moves that spare anything
 * (`netSeconds > 0`), each with the imbalance after it from the usage model (`score` of the
 * move alone, with `method`: what the host logs). Stops:
 *
 * - `no-gain`: no move is predicted to lower guest contention, e.g.
 *   `contention: no move predicted to lower guest contention (best: vm:101 to node2, -12 guest-seconds)`,
 *   followed, when every node has contention, by
 *   `; every node under contention (node1 cpu 12.0%, …): the cluster needs more capacity`;
 * - `not-assessable`: no candidate could be judged (the host reports no telemetry for its members);
 * - `nothing-scored`: the usage model scored none of the moves.
 */
export function contentionScorer(options: ContentionScorerOptions): Stage<null> {
  if (options.method !== 'bruteforce' && options.method !== 'topsis')
    throw new PolicyError('invalid-config', `unknown method '${String(options.method)}' (bruteforce|topsis)`);
  if (!Number.isInteger(options.limit) || options.limit < 1)
    throw new PolicyError('invalid-config', `contention score limit must be an integer >= 1, got '${options.limit}'`);
  if (options.threshold !== undefined && !(Number.isFinite(options.threshold) && options.threshold >= 0))
    throw new PolicyError(
      'invalid-config',
      `contention score threshold must be a finite number >= 0, got '${options.threshold}'`,
    );
  const minGainSeconds = checkMinGainSeconds(options.minGainSeconds ?? MIN_GAIN_SECONDS);
  const check = stateCheck('contention-score');
  return {
    name: 'contention-score',
    kind: 'score',
    initialState: () => null,
    validateState: (value) => check.none(value),
    run: (ctx, plan, state) => {
      const objective = contentionObjectiveOf(plan, 'contention-score');
      // a move off a node where no guest waits relieves no one (and loads its target): not scored
      // nor off one whose pressure rose while its load did not: no guest's move relieves it
      const calm = new Set([
        ...objective.pressures.filter((p) => !reaches(p, CONTENTION_FLOOR)).map((p) => p.node),
        ...objective.unexplained,
      ]);
      const held = heldGuests(objective.motions, ctx.now, objective.pace);
      const ranked: Ranked[] = [];
      const unjudged: string[] = [];
      const holding: string[] = [];
      for (const candidate of plan.candidates ?? []) {
        if (candidate.source !== undefined && calm.has(candidate.source)) continue;
        const moved = candidate.resources.filter((sid) => held.has(sid));
        if (moved.length > 0) {
          for (const sid of moved) holding.push(`${sid} moved recently (held until ${held.get(sid)})`);
          continue;
        }
        for (const target of candidate.targets) {
          const assessment = objective.assess(candidate, target);
          if (assessment) ranked.push(rankedMove(candidate, target, assessment));
          else unjudged.push(`${candidate.leader} to ${target}`);
        }
      }
      if (ranked.length === 0 && unjudged.length === 0 && holding.length > 0) {
        const stop = `contention: ${formatList(holding)}`;
        return { stop, code: 'guest-held', key: `contention-score:guest-held:${stop}`, state };
      }
      if (ranked.length === 0 && unjudged.length === 0) {
        const nodes = objective.pressures.filter((p) => !calm.has(p.node)).map((p) => p.node);
        const stop = `contention: no movable guest on a node where guests wait (${formatList(nodes)})`;
        return {
          stop,
          code: 'no-source-with-contention',
          key: `contention-score:no-source-with-contention:${nodes.join(',')}`,
          state,
        };
      }
      if (ranked.length === 0) {
        const stop = `contention: no candidate can be judged (no guest or node telemetry for ${formatList(unjudged)})`;
        return { stop, code: 'not-assessable', key: 'contention-score:not-assessable', state };
      }
      ranked.sort(byExpectedSaving);
      const best = ranked[0]!;
      if (!(best.assessment.netSeconds > 0)) {
        const everywhere =
          objective.pressures.length > 0 && objective.pressures.every((p) => reaches(p, CONTENTION_FLOOR));
        const nodes = objective.pressures.map(
          (p) =>
            `${p.node} cpu ${formatPercent(p.cpu.percent)}${p.mem.percent >= CONTENTION_FLOOR.memPercent ? ` mem ${formatPercent(p.mem.percent)}` : ''}`,
        );
        const stop =
          `contention: no move predicted to lower guest contention (best: ${best.candidate.leader} to ${best.target}, ${formatGuestSeconds(best.assessment.netSeconds)})` +
          (everywhere ? `; every node under contention (${formatList(nodes)}): the cluster needs more capacity` : '');
        return { stop, code: 'no-gain', key: `contention-score:no-gain${everywhere ? ':everywhere' : ''}`, state };
      }
      const evaluator = evaluatorOf(ctx, plan);
      const ceiling = options.threshold === undefined ? Infinity : Math.max(options.threshold, evaluator.imbalance());
      const { required } = requiredGain(
        minGainSeconds,
        objective.motions,
        objective.calmAt,
        ctx.now,
        objective.pace,
        best.assessment.source.node,
      );
      const handOn = (list: readonly Ranked[]) => {
        const scored: ScoredMigration[] = [];
        let raising: ScoredMigration | undefined;
        for (const r of list) {
          if (scored.length >= options.limit || !(r.assessment.netSeconds > 0)) break;
          const move = evaluator.score(
            [{ leader: r.candidate.leader, resources: r.candidate.resources, targets: [r.target] }],
            options.method,
            1,
          )[0];
          if (move && move.imbalance > ceiling + 1e-12) raising ??= move;
          else if (move) scored.push(move);
        }
        return { scored, raising };
      };
      // the largest guest of a blind source first; when none of its moves can be handed on (each
      // would raise the imbalance), the ranking as it is
      const blind = blindSourceFirst(ranked, required);
      let { scored, raising } = handOn(blind);
      if (scored.length === 0 && blind !== ranked) ({ scored, raising } = handOn(ranked));
      if (scored.length === 0 && raising) {
        const format = reasonFormatOf(ctx);
        const stop =
          `contention: every move that spares guest contention raises the imbalance above ${format.bound('imbalance', ceiling)} ` +
          `(best: ${raising.sid} to ${raising.target}, ${format.value('imbalance', raising.imbalance, ceiling)})`;
        return {
          stop,
          code: 'raises-imbalance',
          key: `contention-score:raises-imbalance:${raising.sid}:${raising.target}`,
          state,
        };
      }
      if (scored.length === 0) return { stop: 'no scored migration', code: 'nothing-scored', state };
      return { plan: { ...plan, scored }, state };
    },
  };
}
