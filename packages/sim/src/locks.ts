/**
 * The cluster's locks and the nodes' watchdogs, as the reference simulator keeps them
 * (Sim/Env.pm, Sim/Hardware.pm): a lock is held by the node that renewed it last, a watchdog
 * expires when its node stops updating it.
 */
import type { Env } from '@poise/env';

/** Seconds after which a lock not renewed may be taken by another node. */
const LOCK_TIMEOUT_SECONDS = 120;
/** Seconds after which a watchdog not updated powers its node off. */
const WATCHDOG_TIMEOUT_SECONDS = 60;

/** The cluster-wide locks, by name. */
export class ClusterLocks {
  private readonly locks = new Map<string, { node: string; time: number }>();

  /** The cluster-wide lock of the reference simulator (Sim/Env.pm sim_get_lock). */
  lock(env: Env, name: string, unlock: boolean): boolean {
    if (!env.quorate()) return false;
    const node = env.nodename();
    const now = env.getTime();
    const d = this.locks.get(name);
    if (unlock) {
      if (!d) return false;
      const tdiff = now - d.time;
      if (tdiff > LOCK_TIMEOUT_SECONDS) return true;
      if (d.node === node) {
        this.locks.delete(name);
        return true;
      }
      return false;
    }
    if (d) {
      const tdiff = now - d.time;
      if (tdiff <= LOCK_TIMEOUT_SECONDS) {
        if (d.node === node) {
          d.time = now;
          return true;
        }
        return false;
      }
      env.log('info', `got lock '${name}'`);
      d.node = node;
      d.time = now;
      return true;
    }
    this.locks.set(name, { node, time: now });
    env.log('info', `got lock '${name}'`);
    return true;
  }
}

/** The watchdogs of every node, by handle (`WD:<node>:<counter>`). */
export class Watchdogs {
  private readonly watchdogs = new Map<string, { node: string; updateTime: number }>();
  private counter = 0;

  open(node: string, time: number): string {
    this.counter++;
    const id = `WD:${node}:${this.counter}`;
    this.watchdogs.set(id, { node, updateTime: time });
    return id;
  }

  update(id: string, time: number): void {
    const wd = this.watchdogs.get(id);
    if (!wd) throw new Error(`no such watchdog handle '${id}'\n`);
    if (time - wd.updateTime > WATCHDOG_TIMEOUT_SECONDS) throw new Error('watchdog expired');
    wd.updateTime = time;
  }

  close(id: string): void {
    this.watchdogs.delete(id);
  }

  /** False when a watchdog of `node` expired at `time`. */
  check(node: string, time: number): boolean {
    for (const wd of this.watchdogs.values()) {
      if (wd.node !== node) continue;
      if (time - wd.updateTime > WATCHDOG_TIMEOUT_SECONDS) return false;
    }
    return true;
  }

  /** Forgets every watchdog of `node` (it lost power). */
  reset(node: string): void {
    for (const [id, wd] of [...this.watchdogs]) if (wd.node === node) this.watchdogs.delete(id);
  }
}
