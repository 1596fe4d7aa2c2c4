import { BIN_SAMPLES, COUNT_CAP, LOAD_BINS, LOAD_MAX } from './constants';
import { ContentionError, showValue } from './errors';

/**
 * The learner's memory, plain JSON (objects, arrays, finite numbers, strings, `null`), so a
 * host can persist it and `JSON.parse(JSON.stringify(state))` restores it exactly. Bounded:
 * per node two curves of at most {@link LOAD_BINS} bins of at most `BIN_SAMPLES`
 * samples; nodes and bins not seen for `RETAIN_SECONDS` are dropped.
 */
export interface ContentionModelState {
  /** Layout version: 1. */
  readonly version: 1;
  /** One entry per node, in byte order of the names. */
  readonly nodes: readonly NodeModelState[];
}

/** What the learner remembers of one node. */
export interface NodeModelState {
  readonly node: string;
  /** Seconds: the last observation of the node. */
  readonly at: number;
  /** The loads of that observation (fractions ≥ 0), to tell settled samples from transients. */
  readonly cpuLoad: number;
  readonly memLoad: number;
  readonly cpu: CurveState;
  readonly mem: CurveState;
}

/** One dimension (cpu or memory) of a node: PSI against load. */
export interface CurveState {
  /** Seconds: the last observation that carried a pressure value for this dimension; `null` = never (no PSI). */
  readonly reportedAt: number | null;
  /** The bins that hold samples, in ascending `index`. */
  readonly bins: readonly BinState[];
}

/** The most recent samples whose load falls in one bin. */
export interface BinState {
  /** 0..LOAD_BINS−1: loads `[index, index + 1) · LOAD_BIN_WIDTH` (the last bin also holds loads above). */
  readonly index: number;
  /** Loads of the samples (fractions, 0..LOAD_MAX), a ring of at most BIN_SAMPLES. */
  readonly loads: readonly number[];
  /** Pressures of the samples (percent, 0..100), in the same order as `loads`. */
  readonly pressures: readonly number[];
  /** Where the next sample goes once the ring is full (0..BIN_SAMPLES−1). */
  readonly next: number;
  /** Samples ever added to the bin (capped at COUNT_CAP): the confidence grows with it. */
  readonly count: number;
  /** Seconds: when the last sample was added. */
  readonly at: number;
}

/** A model that has learned nothing yet. */
export function emptyModel(): ContentionModelState {
  return { version: 1, nodes: [] };
}

const invalid = (field: string, expected: string, value: unknown) =>
  new ContentionError(
    'invalid-state',
    `contention model state field '${field}' must be ${expected}, got ${showValue(value)}`,
  );

function object(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(field || '(top level)', 'an object', value);
  return value as Record<string, unknown>;
}

function array(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw invalid(field, 'an array', value);
  return value;
}

function number(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalid(field, `a finite number in ${min}..${max}`, value);
  }
  return value;
}

function integer(value: unknown, field: string, min: number, max: number): number {
  const v = number(value, field, min, max);
  if (!Number.isInteger(v)) throw invalid(field, `an integer in ${min}..${max}`, value);
  return v;
}

function time(value: unknown, field: string): number {
  return number(value, field, -Number.MAX_VALUE, Number.MAX_VALUE);
}

function checkBin(value: unknown, field: string): BinState {
  const b = object(value, field);
  const index = integer(b.index, `${field}.index`, 0, LOAD_BINS - 1);
  const loads = array(b.loads, `${field}.loads`).map((v, i) => number(v, `${field}.loads.${i}`, 0, LOAD_MAX));
  const pressures = array(b.pressures, `${field}.pressures`).map((v, i) =>
    number(v, `${field}.pressures.${i}`, 0, 100),
  );
  if (loads.length === 0 || loads.length > BIN_SAMPLES)
    throw invalid(`${field}.loads`, `1 to ${BIN_SAMPLES} samples`, b.loads);
  if (pressures.length !== loads.length)
    throw invalid(`${field}.pressures`, `as many samples as 'loads' (${loads.length})`, b.pressures);
  const next = integer(b.next, `${field}.next`, 0, BIN_SAMPLES - 1);
  const count = integer(b.count, `${field}.count`, loads.length, COUNT_CAP);
  return { index, loads, pressures, next, count, at: time(b.at, `${field}.at`) };
}

function checkCurve(value: unknown, field: string): CurveState {
  const c = object(value, field);
  const reportedAt = c.reportedAt === null ? null : time(c.reportedAt, `${field}.reportedAt`);
  let last = -1;
  const bins = array(c.bins, `${field}.bins`).map((v, i) => {
    const bin = checkBin(v, `${field}.bins.${i}`);
    if (bin.index <= last) throw invalid(`${field}.bins.${i}.index`, `above the previous bin's (${last})`, bin.index);
    last = bin.index;
    return bin;
  });
  return { reportedAt, bins };
}

/**
 * Checks a restored (e.g. persisted, `JSON.parse`d) model state and returns it typed. Throws
 * {@link ContentionError} `invalid-state` naming the field and the value, e.g.
 * `contention model state field 'nodes.1.cpu.bins.0.pressures.3' must be a finite number in 0..100, got 130`.
 */
export function checkModelState(value: unknown): ContentionModelState {
  const s = object(value, '');
  if (s.version !== 1) throw invalid('version', '1', s.version);
  let previous: string | undefined;
  const nodes = array(s.nodes, 'nodes').map((v, i) => {
    const field = `nodes.${i}`;
    const n = object(v, field);
    if (typeof n.node !== 'string' || n.node === '') throw invalid(`${field}.node`, 'a non-empty string', n.node);
    if (previous !== undefined && !(previous < n.node))
      throw invalid(`${field}.node`, `after '${previous}' in byte order (sorted, no duplicates)`, n.node);
    previous = n.node;
    return {
      node: n.node,
      at: time(n.at, `${field}.at`),
      cpuLoad: number(n.cpuLoad, `${field}.cpuLoad`, 0, Number.MAX_VALUE),
      memLoad: number(n.memLoad, `${field}.memLoad`, 0, Number.MAX_VALUE),
      cpu: checkCurve(n.cpu, `${field}.cpu`),
      mem: checkCurve(n.mem, `${field}.mem`),
    };
  });
  return { version: 1, nodes };
}
