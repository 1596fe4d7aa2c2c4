import type { Host } from '../cluster/host';
import type { ManagerConfig } from '../config/load';
import type { LockFs, ProcessIdentity } from './lock';
import type { Logger } from '../log';
import type { HttpReply, HttpRoute } from './listener';
import { beyondLoopback, MetricsServer } from './listener';
import { loadListenerSecurity } from '../config/listener-security';
import { JournalStore, journalPath } from './journal-store';
import type { Metrics } from './metrics';
import { StatusEndpoints } from './endpoints';
import { StatusPage } from './page';
import { type BuiltPolicy, buildPolicy } from '../balancing/policy';
import type { DaemonState } from './state';
import { ClusterWatch } from './cluster-watch';
import { DaemonContext } from './context';
import { MotionFollower } from './follower';
import { LockGuard } from './lock-guard';
import { reloadConfig } from './reload';
import { type RoundReport } from './report';
import { knownSkipReasons } from './reasons';
import { RoundRunner } from './round';
import { DrainBooking, drainBookedPath } from './drain-booking';
import { drainProgressPath } from './drain-progress';
import { StateKeeper } from './state-keeper';
import { runSummary, statusJson } from './status';

/** Everything the daemon is built from. */
export interface DaemonOptions {
  readonly config: ManagerConfig;
  readonly host: Host;
  readonly log: Logger;
  readonly version: string;
  /**
   * `--once`: one round that answers what would be moved now and why: no request, no lock,
   * the state file read and never written, the hold counted as met. The config's mode must be
   * observe (main sees to it).
   */
  readonly once?: boolean;
  /** Re-reads the config file (SIGHUP); throws on a bad file. */
  readonly reloadConfig?: () => ManagerConfig;
  /** The lock's file-system semantics (default: by the lock directory, see `lockFsFor`). */
  readonly lockFs?: LockFs;
  /** This process as a lock holder (default: read from the system; tests stand in other processes). */
  readonly identity?: ProcessIdentity;
  /** Whether stdout is a terminal (log format `auto` on reload). */
  readonly isTty?: boolean;
  /** Called with the metrics address once listening (tests). */
  readonly onListening?: (address: { host: string; port: number }) => void;
  /**
   * When the environment ends (a simulated scenario), keep serving the status page until
   * SIGINT or SIGTERM instead of exiting (`--sim --listen`: the page shows how it ended).
   */
  readonly lingerAtEnd?: boolean;
}

/**
 * poise-manager: config → start-up → loop of rounds → shutdown. The concerns live in their own
 * modules, wired here: the round (`round.ts`), the motion follower (`follower.ts`), the
 * active/standby lock (`lock-guard.ts`), the persistent state (`state-keeper.ts`), reload
 * (`reload.ts`) and the status (`status.ts`).
 */
export class Daemon {
  private readonly ctx: DaemonContext;
  private readonly keeper: StateKeeper;
  private readonly lock: LockGuard;
  private readonly rounds: RoundRunner;
  private readonly watch: ClusterWatch;
  private readonly follower: MotionFollower;
  private readonly server: MetricsServer;
  /** Books a `poise-manager drain`'s motions from its progress record (not with `--once`). */
  private readonly drainBooking: DrainBooking | undefined;
  /** Start-up warnings about the listener's files (a key readable by others, …). */
  private readonly listenerWarnings: readonly string[];
  /** The journal's file (not with `--once`). */
  private readonly journalStore: JournalStore | undefined;
  private stopping = false;
  private reloadPending = false;
  /** The page's address once listening. */
  private pageUrl: string | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly options: DaemonOptions) {
    const once = options.once === true;
    this.ctx = new DaemonContext(
      options.host,
      options.log,
      options.version,
      options.config,
      buildPolicy(options.config.policy, { holdMet: once }),
    );
    this.keeper = new StateKeeper(this.ctx, options.host.statePath ?? options.config.statePath, once);
    this.lock = new LockGuard(this.ctx, options.lockFs, () => this.keeper.load('lock'), options.identity, once);
    this.watch = new ClusterWatch(this.ctx);
    this.follower = new MotionFollower(this.ctx, this.keeper, this.lock);
    this.rounds = new RoundRunner(this.ctx, this.keeper, this.lock, this.follower, this.watch);
    // the listener's files are read here: one that cannot work stops the start (invalid-config)
    const metrics = options.config.metrics;
    const security = metrics.enabled ? loadListenerSecurity(metrics) : undefined;
    this.listenerWarnings = security?.warnings ?? [];
    this.server = new MetricsServer(this.ctx.metrics, this.routes(), {
      log: options.log,
      allowedHosts: metrics.allowedHosts,
      ...(security === undefined ? {} : { security }),
    });
    this.journalStore = once
      ? undefined
      : new JournalStore(
          journalPath(options.host.statePath ?? options.config.statePath),
          this.ctx.journal,
          options.log,
        );
    const statePath = options.host.statePath ?? options.config.statePath;
    this.drainBooking = once
      ? undefined
      : new DrainBooking(
          drainProgressPath(statePath),
          drainBookedPath(statePath),
          this.ctx.journal.motions,
          this.ctx.metrics,
          (m) => options.log.warn('drain', m),
        );
    if (options.host.redact) options.log.addRedaction(options.host.redact);
  }

  /**
   * The listener's routes beside `/metrics`: `/status`, the JSON endpoints of the status page
   * and the page itself. Every JSON reply passes the host's redaction (the token never leaves).
   */
  private routes(): Map<string, HttpRoute> {
    const redact = this.options.host.redact ?? ((text: string) => text);
    // /status indented as it always was; the endpoints compact (the history is long)
    const json = (status: number, body: unknown, indent?: number): HttpReply => ({
      status,
      type: 'application/json',
      body: `${redact(JSON.stringify(body, null, indent))}\n`,
      headers: { 'cache-control': 'no-store' },
    });
    const routes = new Map<string, HttpRoute>([['/status', () => json(200, this.status(), 1)]]);
    for (const [path, endpoint] of new StatusEndpoints(this.ctx).routes())
      routes.set(path, (query) => {
        const reply = endpoint(query);
        return json(reply.status, reply.body);
      });
    for (const [path, route] of new StatusPage().routes()) routes.set(path, route);
    return routes;
  }

  /** The config in force (a reload replaces it). */
  get config(): ManagerConfig {
    return this.ctx.config;
  }

  get metrics(): Metrics {
    return this.ctx.metrics;
  }

  /** The state as it stands (tests, status). */
  currentState(): DaemonState {
    return this.keeper.state;
  }

  /** Start-up: the lines that say how it runs, the state file, the metrics endpoint. */
  async start(): Promise<void> {
    const c = this.ctx.config;
    const log = this.ctx.log;
    const version = this.options.version;
    log.info(
      'start',
      `poise-manager ${version} starting: env ${c.env} (${this.options.host.port.description}), mode ${c.mode}, interval ${c.intervalSeconds} s, pid ${process.pid}`,
      { env: c.env, mode: c.mode, interval: c.intervalSeconds, version, config: c.file ?? null },
    );
    log.info(
      'start',
      this.options.once
        ? `--once: one round that says what would be moved now and why; nothing is moved, the state file is read and not written${this.ctx.policy.holdRounds > 1 ? `, the hold of ${this.ctx.policy.holdRounds} rounds counts as met` : ''}`
        : c.mode === 'observe'
          ? 'observe mode: each round says what it would do; nothing is moved (mode: act to move)'
          : 'act mode: decisions are carried out (at most one motion in flight)',
    );
    this.logPolicy('start');
    log.info(
      'start',
      `limits: ${c.limits.maxMotionsInFlight} motion in flight, ${c.limits.maxMotionsPerHour} motions per hour, motion timeout ${c.limits.motionTimeoutSeconds} s, settle time ${c.limits.settleSeconds} s`,
    );
    log.info(
      'start',
      c.guests.nonHa
        ? 'guests: HA resources and running non-HA guests are balanced'
        : 'guests: HA resources only (guests.non-ha: false)',
    );
    for (const notice of this.options.host.notices) log.log(notice.level, 'start', notice.msg);
    this.keeper.load('start');
    if (this.journalStore !== undefined) {
      const state = this.keeper.state;
      const restored = this.journalStore.load(this.ctx.now(), { motion: state.motion, outcomes: state.outcomes });
      this.rounds.continueAfter(restored.lastRound);
    }
    if (c.metrics.enabled) {
      for (const warning of this.listenerWarnings) log.warn('metrics', warning);
      const addr = await this.server.listen(c.metrics.host, c.metrics.port);
      const host = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
      const base = `${this.server.scheme}://${host}:${addr.port}`;
      this.pageUrl = `${base}/`;
      log.info(
        'metrics',
        `status page on ${base}/ (JSON: /status, /api/…), metrics on ${base}/metrics; authentication: ${this.server.authDescription}`,
      );
      if (beyondLoopback(c.metrics.host) && this.server.authDescription === 'none')
        log.warn(
          'metrics',
          `the listener on ${host}:${addr.port} is reachable beyond loopback without authentication: anyone who reaches it reads the cluster's state (set metrics.bearer-token-file or metrics.basic-auth-file, or listen on 127.0.0.1)`,
        );
      else if (beyondLoopback(c.metrics.host) && this.server.scheme === 'http')
        log.warn(
          'metrics',
          `the listener on ${host}:${addr.port} is reachable beyond loopback over plain HTTP: the credentials travel in clear (set metrics.tls.cert-file and metrics.tls.key-file)`,
        );
      this.options.onListening?.(addr);
    } else {
      log.info('metrics', 'disabled (metrics.enabled: false)');
    }
    this.lock.describe();
    this.ctx.metrics.info.set({ mode: c.mode, env: c.env, version }, 1);
    this.ctx.metrics.active.set(this.lock.active ? 1 : 0);
  }

  private logPolicy(event: string): void {
    const policy = this.ctx.policy;
    const log = this.ctx.log;
    log.info(event, `policy: ${policy.description}`);
    log.info(event, policy.sources);
    for (const problem of policy.problems) log.warn(event, problem);
  }

  /** The loop; resolves with the exit code. */
  async run(): Promise<number> {
    let code = 0;
    await this.start();
    try {
      while (!this.stopping) {
        const report = await this.runRound();
        if (this.reloadPending) this.reload();
        if (this.options.once) {
          code = report.outcome === 'error' ? 1 : 0;
          break;
        }
        const host = this.options.host;
        if (host.finished?.()) {
          const end = host.endStatus?.() ?? { ok: true, message: 'the environment has ended' };
          this.ctx.log.log(end.ok ? 'info' : 'error', 'stop', end.message);
          if (!end.ok) code = 1;
          if (this.options.lingerAtEnd && this.pageUrl !== undefined && !this.stopping) {
            this.ctx.log.info('stop', `the status page stays up at ${this.pageUrl} until SIGINT or SIGTERM`);
            const signal = this.abort.signal;
            await new Promise<void>((resolve) => {
              if (signal.aborted) resolve();
              else signal.addEventListener('abort', () => resolve(), { once: true });
            });
          }
          break;
        }
        if (this.stopping) break;
        await host.clock.sleep(this.ctx.config.intervalSeconds, this.abort.signal);
      }
    } finally {
      await this.close();
    }
    return code;
  }

  /** One round; never throws (a failure is the round's line). */
  async runRound(): Promise<RoundReport> {
    const report = await this.rounds.run();
    this.drainBooking?.poll();
    this.journalStore?.saveIfDue();
    return report;
  }

  /** SIGTERM/SIGINT: finish the current round, then exit 0. */
  stop(signal: string): void {
    if (this.stopping) return;
    this.stopping = true;
    this.ctx.log.info(
      'stop',
      this.rounds.busy ? `${signal}: finishing the current round, then exiting` : `${signal}: exiting`,
    );
    this.abort.abort();
  }

  /** SIGHUP: reload the config now, or right after the current round. */
  requestReload(): void {
    if (this.rounds.busy) this.reloadPending = true;
    else this.reload();
  }

  /** Re-reads the config (see `reload.ts`). */
  reload(): void {
    this.reloadPending = false;
    if (this.options.once) return;
    const adopt = (policy: BuiltPolicy) => {
      this.ctx.policy = policy;
      this.ctx.metrics.countFromZero({ skipReasons: knownSkipReasons(policy.pipeline.stages) });
      this.keeper.adoptPipelineState(this.keeper.state.pipeline, 'config');
      // a new policy: balancing stopped for a failing stage runs again
      this.rounds.stageGuard.reset();
    };
    if (!reloadConfig(this.ctx, this.options.reloadConfig, this.options.isTty ?? false, adopt)) return;
    this.logPolicy('config');
    const c = this.ctx.config;
    this.ctx.journal.resize(c.intervalSeconds);
    this.ctx.metrics.info.reset();
    this.ctx.metrics.info.set({ mode: c.mode, env: c.env, version: this.options.version }, 1);
  }

  /**
   * Closes what `start()` opened: releases the lock, closes the metrics listener, the port and
   * the host, and logs the closing line. `run()` calls it; a caller that drives the rounds
   * itself (`start()`, `runRound()`) calls it at the end.
   */
  async close(): Promise<void> {
    this.lock.release();
    await this.server.close();
    this.journalStore?.save();
    await this.options.host.port.close?.();
    await this.options.host.close?.();
    const n = this.rounds.rounds;
    this.ctx.log.info(
      'stop',
      `stopped after ${n} ${n === 1 ? 'round' : 'rounds'}${runSummary(this.ctx, this.keeper.state.motion)}`,
    );
  }

  /** The JSON of `/status`. */
  status(): Record<string, unknown> {
    const status = statusJson(this.ctx, {
      active: this.lock.active,
      clusterBalancer: this.rounds.clusterBalancer,
      rounds: this.rounds.rounds,
      lastReport: this.rounds.lastReport,
      state: this.keeper.state,
      cluster: this.watch.status(this.ctx.now()),
      paused: this.follower.pausedKinds(),
    });
    // balancing stopped for a failing policy stage: said first (the page shows the notice)
    const stopped = this.rounds.stageGuard.stopped ?? null;
    return { ...status, ...(stopped ? { notice: stopped.message } : {}), balancingStopped: stopped };
  }
}
