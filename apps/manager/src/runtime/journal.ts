import type { ClusterSnapshot, MotionRecord, NodeCondition } from '../cluster/port';
import type { LogFields, LogLevel } from '../log';

/** The history keeps a day of rounds. */
export const HISTORY_SECONDS = 86_400;
/**
 * At most this many rounds are kept whatever the interval (a day at 5 s): with `interval: 1` the
 * history covers the last 4.8 hours, and its memory stays bounded.
 */
export const HISTORY_MAX_ROUNDS = 17_280;
/** Rounds per chunk of the history: memory grows by a chunk as rounds come, and whole chunks age out. */
export const HISTORY_CHUNK_ROUNDS = 256;
/** Motions kept in the motion log (at the default `max-motions-per-hour` of 10, a day is 240). */
export const MOTION_LOG_MAX = 1_000;

/** Rounds kept for an interval: a day, at most {@link HISTORY_MAX_ROUNDS}. */
export function historyCapacity(intervalSeconds: number): number {
  return Math.min(HISTORY_MAX_ROUNDS, Math.ceil(HISTORY_SECONDS / intervalSeconds) + 1);
}

/** Round outcomes (see `RoundReport`), in the order of their code in the history's `outcome` column. */
export const ROUND_OUTCOMES = ['move', 'would-move', 'refused', 'skip', 'standby', 'error'] as const;

/** What a round did: `RoundReport.outcome`. */
export type RoundOutcome = (typeof ROUND_OUTCOMES)[number];

/** What the journal takes of a round's line (`RoundReport` is one). */
export interface JournalRound {
  readonly round: number;
  readonly outcome: RoundOutcome;
  readonly reason: string;
  readonly message: string;
  readonly level: LogLevel;
  readonly fields: LogFields;
}

/** One node as a round read it: load ratios (0..1) of its capacity, PSI in percent; `undefined` = not known. */
export interface NodeSample {
  readonly name: string;
  readonly cpu: number | undefined;
  readonly mem: number | undefined;
  readonly pressureCpu: number | undefined;
  readonly pressureMem: number | undefined;
}

/** The per-node columns of a chunk (NaN = no value that round). */
interface NodeColumns {
  readonly cpu: Float32Array;
  readonly mem: Float32Array;
  /** Allocated once the node reports pressure in this chunk. */
  pressureCpu: Float32Array | undefined;
  pressureMem: Float32Array | undefined;
}

/** {@link HISTORY_CHUNK_ROUNDS} rounds in columns. */
interface Chunk {
  length: number;
  readonly round: Uint32Array;
  /** Seconds, the daemon's clock. */
  readonly time: Float64Array;
  /** Normalised imbalance of the round (NaN: not read, or no usable node). */
  readonly imbalance: Float32Array;
  /** Index into {@link ROUND_OUTCOMES}. */
  readonly outcome: Uint8Array;
  readonly nodes: Map<string, NodeColumns>;
}

function nanColumn(): Float32Array {
  return new Float32Array(HISTORY_CHUNK_ROUNDS).fill(Number.NaN);
}

/** A number of the history for JSON: rounded to `digits` decimals, `null` for no value. */
function jsonNumber(value: number, digits: number): number | null {
  if (Number.isNaN(value)) return null;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** Which rounds a history or decision query wants. */
interface RoundQuery {
  /** Only rounds at or after this time (seconds, the daemon's clock). */
  readonly since?: number;
  /** Only rounds numbered above this one (a poller's last). */
  readonly after?: number;
}

/** Which rounds and columns a history query wants. */
export interface HistoryQuery extends RoundQuery {
  /** Only rounds numbered below this one (a poller filling in older rounds). */
  readonly before?: number;
  /** The newest this many of the rounds that match (a poller's piece). */
  readonly limit?: number;
  /** `false`: without the nodes' pressure columns (default: with them, where reported). */
  readonly pressure?: boolean;
}

/** The history's JSON: one entry per round in each column, aligned (`null` = no value). */
export interface HistoryJson {
  readonly rounds: number[];
  /** Seconds (the daemon's clock). */
  readonly time: number[];
  readonly outcome: string[];
  readonly imbalance: (number | null)[];
  /** Per node, in byte order: load ratios (4 decimals) and, where it reported any, PSI percent (2 decimals). */
  readonly nodes: Record<
    string,
    {
      cpu: (number | null)[];
      mem: (number | null)[];
      pressureCpu?: (number | null)[];
      pressureMem?: (number | null)[];
    }
  >;
}

/**
 * Node load and imbalance per round over the last day, in memory only: typed columns in chunks
 * of {@link HISTORY_CHUNK_ROUNDS} rounds, the oldest chunk dropped once the rest hold the
 * capacity. Its memory is rounds × nodes × 8 bytes (×16 where nodes report pressure), whatever
 * the number of guests; `bench/status-history.ts` measures it.
 */
export class RoundHistory {
  private chunks: Chunk[] = [];
  private kept = 0;

  constructor(private capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`history capacity must be a whole number ≥ 1, got ${capacity}`);
  }

  /** Rounds held. */
  get size(): number {
    return this.kept;
  }

  /** A new capacity (a reload changed the interval): the oldest rounds beyond it are dropped. */
  resize(capacity: number): void {
    this.capacity = capacity;
    this.trim();
  }

  /** Appends a round. `nodes` may be empty (a round that read nothing); `imbalance` undefined when unknown. */
  push(
    round: number,
    time: number,
    outcome: RoundOutcome,
    imbalance: number | undefined,
    nodes: readonly NodeSample[],
  ): void {
    let chunk = this.chunks.at(-1);
    if (chunk === undefined || chunk.length === HISTORY_CHUNK_ROUNDS) {
      chunk = {
        length: 0,
        round: new Uint32Array(HISTORY_CHUNK_ROUNDS),
        time: new Float64Array(HISTORY_CHUNK_ROUNDS),
        imbalance: new Float32Array(HISTORY_CHUNK_ROUNDS),
        outcome: new Uint8Array(HISTORY_CHUNK_ROUNDS),
        nodes: new Map(),
      };
      this.chunks.push(chunk);
    }
    const i = chunk.length++;
    chunk.round[i] = round;
    chunk.time[i] = time;
    chunk.imbalance[i] = imbalance ?? Number.NaN;
    chunk.outcome[i] = ROUND_OUTCOMES.indexOf(outcome);
    for (const n of nodes) {
      let columns = chunk.nodes.get(n.name);
      if (columns === undefined) {
        columns = { cpu: nanColumn(), mem: nanColumn(), pressureCpu: undefined, pressureMem: undefined };
        chunk.nodes.set(n.name, columns);
      }
      columns.cpu[i] = n.cpu ?? Number.NaN;
      columns.mem[i] = n.mem ?? Number.NaN;
      if (n.pressureCpu !== undefined) (columns.pressureCpu ??= nanColumn())[i] = n.pressureCpu;
      if (n.pressureMem !== undefined) (columns.pressureMem ??= nanColumn())[i] = n.pressureMem;
    }
    this.kept++;
    this.trim();
  }

  private trim(): void {
    while (this.chunks.length > 1 && this.kept - this.chunks[0]!.length >= this.capacity) {
      this.kept -= this.chunks.shift()!.length;
    }
  }

  /** The rounds a query asks for, at most the capacity (the oldest beyond it are left out). */
  toJson(query: HistoryQuery = {}): HistoryJson {
    const picked: { chunk: Chunk; index: number }[] = [];
    let skip = Math.max(0, this.kept - this.capacity);
    for (const chunk of this.chunks) {
      for (let i = 0; i < chunk.length; i++) {
        if (skip > 0) {
          skip--;
          continue;
        }
        if (query.since !== undefined && chunk.time[i]! < query.since) continue;
        if (query.after !== undefined && chunk.round[i]! <= query.after) continue;
        if (query.before !== undefined && chunk.round[i]! >= query.before) continue;
        picked.push({ chunk, index: i });
      }
    }
    if (query.limit !== undefined && picked.length > query.limit) picked.splice(0, picked.length - query.limit);
    const names = new Set<string>();
    for (const { chunk } of picked) for (const name of chunk.nodes.keys()) names.add(name);
    const nodes: HistoryJson['nodes'] = {};
    for (const name of [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      const column = (pick: (c: NodeColumns) => Float32Array | undefined, digits: number) => {
        // the node's column looked up once per chunk, not once per round
        let at: Chunk | undefined;
        let col: Float32Array | undefined;
        return picked.map(({ chunk, index }) => {
          if (chunk !== at) {
            at = chunk;
            const values = chunk.nodes.get(name);
            col = values === undefined ? undefined : pick(values);
          }
          return col === undefined ? null : jsonNumber(col[index]!, digits);
        });
      };
      const withPressure = (pick: (c: NodeColumns) => Float32Array | undefined) =>
        query.pressure !== false &&
        picked.some(({ chunk }) => {
          const values = chunk.nodes.get(name);
          return values !== undefined && pick(values) !== undefined;
        });
      const cpu = column((c) => c.cpu, 4);
      const mem = column((c) => c.mem, 4);
      // a node with no value in the rounds asked for (gone before them) is not listed
      if (cpu.every((x) => x === null) && mem.every((x) => x === null)) continue;
      nodes[name] = {
        cpu,
        mem,
        ...(withPressure((c) => c.pressureCpu) ? { pressureCpu: column((c) => c.pressureCpu, 2) } : {}),
        ...(withPressure((c) => c.pressureMem) ? { pressureMem: column((c) => c.pressureMem, 2) } : {}),
      };
    }
    return {
      rounds: picked.map(({ chunk, index }) => chunk.round[index]!),
      time: picked.map(({ chunk, index }) => chunk.time[index]!),
      outcome: picked.map(({ chunk, index }) => ROUND_OUTCOMES[chunk.outcome[index]!]!),
      imbalance: picked.map(({ chunk, index }) => jsonNumber(chunk.imbalance[index]!, 4)),
      nodes,
    };
  }
}

/** One round of the decision log: its line, as logged. */
export interface DecisionEntry {
  readonly round: number;
  /** Seconds, the daemon's clock; `timeText` as the log writes it (UTC, or `sim 00:03:00`). */
  readonly time: number;
  readonly timeText: string;
  readonly outcome: RoundOutcome;
  readonly reason: string;
  readonly level: LogLevel;
  readonly message: string;
  /** The policy stage that stopped the round and its code, when one did. */
  readonly stage?: string;
  /** Changes only when the explanation does (the log's `key`): a reader shows changes only by it. */
  readonly key?: string;
  /** The motion the round decided on (move, would-move, refused). */
  readonly sid?: string;
  readonly source?: string;
  readonly target?: string;
}

/** Which decisions a query wants (every filter optional). */
export interface DecisionQuery extends RoundQuery {
  readonly outcomes?: ReadonlySet<string>;
  readonly reasons?: ReadonlySet<string>;
  /** Text the message contains (case-insensitive). */
  readonly text?: string;
  /** The newest this many of those that match. */
  readonly limit?: number;
}

/** A motion of the daemon from its request to its outcome. */
export interface MotionEntry {
  readonly sid: string;
  readonly resources: readonly string[];
  readonly kind: 'migrate' | 'relocate';
  /** `ha`, `guest`: the daemon's own (how it follows them); `drain`: a `poise-manager drain`'s, booked from its progress record. */
  readonly via: 'ha' | 'guest' | 'drain';
  readonly source: string;
  readonly target: string;
  /** Seconds (the daemon's clock) the request was sent; `undefined` for one refused before a request was recorded. */
  readonly requestedAt: number | undefined;
  readonly imbalanceBefore: number | undefined;
  readonly imbalanceAfter: number | undefined;
  /** `in-flight` until its outcome. */
  readonly result: 'in-flight' | 'succeeded' | 'failed';
  readonly endedAt: number | undefined;
  /** Why it failed (refused, back on the source, timed out, …). */
  readonly reason: string | undefined;
}

/** The motions of the run, newest last, at most {@link MOTION_LOG_MAX}. */
export class MotionLog {
  private entries: MotionEntry[] = [];

  /** A motion was requested (written ahead: it is followed from here on). */
  requested(record: MotionRecord): void {
    this.entries.push({
      sid: record.sid,
      resources: [...record.resources],
      kind: record.kind,
      via: record.via,
      source: record.source,
      target: record.target,
      requestedAt: record.issuedAt,
      imbalanceBefore: record.imbalanceBefore,
      imbalanceAfter: record.imbalanceAfter,
      result: 'in-flight',
      endedAt: undefined,
      reason: undefined,
    });
    if (this.entries.length > MOTION_LOG_MAX) this.entries = this.entries.slice(-MOTION_LOG_MAX);
  }

  /**
   * A motion ended (or was refused). Ends the newest entry in flight of the same guest, source
   * and target; a motion of a previous run (followed after a restart) or a refusal before any
   * request gets an entry of its own.
   */
  ended(
    motion: Pick<MotionRecord, 'sid' | 'source' | 'target' | 'via' | 'resources'> & Partial<MotionRecord>,
    result: 'succeeded' | 'failed',
    reason: string | undefined,
    at: number,
  ): void {
    let i = this.entries.length - 1;
    for (; i >= 0; i--) {
      const e = this.entries[i]!;
      if (e.result === 'in-flight' && e.sid === motion.sid && e.source === motion.source && e.target === motion.target)
        break;
    }
    if (i >= 0) {
      this.entries[i] = { ...this.entries[i]!, result, endedAt: at, reason };
      return;
    }
    this.entries.push({
      sid: motion.sid,
      resources: [...motion.resources],
      kind: motion.kind ?? 'migrate',
      via: motion.via,
      source: motion.source,
      target: motion.target,
      requestedAt: motion.issuedAt,
      imbalanceBefore: motion.imbalanceBefore,
      imbalanceAfter: motion.imbalanceAfter,
      result,
      endedAt: at,
      reason,
    });
    if (this.entries.length > MOTION_LOG_MAX) this.entries = this.entries.slice(-MOTION_LOG_MAX);
  }

  /** Puts the motions of a previous run (a saved journal, oldest first) before this run's; at most {@link MOTION_LOG_MAX} are kept. */
  restore(entries: readonly MotionEntry[]): void {
    this.entries = [...entries, ...this.entries].slice(-MOTION_LOG_MAX);
  }

  /**
   * A motion of a drain (`drain-booking.ts`): its entry is the one of the same guest requested
   * at the same time (`since`, the drain's clock), made when first seen and ended once; booking
   * it again changes nothing.
   */
  drainMotion(
    motion: { readonly sid: string; readonly source: string; readonly target: string; readonly since: number },
    ended?: { readonly at: number; readonly ok: boolean },
  ): void {
    const i = this.entries.findIndex(
      (e) => e.via === 'drain' && e.sid === motion.sid && e.requestedAt === motion.since,
    );
    const entry: MotionEntry =
      i >= 0
        ? this.entries[i]!
        : {
            sid: motion.sid,
            resources: [motion.sid],
            kind: motion.sid.startsWith('ct:') ? 'relocate' : 'migrate',
            via: 'drain',
            source: motion.source,
            target: motion.target,
            requestedAt: motion.since,
            imbalanceBefore: undefined,
            imbalanceAfter: undefined,
            result: 'in-flight',
            endedAt: undefined,
            reason: undefined,
          };
    const next: MotionEntry =
      ended === undefined || entry.result !== 'in-flight'
        ? entry
        : {
            ...entry,
            result: ended.ok ? 'succeeded' : 'failed',
            endedAt: ended.at,
            reason: ended.ok ? undefined : 'the drain says it failed',
          };
    if (i >= 0) this.entries[i] = next;
    else {
      this.entries.push(next);
      if (this.entries.length > MOTION_LOG_MAX) this.entries = this.entries.slice(-MOTION_LOG_MAX);
    }
  }

  /** The newest `limit` motions, oldest first. */
  list(limit = MOTION_LOG_MAX): readonly MotionEntry[] {
    return this.entries.slice(-limit);
  }
}

/** The round lines of the last day (the history's capacity), newest last. */
export class DecisionLog {
  private entries: DecisionEntry[] = [];
  private start = 0;

  constructor(private capacity: number) {}

  resize(capacity: number): void {
    this.capacity = capacity;
    this.compact();
  }

  add(entry: DecisionEntry): void {
    this.entries.push(entry);
    // drop the oldest in batches, not one shift() per round
    if (this.entries.length - this.start > this.capacity) this.start = this.entries.length - this.capacity;
    if (this.start > HISTORY_CHUNK_ROUNDS) this.compact();
  }

  private compact(): void {
    this.start = Math.max(this.start, this.entries.length - this.capacity);
    this.entries = this.entries.slice(this.start);
    this.start = 0;
  }

  get size(): number {
    return this.entries.length - this.start;
  }

  /** The entries a query asks for, oldest first. */
  query(query: DecisionQuery = {}): DecisionEntry[] {
    const text = query.text?.toLowerCase();
    const out: DecisionEntry[] = [];
    for (let i = this.start; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (query.since !== undefined && e.time < query.since) continue;
      if (query.after !== undefined && e.round <= query.after) continue;
      if (query.outcomes !== undefined && !query.outcomes.has(e.outcome)) continue;
      if (query.reasons !== undefined && !query.reasons.has(e.reason)) continue;
      if (text !== undefined && !e.message.toLowerCase().includes(text)) continue;
      out.push(e);
    }
    return query.limit === undefined ? out : out.slice(-query.limit);
  }
}

/** A node as the last good read saw it. */
export interface NodeNow {
  readonly name: string;
  readonly condition: NodeCondition;
  /** `settled` (online), `maintenance`, or `failed` (offline, waiting for fencing, fenced, gone). */
  readonly state: 'settled' | 'maintenance' | 'failed';
  /** In the balancer's model (online, not in maintenance, valid stats). */
  readonly balanced: boolean;
  /** Measured use and capacity: cores, bytes (`undefined` when not finite). */
  readonly cpuCores: number | undefined;
  readonly maxCpuCores: number | undefined;
  readonly memBytes: number | undefined;
  readonly maxMemBytes: number | undefined;
  /** Load ratios (0..1); `load` the model's (the mean of the two), for balanced nodes only. */
  readonly cpu: number | undefined;
  readonly mem: number | undefined;
  readonly load: number | undefined;
  /** PSI "some" avg10, percent; `undefined` when the node does not report it. */
  readonly pressureCpu: number | undefined;
  readonly pressureMem: number | undefined;
  /** Guests on it (running or HA-started), and how many of them are HA resources. */
  readonly guests: number;
  readonly haResources: number;
}

/** The cluster as the last round that read it saw it. */
export interface ClusterRead {
  readonly round: number;
  /** Seconds, the daemon's clock. */
  readonly time: number;
  readonly quorate: boolean;
  readonly imbalance: number | undefined;
  readonly nodes: readonly NodeNow[];
  /** The snapshot itself (the plan and the what-if are computed from it on demand). */
  readonly snapshot: ClusterSnapshot;
}

/** A round that could not read the cluster. */
export interface ReadFailure {
  readonly round: number;
  readonly time: number;
  readonly message: string;
}

/**
 * What the status page and its endpoints show of the run: the history of node load and
 * imbalance, the decision log, the motions, and the cluster as last read (with the failure of a
 * later read, if any). All but the cluster as last read are kept across restarts by
 * `journal-store.ts` (saved every minute and at stop, reloaded at start).
 */
export class Journal {
  readonly history: RoundHistory;
  readonly decisions: DecisionLog;
  readonly motions = new MotionLog();
  private lastRead: ClusterRead | undefined;
  private failure: ReadFailure | undefined;

  constructor(intervalSeconds: number) {
    const capacity = historyCapacity(intervalSeconds);
    this.history = new RoundHistory(capacity);
    this.decisions = new DecisionLog(capacity);
  }

  /** The interval changed (a reload): a day of rounds at the new one. */
  resize(intervalSeconds: number): void {
    const capacity = historyCapacity(intervalSeconds);
    this.history.resize(capacity);
    this.decisions.resize(capacity);
  }

  /** The round read the cluster. */
  observe(read: ClusterRead): void {
    this.lastRead = read;
  }

  /** The last good read, and the failure of a read after it (`undefined` when the last read worked). */
  get cluster(): { readonly read: ClusterRead | undefined; readonly failure: ReadFailure | undefined } {
    return { read: this.lastRead, failure: this.failure };
  }

  /** A round's line: into the decision log and the history (with the nodes it read, if it read any). */
  round(report: JournalRound, time: number, timeText: string): void {
    const read = this.lastRead?.round === report.round ? this.lastRead : undefined;
    if (read !== undefined) this.failure = undefined;
    else if (report.reason === 'api-error') this.failure = { round: report.round, time, message: report.message };
    this.history.push(
      report.round,
      time,
      report.outcome,
      read?.imbalance,
      (read?.nodes ?? []).map((n) => ({
        name: n.name,
        cpu: n.cpu,
        mem: n.mem,
        pressureCpu: n.pressureCpu,
        pressureMem: n.pressureMem,
      })),
    );
    const f = report.fields;
    const text = (key: string) => (typeof f[key] === 'string' ? f[key] : undefined);
    const stage = text('stage');
    const key = text('key');
    const sid = text('sid');
    const source = text('source');
    const target = text('target');
    this.decisions.add({
      round: report.round,
      time,
      timeText,
      outcome: report.outcome,
      reason: report.reason,
      level: report.level,
      message: report.message,
      ...(stage === undefined ? {} : { stage }),
      ...(key === undefined ? {} : { key }),
      ...(sid === undefined ? {} : { sid }),
      ...(source === undefined ? {} : { source }),
      ...(target === undefined ? {} : { target }),
    });
  }
}
