import {
  type BalanceCandidate,
  type NoticeInit,
  PolicyError,
  type Stage,
  bundleLabel,
  compareNames,
  formatList,
  pairKey,
  sortedBundle,
  stateCheck,
} from '@poise/policy';
import { freshOutcomes } from './outcomes';

/** The cap of a backed-off pair's delay, seconds (1 h). */
export const BACKOFF_MAX_SECONDS = 3600;
/**
 * A failure record is forgotten once its delay is over and the last failure is this old
 * (seconds, 24 h): keeps the state bounded; a pair failing again after that starts at the base.
 */
export const BACKOFF_FORGET_SECONDS = 86_400;

/** State of {@link backoffSeriesGate}. */
export interface BackoffSeriesState {
  /** The last balancer motion failed: the next round continues the series. */
  readonly retry: boolean;
  /** The time of the last outcome seen (repeats are ignored); `null` before the first. */
  readonly lastOutcomeAt: number | null;
}

/** A (bundle, target) pair that failed: members in byte order. */
interface MotionPair {
  readonly resources: readonly string[];
  readonly target: string;
}

/** A pair's failure record: consecutive failures and until when it is skipped. */
interface BackoffPair extends MotionPair {
  /** Failures since the last success (≥ 1). */
  readonly failures: number;
  /** Seconds: the pair is skipped while `now < until`. */
  readonly until: number;
  readonly lastFailureAt: number;
}

/** State of {@link backoffFilter}. */
export interface BackoffState {
  readonly lastOutcomeAt: number | null;
  /** Failure records, sorted by pair. */
  readonly pairs: readonly BackoffPair[];
  /** Pairs that failed in the current rebalancing series (excluded while it continues). */
  readonly series: readonly MotionPair[];
}

/**
 * Continues a rebalancing series after a failed balancer motion (name `backoff-series`, a
 * gate before `threshold-hold`). After a reported failure, the next round that reaches this
 * gate sets `plan.continueSeries`: `threshold-hold` does not wait its hold rounds again and
 * `backoff` excludes the pairs that failed in this series, so the next-best candidate is tried
 * at once. A success ends the series; so does a round that reaches this gate without a new
 * outcome after the retry (the retry did not move: the series found nothing better). Never
 * stops a round.
 */
export function backoffSeriesGate(): Stage<BackoffSeriesState> {
  const check = stateCheck('backoff-series');
  return {
    name: 'backoff-series',
    kind: 'gate',
    initialState: () => ({ retry: false, lastOutcomeAt: null }),
    validateState: (value) => {
      const s = check.object(value, '');
      return {
        retry: check.boolean(s.retry, 'retry'),
        lastOutcomeAt: check.numberOrNull(s.lastOutcomeAt, 'lastOutcomeAt'),
      };
    },
    observe: (facts, state) => {
      const { fresh, lastOutcomeAt } = freshOutcomes(facts.outcomes, state.lastOutcomeAt);
      if (fresh.length === 0) return { state };
      return { state: { retry: !fresh[fresh.length - 1]!.ok, lastOutcomeAt } };
    },
    run: (_ctx, plan, state) =>
      state.retry ? { plan: { ...plan, continueSeries: true }, state: { ...state, retry: false } } : { plan, state },
  };
}

function comparePairs(a: MotionPair, b: MotionPair): number {
  const n = Math.min(a.resources.length, b.resources.length);
  for (let i = 0; i < n; i++) {
    const c = compareNames(a.resources[i]!, b.resources[i]!);
    if (c !== 0) return c;
  }
  return a.resources.length - b.resources.length || compareNames(a.target, b.target);
}

/** Options of {@link backoffFilter}. */
export interface BackoffOptions {
  /** Delay after the first failure, seconds (> 0, finite). */
  readonly baseSeconds: number;
  /** Cap of the delay, seconds (≥ `baseSeconds`; default {@link BACKOFF_MAX_SECONDS}). */
  readonly maxSeconds?: number;
}

/** The delay after the `failures`-th consecutive failure: `base · 2^(failures − 1)`, capped. */
export function backoffDelay(baseSeconds: number, maxSeconds: number, failures: number): number {
  return Math.min(baseSeconds * 2 ** (failures - 1), maxSeconds);
}

/**
 * Skips (bundle, target) pairs whose motion failed (name `backoff`, a filter; pairs are keyed
 * by the whole bundle, members in byte order, never by the leader):
 *
 * - within a rebalancing series (see {@link backoffSeriesGate}) a pair that failed is excluded
 *   for the rest of the series, so there is at most one failed attempt per target before
 *   another candidate moves;
 * - across series, a pair with `n` consecutive failures is skipped until
 *   `failedAt + min(base · 2^(n−1), max)`; a success of that pair resets it.
 *
 * Each recorded failure raises a `motion-failed` warning notice. When every target of every
 * candidate is excluded the round stops with code `backoff`, e.g.
 * `backoff of fa:109 to node2 until 420` or `fa:109 to node3 failed earlier in this series`.
 */
export function backoffFilter(options: BackoffOptions): Stage<BackoffState> {
  const base = options.baseSeconds;
  const max = options.maxSeconds ?? BACKOFF_MAX_SECONDS;
  if (!Number.isFinite(base) || base <= 0)
    throw new PolicyError('invalid-config', `backoff baseSeconds must be a finite number > 0, got '${base}'`);
  if (!Number.isFinite(max) || max < base)
    throw new PolicyError('invalid-config', `backoff maxSeconds must be a finite number >= baseSeconds, got '${max}'`);
  const check = stateCheck('backoff');
  const readPair = (value: unknown, path: string): MotionPair => {
    const p = check.object(value, path);
    return {
      resources: sortedBundle(check.names(p.resources, `${path}.resources`)),
      target: check.string(p.target, `${path}.target`),
    };
  };
  return {
    name: 'backoff',
    kind: 'filter',
    initialState: () => ({ lastOutcomeAt: null, pairs: [], series: [] }),
    validateState: (value) => {
      const s = check.object(value, '');
      return {
        lastOutcomeAt: check.numberOrNull(s.lastOutcomeAt, 'lastOutcomeAt'),
        pairs: check.array(s.pairs, 'pairs').map((v, i) => {
          const p = check.object(v, `pairs.${i}`);
          return {
            ...readPair(v, `pairs.${i}`),
            failures: check.integer(p.failures, `pairs.${i}.failures`, 1),
            until: check.number(p.until, `pairs.${i}.until`),
            lastFailureAt: check.number(p.lastFailureAt, `pairs.${i}.lastFailureAt`),
          };
        }),
        series: check.array(s.series, 'series').map((v, i) => readPair(v, `series.${i}`)),
      };
    },
    observe: (facts, state) => {
      const { fresh, lastOutcomeAt } = freshOutcomes(facts.outcomes, state.lastOutcomeAt);
      const pairs = new Map(state.pairs.map((p) => [pairKey(p.resources, p.target), p]));
      let series = [...state.series];
      const notices: NoticeInit[] = [];
      for (const o of fresh) {
        const key = pairKey(o.resources, o.target);
        const label = `${bundleLabel(o.resources)} to ${o.target}`;
        if (o.ok) {
          pairs.delete(key);
          series = [];
          continue;
        }
        const failures = (pairs.get(key)?.failures ?? 0) + 1;
        const delay = backoffDelay(base, max, failures);
        const until = o.at + delay;
        pairs.set(key, {
          resources: sortedBundle(o.resources),
          target: o.target,
          failures,
          until,
          lastFailureAt: o.at,
        });
        if (!series.some((p) => pairKey(p.resources, p.target) === key))
          series.push({ resources: sortedBundle(o.resources), target: o.target });
        notices.push({
          code: 'motion-failed',
          severity: 'warning',
          message: `${label} did not succeed${o.detail ? ` (${o.detail})` : ''} (attempt ${failures}): not retried in this series, backed off for ${delay}s until ${until}`,
        });
      }
      for (const [key, p] of pairs) {
        if (p.until <= facts.now && p.lastFailureAt + BACKOFF_FORGET_SECONDS <= facts.now) pairs.delete(key);
      }
      if (fresh.length === 0 && pairs.size === state.pairs.length) return { state };
      return { state: { lastOutcomeAt, pairs: [...pairs.values()].sort(comparePairs), series }, notices };
    },
    run: (ctx, plan, state) => {
      const series = plan.continueSeries ? state.series : [];
      const next = series === state.series ? state : { ...state, series };
      const inSeries = new Set(series.map((p) => pairKey(p.resources, p.target)));
      const backedOff = new Map<string, number>();
      for (const p of state.pairs) if (p.until > ctx.now) backedOff.set(pairKey(p.resources, p.target), p.until);
      if (inSeries.size === 0 && backedOff.size === 0) return { plan, state: next };

      const reasons: string[] = [];
      const kept: BalanceCandidate[] = [];
      for (const c of plan.candidates ?? []) {
        const targets = c.targets.filter((t) => {
          const key = pairKey(c.resources, t);
          if (inSeries.has(key)) reasons.push(`${bundleLabel(c.resources)} to ${t} failed earlier in this series`);
          else if (backedOff.has(key))
            reasons.push(`backoff of ${bundleLabel(c.resources)} to ${t} until ${backedOff.get(key)}`);
          else return true;
          return false;
        });
        if (targets.length === c.targets.length) kept.push(c);
        else if (targets.length > 0) kept.push({ ...c, targets });
      }
      if (kept.length === 0 && reasons.length > 0) {
        const stop = formatList(reasons);
        return { stop, code: 'backoff', key: `backoff:${stop}`, state: next };
      }
      return { plan: { ...plan, candidates: kept }, state: next };
    },
  };
}
