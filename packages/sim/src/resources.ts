import type { Env, GuestConfigEntry, ResourceAgent, Snapshot } from '@poise/env';
import { judgeMigratability } from '@poise/policy-pressure';

/** What the simulated guests act on: the hardware's running flags, the service config and its locks. */
export interface GuestHardware {
  isRunning(node: string, sid: string): boolean;
  /** Sets (a number) or clears (undefined) a guest's running flag on a node. */
  setRunning(node: string, sid: string, running: number | undefined): void;
  /** The service's lock, undefined when it has none. */
  serviceLock(sid: string): string | undefined;
  /** Removes `lock` from the service when it holds that lock; returns the lock removed. */
  unlockService(sid: string, lock: string): string | undefined;
  changeServiceLocation(sid: string, current: string, next: string): void;
  /** The guest's configuration, undefined for a service the cluster does not know. */
  getGuestConfig(sid: string): Snapshot<GuestConfigEntry> | undefined;
  /** A guest that was running moves from `source` to `target` (what the move costs it); false: the live migration failed, the guest stays. */
  guestMoved(sid: string, source: string, target: string, live: boolean): boolean;
  /** Process-global failure counters of `fa:` resources, per service name. */
  readonly virtFailTries: { readonly start: Map<string, number>; readonly migrate: Map<string, number> };
}

/**
 * Simulated guests. The running flag lives in the hardware per node; a migration moves the
 * config and clears the flag on the source, and the target LRM starts the guest later.
 */
class SimResource implements ResourceAgent {
  constructor(
    protected readonly env: Env,
    protected readonly hw: GuestHardware,
  ) {}

  exists(_sid: string): boolean {
    return true;
  }

  checkRunning(sid: string): boolean {
    return this.hw.isRunning(this.env.nodename(), sid);
  }

  start(sid: string): void {
    const lock = this.hw.serviceLock(sid);
    if (lock) {
      this.env.log('err', `service '${sid}' locked (${lock}), unable to start!`);
      return;
    }
    this.hw.setRunning(this.env.nodename(), sid, 1);
  }

  shutdown(sid: string): void {
    const lock = this.hw.serviceLock(sid);
    if (lock) {
      this.env.log('err', `service '${sid}' locked (${lock}), unable to shutdown!`);
      return;
    }
    this.hw.setRunning(this.env.nodename(), sid, 0);
  }

  migrate(sid: string, target: string, online: boolean): boolean {
    const env = this.env;
    const node = env.nodename();
    const cmd = online ? 'migrate' : 'relocate';
    env.log('info', `service ${sid} - start ${cmd} to node '${target}'`);
    const lock = this.hw.serviceLock(sid);
    if (lock) {
      env.log('err', `service '${sid}' locked (${lock}), unable to ${cmd}!`);
      return false;
    }
    // a guest whose configuration prevents the migration (`guest_config`: a local cd-rom
    // image, passthrough, local disks, ...) fails it, as on a real cluster; judged by the same
    // function as the balancer's migratability check, so both agree
    const blockers = this.blockers(sid);
    if (blockers) {
      env.log('err', `service '${sid}' cannot be moved (${blockers}), unable to ${cmd}!`);
      return false;
    }
    const wasRunning = this.checkRunning(sid);
    // a relocation stops the guest first
    if (!online && wasRunning) {
      env.log('info', `stopping service ${sid} (relocate)`);
      this.shutdown(sid);
      env.log('info', `service status ${sid} stopped`);
    }
    // what the move costs (ground truth of the load pressure model; nothing otherwise): a live
    // migration that does not converge before the model's timeout fails and the guest stays
    if (wasRunning && !this.hw.guestMoved(sid, node, target, online)) {
      env.log('err', `service '${sid}' migration to node '${target}' did not converge in time, unable to ${cmd}!`);
      return false;
    }
    this.hw.changeServiceLocation(sid, node, target);
    env.log('info', `service ${sid} - end ${cmd} to node '${target}'`);
    // the source no longer has the guest; the target is NOT marked running
    this.hw.setRunning(node, sid, undefined);
    return true;
  }

  /** Why the guest's configuration prevents a migration, or undefined when nothing does. */
  protected blockers(sid: string): string | undefined {
    const config = this.hw.getGuestConfig(sid);
    if (!config) return undefined;
    const verdict = judgeMigratability(config, { kind: sid.startsWith('ct:') ? 'ct' : 'vm' });
    return verdict.migratable ? undefined : verdict.blockers.map((b) => b.message).join('; ');
  }

  removeLocks(sid: string, locks: string[]): string | undefined {
    for (const lock of locks) {
      const removed = this.hw.unlockService(sid, lock);
      if (removed) return removed;
    }
    return undefined;
  }
}

/** Containers cannot live-migrate: a running one is relocated instead. */
class SimContainer extends SimResource {
  override migrate(sid: string, target: string, online: boolean): boolean {
    if (online && this.checkRunning(sid)) {
      this.env.log('warn', 'unable to live migrate running container, fallback to relocate');
      online = false;
    }
    return super.migrate(sid, target, online);
  }
}

/**
 * `fa:<a><b><c><d><e><f>`: b start failures before success, c migration failures, d ≠ 0 means
 * shutdown never works, e is the value of `exists`, f restricts b and c to `node<f>`. The try
 * counters are process-global per service, as in the reference.
 */
class SimFailingResource extends SimResource {
  private decode(sid: string) {
    const id = sid.split(':')[1] ?? '';
    const m = /^\d(\d)(\d)(\d)?(\d)?(\d)?/.exec(id);
    return {
      start: Number(m?.[1] ?? 0),
      migrate: Number(m?.[2] ?? 0),
      stop: Number(m?.[3] ?? 0),
      exists: Number(m?.[4] ?? 1),
      limitToNode: Number(m?.[5] ?? 0),
    };
  }

  private applies(limitToNode: number): boolean {
    return limitToNode === 0 || this.env.nodename() === `node${limitToNode}`;
  }

  override exists(sid: string): boolean {
    return this.decode(sid).exists !== 0;
  }

  override start(sid: string): void {
    const d = this.decode(sid);
    const tries = this.hw.virtFailTries.start;
    if (this.applies(d.limitToNode)) {
      tries.set(sid, (tries.get(sid) ?? 0) + 1);
      if (d.start >= tries.get(sid)!) return;
    }
    tries.set(sid, 0);
    super.start(sid);
  }

  override shutdown(sid: string): void {
    if (this.decode(sid).stop) return;
    super.shutdown(sid);
  }

  override migrate(sid: string, target: string, online: boolean): boolean {
    const d = this.decode(sid);
    const tries = this.hw.virtFailTries.migrate;
    if (this.applies(d.limitToNode)) {
      tries.set(sid, (tries.get(sid) ?? 0) + 1);
      if (d.migrate >= tries.get(sid)!) return false;
    }
    tries.set(sid, 0);
    return super.migrate(sid, target, online);
  }
}

export function createResourceAgent(type: string, env: Env, hw: GuestHardware): ResourceAgent | undefined {
  switch (type) {
    case 'vm':
      return new SimResource(env, hw);
    case 'ct':
      return new SimContainer(env, hw);
    case 'fa':
      return new SimFailingResource(env, hw);
    default:
      return undefined;
  }
}
