import {
  ActiveLock,
  describeHolder,
  LOCK_SAFETY_SECONDS,
  type LockFs,
  lockFsFor,
  pmxcfsLockFs,
  type ProcessIdentity,
} from './lock';
import type { DaemonContext } from './context';
import type { PartialReport } from './report';

/**
 * Active/standby: the lock taken each round (env `pve` with `lock.enabled`; the simulator has
 * one daemon by construction), the lines about it, and whether there is time enough to act.
 */
export class LockGuard {
  readonly lock: ActiveLock | undefined;
  private isActive: boolean;
  private readonly once: boolean;
  /** Whether this instance stood by since start (its state file may be stale then). */
  private wasStandby = false;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly lockFs: LockFs | undefined,
    /** Called when this instance becomes active after standing by (reload the state another instance wrote). */
    private readonly onTakeOver: () => void,
    identity?: ProcessIdentity,
    /** `--once` takes no lock: it acts on nothing. */
    once = false,
  ) {
    const c = ctx.config;
    this.lock =
      !once && c.lock.enabled && c.env === 'pve'
        ? new ActiveLock(c.lock.dir, c.lock.name, () => ctx.now(), lockFs ?? lockFsFor(c.lock.dir), identity)
        : undefined;
    this.isActive = this.lock === undefined;
    this.once = once;
  }

  get active(): boolean {
    return this.isActive;
  }

  /** The start-up line. */
  describe(): void {
    const log = this.ctx.log;
    if (this.once) {
      log.info('lock', 'no active/standby lock: --once acts on nothing');
    } else if (this.lock) {
      const semantics =
        this.lockFs === pmxcfsLockFs || lockFsFor(this.lock.dir) === pmxcfsLockFs ? 'pmxcfs' : 'local directory';
      log.info(
        'lock',
        `active/standby through the lock '${this.lock.path}' (${semantics}): acting only while holding it`,
      );
    } else {
      log.info(
        'lock',
        this.ctx.config.env === 'pve'
          ? 'active/standby lock disabled (lock.enabled: false): this instance always acts'
          : 'no active/standby lock against the simulator',
      );
    }
  }

  /** Takes (or refreshes) the lock for a round: `undefined` when active, else the standby round line. */
  acquire(): PartialReport | undefined {
    if (!this.lock) return undefined;
    const log = this.ctx.log;
    const attempt = this.lock.acquire();
    if (attempt.changed && attempt.held) {
      this.isActive = true;
      const from = attempt.tookOverFrom;
      log.info(
        'lock',
        from
          ? `took over the lock '${this.lock.path}' at once: its holder on this node (${describeHolder(from)}, since ${this.ctx.timeText(from.since)}) is gone; this instance is active`
          : `acquired the lock '${this.lock.path}': this instance is active`,
      );
      // another instance may have acted meanwhile: its state (and motion in flight) counts
      if (this.wasStandby) this.onTakeOver();
    } else if (attempt.changed && !attempt.held) {
      this.isActive = false;
      log.warn('lock', `lost the lock '${this.lock.path}' (${attempt.reason}): stepping down to standby`);
    }
    this.ctx.metrics.active.set(attempt.held ? 1 : 0);
    if (attempt.held) return undefined;
    this.wasStandby = true;
    if (attempt.busy)
      return {
        outcome: 'standby',
        reason: 'standby',
        message: `standby: the lock '${this.lock.path}' is ${attempt.reason}`,
      };
    return {
      outcome: 'standby',
      reason: 'lock-error',
      level: 'warn',
      message: `standby: cannot use the lock '${this.lock.path}': ${attempt.reason}`,
    };
  }

  /** A skip line when the lock has too little time left to issue `what`; `undefined` when acting is safe. */
  tooLittleTime(what: string): PartialReport | undefined {
    if (!this.lock || this.lock.safeToAct()) return undefined;
    return {
      outcome: 'skip',
      reason: 'lock-expiring',
      message: `the lock has ${Math.floor(this.lock.remainingSeconds())} s left (< ${LOCK_SAFETY_SECONDS} s): not issuing ${what}`,
    };
  }

  /** At shutdown: releases the lock if held (a standby can take over at once). */
  release(): void {
    if (this.lock && this.isActive) {
      this.lock.release();
      this.ctx.log.info('lock', `released the lock '${this.lock.path}'`);
    }
  }
}
