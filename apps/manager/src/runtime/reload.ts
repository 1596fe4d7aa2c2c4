import type { ManagerConfig } from '../config/load';
import { errorMessage } from '../errors';
import { resolveLogFormat } from '../log';
import { type BuiltPolicy, buildPolicy } from '../balancing/policy';
import type { DaemonContext } from './context';

/** Sections of the config that a reload cannot change: they keep their running values until a restart. */
const RESTART_SECTIONS = ['env', 'pve', 'sim', 'metrics', 'state', 'lock'] as const;

/** The sections of `next` that differ from `old` and need a restart. */
function sectionsNeedingRestart(old: ManagerConfig, next: ManagerConfig): string[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const changed: Record<(typeof RESTART_SECTIONS)[number], boolean> = {
    env: next.env !== old.env,
    pve: !same(next.pve, old.pve),
    sim: !same(next.sim, old.sim),
    metrics: !same(next.metrics, old.metrics),
    state: next.statePath !== old.statePath,
    lock: !same(next.lock, old.lock),
  };
  return RESTART_SECTIONS.filter((s) => changed[s]);
}

/**
 * SIGHUP: re-reads the config. A bad file keeps the running config (and says why); settings
 * that need a restart (env, the cluster connection, metrics address, state file, lock) keep
 * their running values with a warning; the rest (mode, interval, policy, guests, limits, log)
 * apply from the next round. Returns whether the config in force changed; `adopt` takes the
 * new policy (the pipeline state is kept: it is keyed by stage name).
 */
export function reloadConfig(
  ctx: DaemonContext,
  read: (() => ManagerConfig) | undefined,
  isTty: boolean,
  adopt: (policy: BuiltPolicy) => void,
): boolean {
  const log = ctx.log;
  if (!read) {
    log.warn('config', 'reload requested, but the daemon runs without a config file: nothing to reload');
    return false;
  }
  let next: ManagerConfig;
  let policy: BuiltPolicy;
  try {
    next = read();
    policy = buildPolicy(next.policy);
  } catch (err) {
    log.error('config', `reload failed, keeping the running config:\n${errorMessage(err)}`.replace(/\n/g, '\n  '), {
      file: ctx.config.file ?? null,
    });
    return false;
  }
  const old = ctx.config;
  const needRestart = sectionsNeedingRestart(old, next);
  if (needRestart.length > 0) {
    log.warn(
      'config',
      `changes to ${needRestart.map((k) => `'${k}'`).join(', ')} need a restart; running with the old values of those until then`,
    );
  }
  ctx.config = {
    ...next,
    env: old.env,
    pve: old.pve,
    sim: old.sim,
    metrics: old.metrics,
    statePath: old.statePath,
    lock: old.lock,
  };
  adopt(policy);
  log.configure({ format: resolveLogFormat(next.log.format, isTty), level: next.log.level });
  log.info('config', `reloaded '${next.file}': mode ${next.mode}, interval ${next.intervalSeconds} s`, {
    mode: next.mode,
  });
  return true;
}
