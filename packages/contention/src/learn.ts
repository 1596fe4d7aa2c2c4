import {
  BIN_SAMPLES,
  COUNT_CAP,
  LOAD_BIN_WIDTH,
  LOAD_BINS,
  LOAD_MAX,
  RETAIN_SECONDS,
  SETTLE_LOAD_DELTA,
  SETTLE_MAX_GAP_SECONDS,
} from './constants';
import { ContentionError, showValue } from './errors';
import type { BinState, ContentionModelState, CurveState, NodeModelState } from './state';
import { compareNames } from '@poise/usage';

/**
 * What a node exposes in one round: its loads and its PSI. Loads are fractions of capacity
 * (cpu in use / cores, memory in use / physical memory; above 1 when the host reports more);
 * pressures are PSI "some" avg10 in percent, `undefined` or `null` when the node does not
 * report them.
 */
export interface NodeObservation {
  readonly node: string;
  /** cpu in use / cores: a finite number ≥ 0. */
  readonly cpuLoad: number;
  /** Memory in use / physical memory: a finite number ≥ 0. */
  readonly memLoad: number;
  /** PSI cpu some avg10, percent in 0..100; `undefined`/`null` = not reported. */
  readonly pressureCpu?: number | null | undefined;
  /** PSI memory some avg10, percent in 0..100; `undefined`/`null` = not reported. */
  readonly pressureMem?: number | null | undefined;
}

const bad = (field: string, expected: string, value: unknown) =>
  new ContentionError('invalid-argument', `${field} must be ${expected}, got ${showValue(value)}`);

function checkLoad(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw bad(field, 'a finite number >= 0', value);
  return value;
}

function checkPressure(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) {
    throw bad(field, 'a percentage in 0..100, undefined or null (not reported)', value);
  }
  return value;
}

/** Checks the observations of one round (see {@link NodeObservation}); throws `invalid-argument` naming the entry and field. */
function checkObservations(observations: unknown): Array<{
  node: string;
  cpuLoad: number;
  memLoad: number;
  pressureCpu: number | undefined;
  pressureMem: number | undefined;
}> {
  if (!Array.isArray(observations)) throw bad('observations', 'an array', observations);
  const seen = new Set<string>();
  return observations.map((o: unknown, i) => {
    const at = `observations.${i}`;
    if (typeof o !== 'object' || o === null) throw bad(at, 'an object', o);
    const r = o as Record<string, unknown>;
    if (typeof r.node !== 'string' || r.node === '') throw bad(`${at}.node`, 'a non-empty string', r.node);
    if (seen.has(r.node)) throw bad(`${at}.node`, 'a node not listed before', r.node);
    seen.add(r.node);
    return {
      node: r.node,
      cpuLoad: checkLoad(r.cpuLoad, `${at}.cpuLoad`),
      memLoad: checkLoad(r.memLoad, `${at}.memLoad`),
      pressureCpu: checkPressure(r.pressureCpu, `${at}.pressureCpu`),
      pressureMem: checkPressure(r.pressureMem, `${at}.pressureMem`),
    };
  });
}

/** The bin of a load (fraction ≥ 0): 0..LOAD_BINS−1, loads at or above LOAD_MAX in the last. */
export function binOf(load: number): number {
  return Math.min(LOAD_BINS - 1, Math.floor(Math.min(load, LOAD_MAX) / LOAD_BIN_WIDTH));
}

/** The bin with one more sample: appended while the ring is not full, else over the oldest. */
function addSample(bin: BinState | undefined, index: number, load: number, pressure: number, now: number): BinState {
  if (!bin) return { index, loads: [load], pressures: [pressure], next: 1 % BIN_SAMPLES, count: 1, at: now };
  const loads = [...bin.loads];
  const pressures = [...bin.pressures];
  let next: number;
  if (loads.length < BIN_SAMPLES) {
    loads.push(load);
    pressures.push(pressure);
    next = loads.length % BIN_SAMPLES;
  } else {
    loads[bin.next] = load;
    pressures[bin.next] = pressure;
    next = (bin.next + 1) % BIN_SAMPLES;
  }
  return { index, loads, pressures, next, count: Math.min(COUNT_CAP, bin.count + 1), at: now };
}

/** A curve after one observation: the sample learned when `settled`, old bins dropped. */
function learnCurve(
  curve: CurveState,
  load: number,
  pressure: number | undefined,
  settled: boolean,
  now: number,
): CurveState {
  const fresh = curve.bins.filter((b) => now - b.at <= RETAIN_SECONDS);
  const reportedAt = pressure === undefined ? curve.reportedAt : now;
  if (pressure === undefined || !settled) {
    return fresh.length === curve.bins.length && reportedAt === curve.reportedAt ? curve : { reportedAt, bins: fresh };
  }
  // stored rounded (loads to 0.01 % of capacity, pressures to the kernel's two decimals): the
  // state stays small, and nothing the learner resolves is lost
  const x = Math.round(Math.min(load, LOAD_MAX) * 1e4) / 1e4;
  const p = Math.round(pressure * 100) / 100;
  const index = binOf(x);
  const at = fresh.findIndex((b) => b.index >= index);
  const bins = [...fresh];
  if (at >= 0 && bins[at]!.index === index) bins[at] = addSample(bins[at], index, x, p, now);
  else bins.splice(at < 0 ? bins.length : at, 0, addSample(undefined, index, x, p, now));
  return { reportedAt, bins };
}

const EMPTY_CURVE: CurveState = { reportedAt: null, bins: [] };

/**
 * Learns from one round of observations (online, O(nodes · bins)); returns the new state and
 * leaves `state` untouched (nodes not observed keep their entries by reference). Per node and
 * dimension, a sample `(load, pressure)` is kept when the node reports the pressure and its
 * load moved by at most `SETTLE_LOAD_DELTA` since its previous observation, at most
 * `SETTLE_MAX_GAP_SECONDS` earlier (PSI avg10 lags a load step). Bins and nodes not seen for
 * `RETAIN_SECONDS` are dropped. `now` (seconds) is a finite number; an observation earlier
 * than a node's last one is not learned from (it only becomes the node's last). Throws
 * {@link ContentionError} `invalid-argument` for a bad observation, naming it
 * (`observations.2.pressureCpu must be a percentage in 0..100, …`).
 */
export function observeNodes(
  state: ContentionModelState,
  now: number,
  observations: readonly NodeObservation[],
): ContentionModelState {
  if (typeof now !== 'number' || !Number.isFinite(now)) throw bad('now', 'a finite number (seconds)', now);
  const list = checkObservations(observations);
  const byName = new Map<string, NodeModelState>();
  for (const n of state.nodes) if (now - n.at <= RETAIN_SECONDS) byName.set(n.node, n);
  for (const o of list) {
    const previous = byName.get(o.node);
    const steady = previous !== undefined && now >= previous.at && now - previous.at <= SETTLE_MAX_GAP_SECONDS;
    const settledCpu = steady && Math.abs(o.cpuLoad - previous.cpuLoad) <= SETTLE_LOAD_DELTA;
    const settledMem = steady && Math.abs(o.memLoad - previous.memLoad) <= SETTLE_LOAD_DELTA;
    byName.set(o.node, {
      node: o.node,
      at: now,
      cpuLoad: o.cpuLoad,
      memLoad: o.memLoad,
      cpu: learnCurve(previous?.cpu ?? EMPTY_CURVE, o.cpuLoad, o.pressureCpu, settledCpu, now),
      mem: learnCurve(previous?.mem ?? EMPTY_CURVE, o.memLoad, o.pressureMem, settledMem, now),
    });
  }
  const nodes = [...byName.values()].sort((a, b) => compareNames(a.node, b.node));
  return { version: 1, nodes };
}
