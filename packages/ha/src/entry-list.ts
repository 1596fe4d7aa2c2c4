/**
 * A read-only map over two parallel arrays, keys and values, for the documents the daemons
 * publish every round as lazy records (`lazyRecord` of `@poise/env`, with `handOver`): the
 * master's service status (5,000 entries whose keys rarely change) and an LRM's results (a few
 * dozen entries under fresh uids). Building one costs the two arrays, not a hash table: the key
 * index is passed in when it is shared with the previous version (the same keys in the same
 * order) or made at the first lookup by key, and readers that only walk the entries
 * ({@link keyList}, {@link valueList}) never make it.
 *
 * Contract: the keys are distinct, both arrays have the same length and neither changes after
 * the list is made (the list is part of an immutable snapshot); an index passed in maps every key
 * to its position and nothing else.
 */
export class EntryList<V> implements ReadonlyMap<string, V> {
  private index: ReadonlyMap<string, number> | undefined;

  constructor(
    /** The keys, in the order of the entries. */
    readonly keyList: readonly string[],
    /** The values, position by position with {@link keyList}. */
    readonly valueList: readonly V[],
    index?: ReadonlyMap<string, number>,
  ) {
    if (keyList.length !== valueList.length)
      throw new RangeError(`entry list: ${keyList.length} keys but ${valueList.length} values`);
    if (index !== undefined && index.size !== keyList.length)
      throw new RangeError(`entry list: an index of ${index.size} keys for ${keyList.length} entries`);
    this.index = index;
  }

  /** The key → position index (shared with a later list of the same keys). */
  keyIndex(): ReadonlyMap<string, number> {
    if (this.index === undefined) this.index = keyIndexOf(this.keyList);
    return this.index;
  }

  get size(): number {
    return this.keyList.length;
  }

  get(key: string): V | undefined {
    const i = this.keyIndex().get(key);
    return i === undefined ? undefined : this.valueList[i];
  }

  has(key: string): boolean {
    return this.keyIndex().has(key);
  }

  forEach(callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void, thisArg?: unknown): void {
    const keys = this.keyList;
    const values = this.valueList;
    for (let i = 0; i < keys.length; i++) callback.call(thisArg, values[i]!, keys[i]!, this);
  }

  *entries(): MapIterator<[string, V]> {
    const keys = this.keyList;
    const values = this.valueList;
    for (let i = 0; i < keys.length; i++) yield [keys[i]!, values[i]!];
  }

  *keys(): MapIterator<string> {
    yield* this.keyList;
  }

  *values(): MapIterator<V> {
    yield* this.valueList;
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }
}

/** Key → position of a list of distinct keys (a repeated key is a broken contract: thrown). */
export function keyIndexOf(keys: readonly string[]): ReadonlyMap<string, number> {
  const index = new Map<string, number>();
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (index.has(key)) throw new RangeError(`entry list: key '${key}' appears twice`);
    index.set(key, i);
  }
  return index;
}
