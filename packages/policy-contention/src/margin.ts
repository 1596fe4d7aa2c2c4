import { PolicyError, type Stage, formatPercent, selectedOf, stateCheck } from '@poise/policy';
import { contentionObjectiveOf, formatChange, formatGuestSeconds } from './objective';
import { requiredGain } from './pace';

/** Options of {@link contentionMarginAccept}. */
export interface ContentionMarginOptions {
  /** The share of the two nodes' contention the move must relieve (a fraction, finite). */
  readonly margin: number;
  /** The guest-seconds the move must spare over the horizon, net of its cost (finite, ≥ 0). */
  readonly minGainSeconds: number;
}

/**
 * Accepts the selected move only if it spares enough guest contention (name
 * `contention-margin`, an accept stage in the `margin` slot: it replaces `relative-margin`),
 * judged on `plan.objective` (set by the `contention` gate):
 *
 * - its score (`netSeconds`: saved over the horizon, discounted by confidence, net of the
 *   migration) is at least `minGainSeconds`, else stop `below-min-gain`, e.g.
 *   `contention: vm:101 to node2 spares 12 guest-seconds, below 30`; each motion of the
 *   balancer that landed within the pace window in this hot spell multiplies the minimum by the pace's `factor`
 *   (`contention: vm:101 to node2 spares 100 guest-seconds, below 120 (2 moves in this hot spell's last 7200 s)`);
 * - it relieves at least `margin` of the contention of its two nodes
 *   (`(rateBefore − rateAfter) / rateBefore`, the reference's relative margin applied to the
 *   contention), else stop `below-margin`, e.g.
 *   `contention: vm:101 to node2 relieves 4.0% of the guest contention on node1 and node2, below margin 10.0%`.
 *
 * An accepted move raises a `contention-move` info notice saying what is predicted, e.g.
 * `vm:101 to node2 spares 412 guest-seconds in 600 s (node1 cpu 32.0% → 14.1%, node2 cpu 1.0% → 3.2%; confidence 0.82, learned)`.
 */
export function contentionMarginAccept(options: ContentionMarginOptions): Stage<null> {
  if (!Number.isFinite(options.margin))
    throw new PolicyError('invalid-config', `contention margin must be a finite number, got '${options.margin}'`);
  if (!Number.isFinite(options.minGainSeconds) || options.minGainSeconds < 0) {
    throw new PolicyError(
      'invalid-config',
      `contention minGainSeconds must be a finite number >= 0, got '${options.minGainSeconds}'`,
    );
  }
  const check = stateCheck('contention-margin');
  return {
    name: 'contention-margin',
    kind: 'accept',
    initialState: () => null,
    validateState: (value) => check.none(value),
    run: (ctx, plan, state) => {
      const objective = contentionObjectiveOf(plan, 'contention-margin');
      const selected = selectedOf(plan, 'contention-margin');
      const candidate = plan.candidates?.find((c) => c.leader === selected.sid);
      const a = candidate && objective.assess(candidate, selected.target);
      const move = `${selected.sid} to ${selected.target}`;
      if (!a) return { stop: `contention: ${move} cannot be judged`, code: 'not-assessable', state };
      const { required, recent } = requiredGain(
        options.minGainSeconds,
        objective.motions,
        objective.calmAt,
        ctx.now,
        objective.pace,
      );
      if (!(a.netSeconds >= required)) {
        const paced =
          recent > 0
            ? ` (${recent} move${recent === 1 ? '' : 's'} in this hot spell's last ${objective.pace.windowSeconds} s)`
            : '';
        return {
          stop: `contention: ${move} spares ${formatGuestSeconds(a.netSeconds)}, below ${Math.round(required)}${paced}`,
          code: 'below-min-gain',
          state,
        };
      }
      if (!(a.relative >= options.margin)) {
        const stop =
          `contention: ${move} relieves ${formatPercent(a.relative * 100)} of the guest contention on ${a.source.node} and ${a.target.node}, ` +
          `below margin ${formatPercent(options.margin * 100)}`;
        return { stop, code: 'below-margin', state };
      }
      const message =
        `${move} spares ${formatGuestSeconds(a.netSeconds)} in ${objective.options.horizonSeconds} s ` +
        `(${formatChange(a.source)}, ${formatChange(a.target)}; confidence ${a.confidence.toFixed(2)}, ${a.basis})`;
      return { plan, state, notices: [{ code: 'contention-move', severity: 'info', message }] };
    },
  };
}
