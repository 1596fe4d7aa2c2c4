/**
 * The Node.js versions a package really runs on: the root's `engines.node` raised to the
 * highest floor any package it installs declares (its dependencies and peer dependencies,
 * followed through the installed tree, workspace packages included). npm warns `EBADENGINE`
 * when a package in the tree declares more than the one installed: a package that declares
 * less than its dependencies promises what it cannot keep.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import semver from 'semver';

/** A package.json as read (the workspace's `Manifest`; this module reads its dependency fields only). */
type Manifest = Readonly<Record<string, unknown>>;

/** Why a package needs more than the root declares: the range and who declares it. */
export interface EngineFloor {
  /** `engines.node` to declare (the root's own text when nothing raises it). */
  range: string;
  /** The installed packages whose floors decided it (`undici@7.30.2: >=20.18.1`), empty if none. */
  raisedBy: string[];
}

function readManifest(dir: string): Manifest | undefined {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
}

/** The installed directory of `name` as Node.js would find it from `fromDir`, or undefined. */
function findInstalled(fromDir: string, name: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    if (basename(dir) !== 'node_modules') {
      const candidate = join(dir, 'node_modules', name);
      if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function runtimeDependencies(manifest: Manifest): string[] {
  const names = (field: unknown) => (typeof field === 'object' && field !== null ? Object.keys(field) : []);
  return [...new Set([...names(manifest.dependencies), ...names(manifest.peerDependencies)])];
}

/** Every `engines.node` range in the installed tree under `dir` (the package itself excluded). */
function dependencyRanges(dir: string, manifest: Manifest): Array<{ who: string; range: string }> {
  if (!existsSync(dir)) return [];
  const seen = new Set<string>([realpathSync(dir)]);
  const found: Array<{ who: string; range: string }> = [];
  const visit = (from: string, m: Manifest) => {
    for (const name of runtimeDependencies(m)) {
      const depDir = findInstalled(from, name);
      if (depDir === undefined || seen.has(depDir)) continue;
      seen.add(depDir);
      const dep = readManifest(depDir);
      if (dep === undefined) continue;
      const range = (dep.engines as { node?: unknown } | undefined)?.node;
      if (typeof range === 'string' && semver.validRange(range) !== null)
        found.push({ who: `${String(dep.name)}@${String(dep.version)}`, range });
      visit(depDir, dep);
    }
  };
  visit(dir, manifest);
  return found;
}

/** A version interval: from `lo` (inclusive unless `loOpen`) to `hi` (exclusive unless `hiClosed`; none = unbounded). */
interface Interval {
  lo: string;
  loOpen: boolean;
  hi?: string;
  hiClosed: boolean;
}

const ZERO = '0.0.0-0';

/** The interval an AND-set of comparators allows, or undefined when it allows nothing. */
function intervalOf(comparators: readonly semver.Comparator[]): Interval | undefined {
  const iv: Interval = { lo: ZERO, loOpen: false, hiClosed: false };
  for (const c of comparators) {
    const v = c.semver.version;
    if (c.operator === '' && v === undefined) continue; // `*`
    if (c.operator === '>=' || c.operator === '>' || c.operator === '') {
      const open = c.operator === '>';
      const cmp = semver.compare(v, iv.lo);
      if (cmp > 0 || (cmp === 0 && open)) Object.assign(iv, { lo: v, loOpen: open });
    }
    if (c.operator === '<' || c.operator === '<=' || c.operator === '') {
      const closed = c.operator !== '<';
      const cmp = iv.hi === undefined ? -1 : semver.compare(v, iv.hi);
      if (cmp < 0 || (cmp === 0 && !closed)) Object.assign(iv, { hi: v, hiClosed: closed });
    }
  }
  if (iv.hi === undefined) return iv;
  const cmp = semver.compare(iv.lo, iv.hi);
  return cmp < 0 || (cmp === 0 && !iv.loOpen && iv.hiClosed) ? iv : undefined;
}

/** `a` and `b` overlap or touch, so one interval covers both. */
function joinable(a: Interval, b: Interval): boolean {
  if (a.hi === undefined) return true;
  // `<23.0.0-0` then `>=23.0.0`: only pre-releases lie between, and Node.js has none
  if (!a.hiClosed && a.hi.endsWith('-0') && !b.loOpen && b.lo === a.hi.slice(0, -2)) return true;
  const cmp = semver.compare(b.lo, a.hi);
  return cmp < 0 || (cmp === 0 && (a.hiClosed || !b.loOpen));
}

function printInterval(iv: Interval): string {
  const lo = `${iv.loOpen ? '>' : '>='}${iv.lo}`;
  if (iv.hi === undefined) return lo;
  const lower = semver.parse(iv.lo)!;
  // `>=20.19.0 <21.0.0-0` is how semver spells `^20.19.0`
  if (!iv.loOpen && !iv.hiClosed && lower.major > 0 && iv.hi === `${lower.major + 1}.0.0-0`) return `^${iv.lo}`;
  return `${lo} ${iv.hiClosed ? '<=' : '<'}${iv.hi}`;
}

/** The versions every one of `ranges` allows, as one simplified range; undefined if none. */
export function intersectRanges(ranges: readonly string[]): string | undefined {
  let sets: semver.Comparator[][] = [[]];
  for (const range of new Set(ranges)) {
    const next: semver.Comparator[][] = [];
    for (const set of sets) for (const alt of new semver.Range(range).set) next.push([...set, ...alt]);
    sets = next.filter((s) => intervalOf(s) !== undefined);
  }
  const intervals = sets
    .map(intervalOf)
    .filter((iv): iv is Interval => iv !== undefined)
    .sort((a, b) => semver.compare(a.lo, b.lo) || Number(a.loOpen) - Number(b.loOpen));
  const merged: Interval[] = [];
  for (const iv of intervals) {
    const last = merged[merged.length - 1];
    if (last && joinable(last, iv)) {
      if (
        last.hi !== undefined &&
        (iv.hi === undefined || semver.gt(iv.hi, last.hi) || (iv.hi === last.hi && iv.hiClosed))
      ) {
        Object.assign(last, { hi: iv.hi, hiClosed: iv.hiClosed });
      }
    } else {
      merged.push({ ...iv });
    }
  }
  return merged.length === 0 ? undefined : merged.map(printInterval).join(' || ');
}

/**
 * The `engines.node` a package at `dir` must declare: `rootRange` when every installed
 * dependency accepts every version it allows, else the versions the root range and every
 * dependency allow (`>=20.18.1`, `^20.19.0 || >=22.12.0`). Throws when there are none.
 */
export function engineFloor(dir: string, manifest: Manifest, rootRange: string): EngineFloor {
  if (semver.validRange(rootRange) === null)
    throw new Error(`the root package.json's 'engines.node' ${JSON.stringify(rootRange)} is not a semver range`);
  const ranges = dependencyRanges(dir, manifest);
  const raisedBy = ranges.filter((r) => !semver.subset(rootRange, r.range)).map((r) => `${r.who}: ${r.range}`);
  if (raisedBy.length === 0) return { range: rootRange, raisedBy };
  const range = intersectRanges([rootRange, ...ranges.map((r) => r.range)]);
  if (range === undefined)
    throw new Error(`no Node.js version satisfies the root's ${rootRange} and ${raisedBy.join(', ')}`);
  return { range, raisedBy };
}
