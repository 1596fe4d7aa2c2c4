import { existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ActiveLock,
  LOCK_TIMEOUT_SECONDS,
  localLockFs,
  lockDirProblem,
  lockFsFor,
  pmxcfsLockFs,
  type ProcessIdentity,
  systemIdentity,
} from './lock';

const T0 = 1_767_225_600;

/** A process on a node, as a lock holder; `gone`: the pids that no longer run. */
function proc(node: string, pid: number, gone: readonly number[] = [], bootId = 'boot-1'): ProcessIdentity {
  return { self: { node, bootId, pid, startTime: '77' }, running: (h) => h.bootId === bootId && !gone.includes(h.pid) };
}

/** Two instances on two nodes sharing one lock directory and one clock. */
function pair() {
  const dir = join(mkdtempSync(join(tmpdir(), 'poise-lock-')), 'lock');
  let now = T0;
  const clock = () => now;
  return {
    dir,
    clock,
    set: (t: number) => (now = T0 + t),
    a: new ActiveLock(dir, 'poise-manager', clock, localLockFs, proc('node1', 101)),
    b: new ActiveLock(dir, 'poise-manager', clock, localLockFs, proc('node2', 202)),
  };
}

const HELD_BY_A = { held: false, changed: false, reason: 'held by another instance (pid 101 on node1)', busy: true };

describe('ActiveLock (pmxcfs semantics on a local directory)', () => {
  it('one instance holds it; the other stands by while it is refreshed', () => {
    const p = pair();
    expect(p.a.acquire()).toEqual({ held: true, changed: true });
    expect(existsSync(join(p.dir, 'poise-manager'))).toBe(true);
    for (let t = 10; t <= 300; t += 10) {
      p.set(t);
      expect(p.a.acquire()).toEqual({ held: true, changed: false });
      expect(p.b.acquire()).toEqual(HELD_BY_A);
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
    expect(p.b.acquire()).toEqual(HELD_BY_A);
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
    expect(p.a.acquire()).toEqual({
      held: false,
      changed: true,
      reason: 'held by another instance (pid 202 on node2)',
      busy: true,
    });
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

  it('records its holder beside the lock (never inside: pmxcfs must be able to delete an expired lock) and removes it on release', () => {
    const p = pair();
    p.a.acquire();
    expect(readdirSync(join(p.dir, 'poise-manager'))).toEqual([]);
    expect(JSON.parse(readFileSync(join(p.dir, 'poise-manager.holder'), 'utf8'))).toEqual({
      node: 'node1',
      bootId: 'boot-1',
      pid: 101,
      startTime: '77',
      since: T0,
    });
    expect(p.a.holder()).toEqual({ node: 'node1', bootId: 'boot-1', pid: 101, startTime: '77', since: T0 });
    p.set(10);
    p.a.acquire(); // a refresh does not rewrite it
    expect(p.a.holder()?.since).toBe(T0);
    p.a.release();
    expect(existsSync(join(p.dir, 'poise-manager.holder'))).toBe(false);
  });

  it.each<[string, ProcessIdentity]>([
    ['its process is gone (crashed, killed)', proc('node1', 150, [101])],
    ['the node rebooted since (another boot id)', proc('node1', 150, [], 'boot-2')],
  ])('restarted on the same node, it takes over its own lock at once when %s', (_name, identity) => {
    const p = pair();
    p.a.acquire(); // then killed: no release
    p.set(10);
    const restarted = new ActiveLock(p.dir, 'poise-manager', p.clock, localLockFs, identity);
    const attempt = restarted.acquire();
    expect(attempt).toEqual({
      held: true,
      changed: true,
      tookOverFrom: { node: 'node1', bootId: 'boot-1', pid: 101, startTime: '77', since: T0 },
    });
    expect(restarted.holder()).toMatchObject({ node: 'node1', pid: 150 });
    expect(p.b.acquire()).toEqual({
      held: false,
      changed: false,
      reason: 'held by another instance (pid 150 on node1)',
      busy: true,
    });
  });

  it('does not take over a holder on the same node that still runs, nor one of another node, nor without a valid record', () => {
    const p = pair();
    p.a.acquire();
    p.set(10);
    expect(new ActiveLock(p.dir, 'poise-manager', p.clock, localLockFs, proc('node1', 150)).acquire()).toMatchObject({
      held: false,
      busy: true,
    });
    expect(
      new ActiveLock(p.dir, 'poise-manager', p.clock, localLockFs, proc('node3', 303, [101])).acquire(),
    ).toMatchObject({ held: false, busy: true });
    writeFileSync(join(p.dir, 'poise-manager.holder'), 'not json');
    expect(new ActiveLock(p.dir, 'poise-manager', p.clock, localLockFs, proc('node1', 150, [101])).acquire()).toEqual({
      held: false,
      changed: false,
      reason: 'held by another instance',
      busy: true,
    });
  });

  it('the system identity: this process runs, a pid that does not exist does not, another boot id never does', () => {
    const me = systemIdentity();
    expect(me.self.pid).toBe(process.pid);
    expect(me.running({ ...me.self, since: T0 })).toBe(true);
    expect(me.running({ ...me.self, pid: 2 ** 22 + 17, startTime: undefined, since: T0 })).toBe(false);
    if (me.self.bootId !== undefined)
      expect(me.running({ ...me.self, pid: 1, bootId: 'another-boot', since: T0 })).toBe(false);
    if (me.self.startTime !== undefined)
      expect(me.running({ ...me.self, pid: process.ppid, startTime: '1', since: T0 })).toBe(false); // a reused pid
  });

  it.each<[string, (base: string) => string, RegExp | undefined]>([
    ['an existing writable directory', (base) => base, undefined],
    ['a directory to create in a writable one', (base) => join(base, 'lock'), undefined],
    [
      'a missing parent',
      (base) => join(base, 'nope', 'lock'),
      /^lock\.dir: the lock directory '.*\/nope\/lock' does not exist and cannot be created: '.*\/nope' does not exist; set 'lock\.dir' to a directory every instance shares .*, or 'lock\.enabled: false' to run a single instance without the lock$/,
    ],
    [
      'a file',
      (base) => join(base, 'file'),
      /^lock\.dir: the lock directory '.*\/file' is not a directory; set 'lock\.dir'/,
    ],
  ])('lockDirProblem: %s', (_name, dir, problem) => {
    const base = mkdtempSync(join(tmpdir(), 'poise-lockdir-'));
    writeFileSync(join(base, 'file'), '');
    const found = lockDirProblem(dir(base));
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });

  it('lockDirProblem: off a cluster node, the default /etc/pve/priv/lock says so', () => {
    if (existsSync('/etc/pve/priv')) return; // on a cluster node the default works
    expect(lockDirProblem('/etc/pve/priv/lock')).toMatch(
      /^lock\.dir: the lock directory '\/etc\/pve\/priv\/lock' does not exist and cannot be created: '\/etc\/pve\/priv' does not exist \(is this a Proxmox VE cluster node, with \/etc\/pve mounted\?\); /,
    );
  });

  it('uses pmxcfs semantics under /etc/pve, the local emulation elsewhere', () => {
    expect(lockFsFor('/etc/pve/priv/lock')).toBe(pmxcfsLockFs);
    expect(lockFsFor('/etc/pvex')).toBe(localLockFs);
    expect(lockFsFor('/tmp/lock')).toBe(localLockFs);
  });
});
