import { type NoticeInit, PolicyError, type Stage, formatPercent, selectedOf, stateCheck } from '@poise/policy';
import { contentionObjectiveOf, formatChange, formatGuestSeconds } from './objective';
import { checkMinGainSeconds } from './limits';
import { requiredGain } from './pace';
import {
  JUDGED_CONFIDENCE,
  type PredictedRelief,
  type Unrelieved,
  checkPredicted,
  checkUnrelieved,
  judgeRelief,
} from './relief';

/** State of {@link contentionMarginAccept}: the last move's predicted relief, and the sources whose relief did not show. */
export interface ContentionMarginState {
  readonly last: PredictedRelief | null;
  readonly unrelieved: readonly Unrelieved[];
}

/** Options of {@link contentionMarginAccept}. */
export interface ContentionMarginOptions {
  /** The share of the two nodes' contention the move must relieve (a fraction, finite). */
  readonly margin: number;
  /** The guest-seconds the move must spare over the horizon, net of its cost (finite, ≥ 0). */
  readonly minGainSeconds: number;
}

/**
 * Accepts the selected move only if it spares enough guest contention (name
 * `contention-margin`, the objective's `margin`: in its rounds it judges where `relative-margin`
 * would),
 * judged on `plan.objective` (set by the `contention` gate):
 *
 * - its score (`netSeconds`: saved over the horizon, discounted by confidence, net of the
 *   migration) is at least `minGainSeconds`, else stop `below-min-gain`, e.g.
 *   `contention: vm:101 to node2 spares 12 guest-seconds, below 30`; each motion of the
 *   balancer that landed within the pace window in this hot spell multiplies the minimum by the pace's `factor`
 *   (`contention: vm:101 to node2 spares 100 guest-seconds, below 120 (2 moves in this hot spell's last 7200 s)`);
 * - what it spares (the two nodes' contention rate before less after) is at least `margin` of
 *   what the moving guests wait now (`movingRate`: the reference's relative margin, relative to
 *   the guests the move disturbs; relative to the two nodes' whole contention no single guest
 *   of a crowded hot node would ever pass it), else stop `below-margin`, e.g.
 *   `contention: vm:101 to node2 spares 4.0% of what the moving guests wait on node1, below margin 10.0%`.
 *
 * An accepted move raises a `contention-move` info notice saying what is predicted, e.g.
 * `vm:101 to node2 spares 412 guest-seconds in 600 s (node1 cpu 32.0% → 14.1%, node2 cpu 1.0% → 3.2%; confidence 0.82, learned)`.
 */
export function contentionMarginAccept(options: ContentionMarginOptions): Stage<ContentionMarginState> {
  if (!Number.isFinite(options.margin))
    throw new PolicyError('invalid-config', `contention margin must be a finite number, got '${options.margin}'`);
  checkMinGainSeconds(options.minGainSeconds);
  const check = stateCheck('contention-margin');
  return {
    name: 'contention-margin',
    kind: 'accept',
    initialState: () => ({ last: null, unrelieved: [] }),
    validateState: (value) => {
      // a state saved before the relief check was `null`
      if (value === null) return { last: null, unrelieved: [] };
      const o = check.object(value, '');
      return {
        last: checkPredicted(check, o.last, 'last'),
        unrelieved: checkUnrelieved(check, o.unrelieved, 'unrelieved'),
      };
    },
    run: (ctx, plan, current) => {
      const objective = contentionObjectiveOf(plan, 'contention-margin');
      const selected = selectedOf(plan, 'contention-margin');
      const candidate = plan.candidates?.find((c) => c.leader === selected.sid);
      const a = candidate && objective.assess(candidate, selected.target);
      const move = `${selected.sid} to ${selected.target}`;

      // the last move's relief, judged once it settled; a source it missed is left alone until calm
      const notices: NoticeInit[] = [];
      let last = current.last;
      let unrelieved = current.unrelieved.filter(
        (u) => (objective.calmAt === null || objective.calmAt < u.at) && u.at > ctx.now - objective.pace.windowSeconds,
      );
      if (last && ctx.now > last.at + objective.pace.windowSeconds) last = null;
      if (last) {
        const judged = judgeRelief(last, objective.motions, objective.pressures, ctx.now, objective.pace.settleSeconds);
        if (judged !== undefined) last = null;
        if (judged) {
          unrelieved = [...unrelieved.filter((u) => u.node !== judged.node), judged];
          notices.push({
            code: 'contention-not-relieved',
            severity: 'warning',
            message: `${judged.why}: its pressure does not follow its guests' load; no move off ${judged.node} until it calms`,
          });
        }
      }
      const state: ContentionMarginState = { last, unrelieved };
      const missed = unrelieved.find((u) => u.node === selected.source);
      if (missed) {
        const stop = `contention: ${missed.why}: no move off ${missed.node} until it calms`;
        return { stop, code: 'source-not-relieved', state, notices };
      }
      if (!a) return { stop: `contention: ${move} cannot be judged`, code: 'not-assessable', state, notices };
      const { required, recent, atSource } = requiredGain(
        options.minGainSeconds,
        objective.motions,
        objective.calmAt,
        ctx.now,
        objective.pace,
        a.source.node,
      );
      if (!(a.netSeconds >= required)) {
        const moves = (n: number) => `${n} move${n === 1 ? '' : 's'}`;
        const paced =
          atSource > recent
            ? ` (${moves(atSource)} off or onto ${a.source.node} in this hot spell)`
            : recent > 0
              ? ` (${moves(recent)} in this hot spell's last ${objective.pace.windowSeconds} s)`
              : '';
        return {
          stop: `contention: ${move} spares ${formatGuestSeconds(a.netSeconds)}, below ${Math.round(required)}${paced}`,
          code: 'below-min-gain',
          state,
          notices,
        };
      }
      // what the move spares, against what the moving guests wait now: a move must change their
      // lot (or their neighbours') by the margin, not shift their waiting onto the target
      const spared = a.rateBefore - a.rateAfter;
      const share = a.movingRate > 0 ? spared / a.movingRate : spared > 0 ? Infinity : 0;
      if (!(share >= options.margin)) {
        const stop =
          `contention: ${move} spares ${formatPercent(share * 100)} of what the moving guests wait on ${a.source.node}, ` +
          `below margin ${formatPercent(options.margin * 100)}`;
        return { stop, code: 'below-margin', state, notices };
      }
      const sure = Math.min(
        a.source.cpu.before.confidence,
        a.source.cpu.after.confidence,
        a.source.mem.before.confidence,
        a.source.mem.after.confidence,
      );
      const predicted: PredictedRelief | null =
        sure >= JUDGED_CONFIDENCE && candidate
          ? {
              at: ctx.now,
              resources: [...candidate.resources],
              source: a.source.node,
              cpuBefore: a.source.cpu.before.percent,
              cpuAfter: a.source.cpu.after.percent,
              memBefore: a.source.mem.before.percent,
              memAfter: a.source.mem.after.percent,
            }
          : null;
      const message =
        `${move} spares ${formatGuestSeconds(a.netSeconds)} in ${objective.options.horizonSeconds} s ` +
        `(${formatChange(a.source)}, ${formatChange(a.target)}; confidence ${a.confidence.toFixed(2)}, ${a.basis})`;
      notices.push({ code: 'contention-move', severity: 'info', message });
      return { plan, state: { last: predicted, unrelieved }, notices };
    },
  };
}
