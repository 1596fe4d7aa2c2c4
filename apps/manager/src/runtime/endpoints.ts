import { createHash } from 'node:crypto';
import { nodeFailureReport, planPlacement } from '@poise/plan';
import { inputFromSnapshot } from '../balancing/plan-input';
import { planJson, whatIfJson } from '../balancing/plan-render';
import { errorMessage } from '../errors';
import type { DaemonContext } from './context';
import { drainProgressPath, readDrainProgress } from './drain-progress';
import {
  type ClusterRead,
  type DecisionQuery,
  HISTORY_MAX_ROUNDS,
  HISTORY_SECONDS,
  type MotionEntry,
  ROUND_OUTCOMES,
} from './journal';

/** What an endpoint answers: an HTTP status and a JSON document. */
export interface JsonReply {
  readonly status: number;
  readonly body: unknown;
}

/** An endpoint of the status API: the query of the request in, a reply out. */
export type JsonEndpoint = (query: URLSearchParams) => JsonReply;

/** A query parameter that the endpoint does not take, or a value it refuses: a 400 naming it. */
class QueryError extends Error {
  override name = 'QueryError';
}

/** Decisions a `/api/decisions` reply holds at most. */
const DECISIONS_MAX_LIMIT = 5000;
/** Decisions a `/api/decisions` reply holds without `limit`. */
const DECISIONS_DEFAULT_LIMIT = 500;

/** The query, checked: every parameter known, none twice. */
function checkedQuery(query: URLSearchParams, known: readonly string[]): URLSearchParams {
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (!known.includes(name))
      throw new QueryError(
        `unknown query parameter '${name}'${known.length > 0 ? ` (this endpoint takes ${known.map((k) => `'${k}'`).join(', ')})` : ' (this endpoint takes none)'}`,
      );
    if (seen.has(name)) throw new QueryError(`query parameter '${name}' is given twice`);
    seen.add(name);
  }
  return query;
}

/** A number parameter: `undefined` when absent; a 400 naming it when not a number in range. */
function numberParam(
  query: URLSearchParams,
  name: string,
  what: { readonly whole?: boolean; readonly min: number; readonly max?: number; readonly meaning: string },
): number | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  const value = /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  const ok =
    Number.isFinite(value) &&
    (!what.whole || Number.isInteger(value)) &&
    value >= what.min &&
    (what.max === undefined || value <= what.max);
  if (!ok) {
    const range = what.max === undefined ? `≥ ${what.min}` : `from ${what.min} to ${what.max}`;
    throw new QueryError(
      `query parameter '${name}' (${what.meaning}): expected ${what.whole ? 'a whole number' : 'a number'} ${range}, got '${text}'`,
    );
  }
  return value;
}

/** A flag parameter, `1` or `0`: `undefined` when absent; a 400 naming it otherwise. */
function flagParam(query: URLSearchParams, name: string, meaning: string): boolean | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  if (text !== '0' && text !== '1')
    throw new QueryError(`query parameter '${name}' (${meaning}): expected 1 or 0, got '${text}'`);
  return text === '1';
}

/** A comma-separated list parameter, each value checked against `allowed` when given. */
function listParam(query: URLSearchParams, name: string, allowed?: readonly string[]): Set<string> | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  const values = text.split(',').filter((v) => v !== '');
  if (values.length === 0) throw new QueryError(`query parameter '${name}': expected one or more values, got nothing`);
  for (const v of values) {
    if (allowed !== undefined && !allowed.includes(v))
      throw new QueryError(`query parameter '${name}': unknown value '${v}' (one of ${allowed.join(', ')})`);
  }
  return new Set(values);
}

/** A document's version: the first 16 hex digits of the SHA-1 of its JSON (equal documents, equal versions). */
function versionOf(doc: unknown): string {
  return createHash('sha1').update(JSON.stringify(doc)).digest('hex').slice(0, 16);
}

/** The `unless` parameter: a version a poller holds (16 hex digits), or `undefined`. */
function versionParam(query: URLSearchParams): string | undefined {
  const text = query.get('unless');
  if (text === null) return undefined;
  if (!/^[0-9a-f]{16}$/.test(text))
    throw new QueryError(
      `query parameter 'unless' (the version a poller holds): expected 16 hex digits as a reply's 'version', got '${text}'`,
    );
  return text;
}

/**
 * A reply with its `version`; asked with `unless=<version>` and still the same, only
 * `{unchanged: true, version}` (the poller keeps what it has and redraws nothing).
 */
function versioned(
  query: URLSearchParams,
  known: readonly string[],
  body: (q: URLSearchParams) => Record<string, unknown>,
): JsonReply {
  return answer(query, [...known, 'unless'], (checked) => {
    const unless = versionParam(checked);
    const doc = body(checked);
    const version = versionOf(doc);
    return unless === version ? { unchanged: true, version } : { ...doc, version };
  });
}

/** A reply from a function that may throw a QueryError (a 400 with the message). */
function answer(query: URLSearchParams, known: readonly string[], body: (q: URLSearchParams) => unknown): JsonReply {
  try {
    return { status: 200, body: body(checkedQuery(query, known)) };
  } catch (err) {
    if (err instanceof QueryError) return { status: 400, body: { error: err.message } };
    throw err;
  }
}

/**
 * The JSON endpoints of the status page (README, *The status page*), each a function of the
 * daemon's memory: the journal (history, decisions, motions, the cluster as last read), the
 * config and policy in force, the drain progress record beside `state.file`. None reads the
 * cluster or requests anything: the plan and the what-if are computed from the last round's
 * snapshot, when asked, at most once per round.
 */
export class StatusEndpoints {
  private planned:
    | { readonly round: number; readonly plan: JsonReply; readonly whatIf: JsonReply | undefined }
    | undefined;

  constructor(
    private readonly ctx: DaemonContext,
    /** Where a drain writes its progress (`drainProgressPath` of the daemon's state file). */
    private readonly drainProgressFile: string = drainProgressPath(ctx.host.statePath ?? ctx.config.statePath),
  ) {}

  /** The endpoints by path. */
  routes(): Map<string, JsonEndpoint> {
    return new Map<string, JsonEndpoint>([
      ['/api/run', (q) => versioned(q, [], () => this.run())],
      ['/api/cluster', (q) => versioned(q, [], () => this.cluster())],
      [
        '/api/history',
        (q) => answer(q, ['since', 'after', 'before', 'limit', 'pressure'], (checked) => this.history(checked)),
      ],
      [
        '/api/decisions',
        (q) => answer(q, ['since', 'after', 'outcome', 'reason', 'q', 'limit'], (checked) => this.decisions(checked)),
      ],
      ['/api/motions', (q) => versioned(q, ['limit'], (checked) => this.motions(checked))],
      ['/api/policy', (q) => answer(q, [], () => this.policy())],
      ['/api/plan', (q) => this.planReply(q, 'plan')],
      ['/api/what-if', (q) => this.planReply(q, 'what-if')],
      ['/api/drain', (q) => versioned(q, [], () => this.drain())],
    ]);
  }

  private timed(seconds: number | undefined): { time: number | null; timeText: string | null } {
    return seconds === undefined
      ? { time: null, timeText: null }
      : { time: seconds, timeText: this.ctx.timeText(seconds) };
  }

  /**
   * `/api/run`: whether the run goes on. `ended` once the environment has (a simulated
   * scenario that ran to its end while the daemon keeps its page up), with how; else null.
   */
  run(): Record<string, unknown> {
    const host = this.ctx.host;
    const ended = host.finished?.() === true;
    return {
      intervalSeconds: this.ctx.config.intervalSeconds,
      ended: ended ? (host.endStatus?.() ?? { ok: true, message: 'the environment has ended' }) : null,
    };
  }

  /** `/api/cluster`: the nodes as the last good read saw them, and a failed read since. */
  cluster(): Record<string, unknown> {
    const { read, failure } = this.ctx.journal.cluster;
    return {
      thresholdPercent: this.ctx.config.policy.reference.thresholdPercent,
      read:
        read === undefined
          ? null
          : {
              round: read.round,
              ...this.timed(read.time),
              quorate: read.quorate,
              imbalance: read.imbalance ?? null,
              nodes: read.nodes.map((n) => ({
                ...n,
                cpuCores: n.cpuCores ?? null,
                maxCpuCores: n.maxCpuCores ?? null,
                memBytes: n.memBytes ?? null,
                maxMemBytes: n.maxMemBytes ?? null,
                cpu: n.cpu ?? null,
                mem: n.mem ?? null,
                load: n.load ?? null,
                pressureCpu: n.pressureCpu ?? null,
                pressureMem: n.pressureMem ?? null,
              })),
            },
      failure:
        failure === undefined ? null : { round: failure.round, ...this.timed(failure.time), message: failure.message },
    };
  }

  /**
   * `/api/history?since=<seconds>&after=<round>&before=<round>&limit=<rounds>&pressure=0`: per
   * round, the imbalance and each node's load (and pressure, unless `pressure=0`: the page charts
   * load only); with `limit`, the newest that many of the rounds asked for (a poller fetches a
   * day of a large cluster in pieces, newest first, `before` the oldest it holds).
   */
  history(query: URLSearchParams): Record<string, unknown> {
    const since = numberParam(query, 'since', { min: 0, meaning: 'seconds of the daemon clock' });
    const after = numberParam(query, 'after', { whole: true, min: 0, meaning: 'a round number' });
    const before = numberParam(query, 'before', { whole: true, min: 1, meaning: 'a round number' });
    const limit = numberParam(query, 'limit', { whole: true, min: 1, max: HISTORY_MAX_ROUNDS, meaning: 'rounds' });
    const pressure = flagParam(query, 'pressure', "the nodes' pressure columns");
    return {
      intervalSeconds: this.ctx.config.intervalSeconds,
      keptSeconds: HISTORY_SECONDS,
      thresholdPercent: this.ctx.config.policy.reference.thresholdPercent,
      ...this.ctx.journal.history.toJson({
        ...(since === undefined ? {} : { since }),
        ...(after === undefined ? {} : { after }),
        ...(before === undefined ? {} : { before }),
        ...(limit === undefined ? {} : { limit }),
        ...(pressure === false ? { pressure } : {}),
      }),
    };
  }

  /** `/api/decisions?after=&since=&outcome=&reason=&q=&limit=`: the round lines, oldest first. */
  decisions(query: URLSearchParams): Record<string, unknown> {
    const since = numberParam(query, 'since', { min: 0, meaning: 'seconds of the daemon clock' });
    const after = numberParam(query, 'after', { whole: true, min: 0, meaning: 'a round number' });
    const limit =
      numberParam(query, 'limit', { whole: true, min: 1, max: DECISIONS_MAX_LIMIT, meaning: 'entries' }) ??
      DECISIONS_DEFAULT_LIMIT;
    const outcomes = listParam(query, 'outcome', ROUND_OUTCOMES);
    const reasons = listParam(query, 'reason');
    const text = query.get('q') ?? undefined;
    const filter: DecisionQuery = {
      limit,
      ...(since === undefined ? {} : { since }),
      ...(after === undefined ? {} : { after }),
      ...(outcomes === undefined ? {} : { outcomes }),
      ...(reasons === undefined ? {} : { reasons }),
      ...(text === undefined || text === '' ? {} : { text }),
    };
    return { kept: this.ctx.journal.decisions.size, decisions: this.ctx.journal.decisions.query(filter) };
  }

  /** `/api/motions?limit=`: the motions of this run (requested, in flight, ended) with their duration. */
  motions(query: URLSearchParams): Record<string, unknown> {
    const limit = numberParam(query, 'limit', { whole: true, min: 1, max: 1000, meaning: 'motions' });
    const now = this.ctx.now();
    const entry = (m: MotionEntry) => ({
      ...m,
      requestedAt: m.requestedAt ?? null,
      requestedAtText: m.requestedAt === undefined ? null : this.ctx.timeText(m.requestedAt),
      imbalanceBefore: m.imbalanceBefore ?? null,
      imbalanceAfter: m.imbalanceAfter ?? null,
      endedAt: m.endedAt ?? null,
      endedAtText: m.endedAt === undefined ? null : this.ctx.timeText(m.endedAt),
      reason: m.reason ?? null,
      // seconds from the request to the outcome, or so far while in flight
      durationSeconds: m.requestedAt === undefined ? null : Math.max(0, Math.round((m.endedAt ?? now) - m.requestedAt)),
    });
    return { motions: this.ctx.journal.motions.list(limit).map(entry) };
  }

  /** `/api/policy`: the policy in force, each key with where it came from, and the problems of its settings. */
  policy(): Record<string, unknown> {
    const config = this.ctx.config.policy;
    const built = this.ctx.policy;
    return {
      mode: this.ctx.config.mode,
      description: built.description,
      stages: built.pipeline.stages.map((s) => s.name),
      thresholdPercent: config.reference.thresholdPercent,
      holdRounds: built.holdRounds,
      marginPercent: config.reference.marginPercent,
      method: config.reference.method,
      preset: config.preset,
      keys: [...config.keys].map(([key, value]) => {
        const source = config.origins.get(key);
        return { key, value, source: source?.label ?? null, sourceKind: source?.kind ?? null };
      }),
      sources: built.sources,
      problems: built.problems,
    };
  }

  /**
   * `/api/plan` and `/api/what-if`: `plan --json` and `plan --what-if node-failure --json` of the
   * last round's snapshot (computed when first asked in a round; nothing is requested). 503
   * before a round has read the cluster.
   */
  private planReply(query: URLSearchParams, which: 'plan' | 'what-if'): JsonReply {
    try {
      checkedQuery(query, []);
    } catch (err) {
      if (err instanceof QueryError) return { status: 400, body: { error: err.message } };
      throw err;
    }
    const read = this.ctx.journal.cluster.read;
    if (read === undefined)
      return { status: 503, body: { error: 'no round has read the cluster yet: the plan is made from the last read' } };
    if (this.planned?.round !== read.round)
      this.planned = { round: read.round, plan: this.plan(read), whatIf: undefined };
    if (which === 'plan') return this.planned.plan;
    this.planned = { ...this.planned, whatIf: this.planned.whatIf ?? this.whatIf(read) };
    return this.planned.whatIf!;
  }

  private planSource(read: ClusterRead): {
    description: string;
    problems: string[];
    input: ReturnType<typeof inputFromSnapshot>['input'];
  } {
    const built = inputFromSnapshot(read.snapshot, this.ctx.config, {}, []);
    const { input } = built;
    return {
      input,
      problems: built.problems,
      description: `${this.ctx.host.port.description}, round ${read.round} at ${this.ctx.timeText(read.time)}: ${input.nodes.length} nodes, ${input.guests.length} guests, ${input.rules?.length ?? 0} rules`,
    };
  }

  private plan(read: ClusterRead): JsonReply {
    try {
      const source = this.planSource(read);
      const plan = planPlacement(source.input, { drain: [] });
      return {
        status: 200,
        body: { round: read.round, ...this.timed(read.time), ...planJson(plan, { ...source, drain: [] }) },
      };
    } catch (err) {
      return { status: 500, body: { error: `the plan failed: ${errorMessage(err)}` } };
    }
  }

  private whatIf(read: ClusterRead): JsonReply {
    try {
      const source = this.planSource(read);
      const report = nodeFailureReport(source.input);
      return { status: 200, body: { round: read.round, ...this.timed(read.time), ...whatIfJson(report, source) } };
    } catch (err) {
      return { status: 500, body: { error: `the what-if failed: ${errorMessage(err)}` } };
    }
  }

  /** `/api/drain`: the progress record of a drain (running or the last one), or null. */
  drain(): Record<string, unknown> {
    const read = readDrainProgress(this.drainProgressFile);
    switch (read.kind) {
      case 'none':
        return { drain: null };
      case 'invalid':
        return { drain: null, problem: read.problem };
      case 'record': {
        const p = read.progress;
        return {
          drain: {
            ...p,
            startedAtText: this.ctx.timeText(p.startedAt),
            updatedAtText: this.ctx.timeText(p.updatedAt),
            processGone: read.processGone,
          },
          ...(read.processGone
            ? { problem: `the drain process (pid ${p.pid}) is gone: it ended without finishing its record (killed?)` }
            : {}),
        };
      }
    }
  }
}
