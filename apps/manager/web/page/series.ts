/**
 * The page's history in typed columns, and its down-sampling for the charts: pure (no DOM), so
 * `src/runtime/page-series.test.ts` checks it. A day of 64 nodes is 8,641 rounds × 128 load
 * columns; a chart shows at most a few hundred buckets of it, each keeping its lowest and
 * highest value (a spike of one round stays visible whatever the window).
 */

/** The history as `/api/history` answers it (the columns the page charts). */
export interface HistoryDoc {
  readonly intervalSeconds: number;
  readonly keptSeconds: number;
  readonly thresholdPercent: number;
  readonly rounds: readonly number[];
  readonly time: readonly number[];
  readonly imbalance: readonly (number | null)[];
  readonly nodes: Readonly<
    Record<string, { readonly cpu: readonly (number | null)[]; readonly mem: readonly (number | null)[] }>
  >;
}

/** One node's load columns (ratios 0..1, NaN where a round did not read it). */
export interface NodeColumns {
  cpu: Float32Array;
  mem: Float32Array;
}

/**
 * The rounds the page holds, oldest first, in growable typed columns (4 bytes a value, not the
 * parsed JSON's boxed numbers): appended as polls bring them, the oldest dropped beyond
 * `maxRounds`.
 */
export class HistoryStore {
  length = 0;
  rounds = new Uint32Array(0);
  /** Seconds, the daemon's clock. */
  time = new Float64Array(0);
  imbalance = new Float32Array(0);
  readonly nodes = new Map<string, NodeColumns>();
  thresholdPercent = 0;
  /** Bumped by every change: a chart redraws only when it moved. */
  version = 0;

  constructor(private readonly maxRounds: number) {
    if (!Number.isInteger(maxRounds) || maxRounds < 1)
      throw new RangeError(`the page's history bound must be a whole number ≥ 1, got ${maxRounds}`);
  }

  get lastRound(): number | undefined {
    return this.length === 0 ? undefined : this.rounds[this.length - 1];
  }

  get lastTime(): number | undefined {
    return this.length === 0 ? undefined : this.time[this.length - 1];
  }

  /** Appends the rounds of a reply (those after the last held; earlier ones are ignored). */
  append(doc: HistoryDoc): number {
    const last = this.lastRound ?? -1;
    let first = 0;
    while (first < doc.rounds.length && doc.rounds[first]! <= last) first++;
    let n = doc.rounds.length - first;
    // more than the bound in one reply: its newest rounds
    if (n > this.maxRounds) {
      first += n - this.maxRounds;
      n = this.maxRounds;
    }
    this.thresholdPercent = doc.thresholdPercent;
    if (n === 0) return 0;
    this.makeRoom(n);
    const at = this.length;
    for (let k = 0; k < n; k++) {
      this.rounds[at + k] = doc.rounds[first + k]!;
      this.time[at + k] = doc.time[first + k]!;
      this.imbalance[at + k] = doc.imbalance[first + k] ?? Number.NaN;
    }
    for (const [name, series] of Object.entries(doc.nodes)) {
      let columns = this.nodes.get(name);
      if (columns === undefined) {
        columns = { cpu: nanColumn(this.time.length), mem: nanColumn(this.time.length) };
        this.nodes.set(name, columns);
      }
      for (let k = 0; k < n; k++) {
        columns.cpu[at + k] = series.cpu[first + k] ?? Number.NaN;
        columns.mem[at + k] = series.mem[first + k] ?? Number.NaN;
      }
    }
    // a node the reply did not list read nothing in these rounds
    for (const [name, columns] of this.nodes) {
      if (name in doc.nodes) continue;
      columns.cpu.fill(Number.NaN, at, at + n);
      columns.mem.fill(Number.NaN, at, at + n);
    }
    this.length += n;
    this.version++;
    return n;
  }

  get firstRound(): number | undefined {
    return this.length === 0 ? undefined : this.rounds[0];
  }

  /** Whether it holds as many rounds as it may. */
  get full(): boolean {
    return this.length >= this.maxRounds;
  }

  /**
   * Puts the rounds of a reply before those held (a piece of older rounds: those below the
   * first held), as many as the bound leaves room for (the newest of them).
   */
  prepend(doc: HistoryDoc): number {
    if (this.length === 0) return this.append(doc);
    const firstHeld = this.rounds[0]!;
    let end = 0;
    while (end < doc.rounds.length && doc.rounds[end]! < firstHeld) end++;
    const n = Math.min(end, this.maxRounds - this.length);
    if (n <= 0) return 0;
    const from = end - n;
    const size = Math.max(this.time.length, this.length + n);
    const shifted = <T extends Float32Array | Float64Array | Uint32Array>(
      old: T,
      make: (size: number) => T,
      nan: boolean,
    ): T => {
      const next = make(size);
      if (nan && next instanceof Float32Array) next.fill(Number.NaN);
      next.set(old.subarray(0, this.length), n);
      return next;
    };
    this.rounds = shifted(this.rounds, (z) => new Uint32Array(z), false);
    this.time = shifted(this.time, (z) => new Float64Array(z), false);
    this.imbalance = shifted(this.imbalance, (z) => new Float32Array(z), true);
    for (const c of this.nodes.values()) {
      c.cpu = shifted(c.cpu, (z) => new Float32Array(z), true);
      c.mem = shifted(c.mem, (z) => new Float32Array(z), true);
    }
    for (let k = 0; k < n; k++) {
      this.rounds[k] = doc.rounds[from + k]!;
      this.time[k] = doc.time[from + k]!;
      this.imbalance[k] = doc.imbalance[from + k] ?? Number.NaN;
    }
    for (const [name, series] of Object.entries(doc.nodes)) {
      let columns = this.nodes.get(name);
      if (columns === undefined) {
        columns = { cpu: nanColumn(size), mem: nanColumn(size) };
        this.nodes.set(name, columns);
      }
      for (let k = 0; k < n; k++) {
        columns.cpu[k] = series.cpu[from + k] ?? Number.NaN;
        columns.mem[k] = series.mem[from + k] ?? Number.NaN;
      }
    }
    this.length += n;
    this.version++;
    return n;
  }

  /** Forgets every round (a new daemon run). */
  clear(): void {
    this.length = 0;
    this.nodes.clear();
    this.version++;
  }

  /** Room for `n` more rounds: the columns grow (doubling), and beyond the bound the oldest go. */
  private makeRoom(n: number): void {
    const drop = Math.max(0, this.length + n - this.maxRounds);
    if (drop > 0) {
      const keep = Math.max(0, this.length - drop);
      const from = this.length - keep;
      this.rounds.copyWithin(0, from, this.length);
      this.time.copyWithin(0, from, this.length);
      this.imbalance.copyWithin(0, from, this.length);
      for (const c of this.nodes.values()) {
        c.cpu.copyWithin(0, from, this.length);
        c.mem.copyWithin(0, from, this.length);
      }
      this.length = keep;
    }
    const need = this.length + Math.min(n, this.maxRounds);
    if (need <= this.time.length) return;
    const capacity = Math.min(this.maxRounds, Math.max(need, this.time.length * 2, 256));
    const grow = <T extends Float32Array | Float64Array | Uint32Array>(
      old: T,
      make: (size: number) => T,
      nan: boolean,
    ): T => {
      const next = make(capacity);
      if (nan && next instanceof Float32Array) next.fill(Number.NaN);
      next.set(old.subarray(0, this.length));
      return next;
    };
    this.rounds = grow(this.rounds, (s) => new Uint32Array(s), false);
    this.time = grow(this.time, (s) => new Float64Array(s), false);
    this.imbalance = grow(this.imbalance, (s) => new Float32Array(s), true);
    for (const c of this.nodes.values()) {
      c.cpu = grow(c.cpu, (s) => new Float32Array(s), true);
      c.mem = grow(c.mem, (s) => new Float32Array(s), true);
    }
  }
}

function nanColumn(size: number): Float32Array {
  return new Float32Array(size).fill(Number.NaN);
}

/** The index of the first time ≥ `from` in the first `length` (sorted) times. */
function firstAtOrAfter(time: Float64Array, length: number, from: number): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (time[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A chart's window: the rounds `[start, end)` spanning `from`..`to` (seconds), in `buckets` equal slices. */
export interface ChartWindow {
  readonly start: number;
  readonly end: number;
  readonly from: number;
  readonly to: number;
  readonly buckets: number;
}

/** The window of the last `seconds` (0: all) of the history, cut in at most `maxBuckets` slices. */
export function chartWindow(store: HistoryStore, seconds: number, maxBuckets: number): ChartWindow {
  const end = store.length;
  if (end === 0) return { start: 0, end: 0, from: 0, to: 0, buckets: 0 };
  const to = store.time[end - 1]!;
  const start = seconds > 0 ? firstAtOrAfter(store.time, end, to - seconds) : 0;
  const from = store.time[start]!;
  return { start, end, from, to, buckets: Math.max(1, Math.min(maxBuckets, end - start)) };
}

function bucketOf(w: ChartWindow, t: number): number {
  if (w.to <= w.from) return 0;
  return Math.min(w.buckets - 1, Math.floor(((t - w.from) / (w.to - w.from)) * w.buckets));
}

/** A point of a down-sampled line: seconds, and the value (null: no value in that slice, the line breaks). */
export interface LinePoint {
  readonly t: number;
  readonly v: number | null;
}

/**
 * A column down-sampled for a line: per slice its lowest and its highest value, each at the
 * time it was seen and in that order (one point when they are the same round); a slice without
 * a value is a null (a gap). With as many slices as rounds this is every round.
 */
export function minMaxLine(time: Float64Array, values: Float32Array, w: ChartWindow): LinePoint[] {
  const out: LinePoint[] = [];
  let bucket = -1;
  let lo = -1;
  let hi = -1;
  let firstT = 0;
  const flush = () => {
    if (bucket < 0) return;
    if (lo < 0) out.push({ t: firstT, v: null });
    else if (lo === hi) out.push({ t: time[lo]!, v: values[lo]! });
    else {
      const [a, b] = lo < hi ? [lo, hi] : [hi, lo];
      out.push({ t: time[a]!, v: values[a]! }, { t: time[b]!, v: values[b]! });
    }
  };
  for (let i = w.start; i < w.end; i++) {
    const b = bucketOf(w, time[i]!);
    if (b !== bucket) {
      flush();
      bucket = b;
      lo = -1;
      hi = -1;
      firstT = time[i]!;
    }
    const v = values[i]!;
    if (Number.isNaN(v)) continue;
    if (lo < 0 || v < values[lo]!) lo = i;
    if (hi < 0 || v > values[hi]!) hi = i;
  }
  flush();
  return out;
}

/** Per slice, the highest value and the mean of a column (NaN where the slice has none). */
export function sliceStats(
  time: Float64Array,
  values: Float32Array,
  w: ChartWindow,
): { readonly max: Float32Array; readonly mean: Float32Array } {
  const max = new Float32Array(w.buckets).fill(Number.NaN);
  const sum = new Float64Array(w.buckets);
  const count = new Uint32Array(w.buckets);
  for (let i = w.start; i < w.end; i++) {
    const v = values[i]!;
    if (Number.isNaN(v)) continue;
    const b = bucketOf(w, time[i]!);
    if (!(max[b]! >= v)) max[b] = v;
    sum[b] = sum[b]! + v;
    count[b] = count[b]! + 1;
  }
  const mean = new Float32Array(w.buckets);
  for (let b = 0; b < w.buckets; b++) mean[b] = count[b]! > 0 ? sum[b]! / count[b]! : Number.NaN;
  return { max, mean };
}
