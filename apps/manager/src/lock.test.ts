import { existsSync, mkdtempSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ActiveLock, LOCK_TIMEOUT_SECONDS, localLockFs, lockFsFor, pmxcfsLockFs } from './lock';

const T0 = 1_767_225_600;

/** Two instances sharing one lock directory and one clock. */
function pair() {
  const dir = join(mkdtempSync(join(tmpdir(), 'poise-lock-')), 'lock');
  let now = T0;
  const clock = () => now;
  return {
    dir,
    set: (t: number) => (now = T0 + t),
    a: new ActiveLock(dir, 'poise-manager', clock, localLockFs),
    b: new ActiveLock(dir, 'poise-manager', clock, localLockFs),
  };
}

describe('ActiveLock (pmxcfs semantics on a local directory)', () => {
  it('one instance holds it; the other stands by while it is refreshed', () => {
    const p = pair();
    expect(p.a.acquire()).toEqual({ held: true, changed: true });
    expect(existsSync(join(p.dir, 'poise-manager'))).toBe(true);
    for (let t = 10; t <= 300; t += 10) {
      p.set(t);
      expect(p.a.acquire()).toEqual({ held: true, changed: false });
      expect(p.b.acquire()).toEqual({ held: false, changed: false, reason: 'held by another instance' });
    }
    expect(statSync(join(p.dir, 'poise-manager')).mtimeMs / 1000).toBe(T0 + 300); // refreshed by utime
  });

  it('a standby takes over only after the lock is more than 120 s old, in two rounds (unlock request, then mkdir)', () => {
    const p = pair();
    p.a.acquire(); // t = 0
    p.set(100);
    p.a.acquire(); // last refresh at 100, then the active instance dies
    p.set(100 + LOCK_TIMEOUT_SECONDS); // 220: 120 s old, not more → still held (like the reference: 120 is not > 120)
    expect(p.b.acquire().held).toBe(false);
    p.set(221); // 121 s old: the unlock request removes it, this attempt still fails
    expect(p.b.acquire()).toEqual({ held: false, changed: false, reason: 'held by another instance' });
    expect(existsSync(join(p.dir, 'poise-manager'))).toBe(false);
    p.set(231); // next round: mkdir succeeds
    expect(p.b.acquire()).toEqual({ held: true, changed: true });
  });

  it('the old holder coming back after the take-over loses it and steps down', () => {
    const p = pair();
    p.a.acquire();
    p.set(100);
    p.a.acquire();
    p.set(221);
    p.b.acquire();
    p.set(231);
    p.b.acquire(); // b active
    p.set(240); // a wakes up: its last lock is 140 s old, so it must mkdir, which fails
    expect(p.a.acquire()).toEqual({ held: false, changed: true, reason: 'held by another instance' });
    expect(p.b.acquire()).toEqual({ held: true, changed: false }); // b's fresh lock was not removed
  });

  it('a holder that was only paused (< 120 s) keeps it: nobody could have taken it', () => {
    const p = pair();
    p.a.acquire();
    p.set(100);
    p.a.acquire();
    p.set(215); // 115 s: b's unlock request leaves it
    expect(p.b.acquire().held).toBe(false);
    expect(p.a.acquire()).toEqual({ held: true, changed: false });
  });

  it('a refresh fails when the lock vanished (lost), and the next attempt after the timeout re-creates it', () => {
    const p = pair();
    p.a.acquire();
    rmdirSync(join(p.dir, 'poise-manager'));
    p.set(10);
    expect(p.a.acquire()).toEqual({ held: false, changed: true, reason: 'lock update failed - ENOENT' });
    p.set(119); // still within 120 s of the last success: the reference keeps trying utime
    expect(p.a.acquire().held).toBe(false);
    p.set(120);
    expect(p.a.acquire()).toEqual({ held: true, changed: true });
  });

  it('release lets a standby take over at once', () => {
    const p = pair();
    p.a.acquire();
    p.a.release();
    expect(p.b.acquire()).toEqual({ held: true, changed: true });
  });

  it('acts only with more than 30 s of the lock left', () => {
    const p = pair();
    expect(p.a.safeToAct()).toBe(false);
    p.a.acquire();
    expect(p.a.remainingSeconds()).toBe(120);
    p.set(89);
    expect(p.a.safeToAct()).toBe(true); // 31 s left
    p.set(90);
    expect(p.a.safeToAct()).toBe(false); // 30 s left
  });

  it('reports an unusable lock directory as the reason, never throws', () => {
    const base = mkdtempSync(join(tmpdir(), 'poise-lock-'));
    writeFileSync(join(base, 'file'), '');
    const lock = new ActiveLock(join(base, 'file', 'lock'), 'x', () => T0, localLockFs);
    const attempt = lock.acquire();
    expect(attempt.held).toBe(false);
    expect(attempt.reason).toMatch(
      /^cannot create the lock directory '.*\/file\/lock' \(pmxcfs not mounted\?\): ENOTDIR/,
    );
  });

  it('uses pmxcfs semantics under /etc/pve, the local emulation elsewhere', () => {
    expect(lockFsFor('/etc/pve/priv/lock')).toBe(pmxcfsLockFs);
    expect(lockFsFor('/etc/pvex')).toBe(localLockFs);
    expect(lockFsFor('/tmp/lock')).toBe(localLockFs);
  });
});
