/**
 * The arithmetic shared by the reference and the fast paths, written once so both produce the
 * same bits (spec §4.1, §4.4, §4.5).
 */
import { type Criteria, defineCriteria } from '@poise/topsis';

/** Node load, a ratio: `(cpu/maxcpu + mem/maxmem) / 2` (spec §4.1, `NodeStats::load`). */
export function nodeLoad(cpu: number, maxcpu: number, mem: number, maxmem: number): number {
  return (cpu / maxcpu + mem / maxmem) / 2;
}

/** Digits kept by `ScoredMigration::new` (`f64::DIGITS`). */
export const MIGRATION_IMBALANCE_DIGITS = 15;
const TRUNCATION_SCALE = 1e15;

/** `trunc(x·1e15)/1e15`: the imbalance a scored migration reports and is ordered by. */
export function truncateImbalance(x: number): number {
  return Math.trunc(x * TRUNCATION_SCALE) / TRUNCATION_SCALE;
}

/**
 * The 4 minimised criteria of a hypothetical cluster state (spec §4.5), as data: average
 * (root mean square) and highest CPU load, average and highest memory load, weights 1, 2, 5, 10
 * (normalised to w/18). Values are `1 + ratio`, lower is better.
 */
export const SCHEDULER_CRITERIA: Criteria = defineCriteria([
  { name: 'average cpu', weight: -1 },
  { name: 'highest cpu', weight: -2 },
  { name: 'average memory', weight: -5 },
  { name: 'highest memory', weight: -10 },
]);

/** Number of scheduler criteria (columns of every scheduler TOPSIS matrix). */
export const CRITERIA_COUNT = 4;

/** `a < b` in byte order for the ASCII identifiers sids and node names are (never localeCompare). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders scored migrations: imbalance, then sid, source, target (reference `Ord`). */
export function compareScoredMigrations(
  a: { sid: string; source: string; target: string; imbalance: number },
  b: { sid: string; source: string; target: string; imbalance: number },
): number {
  if (a.imbalance !== b.imbalance) return a.imbalance < b.imbalance ? -1 : 1;
  return compareNames(a.sid, b.sid) || compareNames(a.source, b.source) || compareNames(a.target, b.target);
}
