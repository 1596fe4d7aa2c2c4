/**
 * Immutable snapshots of JSON documents, the currency of the {@link Env} reads: a read returns
 * the stored snapshot itself (O(1)), never a copy. A snapshot is deeply frozen and built from
 * null-prototype objects, so names such as `__proto__` or `toString` are ordinary keys.
 * Writing a new version shares every subtree that did not change with the previous snapshot,
 * so a write allocates only for what changed.
 */

/** Deeply read-only view of a JSON document. */
export type Snapshot<T> = T extends (infer U)[]
  ? ReadonlyArray<Snapshot<U>>
  : T extends object
    ? { readonly [K in keyof T]: Snapshot<T[K]> }
    : T;

/**
 * The prototype of every snapshot object: empty and frozen, so a snapshot behaves like a
 * null-prototype object (no inherited `toString`, `__proto__` is a plain key) and is
 * recognised in O(1). Arrays keep `Array.prototype` and are tracked in a weak set.
 */
const SNAPSHOT_PROTO = Object.freeze(Object.create(null) as object);
const builtArrays = new WeakSet<readonly unknown[]>();

function isBuilt(value: object): boolean {
  return Array.isArray(value) ? builtArrays.has(value) : Object.getPrototypeOf(value) === SNAPSHOT_PROTO;
}

/** Whether `value` is a snapshot made by {@link snapshot} (deeply frozen). */
export function isSnapshot(value: unknown): boolean {
  return typeof value === 'object' && value !== null && isBuilt(value);
}

function sealArray<T extends unknown[]>(arr: T): T {
  Object.freeze(arr);
  builtArrays.add(arr);
  return arr;
}

function newObject(): Record<string, unknown> {
  return Object.create(SNAPSHOT_PROTO) as Record<string, unknown>;
}

/**
 * An immutable copy of JSON data: objects get a null prototype, keys whose value is undefined
 * are dropped and undefined array items become null (as `JSON.stringify` would), everything is
 * frozen. Subtrees equal to the corresponding part of `previous` (a snapshot) are taken from
 * it, and a value that already is a snapshot is returned as it is. Cost: O(size of `value`)
 * comparisons, allocations only for the parts that differ from `previous`.
 */
export function snapshot<T>(value: T, previous?: Snapshot<T>): Snapshot<T> {
  return snap(value, previous) as Snapshot<T>;
}

function snap(value: unknown, previous: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (isBuilt(value)) return value;
  const prev = typeof previous === 'object' && previous !== null && isBuilt(previous) ? previous : undefined;
  if (Array.isArray(value)) return snapArray(value, Array.isArray(prev) ? prev : undefined);
  return snapObject(
    value as Record<string, unknown>,
    prev !== undefined && !Array.isArray(prev) ? (prev as Record<string, unknown>) : undefined,
  );
}

function snapArray(value: readonly unknown[], prev: readonly unknown[] | undefined): readonly unknown[] {
  const out = new Array(value.length);
  let same = prev !== undefined && prev.length === value.length;
  for (let i = 0; i < value.length; i++) {
    const v = value[i] === undefined ? null : value[i];
    out[i] = snap(v, prev?.[i]);
    if (same && out[i] !== prev![i]) same = false;
  }
  return same ? prev! : sealArray(out);
}

/**
 * One pass over `value`: while every child comes out identical to `prev`'s, nothing is
 * allocated; at the first difference the new object is started (with the identical children
 * so far) and filled from there on.
 */
function snapObject(value: Record<string, unknown>, prev: Record<string, unknown> | undefined): unknown {
  let out: Record<string, unknown> | undefined;
  let count = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const v = value[key];
    if (v === undefined) continue;
    count++;
    // a snapshot object's prototype chain (SNAPSHOT_PROTO, then null) holds nothing: a read
    // finds own properties only, `__proto__` included
    const p = prev === undefined ? undefined : prev[key];
    const c = typeof v !== 'object' || v === null ? v : snap(v, p);
    if (out === undefined) {
      if (p !== undefined && c === p) continue;
      out = newObject();
      if (count > 1) {
        for (const k in value) {
          if (k === key) break;
          if (Object.hasOwn(value, k) && value[k] !== undefined) out[k] = prev![k];
        }
      }
    }
    out[key] = c;
  }
  if (out === undefined) {
    // every child is the previous one; the same object unless keys were removed
    let prevCount = 0;
    if (prev !== undefined) for (const _k in prev) prevCount++;
    if (prev !== undefined && prevCount === count) return prev;
    out = newObject();
    for (const k in value) if (Object.hasOwn(value, k) && value[k] !== undefined) out[k] = prev![k];
  }
  return Object.freeze(out);
}

/**
 * An empty record to fill with values that are snapshots already, then to close with
 * {@link sealRecord}: the O(keys) way for an Env implementation to assemble a document from
 * cached entries without comparing them.
 */
export function openRecord<V>(): Record<string, Snapshot<V>> {
  return newObject() as Record<string, Snapshot<V>>;
}

/** Freezes a record made by {@link openRecord}; it is a snapshot from then on. */
export function sealRecord<V>(record: Record<string, Snapshot<V>>): Snapshot<Record<string, V>> {
  if (Object.getPrototypeOf(record) !== SNAPSHOT_PROTO)
    throw new TypeError('sealRecord needs a record from openRecord');
  return Object.freeze(record);
}

/** Options of {@link lazyRecord}. */
export interface LazyRecordOptions {
  /**
   * The caller hands `entries` over and never changes it again: the record uses it instead of a
   * copy (O(1)). Changing it afterwards would change a snapshot; leave it false unless the map
   * is made for the record.
   */
  readonly handOver?: boolean;
}

/** The entries behind each record made by {@link lazyRecord}. */
const lazyEntries = new WeakMap<object, ReadonlyMap<string, unknown>>();

/**
 * A record snapshot whose entries come from a map: `entries` (values that are snapshots
 * already) is copied, and the record's properties are only made when something reads the record
 * as an object (a key, `Object.keys`, `for…in`, `JSON.stringify`); a reader that knows it may
 * take the copy through {@link lazyRecordEntries} instead. For documents keyed by ever new
 * names (command uids) or large ones written every round, where a property write has to
 * intern each name: O(entries) map copy (O(1) with `handOver`), no property written unless read. The record behaves as the sealed record of the same
 * entries would (frozen, a snapshot, the same keys in the same order, the same JSON), and
 * changing `entries` afterwards does not change it.
 */
export function lazyRecord<V>(
  entries: ReadonlyMap<string, Snapshot<V>>,
  options: LazyRecordOptions = {},
): Snapshot<Record<string, V>> {
  const copy: ReadonlyMap<string, unknown> = options.handOver ? entries : new Map<string, unknown>(entries);
  const target = newObject();
  let made = false;
  const make = (): Record<string, unknown> => {
    if (!made) {
      for (const [key, value] of copy) target[key] = value;
      Object.freeze(target);
      made = true;
    }
    return target;
  };
  // every trap makes the properties first, then forwards to them: the proxy is the sealed record
  const record = new Proxy(target, {
    get: (_t, key): unknown => Reflect.get(make(), key),
    has: (_t, key) => Reflect.has(make(), key),
    ownKeys: () => Reflect.ownKeys(make()),
    getOwnPropertyDescriptor: (_t, key) => Reflect.getOwnPropertyDescriptor(make(), key),
    isExtensible: () => Reflect.isExtensible(make()),
    preventExtensions: () => Reflect.preventExtensions(make()),
    set: (_t, key, value) => Reflect.set(make(), key, value),
    defineProperty: (_t, key, desc) => Reflect.defineProperty(make(), key, desc),
    deleteProperty: (_t, key) => Reflect.deleteProperty(make(), key),
    setPrototypeOf: (_t, proto) => Reflect.setPrototypeOf(make(), proto),
  });
  lazyEntries.set(record, copy);
  return record as Snapshot<Record<string, V>>;
}

/**
 * The entries of a record made by {@link lazyRecord} (in the order given; note that the
 * record's own key order, as for any object, lists integer-like keys first), or undefined for
 * any other value. Reading them makes no property of the record.
 */
export function lazyRecordEntries<V>(
  record: Snapshot<Record<string, V>> | undefined,
): ReadonlyMap<string, Snapshot<V>> | undefined {
  if (typeof record !== 'object' || record === null) return undefined;
  return lazyEntries.get(record) as ReadonlyMap<string, Snapshot<V>> | undefined;
}

/**
 * A mutable deep copy of JSON data (null-prototype objects): the explicit step before changing
 * something an Env read returned.
 */
export function thaw<T>(value: Snapshot<T> | T): T {
  return melt(value) as T;
}

function melt(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => melt(v === undefined ? null : v));
  const out = Object.create(null) as Record<string, unknown>;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = melt(v);
  }
  return out;
}

/** A fresh null-prototype object, for maps keyed by names that come from input. */
export function nullRecord<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}
