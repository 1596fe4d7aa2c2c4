import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { errorMessage } from '../errors';
import { writeAtomically } from './state';

/** Marks a file as a drain's progress record. */
const DRAIN_PROGRESS_FORMAT = 'poise-drain-progress';
/** The record version this build writes and reads. */
const DRAIN_PROGRESS_VERSION = 1;
/** The record's file name, beside the daemon's `state.file`. */
const DRAIN_PROGRESS_FILE = 'drain-progress.json';

/** Where a drain writes its progress and the daemon's status page reads it: beside `state.file`. */
export function drainProgressPath(statePath: string): string {
  return join(dirname(statePath), DRAIN_PROGRESS_FILE);
}

/** Ended motions a record keeps (the newest): enough for a daemon that reads it every round to see each one. */
const DRAIN_PROGRESS_ENDED_MAX = 256;

/** A motion of the drain in flight. */
export interface DrainMotionInFlight {
  readonly sid: string;
  readonly source: string;
  readonly target: string;
  /** Seconds (the drain's clock) it was requested. */
  readonly since: number;
  /** How it is followed (`ha`: through the HA manager, `guest`: a migration task); absent in records of older drains. */
  readonly via?: 'ha' | 'guest' | undefined;
}

/** A motion of the drain that ended. */
interface DrainMotionEnded extends DrainMotionInFlight {
  /** Seconds (the drain's clock) it ended. */
  readonly endedAt: number;
  readonly ok: boolean;
}

/**
 * The progress of a `poise-manager drain --execute`, rewritten (temporary file, rename) at its
 * start, at each request and outcome, and at its end. Plain JSON; times in seconds of the
 * drain's clock (epoch seconds on a real cluster).
 */
export interface DrainProgress {
  readonly format: typeof DRAIN_PROGRESS_FORMAT;
  readonly version: typeof DRAIN_PROGRESS_VERSION;
  /** The drain process and the host it runs on (a reader on that host can tell whether it still runs). */
  readonly pid: number;
  readonly hostname: string;
  /** The nodes being drained. */
  readonly nodes: readonly string[];
  /** `running` until it ends: `done` (every motion succeeded) or `stopped` (`message` says why). */
  readonly state: 'running' | 'done' | 'stopped';
  readonly startedAt: number;
  readonly updatedAt: number;
  /** Motions in the plan, and how many ended each way so far. */
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly inFlight: readonly DrainMotionInFlight[];
  /**
   * The newest motions that ended (at most {@link DRAIN_PROGRESS_ENDED_MAX}, oldest first), so
   * that the daemon books each one (`drain-booking.ts`); absent in records of older drains.
   */
  readonly ended?: readonly DrainMotionEnded[] | undefined;
  /** The drain's last line (`step 2: migrate vm:102 from node1 to node3 …`, `drain stopped after …`). */
  readonly message: string;
}

const finite = z.number().refine(Number.isFinite, { error: 'expected a finite number' });
const count = z.number().int().min(0);
const motionShape = {
  sid: z.string(),
  source: z.string(),
  target: z.string(),
  since: finite,
  via: z.enum(['ha', 'guest']).optional(),
};
const progressSchema = z.strictObject({
  format: z.literal(DRAIN_PROGRESS_FORMAT),
  version: z.literal(DRAIN_PROGRESS_VERSION),
  pid: z.number().int().positive(),
  hostname: z.string(),
  nodes: z.array(z.string()),
  state: z.enum(['running', 'done', 'stopped']),
  startedAt: finite,
  updatedAt: finite,
  total: count,
  succeeded: count,
  failed: count,
  inFlight: z.array(z.strictObject(motionShape)),
  ended: z
    .array(z.strictObject({ ...motionShape, endedAt: finite, ok: z.boolean() }))
    .max(DRAIN_PROGRESS_ENDED_MAX)
    .optional(),
  message: z.string(),
});

/** What the motions of a drain's run before (followed to their end by a resumed run) add to its counts. */
export interface DrainCarried {
  /** The record the run before left (same nodes, not done), or undefined. */
  readonly record: DrainProgress | undefined;
  /** Motions of that run that the resumed run followed to their end: how many succeeded and failed. */
  readonly succeeded: number;
  readonly failed: number;
}

/**
 * The record of an earlier run of the same drain that a new run continues: one of the same
 * nodes (in any order) that did not end `done` (it stopped, or was killed while `running`);
 * undefined otherwise (no record, another drain's, a finished one, a file that is no record).
 */
export function unfinishedDrain(path: string, nodes: readonly string[]): DrainProgress | undefined {
  const read = readDrainProgress(path);
  if (read.kind !== 'record' || read.progress.state === 'done') return undefined;
  const key = (list: readonly string[]) => JSON.stringify([...list].sort());
  return key(read.progress.nodes) === key(nodes) ? read.progress : undefined;
}

/**
 * Writes a drain's progress record. Writing never stops the drain: the first failure is handed
 * to `onError` (the drain logs it once) and nothing more is written. A drain run again after it
 * stopped or was killed continues the record of the run before (`carried`): its start, its
 * counts, the motions that ended since, and its total grown by this run's plan; so the counts
 * and the closing line are those of the whole drain.
 */
export class DrainProgressWriter {
  private record: DrainProgress;
  private failed = false;

  constructor(
    private readonly path: string,
    start: {
      readonly nodes: readonly string[];
      readonly total: number;
      readonly at: number;
      readonly message: string;
      readonly carried?: DrainCarried | undefined;
    },
    private readonly onError: (message: string) => void,
  ) {
    const before = start.carried?.record;
    const succeeded = (before?.succeeded ?? 0) + (start.carried?.succeeded ?? 0);
    const failed = (before?.failed ?? 0) + (start.carried?.failed ?? 0);
    this.record = {
      format: DRAIN_PROGRESS_FORMAT,
      version: DRAIN_PROGRESS_VERSION,
      pid: process.pid,
      hostname: hostname(),
      nodes: [...start.nodes],
      state: 'running',
      startedAt: before?.startedAt ?? start.at,
      updatedAt: start.at,
      total: succeeded + failed + start.total,
      succeeded,
      failed,
      inFlight: [],
      ended: [...(before?.ended ?? [])],
      message: start.message,
    };
    this.write();
  }

  /** Motions of the drain's runs before this one that ended, succeeded (0 for a drain that starts afresh). */
  get carriedSucceeded(): number {
    return this.record.succeeded - this.runSucceeded;
  }

  private runSucceeded = 0;

  /** The record as last written (or as it would have been). */
  get current(): DrainProgress {
    return this.record;
  }

  /** A motion was requested. */
  requested(motion: Omit<DrainMotionInFlight, 'since'>, at: number, message: string): void {
    this.update({ inFlight: [...this.record.inFlight, { ...motion, since: at }], updatedAt: at, message });
  }

  /** A motion ended. */
  ended(sid: string, ok: boolean, at: number, message: string): void {
    const motion = this.record.inFlight.find((m) => m.sid === sid);
    if (ok) this.runSucceeded++;
    this.update({
      inFlight: this.record.inFlight.filter((m) => m.sid !== sid),
      ...(motion === undefined
        ? {}
        : { ended: [...(this.record.ended ?? []), { ...motion, endedAt: at, ok }].slice(-DRAIN_PROGRESS_ENDED_MAX) }),
      succeeded: this.record.succeeded + (ok ? 1 : 0),
      failed: this.record.failed + (ok ? 0 : 1),
      updatedAt: at,
      message,
    });
  }

  /** The drain ended. */
  finished(state: 'done' | 'stopped', at: number, message: string): void {
    this.update({ state, updatedAt: at, message });
  }

  private update(change: Partial<DrainProgress>): void {
    this.record = { ...this.record, ...change };
    this.write();
  }

  private write(): void {
    if (this.failed) return;
    try {
      writeAtomically(this.path, `${JSON.stringify(this.record)}\n`);
    } catch (err) {
      this.failed = true;
      const why = err instanceof Error && err.cause !== undefined ? err.cause : err;
      this.onError(`cannot write the drain's progress to '${this.path}': ${errorMessage(why)}; the drain goes on`);
    }
  }
}

/** What a reader finds: no record, a record (with whether its process is gone), or a file that is no record. */
export type DrainProgressRead =
  | { readonly kind: 'none' }
  | { readonly kind: 'record'; readonly progress: DrainProgress; readonly processGone: boolean }
  | { readonly kind: 'invalid'; readonly problem: string };

/** Whether a process runs on this host (signal 0; EPERM: it runs as another user). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Reads a drain's progress record. A `running` record of a process on this host that no longer
 * runs is `processGone` (the drain was killed); one of another host cannot be checked and is
 * shown as written. A file that is not a record names the file and the field.
 */
export function readDrainProgress(path: string, runs: (pid: number) => boolean = processRuns): DrainProgressRead {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none' };
    return { kind: 'invalid', problem: `cannot read '${path}': ${errorMessage(err)}` };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { kind: 'invalid', problem: `'${path}' is not valid JSON: ${errorMessage(err)}` };
  }
  const parsed = progressSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? issue.path.join('.') : '(the document)';
    return { kind: 'invalid', problem: `'${path}' is not a drain progress record: field '${field}': ${issue.message}` };
  }
  const progress = parsed.data as DrainProgress;
  const processGone = progress.state === 'running' && progress.hostname === hostname() && !runs(progress.pid);
  return { kind: 'record', progress, processGone };
}
