import { type BalanceCandidate, PolicyError, type Stage, compareNames, formatList, stateCheck } from '@poise/policy';
import { freshOutcomes } from './outcomes';

/** A resource the balancer moved, and until when it is not moved again. */
export interface CooldownEntry {
  readonly sid: string;
  /** Seconds: the resource is left alone while `now < until`. */
  readonly until: number;
}

/** State of {@link cooldownFilter}. */
export interface CooldownState {
  readonly lastOutcomeAt: number | null;
  /** Entries still running, sorted by sid. */
  readonly resources: readonly CooldownEntry[];
}

/**
 * A resource the balancer moved successfully is not moved by it again within `seconds`
 * (name `cooldown`, a filter): every member of a successful motion gets
 * `until = at + seconds`; a candidate (bundle) with any member cooling down is dropped. When
 * every candidate is dropped the round stops with code `cooldown`, e.g.
 * `cooldown of vm:101 until 1020`. `seconds` is a finite number > 0.
 */
export function cooldownFilter(options: { seconds: number }): Stage<CooldownState> {
  const seconds = options.seconds;
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new PolicyError('invalid-config', `cooldown seconds must be a finite number > 0, got '${seconds}'`);
  const check = stateCheck('cooldown');
  return {
    name: 'cooldown',
    kind: 'filter',
    initialState: () => ({ lastOutcomeAt: null, resources: [] }),
    validateState: (value) => {
      const s = check.object(value, '');
      const seen = new Set<string>();
      return {
        lastOutcomeAt: check.numberOrNull(s.lastOutcomeAt, 'lastOutcomeAt'),
        resources: check.array(s.resources, 'resources').map((v, i) => {
          const e = check.object(v, `resources.${i}`);
          const sid = check.string(e.sid, `resources.${i}.sid`);
          if (seen.has(sid))
            throw new PolicyError(
              'invalid-state',
              `stage 'cooldown': state field 'resources.${i}.sid' lists '${sid}' twice`,
            );
          seen.add(sid);
          return { sid, until: check.number(e.until, `resources.${i}.until`) };
        }),
      };
    },
    observe: (facts, state) => {
      const { fresh, lastOutcomeAt } = freshOutcomes(facts.outcomes, state.lastOutcomeAt);
      const until = new Map(state.resources.map((e) => [e.sid, e.until]));
      for (const o of fresh) {
        if (!o.ok) continue;
        for (const sid of o.resources) until.set(sid, Math.max(until.get(sid) ?? -Infinity, o.at + seconds));
      }
      for (const [sid, t] of until) if (t <= facts.now) until.delete(sid);
      if (fresh.length === 0 && until.size === state.resources.length) return { state };
      const resources = [...until].map(([sid, t]) => ({ sid, until: t })).sort((a, b) => compareNames(a.sid, b.sid));
      return { state: { lastOutcomeAt, resources } };
    },
    run: (ctx, plan, state) => {
      const cooling = new Map<string, number>();
      for (const e of state.resources) if (e.until > ctx.now) cooling.set(e.sid, e.until);
      if (cooling.size === 0) return { plan, state };
      const reasons: string[] = [];
      const kept: BalanceCandidate[] = [];
      for (const c of plan.candidates ?? []) {
        const hot = c.resources.filter((sid) => cooling.has(sid));
        if (hot.length === 0) kept.push(c);
        else for (const sid of hot) reasons.push(`cooldown of ${sid} until ${cooling.get(sid)}`);
      }
      if (kept.length === 0) {
        const stop = formatList(reasons);
        return { stop, code: 'cooldown', key: `cooldown:${stop}`, state };
      }
      return { plan: { ...plan, candidates: kept }, state };
    },
  };
}
