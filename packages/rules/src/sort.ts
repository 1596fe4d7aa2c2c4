/**
 * Byte-order comparison (Perl `cmp`) for ASCII identifiers such as node names and sids:
 * `node10` < `node2`, `ct:` < `fa:` < `vm:`. Never `localeCompare`.
 */
export function byteCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorted copy of the given strings in byte order. */
export function sortedStrings(values: Iterable<string>): string[] {
  return [...values].sort(byteCompare);
}
