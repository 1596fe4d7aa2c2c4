import { mkdtempSync, rmSync } from 'node:fs';
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
import { DrainProgressWriter } from '../../runtime/drain-progress';
import type { LockFs } from '../../runtime/lock';
import type { Logger } from '../../runtime/log';
import { buildPolicy } from '../../balancing/policy';
import { type ClusterSnapshot, PortError } from '../../cluster/port';
import { describeMove } from './render';

/**
 * Seconds between two reads of the cluster while a motion is followed (on the simulator: one
 * HA round per read). The HA manager picks a command up within about 10 s.
 */
export const DRAIN_POLL_SECONDS = 10;

/** How a drain ended. */
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
export function divergence(snapshot: ClusterSnapshot, move: PlannedMove): string | undefined {
  const unsettled = unsettledReasons(snapshot, new Set());
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

/** What a drain runs with. */
export interface DrainOptions {
  readonly host: Host;
  readonly config: ManagerConfig;
  readonly log: Logger;
  readonly version: string;
  /** Request the motions (`--execute`); otherwise say what would be done. */
  readonly execute: boolean;
  /** The nodes drained, and where the plan puts every guest (a guest the plan leaves on a drained node is not one left behind). */
  readonly drain: readonly string[];
  readonly placement: ReadonlyMap<string, string>;
  readonly lockFs?: LockFs;
  /** Stops following between reads (SIGTERM): the drain ends after the motion in flight is seen. */
  readonly signal?: AbortSignal;
  /** With `execute`: where the drain writes its progress record for the daemon's status page (`drain-progress.ts`). */
  readonly progressPath?: string;
}

/**
 * Carries out a drain plan one motion at a time through the daemon's motion follower (the same
 * guards, write-ahead record, request and outcome rules as the daemon's own motions): before
 * each motion the cluster is read and compared with the plan ({@link divergence}); a motion is
 * requested and followed to its outcome; the first divergence, refusal or failure stops the
 * drain with the reason. Observe mode (`execute: false`) says what would be requested.
 *
 * `limits.max-motions-per-hour` is raised to the plan's motion count (the drain is the
 * operator's explicit request; the limit holds the balancer's own decisions). The follower's
 * state lives in a temporary file for this run (never the daemon's state file); with the lock
 * enabled the drain takes it first and does not start while another instance holds it.
 */
export async function runDrain(
  sequence: readonly DrainMotion[],
  snapshot: ClusterSnapshot,
  options: DrainOptions,
): Promise<DrainResult> {
  const base = options.config;
  const config: ManagerConfig = {
    ...base,
    mode: options.execute ? 'act' : 'observe',
    limits: { ...base.limits, maxMotionsPerHour: Math.max(base.limits.maxMotionsPerHour, sequence.length) },
  };
  const { host, log } = options;
  const ctx = new DaemonContext(host, log, options.version, config, buildPolicy(config.policy));
  const dir = mkdtempSync(join(tmpdir(), 'poise-manager-drain-'));
  const keeper = new StateKeeper(ctx, join(dir, 'state.json'), !options.execute);
  const lock = new LockGuard(ctx, options.lockFs, () => undefined, undefined, !options.execute);
  const follower = new MotionFollower(ctx, keeper, lock);
  const never = new AbortController().signal;
  let done = 0;
  let progress: DrainProgressWriter | undefined;
  const stop = (reason: string): DrainResult => {
    const line = `drain stopped after ${done} of ${sequence.length} motions: ${reason}`;
    log.error('drain', line, { result: 'stopped', motions: done });
    progress?.finished('stopped', ctx.now(), line);
    return { ok: false, motions: done, reason };
  };
  try {
    if (options.execute) {
      const standby = lock.acquire();
      if (standby) return stop(`${standby.message} (another poise-manager is active: stop it, or let it finish)`);
      if (options.progressPath !== undefined)
        progress = new DrainProgressWriter(
          options.progressPath,
          {
            nodes: options.drain,
            total: sequence.length,
            at: ctx.now(),
            message: `draining ${options.drain.join(', ')}`,
          },
          (problem) => log.warn('drain', problem),
        );
    }
    let current = snapshot;
    for (const motion of sequence) {
      const { move, step } = motion;
      if (move.kind === 'recover')
        return stop(
          `${describeMove(move)}: HA recovers guests of a failed node itself; drain when the cluster has settled`,
        );
      if (options.execute) {
        try {
          current = await host.port.readSnapshot({ guestConfigs: false, nonHa: true });
        } catch (err) {
          if (!(err instanceof PortError)) throw err;
          return stop(`cannot read the cluster (${err.kind}, ${err.endpoint}): ${err.message}`);
        }
        const standby = lock.acquire();
        if (standby) return stop(standby.message);
      }
      const diverged = divergence(current, move);
      if (diverged !== undefined)
        return stop(`the cluster diverged from the plan before step ${step} (${describeMove(move)}): ${diverged}`);
      const [sid] = move.guests;
      const decision: MoveDecision = {
        action: 'move',
        migration: { sid: sid!, source: move.source, target: move.target, imbalance: motion.imbalanceAfter },
        resources: move.guests,
        imbalanceBefore: motion.imbalanceBefore,
        imbalanceAfter: motion.imbalanceAfter,
        notices: [],
      };
      const report = await follower.request(decision, current, ctx.now());
      const prefix = `step ${step}${move.kind === 'temporary' ? ' (temporary, to make room)' : ''}: `;
      if (report.outcome === 'would-move') {
        log.info('drain', `${prefix}${report.message}`, report.fields);
        done++;
        continue;
      }
      if (report.outcome !== 'move') return stop(`${prefix}${report.message}`);
      log.info('drain', `${prefix}${report.message}`, report.fields);
      progress?.requested(
        { sid: sid!, source: move.source, target: move.target },
        ctx.now(),
        `${prefix}${report.message}`,
      );
      for (;;) {
        if (options.signal?.aborted)
          return stop(
            `interrupted while ${sid} moves (it is not stopped; the daemon follows no motion it did not request)`,
          );
        await host.clock.sleep(DRAIN_POLL_SECONDS, options.signal ?? never);
        if (host.finished?.()) return stop(host.endStatus?.().message ?? 'the environment has ended');
        const record = keeper.state.motion;
        if (record === null) break;
        let result;
        try {
          current = await host.port.readSnapshot({ guestConfigs: false, nonHa: true });
          result = await follower.follow(record, current, ctx.now());
        } catch (err) {
          if (!(err instanceof PortError)) throw err;
          log.warn('drain', `reading the cluster failed (${err.kind}, ${err.endpoint}): ${err.message}; trying again`);
          continue;
        }
        if (result !== undefined)
          progress?.ended(sid!, result === 'succeeded', ctx.now(), `${describeMove(move)} ${result}`);
        if (result === 'failed')
          return stop(`${describeMove(move)} failed: ${keeper.state.outcomes.at(-1)?.reason ?? 'see the line above'}`);
        if (result === 'succeeded') break;
      }
      done++;
    }
    if (options.execute) {
      // guests that arrived since the plan (a start, another balancer) are not the drain's: say so
      try {
        const after = await host.port.readSnapshot({ guestConfigs: false, nonHa: true });
        const left = after.guests.filter(
          (g) => options.drain.includes(g.node) && options.placement.get(g.sid) !== g.node,
        );
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
    }
    const what = options.execute ? 'done' : 'observe: nothing was requested (--execute to carry it out)';
    const line = `drain ${what}: ${done} ${done === 1 ? 'motion' : 'motions'}`;
    log.info('drain', line, { result: options.execute ? 'done' : 'observe', motions: done });
    progress?.finished('done', ctx.now(), line);
    return { ok: true, motions: done };
  } finally {
    lock.release();
    rmSync(dir, { recursive: true, force: true });
  }
}
