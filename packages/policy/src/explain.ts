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
