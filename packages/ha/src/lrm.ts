import {
  lazyRecord,
  lazyRecordEntries,
  nullRecord,
  openRecord,
  sealRecord,
  type Env,
  type LrmResult,
  type ServiceConfig,
  type ServiceConfigEntry,
  type ServiceStatus,
  type Snapshot,
} from '@poise/env';
import { countFencedServices, errorMessage, ExitCode, own, serviceIndex, sidType, statusEntry } from './tools';
import { EntryList } from './entry-list';
import { compareNames } from '@poise/usage';

/** Idle active rounds (no service on this node) before the LRM releases its lock. */
const LRM_MAX_ACTIVE_IDLE_ROUNDS = 60;
/** Seconds after which an LRM that lost its lock while restarting gives up. */
const LRM_RESTART_GIVE_UP_SECONDS = 90;

type LrmState = 'startup' | 'wait_for_agent_lock' | 'active' | 'lost_agent_lock' | 'maintenance';
type LrmMode = 'active' | 'reboot' | 'shutdown' | 'restart' | 'maintenance' | 'disarm';

/**
 * A service's command slot: the queued command while `queued`, kept (not queued) after it ran so
 * that the service's next command reuses it instead of a new object and map entry each round.
 */
interface Worker {
  readonly sid: string;
  uid: string | undefined;
  state: string;
  params: { target?: string; timeout?: number | string } | undefined;
  startTries: number;
  queued: boolean;
  /** The last result recorded for this service (immutable; reused while the next one reads the same). */
  lastResult: Snapshot<LrmResult> | undefined;
  /** The service's config entry in {@link cdOf} (read once per config snapshot, not once per run). */
  cd: Snapshot<ServiceConfigEntry> | undefined;
  cdOf: Snapshot<ServiceConfig> | undefined;
  /** The service's type (`sidType`), once asked. */
  type: string | undefined;
}

/**
 * Finished command slots of services no longer on the node are dropped once the slots outnumber
 * twice the node's services plus this many (a bound on what services that left cost).
 */
const WORKER_SLOTS_SLACK = 64;

/**
 * State shared by every LRM of one process. The reference keeps "some LRM wrote its status
 * since start-up" in a package variable, so in the simulator (all nodes in one process) the
 * first LRM that writes unblocks all others. The simulator passes one instance to all LRMs.
 */
export interface LrmProcessState {
  wroteStatusAtStartup: boolean;
}

/** The services whose node is `node`, in byte order (see {@link serviceIndex}). */
function servicesOn(ss: Snapshot<Record<string, ServiceStatus>>, node: string): readonly string[] {
  return serviceIndex(ss).byNode.get(node) ?? NO_SERVICES;
}

const NO_SERVICES: readonly string[] = Object.freeze([]);

/** The order queued commands run in: most tried first, then by sid (byte order). */
function runOrder(a: Worker, b: Worker): number {
  const d = b.startTries - a.startTries;
  return d !== 0 ? d : compareNames(a.sid, b.sid);
}

/** Whether `queue` is in {@link runOrder} already. */
function inRunOrder(queue: readonly Worker[]): boolean {
  for (let i = 1; i < queue.length; i++) if (runOrder(queue[i - 1]!, queue[i]!) > 0) return false;
  return true;
}

/**
 * The local resource manager of one node: holds the node's agent lock and watchdog while
 * services run here, and executes the manager's requests through the resource agents.
 */
export class Lrm {
  private state: LrmState = 'startup';
  private stateChangeTime = 0;
  private mode: LrmMode = 'active';
  /** Command slots by sid (see {@link Worker}); {@link queuedWorkers} of them are queued. */
  private readonly workers = new Map<string, Worker>();
  private queuedWorkers = 0;
  /**
   * The slots of the services on this node, index by index with the list they were taken for
   * (the service index's per-node list, the same array while no service moved): manageResources
   * takes a service's slot by index instead of by sid. Dropped whenever a slot is.
   */
  private hereSlots: { list: readonly string[]; slots: readonly Worker[] } | undefined;
  /**
   * Results by command uid, in the order recorded. A `Map`: a uid is a fresh string each round,
   * which a keyed write to (or read of) a record would have to intern first.
   */
  private readonly results = new Map<string, Snapshot<LrmResult>>();
  /**
   * {@link results} as the record the status carries (a lazy record: the master reads its
   * entries, nobody needs its properties), made at the first write after a change.
   */
  private resultsRecord: Snapshot<Record<string, LrmResult>> | undefined;
  private readonly restartTries = new Map<string, number>();
  /**
   * The service ids (the {@link serviceIndex} array) {@link restartTries} was last pruned against,
   * and whether it got a new key since: while neither changed, pruning would remove nothing.
   */
  private restartTriesPrunedFor: readonly string[] | undefined;
  private restartTriesGrew = false;
  private shutdownRequestAt: number | undefined;
  private shutdownErrors = 0;
  private clusterStateUpdated = false;
  private activeIdleRounds = 0;
  private agentWatchdog: string | undefined;
  /** The manager's service status as last read (an immutable snapshot; read only). */
  private serviceStatus: Snapshot<Record<string, ServiceStatus>> = nullRecord();
  private nodeStatus: Snapshot<Record<string, string>> = nullRecord();
  private maintenanceRequested = false;

  constructor(
    private readonly env: Env,
    private readonly process: LrmProcessState,
  ) {
    this.setState('wait_for_agent_lock');
  }

  get currentState(): string {
    return this.state;
  }

  private setState(next: LrmState): void {
    if (this.state === next) return;
    this.env.log('info', `status change ${this.state} => ${next}`);
    this.stateChangeTime = this.env.getTime();
    this.state = next;
  }

  /** Node shutdown, reboot or daemon restart: apply the shutdown policy. */
  shutdownRequest(): void {
    if (this.shutdownRequestAt !== undefined) return;
    const env = this.env;
    const { shutdown, reboot } = env.isNodeShutdown();
    const policy = env.getDatacenterSettings().ha.shutdown_policy ?? 'conditional';
    if (shutdown) env.log('info', `got shutdown request with shutdown policy '${policy}'`);

    let freezeAll = false;
    let maintenance = false;
    if (policy === 'conditional') freezeAll = reboot;
    else if (policy === 'freeze') freezeAll = true;
    else if (policy === 'failover') freezeAll = false;
    else if (policy === 'migrate') maintenance = true;
    else {
      env.log('err', `unknown shutdown policy '${policy}', fall back to conditional`);
      freezeAll = reboot;
    }

    if (!maintenance && shutdown) {
      // always queue stop jobs for all services of this node when it shuts down, reboot or
      // not, else services may be corrupted or the shutdown hindered
      for (const sid of servicesOn(this.serviceStatus, env.nodename())) {
        // an undefined uid marks shutdown stop jobs
        this.queueResourceCommand(sid, undefined, 'request_stop');
      }
    }

    if (shutdown) {
      const type = reboot ? 'reboot' : 'shutdown';
      if (this.isMaintenanceRequested()) {
        if (maintenance) {
          env.log('info', `${type} LRM, ignore maintenance policy, already in maintenance mode`);
        } else {
          env.log('info', `${type} LRM, ignore ${policy} policy as manual maintenance mode is enabled`);
        }
      } else if (maintenance) {
        env.log('info', `${type} LRM, doing maintenance, removing this node from active list`);
        this.mode = 'maintenance';
      } else if (freezeAll) {
        env.log('info', `${type} LRM, stop and freeze all services`);
        this.mode = 'restart';
      } else {
        env.log('info', 'shutdown LRM, stop all services');
        this.mode = 'shutdown';
      }
    } else if (this.isMaintenanceRequested()) {
      env.log('info', 'Restarting LRM in maintenance mode may be delayed until all services are moved');
    } else {
      env.log('info', 'restart LRM, freeze all services');
      this.mode = 'restart';
    }

    this.shutdownRequestAt = env.getTime();
    try {
      if (!this.updateLrmStatus()) throw new Error('not quorate?\n');
    } catch (err) {
      env.log('err', `unable to update lrm status file - ${errorMessage(err)}`);
    }
  }

  private isMaintenanceRequested(): boolean {
    return this.maintenanceRequested || this.mode === 'maintenance';
  }

  private updateLrmStatus(): boolean {
    const env = this.env;
    if (!env.quorate()) return false;
    try {
      env.writeLrmStatus({
        state: this.state,
        mode: this.mode,
        results: this.resultsDocument(),
        timestamp: env.getTime(),
      });
    } catch (err) {
      env.log('err', `unable to write lrm status file - ${errorMessage(err)}`);
      return false;
    }
    return true;
  }

  /**
   * The results as a record snapshot (keys in the order recorded); the same object while they do
   * not change. Its entries are an {@link EntryList} (two arrays, no hash table: the master walks
   * them, nobody looks a uid up in them).
   */
  private resultsDocument(): Snapshot<Record<string, LrmResult>> {
    if (this.resultsRecord === undefined) {
      const uids = new Array<string>(this.results.size);
      const results = new Array<Snapshot<LrmResult>>(this.results.size);
      let i = 0;
      this.results.forEach((result, uid) => {
        uids[i] = uid;
        results[i++] = result;
      });
      this.resultsRecord = lazyRecord(new EntryList(uids, results), { handOver: true });
    }
    return this.resultsRecord;
  }

  private updateServiceStatus(): boolean {
    const env = this.env;
    let ms;
    try {
      ms = env.readManagerStatus();
    } catch (err) {
      env.log('err', `updating service status from manager failed: ${errorMessage(err)}`);
      return false;
    }
    this.serviceStatus = ms.service_status ?? nullRecord();
    this.nodeStatus = ms.node_status ?? nullRecord();
    const request = own(ms.node_request, env.nodename());
    this.maintenanceRequested = !!request?.maintenance;
    if (this.shutdownRequestAt === undefined) {
      if (request?.maintenance) this.mode = 'maintenance';
      else if (ms.disarm) this.mode = 'disarm';
      else if (this.mode === 'maintenance' || this.mode === 'disarm') this.mode = 'active';
    }
    return true;
  }

  private getProtectedAgentLock(): boolean {
    if (!this.env.getHaAgentLock()) return false;
    if (this.agentWatchdog !== undefined) this.env.watchdogUpdate(this.agentWatchdog);
    else this.agentWatchdog = this.env.watchdogOpen();
    return true;
  }

  /**
   * Disables self-fencing; only safe when no service is active here (graceful shutdown with
   * all services stopped or frozen).
   */
  private giveUpWatchdogProtection(): void {
    if (this.agentWatchdog !== undefined) {
      this.env.watchdogClose(this.agentWatchdog);
      this.agentWatchdog = undefined;
    }
  }

  private hasConfiguredServiceOnLocalNode(): boolean {
    return servicesOn(this.serviceStatus, this.env.nodename()).length > 0;
  }

  /** Services this node must keep its lock for (on it, or moving to it). */
  private activeServiceCount(): number {
    return serviceIndex(this.serviceStatus).active.get(this.env.nodename()) ?? 0;
  }

  doOneIteration(): boolean {
    this.env.loopStartHook();
    this.clusterStateUpdated = this.env.clusterStateUpdate();
    const res = this.work();
    this.env.loopEndHook();
    return res;
  }

  private work(): boolean {
    const env = this.env;
    if (!this.process.wroteStatusAtStartup) {
      if (this.updateLrmStatus()) {
        this.process.wroteStatusAtStartup = true;
      } else {
        return this.shutdownRequestAt === undefined;
      }
    }

    this.updateServiceStatus();
    // fence: a service of this node waits for fencing, or the master marked the node itself
    const fenceRequest =
      countFencedServices(this.serviceStatus, env.nodename()) > 0 || own(this.nodeStatus, env.nodename()) === 'fence';

    // state changes first
    switch (this.state) {
      case 'wait_for_agent_lock': {
        if (this.mode === 'disarm') break;
        const count = this.activeServiceCount();
        if (!fenceRequest && count > 0 && env.quorate() && this.getProtectedAgentLock()) {
          this.setState('active');
        }
        break;
      }
      case 'lost_agent_lock':
        if (!fenceRequest && env.quorate() && this.getProtectedAgentLock()) this.setState('active');
        break;
      case 'active':
        if (fenceRequest) {
          env.log('err', 'node needs to be fenced - releasing agent_lock\n');
          this.setState('lost_agent_lock');
        } else if (!this.getProtectedAgentLock()) {
          this.setState('lost_agent_lock');
        } else if (this.mode === 'maintenance') {
          this.setState('maintenance');
        } else if (this.mode === 'disarm' && this.runWorkers() === 0) {
          env.log('info', 'HA disarm requested, releasing agent lock and watchdog');
          env.releaseHaAgentLock();
          this.giveUpWatchdogProtection();
          this.setState('wait_for_agent_lock');
        } else if (!this.hasConfiguredServiceOnLocalNode() && this.runWorkers() === 0) {
          // no service configured here and all (old) workers are done
          this.activeIdleRounds++;
          if (this.activeIdleRounds > LRM_MAX_ACTIVE_IDLE_ROUNDS) {
            env.log('info', `node had no service configured for ${LRM_MAX_ACTIVE_IDLE_ROUNDS} rounds, going idle.\n`);
            env.releaseHaAgentLock();
            this.giveUpWatchdogProtection();
            this.setState('wait_for_agent_lock');
            this.activeIdleRounds = 0;
          }
        } else if (this.activeIdleRounds) {
          this.activeIdleRounds = 0;
        }
        break;
      case 'maintenance':
        if (fenceRequest) {
          env.log('err', 'node needs to be fenced during maintenance mode - releasing agent_lock\n');
          this.setState('lost_agent_lock');
        } else if (this.activeServiceCount() || this.runWorkers()) {
          // keep lock and watchdog as long as services have not left the node
          if (!this.getProtectedAgentLock()) this.setState('lost_agent_lock');
        } else if (this.mode === 'disarm') {
          env.log('info', 'HA disarm requested during maintenance, releasing agent lock and watchdog');
          env.releaseHaAgentLock();
          this.giveUpWatchdogProtection();
          this.setState('wait_for_agent_lock');
        } else if (this.mode !== 'maintenance') {
          // empty, and maintenance is no longer requested
          if (this.getProtectedAgentLock()) this.setState('active');
          else this.setState('lost_agent_lock');
        }
        break;
      default:
        break;
    }

    // then do the work of the (new) state
    switch (this.state) {
      case 'wait_for_agent_lock':
        if (this.shutdownRequestAt !== undefined) return false;
        this.updateLrmStatus();
        break;
      case 'active': {
        let shutdown = false;
        try {
          if (this.updateServiceStatus()) {
            if (this.shutdownRequestAt !== undefined) {
              if (this.mode === 'restart') {
                const workers = this.runWorkers();
                if (this.activeServiceCount() === 0 && workers === 0) {
                  // safety: no active service nor worker
                  this.giveUpWatchdogProtection();
                  shutdown = true;
                  env.releaseHaAgentLock();
                }
              } else if (this.runWorkers() === 0) {
                if (this.shutdownErrors === 0) {
                  this.giveUpWatchdogProtection();
                  env.releaseHaAgentLock();
                }
                shutdown = true;
              }
            } else if (!this.clusterStateUpdated) {
              env.log('notice', 'temporary inconsistent cluster state (cfs restart?), skip round');
            } else {
              this.manageResources();
            }
          }
        } catch (err) {
          env.log('err', `got unexpected error - ${errorMessage(err)}`);
        }
        this.updateLrmStatus();
        if (shutdown) return false;
        break;
      }
      case 'lost_agent_lock':
        // the watchdog is active and will fire soon unless the lock comes back
        if (this.shutdownRequestAt !== undefined) {
          const count = this.activeServiceCount();
          if (count > 0) {
            env.log('err', `got shutdown request in state 'lost_agent_lock' - detected ${count} running services`);
            if (this.mode === 'restart' && env.getTime() - this.stateChangeTime > LRM_RESTART_GIVE_UP_SECONDS) {
              env.log(
                'err',
                `lost agent lock and restart request for over ${LRM_RESTART_GIVE_UP_SECONDS} seconds - giving up!`,
              );
              return false;
            }
          } else {
            // all services are stopped, so the watchdog may go
            this.giveUpWatchdogProtection();
            return false;
          }
        }
        break;
      case 'maintenance': {
        // The reference returns the (false) result of a failed status read here, which the
        // harness takes as the daemon exiting.
        if (!this.updateServiceStatus()) return false;
        let exit = false;
        if (this.activeServiceCount() === 0 && this.runWorkers() === 0) {
          // all active services moved away
          this.giveUpWatchdogProtection();
          if (this.shutdownRequestAt !== undefined) exit = true;
          env.releaseHaAgentLock();
        }
        if (!exit) this.manageResources();
        this.updateLrmStatus();
        if (exit) return false;
        break;
      }
      default:
        throw new Error(`got unexpected status '${this.state}'\n`);
    }
    return true;
  }

  private manageResources(): number {
    const node = this.env.nodename();
    const ss = this.serviceStatus;
    const sorted = serviceIndex(ss).sorted;
    if (sorted !== this.restartTriesPrunedFor || this.restartTriesGrew) {
      for (const sid of [...this.restartTries.keys()]) {
        if (!statusEntry(ss, sid)) this.restartTries.delete(sid);
      }
      this.restartTriesPrunedFor = sorted;
      this.restartTriesGrew = false;
    }
    // the master's status is a lazy record over an entry list: its entries taken by position
    // (see ServiceIndex.byNodeAt), else by sid
    const entries = lazyRecordEntries(ss);
    const here = servicesOn(ss, node);
    const at = entries instanceof EntryList ? serviceIndex(ss).byNodeAt?.get(node) : undefined;
    const values = at !== undefined ? (entries as EntryList<Snapshot<ServiceStatus>>).valueList : undefined;
    if (this.hereSlots?.list !== here) this.hereSlots = { list: here, slots: here.map((sid) => this.slot(sid)) };
    const slots = this.hereSlots.slots;
    for (let i = 0; i < here.length; i++) {
      const sid = here[i]!;
      const sd = (values !== undefined ? values[at![i]!] : entries !== undefined ? entries.get(sid) : own(ss, sid))!;
      if (!sd.uid) continue;
      const req = sd.state;
      if (req === undefined) continue;
      // recovery is the master's business first; frozen services are left alone; request_start
      // is an intermediate state for node selection
      if (req === 'recovery' || req === 'freeze' || req === 'request_start') continue;
      // (no parameters object when there are none: one allocation less per service and round)
      const target = sd.target;
      const timeout = sd.timeout;
      this.queueResourceCommand(
        sid,
        sd.uid,
        req,
        target === undefined && timeout === undefined ? undefined : { target, timeout },
        slots[i],
      );
    }
    return this.runWorkers();
  }

  /** The command slot of `sid`, made (not queued) if it has none. */
  private slot(sid: string): Worker {
    let w = this.workers.get(sid);
    if (w === undefined) {
      w = {
        sid,
        uid: undefined,
        state: '',
        params: undefined,
        startTries: 0,
        queued: false,
        lastResult: undefined,
        cd: undefined,
        cdOf: undefined,
        type: undefined,
      };
      this.workers.set(sid, w);
    }
    return w;
  }

  /**
   * Queues a command for `sid`; `slot` is its command slot when the caller has it at hand (see
   * {@link hereSlots}), else it is looked up.
   */
  private queueResourceCommand(
    sid: string,
    uid: string | undefined,
    state: string,
    params?: Worker['params'],
    slot?: Worker,
  ): void {
    // never queue the same command twice (a failed first try the CRM has not seen yet would
    // race with a second one); 'stopped' is re-queued every round on purpose
    if (state !== 'stopped' && uid && this.results.has(uid)) return;
    // (a queued command of the same service is replaced; the map's order does not matter, the
    // queue is sorted by tries and sid, a total order, before it runs)
    const w = slot ?? this.slot(sid);
    if (!w.queued) {
      w.queued = true;
      this.queuedWorkers++;
    }
    w.uid = uid;
    w.state = state;
    w.params = params;
    w.startTries = 0;
  }

  /** Takes a command out of the queue (its slot stays for the service's next command). */
  private dequeue(w: Worker): void {
    w.queued = false;
    w.params = undefined;
    this.queuedWorkers--;
  }

  /** Drops the finished slots of services no longer on this node once they are many (see {@link WORKER_SLOTS_SLACK}). */
  private pruneWorkerSlots(): void {
    const node = this.env.nodename();
    const here = servicesOn(this.serviceStatus, node).length;
    if (this.workers.size <= 2 * here + WORKER_SLOTS_SLACK) return;
    for (const [sid, w] of this.workers) {
      if (!w.queued && statusEntry(this.serviceStatus, sid)?.node !== node) this.workers.delete(sid);
    }
    this.hereSlots = undefined; // (it may hold a slot dropped here)
  }

  /** Runs queued commands synchronously (max_workers 0); returns the workers left. */
  private runWorkers(): number {
    const env = this.env;
    const sc = env.readServiceConfig();
    // most tried first, then by sid (a worker's sid is its key in `workers`); usually queued in
    // that order already (manageResources queues in sid order), which one pass confirms
    const queue = new Array<Worker>(this.queuedWorkers);
    let n = 0;
    this.workers.forEach((w) => {
      if (w.queued) queue[n++] = w;
    });
    queue.length = n; // (n is queuedWorkers; this only guards the invariant)
    if (!inRunOrder(queue)) queue.sort(runOrder);
    // the results recorded before this run: the first ones in the map's order (a run appends
    // new uids, and a uid recorded again keeps its place)
    const earlier = this.results.size;
    let finished = false;
    for (let i = 0; i < queue.length; i++) {
      const w = queue[i]!;
      const sid = w.sid;
      w.startTries++;
      let res: number = -1;
      try {
        if (w.cdOf !== sc) {
          w.cd = own(sc, sid);
          w.cdOf = sc;
        }
        res = this.execResourceAgent(sid, w.cd, w.state, w.params, w);
      } catch (err) {
        env.log('err', errorMessage(err));
      }
      if (w.uid !== undefined) finished = this.resourceCommandFinished(w, w.uid, res, sc) || finished;
      else this.stopCommandFinished(w, res);
    }
    if (finished) this.pruneResults(earlier);
    this.pruneWorkerSlots();
    return this.queuedWorkers;
  }

  /**
   * Keeps only the results of uids the manager still knows. Only the first `earlier` results
   * (in the map's order) can be stale: the later ones were recorded by this run, for uids of
   * the status it read, which has not changed since.
   */
  private pruneResults(earlier: number): void {
    const valid = serviceIndex(this.serviceStatus).uids;
    let seen = 0;
    for (const id of this.results.keys()) {
      if (seen++ >= earlier) break;
      if (valid.has(id)) continue;
      this.results.delete(id);
      this.resultsRecord = undefined;
    }
  }

  private stopCommandFinished(w: Worker, status: number): void {
    if (!w.queued) return;
    this.dequeue(w);
    if (status !== ExitCode.SUCCESS) this.shutdownErrors++;
  }

  /**
   * Records a command's result (unless it is retried); true when a result was recorded. The
   * reference prunes results of unknown uids after every command; the caller prunes once per
   * run instead, which leaves the same results (the service status does not change meanwhile)
   * without a pass over all services per command.
   */
  private resourceCommandFinished(w: Worker, uid: string, exitCode: number, sc: Snapshot<ServiceConfig>): boolean {
    if (!w.queued) return false;
    const state = w.state;
    this.dequeue(w);
    const status = this.handleServiceExitcode(w.sid, state, exitCode, sc);
    if (status === ExitCode.ETRY_AGAIN) return false; // retried silently
    // results never change once recorded: an immutable value, shared with every status written
    // (built as a sealed record: the same snapshot `snapshot()` would make of it, without the
    // walk), and with the service's next result when that reads the same (a running service's
    // `started` succeeds round after round, each time under a new uid)
    let result = w.lastResult;
    if (result === undefined || result.state !== state || result.exit_code !== status) {
      const record = openRecord<unknown>();
      record.sid = w.sid;
      record.state = state;
      record.exit_code = status;
      result = sealRecord(record) as unknown as Snapshot<LrmResult>;
      w.lastResult = result;
    }
    this.results.set(uid, result);
    this.resultsRecord = undefined;
    return true;
  }

  private setRestartTries(sid: string, tries: number): void {
    const before = this.restartTries.get(sid);
    if (before === tries) return; // (a running service's start succeeds every round: 0 again)
    if (before === undefined) this.restartTriesGrew = true;
    this.restartTries.set(sid, tries);
  }

  /** The restart policy; `sc` is the service config this worker run read. */
  private handleServiceExitcode(sid: string, cmd: string, exitCode: number, sc: Snapshot<ServiceConfig>): number {
    const env = this.env;
    if (cmd === 'started') {
      if (exitCode === ExitCode.SUCCESS) {
        this.setRestartTries(sid, 0);
        return exitCode;
      }
      if (exitCode === ExitCode.ERROR) {
        const tries = this.restartTries.get(sid) ?? 0;
        const maxRestart = own(sc, sid)?.max_restart ?? 0;
        if (tries >= Number(maxRestart)) {
          env.log('err', `unable to start service ${sid} on local node after ${tries} retries`);
          this.setRestartTries(sid, 0);
          return ExitCode.ERROR;
        }
        this.setRestartTries(sid, tries + 1);
        env.log('warning', `restart policy: retry number ${tries + 1} for service '${sid}'`);
        return ExitCode.ETRY_AGAIN;
      }
    }
    return exitCode;
  }

  private execResourceAgent(
    sid: string,
    cd: Snapshot<ServiceConfigEntry> | undefined,
    cmd: string,
    params: Worker['params'],
    slot?: Worker,
  ): number {
    const env = this.env;
    const node = env.nodename();
    // (the slot remembers the type: a lookup in the process-wide map of every sid seen spared)
    const type = slot !== undefined ? (slot.type ??= sidType(sid)) : sidType(sid);
    const agent = env.resourceAgent(type);
    if (!agent) {
      env.log('err', `service type '${type}' not implemented`);
      return ExitCode.EUNKNOWN_SERVICE_TYPE;
    }
    if (!cd) {
      env.log('err', `missing resource configuration for '${sid}'`);
      return ExitCode.EUNKNOWN_SERVICE;
    }
    if (cmd === 'error') {
      env.log(
        'err',
        `service ${sid} is in an error state and needs manual intervention. Look up 'ERROR RECOVERY' in the documentation.`,
      );
      return ExitCode.SUCCESS; // error always succeeds
    }
    if (cd.node !== node) {
      env.log('err', `service '${sid}' not on this node`);
      return ExitCode.EWRONG_NODE;
    }
    let running = agent.checkRunning(sid);
    if (cmd === 'started') {
      if (running) return ExitCode.SUCCESS;
      env.log('info', `starting service ${sid}`);
      agent.start(sid);
      running = agent.checkRunning(sid);
      if (running) {
        env.log('info', `service status ${sid} started`);
        return ExitCode.SUCCESS;
      }
      env.log('warning', `unable to start service ${sid}`);
      return ExitCode.ERROR;
    }
    if (cmd === 'request_stop' || cmd === 'stopped') {
      if (!running) return ExitCode.SUCCESS;
      if (params?.timeout !== undefined && params.timeout !== null) {
        env.log('info', `stopping service ${sid} (timeout=${params.timeout})`);
      } else {
        env.log('info', `stopping service ${sid}`);
      }
      agent.shutdown(sid, params?.timeout);
      running = agent.checkRunning(sid);
      if (!running) {
        env.log('info', `service status ${sid} stopped`);
        return ExitCode.SUCCESS;
      }
      env.log('info', `unable to stop service ${sid} (still running)`);
      return ExitCode.ERROR;
    }
    if (cmd === 'migrate' || cmd === 'relocate' || cmd === 'request_start_balance') {
      const target = params?.target;
      if (target === undefined || target === null) {
        throw new Error(`${cmd} '${sid}' failed - missing target\n`);
      }
      if (cd.node === target) return ExitCode.SUCCESS; // already there
      if (cmd === 'request_start_balance' && running) {
        env.log('info', `ignoring rebalance-on-start for service ${sid} - already running`);
        return ExitCode.IGNORED;
      }
      const ok = agent.migrate(sid, target, cmd === 'migrate');
      if (!ok) {
        env.log('err', `service ${sid} not moved (migration error)`);
        return ExitCode.ERROR;
      }
      return ExitCode.SUCCESS;
    }
    env.log('err', `implement me (cmd '${cmd}')`);
    return ExitCode.EUNKNOWN_COMMAND;
  }
}
