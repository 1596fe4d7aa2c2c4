import { compareNames } from '@poise/usage';

/** How many items a stop reason lists before `and N more`. */
export const REASON_LIST_MAX = 3;

/** `a, b, c and 2 more`: at most `max` items, in the order given. */
export function formatList(items: readonly string[], max = REASON_LIST_MAX): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/** The members of a bundle in byte order (a bundle's identity does not depend on its leader). */
export function sortedBundle(resources: readonly string[]): string[] {
  return [...resources].sort(compareNames);
}

/** A bundle for messages: its members in byte order joined by `+` (`vm:101+vm:102`). */
export function bundleLabel(resources: readonly string[]): string {
  return sortedBundle(resources).join('+');
}

/** A key for a (bundle, target) pair: the same for any member order. */
export function pairKey(resources: readonly string[], target: string): string {
  return `${sortedBundle(resources).join('\u0000')}\u0001${target}`;
}

/** A percentage for messages: one decimal (`3.1%`). */
export function formatPercent(value: number): string {
  return `${value.toFixed(1)}%`;
}

/**
 * A number compared with a bound, for stop reasons: 4 significant digits (`0.07692`,
 * `0.25` for 0.24999999999999997), unless that would print the bound itself for a value that
 * differs from it (then every digit: `0.049999999999999996` below `0.05`, never `0.05 below 0.05`).
 */
export function formatCompared(value: number, bound: number): string {
  if (!Number.isFinite(value)) return String(value);
  const short = Number(value.toPrecision(4));
  return short === bound && value !== bound ? String(value) : String(short);
}

/**
 * The quantities stop reasons and notices print: an `imbalance` (a measured or expected one,
 * or the threshold), an `improvement` (`before − after`, or the min-improvement) and a
 * `relative-improvement` (`(before − after) / before`, or the margin). The policy computes
 * them all as fractions of the imbalance; how they read is the host's business.
 */
export type ReasonQuantity = 'imbalance' | 'improvement' | 'relative-improvement';

/**
 * How stop reasons and notices print the quantities of the imbalance, in the units the host's
 * operator configured them ({@link BalanceContext.format}); the policy itself stays
 * unit-agnostic. The default, `FRACTION_REASON_FORMAT`, prints fractions;
 * {@link percentReasonFormat} prints percent and percentage points.
 *
 * Contract: pure, returns a non-empty string for every finite number; `value(q, v, bound)`
 * with `v !== bound` never returns the same text as `bound(q, bound)` (a reason must never
 * read `10.0% below margin 10.0%`).
 */
export interface ReasonFormat {
  /**
   * A computed value: alone (`compared` undefined), or compared with the bound `compared` (then
   * with digits enough to tell the two apart when they differ).
   */
  value(quantity: ReasonQuantity, value: number, compared?: number): string;
  /** A configured bound: the threshold, the margin, the min-improvement. */
  bound(quantity: ReasonQuantity, bound: number): string;
}

/**
 * Fractions, as the policy computes them (the default: `imbalance 0.2738 at or below threshold
 * 0.3`, `relative improvement -0.01172 below margin 0.1`): a compared value to 4 significant
 * digits ({@link formatCompared}), an improvement alone to 4 decimals, anything else and the
 * bounds as JavaScript prints the number.
 */
export const FRACTION_REASON_FORMAT: ReasonFormat = Object.freeze({
  value: (quantity: ReasonQuantity, value: number, compared?: number) =>
    compared !== undefined
      ? formatCompared(value, compared)
      : quantity === 'improvement'
        ? value.toFixed(4)
        : String(value),
  bound: (_quantity: ReasonQuantity, bound: number) => String(bound),
});

/** The most decimals {@link percentReasonFormat} adds to tell a value from its bound. */
const PERCENT_MAX_DIGITS = 20;

/**
 * Percent of the imbalance with one decimal, the units of datacenter.cfg's `pve-9.2` keys:
 * an imbalance and a relative improvement as `27.4%` / `-1.2%`, an improvement (a difference of
 * two imbalances) as percentage points, `18.4 pp`. A value compared with a bound it differs
 * from but rounds to gets more decimals (`9.999999999999998% below margin 10.0%`).
 *
 * `fixed(value, digits)` prints a number with that many decimals (default `toFixed`; a host
 * whose other log lines round like C's `printf` passes its own, so the same number reads the
 * same everywhere).
 */
export function percentReasonFormat(
  fixed: (value: number, digits: number) => string = (v, d) => v.toFixed(d),
): ReasonFormat {
  const unit = (quantity: ReasonQuantity) => (quantity === 'improvement' ? ' pp' : '%');
  const print = (value: number, digits: number) =>
    Number.isFinite(value) ? fixed(value * 100, digits) : String(value);
  return Object.freeze({
    value: (quantity: ReasonQuantity, value: number, compared?: number) => {
      let digits = 1;
      if (compared !== undefined && value !== compared) {
        while (digits < PERCENT_MAX_DIGITS && print(value, digits) === print(compared, digits)) digits++;
        // two fractions 1 ulp apart may scale to the same number: then show the fraction too
        if (print(value, digits) === print(compared, digits)) return `${print(value, 1)}${unit(quantity)} (${value})`;
      }
      return `${print(value, digits)}${unit(quantity)}`;
    },
    bound: (quantity: ReasonQuantity, bound: number) => `${print(bound, 1)}${unit(quantity)}`,
  });
}
