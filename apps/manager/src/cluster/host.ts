import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CaseInput, loadCase, Simulation } from '@poise/sim';
import { type ApiToken, PveApiError, PveClient, type PveTlsOptions, type TransportSecurity } from '@poise/pve-api';
import { type Clock, SimulationClock, systemClock } from './clock';
import { type ManagerConfig, type PolicyLayer, policyLayer } from '../config/load';
import { loadToken } from '../config/secret';
import { errorMessage, ManagerError } from '../errors';
import type { LogLevel } from '../log';
import type { BalancerPort } from './port';
import { PveAdapter } from './pve-adapter';
import { SIM_EPOCH_SECONDS, SimPort, simCaseFacts } from './sim-port';

/** What the daemon runs against: a port, its clock, and what to say about it at start. */
export interface Host {
  readonly port: BalancerPort;
  readonly clock: Clock;
  /** True once the environment has ended (a finished simulation): the loop stops after that round. */
  finished?(): boolean;
  /** How the environment ended, once `finished()` (a simulation that aborted is not ok: exit 1). */
  endStatus?(): { readonly ok: boolean; readonly message: string };
  /** How a time of its clock is written in text log lines and messages (default ISO 8601 UTC): the simulator's `sim 00:01:20`. */
  timeLabel?(seconds: number): string;
  /** Where the daemon keeps its state instead of `state.file` (the simulator: a file for this run only). */
  readonly statePath?: string;
  /** Releases what the host holds beyond the port (a temporary directory); called once at shutdown. */
  close?(): Promise<void>;
  /** Start-up lines about the connection beyond the TLS choices (which the daemon states itself). */
  readonly notices: readonly { readonly level: LogLevel; readonly msg: string }[];
  /** Removes what must never be logged (the API token's secret) from a text; every log line passes it. */
  readonly redact?: (text: string) => string;
  /**
   * Policy keys the environment itself sets, under the config file's (the simulator's case:
   * its datacenter.cfg `crs`, as the simulator's own balancer reads them).
   */
  readonly policyLayer?: PolicyLayer;
}

/** Builds the host for a config; tests and fixtures pass their own (a `FakeCluster`). */
export type HostFactory = (config: ManagerConfig) => Host | Promise<Host>;

/** The scenario `--sim` runs when no case directory is given. */
export function bundledSimCase(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // dist/ when built (one bundle), src/cluster/ when run from source: the scenarios sit in the package's root
  const root = basename(here) === 'dist' ? resolve(here, '..') : resolve(here, '..', '..');
  return resolve(root, 'scenarios', 'three-nodes-unbalanced');
}

/**
 * The TLS options of the client from the config. A fingerprint without a CA file pins the
 * certificate itself (the chain of a self-signed cluster is not checked; the pin names the
 * exact certificate), also with `insecure-skip-verify`; a CA file with a fingerprint checks
 * both; `insecure-skip-verify` alone checks nothing.
 */
function tlsOptions(config: ManagerConfig, ca: string | undefined): PveTlsOptions {
  const tls = config.pve.tls;
  const fingerprints = tls.fingerprint === undefined ? undefined : [tls.fingerprint];
  if (ca !== undefined) return { ca, ...(fingerprints ? { fingerprints } : {}) };
  if (fingerprints) return { fingerprints };
  return tls.insecureSkipVerify ? { insecureSkipVerify: true } : {};
}

/**
 * The start-up lines about TLS, from what the client actually verifies (`client.security`):
 * the mode at level info, or error when nothing is verified, and each of the client's
 * `warnings` at level error, prefixed `INSECURE:`.
 */
export function tlsNotices(config: ManagerConfig, security: TransportSecurity): { level: LogLevel; msg: string }[] {
  const tls = config.pve.tls;
  const fp = tls.fingerprint;
  const out: { level: LogLevel; msg: string }[] = [];
  const mode = config.pve.urls.every((u) => u.startsWith('http://')) ? undefined : security.mode;
  switch (mode) {
    case undefined:
      // only plain http: no TLS at all, the warning below says it
      break;
    case 'system-ca':
      out.push({ level: 'info', msg: 'TLS: verified against the system CAs, host name checked' });
      break;
    case 'ca':
      out.push({ level: 'info', msg: `TLS: verified against CA file '${tls.caFile}', host name checked` });
      break;
    case 'ca+pin':
      out.push({ level: 'info', msg: `TLS: verified against CA file '${tls.caFile}', fingerprint ${fp} pinned` });
      break;
    case 'pin':
      out.push({
        level: 'info',
        msg: `TLS: only the certificate with fingerprint ${fp} is accepted (pinned${tls.insecureSkipVerify ? '; pve.tls.insecure-skip-verify only drops the chain check' : ''}; the chain is not checked)`,
      });
      break;
    case 'none':
      out.push({
        level: 'error',
        msg: 'INSECURE: TLS certificate verification is off (pve.tls.insecure-skip-verify) and no fingerprint is pinned',
      });
      break;
  }
  for (const w of security.warnings) out.push({ level: 'error', msg: `INSECURE: ${w}` });
  return out;
}

/** The API client of a config: URLs, token, TLS, timeout. Throws `invalid-config` for bad TLS options. */
export function createPveClient(
  config: ManagerConfig,
  token: ApiToken,
  options: { retries?: number; backoffBaseMs?: number; signal?: AbortSignal } = {},
): PveClient {
  const ca = config.pve.tls.caFile === undefined ? undefined : readCaFile(config.pve.tls.caFile);
  try {
    return new PveClient({
      baseUrls: config.pve.urls,
      token,
      tls: tlsOptions(config, ca),
      allowPlainHttp: config.pve.tls.allowPlainHttp,
      timeoutMs: Math.max(1, Math.round(config.pve.timeoutSeconds * 1000)),
      ...options,
    });
  } catch (err) {
    if (err instanceof PveApiError)
      throw new ManagerError(err.code === 'bad-token' ? 'invalid-token' : 'invalid-config', `pve: ${err.message}`, {
        cause: err,
      });
    throw err;
  }
}

/** Reads the cluster CA file (PEM); throws `invalid-config` naming the file when unusable. */
function readCaFile(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ManagerError(
      'invalid-config',
      `pve.tls.ca-file: cannot read '${path}' (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: err },
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ManagerError('invalid-config', `pve.tls.ca-file: '${path}' holds no PEM certificate`);
  }
  return pem;
}

/** Test and fixture hooks of {@link createPveHost}. */
export interface PveHostOptions {
  /** Where `pve.token-env` is read (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** The daemon's clock (default the system clock: epoch seconds, real sleeps). */
  readonly clock?: Clock;
  /** Client retry tuning (defaults of `@poise/pve-api`). */
  readonly retries?: number;
  readonly backoffBaseMs?: number;
}

/**
 * The Proxmox VE host: the API client (`@poise/pve-api`) with the config's URLs, token and
 * TLS, the {@link PveAdapter} over it, the system clock (epoch seconds), and the start-up
 * lines: the TLS mode and every weakness the client reports (level error), and a token file
 * readable by others. The token's secret is registered as a secret of the logger.
 */
export function createPveHost(config: ManagerConfig, options: PveHostOptions = {}): Host {
  const warnings: string[] = [];
  const { token } = loadToken(
    { file: config.pve.tokenFile, env: config.pve.tokenEnv },
    options.env ?? process.env,
    warnings,
  );
  const client = createPveClient(config, token, { retries: options.retries, backoffBaseMs: options.backoffBaseMs });
  const clock = options.clock ?? systemClock;
  const port = new PveAdapter({
    client,
    now: () => clock.now(),
    pickupTimeoutSeconds: config.limits.pickupTimeoutSeconds,
    description: `pve ${client.baseUrls.join(', ')}, API token ${token.tokenId}`,
  });
  return {
    port,
    clock,
    notices: [...tlsNotices(config, client.security), ...warnings.map((msg) => ({ level: 'warn' as const, msg }))],
    redact: (text) => token.redact(text),
  };
}

/** Simulated seconds since the start as `sim 00:01:20` (hours grow past 99 if they must). */
export function simTimeLabel(seconds: number): string {
  const t = Math.max(0, Math.round(seconds));
  const two = (n: number) => String(n).padStart(2, '0');
  return `sim ${two(Math.floor(t / 3600))}:${two(Math.floor(t / 60) % 60)}:${two(t % 60)}`;
}

/** What is wrong with a simulator case directory before it is loaded: missing, a file, no `cmdlist`; `undefined` when it looks like one. */
function caseDirProblem(dir: string): string | undefined {
  let st;
  try {
    st = statSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `'${dir}' does not exist` : `'${dir}' cannot be read (${code ?? errorMessage(err)})`;
  }
  if (!st.isDirectory())
    return `'${dir}' is a file, not a simulator case directory (a directory with 'cmdlist', 'hardware_status', …)`;
  if (!existsSync(join(dir, 'cmdlist'))) return `'${dir}' is not a simulator case directory (no 'cmdlist' file in it)`;
  return undefined;
}

/** Test hooks of {@link createSimHost}. */
export interface SimHostOptions {
  /** Real waiting between rounds when `sim.speed` > 0 (tests replace it). */
  readonly wait?: (seconds: number, signal: AbortSignal) => Promise<void>;
  /** Where the run's state file goes (default: a fresh temporary directory, removed at the end). */
  readonly stateDir?: string;
  /** Changes the loaded case before the simulation starts (`poise-manager drain --sim` keeps it running after its command lists). */
  readonly caseInput?: (input: CaseInput) => CaseInput;
}

/**
 * The embedded simulator's host: the case directory (`sim.case-dir`) loaded with `@poise/sim`
 * (`loadCase`, refused with `invalid-config` naming the file and field), a `Simulation` on the
 * pve-9.2 profile, the {@link SimPort} over it (`sim-port.ts`: the view as the port's snapshot,
 * motions through the CRM command queue), and a {@link SimulationClock} whose `sleep` steps the
 * simulation (one 20 s HA round per step; real pacing by `sim.speed`). `finished()` is true
 * once the scenario ended; `endStatus()` says how. The run's state is a fresh file in a
 * temporary directory, removed at the end: a simulation starts from its case every time, so a
 * state of an earlier run (a motion in flight, a backoff) would belong to another cluster.
 */
export function createSimHost(config: ManagerConfig, options: SimHostOptions = {}): Host {
  const dir = config.sim.caseDir;
  if (dir === undefined)
    throw new ManagerError('invalid-config', "sim.case-dir: expected a case directory when env is 'sim', got nothing");
  const problem = caseDirProblem(dir);
  if (problem !== undefined) throw new ManagerError('invalid-config', `sim.case-dir: ${problem}`);
  let input: CaseInput;
  try {
    input = loadCase(dir, basename(dir), { registry: config.policy.registry });
    if (options.caseInput) input = options.caseInput(input);
  } catch (err) {
    throw new ManagerError('invalid-config', `sim.case-dir: ${errorMessage(err)}`, { cause: err });
  }
  const casePolicy = policyLayer(
    {
      kind: 'case',
      label: `the crs of '${join(dir, 'datacenter.cfg')}'`,
      keyPath: `'${join(dir, 'datacenter.cfg')}': crs.`,
    },
    input.datacenterCfg.crs,
    {
      file: join(dir, 'datacenter.cfg'),
      prefix: 'crs.',
    },
    config.policy.registry,
  );
  const sim = new Simulation(input, { profile: 'pve-9.2', registry: config.policy.registry });
  const facts = simCaseFacts(input);
  const nodes = Object.keys(input.hardwareStatus).length;
  const services = Object.keys(input.serviceConfig).length;
  const port = new SimPort(sim, facts, {
    epoch: SIM_EPOCH_SECONDS,
    pickupTimeoutSeconds: config.limits.pickupTimeoutSeconds,
    description: `simulator, case '${basename(dir)}': ${nodes} nodes, ${services} HA resources`,
  });
  const clock = new SimulationClock(sim, SIM_EPOCH_SECONDS, config.sim.speed, options.wait);
  const ownDir = options.stateDir === undefined ? mkdtempSync(join(tmpdir(), 'poise-manager-sim-')) : undefined;
  const stateDir = options.stateDir ?? ownDir!;
  const pace = config.sim.speed > 0 ? `${config.sim.speed}× real time` : 'as fast as it runs';
  const notices: { level: LogLevel; msg: string }[] = [
    {
      level: 'info',
      msg: `simulator: case '${dir}' (profile pve-9.2); times are simulated (sim hh:mm:ss since the start); each pause runs the HA manager for at least one 20 s round, ${pace}; the run ends with the scenario`,
    },
    {
      level: 'info',
      msg: `simulator: state kept in '${stateDir}' for this run only (a simulation always starts from its case)`,
    },
    ...facts.notes.map((msg) => ({ level: 'warn' as const, msg })),
  ];
  return {
    port,
    clock,
    notices,
    policyLayer: casePolicy,
    timeLabel: (seconds) => simTimeLabel(seconds - SIM_EPOCH_SECONDS),
    statePath: join(stateDir, 'state.json'),
    finished: () => sim.ended,
    endStatus: () =>
      sim.error === undefined
        ? { ok: true, message: `the scenario ended at ${sim.time} s of simulated time` }
        : { ok: false, message: `the simulation aborted at ${sim.time} s: ${sim.error}` },
    close: async () => {
      if (ownDir !== undefined) rmSync(ownDir, { recursive: true, force: true });
    },
  };
}

/** The host for a config's `env`. */
export const createHost: HostFactory = (config) =>
  config.env === 'pve' ? createPveHost(config) : createSimHost(config);
