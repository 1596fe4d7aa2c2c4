/**
 * The summary metrics of a run. The definitions live in `@poise/sim` (`summarizeRun`, the one
 * behind `poise-sim summary`); the lab applies them to its traces, and adds derived metrics on
 * top in `stats.ts` (`maxMovesPerSid`).
 */
import { summarizeRun, type RunSummary } from '@poise/sim';
import type { RunTrace } from './trace';

export type { RunSummary } from '@poise/sim';

/** The summary metrics of a (validated) trace: `summarizeRun` of `@poise/sim`. Pure; O(samples × nodes + moves). */
export function summarize(trace: RunTrace): RunSummary {
  return summarizeRun(trace);
}
