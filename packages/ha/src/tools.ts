/** LRM exit codes (the reference's numeric values; they appear in logs). */
export const ExitCode = {
  SUCCESS: 0,
  ERROR: 1,
  ETRY_AGAIN: 2,
  EWRONG_NODE: 3,
  EUNKNOWN_SERVICE_TYPE: 4,
  EUNKNOWN_COMMAND: 5,
  EINVALID_PARAMETER: 6,
  EUNKNOWN_SERVICE: 7,
  IGNORED: 8,
} as const;

/** Byte-order string comparison (Perl `cmp`): `node10` < `node2`, `ct:` < `fa:` < `vm:`. */
export function byteCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Keys of an object in byte order. */
export function sortedKeys(obj: Record<string, unknown> | undefined | null): string[] {
  return obj ? Object.keys(obj).sort(byteCompare) : [];
}

/** A deep copy through JSON, as every status read of the reference is. */
export function jsonClone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Perl truthiness of a scalar: undef, '', 0 and '0' are false. */
export function perlTrue(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (value === '' || value === '0' || value === 0) return false;
  return true;
}

/** `sid` → `[type, name]`, e.g. `vm:101` → `['vm', '101']`. */
export function parseSid(sid: string): { type: string; name: string } {
  const m = /^(\w+):(\S+)$/.exec(sid);
  if (!m) throw new Error(`unable to parse service id '${sid}'`);
  return { type: m[1]!, name: m[2]! };
}

/** Number of services in state `fence` on `node` (or on any node when not given). */
export function countFencedServices(
  ss: Record<string, { state: string; node: string }> | undefined,
  node: string,
): number {
  let count = 0;
  for (const sid of Object.keys(ss ?? {})) {
    const sd = ss![sid]!;
    if (sd.state === 'fence' && sd.node === node) count++;
  }
  return count;
}
