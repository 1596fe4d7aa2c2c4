import { nodeFailureReport, placeGuests, PlanError, type PlanInput, planPlacement } from '@poise/plan';
import type { HostFactory } from '../../cluster/host';
import { EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, renderHelp } from '../spec';
import { errorMessage, ManagerError } from '../../errors';
import type { LockFs } from '../../runtime/lock';
import { drainProgressPath } from '../../runtime/drain-progress';
import { Logger, resolveLogFormat } from '../../runtime/log';
import type { Io } from '../main';
import { VERSION } from '../version';
import { type PlanArgs, parsePlanArgs, PlanUsageError } from './args';
import { drainSequence, runDrain } from './drain';
import { placeJson, placeText, planJson, planText, whatIfJson, whatIfText } from './render';
import { type ClusterRead, closeHost, readCluster } from './source';

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
    ...(hooks.createHost ? { makeHost: hooks.createHost } : {}),
  });
  try {
    checkNodes(read.input, args.drain);
    const context = { description: read.description, problems: read.problems, drain: args.drain };
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
    const plan = planPlacement(read.input, { drain: args.drain });
    if (args.command === 'plan') {
      print(
        io,
        args.json,
        () => planText(plan, context),
        () => planJson(plan, context),
      );
      return EXIT_OK;
    }
    // drain: the plan, then its motions through the motion follower
    for (const line of planText(plan, context)) io.out(line);
    if (!plan.feasible) {
      io.err(`poise-manager: ${args.drain[0]} cannot be drained: ${plan.reasons.join('; ')}`);
      return EXIT_FAILURE;
    }
    if (!plan.executable) {
      io.err(
        `poise-manager: the drain plan cannot be carried out safely: ${plan.blocked ?? 'some motions could not be ordered'}`,
      );
      return EXIT_FAILURE;
    }
    const live = read.live!;
    const config = live.config;
    const log = new Logger(
      {
        format: resolveLogFormat(config.log.format, io.isTty),
        level: config.log.level,
        ...(live.host.timeLabel ? { timeLabel: live.host.timeLabel.bind(live.host) } : {}),
      },
      (line) => io.logLine(line),
      () => live.host.clock.now(),
    );
    if (live.host.redact) log.addRedaction(live.host.redact);
    const abort = new AbortController();
    const offs = [io.onSignal('SIGTERM', () => abort.abort()), io.onSignal('SIGINT', () => abort.abort())];
    try {
      const result = await runDrain(drainSequence(read.input, plan, args.drain), live.snapshot, {
        host: live.host,
        config,
        log,
        version: VERSION,
        execute: args.execute,
        drain: args.drain,
        placement: plan.placement,
        signal: abort.signal,
        progressPath: drainProgressPath(live.host.statePath ?? config.statePath),
        ...(hooks.lockFs ? { lockFs: hooks.lockFs } : {}),
      });
      return result.ok ? EXIT_OK : EXIT_FAILURE;
    } finally {
      for (const off of offs) off();
    }
  } finally {
    if (read.live) await closeHost(read.live.host);
  }
}

/**
 * `poise-manager plan|drain|place …`; resolves with the exit code: 0 answered (an infeasible
 * plan is an answer) or drained, 1 a drain that stopped or a cluster that could not be read,
 * 2 a usage error (the message names the option and value), 78 a bad config, case or
 * snapshot file (naming the file and field).
 */
export async function runPlanCommand(argv: readonly string[], io: Io, hooks: PlanCommandHooks = {}): Promise<number> {
  let args: PlanArgs;
  try {
    args = parsePlanArgs(argv);
  } catch (err) {
    if (!(err instanceof PlanUsageError)) throw err;
    io.err(`poise-manager: ${err.message}\n${renderHelp()}`);
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
