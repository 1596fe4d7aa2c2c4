import { ActiveLock, LOCK_SAFETY_SECONDS, type LockFs, lockFsFor, pmxcfsLockFs } from '../lock';
import type { DaemonContext } from './context';
import type { PartialReport } from './report';

/**
 * Active/standby: the lock taken each round (env `pve` with `lock.enabled`; the simulator has
 * one daemon by construction), the lines about it, and whether there is time enough to act.
 */
export class LockGuard {
  readonly lock: ActiveLock | undefined;
  private isActive: boolean;
  /** Whether this instance stood by since start (its state file may be stale then). */
  private wasStandby = false;

  constructor(
    private readonly ctx: DaemonContext,
    private readonly lockFs: LockFs | undefined,
    /** Called when this instance becomes active after standing by (reload the state another instance wrote). */
    private readonly onTakeOver: () => void,
  ) {
    const c = ctx.config;
    this.lock = c.lock.enabled && c.env === 'pve' ? new ActiveLock(c.lock.dir, c.lock.name, () => ctx.now(), lockFs ?? lockFsFor(c.lock.dir)) : undefined;
    this.isActive = this.lock === undefined;
  }

  get active(): boolean {
    return this.isActive;
  }

  /** The start-up line. */
  describe(): void {
    const log = this.ctx.log;
    if (this.lock) {
      const semantics = this.lockFs === pmxcfsLockFs || lockFsFor(this.lock.dir) === pmxcfsLockFs ? 'pmxcfs' : 'local directory';
      log.info('lock', `active/standby through the lock '${this.lock.path}' (${semantics}): acting only while holding it`);
    } else {
      log.info('lock', this.ctx.config.env === 'pve' ? 'active/standby lock disabled (lock.enabled: false): this instance always acts' : 'no active/standby lock against the simulator');
    }
  }

  /** Takes (or refreshes) the lock for a round: `undefined` when active, else the standby round line. */
  acquire(): PartialReport | undefined {
    if (!this.lock) return undefined;
    const log = this.ctx.log;
    const attempt = this.lock.acquire();
    if (attempt.changed && attempt.held) {
      this.isActive = true;
      log.info('lock', `acquired the lock '${this.lock.path}': this instance is active`);
      // another instance may have acted meanwhile: its state (and motion in flight) counts
      if (this.wasStandby) this.onTakeOver();
    } else if (attempt.changed && !attempt.held) {
      this.isActive = false;
      log.warn('lock', `lost the lock '${this.lock.path}' (${attempt.reason}): stepping down to standby`);
    }
    this.ctx.metrics.active.set(attempt.held ? 1 : 0);
    if (attempt.held) return undefined;
    this.wasStandby = true;
    return { outcome: 'standby', reason: 'standby', message: `standby: the lock '${this.lock.path}' is ${attempt.reason}` };
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
