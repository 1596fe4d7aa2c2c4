/**
 * The accepted input of `@poise/usage`, checked once at the API boundary (adding or changing a
 * node or resource, entering a scoring call, a reference function), never inside the per-pair
 * kernels. Within these ranges no sum, load, square or norm of the package can overflow, so
 * every result is finite (the argument is in {@link MAX_STAT_VALUE}'s comment).
 */
import { UsageError } from './errors';
import type {
  Aggregation,
  ImbalanceMetric,
  MigrationMethod,
  NodeStats,
  Placement,
  ResourceState,
  ResourceStats,
} from './types';

/**
 * The largest value of any stat (cores or bytes): 2^64, the range of the reference's `usize`
 * fields (18 EiB, 1.8e19 cores). With node capacities of at least {@link MIN_NODE_CAPACITY},
 * a node aggregating r resources has a load below (r + 2)·2^64 — below 2^100 for any count of
 * resources that fits in memory — so loads, their squares (< 2^200), their sums over nodes and
 * the TOPSIS column sums over (candidate, target) pairs all stay far below Number.MAX_VALUE.
 */
export const MAX_STAT_VALUE = 2 ** 64;

/**
 * The smallest node `maxcpu` (cores) and `maxmem` (bytes): 1. The reference's node capacities
 * are unsigned integers and must be non-zero, so at least 1; a smaller capacity could turn a
 * finite usage into an infinite load.
 */
export const MIN_NODE_CAPACITY = 1;

/**
 * Where a value came from, for the error message: a string, or a function building it, so that
 * the checks on the hot boundaries (one per `addResource`) build no string unless they fail.
 */
export type Where = string | (() => string);

function text(where: Where): string {
  return typeof where === 'string' ? where : where();
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `'${value}'`;
  return typeof value === 'number' ? String(value) : typeof value;
}

/** A node name or sid: a non-empty string (any string: `toString` and `__proto__` are names too). */
export function checkName(kind: 'node' | 'resource', name: unknown, where: Where): asserts name is string {
  if (typeof name !== 'string' || name === '') {
    throw new UsageError(
      'invalid-argument',
      `${text(where)}: a ${kind} name must be a non-empty string, got ${describe(name)}`,
    );
  }
}

const STAT_FIELDS = ['cpu', 'maxcpu', 'mem', 'maxmem'] as const;
const UNITS = { cpu: 'cores', maxcpu: 'cores', mem: 'bytes', maxmem: 'bytes' } as const;

/** A stat value in [0, MAX_STAT_VALUE] (NaN, ±Infinity and non-numbers fail). */
function validStat(v: unknown): boolean {
  return typeof v === 'number' && v >= 0 && v <= MAX_STAT_VALUE;
}

/**
 * Whether `stats` passes {@link checkStats}, in four comparisons and without building anything:
 * the boundaries call this first and {@link checkStats} (which names the field) only on failure.
 */
export function statsOk(stats: NodeStats | ResourceStats, node: boolean): boolean {
  return (
    typeof stats === 'object' &&
    stats !== null &&
    validStat(stats.cpu) &&
    validStat(stats.maxcpu) &&
    validStat(stats.mem) &&
    validStat(stats.maxmem) &&
    (!node || (stats.maxcpu >= MIN_NODE_CAPACITY && stats.maxmem >= MIN_NODE_CAPACITY))
  );
}

/** {@link statsOk} for a resource's four values read already (no object needed). */
export function statFieldsOk(cpu: unknown, maxcpu: unknown, mem: unknown, maxmem: unknown): boolean {
  return validStat(cpu) && validStat(maxcpu) && validStat(mem) && validStat(maxmem);
}

/** Whether `placement` passes {@link checkPlacementShape} (no string built). */
export function placementOk(placement: Placement): boolean {
  if (typeof placement !== 'object' || placement === null) return false;
  const { current, target } = placement;
  return (
    typeof current === 'string' &&
    current !== '' &&
    (target === undefined || (typeof target === 'string' && target !== '' && target !== current))
  );
}

/**
 * Node or resource stats: an object whose four fields are numbers in [0, 2^64]; for a node
 * (`node` true) `maxcpu` and `maxmem` are at least 1. `what` names the owner (`node 'n1'`).
 */
export function checkStats(what: Where, stats: NodeStats | ResourceStats, node: boolean): void {
  if (typeof stats !== 'object' || stats === null) {
    throw new UsageError(
      'invalid-stats',
      `${text(what)}: stats must be an object with 'cpu', 'maxcpu', 'mem' and 'maxmem', got ${describe(stats)}`,
    );
  }
  // the common case in four comparisons; the loop below names the offending field
  if (validStat(stats.cpu) && validStat(stats.maxcpu) && validStat(stats.mem) && validStat(stats.maxmem)) {
    if (!node || (stats.maxcpu >= MIN_NODE_CAPACITY && stats.maxmem >= MIN_NODE_CAPACITY)) return;
  }
  for (const field of STAT_FIELDS) {
    const v = stats[field];
    if (!validStat(v)) {
      throw new UsageError(
        'invalid-stats',
        `${text(what)}: '${field}' must be a finite number of ${UNITS[field]} in [0, 2^64], got ${describe(v)}`,
      );
    }
  }
  for (const field of ['maxcpu', 'maxmem'] as const) {
    if (stats[field] < MIN_NODE_CAPACITY) {
      throw new UsageError(
        'invalid-stats',
        `${text(what)}: '${field}' must be at least 1 (${UNITS[field]}), got ${stats[field]}`,
      );
    }
  }
}

export function checkState(sid: string, state: ResourceState): void {
  if (state !== 'stopped' && state !== 'starting' && state !== 'started') {
    throw new UsageError('invalid-argument', `resource '${sid}' has unknown state '${String(state)}'`);
  }
}

/** The shape of a placement (the nodes' existence is checked against the usage). */
export function checkPlacementShape(sid: string, placement: Placement): void {
  if (placementOk(placement)) return;
  if (typeof placement !== 'object' || placement === null) {
    throw new UsageError(
      'invalid-placement',
      `resource '${sid}': placement must be an object { current, target? }, got ${describe(placement)}`,
    );
  }
  checkName('node', placement.current, () => `resource '${sid}': placement.current`);
  if (placement.target !== undefined) checkName('node', placement.target, () => `resource '${sid}': placement.target`);
  if (placement.target === placement.current) {
    throw new UsageError('invalid-placement', `resource '${sid}' moves from '${placement.current}' to itself`);
  }
}

export function checkAggregation(aggregation: unknown): asserts aggregation is Aggregation {
  if (aggregation !== 'basic' && aggregation !== 'static' && aggregation !== 'dynamic') {
    throw new UsageError(
      'invalid-argument',
      `unknown aggregation '${String(aggregation)}', expected 'basic', 'static' or 'dynamic'`,
    );
  }
}

export function checkMetric(metric: unknown): asserts metric is ImbalanceMetric {
  if (metric !== 'raw' && metric !== 'normalized') {
    throw new UsageError(
      'invalid-argument',
      `unknown imbalance metric '${String(metric)}', expected 'raw' or 'normalized'`,
    );
  }
}

export function checkMethodAndLimit(method: MigrationMethod, limit: number): void {
  if (method !== 'bruteforce' && method !== 'topsis') {
    throw new UsageError('invalid-argument', `unknown migration method '${String(method)}'`);
  }
  if (!Number.isInteger(limit) || limit < 0)
    throw new UsageError('invalid-argument', `invalid limit ${String(limit)}: expected an integer >= 0`);
}

/** The shape of candidate k (`leader` a string, `resources` and `targets` arrays). */
export function checkCandidateShape(c: unknown, k: number): void {
  const candidate = c as { leader?: unknown; resources?: unknown; targets?: unknown } | null;
  if (typeof candidate !== 'object' || candidate === null) {
    throw new UsageError(
      'invalid-candidate',
      `candidates[${k}]: expected { leader, resources, targets }, got ${describe(c)}`,
    );
  }
  if (typeof candidate.leader !== 'string') {
    throw new UsageError(
      'invalid-candidate',
      `candidates[${k}].leader: expected a sid, got ${describe(candidate.leader)}`,
    );
  }
  if (!Array.isArray(candidate.resources)) {
    throw new UsageError(
      'invalid-candidate',
      `candidates[${k}].resources: expected an array of sids, got ${describe(candidate.resources)}`,
    );
  }
  if (!Array.isArray(candidate.targets)) {
    throw new UsageError(
      'invalid-candidate',
      `candidates[${k}].targets: expected an array of node names, got ${describe(candidate.targets)}`,
    );
  }
}

export function checkCandidatesArray(candidates: unknown): void {
  if (!Array.isArray(candidates)) {
    throw new UsageError('invalid-argument', `candidates: expected an array, got ${describe(candidates)}`);
  }
}

/** The candidate errors both paths throw with the same words (fast and reference). */
export const candidateErrors = {
  duplicateLeader: (k: number, leader: string, first: number) =>
    new UsageError(
      'invalid-candidate',
      `candidates[${k}].leader: candidate leader '${leader}' is also the leader of candidates[${first}]`,
    ),
  duplicateMember: (k: number, m: number, sid: string, leader: string) =>
    new UsageError(
      'invalid-candidate',
      `candidates[${k}].resources[${m}]: resource '${sid}' is listed twice in the bundle of candidate '${leader}'`,
    ),
  leaderNotMember: (k: number, leader: string) =>
    new UsageError(
      'invalid-candidate',
      `candidates[${k}].resources: the bundle of candidate '${leader}' does not list its leader`,
    ),
  selfMove: (k: number, j: number, target: string, leader: string) =>
    new UsageError(
      'invalid-candidate',
      `candidates[${k}].targets[${j}]: target node '${target}' is the current node of candidate '${leader}' (a move to itself)`,
    ),
  duplicateTarget: (k: number, j: number, target: string, leader: string) =>
    new UsageError(
      'invalid-candidate',
      `candidates[${k}].targets[${j}]: target node '${target}' is listed twice for candidate '${leader}'`,
    ),
};

/**
 * Aggregated node stats handed to a reference function (`stats[i]`): finite numbers >= 0 with
 * capacities of at least 1 and a finite load (aggregated usage may exceed 2^64, so there is no
 * upper bound but finiteness).
 */
export function checkAggregatedStats(
  stats: readonly { cpu: number; maxcpu: number; mem: number; maxmem: number }[],
  where: string,
): void {
  // checked through an `unknown` copy: Array.isArray would narrow the typed array itself to any[]
  const given: unknown = stats;
  if (!Array.isArray(given))
    throw new UsageError('invalid-argument', `${where}: expected an array of node stats, got ${describe(stats)}`);
  stats.forEach((s, i) => {
    if (typeof s !== 'object' || s === null)
      throw new UsageError('invalid-stats', `${where}[${i}]: expected node stats, got ${describe(s)}`);
    for (const field of STAT_FIELDS) {
      const v = s[field];
      if (typeof v !== 'number' || !(v >= 0 && v < Infinity)) {
        throw new UsageError(
          'invalid-stats',
          `${where}[${i}].${field}: must be a finite number of ${UNITS[field]} >= 0, got ${describe(v)}`,
        );
      }
    }
    for (const field of ['maxcpu', 'maxmem'] as const) {
      if (s[field] < MIN_NODE_CAPACITY)
        throw new UsageError('invalid-stats', `${where}[${i}].${field}: must be at least 1, got ${s[field]}`);
    }
    if (!(s.cpu / s.maxcpu + s.mem / s.maxmem < Infinity)) {
      throw new UsageError('invalid-stats', `${where}[${i}]: the node load (cpu/maxcpu + mem/maxmem)/2 overflows`);
    }
  });
}
