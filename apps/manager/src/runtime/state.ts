import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ManagerError } from '../errors';
import type { MotionRecord } from '../cluster/port';

/** Marks a file as poise-manager state. */
export const STATE_FORMAT = 'poise-manager-state';
/** The state file version this build reads and writes. */
export const STATE_VERSION = 1;
/** Motion outcomes kept for the policy stages and the status (newest last). */
export const MAX_KEPT_OUTCOMES = 50;

/** The outcome of a motion the daemon issued (fed to the policy's backoff at integration). */
export interface MotionOutcome {
  readonly sid: string;
  readonly source: string;
  readonly target: string;
  readonly via: 'ha' | 'guest';
  readonly result: 'succeeded' | 'failed';
  /** Why it failed (`undefined` on success). */
  readonly reason: string | undefined;
  /** Seconds (the daemon's clock) when the outcome was known. */
  readonly at: number;
}

/**
 * A motion outcome the policy has not been told yet (its `MotionOutcome` without the time: it
 * is reported with the `now` of the round that reports it, so outcome times only grow, even
 * for a refusal learned after the round's pipeline ran). Reported exactly once: cleared in the
 * same state write that stores the pipeline state which saw it.
 */
interface UnreportedOutcome {
  readonly resources: readonly string[];
  readonly source: string;
  readonly target: string;
  readonly ok: boolean;
  readonly detail: string | undefined;
}

/** Everything the daemon keeps across restarts. Plain JSON. */
export interface DaemonState {
  /** The policy pipeline's per-stage state (hold counter; backoff, cooldown, smoothing later). */
  readonly pipeline: Readonly<Record<string, unknown>>;
  /** The motion in flight, followed (never re-issued) after a restart. */
  readonly motion: MotionRecord | null;
  /** When motions were issued (seconds), within the last hour, for `max-motions-per-hour`. */
  readonly motionsIssuedAt: readonly number[];
  readonly outcomes: readonly MotionOutcome[];
  /** Outcomes not yet handed to the policy (see {@link UnreportedOutcome}). */
  readonly unreported: readonly UnreportedOutcome[];
}

export function initialState(): DaemonState {
  return { pipeline: {}, motion: null, motionsIssuedAt: [], outcomes: [], unreported: [] };
}

const finite = z.number().refine(Number.isFinite);
const motionSchema = z.strictObject({
  sid: z.string(),
  // files written before bundles were followed lack it: the motion of the sid alone
  resources: z.array(z.string()).min(1).optional(),
  kind: z.enum(['migrate', 'relocate']),
  via: z.enum(['ha', 'guest']),
  source: z.string(),
  target: z.string(),
  issuedAt: finite,
  phase: z.enum(['requesting', 'queued', 'moving']),
  haUid: z.string().optional(),
  task: z.string().optional(),
  imbalanceBefore: finite,
  imbalanceAfter: finite,
});
const outcomeSchema = z.strictObject({
  sid: z.string(),
  source: z.string(),
  target: z.string(),
  via: z.enum(['ha', 'guest']),
  result: z.enum(['succeeded', 'failed']),
  reason: z.string().optional(),
  at: finite,
});
const fileSchema = z.strictObject({
  format: z.literal(STATE_FORMAT),
  version: z.literal(STATE_VERSION),
  savedAt: z.string(),
  pipeline: z.record(z.string(), z.unknown()),
  motion: motionSchema.nullable(),
  motionsIssuedAt: z.array(finite),
  outcomes: z.array(outcomeSchema),
  unreported: z
    .array(
      z.strictObject({
        resources: z.array(z.string()).min(1),
        source: z.string(),
        target: z.string(),
        ok: z.boolean(),
        detail: z.string().optional(),
      }),
    )
    .optional(),
});

/** The result of loading: the state and what to report about it. */
export interface LoadedState {
  readonly state: DaemonState;
  /** `missing`: no file yet; `loaded`; `corrupt`: set aside (see `setAsidePath`) and started afresh. */
  readonly status: 'missing' | 'loaded' | 'corrupt';
  readonly problem?: string;
  readonly setAsidePath?: string;
}

function compactStamp(seconds: number): string {
  return new Date(seconds * 1000)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/**
 * The state file: written atomically (temporary file in the same directory, fsync, rename,
 * fsync of the directory) and only when its content changed. Reading refuses a file of another
 * version (never guesses); a file that is not valid state is renamed aside with a timestamp
 * (`state.json.corrupt-20260501T120000Z`) and reported, never silently reset.
 */
export class StateStore {
  private lastWritten: string | undefined;

  constructor(
    readonly path: string,
    private readonly now: () => number,
  ) {}

  /** Reads the file; a corrupt one is moved aside unless `setAside` is false (a read-only reader). */
  load(options: { setAside?: boolean } = {}): LoadedState {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { state: initialState(), status: 'missing' };
      throw new ManagerError('state', `cannot read the state file '${this.path}' (${code ?? String(err)})`, {
        cause: err,
      });
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      return this.corrupt(`not JSON (${(err as Error).message})`, options.setAside !== false);
    }
    if (doc !== null && typeof doc === 'object' && (doc as { format?: unknown }).format === STATE_FORMAT) {
      const version = (doc as { version?: unknown }).version;
      if (version !== STATE_VERSION) {
        throw new ManagerError(
          'state',
          `the state file '${this.path}' has version ${JSON.stringify(version)}; this poise-manager reads version ${STATE_VERSION} only. ` +
            'Run the poise-manager that wrote it, or move the file away to start without its state (a motion in flight is then not followed)',
        );
      }
    }
    const parsed = fileSchema.safeParse(doc);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return this.corrupt(
        `'${issue.path.join('.') || '(top level)'}' is invalid (${issue.message})`,
        options.setAside !== false,
      );
    }
    const f = parsed.data;
    this.lastWritten = text;
    return {
      status: 'loaded',
      state: {
        pipeline: f.pipeline,
        motion:
          f.motion === null
            ? null
            : { ...f.motion, resources: f.motion.resources ?? [f.motion.sid], task: f.motion.task },
        motionsIssuedAt: f.motionsIssuedAt,
        outcomes: f.outcomes.map((o) => ({ ...o, reason: o.reason })),
        unreported: (f.unreported ?? []).map((o) => ({ ...o, detail: o.detail })),
      },
    };
  }

  private corrupt(problem: string, setAside: boolean): LoadedState {
    return setAside ? this.setAside(problem) : { state: initialState(), status: 'corrupt', problem };
  }

  private setAside(problem: string): LoadedState {
    const aside = `${this.path}.corrupt-${compactStamp(this.now())}`;
    try {
      renameSync(this.path, aside);
    } catch (err) {
      throw new ManagerError(
        'state',
        `the state file '${this.path}' is corrupt (${problem}) and cannot be moved aside: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    return { state: initialState(), status: 'corrupt', problem, setAsidePath: aside };
  }

  /**
   * Keeps a pipeline state the policy refused (corrupt stage states) in a file beside the state
   * file, `state.json.pipeline-corrupt-<UTC time>`, and returns its path.
   */
  setAsidePipeline(pipeline: unknown): string {
    const aside = `${this.path}.pipeline-corrupt-${compactStamp(this.now())}`;
    writeAtomically(aside, `${JSON.stringify(pipeline, null, 1)}\n`);
    return aside;
  }

  /** Writes the state if it changed since the last load or save. Returns whether it wrote. */
  save(state: DaemonState): boolean {
    const body = {
      pipeline: state.pipeline,
      motion: state.motion,
      motionsIssuedAt: state.motionsIssuedAt,
      outcomes: state.outcomes.slice(-MAX_KEPT_OUTCOMES),
      unreported: state.unreported,
    };
    const comparable = JSON.stringify(body);
    if (this.lastWritten !== undefined && stripSavedAt(this.lastWritten) === comparable) return false;
    const text = `${JSON.stringify({ format: STATE_FORMAT, version: STATE_VERSION, savedAt: new Date(this.now() * 1000).toISOString(), ...body }, null, 1)}\n`;
    writeAtomically(this.path, text);
    this.lastWritten = text;
    return true;
  }
}

function stripSavedAt(text: string): string | undefined {
  try {
    const { format: _f, version: _v, savedAt: _s, ...body } = JSON.parse(text) as Record<string, unknown>;
    return JSON.stringify({
      pipeline: body.pipeline,
      motion: body.motion,
      motionsIssuedAt: body.motionsIssuedAt,
      outcomes: body.outcomes,
      unreported: body.unreported,
    });
  } catch {
    return undefined;
  }
}

/** Write temp + fsync + rename + fsync(dir): a reader sees the old or the new file, never a torn one. */
export function writeAtomically(path: string, text: string): void {
  const dir = dirname(path);
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing was created
    }
    throw new ManagerError('state', `cannot write the state file '${path}': ${(err as Error).message}`, { cause: err });
  }
  try {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // some file systems (pmxcfs among them) refuse fsync on a directory; the rename is done
  }
}
