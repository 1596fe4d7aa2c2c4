/**
 * What a finished live migration's task log (`qmigrate`, `GET /nodes/{node}/tasks/{upid}/log`)
 * says about its cost: how long it took and how much memory it sent. The lines read (as
 * qemu-server writes them, each after a `YYYY-MM-DD HH:MM:SS ` time stamp):
 *
 * - `migration active, transferred 1.2 GiB of 4.0 GiB VM-state, 112.0 MiB/s` (repeated while it
 *   copies; the counter is cumulative, every pre-copy round included): the largest is the volume;
 * - `migration finished successfully (duration 00:00:44)`: the duration;
 * - a log without that line did not finish successfully (or is not a migration's).
 *
 * Sizes are binary (`B`, `KiB`, `MiB`, `GiB`, `TiB`, PVE's `render_bytes`). Pure.
 */

/** What {@link parseMigrationLog} reads from a log. */
export type MigrationLogSummary =
  | {
      readonly ok: true;
      /** From the task's start to its end, seconds (> 0). */
      readonly durationSeconds: number;
      /** Memory sent, bytes: the largest `transferred` figure. */
      readonly transferredBytes: number;
    }
  | {
      readonly ok: false;
      /** Why the log says nothing usable, for a warning naming the task. */
      readonly reason: string;
    };

const UNITS: Readonly<Record<string, number>> = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 };
const TRANSFERRED = /migration active, transferred (\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB) of /;
const FINISHED = /migration finished successfully \(duration (\d+):([0-5]\d):([0-5]\d)\)/;

/**
 * Reads a `qmigrate` task log (its lines' texts, in order; see the module comment). Returns the
 * duration and volume, or `ok: false` with the reason (no successful end, no transfer line, a
 * duration of 0) — never a guess.
 */
export function parseMigrationLog(lines: readonly string[]): MigrationLogSummary {
  if (!Array.isArray(lines)) return { ok: false, reason: 'the log is not a list of lines' };
  let transferred: number | undefined;
  let duration: number | undefined;
  for (const line of lines) {
    if (typeof line !== 'string') continue;
    const t = TRANSFERRED.exec(line);
    if (t) {
      const bytes = Number(t[1]) * UNITS[t[2]!]!;
      if (Number.isFinite(bytes) && (transferred === undefined || bytes > transferred)) transferred = bytes;
      continue;
    }
    const f = FINISHED.exec(line);
    if (f) duration = Number(f[1]) * 3600 + Number(f[2]) * 60 + Number(f[3]);
  }
  if (duration === undefined) return { ok: false, reason: "no 'migration finished successfully (duration …)' line" };
  if (!(duration > 0)) return { ok: false, reason: 'a duration of 0 s' };
  if (transferred === undefined) return { ok: false, reason: "no 'migration active, transferred …' line" };
  return { ok: true, durationSeconds: duration, transferredBytes: Math.round(transferred) };
}
