import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { normalizedImbalance } from '@poise/imbalance';
import type { FeasiblePlan, PlannedMove, PlanInput } from '@poise/plan';
import type { MoveDecision } from '@poise/policy';
import type { Host } from '../../cluster/host';
import { describeCondition, nodeFailed, unsettledReasons } from '../../cluster/condition';
import type { ManagerConfig } from '../../config/load';
import { DaemonContext } from '../../runtime/context';
import { MotionFollower } from '../../runtime/follower';
import { LockGuard } from '../../runtime/lock-guard';
import { StateKeeper } from '../../runtime/state-keeper';
import { DrainProgressWriter, unfinishedDrain } from '../../runtime/drain-progress';
import type { LockFs } from '../../runtime/lock';
import type { Logger } from '../../log';
import { buildPolicy } from '../../balancing/policy';
import { type ClusterSnapshot, PortError } from '../../cluster/port';
import { describeMove } from '../../balancing/plan-render';
import { describeMotion } from '../../runtime/text';

/**
 * Seconds between two reads of the cluster while a motion is followed (on the simulator: one
 * HA round per read). The HA manager picks a command up within about 10 s.
 */
const DRAIN_POLL_SECONDS = 10;

/** How a drain ended; `motions`: the motions that succeeded, the whole drain's (runs before a resume included). */
export type DrainResult =
  | { readonly ok: true; readonly motions: number }
  | { readonly ok: false; readonly motions: number; readonly reason: string };

/** One motion of the plan in the order it is carried out, with the reference imbalance before and after it. */
export interface DrainMotion {
  readonly step: number;
  readonly move: PlannedMove;
  readonly imbalanceBefore: number;
  readonly imbalanceAfter: number;
}

/**
 * The plan's motions in order (step by step; within a step as listed: a step's motions are
 * safe in parallel, so they are safe one after the other), each with the reference imbalance
 * (normalised, over the usable nodes: online, not in maintenance, not drained) before and after
 * it, as the plan counts it.
 */
export function drainSequence(input: PlanInput, plan: FeasiblePlan, drain: readonly string[]): DrainMotion[] {
  const usable = input.nodes.filter((n) => n.online !== false && n.maintenance !== true && !drain.includes(n.name));
  const online = new Set(input.nodes.filter((n) => n.online !== false).map((n) => n.name));
  const cpu = new Map(input.nodes.map((n) => [n.name, n.baseCpu ?? 0]));
  const mem = new Map(input.nodes.map((n) => [n.name, n.baseMem ?? 0]));
  const guests = new Map(input.guests.map((g) => [g.id, g]));
  for (const g of input.guests) {
    if (!online.has(g.node)) continue;
    cpu.set(g.node, cpu.get(g.node)! + g.cpu);
    mem.set(g.node, mem.get(g.node)! + (g.memhost ?? g.mem));
  }
  const current = () =>
    normalizedImbalance(usable.map((n) => (cpu.get(n.name)! / n.cpuCores + mem.get(n.name)! / n.memBytes) / 2));
  const out: DrainMotion[] = [];
  plan.steps.forEach((step, i) => {
    for (const move of step) {
      const before = current();
      for (const id of move.guests) {
        const g = guests.get(id);
        if (g === undefined) continue;
        const gMem = g.memhost ?? g.mem;
        if (online.has(move.source)) {
          cpu.set(move.source, cpu.get(move.source)! - g.cpu);
          mem.set(move.source, mem.get(move.source)! - gMem);
        }
        cpu.set(move.target, cpu.get(move.target)! + g.cpu);
        mem.set(move.target, mem.get(move.target)! + gMem);
      }
      out.push({ step: i + 1, move, imbalanceBefore: before, imbalanceAfter: current() });
    }
  });
  return out;
}

/**
 * Why the cluster no longer matches the plan before `motion`, or `undefined` when it does: a
 * guest gone or not on the motion's source, a guest moving already, the target no longer
 * online, a node failed or HA busy with a failure (`unsettledReasons`).
 */
export function divergence(
  snapshot: ClusterSnapshot,
  move: PlannedMove,
  own: ReadonlySet<string> = new Set(),
): string | undefined {
  const unsettled = unsettledReasons(snapshot, own);
  if (unsettled.length > 0) return `the cluster is not settled: ${unsettled.join('; ')}`;
  for (const id of move.guests) {
    const g = snapshot.guests.find((x) => x.sid === id);
    if (g === undefined) return `'${id}' is gone from the cluster`;
    if (g.node !== move.source) return `'${id}' is on '${g.node}', the plan expects it on '${move.source}'`;
    if (g.ha?.state === 'migrate' || g.ha?.state === 'relocate')
      return `'${id}' is already moving (HA state '${g.ha.state}' to '${g.ha.target ?? '?'}')`;
  }
  const target = snapshot.nodes.find((n) => n.name === move.target);
  if (target === undefined) return `the target '${move.target}' is no longer in the cluster`;
  if (nodeFailed(target.condition) || target.condition === 'maintenance')
    return `the target '${move.target}' ${describeCondition(target.condition)}`;
  return undefined;
}

/** Motions in flight at once when neither `--parallel` nor the cluster's `max_workers` says (PVE's default of `max_workers`). */
export const DEFAULT_DRAIN_PARALLEL = 4;

/**
 * Whether `motion` (index `i` of the sequence) must wait: a motion of an earlier step that
 * touches its source or target (as source or target) has not ended. A step's motions are safe
 * together once every earlier step is done; per node, this keeps exactly that order, so the
 * capacity and affinity checks of each step hold while motions of different steps overlap
 * on different nodes.
 */
function waitsFor(sequence: readonly DrainMotion[], ended: ReadonlySet<number>, i: number): boolean {
  const m = sequence[i]!;
  for (let k = 0; k < i; k++) {
    const x = sequence[k]!;
    if (ended.has(k) || x.step >= m.step) continue;
    const touches = (node: string) => node === x.move.source || node === x.move.target;
    if (touches(m.move.source) || touches(m.move.target)) return true;
  }
  return false;
}

/** What a drain runs with. */
export interface DrainOptions {
  readonly host: Host;
  readonly config: ManagerConfig;
  readonly log: Logger;
  readonly version: string;
  /** Request the motions (`--execute`); otherwise say what would be done. */
  readonly execute: boolean;
  /** The nodes drained. */
  readonly drain: readonly string[];
  /** Motions in flight at most (`--parallel`, the cluster's `max_workers`). */
  readonly parallel: number;
  /**
   * The directory of the drain's state (one file per lane, the daemon's state file format:
   * the motion in flight written before its request); kept across runs, so a drain killed
   * mid-way is resumed. Undefined: a temporary directory for this run.
   */
  readonly stateDir?: string | undefined;
  readonly lockFs?: LockFs;
  /** Stops following between reads (SIGTERM): the drain ends after the motions in flight are seen. */
  readonly signal?: AbortSignal;
  /** A progress line per motion, or a bar on a terminal (see {@link DrainProgress}). */
  readonly progress?: DrainProgress;
  /** With `execute`: where the drain writes its progress record for the daemon's status page (`runtime/drain-progress.ts`). */
  readonly progressPath?: string | undefined;
}

/** Progress of a drain: a bar on a terminal, one line per motion otherwise (the caller chooses). */
export interface DrainProgress {
  /** `done` of `total` motions ended, `inFlight` running; `line` says what just happened. */
  update(done: number, total: number, inFlight: number, line: string): void;
  end(): void;
}

/** A lane: one motion in flight at most, with its own state file (the daemon's follower and state keeper). */
interface Lane {
  readonly keeper: StateKeeper;
  readonly follower: MotionFollower;
  /** The sequence index of its motion in flight; -1 for a motion of an earlier run. */
  index: number | undefined;
}

/**
 * A drain carried out as a queue: up to `parallel` motions in flight, each started as soon as
 * {@link waitsFor} allows and a lane is free, each through the daemon's motion follower (the
 * same guards, write-ahead record, request and outcome rules as the daemon's own motions).
 * Before each start the cluster is read and compared with the plan ({@link divergence}); the
 * first divergence, refusal or failure stops the drain (the motions in flight are followed to
 * their end first) with the reason. Observe mode (`execute: false`) says what would be
 * requested.
 *
 * Each lane keeps its motion in a state file of its own in `stateDir`: a drain killed at any
 * point finds the motions of the run before there ({@link DrainRunner.resume}), follows them
 * to their outcome and never requests them again; the caller then re-reads the cluster and
 * plans the rest. `limits.max-motions-per-hour` does not limit a drain (the operator asked for
 * these motions; the limit holds the balancer's own decisions). With the lock enabled the
 * drain takes it first and does not start while another instance holds it.
 */
export class DrainRunner {
  private readonly ctx: DaemonContext;
  private readonly lock: LockGuard;
  private readonly lanes: Lane[];
  private readonly dir: string;
  private readonly temporary: boolean;
  private readonly never = new AbortController().signal;
  /** How the motions of an interrupted run that {@link resume} followed ended. */
  private readonly resumed = { succeeded: 0, failed: 0 };

  constructor(private readonly options: DrainOptions) {
    const base = options.config;
    const config: ManagerConfig = {
      ...base,
      mode: options.execute ? 'act' : 'observe',
      limits: { ...base.limits, maxMotionsPerHour: Number.MAX_SAFE_INTEGER },
    };
    this.ctx = new DaemonContext(options.host, options.log, options.version, config, buildPolicy(config.policy));
    this.temporary = options.stateDir === undefined || !options.execute;
    this.dir = this.temporary ? mkdtempSync(join(tmpdir(), 'poise-manager-drain-')) : options.stateDir!;
    if (!this.temporary) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.lock = new LockGuard(this.ctx, options.lockFs, () => undefined, undefined, !options.execute);
    // a killed run may have used more lanes than this one: every lane file is followed
    const highest = this.temporary
      ? 0
      : Math.max(0, ...readdirSync(this.dir).map((f) => Number(/^lane-(\d+)\.json$/.exec(f)?.[1] ?? 0)));
    this.lanes = Array.from({ length: Math.max(options.parallel, highest) }, (_, k) => {
      const keeper = new StateKeeper(this.ctx, join(this.dir, `lane-${k + 1}.json`), !options.execute);
      return { keeper, follower: new MotionFollower(this.ctx, keeper, this.lock), index: undefined };
    });
  }

  /** Takes the lock (execute mode); the reason when another instance holds it. */
  acquire(): string | undefined {
    if (!this.options.execute) return undefined;
    const standby = this.lock.acquire();
    return standby ? `${standby.message} (another poise-manager is active: stop it, or let it finish)` : undefined;
  }

  /**
   * Motions a killed run left in flight (lane files with a motion): loaded, followed to their
   * outcome, never requested again. Resolves with how many there were, or the reason it could
   * not follow them.
   */
  async resume(): Promise<{ resumed: number } | { failed: string }> {
    if (this.temporary) return { resumed: 0 };
    const log = this.options.log;
    const left = this.lanes.filter((lane) => {
      if (!existsSync(lane.keeper.store.path)) return false;
      lane.keeper.load('drain');
      return lane.keeper.state.motion !== null;
    });
    if (left.length === 0) return { resumed: 0 };
    log.info(
      'drain',
      `resuming: ${left.length} ${left.length === 1 ? 'motion' : 'motions'} of an interrupted drain in flight (${left.map((l) => describeMotion(l.keeper.state.motion!)).join(', ')}): followed to their end, never requested again; then the cluster is read again and the rest planned`,
    );
    for (const lane of left) lane.index = -1;
    while (this.lanes.some((l) => l.index !== undefined)) {
      if (this.options.signal?.aborted) return { failed: 'interrupted while following the motions of the run before' };
      await this.options.host.clock.sleep(DRAIN_POLL_SECONDS, this.options.signal ?? this.never);
      const read = await this.followAll();
      if ('failed' in read && read.failed !== undefined) return { failed: read.failed };
      for (const e of read.ended) this.resumed[e.ok ? 'succeeded' : 'failed']++;
    }
    return { resumed: left.length };
  }

  /** Reads the cluster and follows each lane's motion; ends the lanes whose motion ended. */
  private async followAll(): Promise<{
    snapshot?: ClusterSnapshot;
    ended: { index: number; ok: boolean; reason?: string }[];
    failed?: string;
  }> {
    const host = this.options.host;
    if (host.finished?.()) return { ended: [], failed: host.endStatus?.().message ?? 'the environment has ended' };
    let snapshot: ClusterSnapshot;
    try {
      snapshot = await host.port.readSnapshot({ guestConfigs: false, nonHa: true });
    } catch (err) {
      if (!(err instanceof PortError)) throw err;
      this.options.log.warn(
        'drain',
        `reading the cluster failed (${err.kind}, ${err.endpoint}): ${err.message}; trying again`,
      );
      return { ended: [] };
    }
    const ended: { index: number; ok: boolean; reason?: string }[] = [];
    for (const lane of this.lanes) {
      const record = lane.keeper.state.motion;
      if (lane.index === undefined || record === null) continue;
      let result;
      try {
        result = await lane.follower.follow(record, snapshot, this.ctx.now());
      } catch (err) {
        if (!(err instanceof PortError)) throw err;
        this.options.log.warn(
          'drain',
          `following ${describeMotion(record)} failed (${err.kind}, ${err.endpoint}): ${err.message}; trying again`,
        );
        continue;
      }
      if (result === undefined) continue;
      ended.push({
        index: lane.index,
        ok: result === 'succeeded',
        ...(result === 'failed' ? { reason: lane.keeper.state.outcomes.at(-1)?.reason ?? 'see the line above' } : {}),
      });
      lane.index = undefined;
    }
    return { snapshot, ended };
  }

  /** Runs the sequence (see the class comment). */
  async run(
    sequence: readonly DrainMotion[],
    snapshot: ClusterSnapshot,
    placement: ReadonlyMap<string, string>,
  ): Promise<DrainResult> {
    const { host, log, execute } = this.options;
    const total = sequence.length;
    const ended = new Set<number>();
    let done = 0;
    /** Motions of the drain's runs before this one that succeeded (a drain run again continues their count). */
    let before = this.resumed.succeeded;
    let stopReason: string | undefined;
    const progress = this.options.progress;
    let record: DrainProgressWriter | undefined;
    const inFlight = () => this.lanes.filter((l) => l.index !== undefined).length;
    const stop = (reason: string): DrainResult => {
      progress?.end();
      const line = `drain stopped after ${done + before} of ${total + before} motions${this.earlier(done, before)}: ${reason}`;
      log.error('drain', line, { result: 'stopped', motions: done + before });
      record?.finished('stopped', this.ctx.now(), line);
      return { ok: false, motions: done + before, reason };
    };
    try {
      const standby = this.acquire();
      if (standby) return stop(standby);
      const recover = sequence.find((m) => m.move.kind === 'recover');
      if (recover)
        return stop(
          `${describeMove(recover.move)}: HA recovers guests of a failed node itself; drain when the cluster has settled`,
        );
      if (!execute) {
        for (const motion of sequence) {
          const report = await this.lanes[0]!.follower.request(this.decision(motion), snapshot, this.ctx.now());
          log.info('drain', `${this.prefix(motion)}${report.message}`, report.fields);
          done++;
        }
        log.info(
          'drain',
          `drain observe: nothing was requested (--execute to carry it out): ${done} ${done === 1 ? 'motion' : 'motions'}`,
          {
            result: 'observe',
            motions: done,
          },
        );
        return { ok: true, motions: done };
      }
      if (this.options.progressPath !== undefined) {
        record = new DrainProgressWriter(
          this.options.progressPath,
          {
            nodes: this.options.drain,
            total,
            at: this.ctx.now(),
            message: `draining ${this.options.drain.join(', ')}`,
            carried: { record: unfinishedDrain(this.options.progressPath, this.options.drain), ...this.resumed },
          },
          (problem) => log.warn('drain', problem),
        );
        before = record.carriedSucceeded;
      }
      let current = snapshot;
      let fresh = true;
      for (;;) {
        // start what may start
        if (stopReason === undefined) {
          for (let i = 0; i < total; i++) {
            const free = this.lanes.find((l) => l.index === undefined);
            if (free === undefined || inFlight() >= this.options.parallel) break;
            if (ended.has(i) || this.lanes.some((l) => l.index === i) || waitsFor(sequence, ended, i)) continue;
            if (!fresh) {
              try {
                current = await host.port.readSnapshot({ guestConfigs: false, nonHa: true });
              } catch (err) {
                if (!(err instanceof PortError)) throw err;
                stopReason = `cannot read the cluster (${err.kind}, ${err.endpoint}): ${err.message}`;
                break;
              }
              fresh = true;
              const standbyNow = this.lock.acquire();
              if (standbyNow) {
                stopReason = standbyNow.message;
                break;
              }
            }
            const motion = sequence[i]!;
            const own = new Set(
              this.lanes.flatMap((l) => (l.index === undefined ? [] : (l.keeper.state.motion?.resources ?? []))),
            );
            const diverged = divergence(current, motion.move, own);
            if (diverged !== undefined) {
              stopReason = `the cluster diverged from the plan before step ${motion.step} (${describeMove(motion.move)}): ${diverged}`;
              break;
            }
            const report = await free.follower.request(this.decision(motion), current, this.ctx.now());
            if (report.outcome !== 'move') {
              stopReason = `${this.prefix(motion)}${report.message}`;
              break;
            }
            free.index = i;
            fresh = false;
            log.info('drain', `${this.prefix(motion)}${report.message}`, { ...report.fields, inFlight: inFlight() });
            const via = free.keeper.state.motion?.via;
            record?.requested(
              {
                sid: motion.move.guests[0]!,
                source: motion.move.source,
                target: motion.move.target,
                ...(via === undefined ? {} : { via }),
              },
              this.ctx.now(),
              `${this.prefix(motion)}${report.message}`,
            );
            progress?.update(done, total, inFlight(), `started ${describeMove(motion.move)}`);
          }
        }
        if (inFlight() === 0) break;
        if (this.options.signal?.aborted && stopReason === undefined)
          stopReason = `interrupted while ${inFlight()} ${inFlight() === 1 ? 'motion moves' : 'motions move'} (they are not stopped; run the drain again to follow them)`;
        if (this.options.signal?.aborted) break;
        await host.clock.sleep(DRAIN_POLL_SECONDS, this.options.signal ?? this.never);
        const read = await this.followAll();
        if (read.failed !== undefined) {
          stopReason ??= read.failed;
          break;
        }
        if (read.snapshot) {
          current = read.snapshot;
          fresh = true;
        }
        for (const e of read.ended) {
          ended.add(e.index);
          const motion = sequence[e.index]!;
          if (e.ok) done++;
          else stopReason ??= `${describeMove(motion.move)} failed: ${e.reason}`;
          record?.ended(
            motion.move.guests[0]!,
            e.ok,
            this.ctx.now(),
            `${describeMove(motion.move)} ${e.ok ? 'succeeded' : 'failed'}`,
          );
          progress?.update(done, total, inFlight(), `${e.ok ? 'done' : 'FAILED'}: ${describeMove(motion.move)}`);
        }
      }
      if (stopReason !== undefined) return stop(stopReason);
      progress?.end();
      // guests that arrived since the plan (a start, another balancer) are not the drain's: say so
      try {
        const after = await host.port.readSnapshot({ guestConfigs: false, nonHa: true });
        const left = after.guests.filter((g) => this.options.drain.includes(g.node) && placement.get(g.sid) !== g.node);
        if (left.length > 0)
          return stop(
            `every planned motion succeeded, but ${left.map((g) => `${g.sid} (on ${g.node})`).join(', ')} ${left.length === 1 ? 'is' : 'are'} still on a drained node: not in the plan (arrived since?); run the drain again`,
          );
      } catch (err) {
        if (!(err instanceof PortError)) throw err;
        log.warn(
          'drain',
          `could not read the cluster after the last motion (${err.kind}, ${err.endpoint}): ${err.message}`,
        );
      }
      const all = done + before;
      const line = `drain done: ${all} ${all === 1 ? 'motion' : 'motions'}${this.earlier(done, before)}`;
      log.info('drain', line, { result: 'done', motions: all });
      record?.finished('done', this.ctx.now(), line);
      return { ok: true, motions: all };
    } finally {
      progress?.end();
    }
  }

  /** ` (5 in this run, 4 before it was resumed)` when runs before this one count, else nothing. */
  private earlier(done: number, before: number): string {
    return before > 0 ? ` (${done} in this run, ${before} before it was resumed)` : '';
  }

  private prefix(motion: DrainMotion): string {
    return `step ${motion.step}${motion.move.kind === 'temporary' ? ' (temporary, to make room)' : ''}: `;
  }

  private decision(motion: DrainMotion): MoveDecision {
    const { move } = motion;
    return {
      action: 'move',
      migration: { sid: move.guests[0]!, source: move.source, target: move.target, imbalance: motion.imbalanceAfter },
      resources: move.guests,
      imbalanceBefore: motion.imbalanceBefore,
      imbalanceAfter: motion.imbalanceAfter,
      notices: [],
    };
  }

  /**
   * Releases the lock; removes the state directory when no lane holds a motion any more (a
   * drain that ended, or a temporary one), else keeps it for the next run to follow.
   */
  close(): void {
    this.lock.release();
    const busy = this.lanes.some((l) => l.keeper.state.motion !== null);
    if (this.temporary || !busy) rmSync(this.dir, { recursive: true, force: true });
  }
}
