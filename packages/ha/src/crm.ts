import type { Env } from '@poise/env';
import { Manager, type ManagerOptions } from './manager';
import { countFencedServices, errorMessage, isEmptyRecord, own } from './tools';

/** Idle master rounds (no service configured, nothing to do) before the CRM goes idle. */
const CRM_MAX_IDLE_ROUNDS = 90;

type CrmState = 'startup' | 'wait_for_quorum' | 'master' | 'slave' | 'lost_manager_lock';

/**
 * The cluster resource manager daemon of one node: competes for the manager lock and, as
 * master, runs the {@link Manager} round. One `doOneIteration` is one daemon loop.
 */
export class Crm {
  private state: CrmState = 'startup';
  private manager: Manager | undefined;
  private managerWatchdog: string | undefined;
  private shutdownRequestAt: number | undefined;
  private clusterStateUpdated = false;
  private idleRounds = 0;
  private fullyDisarmed = false;

  constructor(
    private readonly env: Env,
    private readonly managerOptions: ManagerOptions,
  ) {
    this.setState('wait_for_quorum');
  }

  /** The node is going down or the daemon is stopped: release the lock and exit soon. */
  shutdownRequest(): void {
    if (this.shutdownRequestAt === undefined) this.env.log('info', 'server received shutdown request');
    this.shutdownRequestAt = this.env.getTime();
  }

  get currentState(): string {
    return this.state;
  }

  private setState(next: CrmState): void {
    if (this.state === next) return;
    this.env.log('info', `status change ${this.state} => ${next}`);
    this.state = next;
    if (next === 'master') {
      this.manager = new Manager(this.env, this.managerOptions);
    } else {
      this.manager = undefined;
    }
  }

  private getProtectedManagerLock(): boolean {
    // The reference retries up to 6 times within 5 s; simulated time does not advance while
    // it retries, so one attempt decides.
    if (!this.env.getHaManagerLock()) return false;
    if (this.managerWatchdog !== undefined) {
      this.env.watchdogUpdate(this.managerWatchdog);
    } else if (!this.fullyDisarmed) {
      if (this.state !== 'master' && this.readDisarmState() === 'disarmed') {
        // the stack was fully disarmed by the previous master: stay without watchdog
        this.env.log('info', 'taking over as disarmed master, skipping watchdog');
        this.fullyDisarmed = true;
      } else {
        this.managerWatchdog = this.env.watchdogOpen();
      }
    }
    return true;
  }

  private readDisarmState(): string | undefined {
    try {
      return this.env.readManagerStatus().disarm?.state;
    } catch {
      return undefined;
    }
  }

  private releaseManagerLock(): boolean {
    this.closeManagerWatchdog();
    return this.env.releaseHaManagerLock();
  }

  /**
   * Whether this node may take part in the election (quorum, consistent state, work to do).
   * The reference passes an "allow quorum loss" flag from lost_manager_lock; taking the lock
   * needs quorum anyway, so it makes no difference and is not modelled.
   */
  private canGetActive(): boolean {
    const env = this.env;
    if (!env.quorate()) return false;
    if (!this.clusterStateUpdated) return false;
    let ms;
    try {
      ms = env.readManagerStatus();
    } catch (err) {
      env.log('err', `could not read manager status: ${errorMessage(err)}`);
      return false;
    }
    const ss = ms.service_status;
    if (countFencedServices(ss, env.nodename())) return false;

    let conf;
    try {
      conf = env.readServiceConfig();
    } catch (err) {
      env.log('err', `could not read service config: ${errorMessage(err)}`);
      return false;
    }
    if (isEmptyRecord(conf)) {
      // No service configured: only become active when there is pending work and no other
      // master is taking care of it.
      const master = ms.master_node;
      const nodeStatus = ms.node_status;
      if (master && master !== env.nodename() && own(nodeStatus, master) === 'online') return false;
      const request = ms.node_request;
      for (const node of Object.keys(nodeStatus ?? {})) {
        if (own(nodeStatus, node) === 'maintenance' && !own(request, node)?.maintenance) return true;
      }
      if (env.hasPendingCrmCommands()) return true;
      if (!isEmptyRecord(ss)) return true;
      if (ms.disarm) return true;
      return false;
    }
    return true;
  }

  /** No service configured or tracked and the stack is armed: nothing for a master to do. */
  private allowedToGetIdle(): boolean {
    const env = this.env;
    let ms;
    let conf;
    try {
      ms = env.readManagerStatus();
    } catch (err) {
      env.log('err', `could not read manager status: ${errorMessage(err)}`);
      return false;
    }
    try {
      conf = env.readServiceConfig();
    } catch {
      return false;
    }
    // (the config first: it is the same snapshot round after round, so its answer is remembered)
    if (!isEmptyRecord(conf)) return false;
    if (!isEmptyRecord(ms.service_status)) return false;
    if (ms.disarm) return false;
    return true;
  }

  /** One daemon loop; false means the daemon exits. */
  doOneIteration(): boolean {
    this.env.loopStartHook();
    this.clusterStateUpdated = this.env.clusterStateUpdate();
    const res = this.work();
    this.env.loopEndHook();
    return res;
  }

  private work(): boolean {
    const env = this.env;
    // state changes first
    switch (this.state) {
      case 'wait_for_quorum':
        if (this.canGetActive()) {
          this.setState(this.getProtectedManagerLock() ? 'master' : 'slave');
        }
        break;
      case 'slave':
        if (this.canGetActive()) {
          if (this.getProtectedManagerLock()) this.setState('master');
        } else {
          this.setState('wait_for_quorum');
        }
        break;
      case 'lost_manager_lock':
        if (this.canGetActive() && this.getProtectedManagerLock()) this.setState('master');
        break;
      case 'master':
        if (!this.getProtectedManagerLock()) {
          this.setState('lost_manager_lock');
        } else if (this.allowedToGetIdle()) {
          this.idleRounds++;
          if (this.idleRounds > CRM_MAX_IDLE_ROUNDS) {
            env.log('info', `cluster had no service configured for ${CRM_MAX_IDLE_ROUNDS} rounds, going idle.\n`);
            this.releaseManagerLock();
            this.idleRounds = 0;
            this.setState('wait_for_quorum');
          }
        } else {
          this.idleRounds = 0;
        }
        break;
      default:
        break;
    }

    switch (this.state) {
      case 'master': {
        const manager = this.manager;
        if (!manager) throw new Error('no manager');
        let shutdown = false;
        try {
          if (this.shutdownRequestAt !== undefined) {
            // release the manager lock, so another CRM can take over without waiting for
            // the lock timeout
            this.closeManagerWatchdog();
            env.log('info', 'voluntary release CRM lock');
            if (!env.releaseHaManagerLock()) {
              env.log('notice', 'CRM lock release failed, let the lock timeout');
            }
            shutdown = true;
          } else if (!this.clusterStateUpdated) {
            env.log('notice', 'temporary inconsistent cluster state (cfs restart?), skip round');
          } else {
            manager.manage();
            const disarmed = manager.isFullyDisarmed();
            if (disarmed && !this.fullyDisarmed) {
              env.log('info', 'HA stack fully disarmed, releasing CRM watchdog');
              this.closeManagerWatchdog();
              this.fullyDisarmed = true;
            } else if (!disarmed && this.fullyDisarmed) {
              env.log('info', 're-arming HA stack');
              this.fullyDisarmed = false;
            }
          }
        } catch (err) {
          env.log('err', `got unexpected error - ${errorMessage(err)}`);
        }
        if (shutdown) return false;
        break;
      }
      case 'lost_manager_lock':
        this.closeManagerWatchdog();
        this.setState('wait_for_quorum');
        break;
      case 'wait_for_quorum':
      case 'slave':
        if (this.shutdownRequestAt !== undefined) return false;
        break;
      default:
        throw new Error(`got unexpected status '${this.state}'\n`);
    }
    return true;
  }

  private closeManagerWatchdog(): void {
    if (this.managerWatchdog !== undefined) {
      this.env.watchdogClose(this.managerWatchdog);
      this.managerWatchdog = undefined;
    }
  }
}
