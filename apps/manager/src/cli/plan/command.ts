import { nodeFailureReport, placeGuests, planDrain, PlanError, type PlanInput, planPlacement } from '@poise/plan';
import type { HostFactory } from '../../cluster/host';
import { EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, renderSubcommandHelp } from '../spec';
import { errorMessage, ManagerError } from '../../errors';
import type { LockFs } from '../../runtime/lock';
import { drainProgressPath } from '../../runtime/drain-progress';
import { Logger, resolveLogFormat } from '../../log';
import type { Io } from '../io';
import { VERSION } from '../version';
import { type PlanArgs, parsePlanArgs, PlanUsageError } from './args';
import { DEFAULT_DRAIN_PARALLEL, DrainRunner, type DrainProgress, drainSequence } from './drain';
import {
  placeJson,
  placeText,
  planJson,
  planText,
  startingPlacement,
  whatIfJson,
  whatIfText,
} from '../../balancing/plan-render';
import { type ClusterRead, closeHost, PLAN_READ, readCluster } from './source';
import { inputFromSnapshot } from '../../balancing/plan-input';
import { dirname, join } from 'node:path';
import type { Host } from '../../cluster/host';
import type { ManagerConfig } from '../../config/load';

export { isPlanCommand } from './args';

/** Test hooks of {@link runPlanCommand}. */
export interface PlanCommandHooks {
  /** Builds the host a config names instead of its adapter (tests: the fake cluster). */
  readonly createHost?: HostFactory;
  readonly lockFs?: LockFs;
}

/** A node named on the command line that the cluster does not have: a usage error naming it. */
function checkNodes(input: PlanInput, drain: readonly string[]): void {
  const names = new Set(input.nodes.map((n) => n.name));
  for (const node of drain) {
    if (!names.has(node))
      throw new PlanUsageError(`'${node}' is not a node of the cluster (nodes: ${[...names].join(', ')})`);
  }
}

function print(io: Io, json: boolean, text: () => string[], doc: () => Record<string, unknown>): void {
  if (json) io.out(JSON.stringify(doc(), null, 2));
  else for (const line of text()) io.out(line);
}

async function run(args: PlanArgs, io: Io, hooks: PlanCommandHooks): Promise<number> {
  const read: ClusterRead = await readCluster(args.source, {
    capacity: args.capacity,
    drain: args.drain,
    mode: args.execute ? 'act' : 'observe',
    at: args.at,
    ...(hooks.createHost ? { makeHost: hooks.createHost } : {}),
  });
  try {
    checkNodes(read.input, args.drain);
    const context = {
      description: read.description,
      problems: read.problems,
      drain: args.drain,
      start: startingPlacement(read.input, read.readAt),
    };
    if (args.command === 'place') {
      const result = placeGuests(read.input, { guests: args.guests });
      print(
        io,
        args.json,
        () => placeText(result, context),
        () => placeJson(result, context),
      );
      return EXIT_OK;
    }
    if (args.whatIf === 'node-failure') {
      const report = nodeFailureReport(read.input);
      print(
        io,
        args.json,
        () => whatIfText(report, context),
        () => whatIfJson(report, context),
      );
      return EXIT_OK;
    }
    if (args.command === 'drain') return await drainCommand(args, read, context, io, hooks);
    // a drain moves only what it must; without --drain the cluster is rebalanced
    const plan = args.drain.length > 0 ? planDrain(read.input, { drain: args.drain }) : planPlacement(read.input, {});
    print(
      io,
      args.json,
      () => planText(plan, context),
      () => planJson(plan, context),
    );
    return EXIT_OK;
  } finally {
    if (read.live) await closeHost(read.live.host);
  }
}

/**
 * Where a drain of `drain` keeps its lanes' state between runs: beside the daemon's state file,
 * a directory per set of drained nodes (the simulator starts afresh each run: none).
 */
function drainStateDir(config: ManagerConfig, host: Host, drain: readonly string[]): string | undefined {
  if (host.statePath !== undefined) return undefined;
  return join(dirname(config.statePath), `drain-${[...drain].sort().join('+')}`);
}

/** `drain <node>`: resume what a killed run left in flight, plan (with the read after it), print, carry out. */
async function drainCommand(
  args: PlanArgs,
  read: ClusterRead,
  context: Parameters<typeof planText>[1] & Parameters<typeof planJson>[1],
  io: Io,
  hooks: PlanCommandHooks,
): Promise<number> {
  const live = read.live!;
  const config = live.config;
  const shown = drainProgress(io);
  const log = new Logger(
    {
      format: resolveLogFormat(config.log.format, io.isTty),
      level: config.log.level,
      ...(live.host.timeLabel ? { timeLabel: live.host.timeLabel.bind(live.host) } : {}),
    },
    shown.logLine,
    () => live.host.clock.now(),
  );
  if (live.host.redact) log.addRedaction(live.host.redact);
  const parallel = args.parallel ?? live.snapshot.maxWorkers ?? DEFAULT_DRAIN_PARALLEL;
  const abort = new AbortController();
  const offs = [io.onSignal('SIGTERM', () => abort.abort()), io.onSignal('SIGINT', () => abort.abort())];
  const runner = new DrainRunner({
    host: live.host,
    config,
    log,
    version: VERSION,
    execute: args.execute,
    drain: args.drain,
    parallel,
    stateDir: drainStateDir(config, live.host, args.drain),
    signal: abort.signal,
    progress: shown.progress,
    progressPath: args.execute ? drainProgressPath(live.host.statePath ?? config.statePath) : undefined,
    ...(hooks.lockFs ? { lockFs: hooks.lockFs } : {}),
  });
  try {
    let input = read.input;
    let snapshot = live.snapshot;
    let ctx = context;
    if (args.execute) {
      const standby = runner.acquire();
      if (standby === undefined) {
        const resumed = await runner.resume();
        if ('failed' in resumed) {
          io.err(`poise-manager: the drain could not resume: ${resumed.failed}`);
          return EXIT_FAILURE;
        }
        if (resumed.resumed > 0) {
          // what moved stays moved: plan the rest from the cluster as it is now
          snapshot = await live.host.port.readSnapshot(PLAN_READ);
          const built = inputFromSnapshot(snapshot, config, args.capacity, args.drain);
          input = built.input;
          ctx = {
            ...context,
            problems: [...context.problems, ...built.problems],
            start: startingPlacement(input, new Date(snapshot.time * 1000).toISOString()),
          };
        }
      }
    }
    const plan = planDrain(input, { drain: args.drain, maxParallelPerNode: parallel });
    for (const line of planText(plan, ctx)) io.out(line);
    if (!plan.feasible) {
      const prefix = `${args.drain.join(', ')} cannot be drained`;
      io.err(
        `poise-manager: ${plan.reasons.map((r) => (r.includes('cannot be drained') ? r : `${prefix}: ${r}`)).join('; ')}`,
      );
      return EXIT_FAILURE;
    }
    if (!plan.executable) {
      io.err(
        `poise-manager: the drain plan cannot be carried out safely: ${plan.blocked ?? 'some motions could not be ordered'}`,
      );
      return EXIT_FAILURE;
    }
    log.info(
      'drain',
      `${args.execute ? 'draining' : 'planned drain of'} ${args.drain.join(', ')}: ${plan.steps.flat().length} motions in ${plan.steps.length} steps, up to ${parallel} in flight (${args.parallel !== undefined ? '--parallel' : live.snapshot.maxWorkers !== undefined ? "the cluster's max_workers" : 'default'})`,
      { parallel },
    );
    const result = await runner.run(drainSequence(input, plan, args.drain), snapshot, plan.placement);
    return result.ok ? EXIT_OK : EXIT_FAILURE;
  } finally {
    runner.close();
    for (const off of offs) off();
  }
}

/**
 * Drain progress on stderr: on a terminal a bar redrawn in place (cleared around each log line,
 * so the two never mix); piped, one line per motion that ended (`drain: 12/60 done, 4 in
 * flight: done: vm:101 node1 → node2 (…)`).
 */
function drainProgress(io: Io): { progress: DrainProgress | undefined; logLine: (line: string) => void } {
  if (io.progress === undefined) return { progress: undefined, logLine: (line) => io.logLine(line) };
  const show = (line: string) => io.progress?.(line);
  const width = 30;
  let bar = '';
  return {
    progress: {
      update(done, total, inFlight, line) {
        const counts = `${done}/${total} done, ${inFlight} in flight`;
        if (io.isTty) {
          const filled = total === 0 ? width : Math.round((done / total) * width);
          bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${counts}: ${line}`;
          show(bar);
        } else if (!line.startsWith('started')) show(`drain: ${counts}: ${line}`);
      },
      end() {
        if (bar !== '') show('');
        bar = '';
      },
    },
    logLine: (line) => {
      if (bar === '') return io.logLine(line);
      show('');
      io.logLine(line);
      show(bar);
    },
  };
}

/**
 * `poise-manager plan|drain|place …`; resolves with the exit code: 0 answered (an infeasible
 * plan is an answer) or drained, 1 a drain that stopped or a cluster that could not be read,
 * 2 a usage error (the message names the option and value), 78 a bad config, case or
 * snapshot file (naming the file and field).
 */
export async function runPlanCommand(argv: readonly string[], io: Io, hooks: PlanCommandHooks = {}): Promise<number> {
  // `plan --help` (anywhere after the subcommand): its own usage, exit 0
  if (argv.slice(1).some((a) => a === '--help' || a === '-h')) {
    io.out(renderSubcommandHelp(argv[0]!));
    return EXIT_OK;
  }
  let args: PlanArgs;
  try {
    args = parsePlanArgs(argv);
  } catch (err) {
    if (!(err instanceof PlanUsageError)) throw err;
    io.err(`poise-manager: ${err.message}\n${renderSubcommandHelp(argv[0]!)}`);
    return EXIT_USAGE;
  }
  try {
    return await run(args, io, hooks);
  } catch (err) {
    if (err instanceof PlanUsageError) {
      io.err(`poise-manager: ${err.message}`);
      return EXIT_USAGE;
    }
    if (err instanceof PlanError) {
      io.err(`poise-manager: ${err.code === 'invalid-options' ? '' : 'invalid input: '}${err.message}`);
      return err.code === 'invalid-options' ? EXIT_USAGE : EXIT_CONFIG;
    }
    if (err instanceof ManagerError && (err.code === 'invalid-config' || err.code === 'invalid-token')) {
      io.err(`poise-manager: invalid configuration:\n${err.message}`);
      return EXIT_CONFIG;
    }
    io.err(`poise-manager: ${args.command} failed: ${errorMessage(err)}`);
    return EXIT_FAILURE;
  }
}
