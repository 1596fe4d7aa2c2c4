import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCase } from '@poise/sim';
import type { Clock } from './clock';
import type { ManagerConfig } from './config/load';
import { loadToken } from './config/secret';
import { errorMessage, ManagerError } from './errors';
import type { LogLevel } from './log';
import type { BalancerPort } from './port';

/** What the daemon runs against: a port, its clock, and what to say about it at start. */
export interface Host {
  readonly port: BalancerPort;
  readonly clock: Clock;
  /** True once the environment has ended (a finished simulation): the loop stops after that round. */
  finished?(): boolean;
  /** Start-up lines about the connection beyond the TLS choices (which the daemon states itself). */
  readonly notices: readonly { readonly level: LogLevel; readonly msg: string }[];
  /** Strings that must never be logged (the API token and its secret part). */
  readonly secrets: readonly string[];
}

/** Builds the host for a config; tests and fixtures pass their own (a `FakeCluster`). */
export type HostFactory = (config: ManagerConfig) => Host | Promise<Host>;

/** The scenario `--sim` runs when no case directory is given. */
export function bundledSimCase(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // src/ when run from source, dist/ when built: the scenarios sit beside either
  return resolve(here, '..', 'scenarios', 'three-nodes-unbalanced');
}

/** The Proxmox VE side of the start-up lines: TLS choices, loudest first. */
export function tlsNotices(config: ManagerConfig): { level: LogLevel; msg: string }[] {
  const tls = config.pve.tls;
  const out: { level: LogLevel; msg: string }[] = [];
  if (tls.allowPlainHttp && config.pve.urls.some((u) => u.startsWith('http://'))) {
    out.push({ level: 'error', msg: 'INSECURE: plain http:// is allowed (pve.tls.allow-plain-http) and used: the API token travels unencrypted' });
  }
  if (tls.insecureSkipVerify) {
    out.push({
      level: 'error',
      msg:
        tls.fingerprint === undefined
          ? 'INSECURE: TLS certificate verification is off (pve.tls.insecure-skip-verify) and no fingerprint is pinned: anyone on the path can read the API token'
          : `INSECURE: the certificate chain is not verified (pve.tls.insecure-skip-verify); only the pinned fingerprint ${tls.fingerprint} is checked`,
    });
  }
  if (!tls.insecureSkipVerify) {
    const trust = tls.caFile !== undefined ? `CA file '${tls.caFile}'` : 'the system CAs';
    out.push({ level: 'info', msg: `TLS: verified against ${trust}${tls.fingerprint !== undefined ? `, fingerprint ${tls.fingerprint} pinned` : ''}` });
  }
  return out;
}

/** Reads the cluster CA file (PEM); throws `invalid-config` naming the file when unusable. */
export function readCaFile(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ManagerError('invalid-config', `pve.tls.ca-file: cannot read '${path}' (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ManagerError('invalid-config', `pve.tls.ca-file: '${path}' holds no PEM certificate`);
  }
  return pem;
}

/**
 * The Proxmox VE host. Integration seam: needs `@poise/pve-api` (the typed client) and the
 * adapter from its replies to {@link BalancerPort} (`pve-port.ts`). Everything up to it is real:
 * the token is read and checked, the TLS choices are stated.
 */
export function createPveHost(config: ManagerConfig): Host {
  const warnings: string[] = [];
  const token = loadToken({ file: config.pve.tokenFile, env: config.pve.tokenEnv }, process.env, warnings);
  if (config.pve.tls.caFile !== undefined) readCaFile(config.pve.tls.caFile);
  throw new ManagerError(
    'not-available',
    `env 'pve' is not available yet: the Proxmox VE adapter needs the @poise/pve-api client, which is not merged into this build ` +
      `(config and API token ${token.id} from ${token.origin} are valid)`,
  );
}

/**
 * The embedded simulator's host. Integration seam: needs the round-by-round `Simulation` API of
 * `@poise/sim` (`step()`, `view()`, `queueCrmCommand()`) and the adapter from its view to
 * {@link BalancerPort} (`sim-port.ts`), with a {@link Clock} whose `sleep` steps the simulation
 * (time accelerated by `sim.speed`) and `finished()` when the scenario ends. Everything up to
 * it is real: the case directory is read and validated.
 */
export function createSimHost(config: ManagerConfig): Host {
  const dir = config.sim.caseDir;
  if (dir === undefined) throw new ManagerError('invalid-config', "sim.case-dir: expected a case directory when env is 'sim', got nothing");
  if (!existsSync(join(dir, 'cmdlist'))) {
    throw new ManagerError('invalid-config', `sim.case-dir: '${dir}' is not a simulator case directory (no 'cmdlist' file)`);
  }
  let nodes: number;
  let services: number;
  try {
    const input = loadCase(dir, basename(dir));
    nodes = Object.keys(input.hardwareStatus).length;
    services = Object.keys(input.serviceConfig).length;
  } catch (err) {
    throw new ManagerError('invalid-config', `sim.case-dir: ${errorMessage(err)}`, { cause: err });
  }
  throw new ManagerError(
    'not-available',
    `env 'sim' is not available yet: driving the simulator round by round needs the Simulation API of @poise/sim ` +
      `(step(), view(), queueCrmCommand()), which is not merged into this build (case '${dir}' was read: ${nodes} nodes, ${services} services)`,
  );
}

/** The host for a config's `env`. */
export const createHost: HostFactory = (config) => (config.env === 'pve' ? createPveHost(config) : createSimHost(config));
