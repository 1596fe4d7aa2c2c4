import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { MotionRecord } from '../cluster/port';
import { DEFAULT_STATE_FILE } from '../config/schema';
import { errorMessage } from '../errors';
import type { Logger } from '../log';
import {
  type DecisionEntry,
  HISTORY_SECONDS,
  type HistoryJson,
  type Journal,
  type MotionEntry,
  type NodeSample,
  ROUND_OUTCOMES,
} from './journal';
import { type MotionOutcome, writeAtomically } from './state';

/** Marks a file as a saved journal. */
const JOURNAL_FORMAT = 'poise-manager-journal';
/** The journal file version this build reads and writes. */
const JOURNAL_VERSION = 1;
/** The file's name, beside `state.file`. */
const JOURNAL_FILE = 'journal.json';
/**
 * The journal is written at most once per this many seconds of real time (after a round that
 * added to it), and at stop: a crash loses at most this much of the page's history.
 */
export const JOURNAL_SAVE_SECONDS = 60;
/**
 * The file is at most this long: beyond it the oldest rounds are left out of it (halving what
 * is written until it fits). A day of 64 nodes at 10 s is about 12 MiB.
 */
const JOURNAL_MAX_BYTES = 32 * 1024 * 1024;

/**
 * Where the journal of a daemon with this `state.file` is kept: beside it, except on the
 * cluster file system (`/etc/pve`: its files are replicated to every node and small by design),
 * where it is kept in the local default directory (`/var/lib/poise-manager/journal.json`).
 */
export function journalPath(statePath: string): string {
  const dir = dirname(statePath);
  const onPmxcfs = dir === '/etc/pve' || dir.startsWith('/etc/pve/');
  return join(onPmxcfs ? dirname(DEFAULT_STATE_FILE) : dir, JOURNAL_FILE);
}

const finite = z.number().refine(Number.isFinite, { error: 'expected a finite number' });
const nullable = z.array(finite.nullable());
const historySchema = z
  .strictObject({
    rounds: z.array(z.number().int().min(0)),
    time: z.array(finite),
    outcome: z.array(z.enum(ROUND_OUTCOMES)),
    imbalance: nullable,
    nodes: z.record(
      z.string(),
      z.strictObject({
        cpu: nullable,
        mem: nullable,
        pressureCpu: nullable.optional(),
        pressureMem: nullable.optional(),
      }),
    ),
  })
  .superRefine((h, ctx) => {
    const n = h.rounds.length;
    const columns: [string, readonly unknown[] | undefined][] = [
      ['time', h.time],
      ['outcome', h.outcome],
      ['imbalance', h.imbalance],
      ...Object.entries(h.nodes).flatMap(([name, c]): [string, readonly unknown[] | undefined][] => [
        [`nodes.${name}.cpu`, c.cpu],
        [`nodes.${name}.mem`, c.mem],
        [`nodes.${name}.pressureCpu`, c.pressureCpu],
        [`nodes.${name}.pressureMem`, c.pressureMem],
      ]),
    ];
    for (const [path, column] of columns)
      if (column !== undefined && column.length !== n)
        ctx.addIssue({
          code: 'custom',
          path: path.split('.'),
          message: `expected ${n} values (one per round), got ${column.length}`,
        });
    for (let i = 1; i < n; i++)
      if (h.rounds[i]! <= h.rounds[i - 1]!) {
        ctx.addIssue({ code: 'custom', path: ['rounds', i], message: 'expected rounds in increasing order' });
        break;
      }
  });
const text = z.string().optional();
const decisionSchema = z.strictObject({
  round: z.number().int().min(0),
  time: finite,
  timeText: z.string(),
  outcome: z.enum(ROUND_OUTCOMES),
  reason: z.string(),
  level: z.enum(['debug', 'info', 'warn', 'error']),
  message: z.string(),
  stage: text,
  key: text,
  sid: text,
  source: text,
  target: text,
});
const motionSchema = z.strictObject({
  sid: z.string(),
  resources: z.array(z.string()),
  kind: z.enum(['migrate', 'relocate']),
  via: z.string(),
  source: z.string(),
  target: z.string(),
  requestedAt: finite.optional(),
  imbalanceBefore: finite.optional(),
  imbalanceAfter: finite.optional(),
  result: z.enum(['in-flight', 'succeeded', 'failed']),
  endedAt: finite.optional(),
  reason: z.string().optional(),
});
const fileSchema = z.strictObject({
  format: z.literal(JOURNAL_FORMAT),
  version: z.literal(JOURNAL_VERSION),
  savedAt: z.string(),
  history: historySchema,
  decisions: z.array(decisionSchema),
  motions: z.array(motionSchema),
});
type JournalFile = z.output<typeof fileSchema>;

/** How the motions of the motion log are made: the daemon's (`ha`, `guest`) and a drain's, booked from its record. */
const MOTION_VIAS: ReadonlySet<string> = new Set(['ha', 'guest', 'drain']);

/** A saved motion whose `via` this build knows (one it does not is left out). */
function knownVia(m: z.output<typeof motionSchema>): m is z.output<typeof motionSchema> & MotionEntry {
  return MOTION_VIAS.has(m.via);
}

/** What a saved journal brought back. */
export interface RestoredJournal {
  /** Rounds, decisions and motions taken from the file (0 each when none). */
  readonly rounds: number;
  readonly decisions: number;
  readonly motions: number;
  /** The newest round number of the file (the next run numbers its rounds after it), 0 when none. */
  readonly lastRound: number;
}

/** The state the journal's motions in flight are checked against at a restart. */
export interface MotionFacts {
  readonly motion: MotionRecord | null;
  readonly outcomes: readonly MotionOutcome[];
}

/** The rounds of a history's JSON at `index` as samples (a node with no value that round is left out). */
function samplesAt(history: HistoryJson, index: number): NodeSample[] {
  const out: NodeSample[] = [];
  for (const [name, c] of Object.entries(history.nodes)) {
    const value = (column: readonly (number | null)[] | undefined) => column?.[index] ?? undefined;
    const sample = {
      name,
      cpu: value(c.cpu),
      mem: value(c.mem),
      pressureCpu: value(c.pressureCpu),
      pressureMem: value(c.pressureMem),
    };
    if (Object.values(sample).some((v) => typeof v === 'number')) out.push(sample);
  }
  return out;
}

/**
 * The journal (`journal.ts`: the page's history, decisions and motions) kept across restarts
 * in a file beside `state.file` ({@link journalPath}), written atomically (`writeAtomically`)
 * at most every {@link JOURNAL_SAVE_SECONDS} s and at stop, at most {@link JOURNAL_MAX_BYTES};
 * what it holds is bounded like the journal in memory (a day of rounds, at most 17,280; 1,000
 * motions). Read at start: rounds older than a day are left out; a file that cannot be read,
 * is corrupt or of another version is logged and ignored (replaced at the next save), never
 * fatal. A write that fails is logged (once until one works again) and the daemon goes on.
 */
export class JournalStore {
  private lastSaveAt: number;
  /** The newest round written (or read): nothing new, nothing written. */
  private savedRound: number | undefined;
  private savedMotions = '';
  private failing = false;

  constructor(
    readonly path: string,
    private readonly journal: Journal,
    private readonly log: Logger,
    /** Seconds of real time, monotonic (the save rate). */
    private readonly now: () => number = () => performance.now() / 1000,
  ) {
    this.lastSaveAt = now();
  }

  /**
   * Reads the file into the journal (before the first round). `clockNow`: the daemon's clock,
   * for the age bound; `facts`: the state file's motion and outcomes, which settle a motion the
   * file shows in flight that ended while its copy was not yet written.
   */
  load(clockNow: number, facts: MotionFacts): RestoredJournal {
    const none: RestoredJournal = { rounds: 0, decisions: 0, motions: 0, lastRound: 0 };
    let textIn: string;
    try {
      textIn = readFileSync(this.path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        this.log.info('state', `no journal at '${this.path}' yet: the page's history starts with this run`);
        return none;
      }
      this.log.warn(
        'state',
        `cannot read the journal '${this.path}' (${code ?? errorMessage(err)}): the page's history starts with this run`,
      );
      return none;
    }
    const ignored = (why: string) => {
      this.log.warn(
        'state',
        `the journal '${this.path}' ${why}: ignored (the page's history starts with this run; the file is replaced at the next save)`,
      );
      return none;
    };
    let doc: unknown;
    try {
      doc = JSON.parse(textIn);
    } catch (err) {
      return ignored(`is not JSON (${errorMessage(err)})`);
    }
    const head = doc as { format?: unknown; version?: unknown } | null;
    if (head === null || typeof head !== 'object' || head.format !== JOURNAL_FORMAT)
      return ignored(`is not a poise-manager journal (format ${JSON.stringify(head?.format)})`);
    if (head.version !== JOURNAL_VERSION)
      return ignored(
        `has version ${JSON.stringify(head.version)}; this poise-manager reads version ${JOURNAL_VERSION}`,
      );
    const parsed = fileSchema.safeParse(doc);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return ignored(`is corrupt ('${issue.path.join('.') || '(top level)'}': ${issue.message})`);
    }
    const restored = this.restore(parsed.data, clockNow, facts);
    this.savedRound = restored.lastRound;
    this.savedMotions = JSON.stringify(this.journal.motions.list());
    this.log.info(
      'state',
      `journal loaded from '${this.path}': ${restored.rounds} rounds, ${restored.decisions} decisions, ${restored.motions} motions of before (the page's history goes on)`,
      { rounds: restored.rounds },
    );
    return restored;
  }

  private restore(file: JournalFile, clockNow: number, facts: MotionFacts): RestoredJournal {
    const since = clockNow - HISTORY_SECONDS;
    const h = file.history;
    let rounds = 0;
    for (let i = 0; i < h.rounds.length; i++) {
      if (h.time[i]! < since) continue;
      this.journal.history.push(h.rounds[i]!, h.time[i]!, h.outcome[i]!, h.imbalance[i] ?? undefined, samplesAt(h, i));
      rounds++;
    }
    let decisions = 0;
    for (const d of file.decisions) {
      if (d.time < since) continue;
      this.journal.decisions.add(d);
      decisions++;
    }
    const motions = file.motions.filter(knownVia).map((m) => settle(m, facts));
    this.journal.motions.restore(motions);
    const lastRound = Math.max(0, h.rounds.at(-1) ?? 0, file.decisions.at(-1)?.round ?? 0);
    return { rounds, decisions, motions: motions.length, lastRound };
  }

  /** Saves when {@link JOURNAL_SAVE_SECONDS} have passed since the last save and the journal has news. Never throws. */
  saveIfDue(): void {
    if (this.now() - this.lastSaveAt < JOURNAL_SAVE_SECONDS) return;
    this.save();
  }

  /** Saves now if the journal has news (at stop). Never throws; returns whether it wrote. */
  save(): boolean {
    this.lastSaveAt = this.now();
    const history = this.journal.history.toJson();
    const decisions = this.journal.decisions.query();
    const motions = this.journal.motions.list();
    const newest = Math.max(history.rounds.at(-1) ?? 0, decisions.at(-1)?.round ?? 0);
    const motionsText = JSON.stringify(motions);
    if (newest === this.savedRound && motionsText === this.savedMotions) return false;
    try {
      writeAtomically(this.path, journalText(history, decisions, motions));
      if (this.failing) this.log.info('state', `the journal is written to '${this.path}' again`);
      this.failing = false;
      this.savedRound = newest;
      this.savedMotions = motionsText;
      return true;
    } catch (err) {
      if (!this.failing)
        this.log.warn(
          'state',
          `cannot save the journal: ${errorMessage(err)}; the daemon goes on (the page's history is kept in memory)`,
        );
      this.failing = true;
      return false;
    }
  }
}

/**
 * A motion the saved journal shows in flight: it still is when the state file follows it;
 * else the state's outcomes say how it ended; else its end is not known (the file was older
 * than its outcome and the outcome no longer kept).
 */
function settle(m: MotionEntry, facts: MotionFacts): MotionEntry {
  if (m.result !== 'in-flight') return m;
  const same = (x: { sid: string; source: string; target: string }) =>
    x.sid === m.sid && x.source === m.source && x.target === m.target;
  if (facts.motion !== null && same(facts.motion)) return m;
  let outcome: MotionOutcome | undefined;
  for (const o of facts.outcomes) if (same(o) && (m.requestedAt === undefined || o.at >= m.requestedAt)) outcome = o;
  if (outcome !== undefined) return { ...m, result: outcome.result, endedAt: outcome.at, reason: outcome.reason };
  return {
    ...m,
    result: 'failed',
    endedAt: undefined,
    reason: 'outcome not known: the daemon stopped before it was recorded',
  };
}

/** The file's text, the oldest rounds (and their decisions) left out until it is at most `maxBytes` (one round is always kept). */
export function journalText(
  history: HistoryJson,
  decisions: readonly DecisionEntry[],
  motions: readonly MotionEntry[],
  maxBytes = JOURNAL_MAX_BYTES,
): string {
  let from = 0;
  for (;;) {
    const kept = sliceHistory(history, from);
    const firstRound = kept.rounds[0];
    const body = {
      format: JOURNAL_FORMAT,
      version: JOURNAL_VERSION,
      savedAt: new Date().toISOString(),
      history: kept,
      decisions: from === 0 || firstRound === undefined ? decisions : decisions.filter((d) => d.round >= firstRound),
      motions,
    };
    const out = `${JSON.stringify(body)}\n`;
    if (Buffer.byteLength(out) <= maxBytes || history.rounds.length - from <= 1) return out;
    from += Math.ceil((history.rounds.length - from) / 2);
  }
}

function sliceHistory(h: HistoryJson, from: number): HistoryJson {
  if (from === 0) return h;
  const nodes: HistoryJson['nodes'] = {};
  for (const [name, c] of Object.entries(h.nodes))
    nodes[name] = {
      cpu: c.cpu.slice(from),
      mem: c.mem.slice(from),
      ...(c.pressureCpu ? { pressureCpu: c.pressureCpu.slice(from) } : {}),
      ...(c.pressureMem ? { pressureMem: c.pressureMem.slice(from) } : {}),
    };
  return {
    rounds: h.rounds.slice(from),
    time: h.time.slice(from),
    outcome: h.outcome.slice(from),
    imbalance: h.imbalance.slice(from),
    nodes,
  };
}
