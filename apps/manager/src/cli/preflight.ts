import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { createPveClient, createSimHost, tlsNotices } from '../cluster/host';
import { type ManagerConfig, withPolicyLayer } from '../config/load';
import { loadToken } from '../config/secret';
import { errorMessage, ManagerError } from '../errors';
import { lockDirProblem } from '../runtime/lock';
import { buildPolicy } from '../balancing/policy';
import { STATE_FORMAT, STATE_VERSION } from '../runtime/state';

/**
 * Whether the state file can be kept at `path`: not a directory; an existing file readable,
 * writable and of this build's version; a missing one creatable (its nearest existing parent a
 * writable directory). A message naming `state.file`, or `undefined`. Reads, never writes.
 */
export function statePathProblem(path: string): string | undefined {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ENOTDIR: a component of the path is a file (the parents' check below says which)
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      return `state.file: '${path}' cannot be read (${code ?? errorMessage(err)})`;
  }
  if (st?.isDirectory())
    return `state.file: '${path}' is a directory; expected the path of a file in it (e.g. '${path.replace(/\/+$/, '')}/state.json')`;
  if (st !== undefined) {
    if (!st.isFile()) return `state.file: '${path}' is not a regular file`;
    try {
      accessSync(path, constants.R_OK | constants.W_OK);
    } catch {
      return `state.file: '${path}' is not readable and writable by this user`;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      return undefined; // corrupt: set aside and reported at start, as documented
    }
    const d = doc as { format?: unknown; version?: unknown } | null;
    if (d !== null && typeof d === 'object' && d.format === STATE_FORMAT && d.version !== STATE_VERSION) {
      return `state.file: '${path}' has version ${JSON.stringify(d.version)}; this poise-manager reads version ${STATE_VERSION} only (move it away to start without it)`;
    }
    return undefined;
  }
  // missing: the first existing directory above it must be writable (the directories are created)
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    let parent;
    try {
      parent = statSync(dir);
    } catch {
      if (dir === dirname(dir)) return `state.file: no directory above '${path}' exists`;
      continue;
    }
    if (!parent.isDirectory()) return `state.file: '${path}' cannot be created: '${dir}' is not a directory`;
    try {
      accessSync(dir, constants.W_OK | constants.X_OK);
    } catch {
      return `state.file: '${path}' cannot be created: '${dir}' is not writable by this user`;
    }
    return undefined;
  }
}

/**
 * What must work before the daemon runs, beyond the config file itself: the active/standby
 * lock's directory (`lock.dir`, env pve with `lock.enabled`) and the state file (env pve; the
 * simulator keeps its state in a file of its own). One line per problem, naming the key.
 */
export function startupProblems(config: ManagerConfig): string[] {
  if (config.env !== 'pve') return [];
  const problems: string[] = [];
  if (config.lock.enabled) {
    const lock = lockDirProblem(config.lock.dir);
    if (lock !== undefined) problems.push(lock);
  }
  const state = statePathProblem(config.statePath);
  if (state !== undefined) problems.push(state);
  return problems;
}

/** The outcome of `--check-config`: what was checked, warnings, and the problems (none: valid). */
export interface ConfigCheck {
  /** Summary lines (env, cluster, TLS, policy, limits, metrics, state, lock). */
  readonly lines: readonly string[];
  readonly warnings: readonly string[];
  readonly problems: readonly string[];
}

/**
 * `--check-config`: every check the daemon would make before its first round, all of them,
 * whatever fails first: the API token, the TLS files and the client options (env pve), the
 * simulator case and the policy keys of its datacenter.cfg (env sim), the lock directory, the
 * state file, the policy. The verdict is given once, after every check.
 */
export async function checkConfig(config: ManagerConfig, environment: NodeJS.ProcessEnv): Promise<ConfigCheck> {
  const lines: string[] = [`env ${config.env}, mode ${config.mode}, interval ${config.intervalSeconds} s`];
  const warnings: string[] = [];
  const problems: string[] = [];
  const problem = (err: unknown, key?: string) => {
    if (!(err instanceof ManagerError) || (err.code !== 'invalid-config' && err.code !== 'invalid-token')) throw err;
    problems.push(key === undefined ? err.message : `${key}: ${err.message.replace(/^API token: /, '')}`);
  };
  let policyConfig = config;
  if (config.env === 'pve') {
    let token;
    try {
      const loaded = loadToken({ file: config.pve.tokenFile, env: config.pve.tokenEnv }, environment, warnings);
      token = loaded.token;
      lines.push(`cluster: ${config.pve.urls.join(', ')}; API token ${token.tokenId} from ${loaded.origin}`);
    } catch (err) {
      problem(err, config.pve.tokenFile !== undefined ? 'pve.token-file' : 'pve.token-env');
      lines.push(`cluster: ${config.pve.urls.join(', ')}`);
    }
    if (token !== undefined) {
      try {
        const client = createPveClient(config, token);
        for (const n of tlsNotices(config, client.security)) (n.level === 'info' ? lines : warnings).push(n.msg);
        await client.close();
      } catch (err) {
        problem(err);
      }
    }
  } else {
    try {
      const host = createSimHost(config);
      lines.push(`simulator: ${host.port.description}`);
      policyConfig = withPolicyLayer(config, host.policyLayer);
      await host.close?.();
    } catch (err) {
      problem(err);
    }
  }
  const policy = buildPolicy(policyConfig.policy);
  lines.push(`policy: ${policy.description}`, policy.sources);
  warnings.push(...policy.problems);
  const l = config.limits;
  lines.push(
    `limits: ${l.maxMotionsPerHour} motions per hour, motion timeout ${l.motionTimeoutSeconds} s, settle time ${l.settleSeconds} s`,
  );
  lines.push(
    `metrics: ${config.metrics.enabled ? `${config.metrics.host}:${config.metrics.port}` : 'off'}; state: ${config.env === 'pve' ? config.statePath : 'a file of its own for each run (simulator)'}`,
  );
  lines.push(
    `lock: ${config.lock.enabled && config.env === 'pve' ? `${config.lock.dir}/${config.lock.name}` : 'not used'}`,
  );
  problems.push(...startupProblems(config));
  // each problem names its file: the config's, unless it names another (a case's datacenter.cfg)
  const label = config.file;
  return {
    lines,
    warnings,
    problems: problems.map((p) => (label === undefined || p.startsWith('/') ? p : `${label}: ${p}`)),
  };
}
