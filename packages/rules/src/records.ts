/**
 * Records keyed by names from input (rule ids, node names, service ids). Such names may be
 * `toString`, `constructor`, `hasOwnProperty` or `__proto__`, so the engine creates its records
 * without a prototype and reads records it is given through own properties only.
 */

/** A new empty record without a prototype: every key, `__proto__` included, is plain data. */
export function nullRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** `record[key]` if `key` is an own property of `record`, else undefined (never inherited). */
export function getOwn<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}

/** Whether `key` is an own property of `record`. */
export function hasOwn(record: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(record, key);
}

/**
 * Sets `record[key] = value` as an own data property, also for `__proto__` on a record that
 * has a prototype (a plain assignment would change the prototype instead).
 */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') {
    Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    record[key] = value;
  }
}

/** A prototype-free shallow copy of `record`'s own enumerable properties. */
export function copyRecord<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  const copy = nullRecord<T>();
  for (const key of Object.keys(record)) copy[key] = record[key] as T;
  return copy;
}
