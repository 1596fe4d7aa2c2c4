import type { RoundOutcome } from './journal';

/**
 * The daemon's own round reasons (`RoundReport.reason` when the policy did not decide), each with
 * the outcome it goes with. A bounded label set: `poise_round_skips_total{reason}` counts the
 * skip, standby and error ones from 0. A round line with a new reason adds it here (the metrics
 * test reads the round lines of `src/runtime` against this table).
 */
export const DAEMON_REASONS = {
  move: 'move',
  'request-uncertain': 'move',
  observe: 'would-move',
  refused: 'refused',
  'auth-refused': 'refused',
  precondition: 'refused',
  'not-quorate': 'skip',
  'ha-disarmed': 'skip',
  'no-nodes': 'skip',
  'cluster-auto-rebalance': 'skip',
  'telemetry-pending': 'skip',
  'partial-view': 'skip',
  'motion-limit': 'skip',
  'auth-paused': 'skip',
  'not-settled': 'skip',
  settling: 'skip',
  'lock-expiring': 'skip',
  standby: 'standby',
  'lock-error': 'standby',
  'api-error': 'error',
  'stage-failed': 'error',
  'balancing-stopped': 'error',
  error: 'error',
} as const satisfies Readonly<Record<string, RoundOutcome>>;

/** Round outcomes whose reason `poise_round_skips_total` counts (rounds that moved nothing and decided nothing). */
export const SKIP_COUNTED_OUTCOMES: ReadonlySet<RoundOutcome> = new Set(['skip', 'standby', 'error']);

/**
 * The stop codes of the reference stages (`@poise/policy`'s `referencePipeline`: one scorer
 * `score-<method>`, whose code is `nothing-scored`), by stage name; the pipeline itself stops
 * with `invalid-input` at any stage. Variant stages do not declare their codes up front: their
 * skips have a series from the first one.
 */
export const REFERENCE_STOP_CODES: Readonly<Record<string, readonly string[]>> = {
  'motion-in-flight': ['motion-in-flight'],
  'threshold-hold': ['below-threshold', 'holding'],
  candidates: ['no-candidates'],
  'select-best': ['nothing-selected'],
  'relative-margin': ['invalid-improvement', 'below-margin'],
};
/** The code of a reference scorer (`score-bruteforce`, `score-topsis`). */
const SCORER_STOP_CODE = 'nothing-scored';
/** The code of a stop for invalid input, from the pipeline or any stage. */
const INVALID_INPUT_CODE = 'invalid-input';

/**
 * The skip reasons known before any round: the daemon's (skip, standby, error), `invalid-input`
 * and the codes of the reference stages in `stages` (the pipeline in force), sorted.
 */
export function knownSkipReasons(stages: readonly { readonly name: string }[]): string[] {
  const reasons = new Set<string>([INVALID_INPUT_CODE]);
  for (const [reason, outcome] of Object.entries(DAEMON_REASONS))
    if (SKIP_COUNTED_OUTCOMES.has(outcome)) reasons.add(reason);
  for (const stage of stages) {
    if (stage.name.startsWith('score-')) reasons.add(SCORER_STOP_CODE);
    if (Object.hasOwn(REFERENCE_STOP_CODES, stage.name))
      for (const code of REFERENCE_STOP_CODES[stage.name]!) reasons.add(code);
  }
  return [...reasons].sort();
}
