/**
 * The arithmetic shared by the reference and the fast paths, written once so both produce the
 * same bits (spec §4.1, §4.4, §4.5).
 */
import { type Criteria, defineCriteria } from '@poise/topsis';

/**
 * Node load, a ratio: `(cpu/maxcpu + mem/maxmem) / 2` (spec §4.1, `NodeStats::load`). A kernel
 * of the hot loops, so it checks nothing: with the stats {@link ClusterUsage} accepts (finite,
 * >= 0, capacities >= 1) the load is finite and >= 0; a capacity of 0 gives Infinity or NaN.
 */
export function nodeLoad(cpu: number, maxcpu: number, mem: number, maxmem: number): number {
  return (cpu / maxcpu + mem / maxmem) / 2;
}

/** Digits kept by `ScoredMigration::new` (`f64::DIGITS`). */
const MIGRATION_IMBALANCE_DIGITS = 15;
const TRUNCATION_SCALE = 10 ** MIGRATION_IMBALANCE_DIGITS;

/**
 * `trunc(x·1e15)/1e15`: the imbalance a scored migration reports and is ordered by. For |x| at
 * or above 1.79e293, where x·1e15 overflows, x itself (it has no digits after the 15th decimal
 * anyway), so a finite x gives a finite result; ±Infinity and NaN pass through.
 */
export function truncateImbalance(x: number): number {
  const scaled = x * TRUNCATION_SCALE;
  return scaled < Infinity && scaled > -Infinity ? Math.trunc(scaled) / TRUNCATION_SCALE : x;
}

/** The criteria as data (see {@link SCHEDULER_CRITERIA}). */
const SCHEDULER_CRITERION_LIST = [
  { name: 'average cpu', weight: -1 },
  { name: 'highest cpu', weight: -2 },
  { name: 'average memory', weight: -5 },
  { name: 'highest memory', weight: -10 },
] as const;

/**
 * The 4 minimised criteria of a hypothetical cluster state (spec §4.5), as data: average
 * (root mean square) and highest CPU load, average and highest memory load, weights 1, 2, 5, 10
 * (normalised to w/18). Values are `1 + ratio`, lower is better. A copy for callers: the package
 * scores with its own instance, so changing this one's typed arrays changes no result.
 */
export const SCHEDULER_CRITERIA: Criteria = defineCriteria(SCHEDULER_CRITERION_LIST);

/** The instance the package scores with (not exported from the package). */
export const schedulerCriteria: Criteria = defineCriteria(SCHEDULER_CRITERION_LIST);

/** Number of scheduler criteria (columns of every scheduler TOPSIS matrix). */
export const CRITERIA_COUNT = 4;

/** A code unit from U+D800 up: where UTF-16 order and UTF-8 byte order may part. */
const HIGH_CODE_UNIT = /[\ud800-\uffff]/;

/**
 * Byte-order comparison (Perl `cmp` on UTF-8 text) of identifiers: node names, sids, rule and
 * group ids, keys. `node10` < `node2`, `ct:` < `fa:` < `vm:`. Never `localeCompare`. The one
 * comparator of every package: names and sids are sorted by it wherever order is decided.
 *
 * JavaScript's `<` compares UTF-16 code units, which agrees with UTF-8 byte order except when
 * the first difference is a surrogate (a character above U+FFFF) against U+E000..U+FFFF; that
 * case is corrected, so the order is exactly the byte order of the UTF-8 encodings. A kernel:
 * strings without a code unit from U+D800 up (every ASCII name) take `<` alone.
 */
export function compareNames(a: string, b: string): number {
  if (a === b) return 0;
  if (!HIGH_CODE_UNIT.test(a) || !HIGH_CODE_UNIT.test(b)) return a < b ? -1 : 1;
  const length = Math.min(a.length, b.length);
  let i = 0;
  while (i < length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === length) return a.length < b.length ? -1 : 1;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  if (x >= 0xd800 && y >= 0xd800) {
    // code units from U+D800 up: surrogates (0xD800..0xDFFF) stand for code points above
    // U+FFFF and sort after U+E000..U+FFFF
    const xHigh = x >= 0xd800 && x <= 0xdfff;
    const yHigh = y >= 0xd800 && y <= 0xdfff;
    if (xHigh !== yHigh) return xHigh ? 1 : -1;
  }
  return x < y ? -1 : 1;
}

/** A sorted copy of the given names in byte order ({@link compareNames}). */
export function sortNames(names: Iterable<string>): string[] {
  return [...names].sort(compareNames);
}

/**
 * Orders scored migrations: imbalance, then sid, source, target (reference `Ord`). A comparator,
 * so it checks nothing: imbalances must not be NaN (no function of this package returns one).
 */
export function compareScoredMigrations(
  a: { sid: string; source: string; target: string; imbalance: number },
  b: { sid: string; source: string; target: string; imbalance: number },
): number {
  if (a.imbalance !== b.imbalance) return a.imbalance < b.imbalance ? -1 : 1;
  return compareNames(a.sid, b.sid) || compareNames(a.source, b.source) || compareNames(a.target, b.target);
}
