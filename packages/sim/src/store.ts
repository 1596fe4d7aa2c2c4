import { openRecord, sealRecord, snapshot, type Snapshot } from '@poise/env';
import { compareNames } from '@poise/usage';

/**
 * A document keyed by name (service config, service stats) as the simulated cluster keeps it:
 * mutable raw entries inside, immutable snapshots outside. The snapshot of an entry is made
 * when it is first read after a change and then reused; the whole document is reassembled
 * from those entry snapshots when it is read after a change (O(keys) pointer copies, no deep
 * copy), and returned as it is while nothing changes (O(1)).
 */
export class KeyedStore<R extends object, V = R> {
  private readonly raw = new Map<string, R>();
  private readonly entries = new Map<string, Snapshot<V>>();
  private document: Snapshot<Record<string, V>> | undefined;
  private sorted: string[] | undefined;

  /** `derive` turns a raw entry into what readers see (e.g. applies defaults). */
  constructor(private readonly derive: (key: string, raw: R) => V = (_key, raw) => raw as unknown as V) {}

  get size(): number {
    return this.raw.size;
  }

  has(key: string): boolean {
    return this.raw.has(key);
  }

  /** The raw entry; after changing it in place, call {@link changed}. */
  get(key: string): R | undefined {
    return this.raw.get(key);
  }

  set(key: string, entry: R): void {
    if (!this.raw.has(key)) this.sorted = undefined;
    this.raw.set(key, entry);
    this.changed(key);
  }

  delete(key: string): boolean {
    if (!this.raw.delete(key)) return false;
    this.sorted = undefined;
    this.changed(key);
    return true;
  }

  /** Marks `key` as changed in place. */
  changed(key: string): void {
    this.entries.delete(key);
    this.document = undefined;
  }

  keys(): IterableIterator<string> {
    return this.raw.keys();
  }

  /** Keys in byte order (cached until a key is added or removed). */
  sortedKeys(): readonly string[] {
    this.sorted ??= [...this.raw.keys()].sort(compareNames);
    return this.sorted;
  }

  /** The snapshot of one entry (as readers see it), undefined when absent. */
  entry(key: string): Snapshot<V> | undefined {
    let e = this.entries.get(key);
    if (e !== undefined) return e;
    const raw = this.raw.get(key);
    if (raw === undefined) return undefined;
    e = snapshot(this.derive(key, raw));
    this.entries.set(key, e);
    return e;
  }

  /** The whole document as one snapshot (keys in insertion order). */
  snapshot(): Snapshot<Record<string, V>> {
    if (this.document) return this.document;
    const out = openRecord<V>();
    for (const key of this.raw.keys()) out[key] = this.entry(key)!;
    this.document = sealRecord(out);
    return this.document;
  }
}
