import type { Decision } from '@poise/policy';
import type { LogFields } from '../log';
import {
  type ClusterSnapshot,
  type MotionRecord,
  type MotionRequest,
  PortError,
  type PrivilegeNeed,
} from '../cluster/port';
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
 * of that kind are paused. While the refusal names the privilege and the port can ask for it
 * (`BalancerPort.checkPrivilege`: on Proxmox VE `GET /access/permissions?path=`), every round
 * asks once, and the request is sent again only once the answer says the privilege is held: at
 * most one refused request per pause, and the first motion in the round that sees the grant.
 * When the port cannot tell (no such endpoint on an older release, the read refused, the
 * network; a 401; or a request refused again right after a grant was reported), the request
 * itself is the check, sent again once every AUTH_RETRY_ROUNDS rounds — never every round.
 */
const AUTH_RETRY_ROUNDS = 10;

/** Motions of one kind paused for a fault of the credentials. */
interface AuthPause {
  /** What is missing (`the API token lacks 'Sys.Console' on '/' (…)`). */
  readonly fault: string;
  /** The privilege to ask for; `undefined` when the refusal named none (a 401). */
  readonly need: PrivilegeNeed | undefined;
  readonly since: number;
  /** When the request may be sent again without a grant seen (the fallback). */
  readonly retryAt: number;
  /** Refusals so far. */
  readonly refusals: number;
  /**
   * This round's answer about `need`: `missing` (asked, not held), `unknown` (could not ask;
   * `why` says what failed), or not asked yet.
   */
  readonly answer: { readonly at: number; readonly held: 'missing' | 'unknown'; readonly why?: string } | undefined;
  /** A grant was reported and the request refused again: answers are not trusted for this pause. */
  readonly distrusted: boolean;
  /** Asking failed at least once during this pause (said once at warn level). */
  readonly askFailed: boolean;
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
  /** When a pause last ended because its privilege was reported held, by kind. */
  private readonly grantedAt = new Map<'ha' | 'guest', number>();

  constructor(
    private readonly ctx: DaemonContext,
    private readonly keeper: StateKeeper,
    private readonly lock: LockGuard,
  ) {}

  /** Whether the port can ask for the privilege a pause names (and its answers are trusted). */
  private asks(pause: AuthPause): boolean {
    return pause.need !== undefined && !pause.distrusted && this.ctx.host.port.checkPrivilege !== undefined;
  }

  /** How the end of a pause is learned, in words. */
  private howChecked(pause: AuthPause): string {
    if (!this.asks(pause))
      return `the request is sent again once every ${AUTH_RETRY_ROUNDS} rounds (next at ${this.ctx.timeText(pause.retryAt)})`;
    const need = pause.need!;
    return `GET /access/permissions is asked each round for '${need.privilege}' on '${need.path}', and the request sent again once it is held (once every ${AUTH_RETRY_ROUNDS} rounds if that cannot be asked)`;
  }

  /**
   * Pauses motions of `via` after a refusal for the credentials (said once at warn level, again
   * at debug); returns the line's tail saying how it ends.
   */
  private pause(via: 'ha' | 'guest', fault: string, need: PrivilegeNeed | undefined, now: number): string {
    const old = this.pauses.get(via);
    const refusals = (old?.refusals ?? 0) + 1;
    const retryAt = now + AUTH_RETRY_ROUNDS * this.ctx.config.intervalSeconds;
    // refused in the round whose answer said the privilege was held: the answers do not tell
    const distrusted = (old?.distrusted ?? false) || this.grantedAt.get(via) === now;
    const pause: AuthPause = {
      fault,
      need,
      since: old?.since ?? now,
      retryAt,
      refusals,
      answer: undefined,
      distrusted,
      askFailed: old?.askFailed ?? false,
    };
    this.pauses.set(via, pause);
    const log = this.ctx.log;
    const how = this.howChecked(pause);
    if (old === undefined || old.fault !== fault || old.distrusted !== distrusted) {
      const why = distrusted && !old?.distrusted ? ' (refused right after the privilege was reported held)' : '';
      log.warn('motion', `${kindOf(via)} paused: ${fault}; none is requested until that is fixed: ${how}${why}`, {
        via,
        fault,
      });
    } else {
      log.debug('motion', `${kindOf(via)} still paused (refusal ${refusals}): ${fault}; ${how}`, { via });
    }
    return how;
  }

  /** A pause of `via` is over (said once): `what` says how it ended. */
  private resume(via: 'ha' | 'guest', what: string): void {
    const pause = this.pauses.get(via);
    if (pause === undefined) return;
    this.pauses.delete(via);
    this.ctx.log.info(
      'motion',
      `${kindOf(via)} resume: ${what} (paused since ${this.ctx.timeText(pause.since)}: ${pause.fault})`,
      { via },
    );
  }

  /**
   * Once a round, before anything is decided: for each pause whose privilege the port can ask
   * for, asks (one cheap read); held = the pause ends now (the round's decision may request at
   * once), not held or unknown = the answer is kept for this round's `request`. A failed ask is
   * counted in `poise_api_errors_total`, said at warn level the first time, at debug after.
   */
  async checkPauses(now: number): Promise<void> {
    const port = this.ctx.host.port;
    for (const [via, pause] of [...this.pauses]) {
      if (!this.asks(pause) || port.checkPrivilege === undefined) continue;
      const need = pause.need!;
      let held: boolean;
      try {
        held = await port.checkPrivilege(need);
      } catch (err) {
        if (!(err instanceof PortError)) throw err;
        this.ctx.metrics.apiErrors.inc({ endpoint: err.endpoint, kind: err.kind });
        const why = `${err.kind}, ${err.endpoint}: ${err.message}`;
        this.pauses.set(via, { ...pause, answer: { at: now, held: 'unknown', why }, askFailed: true });
        this.ctx.log.log(
          pause.askFailed ? 'debug' : 'warn',
          'motion',
          `${kindOf(via)} paused: whether the API token holds '${need.privilege}' on '${need.path}' cannot be asked (${why}); the request is sent again once every ${AUTH_RETRY_ROUNDS} rounds instead (next at ${this.ctx.timeText(pause.retryAt)})`,
          { via },
        );
        continue;
      }
      if (held) {
        this.grantedAt.set(via, now);
        this.resume(via, `the API token holds '${need.privilege}' on '${need.path}' now (GET /access/permissions)`);
        continue;
      }
      this.pauses.set(via, { ...pause, answer: { at: now, held: 'missing' } });
      this.ctx.log.debug('motion', `${kindOf(via)} still paused: '${need.privilege}' on '${need.path}' is not held`, {
        via,
      });
    }
  }

  /**
   * Whether this round's request of `via` waits (a skip line's reason), or `undefined` to send it:
   * a pause answered `missing` this round waits; one that could not be asked, or that asks
   * nothing, waits until its `retryAt`.
   */
  private pausedNow(via: 'ha' | 'guest', now: number): string | undefined {
    const pause = this.pauses.get(via);
    if (pause === undefined) return undefined;
    const since = `${kindOf(via)} are paused since ${this.ctx.timeText(pause.since)}: ${pause.fault}`;
    const answer = pause.answer?.at === now ? pause.answer : undefined;
    if (answer?.held === 'missing' && this.asks(pause))
      return `${since}; GET /access/permissions says '${pause.need!.privilege}' on '${pause.need!.path}' is still not held: asked again next round`;
    if (now >= pause.retryAt) return undefined;
    const cannot = answer?.held === 'unknown' ? ' (the privilege cannot be asked)' : '';
    return `${since}; the request is sent again at ${this.ctx.timeText(pause.retryAt)}${cannot}`;
  }

  /** Motions paused for the credentials, for `/status`: what is missing, since when, when it is checked next, how. */
  pausedKinds(): Record<string, unknown> {
    const interval = this.ctx.config.intervalSeconds;
    return Object.fromEntries(
      [...this.pauses].map(([via, p]) => {
        const asking = this.asks(p) && p.answer?.held !== 'unknown';
        const next = asking ? (p.answer?.at ?? p.since) + interval : p.retryAt;
        return [
          via,
          {
            fault: p.fault,
            since: this.ctx.timeText(p.since),
            nextCheckAt: this.ctx.timeText(next),
            check: asking ? 'permissions' : 'retry',
            refusals: p.refusals,
          },
        ];
      }),
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
    const paused = this.pausedNow(via, now);
    if (paused !== undefined) {
      return { outcome: 'skip', reason: 'auth-paused', message: `not requesting ${what}: ${paused}`, fields };
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
        const how = this.pause(via, reply.authFault, reply.privilege, now);
        return {
          outcome: 'refused',
          reason: 'auth-refused',
          level: 'warn',
          message: `the cluster refused to ${what}: ${reply.authFault}; ${kindOf(via)} are paused: ${how}`,
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
    this.resume(via, 'the cluster accepted one again');
    this.keeper.update({ motion: { ...record, phase: 'queued', task: reply.task } });
    const along = reply.comigrated.length > 0 ? `; HA moves ${reply.comigrated.join(', ')} along` : '';
    return { outcome: 'move', reason: 'move', message: `${what}${along}`, fields };
  }
}
