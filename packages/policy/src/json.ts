/**
 * Whether a stage state is plain JSON (see `Stage`): objects with the plain prototype (or none),
 * arrays without holes, strings, finite numbers, booleans and `null`; no `undefined` field, no
 * function, symbol, BigInt, NaN or Infinity, no Map, Set, Date or other class instance, no
 * cycle. Such a state survives `JSON.parse(JSON.stringify(state))` exactly (a persisted state
 * restores what the round returned).
 */

/**
 * Containers already found plain JSON, all the way down. States are never mutated (the `Stage`
 * contract), so an object checked once stays checked: a state that shares most of its objects
 * with the one before it (a learned model updated a little per round) is walked only where it
 * changed.
 */
const CHECKED = new WeakSet<object>();

/** What a value is, for the problem (`a function`, `NaN`, `a Map`). */
function kind(value: unknown): string {
  switch (typeof value) {
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    case 'bigint':
      return 'a BigInt';
    case 'undefined':
      return 'undefined';
    case 'number':
      return String(value);
    default: {
      const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
      return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object that is not plain';
    }
  }
}

/**
 * The first part of `value` that is not plain JSON, as `<path> is <what>` (`state.pairs.0.until
 * is NaN`, `state.cache is a Map`, `state.self is a cycle`), or `undefined` when it all is.
 * `path` names the value itself (default `state`). O(size of the parts not checked before).
 */
export function jsonProblem(value: unknown, path = 'state'): string | undefined {
  return walk(value, path, new Set());
}

function walk(value: unknown, path: string, open: Set<object>): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${path} is ${kind(value)}`;
  if (typeof value !== 'object') return `${path} is ${kind(value)}`;
  if (CHECKED.has(value)) return undefined;
  if (open.has(value)) return `${path} is a cycle (it contains itself)`;
  let problem: string | undefined;
  open.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && problem === undefined; i++) {
      problem = i in value ? walk(value[i], `${path}.${i}`, open) : `${path}.${i} is a hole (a sparse array)`;
    }
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      problem = `${path} is ${kind(value)}`;
    } else if (Object.getOwnPropertySymbols(value).length > 0) {
      problem = `${path} has a symbol key`;
    } else {
      for (const key in value) {
        problem = walk((value as Record<string, unknown>)[key], `${path}.${key}`, open);
        if (problem !== undefined) break;
      }
    }
  }
  open.delete(value);
  if (problem === undefined) CHECKED.add(value);
  return problem;
}
