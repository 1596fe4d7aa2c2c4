import { isSnapshot, lazyRecordEntries, thaw, type Snapshot } from '@poise/env';
import { compareNames } from '@poise/usage';
import { EntryList } from './entry-list';

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

/** The text of a thrown value, as Perl's `$@` would print it. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * `obj[key]` if `key` is an own property, else undefined: the lookup for objects keyed by names
 * from input, where `toString` or `__proto__` must not find what `Object.prototype` holds.
 */
export function own<V>(obj: { readonly [key: string]: V } | undefined | null, key: string): V | undefined {
  if (obj == null) return undefined;
  if (key === '__proto__') return Object.hasOwn(obj, key) ? obj[key] : undefined;
  const v = obj[key];
  // only a value Object.prototype also holds can be inherited, and every one of those (but
  // `__proto__`, handled above) is a function: look at the prototype for functions only (a
  // keyed read of Object.prototype with ever new keys is slow, and data values never need it)
  if (typeof v === 'function' && v === (OBJECT_PROTO as Record<string, unknown>)[key] && !Object.hasOwn(obj, key))
    return undefined;
  return v;
}

const OBJECT_PROTO: object = Object.prototype;

/** Whether an object has no own enumerable key (O(1), unlike `Object.keys(obj).length`). */
export function isEmptyRecord(obj: object | undefined | null): boolean {
  if (obj == null) return true;
  // for-in lists every key of a large object up front: ask once per snapshot
  const entries = lazyRecordEntries(obj as Snapshot<Record<string, unknown>>);
  if (entries !== undefined) return entries.size === 0;
  return memo(obj, 'isEmpty', () => {
    for (const key in obj) if (Object.hasOwn(obj, key)) return false;
    return true;
  });
}

/** Values derived from immutable snapshots, kept as long as the snapshot lives. */
const derived = new WeakMap<object, Map<string, unknown>>();

/**
 * `compute()`, remembered per snapshot under `key` when `obj` is an immutable snapshot of the
 * Env (its contents can never change, so neither can anything computed from it); computed
 * afresh for any other object. Several daemons read the same snapshot each round: what one
 * of them derives in O(entries) the others get in O(1).
 */
export function memo<T>(obj: object, key: string, compute: () => T): T {
  if (!isSnapshot(obj)) return compute();
  let cache = derived.get(obj);
  if (!cache) {
    cache = new Map();
    derived.set(obj, cache);
  }
  if (cache.has(key)) return cache.get(key) as T;
  const value = compute();
  cache.set(key, value);
  return value;
}

const NO_KEYS: readonly string[] = Object.freeze([]);

/**
 * Sorts key lists in byte order, remembering the last list it sorted: when the next list has
 * the same keys in the same order (a new version of a document whose keys did not change, e.g.
 * the service status of the next round), the sorted copy is returned again after an O(n)
 * comparison instead of an O(n log n) sort. One instance per kind of document.
 */
export class KeyOrder {
  private keys: readonly string[] = NO_KEYS;
  private sorted: readonly string[] = NO_KEYS;
  private order: readonly number[] | undefined;

  /**
   * For the last list {@link sort} was given: position by position of its sorted copy, where
   * that key is in the list (`sorted[i] === keys[positions()[i]]`); made at the first call.
   */
  positions(): readonly number[] {
    if (this.order === undefined) {
      const keys = this.keys;
      const where = new Map<string, number>();
      for (let i = 0; i < keys.length; i++) where.set(keys[i]!, i);
      this.order = Object.freeze(this.sorted.map((key) => where.get(key)!));
    }
    return this.order;
  }

  /**
   * `keys` in byte order (frozen; do not change it). `keys` is remembered and must not change
   * afterwards either: the same array again is answered without a comparison.
   */
  sort(keys: readonly string[]): readonly string[] {
    const last = this.keys;
    if (keys === last) return this.sorted;
    if (keys.length === last.length) {
      let same = true;
      for (let i = 0; i < keys.length; i++) {
        if (keys[i] !== last[i]) {
          same = false;
          break;
        }
      }
      if (same) return this.sorted;
    }
    this.keys = keys;
    this.sorted = Object.freeze([...keys].sort(compareNames));
    this.order = undefined;
    return this.sorted;
  }
}

/** Keys of an object in byte order (remembered for snapshots; do not change the array). */
export function sortedKeys(obj: { readonly [key: string]: unknown } | undefined | null): readonly string[] {
  if (!obj) return NO_KEYS;
  return memo(obj, 'sortedKeys', () => Object.freeze(Object.keys(obj).sort(compareNames)));
}

/**
 * A mutable deep copy of JSON data (a JSON round trip: undefined keys dropped, null-prototype
 * objects, so `__proto__` is copied as a key). The same as `thaw` of `@poise/env`, which new
 * code should use; nothing in the HA core copies whole documents any more (Env reads are
 * immutable snapshots).
 * @deprecated use `thaw` from `@poise/env`.
 */
export function jsonClone<T>(value: T): T {
  return thaw<T>(value);
}

/** Perl truthiness of a scalar: undef, '', 0 and '0' are false. */
export function perlTrue(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (value === '' || value === '0' || value === 0) return false;
  return true;
}

/** `sid` → `[type, name]`, e.g. `vm:101` → `['vm', '101']`. */
function parseSid(sid: string): { type: string; name: string } {
  const m = /^(\w+):(\S+)$/.exec(sid);
  if (!m) throw new Error(`unable to parse service id '${sid}'`);
  return { type: m[1]!, name: m[2]! };
}

/** Types of the sids parsed so far (an LRM parses every service's sid every round). */
const sidTypes = new Map<string, string>();
/** {@link sidTypes} starts over when it reaches this many sids (a process that sees ever new ones). */
const SID_TYPES_MAX = 1_000_000;

/** The type of a service id, as {@link parseSid} gives it (and with its error); remembered. */
export function sidType(sid: string): string {
  let type = sidTypes.get(sid);
  if (type === undefined) {
    type = parseSid(sid).type;
    if (sidTypes.size >= SID_TYPES_MAX) sidTypes.clear();
    sidTypes.set(sid, type);
  }
  return type;
}

/** What the daemons derive from a service status document, in one pass (see {@link serviceIndex}). */
export interface ServiceIndex {
  /** Service ids in byte order. */
  readonly sorted: readonly string[];
  /** Per node, the services whose `node` it is, in byte order. */
  readonly byNode: ReadonlyMap<string, readonly string[]>;
  /** Per node, the services in state `fence` on it. */
  readonly fenced: ReadonlyMap<string | undefined, number>;
  /**
   * Per node, the services an LRM there must keep its lock for: on it or moving to it, in any
   * state but stopped, freeze, error and request_start.
   */
  readonly active: ReadonlyMap<string, number>;
  /** The uids of all services. */
  readonly uids: ReadonlySet<string>;
  /**
   * For a status whose entries are an {@link EntryList} (the master's): per node, where the
   * entries of its services ({@link byNode}, in that order) sit in the list's values, so that a
   * reader takes them by position instead of by sid. Undefined for any other status.
   */
  readonly byNodeAt: ReadonlyMap<string, readonly number[]> | undefined;
}

/** The byte order of service status keys (usually the same keys round after round). */
const statusOrder = new KeyOrder();

/**
 * The last {@link ServiceIndex.byNode} built, with the sorted ids and their nodes it was built
 * from: while a new status has the same ids on the same nodes (most rounds), its index shares the
 * lists instead of building 64 new ones.
 */
let lastByNode:
  | {
      sorted: readonly string[];
      nodes: readonly (string | undefined)[];
      byNode: ReadonlyMap<string, readonly string[]>;
      byNodeAt: ReadonlyMap<string, readonly number[]> | undefined;
    }
  | undefined;

/**
 * The {@link ServiceIndex} of a service status document, built in one pass over it and
 * remembered per snapshot: every daemon reads the same status each round, and a large
 * document's keys are costly to enumerate.
 */
export function serviceIndex(ss: { readonly [sid: string]: Readonly<ServiceStatusLike> }): ServiceIndex {
  return memo(ss, 'serviceIndex', () => {
    // a lazy record (the master's status): its entries, without making its properties; the
    // master's entry list hands out its key array (the same one while the keys stay) and its
    // values by position
    const entries = lazyRecordEntries(ss);
    const list = entries instanceof EntryList ? (entries as EntryList<Readonly<ServiceStatusLike>>) : undefined;
    const sorted = statusOrder.sort(list ? list.keyList : entries ? [...entries.keys()] : Object.keys(ss));
    const positions = list ? statusOrder.positions() : undefined;
    const values = list?.valueList;
    const entryAt = (i: number): Readonly<ServiceStatusLike> =>
      values !== undefined ? values[positions![i]!]! : (entries ? entries.get(sorted[i]!) : ss[sorted[i]!])!;
    const fenced = new Map<string | undefined, number>();
    const active = new Map<string, number>();
    const uids = new Set<string>();
    // (positions depend only on the keys, which the same sorted array stands for)
    const last =
      lastByNode?.sorted === sorted && (lastByNode.byNodeAt !== undefined) === (positions !== undefined)
        ? lastByNode
        : undefined;
    let sameNodes = last !== undefined;
    for (let i = 0; i < sorted.length; i++) {
      const sd = entryAt(i);
      const node = sd.node;
      const state = sd.state;
      if (sd.uid) uids.add(sd.uid);
      if (state === 'fence') fenced.set(node, (fenced.get(node) ?? 0) + 1);
      if (sameNodes && node !== last!.nodes[i]) sameNodes = false;
      if (!node) continue;
      if (
        state === undefined ||
        state === 'stopped' ||
        state === 'freeze' ||
        state === 'error' ||
        state === 'request_start'
      )
        continue;
      active.set(node, (active.get(node) ?? 0) + 1);
      const target = sd.target;
      if (target !== undefined && target !== node) active.set(target, (active.get(target) ?? 0) + 1);
    }
    let byNode: ReadonlyMap<string, readonly string[]>;
    let byNodeAt: ReadonlyMap<string, readonly number[]> | undefined;
    if (sameNodes) {
      byNode = last!.byNode;
      byNodeAt = last!.byNodeAt;
    } else {
      const lists = new Map<string, string[]>();
      const at = positions !== undefined ? new Map<string, number[]>() : undefined;
      const nodes = new Array<string | undefined>(sorted.length);
      for (let i = 0; i < sorted.length; i++) {
        const node = entryAt(i).node;
        nodes[i] = node;
        if (!node) continue;
        let l = lists.get(node);
        if (!l) lists.set(node, (l = []));
        l.push(sorted[i]!);
        if (at !== undefined) {
          let p = at.get(node);
          if (!p) at.set(node, (p = []));
          p.push(positions![i]!);
        }
      }
      byNode = lists;
      byNodeAt = at;
      lastByNode = { sorted, nodes, byNode, byNodeAt };
    }
    return { sorted, byNode, fenced, active, uids, byNodeAt };
  });
}

/**
 * A service's entry in a service status document, undefined when it has none: `own(ss, sid)`,
 * read from the entries of a lazy record (the master's status) without making its properties.
 */
export function statusEntry<T>(ss: Snapshot<Record<string, T>> | undefined, sid: string): Snapshot<T> | undefined {
  const entries = lazyRecordEntries(ss);
  if (entries !== undefined) return entries.get(sid);
  return own(ss, sid);
}

/** The fields of a service status entry the {@link ServiceIndex} reads. */
interface ServiceStatusLike {
  readonly state: string;
  readonly node: string;
  readonly uid?: string | undefined;
  readonly target?: string | undefined;
}

/** Number of services in state `fence` on `node`. */
export function countFencedServices(
  ss: { readonly [sid: string]: Readonly<ServiceStatusLike> } | undefined,
  node: string,
): number {
  if (!ss) return 0;
  return serviceIndex(ss).fenced.get(node) ?? 0;
}
