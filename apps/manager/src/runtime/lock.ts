import {
  accessSync,
  constants,
  mkdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { errorMessage, ManagerError } from '../errors';

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
  /** The holder record beside the lock (a plain file: never inside the lock directory, which pmxcfs must be able to delete). */
  readFile(path: string): string | undefined;
  writeFile(path: string, text: string): void;
  removeFile(path: string): void;
}

function readIfThere(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const plainFiles = {
  readFile: readIfThere,
  writeFile: (path: string, text: string) => writeFileSync(path, text, { mode: 0o600 }),
  removeFile: (path: string) => rmSync(path, { force: true }),
};

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
  ...plainFiles,
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
  ...plainFiles,
};

/** pmxcfs semantics for directories on the cluster file system, the local emulation elsewhere. */
export function lockFsFor(dir: string): LockFs {
  return dir === '/etc/pve' || dir.startsWith('/etc/pve/') ? pmxcfsLockFs : localLockFs;
}

/**
 * Who holds the lock, recorded beside it (`<lock>.holder`, JSON) when it is taken: the node,
 * its boot, the process and when the process started, so that an instance restarted on the
 * same node can tell that the holder is gone (crashed, killed) and take over at once.
 */
export interface LockHolder {
  /** The node's host name (the Proxmox VE node name). */
  readonly node: string;
  /** `/proc/sys/kernel/random/boot_id`: another boot means every process of the old one is gone. */
  readonly bootId: string | undefined;
  readonly pid: number;
  /** The process start time (`/proc/<pid>/stat`, clock ticks since boot): a pid reused by another process has another. */
  readonly startTime: string | undefined;
  /** Seconds (the daemon's clock) when it took the lock. */
  readonly since: number;
}

/** This process, and whether a holder's process still runs (injectable for tests). */
export interface ProcessIdentity {
  readonly self: Omit<LockHolder, 'since'>;
  /** Whether `holder` (recorded on this node) still runs: same boot, its pid alive with the same start time. */
  running(holder: LockHolder): boolean;
}

/** Field 22 (`starttime`) of `/proc/<pid>/stat`, after the command name in parentheses. */
function processStartTime(pid: number): string | undefined {
  const stat = readIfThere(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

/** Whether a process exists (`kill 0`: ESRCH = gone; EPERM = it exists, someone else's). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** This process on this node, read from the system (`/proc` on Linux). */
export function systemIdentity(): ProcessIdentity {
  const bootId = readIfThere('/proc/sys/kernel/random/boot_id')?.trim();
  const self = { node: hostname().split('.')[0]!, bootId, pid: process.pid, startTime: processStartTime(process.pid) };
  return {
    self,
    running: (holder) => {
      if (holder.bootId !== undefined && bootId !== undefined && holder.bootId !== bootId) return false;
      if (holder.pid === self.pid) return true;
      const start = processStartTime(holder.pid);
      if (start !== undefined && holder.startTime !== undefined) return start === holder.startTime;
      return processExists(holder.pid);
    },
  };
}

/** A holder record as written; `undefined` when it is not one (never trusted for a take-over then). */
function parseHolder(text: string | undefined): LockHolder | undefined {
  if (text === undefined) return undefined;
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (typeof h.node !== 'string' || !Number.isInteger(h.pid) || typeof h.since !== 'number') return undefined;
    return {
      node: h.node,
      bootId: typeof h.bootId === 'string' ? h.bootId : undefined,
      pid: h.pid!,
      startTime: typeof h.startTime === 'string' ? h.startTime : undefined,
      since: h.since,
    };
  } catch {
    return undefined;
  }
}

/** `pid 1234 on node2` for messages. */
export function describeHolder(h: LockHolder): string {
  return `pid ${h.pid} on ${h.node}`;
}

/** The result of one attempt. */
export interface LockAttempt {
  readonly held: boolean;
  /** The holding state changed with this attempt (acquired, or lost). */
  readonly changed: boolean;
  /**
   * Why it is not held: `held by another instance (pid 1234 on node2)`, or what failed
   * (`cannot create the lock directory …`, `lock update failed - EACCES`).
   */
  readonly reason?: string;
  /** Another instance holds it (as opposed to a failure to use the lock). */
  readonly busy?: boolean;
  /** Taken over at once from this holder: an instance of this node whose process is gone. */
  readonly tookOverFrom?: LockHolder;
}

/**
 * Whether a lock can work with this directory, for the start-up checks and `--check-config`:
 * the directory exists and is writable, or it can be created (its parent exists and is a
 * writable directory). A message naming the key to change, or `undefined`.
 */
export function lockDirProblem(dir: string): string | undefined {
  const fix =
    "set 'lock.dir' to a directory every instance shares (on a cluster node: /etc/pve/priv/lock), or 'lock.enabled: false' to run a single instance without the lock";
  const onPmxcfs = dir === '/etc/pve' || dir.startsWith('/etc/pve/');
  const where = onPmxcfs ? ' (is this a Proxmox VE cluster node, with /etc/pve mounted?)' : '';
  const usable = (path: string): string | undefined => {
    let st;
    try {
      st = statSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // ENOTDIR: a component of the path is a file; the parent's check says which
      return code === 'ENOENT' || code === 'ENOTDIR'
        ? 'does not exist'
        : `cannot be read (${code ?? errorMessage(err)})`;
    }
    if (!st.isDirectory()) return 'is not a directory';
    try {
      accessSync(path, constants.W_OK | constants.X_OK);
    } catch {
      return 'is not writable by this user';
    }
    return undefined;
  };
  const self = usable(dir);
  if (self === undefined) return undefined;
  if (self !== 'does not exist') return `lock.dir: the lock directory '${dir}' ${self}${where}; ${fix}`;
  const parent = dirname(dir);
  const up = usable(parent);
  if (up === undefined) return undefined; // created at the first round, as the reference does
  return `lock.dir: the lock directory '${dir}' does not exist and cannot be created: '${parent}' ${up}${where}; ${fix}`;
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
  /** The holder record beside the lock directory. */
  readonly holderPath: string;
  private lastLockTime: number | undefined;
  private held = false;

  constructor(
    readonly dir: string,
    readonly name: string,
    private readonly now: () => number,
    private readonly fs: LockFs = lockFsFor(dir),
    private readonly identity: ProcessIdentity = systemIdentity(),
  ) {
    this.path = join(dir, name);
    this.holderPath = `${this.path}.holder`;
  }

  /** The recorded holder, when there is a valid record. */
  holder(): LockHolder | undefined {
    return parseHolder(this.fs.readFile(this.holderPath));
  }

  private recordHolder(now: number): void {
    try {
      this.fs.writeFile(this.holderPath, `${JSON.stringify({ ...this.identity.self, since: now })}\n`);
    } catch {
      // the lock works without it; only a restart on this node then waits for the expiry
    }
  }

  /**
   * A holder recorded on this node whose process is gone (this node rebooted, or the process
   * crashed or was killed): this instance replaces it at once instead of waiting for the 120 s
   * expiry. Only on the same node: another node cannot tell whether the holder runs.
   */
  private ownStaleHolder(): LockHolder | undefined {
    const holder = this.holder();
    const self = this.identity.self;
    if (holder === undefined || holder.node !== self.node || (holder.pid === self.pid && holder.bootId === self.bootId))
      return undefined;
    return this.identity.running(holder) ? undefined : holder;
  }

  acquire(): LockAttempt {
    const now = this.now();
    let got = false;
    let reason: string | undefined;
    let busy = false;
    let tookOverFrom: LockHolder | undefined;
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
        const stale = this.ownStaleHolder();
        if (stale !== undefined) {
          try {
            this.fs.rmdir(this.path);
          } catch {
            // gone already, or not empty: mkdir tells
          }
          if (this.fs.mkdir(this.path)) {
            this.fs.touch(this.path, now);
            got = true;
            tookOverFrom = stale;
          }
        }
        if (!got) {
          this.fs.requestUnlock(this.path, now);
          const holder = this.holder();
          reason = `held by another instance${holder ? ` (${describeHolder(holder)})` : ''}`;
          busy = true;
        }
      }
    } catch (err) {
      reason = errorMessage(err);
    }
    if (got) {
      if (!this.held) this.recordHolder(now); // newly taken: say who holds it
      this.lastLockTime = now;
    }
    const changed = got !== this.held;
    this.held = got;
    if (got) return { held: true, changed, ...(tookOverFrom ? { tookOverFrom } : {}) };
    return { held: false, changed, reason: reason ?? 'not held', ...(busy ? { busy: true } : {}) };
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
        this.fs.removeFile(this.holderPath);
        this.fs.rmdir(this.path);
      } catch {
        // already gone
      }
    }
    this.held = false;
    this.lastLockTime = undefined;
  }
}
