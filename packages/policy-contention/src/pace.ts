import { type MotionOutcome, PolicyError, type StateCheck } from '@poise/policy';

/**
 * How sparingly the contention objective moves (options of `contentionStages`, not
 * datacenter.cfg keys): every move disturbs the guests it moves and shifts the load the model
 * learned from, so each one must be worth it on its own and the next one is judged on what the
 * last one did.
 */
export interface ContentionPace {
  /**
   * Seconds after a motion's outcome before the hold counts again (finite, ≥ 0): the nodes'
   * PSI (an average over the last 10 s, memory's slower) first shows the move's effect; judged
   * earlier, the source still looks hot and a second guest follows the first.
   */
  readonly settleSeconds: number;
  /**
   * Seconds a motion counts as recent (finite, > 0): a guest the objective moved is not moved
   * again within them.
   */
  readonly windowSeconds: number;
  /**
   * Each motion of the hot spell multiplies the guest-seconds a move must spare by this
   * (finite, ≥ 1): the n-th move in the window, or off or onto the same source since the last
   * calm round however long ago, must spare `factor^n` times the minimum (see `requiredGain`),
   * so a hot spell gets its one large move and small follow-ups wait until they are worth
   * several moves' disturbance. At one source over the whole spell: a node that stays hot for
   * hours while its moves relieve only the guests moved needs capacity, and a count restarted
   * every window would move another guest into the same wait every window.
   */
  readonly factor: number;
}

/**
 * The defaults: 60 s to settle (six time constants of avg10: the step a move causes then shows
 * to within 0.3 %), a two-hour window (a guest the objective moved stays where it went for two
 * hours; the reference's hold and the preset's cooldown are minutes, a hot spell in the field
 * lasts hours) and a factor of 2: with the default minimum of 30 guest-seconds the fifth move
 * of a hot spell must spare 480 in 600 s (close to a guest waiting all the time) and a sixth
 * 960, more than one guest can wait in 600 s, so the large moves go first, the small ones only
 * while they are rare, and a node no move calms gets at most five single-guest moves off it.
 */
export const CONTENTION_PACE: ContentionPace = { settleSeconds: 60, windowSeconds: 7200, factor: 2 };

/** A motion of the balancer that landed (every member arrived on `target`). */
export interface RecentMotion {
  /** Seconds: when its outcome became known. */
  readonly at: number;
  readonly resources: readonly string[];
  readonly source: string;
  readonly target: string;
}

/** Checks pace options (defaults for the absent ones); throws `PolicyError` `invalid-config` naming the field. */
export function contentionPace(options: Partial<ContentionPace> = {}): ContentionPace {
  const pace = { ...CONTENTION_PACE, ...options };
  const bad = (field: string, rule: string, value: number) =>
    new PolicyError('invalid-config', `contention pace ${field} must be ${rule}, got '${value}'`);
  if (!Number.isFinite(pace.settleSeconds) || pace.settleSeconds < 0)
    throw bad('settleSeconds', 'a finite number >= 0', pace.settleSeconds);
  if (!Number.isFinite(pace.windowSeconds) || pace.windowSeconds <= 0)
    throw bad('windowSeconds', 'a finite number > 0', pace.windowSeconds);
  if (!Number.isFinite(pace.factor) || pace.factor < 1) throw bad('factor', 'a finite number >= 1', pace.factor);
  return pace;
}

/**
 * Motions older than the window kept for their hot spell, at most (the newest): beyond this
 * many a spell's count asks more than any move can spare at any factor above 1.6 (30 × 1.6³²
 * guest-seconds is 51 years of one guest's time), and a host whose cluster never calms (or
 * whose rounds the imbalance judges) does not grow the state without bound.
 */
export const SPELL_MOTIONS_KEPT = 32;

/**
 * The landed motions that still count at `now` after this round's outcomes: the new successful
 * ones (reported after `lastOutcomeAt`) appended; kept while recent (within the window) or of
 * the hot spell (after `calmAt`, the last round no guest waited; `null`: none yet, the whole
 * run is the spell; at most {@link SPELL_MOTIONS_KEPT} of these, the newest). Failed motions
 * moved nothing and are not kept.
 */
export function recordMotions(
  motions: readonly RecentMotion[],
  lastOutcomeAt: number | null,
  outcomes: readonly MotionOutcome[],
  now: number,
  pace: ContentionPace,
  calmAt: number | null,
): { motions: RecentMotion[]; lastOutcomeAt: number | null } {
  const fresh = outcomes.filter((o) => lastOutcomeAt === null || o.at > lastOutcomeAt);
  let last = lastOutcomeAt;
  for (const o of fresh) if (last === null || o.at > last) last = o.at;
  const counts = (at: number) => at > now - pace.windowSeconds || calmAt === null || at > calmAt;
  const kept = motions.filter((m) => counts(m.at));
  for (const o of fresh) {
    if (o.ok && counts(o.at)) kept.push({ at: o.at, resources: [...o.resources], source: o.source, target: o.target });
  }
  const old = kept.filter((m) => m.at <= now - pace.windowSeconds);
  if (old.length <= SPELL_MOTIONS_KEPT) return { motions: kept, lastOutcomeAt: last };
  const dropped = new Set(old.sort((a, b) => a.at - b.at).slice(0, old.length - SPELL_MOTIONS_KEPT));
  return { motions: kept.filter((m) => !dropped.has(m)), lastOutcomeAt: last };
}

/** A restored list of motions, checked field by field. */
export function checkMotions(check: StateCheck, value: unknown, path: string): RecentMotion[] {
  return check.array(value, path).map((v, i) => {
    const m = check.object(v, `${path}.${i}`);
    const resources = check.array(m.resources, `${path}.${i}.resources`);
    return {
      at: check.number(m.at, `${path}.${i}.at`),
      resources: resources.map((r, j) => check.string(r, `${path}.${i}.resources.${j}`)),
      source: check.string(m.source, `${path}.${i}.source`),
      target: check.string(m.target, `${path}.${i}.target`),
    };
  });
}

/** The motions recent at `now` (their outcome within the window, not in the future). */
function recentAt(motions: readonly RecentMotion[], now: number, pace: ContentionPace): RecentMotion[] {
  return motions.filter((m) => m.at <= now && m.at > now - pace.windowSeconds);
}

/** When the last recent motion's effect has settled into the nodes' PSI (`null`: nothing to wait for). */
export function settledAt(motions: readonly RecentMotion[], now: number, pace: ContentionPace): number | null {
  const recent = recentAt(motions, now, pace);
  if (recent.length === 0) return null;
  return Math.max(...recent.map((m) => m.at)) + pace.settleSeconds;
}

/**
 * The guest-seconds a move off `source` must spare at `now`: `minGainSeconds × factor^n`, `n`
 * the larger of two counts of this hot spell's motions (those after `calmAt`, the last round no
 * guest waited; `null`: every motion so far): those that landed within the window (`recent`),
 * and those off or onto `source` however long ago (`atSource`). A spell that spreads waiting
 * guests over the cluster gets a few moves every window; a node that stays hot however many
 * guests left it gets its few for the whole spell, and so does a node the spell's moves
 * loaded: moving its load on chases what the balancer shifted there.
 */
export function requiredGain(
  minGainSeconds: number,
  motions: readonly RecentMotion[],
  calmAt: number | null,
  now: number,
  pace: ContentionPace,
  source: string,
): { required: number; recent: number; atSource: number } {
  const spell = motions.filter((m) => m.at <= now && (calmAt === null || m.at > calmAt));
  const recent = spell.filter((m) => m.at > now - pace.windowSeconds).length;
  const atSource = spell.filter((m) => m.source === source || m.target === source).length;
  return { required: minGainSeconds * pace.factor ** Math.max(recent, atSource), recent, atSource };
}

/** The guests moved within the window, each with when it may move again (sorted by sid). */
export function heldGuests(motions: readonly RecentMotion[], now: number, pace: ContentionPace): Map<string, number> {
  const held = new Map<string, number>();
  for (const m of recentAt(motions, now, pace)) {
    for (const sid of m.resources) held.set(sid, Math.max(held.get(sid) ?? 0, m.at + pace.windowSeconds));
  }
  return held;
}
