import { mkdirSync, rmdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, ManagerError } from './errors';

/** pmxcfs expires a lock that was not refreshed for longer than this (the HA stack's `ha_manager_lock` too). */
export const LOCK_TIMEOUT_SECONDS = 120;
/**
 * The daemon acts only while its lock has at least this long left, so a round slowed by API
 * timeouts never issues a motion after a standby could have taken over.
 */
export const LOCK_SAFETY_SECONDS = 30;

/**
 * The file-system operations the lock needs, with pmxcfs semantics:
 * - `mkdir` of the lock directory is atomic and fails when it exists (the lock is held);
 * - `touch` (utime to now) refreshes a lock the caller holds;
 * - `requestUnlock` asks to delete the lock if it expired (not refreshed for more than 120 s);
 *   on pmxcfs that is `utime(path, 0, 0)`, which the file system interprets as an unlock
 *   request and applies only to an expired lock.
 */
export interface LockFs {
  /** Creates the lock directory; `false` when it exists already. */
  mkdir(path: string): boolean;
  touch(path: string, seconds: number): void;
  requestUnlock(path: string, seconds: number): void;
  rmdir(path: string): void;
  /** Creates the parent directory if missing (non-recursive, like the reference's `mkdir $lockdir`). */
  ensureDir(dir: string): void;
}

function mkdirLock(path: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function ensureDir(dir: string): void {
  try {
    mkdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (!statSync(dir).isDirectory()) throw new Error(`'${dir}' is not a directory`);
}

/** pmxcfs (`/etc/pve/priv/lock`): expiry and unlock are done by the cluster file system. */
export const pmxcfsLockFs: LockFs = {
  mkdir: mkdirLock,
  touch: (path, seconds) => utimesSync(path, seconds, seconds),
  requestUnlock: (path) => {
    try {
      utimesSync(path, 0, 0); // the cfs unlock request
    } catch {
      // gone already: the next mkdir will tell
    }
  },
  rmdir: (path) => rmdirSync(path),
  ensureDir,
};

/**
 * A local directory with the same semantics, for tests and single-host set-ups: the unlock
 * request removes the directory when its mtime is more than 120 s old, as pmxcfs does on its
 * side. (pmxcfs does this atomically; here two standbys asking at the same instant could both
 * remove and re-create it — the take-over still needs a second round's `mkdir`, and only one
 * `mkdir` succeeds.)
 */
export const localLockFs: LockFs = {
  mkdir: mkdirLock,
  touch: (path, seconds) => utimesSync(path, seconds, seconds),
  requestUnlock: (path, seconds) => {
    try {
      const mtime = statSync(path).mtimeMs / 1000;
      if (seconds - mtime > LOCK_TIMEOUT_SECONDS) rmdirSync(path);
    } catch {
      // gone or replaced meanwhile: the next mkdir will tell
    }
  },
  rmdir: (path) => rmdirSync(path),
  ensureDir,
};

/** pmxcfs semantics for directories on the cluster file system, the local emulation elsewhere. */
export function lockFsFor(dir: string): LockFs {
  return dir === '/etc/pve' || dir.startsWith('/etc/pve/') ? pmxcfsLockFs : localLockFs;
}

/** The result of one attempt. */
export interface LockAttempt {
  readonly held: boolean;
  /** The holding state changed with this attempt (acquired, or lost). */
  readonly changed: boolean;
  /** Why it is not held (another instance holds it, the update failed, …). */
  readonly reason?: string;
}

/**
 * The active/standby lock, acquired like the reference HA stack's `get_pve_lock`
 * (PVE::HA::Env::PVE2): while the last successful attempt is less than 120 s old, refresh by
 * `utime` (fails if the lock is gone: lost); otherwise try `mkdir`, and when the directory
 * exists send an unlock request (which removes it only if it expired) and fail this time. So a
 * standby takes over in the first round after the lock expired plus one: one round to remove
 * the stale lock, the next to create it. Every instance must call {@link acquire} once per
 * round; the holder stays active only by doing so.
 */
export class ActiveLock {
  readonly path: string;
  private lastLockTime: number | undefined;
  private held = false;

  constructor(
    readonly dir: string,
    readonly name: string,
    private readonly now: () => number,
    private readonly fs: LockFs = lockFsFor(dir),
  ) {
    this.path = join(dir, name);
  }

  acquire(): LockAttempt {
    const now = this.now();
    let got = false;
    let reason: string | undefined;
    try {
      try {
        this.fs.ensureDir(this.dir);
      } catch (err) {
        throw new ManagerError(
          'lock',
          `cannot create the lock directory '${this.dir}' (pmxcfs not mounted?): ${errorMessage(err)}`,
          { cause: err },
        );
      }
      if (this.lastLockTime !== undefined && now - this.lastLockTime < LOCK_TIMEOUT_SECONDS) {
        try {
          this.fs.touch(this.path, now);
          got = true;
        } catch (err) {
          reason = `lock update failed - ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`;
        }
      } else if (this.fs.mkdir(this.path)) {
        this.fs.touch(this.path, now);
        got = true;
      } else {
        this.fs.requestUnlock(this.path, now);
        reason = 'held by another instance';
      }
    } catch (err) {
      reason = errorMessage(err);
    }
    if (got) this.lastLockTime = now;
    const changed = got !== this.held;
    this.held = got;
    return got ? { held: true, changed } : { held: false, changed, reason: reason ?? 'not held' };
  }

  /** Seconds the lock stays valid without a refresh (0 when not held). */
  remainingSeconds(): number {
    if (!this.held || this.lastLockTime === undefined) return 0;
    return Math.max(0, LOCK_TIMEOUT_SECONDS - (this.now() - this.lastLockTime));
  }

  /** Whether it is held with enough time left to act ({@link LOCK_SAFETY_SECONDS}). */
  safeToAct(): boolean {
    return this.remainingSeconds() > LOCK_SAFETY_SECONDS;
  }

  /** Releases the lock if held (a standby can take over at once). */
  release(): void {
    if (this.remainingSeconds() > 0) {
      try {
        this.fs.rmdir(this.path);
      } catch {
        // already gone
      }
    }
    this.held = false;
    this.lastLockTime = undefined;
  }
}
