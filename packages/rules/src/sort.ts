/**
 * Byte-order comparison (Perl `cmp` on UTF-8 text) for identifiers such as node names, sids
 * and rule ids: `node10` < `node2`, `ct:` < `fa:` < `vm:`. Never `localeCompare`.
 *
 * JavaScript's `<` compares UTF-16 code units, which agrees with UTF-8 byte order except when
 * the first difference is a surrogate (a character above U+FFFF) against U+E000..U+FFFF; that
 * case is corrected, so the order is exactly the byte order of the UTF-8 encodings.
 */
export function byteCompare(a: string, b: string): number {
  if (a === b) return 0;
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

/** Sorted copy of the given strings in byte order. */
export function sortedStrings(values: Iterable<string>): string[] {
  return [...values].sort(byteCompare);
}
