import type { Decision } from '@poise/policy';
import type { LogFields } from '../log';
import { type ClusterSnapshot, type MotionRecord, type MotionRequest, PortError } from '../cluster/port';
import { type DaemonState, MAX_KEPT_OUTCOMES, type MotionOutcome } from './state';
import type { DaemonContext } from './context';
import type { LockGuard } from './lock-guard';
import { type PartialReport, portFailure } from './report';
import type { StateKeeper } from './state-keeper';
import { describeMotion, percent } from './text';

/** The sliding window of `limits.max-motions-per-hour`. */
export const MOTION_LIMIT_WINDOW_SECONDS = 3600;
/**
 * After a motion was refused for the credentials (a 403: a privilege missing; a 401), motions
 * of that kind are paused: the next round that decides one tries its request again (a refusal
 * applies nothing, so the request is the check), so a privilege granted is used within a round
 * of the grant. The re-checks' refusals are logged at debug level and counted in
 * `poise_api_errors_total`; the first one is said once.
 */
const AUTH_RECHECK_ROUNDS = 1;

/** Motions of one kind paused for a fault of the credentials. */
interface AuthPause {
  /** What is missing (`the API token lacks 'Sys.Console' on '/' (…)`). */
  readonly fault: string;
  readonly since: number;
  readonly nextCheckAt: number;
  /** Refusals so far. */
  readonly refusals: number;
}

/** `HA motions` / `guest migrations`. */
function kindOf(via: 'ha' | 'guest'): string {
  return via === 'ha' ? 'HA motions' : 'guest migrations';
}

/**
 * The daemon's motions: a decision carried out (the guards before a request, the write-ahead
 * record, the request) and the motion in flight followed to its outcome, which is recorded
 * for the status and for the policy.
 */
export class MotionFollower {
  /** Motions paused for a fault of the credentials, by kind (not persisted: a restart checks at once). */
  private readonly pauses = new Map<'ha' | 'guest', AuthPause>();

  constructor(
    private readonly ctx: DaemonContext,
    private readonly keeper: StateKeeper,
    private readonly lock: LockGuard,
  ) {}

  /** Pauses motions of `via` after a refusal for the credentials (said once); returns when they are tried again. */
  private pause(via: 'ha' | 'guest', fault: string, now: number): number {
    const old = this.pauses.get(via);
    const refusals = (old?.refusals ?? 0) + 1;
    const nextCheckAt = now + AUTH_RECHECK_ROUNDS * this.ctx.config.intervalSeconds;
    this.pauses.set(via, { fault, since: old?.since ?? now, nextCheckAt, refusals });
    const log = this.ctx.log;
    if (old === undefined || old.fault !== fault) {
      log.warn(
        'motion',
        `${kindOf(via)} paused: ${fault}; none is accepted until that is fixed: the request is tried again each round that decides one (from ${this.ctx.timeText(nextCheckAt)}), refusals said at debug level`,
        {
          via,
          fault,
        },
      );
    } else {
      log.debug('motion', `${kindOf(via)} still paused: ${fault}; tried again at ${this.ctx.timeText(nextCheckAt)}`, {
        via,
      });
    }
    return nextCheckAt;
  }

  /** A motion of `via` was accepted: a pause of that kind is over (said once). */
  private resume(via: 'ha' | 'guest'): void {
    const pause = this.pauses.get(via);
    if (pause === undefined) return;
    this.pauses.delete(via);
    this.ctx.log.info(
      'motion',
      `${kindOf(via)} resume: the cluster accepted one again (paused since ${this.ctx.timeText(pause.since)}: ${pause.fault})`,
      { via },
    );
  }

  /** Motions paused for the credentials, for `/status`. */
  pausedKinds(): Record<string, unknown> {
    return Object.fromEntries(
      [...this.pauses].map(([via, p]) => [
        via,
        { fault: p.fault, since: this.ctx.timeText(p.since), nextCheckAt: this.ctx.timeText(p.nextCheckAt) },
      ]),
    );
  }

  /** Records an outcome: in the history (status, metrics) and for the policy (reported next time it runs). */
  recordOutcome(
    motion: Pick<MotionRecord, 'sid' | 'source' | 'target' | 'via' | 'resources'> & Partial<MotionRecord>,
    result: 'succeeded' | 'failed',
    reason: string | undefined,
  ): Pick<DaemonState, 'outcomes' | 'unreported'> {
    const state = this.keeper.state;
    const outcome: MotionOutcome = {
      sid: motion.sid,
      source: motion.source,
      target: motion.target,
      via: motion.via,
      result,
      reason,
      at: this.ctx.now(),
    };
    const metrics = this.ctx.metrics;
    (result === 'succeeded' ? metrics.motionsSucceeded : metrics.motionsFailed).inc({ via: motion.via });
    this.ctx.journal.motions.ended(motion, result, reason, outcome.at);
    if (result === 'succeeded') this.ctx.runCounts.succeeded++;
    else this.ctx.runCounts.failed++;
    return {
      outcomes: [...state.outcomes, outcome].slice(-MAX_KEPT_OUTCOMES),
      unreported: [
        ...state.unreported,
        {
          resources: [...motion.resources],
          source: motion.source,
          target: motion.target,
          ok: result === 'succeeded',
          detail: reason,
        },
      ],
    };
  }

  /**
   * Where the motion in flight stands; an outcome ends it (logged, recorded) and is returned.
   * Throws a PortError when its status cannot be read.
   */
  async follow(
    motion: MotionRecord,
    snapshot: ClusterSnapshot,
    now: number,
  ): Promise<'succeeded' | 'failed' | undefined> {
    const age = Math.round(now - motion.issuedAt);
    const limits = this.ctx.config.limits;
    const timeout = limits.motionTimeoutSeconds;
    const progress =
      now - motion.issuedAt > timeout
        ? ({
            status: 'failed',
            reason: `no outcome within ${timeout} s (limits.motion-timeout); no longer followed`,
          } as const)
        : await this.ctx.host.port.followMotion(motion, snapshot, {
            pickupTimeoutSeconds: limits.pickupTimeoutSeconds,
          });
    if (progress.status === 'pending') {
      if (progress.phase !== motion.phase) this.keeper.update({ motion: { ...motion, phase: progress.phase } });
      return undefined;
    }
    const log = this.ctx.log;
    if (progress.status === 'succeeded') {
      this.keeper.update({ motion: null, ...this.recordOutcome(motion, 'succeeded', undefined) });
      log.info('motion', `${describeMotion(motion)} succeeded after ${age} s`, {
        sid: motion.sid,
        target: motion.target,
        result: 'succeeded',
      });
    } else {
      this.keeper.update({ motion: null, ...this.recordOutcome(motion, 'failed', progress.reason) });
      log.warn('motion', `${describeMotion(motion)} failed after ${age} s: ${progress.reason}`, {
        sid: motion.sid,
        target: motion.target,
        result: 'failed',
      });
    }
    return progress.status;
  }

  /**
   * Carries out a decision: explained only in observe mode; otherwise, unless a guard stops it
   * (the cluster's own balancer for HA resources, the hourly limit, the lock's time left, the
   * guest precondition check), written ahead to the state file and requested.
   */
  async request(
    decision: Extract<Decision, { action: 'move' }>,
    snapshot: ClusterSnapshot,
    now: number,
  ): Promise<PartialReport> {
    const config = this.ctx.config;
    const m = decision.migration;
    const guest = snapshot.guests.find((g) => g.sid === m.sid);
    const via = guest?.ha ? 'ha' : 'guest';
    const kind = guest?.type === 'ct' ? 'relocate' : 'migrate';
    const resources = decision.resources.length > 0 ? [...decision.resources] : [m.sid];
    const what = `${describeMotion({ kind, sid: m.sid, source: m.source, target: m.target, resources })} (imbalance ${percent(decision.imbalanceBefore)} → ${percent(decision.imbalanceAfter)})`;
    const fields: LogFields = {
      imbalance: decision.imbalanceBefore,
      expected: decision.imbalanceAfter,
      sid: m.sid,
      resources,
      source: m.source,
      target: m.target,
      via,
    };
    if (config.mode === 'observe') {
      this.ctx.runCounts.wouldMove++;
      return { outcome: 'would-move', reason: 'observe', message: `observe: would ${what}`, fields };
    }
    if (via === 'ha' && snapshot.crs.autoRebalance) {
      return {
        outcome: 'skip',
        reason: 'cluster-auto-rebalance',
        message: `not moving HA resource ${m.sid}: the cluster's own ha-auto-rebalance is on`,
        fields,
      };
    }
    const state = this.keeper.state;
    const recent = state.motionsIssuedAt.filter((t) => now - t < MOTION_LIMIT_WINDOW_SECONDS);
    if (recent.length >= config.limits.maxMotionsPerHour) {
      if (recent.length !== state.motionsIssuedAt.length) this.keeper.update({ motionsIssuedAt: recent });
      const next = Math.min(...recent) + MOTION_LIMIT_WINDOW_SECONDS;
      return {
        outcome: 'skip',
        reason: 'motion-limit',
        message: `limit reached: ${recent.length} motions in the last hour (max ${config.limits.maxMotionsPerHour}) until ${this.ctx.timeText(next)}; not issuing ${what}`,
        fields,
      };
    }
    const expiring = this.lock.tooLittleTime(what);
    if (expiring) return { ...expiring, fields };
    const pause = this.pauses.get(via);
    if (pause && now < pause.nextCheckAt) {
      return {
        outcome: 'skip',
        reason: 'auth-paused',
        message: `not requesting ${what}: ${kindOf(via)} are paused since ${this.ctx.timeText(pause.since)}: ${pause.fault}; tried again at ${this.ctx.timeText(pause.nextCheckAt)}`,
        fields,
      };
    }
    const request: MotionRequest = { sid: m.sid, kind, target: m.target };
    const port = this.ctx.host.port;
    const metrics = this.ctx.metrics;
    if (via === 'guest') {
      let check;
      try {
        check = await port.checkGuestMigration(request);
      } catch (err) {
        return portFailure(this.ctx, err, `the migration check of ${m.sid}`);
      }
      if (!check.allowed) {
        this.keeper.update(
          this.recordOutcome(
            { sid: m.sid, source: m.source, target: m.target, via, resources },
            'failed',
            check.reason,
          ),
        );
        return {
          outcome: 'refused',
          reason: 'precondition',
          level: 'warn',
          message: `precondition check refused to ${what}: ${check.reason}`,
          fields,
        };
      }
    }
    // write-ahead: the motion is on disk before the request leaves, so a crash in between
    // leads to following it, never to a second request
    const record: MotionRecord = {
      sid: m.sid,
      resources,
      kind,
      via,
      source: m.source,
      target: m.target,
      issuedAt: now,
      phase: 'requesting',
      haUid: guest?.ha?.uid,
      task: undefined,
      imbalanceBefore: decision.imbalanceBefore,
      imbalanceAfter: decision.imbalanceAfter,
    };
    this.keeper.update({ motion: record, motionsIssuedAt: [...recent, now] });
    this.ctx.journal.motions.requested(record);
    metrics.motionsIssued.inc({ via });
    this.ctx.runCounts.requested++;
    let reply;
    try {
      reply = via === 'ha' ? await port.requestMotion(request) : await port.requestGuestMigration(request);
    } catch (err) {
      if (!(err instanceof PortError)) throw err;
      metrics.apiErrors.inc({ endpoint: err.endpoint, kind: err.kind });
      return {
        outcome: 'move',
        reason: 'request-uncertain',
        level: 'warn',
        message: `${what}: the request failed (${err.kind}, ${err.endpoint}: ${err.message}); it may have been applied, so it is followed, not repeated`,
        fields,
      };
    }
    if (!reply.accepted) {
      if (reply.error) metrics.apiErrors.inc({ endpoint: reply.error.endpoint, kind: reply.error.kind });
      // only motions the cluster accepted count toward max-motions-per-hour
      if (reply.authFault !== undefined) {
        // a fault of the credentials, not of this (guest, target) pair: no outcome for the policy
        this.keeper.update({ motion: null, motionsIssuedAt: recent });
        this.ctx.runCounts.forbidden++;
        this.ctx.runCounts.forbiddenFault = reply.authFault;
        this.ctx.journal.motions.ended(record, 'failed', `refused: ${reply.authFault}`, now);
        const next = this.pause(via, reply.authFault, now);
        return {
          outcome: 'refused',
          reason: 'auth-refused',
          level: 'warn',
          message: `the cluster refused to ${what}: ${reply.authFault}; ${kindOf(via)} are paused, tried again at ${this.ctx.timeText(next)}`,
          fields,
        };
      }
      this.keeper.update({
        motion: null,
        motionsIssuedAt: recent,
        ...this.recordOutcome(record, 'failed', reply.reason),
      });
      return {
        outcome: 'refused',
        reason: 'refused',
        level: 'warn',
        message: `the cluster refused to ${what}: ${reply.reason}`,
        fields,
      };
    }
    this.resume(via);
    this.keeper.update({ motion: { ...record, phase: 'queued', task: reply.task } });
    const along = reply.comigrated.length > 0 ? `; HA moves ${reply.comigrated.join(', ')} along` : '';
    return { outcome: 'move', reason: 'move', message: `${what}${along}`, fields };
  }
}
