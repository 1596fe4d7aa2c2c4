import { type StageError, hasErrorCode } from '@poise/policy';
import type { DaemonContext } from './context';
import type { PartialReport } from './report';

/** Whether `err` is the policy's `StageError` (judged by its code, as every policy error). */
export function isStageError(err: unknown): err is StageError {
  return hasErrorCode(err, 'stage-failed');
}

/** Balancing stopped for failing stages: since when and why (for `/status` and the page). */
export interface BalancingStop {
  /** The daemon's round that stopped it. */
  readonly round: number;
  /** When, on the daemon's clock (seconds). */
  readonly at: number;
  /** The error, as logged once: the last stage failure and what the daemon still does. */
  readonly message: string;
  readonly plugin: string | null;
  readonly stage: string;
}

/**
 * The daemon's answer to a policy stage that fails (`StageError` of `@poise/policy`: a plug-in's
 * stage threw, returned something else than its contract says, or kept state that is not JSON).
 * Each failing round is an `error` line naming the plug-in, the stage and the round; after
 * `limits.max-failing-rounds` of them in a row the daemon stops balancing with one error, logged
 * once and shown on `/status` and the page, while the round goes on with its HA-safety duties
 * (reading the cluster, following a motion in flight, the active/standby lock). A round whose
 * pipeline runs clean resets the count; a reload (a new policy) or a restart re-enables
 * balancing.
 */
export class StageGuard {
  private failing = 0;
  private stop: BalancingStop | undefined;

  constructor(private readonly ctx: DaemonContext) {}

  /** Why balancing is stopped, or `undefined` while it runs. */
  get stopped(): BalancingStop | undefined {
    return this.stop;
  }

  /** Rounds in a row whose pipeline failed so far (0 after a clean one). */
  get failingRounds(): number {
    return this.failing;
  }

  /** The round line while balancing is stopped (the error itself was logged once, when it stopped). */
  stoppedReport(): PartialReport | undefined {
    const stop = this.stop;
    if (stop === undefined) return undefined;
    return {
      outcome: 'skip',
      reason: 'balancing-stopped',
      message: `balancing stopped in round ${stop.round} (a policy stage kept failing: ${stop.plugin === null ? '' : `plug-in '${stop.plugin}', `}stage '${stop.stage}'); a reload (SIGHUP) or a restart re-enables it`,
      fields: { stage: stop.stage, plugin: stop.plugin },
    };
  }

  /** The pipeline ran without a stage failure: the count starts again. */
  succeeded(): void {
    this.failing = 0;
  }

  /**
   * A round whose pipeline failed with `err`: its line (an error naming the plug-in, the stage
   * and the round), and at the limit the one error that stops balancing.
   */
  failed(err: StageError, round: number): PartialReport {
    this.failing++;
    const limit = this.ctx.config.limits.maxFailingRounds;
    const fields = { plugin: err.plugin ?? null, stage: err.stage, hook: err.hook, failingRounds: this.failing };
    // `at <epoch seconds>` as a readable time (UTC, or the simulator's clock)
    const failure = this.ctx.policyText(err.message);
    if (this.failing < limit) {
      return {
        outcome: 'error',
        reason: 'stage-failed',
        level: 'error',
        message: `the policy failed (${this.failing} of ${limit} rounds in a row before balancing stops, limits.max-failing-rounds): ${failure}`,
        fields,
      };
    }
    const message = `balancing stopped: the policy failed in ${this.failing} rounds in a row (limits.max-failing-rounds ${limit}), the last: ${failure}; the daemon still reads the cluster, follows a motion in flight and keeps the lock; a reload (SIGHUP) or a restart re-enables balancing`;
    this.stop = { round, at: this.ctx.now(), message, plugin: err.plugin ?? null, stage: err.stage };
    return { outcome: 'error', reason: 'balancing-stopped', level: 'error', message, fields };
  }

  /** A new policy is in force (a reload): balancing runs again, the count starts again. */
  reset(): void {
    const was = this.stop;
    this.failing = 0;
    this.stop = undefined;
    if (was !== undefined) this.ctx.log.info('config', `balancing re-enabled (it had stopped in round ${was.round})`);
  }
}
