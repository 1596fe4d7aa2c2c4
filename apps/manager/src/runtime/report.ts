import type { LogFields, LogLevel } from '../log';
import { PortError } from '../cluster/port';
import type { DaemonContext } from './context';
import type { RoundOutcome } from './journal';

/** What a round did: the one line it logs. */
export interface RoundReport {
  readonly round: number;
  /**
   * `move`: a motion was requested; `would-move`: a decision not carried out (observe mode);
   * `refused`: the cluster or the precondition check refused it; `skip`: nothing to do, see
   * `reason`; `standby`: another instance holds the lock; `error`: the round failed (API).
   */
  readonly outcome: RoundOutcome;
  /**
   * Bounded label: the policy's stop code (`holding`, `below-margin`, `backoff`, …; see
   * `@poise/policy`), or a daemon reason (`standby`, `api-error`, …).
   */
  readonly reason: string;
  readonly message: string;
  readonly level: LogLevel;
  readonly fields: LogFields;
}

/**
 * The daemon's own round reasons (`RoundReport.reason` when the policy did not decide), each with
 * the outcome it goes with. A bounded label set: `poise_round_skips_total{reason}` counts the
 * skip, standby and error ones from 0. A round line with a new reason adds it here (the metrics
 * test reads the round lines of `src/runtime` against this table).
 */
export const DAEMON_REASONS = {
  move: 'move',
  'request-uncertain': 'move',
  observe: 'would-move',
  refused: 'refused',
  'auth-refused': 'refused',
  precondition: 'refused',
  'not-quorate': 'skip',
  'ha-disarmed': 'skip',
  'no-nodes': 'skip',
  'cluster-auto-rebalance': 'skip',
  'telemetry-pending': 'skip',
  'partial-view': 'skip',
  'motion-limit': 'skip',
  'auth-paused': 'skip',
  'not-settled': 'skip',
  settling: 'skip',
  'lock-expiring': 'skip',
  standby: 'standby',
  'lock-error': 'standby',
  'api-error': 'error',
  error: 'error',
} as const satisfies Readonly<Record<string, RoundOutcome>>;

/** Round outcomes whose reason `poise_round_skips_total` counts (rounds that moved nothing and decided nothing). */
export const SKIP_COUNTED_OUTCOMES: ReadonlySet<RoundOutcome> = new Set(['skip', 'standby', 'error']);

/**
 * The stop codes of the reference stages (`@poise/policy`'s `referencePipeline`: one scorer
 * `score-<method>`, whose code is `nothing-scored`), by stage name; the pipeline itself stops
 * with `invalid-input` at any stage. Variant stages do not declare their codes up front: their
 * skips have a series from the first one.
 */
export const REFERENCE_STOP_CODES: Readonly<Record<string, readonly string[]>> = {
  'motion-in-flight': ['motion-in-flight'],
  'threshold-hold': ['below-threshold', 'holding'],
  candidates: ['no-candidates'],
  'select-best': ['nothing-selected'],
  'relative-margin': ['invalid-improvement', 'below-margin'],
};
/** The code of a reference scorer (`score-bruteforce`, `score-topsis`). */
const SCORER_STOP_CODE = 'nothing-scored';
/** The code of a stop for invalid input, from the pipeline or any stage. */
const INVALID_INPUT_CODE = 'invalid-input';

/**
 * The skip reasons known before any round: the daemon's (skip, standby, error), `invalid-input`
 * and the codes of the reference stages in `stages` (the pipeline in force), sorted.
 */
export function knownSkipReasons(stages: readonly { readonly name: string }[]): string[] {
  const reasons = new Set<string>([INVALID_INPUT_CODE]);
  for (const [reason, outcome] of Object.entries(DAEMON_REASONS))
    if (SKIP_COUNTED_OUTCOMES.has(outcome)) reasons.add(reason);
  for (const stage of stages) {
    if (stage.name.startsWith('score-')) reasons.add(SCORER_STOP_CODE);
    if (Object.hasOwn(REFERENCE_STOP_CODES, stage.name))
      for (const code of REFERENCE_STOP_CODES[stage.name]!) reasons.add(code);
  }
  return [...reasons].sort();
}

/** A round's line before the round number is known; `level` defaults by outcome. */
export type PartialReport = Omit<RoundReport, 'round' | 'fields' | 'level'> & { level?: LogLevel; fields?: LogFields };

/** A failed port call as the round's line (counted by endpoint and kind); any other error is re-thrown (a bug). */
export function portFailure(ctx: DaemonContext, err: unknown, what: string): PartialReport {
  if (!(err instanceof PortError)) throw err;
  ctx.metrics.apiErrors.inc({ endpoint: err.endpoint, kind: err.kind });
  return {
    outcome: 'error',
    reason: 'api-error',
    message: `${what} failed (${err.kind}, ${err.endpoint}): ${err.message}; nothing done this round`,
    fields: { endpoint: err.endpoint, kind: err.kind },
  };
}
