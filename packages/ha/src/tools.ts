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

/**
 * A deep copy of JSON data, as every status read of the reference is (a JSON round trip):
 * object keys whose value is undefined are dropped, like `JSON.stringify` does. Hand-written
 * because the status documents are copied many times per round and a round trip through a
 * string costs several times more.
 */
export function jsonClone<T>(value: T): T {
  return cloneJson(value) as T;
}

function cloneJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      out[i] = v === undefined ? null : cloneJson(v);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key in value as Record<string, unknown>) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = cloneJson(v);
  }
  return out;
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
