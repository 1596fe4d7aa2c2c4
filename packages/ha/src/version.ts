/**
 * Debian version comparison (dpkg's verrevcmp on the upstream part): `~` sorts before
 * everything, letters before other characters, digit runs numerically. So
 * `9.0.0~2` < `9.0.0~16` < `9.0.0` < `9.1.2`.
 */
export function compareDebianVersions(a: string, b: string): number {
  const order = (c: string | undefined): number => {
    if (c === undefined) return 0;
    if (c === '~') return -1;
    if (/[a-zA-Z]/.test(c)) return c.charCodeAt(0);
    return c.charCodeAt(0) + 256;
  };
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let firstDiff = 0;
    while ((i < a.length && !/\d/.test(a[i]!)) || (j < b.length && !/\d/.test(b[j]!))) {
      const ac = i < a.length && !/\d/.test(a[i]!) ? order(a[i]) : 0;
      const bc = j < b.length && !/\d/.test(b[j]!) ? order(b[j]) : 0;
      if (ac !== bc) return ac - bc;
      i++;
      j++;
    }
    while (a[i] === '0') i++;
    while (b[j] === '0') j++;
    while (i < a.length && /\d/.test(a[i]!) && j < b.length && /\d/.test(b[j]!)) {
      if (!firstDiff) firstDiff = a.charCodeAt(i) - b.charCodeAt(j);
      i++;
      j++;
    }
    if (i < a.length && /\d/.test(a[i]!)) return 1;
    if (j < b.length && /\d/.test(b[j]!)) return -1;
    if (firstDiff) return firstDiff;
  }
  return 0;
}
