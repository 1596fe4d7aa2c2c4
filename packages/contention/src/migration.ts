/**
 * What a live migration costs, as a cluster pays it: pure maths, no clock. A QEMU pre-copy
 * migration copies the guest's memory once, then, round after round, what the guest dirtied
 * meanwhile, until what is left fits in the allowed pause; then it stops the guest and copies
 * the rest (Liu et al., "Performance and energy modeling for live migration of virtual
 * machines", HPDC 2011). With a dirty rate `D`, a transfer rate `R` and `λ = D / R < 1`, round
 * `i` copies `M·λⁱ`; the migration stops after the first round `n` with `M·λⁿ ≤ R·T_max`, having
 * transferred `M·(1 − λⁿ⁺¹)/(1 − λ)` bytes with a pause of `M·λⁿ / R`.
 *
 * {@link estimateMigration} walks the rounds one by one (so that it can model what the closed
 * form cannot: auto-converge throttling the guest, a dirty set that cannot outgrow the memory, a
 * timeout); `src/migration.test.ts` checks it against the closed form where that holds. Every
 * parameter and its source: {@link MIGRATION_DEFAULTS}.
 */
import { ContentionError, showValue } from './errors';

/** The settings of a cluster's migrations (see {@link MIGRATION_DEFAULTS} for each one's source). */
export interface MigrationSettings {
  /** A node's migration link, bytes per second (> 0), shared by the migrations into and out of it. */
  readonly linkBytesPerSecond: number;
  /** PVE's `bwlimit: migration=` as bytes per second (datacenter.cfg gives KiB/s), a cap per migration; `null`: none. */
  readonly bwlimitBytesPerSecond: number | null;
  /** The longest pause allowed at the switch-over, seconds (> 0): QEMU's `downtime-limit`, PVE's `migrate_downtime`. */
  readonly maxDowntimeSeconds: number;
  /** Bytes a guest dirties per second per core it keeps busy (≥ 0): the dirty rate follows the guest's activity. */
  readonly dirtyBytesPerCoreSecond: number;
  /** Cores the transfer itself keeps busy on the source and on the target each, while it runs (≥ 0). */
  readonly transferCpuCores: number;
  /** Whether QEMU's auto-converge throttles a guest that dirties memory faster than it is copied. */
  readonly autoConverge: boolean;
  /** auto-converge's first throttle, a share of the guest's vCPU time, 0..1 (`cpu-throttle-initial`). */
  readonly throttleInitial: number;
  /** auto-converge's step, 0..1 (`cpu-throttle-increment`). */
  readonly throttleIncrement: number;
  /** auto-converge's ceiling, 0..1 (QEMU caps it at 99 %). */
  readonly throttleMax: number;
  /** A migration still copying this long after its copy began fails, seconds (> 0); the guest stays on the source. */
  readonly timeoutSeconds: number;
  /** Share of the guest's cpu time lost for the whole migration (dirty-page tracking, exits), 0..1. */
  readonly degradationShare: number;
  /** Fixed time before the copy starts (tunnel, target process, device state), seconds (≥ 0). */
  readonly setupSeconds: number;
}

/**
 * Defaults and their sources:
 * - `linkBytesPerSecond` 1000 MiB/s: a 10 Gbit/s migration network (1,192 MiB/s on the wire)
 *   less protocol overhead; the simulator's former `bandwidth-mib-per-second` default.
 * - `bwlimitBytesPerSecond` none: PVE sets no migration limit unless `bwlimit: migration=` is
 *   configured (datacenter.cfg(5)).
 * - `maxDowntimeSeconds` 0.1 s: PVE's `migrate_downtime` default (qm(1)); QEMU's own default
 *   `downtime-limit` is 0.3 s.
 * - `dirtyBytesPerCoreSecond` 32 MiB/s: judgement. Clark et al. (NSDI 2005, "Live migration of
 *   virtual machines") measure writable working sets of busy servers at tens of MiB/s; the
 *   dirty rate is taken to grow with the cores the guest keeps busy.
 * - `transferCpuCores` 1: PVE's default migration type `secure` tunnels the stream through ssh,
 *   one single-threaded cipher process on each side (datacenter.cfg(5) `migration: type=`).
 * - `autoConverge` on, throttle 20 % then +10 % steps up to 99 %: QEMU's `auto-converge`
 *   capability and its `cpu-throttle-initial` / `cpu-throttle-increment` defaults
 *   (qemu `migration/options.c`), raised after two rounds in which the guest dirtied more than
 *   half of what was copied (`throttle-trigger-threshold` 50 %, qemu `migration/ram.c`).
 * - `timeoutSeconds` 3600: judgement, an hour; QEMU itself never gives up.
 * - `degradationShare` 0.1: Beloglazov & Buyya (CCPE 2012, "Optimal online deterministic
 *   algorithms ... for energy and performance efficient dynamic consolidation") charge 10 % of
 *   the guest's cpu for the migration time.
 * - `setupSeconds` 2: judgement (ssh tunnel, target QEMU start, device state at the end).
 */
export const MIGRATION_DEFAULTS: MigrationSettings = {
  linkBytesPerSecond: 1000 * 1024 ** 2,
  bwlimitBytesPerSecond: null,
  maxDowntimeSeconds: 0.1,
  dirtyBytesPerCoreSecond: 32 * 1024 ** 2,
  transferCpuCores: 1,
  autoConverge: true,
  throttleInitial: 0.2,
  throttleIncrement: 0.1,
  throttleMax: 0.99,
  timeoutSeconds: 3600,
  degradationShare: 0.1,
  setupSeconds: 2,
};

/** The share of a dirty round (dirtied / copied) above which auto-converge counts the round as "high" (QEMU: 50 %). */
const THROTTLE_TRIGGER_SHARE = 0.5;
/** auto-converge raises the throttle after this many high rounds (QEMU: `dirty_rate_high_cnt >= 2`). */
const THROTTLE_TRIGGER_ROUNDS = 2;
/** A safety bound on the rounds walked (a broken invariant past it, not an outcome). */
const MIGRATION_MAX_ROUNDS = 100_000;
/** The largest quantity accepted (bytes, cores, seconds): 2^53. */
const LIMIT = 2 ** 53;

/** One migration to price. */
export interface MigrationInput {
  /** The guest's memory the migration copies, bytes (finite, ≥ 0). */
  readonly memBytes: number;
  /** Cores the guest keeps busy (finite, ≥ 0): its dirty rate is `dirtyBytesPerCoreSecond` times this. */
  readonly cpuCores: number;
  /** The guest's virtual cpus (an integer ≥ 1): its activity is `min(1, cpuCores / vcpus)`. */
  readonly vcpus: number;
  /** Migrations (this one included) using the source's link at the same time (an integer ≥ 1; default 1). */
  readonly sourceMigrations?: number;
  /** ... and the target's (an integer ≥ 1; default 1). */
  readonly targetMigrations?: number;
}

/** What one migration costs (see {@link estimateMigration}). */
export interface MigrationEstimate {
  /** false: it was still copying at the timeout and failed; the guest stays on the source. */
  readonly converged: boolean;
  /** Pre-copy rounds before the stop-and-copy (`n`; the first full copy is round 0). */
  readonly rounds: number;
  /** The transfer rate it got, bytes per second: the link shared by the migrations at both ends, and the bwlimit. */
  readonly rateBytesPerSecond: number;
  /** The guest's dirty rate before any throttle, bytes per second. */
  readonly dirtyBytesPerSecond: number;
  /** `dirty / rate` before any throttle. */
  readonly lambda: number;
  /** Bytes sent (every round, the stop-and-copy included). */
  readonly transferredBytes: number;
  /** From the start to the switch-over (or the failure), seconds: set-up plus the copy plus the pause. */
  readonly durationSeconds: number;
  /** The guest's pause at the switch-over, seconds (0 when it failed). */
  readonly downtimeSeconds: number;
  /** The throttle auto-converge reached, 0..1 (0: none). */
  readonly throttle: number;
  /** Guest-seconds of cpu the throttle took from the guest (its activity × throttle × round time). */
  readonly throttleSeconds: number;
  /**
   * What the migrated guest pays, guest-seconds: `degradationShare × activity × duration` (the
   * guest slowed while it migrates) + the pause (it waits the whole pause) + `throttleSeconds`.
   */
  readonly guestSeconds: number;
  /** Cores the transfer keeps busy on the source while it runs (and as many on the target). */
  readonly transferCpuCores: number;
}

function argumentError(field: string, expected: string, value: unknown): ContentionError {
  return new ContentionError('invalid-argument', `${field} must be ${expected}, got ${showValue(value)}`);
}

function optionsError(field: string, expected: string, value: unknown): ContentionError {
  return new ContentionError('invalid-options', `migration.${field} must be ${expected}, got ${showValue(value)}`);
}

const finiteIn = (v: unknown, lo: number, hi: number, loOpen = false): v is number =>
  typeof v === 'number' && Number.isFinite(v) && (loOpen ? v > lo : v >= lo) && v <= hi;

/**
 * Fills the defaults into `settings` and checks every field; throws {@link ContentionError}
 * `invalid-options` naming `migration.<field>` and the value.
 */
export function migrationSettings(settings: Partial<MigrationSettings> = {}): MigrationSettings {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings))
    throw new ContentionError('invalid-options', `migration must be an object, got ${showValue(settings)}`);
  for (const key of Object.keys(settings))
    if (!Object.hasOwn(MIGRATION_DEFAULTS, key))
      throw new ContentionError(
        'invalid-options',
        `migration.${key} is not a setting (${Object.keys(MIGRATION_DEFAULTS).join(', ')})`,
      );
  const s = { ...MIGRATION_DEFAULTS, ...settings };
  const positive = ['linkBytesPerSecond', 'maxDowntimeSeconds', 'timeoutSeconds'] as const;
  for (const key of positive)
    if (!finiteIn(s[key], 0, LIMIT, true)) throw optionsError(key, 'a finite number > 0 and ≤ 2^53', s[key]);
  for (const key of ['dirtyBytesPerCoreSecond', 'transferCpuCores', 'setupSeconds'] as const)
    if (!finiteIn(s[key], 0, LIMIT)) throw optionsError(key, 'a finite number from 0 to 2^53', s[key]);
  for (const key of ['throttleInitial', 'throttleIncrement', 'throttleMax', 'degradationShare'] as const)
    if (!finiteIn(s[key], 0, 1)) throw optionsError(key, 'a share from 0 to 1', s[key]);
  if (s.bwlimitBytesPerSecond !== null && !finiteIn(s.bwlimitBytesPerSecond, 0, LIMIT, true))
    throw optionsError('bwlimitBytesPerSecond', 'null or a finite number > 0 and ≤ 2^53', s.bwlimitBytesPerSecond);
  if (typeof s.autoConverge !== 'boolean') throw optionsError('autoConverge', 'true or false', s.autoConverge);
  if (s.throttleInitial > s.throttleMax)
    throw optionsError('throttleInitial', `at most throttleMax (${s.throttleMax})`, s.throttleInitial);
  return s;
}

/**
 * The rate one migration gets: its source's and its target's link shared equally by the
 * migrations using each (`sourceMigrations`, `targetMigrations` ≥ 1), and capped by the bwlimit.
 */
export function migrationRate(settings: MigrationSettings, sourceMigrations = 1, targetMigrations = 1): number {
  const link = settings.linkBytesPerSecond;
  const shared = Math.min(link / sourceMigrations, link / targetMigrations);
  return settings.bwlimitBytesPerSecond === null ? shared : Math.min(shared, settings.bwlimitBytesPerSecond);
}

function checkInput(input: MigrationInput): void {
  if (typeof input !== 'object' || input === null) throw argumentError('migration', 'an object', input);
  if (!finiteIn(input.memBytes, 0, LIMIT))
    throw argumentError('migration.memBytes', 'a finite number from 0 to 2^53', input.memBytes);
  if (!finiteIn(input.cpuCores, 0, LIMIT))
    throw argumentError('migration.cpuCores', 'a finite number from 0 to 2^53', input.cpuCores);
  if (!Number.isInteger(input.vcpus) || input.vcpus < 1 || input.vcpus > LIMIT)
    throw argumentError('migration.vcpus', 'an integer ≥ 1', input.vcpus);
  for (const key of ['sourceMigrations', 'targetMigrations'] as const) {
    const v = input[key];
    if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > LIMIT))
      throw argumentError(`migration.${key}`, 'an integer ≥ 1', v);
  }
}

/**
 * Prices one live migration under `settings` (checked by {@link migrationSettings}; pass its
 * result). Walks the pre-copy rounds: round `i` copies what is dirty (`vᵢ`, the whole memory at
 * first) in `vᵢ / R` seconds while the guest dirties `D·(1 − throttle)` per second, at most its
 * memory; once `vᵢ ≤ R·maxDowntime` that rest is copied with the guest paused. auto-converge
 * counts rounds dirtying more than half of what they copied and raises the throttle every
 * second such round. A migration still copying `timeoutSeconds` after its copy began fails.
 * Throws {@link ContentionError} `invalid-argument` naming the bad field; never NaN.
 */
export function estimateMigration(settings: MigrationSettings, input: MigrationInput): MigrationEstimate {
  checkInput(input);
  const rate = migrationRate(settings, input.sourceMigrations ?? 1, input.targetMigrations ?? 1);
  const memory = input.memBytes;
  const dirty = settings.dirtyBytesPerCoreSecond * input.cpuCores;
  const activity = Math.min(1, input.cpuCores / input.vcpus);
  const stopBytes = rate * settings.maxDowntimeSeconds;
  let pending = memory;
  let transferred = 0;
  let elapsed = settings.setupSeconds;
  let throttle = 0;
  let throttleSeconds = 0;
  let high = 0;
  let rounds = 0;
  let converged = true;
  let downtime = 0;
  for (;;) {
    if (pending <= stopBytes) {
      downtime = pending / rate;
      transferred += pending;
      elapsed += downtime;
      break;
    }
    let seconds = pending / rate;
    if (elapsed - settings.setupSeconds + seconds >= settings.timeoutSeconds) {
      // the copy is cut at the timeout: what was sent until then counts, the guest stays
      seconds = Math.max(0, settings.timeoutSeconds - (elapsed - settings.setupSeconds));
      transferred += seconds * rate;
      throttleSeconds += activity * throttle * seconds;
      elapsed += seconds;
      converged = false;
      break;
    }
    transferred += pending;
    elapsed += seconds;
    throttleSeconds += activity * throttle * seconds;
    const dirtied = Math.min(memory, dirty * (1 - throttle) * seconds);
    if (settings.autoConverge && dirtied > THROTTLE_TRIGGER_SHARE * pending) {
      high++;
      if (high >= THROTTLE_TRIGGER_ROUNDS) {
        high = 0;
        throttle =
          throttle === 0
            ? settings.throttleInitial
            : Math.min(settings.throttleMax, throttle + settings.throttleIncrement);
      }
    }
    pending = dirtied;
    rounds++;
    if (rounds > MIGRATION_MAX_ROUNDS)
      throw new ContentionError(
        'invalid-argument',
        `migration did not end within ${MIGRATION_MAX_ROUNDS} rounds (memBytes ${memory}, rate ${rate})`,
      );
  }
  return {
    converged,
    rounds,
    rateBytesPerSecond: rate,
    dirtyBytesPerSecond: dirty,
    lambda: dirty / rate,
    transferredBytes: transferred,
    durationSeconds: elapsed,
    downtimeSeconds: downtime,
    throttle,
    throttleSeconds,
    guestSeconds: settings.degradationShare * activity * elapsed + downtime + throttleSeconds,
    transferCpuCores: settings.transferCpuCores,
  };
}

/**
 * Liu et al.'s closed form for `λ < 1` without throttling, the reference the walk is tested
 * against: `n = max(0, ⌈log(R·T_max / M) / log λ⌉)` pre-copy rounds, `M·(1 − λⁿ⁺¹)/(1 − λ)`
 * bytes, a pause of `M·λⁿ / R`. `memBytes` > 0, `0 ≤ lambda < 1`, rate and pause > 0.
 */
export function preCopyClosedForm(
  memBytes: number,
  lambda: number,
  rateBytesPerSecond: number,
  maxDowntimeSeconds: number,
): { rounds: number; transferredBytes: number; downtimeSeconds: number } {
  if (!finiteIn(memBytes, 0, LIMIT, true)) throw argumentError('memBytes', 'a finite number > 0', memBytes);
  if (!finiteIn(lambda, 0, 1) || lambda >= 1) throw argumentError('lambda', 'a number from 0 to below 1', lambda);
  if (!finiteIn(rateBytesPerSecond, 0, LIMIT, true))
    throw argumentError('rateBytesPerSecond', 'a finite number > 0', rateBytesPerSecond);
  if (!finiteIn(maxDowntimeSeconds, 0, LIMIT, true))
    throw argumentError('maxDowntimeSeconds', 'a finite number > 0', maxDowntimeSeconds);
  const stop = rateBytesPerSecond * maxDowntimeSeconds;
  let rounds = 0;
  if (memBytes > stop) rounds = lambda === 0 ? 1 : Math.max(1, Math.ceil(Math.log(stop / memBytes) / Math.log(lambda)));
  // guard the float edge of the logarithm: the smallest n with M·λⁿ ≤ stop
  while (rounds > 0 && memBytes * lambda ** (rounds - 1) <= stop) rounds--;
  while (memBytes * lambda ** rounds > stop) rounds++;
  return {
    rounds,
    transferredBytes: (memBytes * (1 - lambda ** (rounds + 1))) / (1 - lambda),
    downtimeSeconds: (memBytes * lambda ** rounds) / rateBytesPerSecond,
  };
}

/** A finished migration as the cluster reports it (PVE: a `qmigrate` task and its log). */
export interface MigrationTask {
  /** From the task's start to its end, seconds (finite, > 0). */
  readonly durationSeconds: number;
  /** Memory sent, bytes (finite, ≥ 0). */
  readonly transferredBytes: number;
}

/** Finished migrations needed before they set the link rate (fewer: the settings' own). */
const MIGRATION_TASKS_MIN = 3;
/** The newest finished migrations the rate is learned from. */
const MIGRATION_TASKS_KEPT = 20;

/**
 * The settings with the link rate learned from the cluster's finished migrations: the median
 * over the newest `MIGRATION_TASKS_KEPT` of `transferredBytes / (durationSeconds −
 * setupSeconds)` (a task shorter than its set-up counts at one second of copy), once at least
 * `MIGRATION_TASKS_MIN` are known; else `settings` as they are. A rate measured while
 * other migrations shared the link is low: the estimate errs on the side of dear moves.
 * Throws `invalid-argument` naming `tasks.<i>.<field>` for a bad task (callers that read
 * tasks from a cluster skip those with a warning before).
 */
export function learnMigrationSettings(
  settings: MigrationSettings,
  tasks: readonly MigrationTask[],
): { readonly settings: MigrationSettings; readonly learnedFrom: number } {
  if (!Array.isArray(tasks)) throw argumentError('tasks', 'an array', tasks);
  const rates: number[] = [];
  (tasks as readonly unknown[]).forEach((value, i) => {
    const t = value as MigrationTask;
    if (typeof t !== 'object' || t === null) throw argumentError(`tasks.${i}`, 'an object', t);
    if (!finiteIn(t.durationSeconds, 0, LIMIT, true))
      throw argumentError(`tasks.${i}.durationSeconds`, 'a finite number > 0', t.durationSeconds);
    if (!finiteIn(t.transferredBytes, 0, LIMIT))
      throw argumentError(`tasks.${i}.transferredBytes`, 'a finite number from 0 to 2^53', t.transferredBytes);
    rates.push(t.transferredBytes / Math.max(1, t.durationSeconds - settings.setupSeconds));
  });
  const recent = rates.slice(-MIGRATION_TASKS_KEPT).filter((r) => r > 0);
  if (recent.length < MIGRATION_TASKS_MIN) return { settings, learnedFrom: 0 };
  recent.sort((a, b) => a - b);
  const mid = recent.length >> 1;
  const rate = recent.length % 2 === 1 ? recent[mid]! : (recent[mid - 1]! + recent[mid]!) / 2;
  return { settings: { ...settings, linkBytesPerSecond: Math.min(LIMIT, rate) }, learnedFrom: recent.length };
}
