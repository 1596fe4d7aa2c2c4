import { performance } from 'node:perf_hooks';
import { compareNames } from '@poise/usage';
import type { BalanceContext, Decision, MotionOutcome as PolicyOutcome, Notice, ScoredMigration } from '@poise/policy';
import type { Host } from './adapters';
import type { ManagerConfig } from './config/load';
import { errorMessage } from './errors';
import { ActiveLock, LOCK_SAFETY_SECONDS, type LockFs, lockFsFor, pmxcfsLockFs } from './lock';
import { type LogFields, type Logger, type LogLevel, resolveLogFormat } from './log';
import { Metrics, MetricsServer } from './metrics';
import {
  buildUsageModel,
  clusterMotionInFlight,
  compileSnapshotRules,
  migrationCandidates,
  nonHaCandidates,
  restrictToModel,
  type UsageModel,
} from './model';
import { balanceContext, type BuiltPolicy, buildPolicy, checkPipelineState, REASON_FORMAT } from './policy';
import { type ClusterSnapshot, type MotionRecord, type MotionRequest, PortError, type SnapshotProblem } from './port';
import { type DaemonState, initialState, MAX_KEPT_OUTCOMES, type MotionOutcome, StateStore } from './state';

/** The sliding window of `limits.max-motions-per-hour`. */
export const MOTION_LIMIT_WINDOW_SECONDS = 3600;

/** What a round did: the one line it logs. */
export interface RoundReport {
  readonly round: number;
  /**
   * `move`: a motion was requested; `would-move`: a decision not carried out (observe mode);
   * `refused`: the cluster or the precondition check refused it; `skip`: nothing to do, see
   * `reason`; `standby`: another instance holds the lock; `error`: the round failed (API).
   */
  readonly outcome: 'move' | 'would-move' | 'refused' | 'skip' | 'standby' | 'error';
  /**
   * Bounded label: the policy's stop code (`holding`, `below-margin`, `backoff`, …; see
   * `@poise/policy`), or a daemon reason (`standby`, `api-error`, …).
   */
  readonly reason: string;
  readonly message: string;
  readonly level: LogLevel;
  readonly fields: LogFields;
}

type PartialReport = Omit<RoundReport, 'round' | 'fields' | 'level'> & { level?: LogLevel; fields?: LogFields };

/** Everything the daemon is built from. */
export interface DaemonOptions {
  readonly config: ManagerConfig;
  readonly host: Host;
  readonly log: Logger;
  readonly version: string;
  /** Run one round and stop. */
  readonly once?: boolean;
  /** Re-reads the config file (SIGHUP); throws on a bad file. */
  readonly reloadConfig?: () => ManagerConfig;
  /** The lock's file-system semantics (default: by the lock directory, see `lockFsFor`). */
  readonly lockFs?: LockFs;
  /** Whether stdout is a terminal (log format `auto` on reload). */
  readonly isTty?: boolean;
  /** Called with the metrics address once listening (tests). */
  readonly onListening?: (address: { host: string; port: number }) => void;
}

/** An imbalance (a fraction) → `12.3%`, as the policy's reasons print it. */
export function percent(fraction: number): string {
  return REASON_FORMAT.value('imbalance', fraction);
}

function describeMotion(m: {
  kind: string;
  sid: string;
  source: string;
  target: string;
  resources?: readonly string[];
}): string {
  const along =
    m.resources !== undefined && m.resources.length > 1
      ? ` (with ${m.resources.filter((r) => r !== m.sid).join(', ')})`
      : '';
  return `${m.kind} ${m.sid}${along} from ${m.source} to ${m.target}`;
}

/** Epoch seconds as a UTC time without milliseconds (`2026-01-01T00:01:00Z`). */
export function utcTime(seconds: number): string {
  return new Date(Math.round(seconds) * 1000).toISOString().replace(/\.000Z$/, 'Z');
}

/**
 * Epoch seconds in a policy text (`… until 1767225660`) as times: UTC (`… until
 * 2026-01-01T00:01:00Z`), or as `label` writes them (the simulator's `sim 00:01:00`).
 */
export function readableTimes(text: string, label: (seconds: number) => string = utcTime): string {
  return text.replace(
    /\b(until|at) (\d{10}(?:\.\d+)?)\b/g,
    (_m, word: string, seconds: string) => `${word} ${label(Number(seconds))}`,
  );
}

/**
 * poise-manager: config → start-up → loop (lock → read the cluster → follow the motion in
 * flight → usage model → candidates → policy pipeline → act or explain) → one log line per
 * round. The state (pipeline state, the motion in flight, motions of the last hour, outcomes)
 * is saved after each change, so a restart forgets nothing and re-issues nothing.
 */
export class Daemon {
  private config: ManagerConfig;
  private policy: BuiltPolicy;
  private state: DaemonState;
  private readonly store: StateStore;
  private readonly lock: ActiveLock | undefined;
  readonly metrics = new Metrics();
  private readonly server: MetricsServer;
  private roundNo = 0;
  private inRound = false;
  private stopping = false;
  private reloadPending = false;
  private readonly abort = new AbortController();
  private clusterAutoRebalance: boolean | undefined;
  /** The cluster's own balancer settings as last read (for the status). */
  private lastCrs: ClusterSnapshot['crs']['settings'];
  private reportedProblems = new Set<string>();
  private lastReport: RoundReport | undefined;
  private active: boolean;
  /** Whether this instance stood by since start (its state file may be stale then). */
  private wasStandby = false;
  /** This run's motions and observe-mode decisions, for the closing line. */
  private readonly runCounts = { requested: 0, succeeded: 0, failed: 0, wouldMove: 0 };

  constructor(private readonly options: DaemonOptions) {
    this.config = options.config;
    this.policy = buildPolicy(this.config.policy);
    this.store = new StateStore(options.host.statePath ?? this.config.statePath, () => this.now());
    this.state = initialState();
    // the lock guards acting on a real cluster; the simulator has one daemon by construction
    this.lock =
      this.config.lock.enabled && this.config.env === 'pve'
        ? new ActiveLock(
            this.config.lock.dir,
            this.config.lock.name,
            () => this.now(),
            options.lockFs ?? lockFsFor(this.config.lock.dir),
          )
        : undefined;
    this.active = this.lock === undefined;
    this.server = new MetricsServer(this.metrics, () => this.status());
    options.log.addSecrets(options.host.secrets);
  }

  private get log(): Logger {
    return this.options.log;
  }

  private now(): number {
    return this.options.host.clock.now();
  }

  /** A time of the daemon's clock in a message: ISO 8601, or the host's own label (simulated time). */
  private timeText(seconds: number): string {
    return this.options.host.timeLabel?.(seconds) ?? new Date(seconds * 1000).toISOString();
  }

  /** A policy text with its epoch seconds as times: UTC, or the host's own label. */
  private policyText(text: string): string {
    const label = this.options.host.timeLabel?.bind(this.options.host);
    return label ? readableTimes(text, label) : readableTimes(text);
  }

  /** The state as it stands (tests, status). */
  currentState(): DaemonState {
    return this.state;
  }

  /** Start-up: the lines that say how it runs, the state file, the metrics endpoint. */
  async start(): Promise<void> {
    const c = this.config;
    const log = this.log;
    log.info(
      'start',
      `poise-manager ${this.options.version} starting: env ${c.env} (${this.options.host.port.description}), mode ${c.mode}, interval ${c.intervalSeconds} s, pid ${process.pid}`,
      { env: c.env, mode: c.mode, interval: c.intervalSeconds, version: this.options.version, config: c.file ?? null },
    );
    log.info(
      'start',
      c.mode === 'observe'
        ? 'observe mode: each round says what it would do; nothing is moved (mode: act to move)'
        : 'act mode: decisions are carried out (at most one motion in flight)',
    );
    this.logPolicy('start');
    log.info(
      'start',
      `limits: ${c.limits.maxMotionsInFlight} motion in flight, ${c.limits.maxMotionsPerHour} motions per hour, motion timeout ${c.limits.motionTimeoutSeconds} s`,
    );
    log.info(
      'start',
      c.guests.nonHa
        ? 'guests: HA resources and running non-HA guests are balanced'
        : 'guests: HA resources only (guests.non-ha: false)',
    );
    for (const notice of this.options.host.notices) log.log(notice.level, 'start', notice.msg);
    this.loadState('start');
    if (c.metrics.enabled) {
      const addr = await this.server.listen(c.metrics.host, c.metrics.port);
      const host = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
      log.info('metrics', `metrics on http://${host}:${addr.port}/metrics, status on /status`);
      this.options.onListening?.(addr);
    } else {
      log.info('metrics', 'disabled (metrics.enabled: false)');
    }
    if (this.lock) {
      const semantics =
        this.options.lockFs === pmxcfsLockFs || lockFsFor(this.lock.dir) === pmxcfsLockFs
          ? 'pmxcfs'
          : 'local directory';
      log.info(
        'lock',
        `active/standby through the lock '${this.lock.path}' (${semantics}): acting only while holding it`,
      );
    } else {
      log.info(
        'lock',
        this.config.env === 'pve'
          ? 'active/standby lock disabled (lock.enabled: false): this instance always acts'
          : 'no active/standby lock against the simulator',
      );
    }
    this.metrics.info.set({ mode: c.mode, env: c.env, version: this.options.version }, 1);
    this.metrics.active.set(this.active ? 1 : 0);
  }

  private logPolicy(event: string): void {
    this.log.info(event, `policy: ${this.policy.description}`);
    for (const problem of this.policy.problems) this.log.warn(event, problem);
    if (this.policy.unusedKeys.length > 0) {
      this.log.warn(event, `policy keys no stage reads (ignored): ${this.policy.unusedKeys.join(', ')}`);
    }
  }

  /**
   * Takes a persisted pipeline state if every stage's part is valid for the pipeline in force;
   * otherwise each corrupt stage is named (stage and field), the whole pipeline state is set
   * aside in a file beside the state file, and the policy starts fresh — never silently.
   */
  private adoptPipelineState(raw: unknown, event: string): void {
    const checked = checkPipelineState(this.policy.pipeline, raw);
    if ('state' in checked) {
      if (JSON.stringify(checked.state) !== JSON.stringify(this.state.pipeline))
        this.update({ pipeline: checked.state });
      return;
    }
    const aside = this.store.setAsidePipeline(raw);
    this.log.error(
      'state',
      `the policy state is corrupt (${checked.problems.map((p) => p.message).join('; ')}): set aside in '${aside}'; the policy starts fresh ` +
        '(hold counters, backoffs, cooldowns and smoothing are lost)',
      { trigger: event, stages: checked.problems.map((p) => p.stage) },
    );
    this.update({ pipeline: {} });
  }

  /** Loads the state file (at start, and when becoming active: another instance may have written it). */
  private loadState(event: string): void {
    const loaded = this.store.load();
    this.state = loaded.state;
    const path = this.store.path;
    if (loaded.status === 'missing') {
      this.log.info('state', `no state file at '${path}' yet: starting afresh`);
    } else if (loaded.status === 'corrupt') {
      this.log.error(
        'state',
        `the state file '${path}' is corrupt (${loaded.problem}): moved aside to '${loaded.setAsidePath}'; starting afresh ` +
          '(hold counters and backoffs are lost; check the cluster for a motion in flight)',
        { setAside: loaded.setAsidePath ?? null },
      );
    } else {
      const m = this.state.motion;
      this.log.info(
        'state',
        `state loaded from '${path}'${m ? `; following the motion in flight from before: ${describeMotion(m)} (issued at ${this.timeText(m.issuedAt)}, ${m.phase})` : ''}`,
        { trigger: event },
      );
    }
    this.metrics.motionInFlight.set(this.state.motion ? 1 : 0);
    this.adoptPipelineState(this.state.pipeline, event);
  }

  /**
   * Saves a state change, then applies it (write-ahead for motions): when the file cannot be
   * written the round fails and the state in memory stays as it was, so no request goes out.
   */
  private update(change: Partial<DaemonState>): void {
    const next = { ...this.state, ...change };
    this.store.save(next);
    this.state = next;
    this.metrics.motionInFlight.set(this.state.motion ? 1 : 0);
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
        if (this.options.host.finished?.()) {
          const end = this.options.host.endStatus?.() ?? { ok: true, message: 'the environment has ended' };
          this.log.log(end.ok ? 'info' : 'error', 'stop', end.message);
          if (!end.ok) code = 1;
          break;
        }
        if (this.stopping) break;
        await this.options.host.clock.sleep(this.config.intervalSeconds, this.abort.signal);
      }
    } finally {
      await this.shutdown();
    }
    return code;
  }

  /** SIGTERM/SIGINT: finish the current round, then exit 0. */
  stop(signal: string): void {
    if (this.stopping) return;
    this.stopping = true;
    this.log.info('stop', this.inRound ? `${signal}: finishing the current round, then exiting` : `${signal}: exiting`);
    this.abort.abort();
  }

  /** SIGHUP: reload the config now, or right after the current round. */
  requestReload(): void {
    if (this.inRound) this.reloadPending = true;
    else this.reload();
  }

  /**
   * Re-reads the config. A bad file keeps the running config (and says why); settings that
   * need a restart (env, the cluster connection, metrics address, state file, lock) keep their
   * running values with a warning; the rest (mode, interval, policy, guests, limits, log) apply
   * from the next round. The pipeline state is kept (it is keyed by stage name).
   */
  reload(): void {
    this.reloadPending = false;
    const read = this.options.reloadConfig;
    if (!read) {
      this.log.warn('config', 'reload requested, but the daemon runs without a config file: nothing to reload');
      return;
    }
    let next: ManagerConfig;
    let policy: BuiltPolicy;
    try {
      next = read();
      policy = buildPolicy(next.policy);
    } catch (err) {
      this.log.error(
        'config',
        `reload failed, keeping the running config:\n${errorMessage(err)}`.replace(/\n/g, '\n  '),
        {
          file: this.config.file ?? null,
        },
      );
      return;
    }
    const old = this.config;
    const needRestart: string[] = [];
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    if (next.env !== old.env) needRestart.push('env');
    if (!same(next.pve, old.pve)) needRestart.push('pve');
    if (!same(next.sim, old.sim)) needRestart.push('sim');
    if (!same(next.metrics, old.metrics)) needRestart.push('metrics');
    if (next.statePath !== old.statePath) needRestart.push('state');
    if (!same(next.lock, old.lock)) needRestart.push('lock');
    if (needRestart.length > 0) {
      this.log.warn(
        'config',
        `changes to ${needRestart.map((k) => `'${k}'`).join(', ')} need a restart; running with the old values of those until then`,
      );
    }
    this.config = {
      ...next,
      env: old.env,
      pve: old.pve,
      sim: old.sim,
      metrics: old.metrics,
      statePath: old.statePath,
      lock: old.lock,
    };
    this.policy = policy;
    this.adoptPipelineState(this.state.pipeline, 'config');
    this.log.configure({
      format: resolveLogFormat(next.log.format, this.options.isTty ?? false),
      level: next.log.level,
    });
    this.log.info('config', `reloaded '${next.file}': mode ${next.mode}, interval ${next.intervalSeconds} s`, {
      mode: next.mode,
    });
    this.logPolicy('config');
    this.metrics.info.reset();
    this.metrics.info.set({ mode: this.config.mode, env: this.config.env, version: this.options.version }, 1);
  }

  private async shutdown(): Promise<void> {
    if (this.lock && this.active) {
      this.lock.release();
      this.log.info('lock', `released the lock '${this.lock.path}'`);
    }
    await this.server.close();
    await this.options.host.port.close?.();
    await this.options.host.close?.();
    this.log.info(
      'stop',
      `stopped after ${this.roundNo} ${this.roundNo === 1 ? 'round' : 'rounds'}${this.runSummary()}`,
    );
  }

  /** One round; never throws (a failure is the round's line). */
  async runRound(): Promise<RoundReport> {
    const started = performance.now();
    this.inRound = true;
    this.roundNo++;
    let partial: PartialReport;
    try {
      partial = await this.roundBody();
    } catch (err) {
      partial = { outcome: 'error', reason: 'error', level: 'error', message: `round failed: ${errorMessage(err)}` };
    } finally {
      this.inRound = false;
    }
    const report: RoundReport = {
      round: this.roundNo,
      outcome: partial.outcome,
      reason: partial.reason,
      message: partial.message,
      level: partial.level ?? (partial.outcome === 'error' ? 'warn' : 'info'),
      fields: partial.fields ?? {},
    };
    this.metrics.rounds.inc();
    this.metrics.decisions.inc({ outcome: report.outcome });
    if (report.outcome === 'skip' || report.outcome === 'standby' || report.outcome === 'error')
      this.metrics.skips.inc({ reason: report.reason });
    this.metrics.roundDuration.observe((performance.now() - started) / 1000);
    this.lastReport = report;
    this.log.log(report.level, 'round', report.message, {
      round: report.round,
      outcome: report.outcome,
      reason: report.reason,
      ...report.fields,
    });
    return report;
  }

  private portFailure(err: unknown, what: string): PartialReport {
    if (!(err instanceof PortError)) throw err;
    this.metrics.apiErrors.inc({ endpoint: err.endpoint, kind: err.kind });
    return {
      outcome: 'error',
      reason: 'api-error',
      message: `${what} failed (${err.kind}, ${err.endpoint}): ${err.message}; nothing done this round`,
      fields: { endpoint: err.endpoint, kind: err.kind },
    };
  }

  private async roundBody(): Promise<PartialReport> {
    const now = this.now();
    const config = this.config;

    if (this.lock) {
      const attempt = this.lock.acquire();
      if (attempt.changed && attempt.held) {
        this.active = true;
        this.log.info('lock', `acquired the lock '${this.lock.path}': this instance is active`);
        // another instance may have acted meanwhile: its state (and motion in flight) counts
        if (this.wasStandby) this.loadState('lock');
      } else if (attempt.changed && !attempt.held) {
        this.active = false;
        this.log.warn('lock', `lost the lock '${this.lock.path}' (${attempt.reason}): stepping down to standby`);
      }
      this.metrics.active.set(attempt.held ? 1 : 0);
      if (!attempt.held) {
        this.wasStandby = true;
        return {
          outcome: 'standby',
          reason: 'standby',
          message: `standby: the lock '${this.lock.path}' is ${attempt.reason}`,
        };
      }
    }

    let snapshot: ClusterSnapshot;
    try {
      snapshot = await this.options.host.port.readSnapshot({
        guestConfigs: this.policy.checkMigratable,
        nonHa: config.guests.nonHa,
      });
    } catch (err) {
      return this.portFailure(err, 'reading the cluster');
    }
    this.noteClusterAutoRebalance(snapshot);

    if (this.state.motion) {
      try {
        await this.followMotion(this.state.motion, snapshot, now);
      } catch (err) {
        return this.portFailure(err, `following ${describeMotion(this.state.motion)}`);
      }
    }

    const model = buildUsageModel(snapshot, { memhost: this.policy.memhost });
    const rules = compileSnapshotRules(snapshot);
    this.reportProblems([
      ...(snapshot.problems ?? []),
      ...[...rules.dropped, ...model.problems].map((message) => ({ message })),
    ]);
    const imbalance = model.nodes.length > 0 ? model.usage.nodeImbalance() : undefined;
    this.exportNodes(snapshot, model, imbalance);
    const fields: LogFields = { imbalance: imbalance ?? null };

    if (!snapshot.quorate)
      return {
        outcome: 'skip',
        reason: 'not-quorate',
        message: 'the cluster is not quorate: nothing is balanced',
        fields,
      };
    if (snapshot.haDisarmed)
      return { outcome: 'skip', reason: 'ha-disarmed', message: 'HA is disarmed: nothing is balanced', fields };
    if (imbalance === undefined)
      return {
        outcome: 'skip',
        reason: 'no-nodes',
        message: 'no usable node (online, not in maintenance, with valid stats)',
        fields,
      };

    const balanceHa = !snapshot.crs.autoRebalance;
    if (!balanceHa && !config.guests.nonHa) {
      return {
        outcome: 'skip',
        reason: 'cluster-auto-rebalance',
        message: `the cluster's own ha-auto-rebalance is on: poise leaves HA resources to it (imbalance ${percent(imbalance)})`,
        fields,
      };
    }
    const candidates = restrictToModel(
      [
        ...(balanceHa ? migrationCandidates(snapshot, rules) : []),
        ...(config.guests.nonHa ? nonHaCandidates(snapshot) : []),
      ].sort((a, b) => compareNames(a.leader, b.leader)),
      model,
    );

    let lastScored: ScoredMigration[] = [];
    // outcomes learned since the policy last ran, stamped with this round's time (see UnreportedOutcome)
    const outcomes: PolicyOutcome[] = this.state.unreported.map((o) => ({
      resources: [...o.resources],
      source: o.source,
      target: o.target,
      ok: o.ok,
      at: now,
      ...(o.detail === undefined ? {} : { detail: o.detail }),
    }));
    const ctx = balanceContext({
      now,
      snapshot,
      model,
      candidates,
      motionInFlight: this.state.motion !== null || clusterMotionInFlight(snapshot),
      outcomes,
      memhost: this.policy.memhost,
      onScoreError: (err) => this.log.warn('round', `unable to score the balancing migrations: ${errorMessage(err)}`),
    });
    // what the stages judged, for the round line: the scored moves and, when smoothing adjusted
    // the node stats, the adjusted imbalance (the threshold and the margin judge that one)
    let smoothed: number | undefined;
    const adjust = ctx.adjust?.bind(ctx);
    const scoringCtx: BalanceContext = {
      ...ctx,
      score: (...args) => (lastScored = ctx.score(...args)),
      ...(adjust
        ? {
            adjust: (nodes) => {
              const view = adjust(nodes);
              return {
                imbalance: () => (smoothed = view.imbalance()),
                score: (...args) => (lastScored = view.score(...args)),
              };
            },
          }
        : {}),
    };
    const { decision, state: pipelineState } = this.policy.pipeline.run(scoringCtx, this.state.pipeline);
    // the pipeline state that saw the outcomes and the end of their being unreported: one write
    this.update({ pipeline: pipelineState, unreported: [] });
    this.logNotices(decision.notices);
    if (decision.action === 'none') {
      return {
        outcome: 'skip',
        reason: decision.code,
        message: this.explain(
          decision,
          { value: smoothed ?? imbalance, smoothed: smoothed !== undefined },
          pipelineState,
          lastScored,
          snapshot,
        ),
        fields: { ...fields, stage: decision.stage, code: decision.code, key: decision.key },
      };
    }
    return this.act(decision, snapshot, now);
  }

  /** The policy's notices (a failure recorded, a guest that cannot move): each is a line of its own. */
  private logNotices(notices: readonly Notice[]): void {
    for (const n of notices) {
      this.log.log(n.severity === 'warning' ? 'warn' : 'info', 'policy', `${n.stage}: ${this.policyText(n.message)}`, {
        stage: n.stage,
        code: n.code,
      });
    }
  }

  private noteClusterAutoRebalance(snapshot: ClusterSnapshot): void {
    const on = snapshot.crs.autoRebalance;
    this.lastCrs = snapshot.crs.settings;
    if (on === this.clusterAutoRebalance) return;
    this.clusterAutoRebalance = on;
    this.metrics.clusterAutoRebalance.set(on ? 1 : 0);
    if (on) {
      const s = snapshot.crs.settings;
      const how =
        s && s.thresholdPercent !== undefined
          ? ` (its threshold ${s.thresholdPercent}%${s.marginPercent !== undefined ? `, margin ${s.marginPercent}%` : ''})`
          : '';
      this.log.warn(
        'cluster',
        `the cluster's own ha-auto-rebalance is on (datacenter.cfg crs${how}): poise refuses to move HA resources while it is on${this.config.guests.nonHa ? '; non-HA guests are still balanced' : ''}`,
      );
    } else {
      this.log.info('cluster', "the cluster's own ha-auto-rebalance is off: poise balances HA resources");
    }
  }

  /**
   * Logs each problem line when it first appears (not again while it lasts) and counts every
   * failed call behind one, each round it happens.
   */
  private reportProblems(problems: readonly SnapshotProblem[]): void {
    const next = new Set<string>();
    for (const p of problems) {
      if (p.error) this.metrics.apiErrors.inc({ endpoint: p.error.endpoint, kind: p.error.kind });
      if (!next.has(p.message) && !this.reportedProblems.has(p.message)) this.log.warn('cluster', p.message);
      next.add(p.message);
    }
    this.reportedProblems = next;
  }

  private exportNodes(snapshot: ClusterSnapshot, model: UsageModel, imbalance: number | undefined): void {
    this.metrics.setNodes(
      snapshot.nodes.map((n) => {
        const load = model.loads.get(n.name);
        return {
          name: n.name,
          load: load?.load,
          cpu: load?.cpu,
          mem: load?.mem,
          pressureCpu: n.pressure.cpuSome,
          pressureMem: n.pressure.memSome,
        };
      }),
    );
    if (imbalance !== undefined) this.metrics.imbalance.set(imbalance);
  }

  /**
   * Why a round did nothing, in words: the policy's reason (the stage is a field of its own;
   * named in the text only for invalid input), with the daemon's own facts for the reference
   * codes (the motion it follows, the hold count, the best move below the margin) and epoch
   * seconds shown as UTC times.
   */
  private explain(
    decision: Extract<Decision, { action: 'none' }>,
    judged: { readonly value: number; readonly smoothed: boolean },
    pipelineState: Readonly<Record<string, unknown>>,
    scored: readonly ScoredMigration[],
    snapshot: ClusterSnapshot,
  ): string {
    const threshold = this.policy.thresholdFraction;
    const imbalance = judged.value;
    // the imbalance the threshold judged, with digits enough to tell it from the threshold
    const judgedText = `${judged.smoothed ? 'smoothed imbalance' : 'imbalance'} ${REASON_FORMAT.value('imbalance', imbalance, threshold)}`;
    switch (decision.code) {
      case 'motion-in-flight': {
        const m = this.state.motion;
        if (m) return `motion in flight: ${describeMotion(m)} (${m.phase}, ${Math.round(this.now() - m.issuedAt)} s)`;
        const moving = snapshot.guests.filter(
          (g) => g.ha?.state === 'migrate' || g.ha?.state === 'relocate' || g.lock === 'migrate',
        );
        return `a motion is running in the cluster (${moving.map((g) => g.sid).join(', ')})`;
      }
      case 'below-threshold':
        return `below threshold: ${judgedText} ≤ ${REASON_FORMAT.bound('imbalance', threshold)}`;
      case 'holding': {
        const held = (pipelineState['threshold-hold'] as { sustainedRounds?: number } | undefined)?.sustainedRounds;
        return `hold round ${held ?? '?'}/${this.policy.holdRounds}: ${judgedText} > ${REASON_FORMAT.bound('imbalance', threshold)}`;
      }
      case 'no-candidates':
        return `no candidates: no started ${this.config.guests.nonHa ? 'guest' : 'HA resource'} can move to another usable node (${judgedText})`;
      case 'nothing-scored':
        return `no scored migration (${judgedText})`;
      case 'below-margin': {
        const best = scored[0];
        if (best) {
          const margin = this.config.policy.reference.marginPercent / 100;
          const relative = REASON_FORMAT.value(
            'relative-improvement',
            (imbalance - best.imbalance) / imbalance,
            margin,
          );
          const what = judged.smoothed ? 'smoothed imbalance' : 'imbalance';
          return (
            `below margin: the best move (${best.sid} from ${best.source} to ${best.target}) changes the ${what} from ${percent(imbalance)} ` +
            `to ${percent(best.imbalance)}, relative improvement ${relative} below margin ${REASON_FORMAT.bound('relative-improvement', margin)}`
          );
        }
        return `below margin: ${decision.reason}`;
      }
      case 'invalid-input':
        // a host bug: name the stage that found it
        return `${decision.stage}: ${this.policyText(decision.reason)}`;
      default:
        // the variant stages' reasons say what they are about (`pressure gate: …`, `cooldown of …`)
        return this.policyText(decision.reason);
    }
  }

  /** Records an outcome: in the history (status, metrics) and for the policy (reported next time it runs). */
  private recordOutcome(
    motion: Pick<MotionRecord, 'sid' | 'source' | 'target' | 'via' | 'resources'>,
    result: 'succeeded' | 'failed',
    reason: string | undefined,
  ): Pick<DaemonState, 'outcomes' | 'unreported'> {
    const outcome: MotionOutcome = {
      sid: motion.sid,
      source: motion.source,
      target: motion.target,
      via: motion.via,
      result,
      reason,
      at: this.now(),
    };
    (result === 'succeeded' ? this.metrics.motionsSucceeded : this.metrics.motionsFailed).inc({ via: motion.via });
    if (result === 'succeeded') this.runCounts.succeeded++;
    else this.runCounts.failed++;
    return {
      outcomes: [...this.state.outcomes, outcome].slice(-MAX_KEPT_OUTCOMES),
      unreported: [
        ...this.state.unreported,
        {
          resources: [...motion.resources],
          source: motion.source,
          target: motion.target,
          ok: result === 'succeeded',
          detail: reason,
        },
      ],
    };
  }

  private async followMotion(motion: MotionRecord, snapshot: ClusterSnapshot, now: number): Promise<void> {
    const age = Math.round(now - motion.issuedAt);
    const timeout = this.config.limits.motionTimeoutSeconds;
    const progress =
      now - motion.issuedAt > timeout
        ? ({
            status: 'failed',
            reason: `no outcome within ${timeout} s (limits.motion-timeout); no longer followed`,
          } as const)
        : await this.options.host.port.followMotion(motion, snapshot, {
            pickupTimeoutSeconds: this.config.limits.pickupTimeoutSeconds,
          });
    if (progress.status === 'pending') {
      if (progress.phase !== motion.phase) this.update({ motion: { ...motion, phase: progress.phase } });
      return;
    }
    if (progress.status === 'succeeded') {
      this.update({ motion: null, ...this.recordOutcome(motion, 'succeeded', undefined) });
      this.log.info('motion', `${describeMotion(motion)} succeeded after ${age} s`, {
        sid: motion.sid,
        target: motion.target,
        result: 'succeeded',
      });
    } else {
      this.update({ motion: null, ...this.recordOutcome(motion, 'failed', progress.reason) });
      this.log.warn('motion', `${describeMotion(motion)} failed after ${age} s: ${progress.reason}`, {
        sid: motion.sid,
        target: motion.target,
        result: 'failed',
      });
    }
  }

  private async act(
    decision: Extract<Decision, { action: 'move' }>,
    snapshot: ClusterSnapshot,
    now: number,
  ): Promise<PartialReport> {
    const m = decision.migration;
    const guest = snapshot.guests.find((g) => g.sid === m.sid);
    const via = guest?.ha ? 'ha' : 'guest';
    const kind = guest?.type === 'ct' ? 'relocate' : 'migrate';
    const resources = decision.resources.length > 0 ? [...decision.resources] : [m.sid];
    const what = `${describeMotion({ kind, sid: m.sid, source: m.source, target: m.target, resources })} (imbalance ${percent(decision.imbalanceBefore)} → ${percent(decision.imbalanceAfter)})`;
    const fields: LogFields = {
      imbalance: decision.imbalanceBefore,
      expected: decision.imbalanceAfter,
      sid: m.sid,
      resources,
      source: m.source,
      target: m.target,
      via,
    };
    if (this.config.mode === 'observe') {
      this.runCounts.wouldMove++;
      return { outcome: 'would-move', reason: 'observe', message: `observe: would ${what}`, fields };
    }
    if (via === 'ha' && snapshot.crs.autoRebalance) {
      return {
        outcome: 'skip',
        reason: 'cluster-auto-rebalance',
        message: `not moving HA resource ${m.sid}: the cluster's own ha-auto-rebalance is on`,
        fields,
      };
    }
    const recent = this.state.motionsIssuedAt.filter((t) => now - t < MOTION_LIMIT_WINDOW_SECONDS);
    if (recent.length >= this.config.limits.maxMotionsPerHour) {
      if (recent.length !== this.state.motionsIssuedAt.length) this.update({ motionsIssuedAt: recent });
      const next = Math.min(...recent) + MOTION_LIMIT_WINDOW_SECONDS;
      return {
        outcome: 'skip',
        reason: 'motion-limit',
        message: `limit reached: ${recent.length} motions in the last hour (max ${this.config.limits.maxMotionsPerHour}) until ${this.timeText(next)}; not issuing ${what}`,
        fields,
      };
    }
    if (this.lock && !this.lock.safeToAct()) {
      return {
        outcome: 'skip',
        reason: 'lock-expiring',
        message: `the lock has ${Math.floor(this.lock.remainingSeconds())} s left (< ${LOCK_SAFETY_SECONDS} s): not issuing ${what}`,
        fields,
      };
    }
    const request: MotionRequest = { sid: m.sid, kind, target: m.target };
    const port = this.options.host.port;
    if (via === 'guest') {
      let check;
      try {
        check = await port.checkGuestMigration(request);
      } catch (err) {
        return this.portFailure(err, `the migration check of ${m.sid}`);
      }
      if (!check.allowed) {
        this.update(
          this.recordOutcome(
            { sid: m.sid, source: m.source, target: m.target, via, resources },
            'failed',
            check.reason,
          ),
        );
        return {
          outcome: 'refused',
          reason: 'precondition',
          level: 'warn',
          message: `precondition check refused to ${what}: ${check.reason}`,
          fields,
        };
      }
    }
    // write-ahead: the motion is on disk before the request leaves, so a crash in between
    // leads to following it, never to a second request
    const record: MotionRecord = {
      sid: m.sid,
      resources,
      kind,
      via,
      source: m.source,
      target: m.target,
      issuedAt: now,
      phase: 'requesting',
      haUid: guest?.ha?.uid,
      task: undefined,
      imbalanceBefore: decision.imbalanceBefore,
      imbalanceAfter: decision.imbalanceAfter,
    };
    this.update({ motion: record, motionsIssuedAt: [...recent, now] });
    this.metrics.motionsIssued.inc({ via });
    this.runCounts.requested++;
    let reply;
    try {
      reply = via === 'ha' ? await port.requestMotion(request) : await port.requestGuestMigration(request);
    } catch (err) {
      if (!(err instanceof PortError)) throw err;
      this.metrics.apiErrors.inc({ endpoint: err.endpoint, kind: err.kind });
      return {
        outcome: 'move',
        reason: 'request-uncertain',
        level: 'warn',
        message: `${what}: the request failed (${err.kind}, ${err.endpoint}: ${err.message}); it may have been applied, so it is followed, not repeated`,
        fields,
      };
    }
    if (!reply.accepted) {
      if (reply.error) this.metrics.apiErrors.inc({ endpoint: reply.error.endpoint, kind: reply.error.kind });
      this.update({ motion: null, ...this.recordOutcome(record, 'failed', reply.reason) });
      return {
        outcome: 'refused',
        reason: 'refused',
        level: 'warn',
        message: `the cluster refused to ${what}: ${reply.reason}`,
        fields,
      };
    }
    this.update({ motion: { ...record, phase: 'queued', task: reply.task } });
    const along = reply.comigrated.length > 0 ? `; HA moves ${reply.comigrated.join(', ')} along` : '';
    return { outcome: 'move', reason: 'move', message: `${what}${along}`, fields };
  }

  /** `; motions this run: 3 requested, 2 succeeded, 1 failed` (or what observe mode would have done). */
  private runSummary(): string {
    const c = this.runCounts;
    if (this.config.mode === 'observe' && c.requested === 0) {
      return c.wouldMove > 0
        ? `; observe mode: nothing moved, ${c.wouldMove} ${c.wouldMove === 1 ? 'round' : 'rounds'} would have requested a motion`
        : '; observe mode: nothing moved';
    }
    const inFlight = this.state.motion ? `, 1 still in flight (${describeMotion(this.state.motion)})` : '';
    return `; motions this run: ${c.requested} requested, ${c.succeeded} succeeded, ${c.failed} failed${inFlight}`;
  }

  /** The JSON of `/status`. */
  status(): Record<string, unknown> {
    const now = this.now();
    return {
      version: this.options.version,
      env: this.config.env,
      mode: this.config.mode,
      active: this.active,
      clusterAutoRebalance: this.clusterAutoRebalance ?? null,
      notice:
        this.clusterAutoRebalance === true
          ? "the cluster's own ha-auto-rebalance is on: poise refuses to move HA resources"
          : this.config.mode === 'observe'
            ? 'observe mode: nothing is moved'
            : null,
      clusterBalancer: this.clusterAutoRebalance === true ? (this.lastCrs ?? null) : null,
      policy: this.policy.description,
      policyProblems: this.policy.problems,
      unusedPolicyKeys: this.policy.unusedKeys,
      rounds: this.roundNo,
      lastRound: this.lastReport
        ? {
            round: this.lastReport.round,
            outcome: this.lastReport.outcome,
            reason: this.lastReport.reason,
            message: this.lastReport.message,
          }
        : null,
      motionInFlight: this.state.motion,
      motionsLastHour: this.state.motionsIssuedAt.filter((t) => now - t < MOTION_LIMIT_WINDOW_SECONDS).length,
      recentOutcomes: this.state.outcomes.slice(-5),
    };
  }
}
