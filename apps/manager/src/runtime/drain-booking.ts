import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { errorMessage } from '../errors';
import { type DrainProgress, readDrainProgress } from './drain-progress';
import type { MotionLog } from './journal';
import { DRAIN_VIA, type Metrics } from './metrics';
import { writeAtomically } from './state';

/** Marks the daemon's record of the drain motions it booked. */
const BOOKED_FORMAT = 'poise-drain-booked';
const BOOKED_VERSION = 1;
/** Its file name, beside `state.file` (and `drain-progress.json`). */
const BOOKED_FILE = 'drain-booked.json';

/** Where the daemon keeps the drain motions it booked: beside `state.file`. */
export function drainBookedPath(statePath: string): string {
  return join(dirname(statePath), BOOKED_FILE);
}

const bookedSchema = z.strictObject({
  format: z.literal(BOOKED_FORMAT),
  version: z.literal(BOOKED_VERSION),
  /** `<sid>@<since>:requested` and `<sid>@<since>:ended`. */
  keys: z.array(z.string()),
});

/** One motion of a record, requested (and maybe ended). */
interface RecordMotion {
  readonly sid: string;
  readonly source: string;
  readonly target: string;
  readonly since: number;
  readonly ended?: { readonly at: number; readonly ok: boolean };
}

function motionsOf(progress: DrainProgress): RecordMotion[] {
  return [...(progress.ended ?? []).map((m) => ({ ...m, ended: { at: m.endedAt, ok: m.ok } })), ...progress.inFlight];
}

/**
 * Books the motions of a `poise-manager drain` (a process of its own) in the daemon: each motion
 * its progress record (`drain-progress.json`) shows requested becomes an entry of the journal's
 * motions (`via: 'drain'`: the status page's table and charts) and counts in
 * `poise_motions_issued_total{via="drain"}`; each one it shows ended ends that entry and counts
 * in `…_succeeded_total` or `…_failed_total` with the same `via`. Once per motion (by guest and
 * request time) across polls and restarts: what was booked is kept in `drain-booked.json`
 * beside the state file (the keys of the motions the record still shows). A record that cannot
 * be read is left for the status page to report; a booking that cannot be written is said once
 * (`warn`) and the motions are booked again after a restart.
 */
export class DrainBooking {
  private booked: Set<string> | undefined;
  private warned = false;

  constructor(
    private readonly progressPath: string,
    private readonly bookedPath: string,
    private readonly motions: MotionLog,
    private readonly metrics: Metrics,
    private readonly warn: (message: string) => void,
  ) {}

  /** Reads the record and books what is new; returns how many events (requests, outcomes) it booked. */
  poll(): number {
    const read = readDrainProgress(this.progressPath);
    if (read.kind !== 'record') return 0;
    const booked = (this.booked ??= this.load());
    const seen = new Set<string>();
    let events = 0;
    for (const m of motionsOf(read.progress)) {
      const key = `${m.sid}@${m.since}`;
      seen.add(`${key}:requested`);
      if (!booked.has(`${key}:requested`)) {
        this.motions.drainMotion(m);
        this.metrics.motionsIssued.inc({ via: DRAIN_VIA });
        booked.add(`${key}:requested`);
        events++;
      }
      if (m.ended === undefined) continue;
      seen.add(`${key}:ended`);
      if (booked.has(`${key}:ended`)) continue;
      this.motions.drainMotion(m, m.ended);
      (m.ended.ok ? this.metrics.motionsSucceeded : this.metrics.motionsFailed).inc({ via: DRAIN_VIA });
      booked.add(`${key}:ended`);
      events++;
    }
    // keys of motions the record no longer shows are forgotten (the record keeps the newest)
    let pruned = false;
    for (const key of booked)
      if (!seen.has(key)) {
        booked.delete(key);
        pruned = true;
      }
    if (events > 0 || pruned) this.save(booked);
    return events;
  }

  private load(): Set<string> {
    let text: string;
    try {
      text = readFileSync(this.bookedPath, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.warnOnce(`cannot read '${this.bookedPath}': ${errorMessage(err)}; the drain's motions are booked afresh`);
      return new Set();
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      this.warnOnce(
        `'${this.bookedPath}' is not valid JSON (${errorMessage(err)}); the drain's motions are booked afresh`,
      );
      return new Set();
    }
    const parsed = bookedSchema.safeParse(doc);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      this.warnOnce(
        `'${this.bookedPath}' is not a record of booked drain motions (field '${issue.path.join('.') || '(the document)'}': ${issue.message}); they are booked afresh`,
      );
      return new Set();
    }
    return new Set(parsed.data.keys);
  }

  private save(booked: ReadonlySet<string>): void {
    try {
      writeAtomically(
        this.bookedPath,
        `${JSON.stringify({ format: BOOKED_FORMAT, version: BOOKED_VERSION, keys: [...booked] })}\n`,
      );
    } catch (err) {
      const why = err instanceof Error && err.cause !== undefined ? err.cause : err;
      this.warnOnce(
        `cannot write '${this.bookedPath}': ${errorMessage(why)}; the drain's motions are counted, but would be again after a restart`,
      );
    }
  }

  private warnOnce(message: string): void {
    if (this.warned) return;
    this.warned = true;
    this.warn(message);
  }
}
