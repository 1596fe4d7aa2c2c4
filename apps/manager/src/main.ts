import { bundledSimCase, createHost, createPveClient, type HostFactory, tlsNotices } from './adapters';
import { type ConfigOverrides, defaultConfig, loadConfig, type ManagerConfig, parseConfig } from './config/load';
import { configJsonSchema } from './config/schema';
import { loadToken } from './config/secret';
import { Daemon } from './daemon';
import { errorMessage, ManagerError } from './errors';
import type { LockFs } from './lock';
import { Logger, resolveLogFormat } from './log';
import { buildPolicy } from './policy';

/** The version printed at start (kept in step with package.json). */
export const VERSION = '0.1.0';

/** Exit codes: 0 done, 1 a runtime failure, 2 a usage error, 78 (EX_CONFIG) a bad config or token. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_CONFIG = 78;

export const USAGE = `usage: poise-manager [--config <file>] [--mode observe|act] [--once]
       poise-manager --sim [<case-dir>] [--speed <n>] [--config <file>] [--mode observe|act]
       poise-manager --check-config --config <file>
       poise-manager --print-schema
       poise-manager --help

Balances the guests of a Proxmox VE cluster (env: pve) or of the embedded simulator (env: sim)
with the poise balancer policy. Observe mode (the default) logs what it would do and moves
nothing; mode act requests the motions.

options:
  -c, --config <file>  YAML config file (see poise-manager.example.yaml; schema: --print-schema)
  --mode observe|act   override the config's mode
  --once               run one round and exit (exit 1 if the round failed)
  --sim [<case-dir>]   run against the embedded simulator on a case directory (default: the
                       bundled scenario), time accelerated, printing each decision; mode act
                       unless --mode says otherwise; exits when the scenario ends. Without
                       --config: one round per 20 s HA round, no metrics listener
  --speed <n>          with --sim: simulated seconds per real second (0, the default: as fast
                       as it runs; 10: one 20 s round every 2 s)
  --check-config       validate the config (and read the API token), print a summary, exit
  --print-schema       print the config file's JSON schema
  -h, --help           this text

signals: SIGTERM/SIGINT finish the current round and exit 0; SIGHUP reloads the config
(a bad file keeps the running config). A closed output (\`| head\`) ends it like SIGTERM,
quietly, with status 0.
exit codes: 0 ok, 1 failure, 2 usage error, 78 bad config or token.`;

/** Where the CLI writes and what it runs with; tests replace any of it. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Log lines (stdout by default). */
  logLine(line: string): void;
  readonly isTty: boolean;
  readonly env: NodeJS.ProcessEnv;
  /** Signal registration (`process` by default). */
  onSignal(signal: 'SIGTERM' | 'SIGINT' | 'SIGHUP', handler: () => void): () => void;
  /**
   * Calls `handler` when stdout (or stderr) is closed by its reader (`| head`); returns the
   * function that removes it. The command line's entry wires it (`cli.ts`); without it a closed
   * output is not noticed.
   */
  onOutputClosed?(handler: () => void): () => void;
}

export const processIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  logLine: (line) => process.stdout.write(`${line}\n`),
  isTty: process.stdout.isTTY === true,
  env: process.env,
  onSignal: (signal, handler) => {
    process.on(signal, handler);
    return () => process.off(signal, handler);
  },
};

/** Injection points for tests and fixtures. */
export interface MainHooks {
  /** Builds the host instead of the env's adapter (a fake cluster). */
  readonly createHost?: HostFactory;
  readonly lockFs?: LockFs;
  readonly onListening?: (address: { host: string; port: number }) => void;
}

class UsageError extends Error {}

interface Args {
  config?: string;
  mode?: 'observe' | 'act';
  once: boolean;
  sim: boolean;
  simDir?: string;
  speed?: number;
  checkConfig: boolean;
  printSchema: boolean;
  help: boolean;
}

export function parseArgs(argv: readonly string[]): Args {
  const args: Args = { once: false, sim: false, checkConfig: false, printSchema: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (name: string) => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new UsageError(`'${name}' needs a value`);
      return v;
    };
    switch (a) {
      case '-h':
      case '--help':
        args.help = true;
        break;
      case '-c':
      case '--config':
        args.config = value(a);
        break;
      case '--mode': {
        const v = value(a);
        if (v !== 'observe' && v !== 'act') throw new UsageError(`'--mode' takes observe or act, got '${v}'`);
        args.mode = v;
        break;
      }
      case '--once':
        args.once = true;
        break;
      case '--check-config':
        args.checkConfig = true;
        break;
      case '--print-schema':
        args.printSchema = true;
        break;
      case '--speed': {
        const v = value(a);
        const n = Number(v);
        if (!/^\d+(\.\d+)?$/.test(v) || !Number.isFinite(n))
          throw new UsageError(`'--speed' takes a number ≥ 0 (simulated seconds per real second), got '${v}'`);
        args.speed = n;
        break;
      }
      case '--sim':
        args.sim = true;
        if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('-')) args.simDir = argv[++i];
        break;
      default:
        throw new UsageError(a.startsWith('-') ? `unknown option '${a}'` : `unexpected argument '${a}'`);
    }
  }
  if (args.sim && args.once) throw new UsageError("'--sim' and '--once' do not go together");
  if (args.speed !== undefined && !args.sim) throw new UsageError("'--speed' goes with '--sim'");
  return args;
}

function overridesOf(args: Args): ConfigOverrides {
  return {
    ...(args.mode ? { mode: args.mode } : {}),
    ...(args.sim ? { env: 'sim' as const, simCaseDir: args.simDir ?? bundledSimCase(), mode: args.mode ?? 'act' } : {}),
    ...(args.speed !== undefined ? { simSpeed: args.speed } : {}),
  };
}

/**
 * `--sim` without a config file: one daemon round per simulated HA round (20 s), and no
 * metrics listener (a run of seconds needs none, and a second one must not clash on the port).
 */
export const SIM_DEFAULTS = { interval: 20, metrics: { enabled: false } } as const;

function readConfig(args: Args): ManagerConfig {
  const overrides = overridesOf(args);
  if (args.config !== undefined) return loadConfig(args.config, overrides);
  return args.sim ? parseConfig(SIM_DEFAULTS, undefined, overrides) : defaultConfig(overrides);
}

/** `--check-config`: the summary lines. */
function checkConfig(config: ManagerConfig, io: Io): void {
  const source = config.file ?? 'the built-in defaults';
  io.out(`config ${source} is valid`);
  io.out(`  env ${config.env}, mode ${config.mode}, interval ${config.intervalSeconds} s`);
  if (config.env === 'pve') {
    const warnings: string[] = [];
    const token = loadToken({ file: config.pve.tokenFile, env: config.pve.tokenEnv }, io.env, warnings);
    const client = createPveClient(config, token);
    for (const w of warnings) io.out(`  warning: ${w}`);
    io.out(`  cluster: ${config.pve.urls.join(', ')}; API token ${token.id} from ${token.origin}`);
    for (const n of tlsNotices(config, client.security)) io.out(`  ${n.msg}`);
    void client.close();
  } else {
    io.out(`  simulator case: ${config.sim.caseDir ?? '(none)'}`);
  }
  const policy = buildPolicy(config.policy);
  io.out(`  policy: ${policy.description}`);
  for (const problem of policy.problems) io.out(`  warning: ${problem}`);
  if (policy.unusedKeys.length > 0)
    io.out(`  warning: policy keys no stage reads (ignored): ${policy.unusedKeys.join(', ')}`);
  io.out(
    `  limits: ${config.limits.maxMotionsPerHour} motions per hour, motion timeout ${config.limits.motionTimeoutSeconds} s`,
  );
  io.out(
    `  metrics: ${config.metrics.enabled ? `${config.metrics.host}:${config.metrics.port}` : 'off'}; state: ${config.statePath}`,
  );
  io.out(
    `  lock: ${config.lock.enabled && config.env === 'pve' ? `${config.lock.dir}/${config.lock.name}` : 'not used'}`,
  );
}

/**
 * The `poise-manager` command line; resolves with the exit code. The daemon registers its
 * signal handlers through `io.onSignal` and removes them when it stops.
 */
export async function main(argv: readonly string[], io: Io = processIo, hooks: MainHooks = {}): Promise<number> {
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
  if (args.printSchema) {
    io.out(JSON.stringify(configJsonSchema(), null, 2));
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
    config = readConfig(args);
    if (args.checkConfig) {
      checkConfig(config, io);
      return EXIT_OK;
    }
  } catch (err) {
    io.err(`poise-manager: invalid configuration:\n${errorMessage(err)}`);
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
      reloadConfig: args.config === undefined ? undefined : () => readConfig(args),
      lockFs: hooks.lockFs,
      onListening: hooks.onListening,
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
