import { readFileSync, statSync } from 'node:fs';
import { type CaseInput, JsonSyntaxError, MAX_SIM_TIME, parseStrictJson } from '@poise/sim';
import { checkPlanJson, PlanError, type PlanInput } from '@poise/plan';
import { type CapacityArgs, inputFromSnapshot } from '../../balancing/plan-input';
import { bundledSimCase, createPveHost, createSimHost, type Host } from '../../cluster/host';
import { unsettledReasons } from '../../cluster/condition';
import { loadConfig, type ManagerConfig, parseConfig } from '../../config/load';
import { ManagerError } from '../../errors';
import type { ClusterSnapshot } from '../../cluster/port';
import { SIM_EPOCH_SECONDS } from '../../cluster/sim-port';
import type { ClusterSource, ReadPoint } from './args';

/** Simulated seconds the simulator keeps running after a case's command lists, so that a drain has time to run (`drain --sim`). */
const SIM_DRAIN_SECONDS = 7200;
/** HA rounds (20 s each) the simulator may take to settle after its command lists before the cluster is read anyway. */
const SIM_SETTLE_MAX_ROUNDS = 30;
/** Seconds of one HA manager round: one simulator step. */
const SIM_ROUND_SECONDS = 20;
/**
 * Without `--at`, a case whose command lists end within this many simulated seconds is read
 * at their end; a longer one at its start (replaying a day of a large case takes minutes).
 */
export const SIM_READ_END_MAX_SECONDS = 3600;

/** The simulated second at which a case is read, and how the cluster line says why. */
export function readMoment(
  cmdlist: readonly (readonly string[])[],
  at: ReadPoint | undefined,
): { seconds: number; why: string } {
  const end = lastCommandListTime(cmdlist);
  const start = Math.min(SIM_ROUND_SECONDS, end);
  const hms = (t: number) =>
    `${String(Math.floor(t / 3600)).padStart(2, '0')}:${String(Math.floor(t / 60) % 60).padStart(2, '0')}:${String(t % 60).padStart(2, '0')}`;
  if (at === 'start') return { seconds: start, why: "--at start: after the case's first command list" };
  if (at === 'end') return { seconds: end, why: "--at end: after the case's last command list" };
  if (at !== undefined) return { seconds: at.seconds, why: `--at ${hms(at.seconds)}` };
  if (end <= SIM_READ_END_MAX_SECONDS) return { seconds: end, why: "after the case's command lists" };
  return {
    seconds: start,
    why: `at the start of the case: its command lists run until ${hms(end)}; --at end|<time> reads later`,
  };
}

/**
 * What a plan reads of the cluster: every guest, HA or not, and the guest configurations, so
 * that a guest the daemon's migratability check calls not migratable (a local cd-rom, a local
 * disk) is planned as staying.
 */
export const PLAN_READ = { guestConfigs: true, nonHa: true } as const;

/** The cluster a subcommand works on. */
export interface ClusterRead {
  readonly input: PlanInput;
  /** What the reading left out or noticed (a rule naming a guest that is gone, a cluster that did not settle): printed as notes. */
  readonly problems: readonly string[];
  /** One line: where the cluster came from. */
  readonly description: string;
  /** When the cluster was read (ISO; simulated time on the simulator; a snapshot file's modification time). */
  readonly readAt: string;
  /** A live or simulated cluster: its host (to act on it), the config, and the snapshot the input was built from. */
  readonly live?: { readonly host: Host; readonly config: ManagerConfig; readonly snapshot: ClusterSnapshot };
}

/**
 * Simulated time of a case's last command list (spec §1.4: the first list at 20 s, each next
 * one 100 s later or, after `delay d`, 20·⌈d/20⌉ + 80 s later).
 */
function lastCommandListTime(cmdlist: readonly (readonly string[])[]): number {
  let t = SIM_ROUND_SECONDS;
  let last = 0;
  for (const list of cmdlist) {
    last = t;
    let next = t + 100;
    for (const cmd of list) {
      const m = /^delay\s+(\d+)\s*$/.exec(cmd);
      if (m && Number(m[1]) > SIM_ROUND_SECONDS)
        next = t + Math.ceil(Number(m[1]) / SIM_ROUND_SECONDS) * SIM_ROUND_SECONDS + 80;
    }
    t = next;
  }
  return last;
}

/** The case kept running {@link SIM_DRAIN_SECONDS} after its command lists (a `delay` list at the end, the time limit raised to match). */
function keepRunning(input: CaseInput): CaseInput {
  const end = lastCommandListTime(input.cmdlist) + SIM_DRAIN_SECONDS + 1000;
  return {
    ...input,
    cmdlist: [...input.cmdlist, [`delay ${SIM_DRAIN_SECONDS}`]],
    simOptions: { ...input.simOptions, maxTime: Math.max(input.simOptions?.maxTime ?? MAX_SIM_TIME, end) },
  };
}

/** Steps the simulator past its command lists until the cluster settles (or {@link SIM_SETTLE_MAX_ROUNDS} rounds), then reads it. */
async function settledSimSnapshot(
  host: Host,
  readAt: number,
): Promise<{ snapshot: ClusterSnapshot; problems: string[] }> {
  const never = new AbortController().signal;
  while (host.clock.now() - SIM_EPOCH_SECONDS <= readAt && !host.finished?.())
    await host.clock.sleep(SIM_ROUND_SECONDS, never);
  const problems: string[] = [];
  for (let round = 0; ; round++) {
    const snapshot = await host.port.readSnapshot(PLAN_READ);
    const moving = snapshot.guests
      .filter((g) => g.ha?.state === 'migrate' || g.ha?.state === 'relocate')
      .map((g) => `${g.sid} in HA state '${g.ha!.state}'`);
    const reasons = [...unsettledReasons(snapshot, new Set()), ...moving];
    if (reasons.length === 0 || round >= SIM_SETTLE_MAX_ROUNDS || host.finished?.()) {
      if (reasons.length > 0)
        problems.push(
          `the simulated cluster did not settle within ${SIM_SETTLE_MAX_ROUNDS} rounds after the moment it was read at: ${reasons.join('; ')}`,
        );
      return { snapshot, problems };
    }
    await host.clock.sleep(SIM_ROUND_SECONDS, never);
  }
}

/** `--snapshot <file.json>`: read and validated (`PlanError` naming the file and field); the command line's capacity over the file's. */
function readSnapshotFile(file: string, capacity: CapacityArgs): ClusterRead {
  let text: string;
  let modified: Date;
  try {
    text = readFileSync(file, 'utf8');
    modified = statSync(file).mtime;
  } catch (err) {
    throw new ManagerError(
      'invalid-config',
      `--snapshot: cannot read '${file}' (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: err },
    );
  }
  // the strict reader: a key given twice is an error (JSON.parse keeps the last silently)
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    throw new PlanError('invalid-json', `${file}: not valid JSON: ${err.message}`, { cause: err });
  }
  const parsed = checkPlanJson(value, file);
  const merged = { ...parsed.capacity, ...capacity };
  const input: PlanInput = { ...parsed, ...(Object.keys(merged).length > 0 ? { capacity: merged } : {}) };
  return {
    input,
    problems: [],
    readAt: modified.toISOString(),
    description: `snapshot file '${file}': ${input.nodes.length} nodes, ${input.guests.length} guests, ${input.rules?.length ?? 0} rules`,
  };
}

/** The config of `--config <file>` or of `--sim [<case-dir>]` (the simulator's defaults; mode as given). */
function sourceConfig(source: Exclude<ClusterSource, { kind: 'snapshot' }>, mode: 'observe' | 'act'): ManagerConfig {
  if (source.kind === 'config') return loadConfig(source.file, { mode });
  return parseConfig({ metrics: { enabled: false }, lock: { enabled: false } }, undefined, {
    env: 'sim',
    simCaseDir: source.dir ?? bundledSimCase(),
    mode,
  });
}

/**
 * Reads the cluster of a subcommand: a snapshot file, the live cluster of a config (its host,
 * one snapshot), or the simulator (run past its command lists until it settles). `makeHost`
 * replaces the host a config would build (tests: the fake cluster).
 */
export async function readCluster(
  source: ClusterSource,
  options: {
    capacity: CapacityArgs;
    drain: readonly string[];
    mode: 'observe' | 'act';
    /** When a simulated cluster is read (`--at`; default: see {@link readMoment}). */
    at?: ReadPoint | undefined;
    makeHost?: (config: ManagerConfig) => Host | Promise<Host>;
  },
): Promise<ClusterRead> {
  if (source.kind === 'snapshot') return readSnapshotFile(source.file, options.capacity);
  const config = sourceConfig(source, options.mode);
  const sim = config.env === 'sim';
  // the simulator: when its command lists are done (read from the case as it is loaded)
  let moment: { seconds: number; why: string } | undefined;
  const caseInput = (input: CaseInput) => {
    moment = readMoment(input.cmdlist, options.at);
    return keepRunning(input);
  };
  const host = options.makeHost
    ? await options.makeHost(config)
    : sim
      ? createSimHost(config, { caseInput })
      : createPveHost(config);
  try {
    let snapshot: ClusterSnapshot;
    const problems: string[] = [];
    if (moment !== undefined) {
      const settled = await settledSimSnapshot(host, moment.seconds);
      snapshot = settled.snapshot;
      problems.push(...settled.problems);
    } else snapshot = await host.port.readSnapshot(PLAN_READ);
    const built = inputFromSnapshot(snapshot, config, options.capacity, options.drain);
    const when = host.timeLabel?.(snapshot.time) ?? new Date(snapshot.time * 1000).toISOString();
    return {
      input: built.input,
      problems: [...problems, ...built.problems],
      readAt: new Date(snapshot.time * 1000).toISOString(),
      description: `${host.port.description}, read at ${when}${moment ? ` (${moment.why})` : ''}: ${built.input.nodes.length} nodes, ${built.input.guests.length} guests, ${built.input.rules?.length ?? 0} rules`,
      live: { host, config, snapshot },
    };
  } catch (err) {
    await closeHost(host);
    throw err;
  }
}

/** Releases a host's port and what the host holds. */
export async function closeHost(host: Host): Promise<void> {
  await host.port.close?.();
  await host.close?.();
}
