import {
  HA_SERVICE_STATES,
  lazyRecord,
  lazyRecordEntries,
  nullRecord,
  snapshot,
  thaw,
  type Env,
  type LrmResult,
  type LrmStatus,
  type ManagerStatus,
  type ServiceConfig,
  type ServiceConfigEntry,
  type ServiceStatus,
  type Snapshot,
} from '@poise/env';
import type { PolicyRegistry } from '@poise/policy';
import { NodeStatus } from './node-status';
import { BasicUsage, type OnlineNodeUsage } from './scheduler';
import { ExitCode, own, sortedKeys } from './tools';
import { selectServiceNode, type NodePreference } from './select-node';
import { RulesState } from './rules-state';
import { findNegativeAffinityConflict, getPositivePartnersToMove } from '@poise/rules';
import { type CrsSettings, readCrsSettings } from './crs';
import { CrsUsage, createUsage, type UsageDocuments } from './usage-model';
import { BalancerHost, loadBalance, type BalancerEvent } from './balance';
import { compareNames } from '@poise/usage';
import { EntryList } from './entry-list';

/** Options the simulator or daemon passes to every manager it creates. */
export interface ManagerOptions {
  /** Reference behaviour profile: pve-5.2.0 (raw CV, fractions) or pve-9.2 (normalised, percent). */
  profile: 'pve-5.2.0' | 'pve-9.2';
  /**
   * The balancer's policy plug-ins: whose keys the `crs` section may set and whose stages the
   * balancer runs (default `BUILTIN_REGISTRY`, the built-in variants; extend it with
   * `loadPluginRegistry` or `PolicyRegistry.with` for out-of-tree ones).
   */
  registry?: PolicyRegistry;
  /**
   * Optional observer of the balancer: every motion it queues and every outcome of such a
   * motion (see {@link BalancerEvent}). For recorders and metrics; it must not throw.
   */
  onBalancerEvent?: (event: BalancerEvent) => void;
}

/** Service states of the manager's state machine (spec §3.5). */
const VALID_STATES: ReadonlySet<string> = new Set(HA_SERVICE_STATES);

/** What a service without config reads as in the state machine. */
const NO_CONFIG = { state: 'disabled' } as Snapshot<ServiceConfigEntry>;

/** Locks that are safe to remove from a guest after its node was fenced. */
const FENCE_REMOVABLE_LOCKS = [
  'backup',
  'mounted',
  'migrate',
  'clone',
  'rollback',
  'snapshot',
  'snapshot-delete',
  'suspending',
  'suspended',
];

/**
 * The CRM master's round: node health, service bookkeeping, CRM commands, disarm, balancing and
 * the service state machine. Created when a CRM becomes master; its in-memory state (last
 * online times, the balancer's stage state — hold counter, backoff, cooldown, smoothing — and
 * the balancer motions it waits for) dies with the mastership, as the reference's hold
 * counter does.
 */
export class Manager {
  readonly ms: ManagerStatus;
  readonly ns: NodeStatus;
  readonly ss: Record<string, ServiceStatus>;
  private uidCounter = 0;
  /** @internal The round's usage model (node selection and balancing read it). */
  usage: OnlineNodeUsage;
  /** @internal The `crs` settings in force this round. */
  crs: CrsSettings;
  /** @internal The rules engine's state for this manager. */
  readonly rules: RulesState;
  /** The balancer's host side: pipeline, stage state, motions waited for (see `balance-host.ts`). */
  private readonly balancer: BalancerHost;
  private manageRounds = 0;
  /** The service config read this round (an immutable snapshot). */
  private sc: Snapshot<ServiceConfig> = nullRecord();
  /**
   * This round's own changes to the config it read (the recovery node): the reference edits
   * its in-memory copy, which the rest of the round sees; poise records the edit here instead
   * of changing the snapshot.
   */
  private readonly scEdits = new Map<string, Snapshot<ServiceConfigEntry>>();
  private lastCrsProblems = '';
  /** `ss` keys in byte order; dropped whenever a service is added or removed. */
  private sortedSids: readonly string[] | undefined;
  private sortedEntries: readonly ServiceStatus[] | undefined;
  /** `ss` keys in the record's own order (insertion), and their entries; dropped with {@link sortedSids}. */
  private statusKeys: readonly string[] | undefined;
  private statusKeyEntries: readonly ServiceStatus[] | undefined;
  /**
   * What the last {@link flush} published of `ss`: the entry snapshots (an {@link EntryList} over
   * the key list `ss` had then) and the lazy record made of them.
   */
  private published:
    | {
        entries: EntryList<Snapshot<ServiceStatus>>;
        record: Snapshot<Record<string, ServiceStatus>>;
      }
    | undefined;
  /** {@link configs}: the entries, and the config and ids they were read for. */
  private alignedConfigs: readonly (Snapshot<ServiceConfigEntry> | undefined)[] = [];
  private alignedConfig: Snapshot<ServiceConfig> | undefined;
  private alignedSids: readonly string[] | undefined;
  /**
   * The config snapshot and the `ss` keys (the {@link sids} array) after the last round that
   * synchronised them: while both are the same objects, every configured service is tracked and
   * every tracked one configured, so the next round skips the two passes that check it.
   */
  private syncedConfig: Snapshot<ServiceConfig> | undefined;
  private syncedSids: readonly string[] | undefined;
  /** Configured services `ss` does not track, in byte order, for {@link syncedConfig} and {@link syncedSids}. */
  private untracked: readonly string[] | undefined;
  /**
   * What the last rebuild of the usage model read (see {@link usageUnchangedSinceBuild}), when
   * the model can be renewed; undefined otherwise.
   */
  private usageBuild:
    | {
        mode: string;
        memhost: boolean;
        sids: readonly string[];
        untracked: readonly string[];
        sc: Snapshot<ServiceConfig>;
        state: readonly string[];
        node: readonly string[];
        target: readonly (string | undefined)[];
        running: readonly unknown[];
      }
    | undefined;
  /** Whether the usage model was changed since its last rebuild ({@link changeServiceState}). */
  private usageTouched = false;

  constructor(
    readonly env: Env,
    readonly options: ManagerOptions,
  ) {
    // the manager owns its status: an explicit, mutable copy of what it read (once per
    // mastership); it is written back at the end of every round
    const old = env.readManagerStatus();
    this.ms = nullRecord<unknown>();
    this.ms.master_node = env.nodename();
    const nodeStatus = old.node_status ? thaw<Record<string, string>>(old.node_status) : nullRecord<string>();
    const serviceStatus = old.service_status
      ? thaw<Record<string, ServiceStatus>>(old.service_status)
      : nullRecord<ServiceStatus>();
    this.ms.node_status = nodeStatus;
    this.ms.service_status = serviceStatus;
    if (old.node_request) this.ms.node_request = thaw<NonNullable<ManagerStatus['node_request']>>(old.node_request);
    if (old.disarm) this.ms.disarm = thaw<NonNullable<ManagerStatus['disarm']>>(old.disarm);
    this.ss = serviceStatus;
    this.balancer = new BalancerHost(options.onBalancerEvent, options.registry);
    this.ns = new NodeStatus(env, nodeStatus);
    this.crs = this.readCrs();
    if (this.crs.scheduler !== 'basic') env.log('info', `using scheduler mode '${this.crs.scheduler}'`);
    this.usage = new BasicUsage([]);
    this.rules = new RulesState({
      env,
      nodeState: (n) => this.ns.getNodeState(n),
      listNodes: () => this.ns.listNodes(),
      onlineNodes: () => this.usage.listNodes(),
      logConfigWarnings: options.profile !== 'pve-5.2.0',
    });
  }

  /** Whether every LRM acknowledged the disarm request. */
  isFullyDisarmed(): boolean {
    return this.ms.disarm?.state === 'disarmed';
  }

  private newUid(): string {
    this.uidCounter++;
    return `${this.env.nodename()}-${this.uidCounter}`;
  }

  /**
   * Writes the status. The service status goes as a lazy record (see `lazyRecord` of
   * `@poise/env`) of entry snapshots made here, each from the previous one (an unchanged entry
   * is the same object): the daemons read its entries by sid, and no 5,000-key record has to be
   * walked or written every round. The record has `ss`'s keys in `ss`'s order, as the snapshot of
   * `ss` would.
   */
  private flush(): void {
    this.ms.timestamp = this.env.getTime();
    const doc: ManagerStatus = Object.assign(nullRecord<unknown>(), this.ms);
    doc.service_status = this.publishServiceStatus() as Record<string, ServiceStatus>;
    this.env.writeManagerStatus(doc);
  }

  /**
   * The service status as the lazy record {@link flush} writes. Its entries are an
   * {@link EntryList}: while `ss` keeps its keys (the same key array), the new list shares the
   * key index of the last one and each entry's previous snapshot is found by position, so a round
   * builds two arrays, not a 5,000-entry map.
   */
  private publishServiceStatus(): Snapshot<Record<string, ServiceStatus>> {
    this.sids();
    const keys = this.statusKeys!;
    const values = this.statusKeyEntries!;
    const last = this.published?.entries;
    const sameKeys = last !== undefined && last.keyList === keys;
    const snapshots: Snapshot<ServiceStatus>[] = new Array<Snapshot<ServiceStatus>>(keys.length);
    let changed = !sameKeys;
    for (let i = 0; i < keys.length; i++) {
      const before = sameKeys ? last.valueList[i] : last?.get(keys[i]!);
      const entry = snapshot<ServiceStatus>(values[i]!, before);
      if (entry !== before) changed = true;
      snapshots[i] = entry;
    }
    if (!changed) return this.published!.record;
    const entries = new EntryList(keys, snapshots, sameKeys ? last.keyIndex() : undefined);
    const record = lazyRecord(entries, { handOver: true });
    this.published = { entries, record };
    return record;
  }

  /**
   * Reads every known node's LRM status: results by uid (the first node in `listNodes` order
   * wins a uid two report), and modes. A `Map`: the uids looked up are fresh strings every round,
   * which a keyed read of a large object would have to intern first.
   */
  private readLrmStatus(): { results: Map<string, Snapshot<LrmResult>>; modes: Record<string, string> } {
    const modes = nullRecord<string>();
    const statuses: Snapshot<LrmStatus>[] = [];
    for (const node of this.ns.listNodes()) {
      const st = this.env.readLrmStatus(node);
      modes[node] = st.mode || 'active';
      statuses.push(st);
    }
    // the last node first, each setting its results: the first node's result for a uid is the
    // one left, with one map operation per result (the map's order is never read)
    const results = new Map<string, Snapshot<LrmResult>>();
    for (let d = statuses.length - 1; d >= 0; d--) {
      const res = statuses[d]!.results;
      if (!res) continue;
      const entries = lazyRecordEntries(res);
      if (entries instanceof EntryList) {
        // an LRM's results (see Lrm): walked by position, no entry pair made per result
        const list = entries as EntryList<Snapshot<LrmResult>>;
        const uids = list.keyList;
        const values = list.valueList;
        for (let i = 0; i < uids.length; i++) results.set(uids[i]!, values[i]!);
      } else if (entries !== undefined) {
        for (const [uid, result] of entries) results.set(uid, result);
      } else {
        const record: Snapshot<Record<string, LrmResult>> = res;
        for (const uid of Object.keys(record)) results.set(uid, record[uid]!);
      }
    }
    return { results, modes };
  }

  /** The tracked services in byte order. */
  private sids(): readonly string[] {
    if (this.sortedSids === undefined) {
      const keys = Object.keys(this.ss);
      this.statusKeys = keys;
      this.statusKeyEntries = keys.map((sid) => this.ss[sid]!);
      const sids = [...keys].sort(compareNames);
      this.sortedSids = sids;
      this.sortedEntries = sids.map((sid) => this.ss[sid]!);
    }
    return this.sortedSids;
  }

  /**
   * The status entries of {@link sids}, index by index: the passes over every service read them
   * in order instead of looking each up in the (large) status record. An entry is changed in
   * place, never replaced, while its service is tracked.
   */
  private entries(): readonly ServiceStatus[] {
    this.sids();
    return this.sortedEntries!;
  }

  /** The entries of {@link ss} in sid byte order (the same objects; remembered until a service is added or removed). */
  statusEntries(): readonly ServiceStatus[] {
    return this.entries();
  }

  /**
   * The config entries of {@link sids} in this round's config (without the round's own edits),
   * index by index; remembered while the config and the ids stay the same objects.
   */
  private configs(): readonly (Snapshot<ServiceConfigEntry> | undefined)[] {
    const sids = this.sids();
    if (this.alignedConfig !== this.sc || this.alignedSids !== sids) {
      this.alignedConfigs = sids.map((sid) => own(this.sc, sid));
      this.alignedConfig = this.sc;
      this.alignedSids = sids;
    }
    return this.alignedConfigs;
  }

  /** A service's config this round (with the round's own edits), undefined when it has none. */
  private configOf(sid: string): Snapshot<ServiceConfigEntry> | undefined {
    return this.scEdits.get(sid) ?? own(this.sc, sid);
  }

  /** The round, spec §3.4. */
  manage(): void {
    const env = this.env;
    const ns = this.ns;
    const ss = this.ss;
    const { nodeInfo } = env.getNodeInfo();
    const { results: lrmResults, modes: lrmModes } = this.readLrmStatus();
    ns.update(nodeInfo, lrmModes);
    if (!ns.nodeIsOperational(env.nodename())) {
      env.log('info', 'master seems offline');
      return;
    }
    this.manageRounds++;
    this.updateCrsSchedulerMode();
    this.rules.tryPersistentGroupMigration(this.manageRounds, lrmModes);

    this.scEdits.clear();
    this.sc = env.readServiceConfig();
    const groupsText = env.readGroupConfig();

    if (this.sc !== this.syncedConfig || this.sortedSids === undefined || this.sortedSids !== this.syncedSids) {
      this.syncedConfig = undefined;
      this.untracked = undefined;
    }
    if (!this.ms.disarm && this.syncedConfig === undefined) {
      for (const sid of sortedKeys(this.sc)) {
        if (Object.hasOwn(ss, sid)) continue;
        const cd = this.sc[sid]!;
        if (cd.state === 'ignored') continue;
        env.log('info', `adding new service '${sid}' on node '${cd.node}'`);
        // assume the service is running on the configured node
        const state = cd.state === 'started' ? 'request_start' : 'request_stop';
        ss[sid] = { state, node: cd.node, uid: this.newUid() };
        this.sortedSids = undefined;
      }
      // the reference iterates this hash unsorted (random log order when two services go in
      // one round); byte order is the deterministic choice
      for (const sid of this.sids()) {
        const cd = own(this.sc, sid);
        if (cd && cd.state !== 'ignored') continue;
        const reason = cd ? 'ignored state requested' : 'no config';
        env.log('info', `removing stale service '${sid}' (${reason})`);
        delete ss[sid];
        this.sortedSids = undefined;
      }
      this.syncedConfig = this.sc;
      this.syncedSids = this.sids();
    }

    this.recomputeOnlineNodeUsage();
    // groups set the failback of their services for this round (a copy when they do)
    this.sc = this.rules.update(this.sc, groupsText);
    this.updateCrmCommands();

    let only: Set<string> | undefined;
    if (this.ms.disarm) {
      const deferred = this.handleDisarm(lrmModes);
      if (!deferred) return;
      only = deferred;
    } else {
      loadBalance(this, this.balancer);
    }

    for (;;) {
      let repeat = false;
      // whether a service is in state `fence` after its pass (only its own pass changes its state)
      let fencing = false;
      const sids = this.sids();
      const entries = this.entries();
      const configs = this.configs();
      for (let i = 0; i < sids.length; i++) {
        const sid = sids[i]!;
        if (only && !only.has(sid)) continue;
        const sd = entries[i]!;
        // configOf(sid), with the config of this round read by index
        const cd: Snapshot<ServiceConfigEntry> =
          (this.scEdits.size > 0 ? this.scEdits.get(sid) : undefined) ?? configs[i] ?? NO_CONFIG;
        const lrmRes = sd.uid ? lrmResults.get(sd.uid) : undefined;
        const last = sd.state;
        switch (last) {
          case 'stopped':
            this.nextStateStopped(sid, cd, sd);
            break;
          case 'started':
            this.nextStateStarted(sid, cd, sd, lrmRes);
            break;
          case 'request_start':
            this.nextStateRequestStart(sid, cd, sd);
            break;
          case 'migrate':
          case 'relocate':
          case 'request_start_balance':
            this.nextStateMigrateRelocate(sid, cd, sd, lrmRes);
            break;
          case 'fence':
            break; // the fencing pass below moves it on
          case 'recovery':
            this.nextStateRecovery(sid, cd, sd);
            break;
          case 'request_stop':
            this.nextStateRequestStop(sid, sd, lrmRes);
            break;
          case 'freeze': {
            const mode = sd.node ? own(lrmModes, sd.node) : undefined;
            if (mode === 'active') this.changeServiceState(sid, cd.state === 'started' ? 'started' : 'request_stop');
            break;
          }
          case 'error':
            this.nextStateError(sid, cd, sd);
            break;
          default:
            throw new Error(`unknown service state '${last}'`);
        }
        const mode = sd.node ? own(lrmModes, sd.node) : undefined;
        if (mode === 'restart' && (sd.state === 'started' || sd.state === 'stopped' || sd.state === 'request_stop')) {
          this.changeServiceState(sid, 'freeze');
        }
        if (sd.state !== last) repeat = true;
        if (sd.state === 'fence') fencing = true;
      }

      // fencing
      const fenced = new Map<string, boolean>();
      const fenceSids = fencing ? this.sids() : [];
      const fenceEntries = fencing ? this.entries() : [];
      for (let i = 0; i < fenceSids.length; i++) {
        const sid = fenceSids[i]!;
        if (only && !only.has(sid)) continue;
        const sd = fenceEntries[i]!;
        if (sd.state !== 'fence') continue;
        if (!fenced.has(sd.node)) fenced.set(sd.node, ns.fenceNode(sd.node));
        if (!fenced.get(sd.node)) continue;
        this.changeServiceState(sid, 'recovery');
        repeat = true;
      }
      // a node in fence state without services to fence (admin interference) must not stay stuck
      for (const node of sortedKeys(ns.status)) {
        if (fenced.has(node)) continue;
        if (ns.getNodeState(node) !== 'fence') continue;
        env.log('notice', `node '${node}' in fence state but no services to-fence! admin interference?!`);
        if (ns.fenceNode(node)) repeat = true;
      }
      if (!repeat) break;
    }
    this.flush();
  }

  /** Reads the crs settings, logging invalid values once per change of the problems. */
  private readCrs(): CrsSettings {
    const { settings, problems } = readCrsSettings(this.env, this.options.profile, this.balancer.registry);
    const key = problems.join('\n');
    if (key !== this.lastCrsProblems) {
      for (const p of problems) this.env.log('warning', p);
      this.lastCrsProblems = key;
    }
    return settings;
  }

  private updateCrsSchedulerMode(): void {
    const next = this.readCrs();
    if (next.scheduler !== this.crs.scheduler) {
      this.env.log('info', `switching scheduler mode from '${this.crs.scheduler}' to '${next.scheduler}'`);
    }
    this.crs = next;
  }

  /**
   * Rebuilds the usage model from the service status. Reference quirk (§4.7), kept under every
   * profile: the model is rebuilt once at the start of each round and then only updated by
   * {@link changeServiceState} (remove + add, O(1) each); stats edited during a round
   * (set-static-stats, measured usage) are seen from the next round on.
   */
  recomputeOnlineNodeUsage(): void {
    const online = this.ns.listOnlineNodes();
    const mode = this.crs.scheduler;
    const memhost = this.balancer.registry.needs(this.crs.variant).memhost;
    const sids = this.sids();
    const entries = this.entries();
    const untracked = this.untrackedServices();
    let documents: UsageDocuments | undefined;
    if (this.usageUnchangedSinceBuild(mode, memhost, sids, entries, untracked)) {
      // the same services in the same states on the same nodes: the model of the last build
      // with this round's node stats, if the stats documents are the same (what a rebuild gives)
      const renewed = (this.usage as CrsUsage).renew(online);
      if (renewed === true) return;
      documents = renewed;
    }
    this.usage = createUsage(this.env, mode, online, this.options.profile, { memhost, documents });
    for (let i = 0; i < sids.length; i++) this.usage.addServiceUsage(sids[i]!, entries[i]!);
    // configured services the manager does not track (ignored ones, and new ones while the
    // stack is disarmed) count by their configured state, by the same rules as tracked ones
    // (spec §3.6): `started` loads its node, `stopped`, `disabled` and `ignored` load nothing
    for (const sid of untracked) {
      const cd = this.sc[sid]!;
      this.usage.addServiceUsage(sid, { state: cd.state, node: cd.node });
    }
    this.usageBuild =
      this.usage instanceof CrsUsage && this.usage.renewable()
        ? {
            mode,
            memhost,
            sids,
            untracked,
            sc: this.sc,
            state: entries.map((sd) => sd.state),
            node: entries.map((sd) => sd.node),
            target: entries.map((sd) => sd.target),
            running: entries.map((sd) => sd.running),
          }
        : undefined;
  }

  /**
   * Whether the usage model is the one the last {@link recomputeOnlineNodeUsage} built and
   * nothing it was built from has changed since: no state change touched it, the same scheduler
   * mode and options, the same tracked services (the same id list) with the same fields the
   * model reads of them (`serviceUsageNodes`: state, node, target, running), the same untracked
   * ones in the same config. The stats documents and the nodes are the model's own check
   * ({@link CrsUsage.renew}). O(services), no allocation.
   */
  private usageUnchangedSinceBuild(
    mode: string,
    memhost: boolean,
    sids: readonly string[],
    entries: readonly ServiceStatus[],
    untracked: readonly string[],
  ): boolean {
    const build = this.usageBuild;
    if (build === undefined || this.usageTouched) {
      this.usageTouched = false;
      return false;
    }
    if (build.mode !== mode || build.memhost !== memhost || build.sids !== sids) return false;
    if (build.untracked !== untracked || (untracked.length > 0 && build.sc !== this.sc)) return false;
    for (let i = 0; i < entries.length; i++) {
      const sd = entries[i]!;
      if (
        sd.state !== build.state[i] ||
        sd.node !== build.node[i] ||
        sd.target !== build.target[i] ||
        sd.running !== build.running[i]
      )
        return false;
    }
    return true;
  }

  /** Configured services `ss` does not track, in byte order (remembered while config and keys stay). */
  private untrackedServices(): readonly string[] {
    const synced =
      this.sc === this.syncedConfig && this.sortedSids !== undefined && this.sortedSids === this.syncedSids;
    if (synced && this.untracked !== undefined) return this.untracked;
    const list = sortedKeys(this.sc).filter((sid) => !Object.hasOwn(this.ss, sid));
    if (synced) this.untracked = list;
    return list;
  }

  /** Sets a new state, logs it, gives the service a new uid and updates its usage. */
  changeServiceState(sid: string, newState: string, params: Record<string, string | number> = {}): void {
    const sd = own(this.ss, sid);
    if (!sd) throw new Error(`no such service '${sid}'`);
    const oldState = sd.state;
    const { node, failed_nodes: failedNodes, maintenance_node: maintenanceNode } = sd;
    if (oldState === newState) throw new Error('no state change');
    if (!VALID_STATES.has(newState)) throw new Error(`invalid CRM service state '${newState}'\n`);
    // last key first: deleting an object's last property keeps it in V8's fast mode (any other
    // order turns it into a slow dictionary for the rest of its life)
    const keys = Object.keys(sd);
    for (let i = keys.length - 1; i >= 0; i--) delete sd[keys[i]!];
    sd.state = newState;
    sd.node = node;
    if (failedNodes !== undefined) sd.failed_nodes = failedNodes;
    if (maintenanceNode !== undefined) sd.maintenance_node = maintenanceNode;
    let text = '';
    for (const k of Object.keys(params).sort(compareNames)) {
      const v = params[k]!;
      if (text) text += ', ';
      text += `${k} = ${v}`;
      (sd as Record<string, unknown>)[k] = v;
    }
    this.usage.removeServiceUsage(sid);
    this.usage.addServiceUsage(sid, sd);
    this.usageTouched = true;
    sd.uid = this.newUid();
    if (text) text = `  (${text})`;
    this.env.log('info', `service '${sid}': state changed from '${oldState}' to '${newState}'${text}`);
  }

  // --- CRM commands ------------------------------------------------------------------------

  private updateCrmCommands(): void {
    const env = this.env;
    const ms = this.ms;
    const ns = this.ns;
    const ss = this.ss;
    const list = env.readCrmCommands();
    for (const raw of list.split('\n')) {
      const cmd = raw.replace(/\n$/, '');
      if (cmd === '') continue;
      let m: RegExpExecArray | null;
      if ((m = /^(migrate|relocate)\s+(\S+)\s+(\S+)$/.exec(cmd))) {
        const [, task, sid, node] = m as unknown as [string, string, string, string];
        const sd = own(ss, sid);
        if (!sd) env.log('err', `crm command error - no such service: ${cmd}`);
        else if (!ns.nodeIsOnline(node)) env.log('err', `crm command error - node not online: ${cmd}`);
        else if (node === sd.node) env.log('info', `ignore crm command - service already on target node: ${cmd}`);
        else this.queueResourceMotion(cmd, task, sid, node);
      } else if ((m = /^stop\s+(\S+)\s+(\S+)$/.exec(cmd))) {
        const [, sid, timeout] = m as unknown as [string, string, string];
        const sd = own(ss, sid);
        if (sd) {
          env.log('info', `got crm command: ${cmd}`);
          sd.cmd = ['stop', timeout];
        } else {
          env.log('err', `crm command error - no such service: ${cmd}`);
        }
      } else if ((m = /^enable-node-maintenance\s+(\S+)$/.exec(cmd))) {
        const node = m[1]!;
        const state = ns.getNodeState(node);
        if (ms.disarm) {
          env.log('warn', `ignoring crm command - cannot enable maintenance for node ${node}, HA stack is disarmed`);
        } else if (state === 'online') {
          ms.node_request ??= nullRecord();
          const request = own(ms.node_request, node) ?? (ms.node_request[node] = {});
          request.maintenance = 1;
        } else if (state === 'maintenance') {
          env.log('info', `ignoring crm command - node ${node} is already in maintenance state`);
        } else {
          env.log('err', `crm command error - node not online: ${cmd}`);
        }
      } else if ((m = /^disable-node-maintenance\s+(\S+)$/.exec(cmd))) {
        const node = m[1]!;
        const state = ns.getNodeState(node);
        if (state !== 'maintenance') {
          env.log('warn', `clearing maintenance of node ${node} requested, but it's in state ${state}`);
        }
        const request = own(ms.node_request, node);
        if (request) delete request.maintenance;
      } else if ((m = /^disarm-ha\s+(freeze|ignore)$/.exec(cmd))) {
        const mode = m[1]!;
        if (ms.disarm) {
          env.log('notice', `ignoring disarm-ha command - already in disarm state (${ms.disarm.state})`);
        } else {
          env.log('info', `got crm command: ${cmd}`);
          if (mode === 'ignore') {
            for (const sid of this.sids()) env.log('info', `disarm: suspending HA tracking for service '${sid}'`);
          }
          ms.disarm = { mode, state: 'disarming' };
        }
      } else if (/^arm-ha$/.test(cmd)) {
        if (ms.disarm) {
          env.log('info', `got crm command: ${cmd}`);
          if (ms.disarm.mode === 'ignore') {
            for (const sid of this.sids()) {
              const cd = this.configOf(sid);
              const sd = ss[sid]!;
              if (cd && cd.node !== sd.node) {
                env.log(
                  'info',
                  `service '${sid}': updating node '${sd.node}' => '${cd.node}' (changed while disarmed)`,
                );
                sd.node = cd.node;
              }
            }
          }
          delete ms.disarm;
        } else {
          env.log('notice', 'ignoring arm-ha command - HA stack is not disarmed');
        }
      } else {
        env.log('err', `unable to parse crm command: ${cmd}`);
      }
    }
  }

  /**
   * Queues a migrate/relocate for `sid` and its positively affine partners; refuses when a
   * negatively affine service is on (or moving to) the target. Shared by user commands and
   * the balancer.
   */
  queueResourceMotion(cmd: string, task: string, sid: string, target: string): boolean {
    const env = this.env;
    const ss = this.ss as Parameters<typeof findNegativeAffinityConflict>[3];
    const compiled = this.rules.view.compiled;
    const conflict = findNegativeAffinityConflict(compiled, sid, target, ss);
    if (conflict !== undefined) {
      env.log(
        'err',
        `crm command '${cmd}' error - service '${conflict}' on node '${target}' in negative affinity with service '${sid}'`,
      );
      return false;
    }
    env.log('info', `got crm command: ${cmd}`);
    this.ss[sid]!.cmd = [task, target];
    for (const csid of getPositivePartnersToMove(compiled, sid, target, ss)) {
      env.log(
        'info',
        `crm command '${cmd}' - ${task} service '${csid}' to node '${target}' (service '${csid}' in positive affinity with service '${sid}')`,
      );
      this.ss[csid]!.cmd = [task, target];
    }
    return true;
  }

  // --- disarm ------------------------------------------------------------------------------

  /**
   * Drives a requested disarm. Returns the services that defer it (to run through the state
   * machine this round), or undefined when the round ends here.
   */
  private handleDisarm(lrmModes: Record<string, string>): Set<string> | undefined {
    const env = this.env;
    const ss = this.ss;
    const disarm = this.ms.disarm!;
    const deferred = new Set<string>();
    for (const sid of this.sids()) {
      const state = ss[sid]!.state;
      if (state === 'fence' || state === 'recovery') {
        env.log('warn', `deferring disarm - service '${sid}' is in '${state}' state`);
        deferred.add(sid);
      } else if (state === 'migrate' || state === 'relocate') {
        env.log('info', `deferring disarm - service '${sid}' is in '${state}' state`);
        deferred.add(sid);
      }
    }
    if (deferred.size > 0) return deferred;

    const keep = new Set(['state', 'node', 'uid', 'maintenance_node']);
    for (const sid of this.sids()) {
      const sd = ss[sid]!;
      for (const k of Object.keys(sd)) if (!keep.has(k)) delete sd[k];
      if (disarm.mode === 'freeze') {
        const st = sd.state;
        if (
          st === 'started' ||
          st === 'stopped' ||
          st === 'request_stop' ||
          st === 'request_start' ||
          st === 'request_start_balance'
        ) {
          env.log('info', `disarm: freezing service '${sid}' (was '${st}')`);
          sd.state = 'freeze';
          sd.uid = this.newUid();
        }
      }
    }
    if (disarm.state !== 'disarmed') {
      const online = this.ns.listOnlineNodes();
      if (online.every((n) => lrmModes[n] === 'disarm')) {
        env.log('info', 'all LRMs disarmed, HA stack is now fully disarmed');
        disarm.state = 'disarmed';
      }
    }
    this.flush();
    return undefined;
  }

  // --- service state machine ----------------------------------------------------------------

  private selectNode(
    sid: string,
    cd: Snapshot<ServiceConfigEntry>,
    sd: ServiceStatus,
    pref: NodePreference,
  ): string | undefined {
    return selectServiceNode(this.rules.view, this.usage, this.ss, sid, cd, sd, pref);
  }

  /**
   * Starts a queued migrate/relocate unless the target is offline or already the service's
   * node (both logged and ignored). `announce` logs the move first (running services).
   */
  private startMove(sid: string, sd: ServiceStatus, cmd: string, target: string, announce: boolean): boolean {
    const env = this.env;
    if (!this.ns.nodeIsOnline(target)) {
      env.log('err', `ignore service '${sid}' ${cmd} request - node '${target}' not online`);
      return false;
    }
    if (sd.node === target) {
      env.log('info', `ignore service '${sid}' ${cmd} request - service already on node '${target}'`);
      return false;
    }
    if (announce) env.log('info', `${cmd} service '${sid}' to node '${target}'`);
    this.changeServiceState(sid, cmd, { node: sd.node, target });
    return true;
  }

  private nextStateStopped(sid: string, cd: Snapshot<ServiceConfigEntry>, sd: ServiceStatus): void {
    const env = this.env;
    const ns = this.ns;
    if (cd.node !== undefined && sd.node !== cd.node) {
      // happens when a node with active migrations is fenced. Reference quirk (§4.7): a
      // direct edit, so the usage model keeps the old node until the next round
      env.log('info', `fixup service '${sid}' location (${sd.node} => ${cd.node})`);
      sd.node = cd.node;
    }
    if (sd.cmd) {
      const cmd = String(sd.cmd.shift());
      if (cmd === 'migrate' || cmd === 'relocate') {
        if (this.startMove(sid, sd, cmd, String(sd.cmd.shift()), false)) return;
      } else if (cmd === 'stop') {
        env.log('info', `ignore service '${sid}' ${cmd} request - service already stopped`);
      } else {
        env.log('err', `unknown command '${cmd}' for service '${sid}'`);
      }
      delete sd.cmd;
    }
    if (cd.state === 'disabled') return;
    if (ns.nodeIsOfflineDelayed(sd.node) && ns.getNodeState(sd.node) !== 'maintenance') {
      this.changeServiceState(sid, 'fence');
      return;
    }
    if (cd.state === 'stopped') return;
    if (cd.state === 'started') {
      this.changeServiceState(sid, 'request_start', { node: sd.node });
      return;
    }
    env.log('err', `service '${sid}' - unknown state '${cd.state}' in service configuration`);
  }

  private nextStateRequestStart(sid: string, cd: Snapshot<ServiceConfigEntry>, sd: ServiceStatus): void {
    const current = sd.node;
    if (this.crs.rebalanceOnRequestStart) {
      const selected = this.selectNode(sid, cd, sd, 'best-score');
      if (selected !== undefined) {
        const which = selected !== current ? 'new' : 'current';
        this.env.log('info', `service ${sid}: re-balance selected ${which} node ${selected} for startup`);
        if (selected !== current) {
          this.changeServiceState(sid, 'request_start_balance', { node: current, target: selected });
          return;
        }
      }
    }
    this.changeServiceState(sid, 'started', { node: current });
  }

  private recordServiceFailedOnNode(sd: ServiceStatus, node: string): void {
    sd.failed_nodes ??= [];
    sd.failed_nodes.push(node);
  }

  private nextStateStarted(
    sid: string,
    cd: Snapshot<ServiceConfigEntry>,
    sd: ServiceStatus,
    lrmRes: Snapshot<LrmResult> | undefined,
  ): void {
    const env = this.env;
    const ns = this.ns;
    if (!ns.nodeIsOnline(sd.node)) {
      if (ns.nodeIsOfflineDelayed(sd.node)) this.changeServiceState(sid, 'fence');
      // Reference bug, reproduced: for a node in maintenance the handler goes on after the
      // change to 'fence', so the service may move on to 'relocate' and back to 'fence' within
      // one round (test-shutdown-policy4 at t=220).
      if (ns.getNodeState(sd.node) !== 'maintenance') return;
      // remember the node to come back to when it leaves maintenance (a direct edit: the
      // usage model is not refreshed, as in the reference)
      sd.maintenance_node = sd.node;
    }
    if (cd.state === 'disabled' || cd.state === 'stopped') {
      this.changeServiceState(sid, 'request_stop');
      return;
    }
    if (cd.state !== 'started') {
      env.log('err', `service '${sid}' - unknown state '${cd.state}' in service configuration`);
      return;
    }
    if (sd.cmd) {
      const cmd = String(sd.cmd.shift());
      if (cmd === 'migrate' || cmd === 'relocate') {
        this.startMove(sid, sd, cmd, String(sd.cmd.shift()), true);
      } else if (cmd === 'stop') {
        const timeout = sd.cmd.shift()!;
        if (Number(timeout) === 0) {
          env.log('info', `request immediate service hard-stop for service '${sid}'`);
        } else {
          env.log('info', `request graceful stop with timeout '${timeout}' for service '${sid}'`);
        }
        this.changeServiceState(sid, 'request_stop', { timeout });
        env.updateServiceConfig(sid, { state: 'stopped' });
      } else {
        env.log('err', `unknown command '${cmd}' for service '${sid}'`);
      }
      delete sd.cmd;
      return;
    }

    let tryNext = false;
    if (lrmRes) {
      const ec = lrmRes.exit_code;
      if (ec === ExitCode.SUCCESS) {
        if (sd.failed_nodes !== undefined) {
          env.log(
            'info',
            `relocation policy successful for '${sid}' on node '${sd.node}', failed nodes: ${sd.failed_nodes.join(', ')}`,
          );
          delete sd.failed_nodes;
        }
        // flag a successful start; only valid while the state is 'started'. Reference quirk
        // (§4.7): a direct edit, the usage model keeps the service as 'starting' until the next
        // rebuild, which in dynamic mode counts it twice for start scoring this round (the
        // measured node stats already include it).
        sd.running = 1;
      } else if (ec === ExitCode.ERROR || ec === ExitCode.EWRONG_NODE) {
        delete sd.running;
        this.recordServiceFailedOnNode(sd, sd.node);
        if (sd.failed_nodes!.length <= Number(cd.max_relocate)) {
          tryNext = true;
          env.log('warning', `starting service ${sid} on node '${sd.node}' failed, relocating service.`);
        } else {
          env.log(
            'err',
            `recovery policy for service ${sid} failed, entering error state. Failed nodes: ${sd.failed_nodes!.join(', ')}`,
          );
          this.changeServiceState(sid, 'error');
          return;
        }
      } else {
        this.recordServiceFailedOnNode(sd, sd.node);
        env.log('err', `service '${sid}' got unrecoverable error (exit code ${ec})`);
        this.changeServiceState(sid, 'error');
        return;
      }
    }

    const node = this.selectNode(sid, cd, sd, tryNext ? 'try-next' : 'none');
    if (node !== undefined && sd.node !== node) {
      const fallback = sd.maintenance_node;
      if (fallback !== undefined) {
        if (node === fallback) {
          env.log('info', `moving service '${sid}' back to '${fallback}', node came back from maintenance.`);
          delete sd.maintenance_node;
        } else if (sd.node !== fallback) {
          env.log('info', `dropping maintenance fallback node '${fallback}' for '${sid}'`);
          delete sd.maintenance_node;
        }
      }
      if (cd.type === 'vm') {
        env.log('info', `migrate service '${sid}' to node '${node}' (running)`);
        this.changeServiceState(sid, 'migrate', { node: sd.node, target: node });
      } else {
        env.log('info', `relocate service '${sid}' to node '${node}'`);
        this.changeServiceState(sid, 'relocate', { node: sd.node, target: node });
      }
      return;
    }
    if (tryNext && node === undefined) {
      env.log(
        'warning',
        `Start Error Recovery: Tried all available nodes for service '${sid}', retry start on current node. Tried nodes: ${(sd.failed_nodes ?? []).join(', ')}`,
      );
    }
    if (sd.maintenance_node && sd.node === sd.maintenance_node && ns.getNodeState(sd.node) === 'online') {
      // the service never left the node it was on when maintenance began (e.g. the whole
      // cluster was shut down with the migrate policy): the fallback is stale
      env.log(
        'info',
        `service '${sid}': clearing stale maintenance node '${sd.maintenance_node}' setting (is current node)`,
      );
      delete sd.maintenance_node;
    }
    // make the LRM start it again if it went down unexpectedly, without losing a result
    if (lrmRes) sd.uid = this.newUid();
  }

  private nextStateMigrateRelocate(
    sid: string,
    cd: Snapshot<ServiceConfigEntry>,
    sd: ServiceStatus,
    lrmRes: Snapshot<LrmResult> | undefined,
  ): void {
    const env = this.env;
    if (lrmRes) {
      const ec = lrmRes.exit_code;
      const req = cd.state === 'started' ? 'started' : 'request_stop';
      // the outcome of a balancer motion is known here, for each member of its bundle
      this.balancer.lrmResult(sid, sd, ec, env.getTime());
      if (ec === ExitCode.SUCCESS) {
        this.changeServiceState(sid, req, { node: sd.target! });
        return;
      } else if (ec === ExitCode.EWRONG_NODE) {
        // (as in the reference, these two branches fall through to the offline check below)
        env.log('err', `service '${sid}' - migration failed: service registered on wrong node!`);
        this.changeServiceState(sid, 'error');
      } else if (ec === ExitCode.IGNORED) {
        env.log('info', `service '${sid}' - rebalance-on-start request ignored - service already running`);
        this.changeServiceState(sid, req, { node: sd.node });
      } else {
        env.log('err', `service '${sid}' - migration failed (exit code ${ec})`);
        this.changeServiceState(sid, req, { node: sd.node });
        return;
      }
    }
    if (this.ns.nodeIsOfflineDelayed(sd.node)) this.changeServiceState(sid, 'fence');
  }

  private nextStateRequestStop(sid: string, sd: ServiceStatus, lrmRes: Snapshot<LrmResult> | undefined): void {
    if (lrmRes) {
      if (lrmRes.exit_code === ExitCode.SUCCESS) {
        this.changeServiceState(sid, 'stopped');
      } else {
        this.env.log('err', `service '${sid}' stop failed (exit code ${lrmRes.exit_code})`);
        this.changeServiceState(sid, 'error');
      }
      return;
    }
    if (this.ns.nodeIsOfflineDelayed(sd.node)) this.changeServiceState(sid, 'fence');
  }

  private nextStateRecovery(sid: string, cd: Snapshot<ServiceConfigEntry>, sd: ServiceStatus): void {
    const env = this.env;
    const fencedNode = sd.node;
    const recoveryNode = this.selectNode(sid, cd, sd, 'best-score');
    if (recoveryNode !== undefined) {
      if (recoveryNode === fencedNode) {
        // e.g. strict node affinity and the node came back
        env.log('info', `recover service '${sid}' to previous failed and fenced node '${fencedNode}' again`);
      } else {
        env.log('info', `recover service '${sid}' from fenced node '${fencedNode}' to node '${recoveryNode}'`);
      }
      this.fenceRecoveryCleanup(sid);
      env.changeServiceLocation(sid, sd.node, recoveryNode);
      // the rest of this round sees the new location, as in the reference (which edits its copy)
      const edited: Snapshot<ServiceConfigEntry> = Object.assign(nullRecord<unknown>(), cd, { node: recoveryNode });
      this.scEdits.set(sid, edited);
      sd.node = recoveryNode;
      this.changeServiceState(sid, cd.state === 'started' ? 'started' : 'request_stop', { node: recoveryNode });
      return;
    }
    // no node to recover to: retry every round, the service should become available again
    env.log('err', `recovering service '${sid}' from fenced node '${fencedNode}' failed, no recovery node found`);
    if (cd.state === 'disabled') {
      // an admin disabling the service gets it out of recovery
      delete sd.failed_nodes;
      this.changeServiceState(sid, 'stopped');
    }
  }

  private fenceRecoveryCleanup(sid: string): void {
    const type = sid.split(':')[0]!;
    const agent = this.env.resourceAgent(type);
    if (!agent) throw new Error(`unknown resource type '${type}'`);
    const removed = agent.removeLocks(sid, FENCE_REMOVABLE_LOCKS);
    if (removed) {
      this.env.log('warning', `removed leftover lock '${removed}' from recovered service '${sid}' to allow its start.`);
    }
  }

  private nextStateError(sid: string, cd: Snapshot<ServiceConfigEntry>, sd: ServiceStatus): void {
    if (cd.state === 'disabled') {
      delete sd.failed_nodes;
      this.changeServiceState(sid, 'stopped');
    }
  }
}
