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
