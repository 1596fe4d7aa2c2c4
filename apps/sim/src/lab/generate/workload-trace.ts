import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { LabError } from '../errors';

/**
 * Real workload traces for `load: {shape: trace}`: one CSV file per day, one line per VM,
 * `name,v0,…,v287`, each value the VM's cpu utilisation in percent over the 5 minutes starting
 * at K × 300 s (the PlanetLab/CoMon format of `../shared/traces/planetlab`, the data set the VM
 * consolidation literature replays).
 */

/** Seconds between two values of a row (the trace's own interval). */
export const TRACE_INTERVAL = 300;
/** Values per row: one day at {@link TRACE_INTERVAL}. */
export const TRACE_VALUES = 86400 / TRACE_INTERVAL;
/** Largest trace file read (a day of 1,516 VMs is 1 MB; this keeps a wrong path from filling memory). */
const MAX_TRACE_BYTES = 256 * 1024 * 1024;

/** A parsed trace file: the rows in file order. */
export interface WorkloadTrace {
  /** The file as read (absolute). */
  file: string;
  /** SHA-256 of the file's bytes (hex): which data a generated case replays, whatever its path. */
  sha256: string;
  names: string[];
  /** `values[r][k]`: row r's cpu utilisation (%) over [k·300, (k+1)·300) s. */
  values: Float64Array[];
}

const VALUE = /^\d+(?:\.\d+)?$/;
const NAME = /^[^\s,"]+$/;

/**
 * Parses a trace file's text. Every problem is a {@link LabError} `bad-params` naming the file,
 * the line and the field: no rows, a row without exactly {@link TRACE_VALUES} values, a value
 * that is not a decimal number in 0..100 (`x`, `-1`, `100.5`, empty), an empty or duplicate name,
 * a blank line, a byte-order mark. Line ends may be `\n` or `\r\n`; the last line may end
 * without one.
 */
export function parseWorkloadTrace(text: string, file: string, sha256 = ''): WorkloadTrace {
  const bad = (line: number, field: string, why: string) =>
    new LabError('bad-params', `'${file}' line ${line}, ${field}: ${why}`);
  if (text.charCodeAt(0) === 0xfeff)
    throw bad(1, 'name', 'a byte-order mark at the start of the file (save it as plain UTF-8)');
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0)
    throw new LabError('bad-params', `'${file}': no rows (expected 'name,v0,…,v${TRACE_VALUES - 1}' per VM)`);
  const names: string[] = [];
  const values: Float64Array[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    let line = lines[i]!;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.trim() === '') throw bad(lineNo, 'name', 'a blank line (expected a row)');
    const fields = line.split(',');
    const name = fields[0]!;
    if (name === '') throw bad(lineNo, 'name', 'empty');
    if (!NAME.test(name)) throw bad(lineNo, 'name', `'${name}' has a space or a quote`);
    const first = seen.get(name);
    if (first !== undefined) throw bad(lineNo, 'name', `'${name}' again (first on line ${first})`);
    seen.set(name, lineNo);
    const n = fields.length - 1;
    if (n !== TRACE_VALUES)
      throw bad(
        lineNo,
        `row '${name}'`,
        `${n} value${n === 1 ? '' : 's'}, expected ${TRACE_VALUES} (one day at ${TRACE_INTERVAL} s)`,
      );
    const row = new Float64Array(TRACE_VALUES);
    for (let k = 0; k < TRACE_VALUES; k++) {
      const s = fields[k + 1]!;
      const v = VALUE.test(s) ? Number(s) : Number.NaN;
      if (!(v >= 0 && v <= 100))
        throw bad(lineNo, `v${k}`, `${JSON.stringify(s)} is not a cpu utilisation in percent (a number in 0..100)`);
      row[k] = v;
    }
    names.push(name);
    values.push(row);
  }
  return { file, sha256, names, values };
}

/**
 * Reads and parses a trace file (checked to be a regular file first: a directory or FIFO is an
 * error, never opened). Errors name the file.
 */
export function readWorkloadTrace(file: string): WorkloadTrace {
  let st;
  try {
    st = statSync(file);
  } catch (err) {
    throw new LabError(
      'bad-params',
      `trace file '${file}': ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
      { cause: err },
    );
  }
  if (!st.isFile()) throw new LabError('bad-params', `trace file '${file}': not a regular file`);
  if (st.size > MAX_TRACE_BYTES)
    throw new LabError('bad-params', `trace file '${file}': ${st.size} bytes, at most ${MAX_TRACE_BYTES}`);
  const bytes = readFileSync(file);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw new LabError('bad-params', `trace file '${file}': not UTF-8 text`, { cause: err });
  }
  return parseWorkloadTrace(text, file, createHash('sha256').update(bytes).digest('hex'));
}

/**
 * Where a trace file is read from in place of the parameter file's: `dir` replaces its directory,
 * `day` its name (`<day>.csv`, or `day` itself when it ends in `.csv`). So the trace corpus runs
 * on another directory (`--trace-dir`) or another day of the same data set (`--trace-day`)
 * without editing a parameter file.
 */
export interface TraceOverride {
  dir?: string;
  day?: string;
}

/**
 * The file a `load.file` names: `path` to read (absolute) and `shown`, what the generated case's
 * `generator.json` records. Without an override the file is absolute or relative to the
 * parameter file's directory (to the working directory for parameters without a file) and shown
 * as written; `day` replaces its name, keeping it relative to the parameter file; `dir` (relative
 * to the working directory, as every path of the command line) replaces its directory and is
 * shown absolute.
 */
export function traceFilePath(
  file: string,
  paramsFile: string | undefined,
  override: TraceOverride = {},
): { path: string; shown: string } {
  const name =
    override.day === undefined ? basename(file) : override.day.endsWith('.csv') ? override.day : `${override.day}.csv`;
  if (override.dir !== undefined) {
    const path = resolve(override.dir, name);
    return { path, shown: path };
  }
  const shown = override.day === undefined ? file : join(dirname(file), name);
  const path = isAbsolute(shown)
    ? resolve(shown)
    : resolve(paramsFile === undefined ? '.' : dirname(paramsFile), shown);
  return { path, shown };
}

/**
 * The trace a parameter set replays, read through `cache`, and the parameters with `load.file`
 * as {@link traceFilePath} shows it (the override applied); `undefined` for the other shapes.
 */
export function workloadFor<P extends { readonly load: { readonly shape: string; readonly file?: string } }>(
  p: P,
  paramsFile: string | undefined,
  override: TraceOverride,
  cache: TraceCache,
): { params: P; workload?: WorkloadTrace } {
  if (p.load.shape !== 'trace' || p.load.file === undefined) return { params: p };
  const { path, shown } = traceFilePath(p.load.file, paramsFile, override);
  return { params: { ...p, load: { ...p.load, file: shown } }, workload: cache.get(path) };
}

/** Parsed trace files by absolute path: a sweep reads each file once, however many cases and seeds replay it. */
export class TraceCache {
  private readonly byPath = new Map<string, WorkloadTrace>();

  get(file: string): WorkloadTrace {
    let t = this.byPath.get(file);
    if (!t) this.byPath.set(file, (t = readWorkloadTrace(file)));
    return t;
  }
}
