import { bundledSimCase, createHost, type HostFactory } from '../cluster/host';
import { BUILTIN_REGISTRY } from '@poise/ha';
import type { PolicyRegistry } from '@poise/policy';
import {
  type ConfigOverrides,
  configPluginModules,
  defaultConfig,
  loadConfig,
  loadConfigPlugins,
  type ManagerConfig,
  parseConfig,
  parseListen,
  type PolicyConfig,
  withPolicyLayer,
} from '../config/load';
import { configJsonSchema, LISTEN_ADDRESS } from '../config/schema';
import { CLI_SPEC, EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, findOption, renderHelp } from './spec';
import { Daemon } from '../runtime';
import { errorMessage, ManagerError } from '../errors';
import type { LockFs } from '../runtime/lock';
import { Logger, resolveLogFormat } from '../log';
import { isPlanCommand, runPlanCommand } from './plan/command';
import { checkConfig, startupProblems } from './preflight';
import { VERSION } from './version';
import { type Io, processIo } from './io';

export { EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './spec';

/** The `--help` text (rendered from `spec.ts`). */
const USAGE = renderHelp();

/** Injection points for tests and fixtures. */
export interface MainHooks {
  /** Builds the host instead of the env's adapter (a fake cluster). */
  readonly createHost?: HostFactory;
  readonly lockFs?: LockFs;
  readonly onListening?: (address: { host: string; port: number }) => void;
}

class UsageError extends Error {}

export interface Args {
  config?: string;
  mode?: 'observe' | 'act';
  once: boolean;
  sim: boolean;
  simDir?: string;
  speed?: number;
  listen?: string;
  checkConfig: boolean;
  printSchema: boolean;
  help: boolean;
  version: boolean;
}

/** Parses the command line against `CLI_SPEC` (the options it lists, their values), then checks the values and combinations. */
export function parseArgs(argv: readonly string[]): Args {
  const args: Args = { once: false, sim: false, checkConfig: false, printSchema: false, help: false, version: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const option = findOption(CLI_SPEC, a);
    if (option === undefined)
      throw new UsageError(a.startsWith('-') ? `unknown option '${a}'` : `unexpected argument '${a}'`);
    let v: string | undefined;
    if (option.value !== undefined) {
      const next = argv[i + 1];
      if (option.valueOptional) {
        if (next !== undefined && !next.startsWith('-')) v = argv[++i];
      } else {
        if (next === undefined || next.startsWith('--')) throw new UsageError(`'${a}' needs a value`);
        v = argv[++i];
      }
    }
    switch (option.key) {
      case 'help':
        args.help = true;
        break;
      case 'version':
        args.version = true;
        break;
      case 'config':
        args.config = v;
        break;
      case 'mode':
        if (v !== 'observe' && v !== 'act') throw new UsageError(`'--mode' takes observe or act, got '${v}'`);
        args.mode = v;
        break;
      case 'once':
        args.once = true;
        break;
      case 'checkConfig':
        args.checkConfig = true;
        break;
      case 'printSchema':
        args.printSchema = true;
        break;
      case 'speed': {
        const n = Number(v);
        if (!/^\d+(\.\d+)?$/.test(v!) || !Number.isFinite(n))
          throw new UsageError(`'--speed' takes a number ≥ 0 (simulated seconds per real second), got '${v}'`);
        args.speed = n;
        break;
      }
      case 'listen':
        args.listen = checkListen(v!);
        break;
      case 'sim':
        args.sim = true;
        args.simDir = v;
        break;
      default:
        // an option of the plan, drain and place subcommands only (CliOption's key spans both)
        throw new UsageError(`unknown option '${a}'`);
    }
  }
  if (args.sim && args.once) throw new UsageError("'--sim' and '--once' do not go together");
  if (args.once && args.mode === 'act')
    throw new UsageError("'--once' says what would be moved now and moves nothing: '--mode act' does not go with it");
  if (args.speed !== undefined && !args.sim) throw new UsageError("'--speed' goes with '--sim'");
  if (args.listen !== undefined && args.once)
    throw new UsageError("'--once' opens no listener: '--listen' does not go with it");
  return args;
}

/** `--listen`'s value, checked as `metrics.listen` is (`host:port`, the port 0 to 65535). */
function checkListen(value: string): string {
  const port = LISTEN_ADDRESS.test(value) ? parseListen(value).port : undefined;
  if (port === undefined || port > 65535)
    throw new UsageError(
      `'--listen' takes <host>:<port> (127.0.0.1:9879, [::1]:9879; the port from 0 to 65535), got '${value}'`,
    );
  return value;
}

/**
 * The command line's overrides of the config. `env: sim` without `sim.case-dir` runs the bundled
 * scenario (as `--sim` without a directory does), whether or not `--sim` is given: the daemon's
 * start and `--check-config` read the same config.
 */
function overridesOf(args: Args): ConfigOverrides {
  return {
    defaultSimCaseDir: bundledSimCase(),
    ...(args.mode ? { mode: args.mode } : {}),
    ...(args.sim ? { env: 'sim' as const, simCaseDir: args.simDir ?? bundledSimCase(), mode: args.mode ?? 'act' } : {}),
    ...(args.speed !== undefined ? { simSpeed: args.speed } : {}),
    ...(args.listen !== undefined ? { listen: args.listen } : {}),
  };
}

/**
 * `--sim` without a config file: one daemon round per simulated HA round (20 s), and no
 * metrics listener (a run of seconds needs none, and a second one must not clash on the port).
 */
const SIM_DEFAULTS = { interval: 20, metrics: { enabled: false } } as const;

/**
 * The config in force: the file (with the policy plug-ins loaded for it, `registry`), or the
 * defaults of `--sim`.
 */
function readConfig(args: Args, registry: PolicyRegistry = BUILTIN_REGISTRY): ManagerConfig {
  const overrides = overridesOf(args);
  if (args.config !== undefined) return loadConfig(args.config, overrides, registry);
  return args.sim ? parseConfig(SIM_DEFAULTS, undefined, overrides) : defaultConfig(overrides);
}

/**
 * A reload's config: the plug-ins are loaded once, at start (a module's code cannot be
 * replaced in a running process), so a file naming other ones is refused with the reason and
 * the running config stays.
 */
export function reloadedConfig(args: Args, running: PolicyConfig): ManagerConfig {
  const modules = configPluginModules(args.config!);
  if (JSON.stringify(modules) !== JSON.stringify(running.plugins))
    throw new ManagerError(
      'invalid-config',
      `${args.config!}: policy.plugins: changing the plug-ins needs a restart (running with ${running.plugins.length === 0 ? 'none' : running.plugins.map((m) => `'${m}'`).join(', ')})`,
    );
  return readConfig(args, running.registry);
}

/**
 * The `poise-manager` command line; resolves with the exit code. The daemon registers its
 * signal handlers through `io.onSignal` and removes them when it stops.
 */
export async function main(argv: readonly string[], io: Io = processIo, hooks: MainHooks = {}): Promise<number> {
  // plan, drain, place: their own options (the CLI spec's subcommands), see plan/
  if (isPlanCommand(argv))
    return runPlanCommand(argv, io, {
      ...(hooks.createHost ? { createHost: hooks.createHost } : {}),
      ...(hooks.lockFs ? { lockFs: hooks.lockFs } : {}),
    });
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    io.err(`poise-manager: ${errorMessage(err)}\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (args.help) {
    io.out(USAGE);
    return EXIT_OK;
  }
  if (args.version) {
    io.out(`${CLI_SPEC.name} ${VERSION}`);
    return EXIT_OK;
  }
  // the policy plug-ins a config file names, loaded before the file is checked (their keys are policy keys)
  let registry = BUILTIN_REGISTRY;
  if (args.config !== undefined) {
    try {
      registry = await loadConfigPlugins(args.config);
    } catch (err) {
      io.err(`poise-manager: invalid configuration:\n${errorMessage(err)}`);
      return EXIT_CONFIG;
    }
  }
  if (args.printSchema) {
    io.out(JSON.stringify(configJsonSchema(registry), null, 2));
    return EXIT_OK;
  }
  if (args.config === undefined && !args.sim) {
    io.err(
      `poise-manager: no config file: use --config <file> (see poise-manager.example.yaml) or --sim [<case-dir>]\n${USAGE}`,
    );
    return EXIT_USAGE;
  }
  let config: ManagerConfig;
  try {
    config = readConfig(args, registry);
  } catch (err) {
    io.err(`poise-manager: invalid configuration:\n${errorMessage(err)}`);
    return EXIT_CONFIG;
  }
  if (args.checkConfig) {
    // every check first, then one verdict
    let check;
    try {
      check = await checkConfig(config, io.env);
    } catch (err) {
      // the policy the daemon would build refused (see buildPolicy): as its start refuses it
      if (!(err instanceof ManagerError) || err.code !== 'invalid-config') throw err;
      io.err(`poise-manager: invalid configuration:\n${err.message}`);
      return EXIT_CONFIG;
    }
    const source = config.file ?? 'the built-in defaults';
    io.out(`config ${source}:`);
    for (const line of check.lines) io.out(`  ${line}`);
    for (const warning of check.warnings) io.out(`  warning: ${warning}`);
    if (check.problems.length > 0) {
      io.err(
        `poise-manager: invalid configuration (${check.problems.length} ${check.problems.length === 1 ? 'problem' : 'problems'}):\n${check.problems.join('\n')}`,
      );
      return EXIT_CONFIG;
    }
    io.out(`config ${source} is valid`);
    return EXIT_OK;
  }
  if (args.once) {
    // one round that answers, beside a running daemon: no motion, no metrics listener of its own
    config = { ...config, mode: 'observe', metrics: { ...config.metrics, enabled: false } };
  }
  const problems = startupProblems(config);
  if (problems.length > 0) {
    io.err(
      `poise-manager: invalid configuration:\n${problems.map((p) => (config.file === undefined ? p : `${config.file}: ${p}`)).join('\n')}`,
    );
    return EXIT_CONFIG;
  }

  const log = new Logger(
    { format: resolveLogFormat(config.log.format, io.isTty), level: config.log.level },
    (line) => io.logLine(line),
    () => Date.now() / 1000,
  );
  let daemon: Daemon;
  try {
    const host = await (hooks.createHost ?? createHost)(config);
    // the simulator's case sets policy keys under the config file's (its datacenter.cfg crs)
    const layered = (c: ManagerConfig) => withPolicyLayer(c, host.policyLayer);
    config = layered(config);
    daemon = new Daemon({
      config,
      host,
      log: new Logger(
        {
          format: resolveLogFormat(config.log.format, io.isTty),
          level: config.log.level,
          timeLabel: host.timeLabel?.bind(host),
        },
        (line) => io.logLine(line),
        () => host.clock.now(),
      ),
      version: VERSION,
      once: args.once,
      isTty: io.isTty,
      reloadConfig: args.config === undefined ? undefined : () => layered(reloadedConfig(args, config.policy)),
      lockFs: hooks.lockFs,
      onListening: hooks.onListening,
      lingerAtEnd: args.sim && args.listen !== undefined,
    });
  } catch (err) {
    if (err instanceof ManagerError && (err.code === 'invalid-config' || err.code === 'invalid-token')) {
      io.err(`poise-manager: invalid configuration:\n${err.message}`);
      return EXIT_CONFIG;
    }
    log.error('start', `cannot start: ${errorMessage(err)}`);
    return EXIT_FAILURE;
  }

  const offs = [
    io.onSignal('SIGTERM', () => daemon.stop('SIGTERM')),
    io.onSignal('SIGINT', () => daemon.stop('SIGINT')),
    io.onSignal('SIGHUP', () => daemon.requestReload()),
    // nobody reads the log any more: stop as on SIGTERM (status 0)
    ...(io.onOutputClosed ? [io.onOutputClosed(() => daemon.stop('output closed'))] : []),
  ];
  try {
    return await daemon.run();
  } catch (err) {
    log.error('stop', `stopped on an error: ${errorMessage(err)}`);
    return EXIT_FAILURE;
  } finally {
    for (const off of offs) off();
  }
}
