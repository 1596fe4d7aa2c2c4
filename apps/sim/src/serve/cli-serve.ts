import { rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { SERVE_USAGE } from './usage';
import {
  DEFAULT_SERVED_VERSION,
  DEFAULT_SPEED,
  readCertificate,
  readServeToken,
  ServeError,
  type SimServe,
  startSimServe,
} from './serve';

const HELP = `usage:
${SERVE_USAGE}

Serves the simulated cluster of a case directory over the Proxmox VE API (the endpoints
poise-manager's adapter uses), over HTTPS, until stopped (Ctrl-C / SIGTERM).

  --port <p>          listen port (default 8006; 0: any free port)
  --host <addr>       listen address (default 127.0.0.1)
  --speed <n>         simulated seconds per real second (default ${DEFAULT_SPEED}: one 20 s HA round every 2 s)
  --step              no timer: each line 'step [<n>]' on standard input runs n 20 s HA rounds
                      (default 1) and answers 'stepped to <t> s'; the cluster's clock is the
                      simulation's (scripts and tests that must not depend on the machine's pace)
  --token <t>         the accepted API token, USER@REALM!TOKENID=SECRET (visible in the
                      process list: prefer --token-file)
  --token-file <f>    a file holding that token (one line)
  --cert, --key <f>   serve this certificate and key (PEM); default: a self-signed one
                      generated at start, its SHA-256 fingerprint printed to pin
  --pve-version <v>   /version to serve (default ${DEFAULT_SERVED_VERSION}; 8.x: a PVE 8 API, HA groups
                      and no rules)
  --crs-object        send /cluster/options crs as an object instead of a property string
  --manager-config <f>  write a poise-manager config for this server (env pve, the URL, the
                      token file, the fingerprint pinned, mode observe, a state file of its
                      own beside it: <f>-state-<case>-<port>.json); needs --token-file`;

/** What the serve command writes to and waits on (tests pass their own). */
export interface ServeIo {
  out(line: string): void;
  err(line: string): void;
  /** Resolves when the server should stop (default: SIGINT or SIGTERM). */
  readonly stopped?: Promise<string>;
  /** Called once the server listens (tests). */
  onStarted?(serve: SimServe): void;
  /** The lines `--step` reads (default: standard input). */
  readonly input?: AsyncIterable<string>;
}

function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const done = (signal: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(signal);
    };
    const onInt = () => done('SIGINT');
    const onTerm = () => done('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
  });
}

interface ServeArgs {
  caseDir?: string;
  port: number;
  host?: string;
  speed?: number;
  step: boolean;
  token?: string;
  tokenFile?: string;
  cert?: string;
  key?: string;
  version?: string;
  crsObject: boolean;
  managerConfig?: string;
  help: boolean;
}

class ServeUsage extends Error {}

function parseServeArgs(argv: readonly string[]): ServeArgs {
  const args: ServeArgs = { port: 8006, step: false, crsObject: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new ServeUsage(`'${a}' needs a value`);
      return v;
    };
    const number = (v: string, what: string, ok: (n: number) => boolean) => {
      const n = Number(v);
      if (!/^\d+(\.\d+)?$/.test(v) || !ok(n)) throw new ServeUsage(`'${a}' takes ${what}, got '${v}'`);
      return n;
    };
    switch (a) {
      case '-h':
      case '--help':
        args.help = true;
        break;
      case '--port':
        args.port = number(value(), 'a port from 0 to 65535', (n) => Number.isInteger(n) && n <= 65535);
        break;
      case '--host':
        args.host = value();
        break;
      case '--speed':
        args.speed = number(value(), 'a number > 0 (simulated seconds per real second)', (n) => n > 0);
        break;
      case '--step':
        args.step = true;
        break;
      case '--token':
        args.token = value();
        break;
      case '--token-file':
        args.tokenFile = value();
        break;
      case '--cert':
        args.cert = value();
        break;
      case '--key':
        args.key = value();
        break;
      case '--pve-version': {
        const v = value();
        if (!/^\d+\.\d+(\.\d+)?$/.test(v))
          throw new ServeUsage(`'--pve-version' takes a version like 9.2.2 or 8.4.1, got '${v}'`);
        args.version = v;
        break;
      }
      case '--crs-object':
        args.crsObject = true;
        break;
      case '--manager-config':
        args.managerConfig = value();
        break;
      default:
        if (a.startsWith('-')) throw new ServeUsage(`unknown option '${a}'`);
        if (args.caseDir !== undefined)
          throw new ServeUsage(`'serve' takes one case directory, got '${args.caseDir}' and '${a}'`);
        args.caseDir = a;
    }
  }
  if (!args.help && args.caseDir === undefined) throw new ServeUsage("'serve' needs a case directory");
  if (args.token !== undefined && args.tokenFile !== undefined)
    throw new ServeUsage("give '--token' or '--token-file', not both");
  if (!args.help && args.token === undefined && args.tokenFile === undefined) {
    throw new ServeUsage("'serve' needs an API token: '--token USER@REALM!TOKENID=SECRET' or '--token-file <file>'");
  }
  if (args.step && args.speed !== undefined) throw new ServeUsage("give '--speed' or '--step', not both");
  if (args.step && args.managerConfig !== undefined) {
    throw new ServeUsage(
      "'--manager-config' writes a config for a daemon on the wall clock; with '--step' the cluster's clock is the simulation's",
    );
  }
  if ((args.cert === undefined) !== (args.key === undefined)) throw new ServeUsage("'--cert' and '--key' go together");
  if (args.managerConfig !== undefined && args.tokenFile === undefined)
    throw new ServeUsage("'--manager-config' needs '--token-file' (the config names the file, never the secret)");
  return args;
}

/**
 * `poise-sim serve …`: 0 after a clean stop, 2 for a usage error, 1 when it cannot start (a bad
 * case, token, certificate, a port in use), each with a message naming the option or file.
 */
export async function cmdServe(argv: readonly string[], io: ServeIo): Promise<number> {
  let args: ServeArgs;
  try {
    args = parseServeArgs(argv);
  } catch (err) {
    io.err(`poise-sim serve: ${(err as Error).message}\nusage:\n${SERVE_USAGE}`);
    return 2;
  }
  if (args.help) {
    io.out(HELP);
    return 0;
  }
  let serve: SimServe;
  try {
    const token = readServeToken(args);
    const tls = args.cert !== undefined && args.key !== undefined ? readCertificate(args.cert, args.key) : undefined;
    serve = await startSimServe({
      caseDir: args.caseDir!,
      port: args.port,
      host: args.host,
      speed: args.speed,
      manual: args.step,
      tokens: [token],
      tls,
      version: args.version,
      crsAs: args.crsObject ? 'object' : 'string',
      out: (line) => io.out(line),
    });
  } catch (err) {
    if (err instanceof ServeError) {
      io.err(`poise-sim serve: ${err.message}`);
      return 1;
    }
    throw err;
  }
  if (args.managerConfig !== undefined) {
    let stateFile: string;
    try {
      stateFile = writeManagerConfig(
        args.managerConfig,
        serve,
        resolve(args.tokenFile!),
        args.speed ?? DEFAULT_SPEED,
        serve.caseName,
      );
    } catch (err) {
      await serve.close();
      io.err(
        `poise-sim serve: '--manager-config' '${args.managerConfig}' cannot be written (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      );
      return 1;
    }
    io.out(
      `poise-manager config written to '${args.managerConfig}' (its state in '${stateFile}'): pnpm poise-manager --config ${args.managerConfig} [--mode act]`,
    );
  }
  io.onStarted?.(serve);
  // standard input is read through a readline the command opens, and so closes; a given input is the caller's
  const stdin =
    args.step && io.input === undefined ? createInterface({ input: process.stdin, crlfDelay: Infinity }) : undefined;
  const input = args.step ? (io.input ?? stdin) : undefined;
  if (input !== undefined) void stepFrom(input, serve, io);
  const signal = await (io.stopped ?? untilSignal());
  stdin?.close();
  await serve.close();
  io.out(`${signal}: stopped`);
  return 0;
}

/**
 * `--step`: each input line `step [<n>]` runs n HA rounds (fewer once the scenario ended) and
 * answers `stepped to <t> s` (and that the scenario has ended, once it has); an empty line is
 * ignored, anything else is an error line naming it (the server keeps serving).
 */
async function stepFrom(input: AsyncIterable<string>, serve: SimServe, io: ServeIo): Promise<void> {
  for await (const raw of input) {
    const line = raw.trim();
    if (line === '') continue;
    const m = /^step(?:\s+(\d{1,6}))?$/.exec(line);
    if (!m) {
      io.err(`poise-sim serve: unknown input '${line}' (expected 'step [<n>]', n rounds from 1 to 999999)`);
      continue;
    }
    const n = m[1] === undefined ? 1 : Number(m[1]);
    if (n < 1) {
      io.err(`poise-sim serve: 'step ${m[1]}': expected a number of rounds from 1 to 999999`);
      continue;
    }
    let ran = 0;
    while (ran < n && serve.step()) ran++;
    io.out(`stepped to ${serve.sim.time} s${serve.sim.ended ? ' (the scenario has ended)' : ''}`);
  }
}

/** The daemon's own settle time after a cluster change, simulated seconds (poise-manager's default). */
const MANAGER_SETTLE_SECONDS = 120;

/**
 * A poise-manager config for a running server: its URL, the token file, the pinned
 * fingerprint, mode observe, and an interval of about one simulated HA round at `speed` (20 s /
 * speed, at least 1 s) and a settle time of the daemon's default in simulated time (120 s /
 * speed), so the daemon keeps pace with the accelerated cluster.
 */
export function managerConfigText(
  serve: Pick<SimServe, 'url' | 'fingerprint'>,
  tokenFile: string,
  stateFile: string,
  speed: number,
): string {
  const interval = Math.max(1, Math.round(20 / speed));
  const settle = Math.max(1, Math.round(MANAGER_SETTLE_SECONDS / speed));
  return [
    '# poise-manager against `poise-sim serve` (written by poise-sim serve --manager-config)',
    'env: pve',
    'mode: observe          # act: request the motions',
    `interval: ${interval}            # about one simulated HA round (20 s at --speed ${speed})`,
    'pve:',
    `  urls: ['${serve.url}']`,
    `  token-file: '${tokenFile}'`,
    `  tls: {fingerprint: '${serve.fingerprint}'}`,
    `state: {file: '${stateFile}'}   # this served cluster's own`,
    `limits: {settle-time: ${settle}}   # ${MANAGER_SETTLE_SECONDS} simulated seconds at --speed ${speed}`,
    'lock: {enabled: false}',
    'metrics: {enabled: false}',
    '',
  ].join('\n');
}

/**
 * The state file of the daemon against one served cluster: beside the config, named after the
 * config, the case and the port (`pm-state-three-nodes-unbalanced-8006.json`), so two servers
 * (or two configs) never share one.
 */
export function managerStatePath(configPath: string, caseName: string, url: string): string {
  const config = resolve(configPath);
  const stem = basename(config, extname(config));
  const safe = (text: string) => text.replace(/[^A-Za-z0-9_.-]+/g, '_');
  return join(dirname(config), `${stem}-state-${safe(caseName)}-${new URL(url).port}.json`);
}

/**
 * Writes the config, and removes the state file it names: that state belongs to an earlier
 * run of this server (the simulation starts from its case every time), so a motion in flight
 * in it would be about another cluster.
 */
function writeManagerConfig(path: string, serve: SimServe, tokenFile: string, speed: number, caseName: string): string {
  const state = managerStatePath(path, caseName, serve.url);
  writeFileSync(path, managerConfigText(serve, tokenFile, state, speed), { mode: 0o600 });
  rmSync(state, { force: true });
  return state;
}
