import { type PolicyError, invalidInput } from './errors';
import { showValue } from './state';
import type {
  AdjustedNodeUsage,
  BalanceCandidate,
  BalanceContext,
  FinishedMigration,
  BalanceEvaluator,
  BalanceMethod,
  GuestTelemetry,
  MigrationCandidate,
  MotionOutcome,
  NodeTelemetry,
  NoticeInit,
  ScoredMigration,
} from './types';
import type { ReasonFormat } from './explain';

/** Upper bound of node telemetry values (cores, bytes): keeps every sum and average finite. */
export const TELEMETRY_MAX = 2 ** 53;

const isName = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** Checks an imbalance from the host: a finite number ≥ 0. */
function checkImbalance(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw invalidInput(`${what} must be a finite number >= 0, got ${showValue(value)}`);
  }
  return value;
}

/** Lists up to this long are searched for duplicates in place; longer ones through a set. */
const SHORT_LIST = 16;

/** Whether `list` holds `value` before index `end` (`seen`: the set of those, for a long list). */
function heldBefore(list: readonly unknown[], value: unknown, end: number, seen: Set<unknown> | undefined): boolean {
  if (seen) return seen.has(value);
  for (let k = 0; k < end; k++) if (list[k] === value) return true;
  return false;
}

/**
 * Checks the host's candidates (see `BalanceCandidate` for the accepted shape). Asked every
 * round the objective scores: the messages are built only for a candidate that fails.
 */
function checkCandidates(value: unknown): BalanceCandidate[] {
  if (!Array.isArray(value)) throw invalidInput(`candidates must be an array, got ${showValue(value)}`);
  const leaders = new Set<string>();
  for (let i = 0; i < value.length; i++) {
    const c: unknown = value[i];
    if (typeof c !== 'object' || c === null)
      throw invalidInput(`candidates.${i} must be an object, got ${showValue(c)}`);
    const { leader, resources, targets, source, transferBytes } = c as Record<string, unknown>;
    if (!isName(leader))
      throw invalidInput(`candidates.${i}.leader must be a non-empty string, got ${showValue(leader)}`);
    if (leaders.has(leader)) throw badCandidate(leader, i, 'leader listed twice');
    leaders.add(leader);
    if (!Array.isArray(resources) || resources.length === 0)
      throw badCandidate(leader, i, "'resources' must be a non-empty array");
    let hasLeader = false;
    const members = resources.length > SHORT_LIST ? new Set<unknown>() : undefined;
    for (let k = 0; k < resources.length; k++) {
      const sid: unknown = resources[k];
      if (!isName(sid)) throw badCandidate(leader, i, `'resources' must hold non-empty strings, got ${showValue(sid)}`);
      if (heldBefore(resources, sid, k, members)) throw badCandidate(leader, i, `'resources' lists '${sid}' twice`);
      members?.add(sid);
      if (sid === leader) hasLeader = true;
    }
    if (!hasLeader) throw badCandidate(leader, i, "'resources' must include the leader");
    if (!Array.isArray(targets)) throw badCandidate(leader, i, "'targets' must be an array");
    const seen = targets.length > SHORT_LIST ? new Set<unknown>() : undefined;
    for (let k = 0; k < targets.length; k++) {
      const t: unknown = targets[k];
      if (!isName(t)) throw badCandidate(leader, i, `'targets' must hold non-empty strings, got ${showValue(t)}`);
      if (heldBefore(targets, t, k, seen)) throw badCandidate(leader, i, `'targets' lists '${t}' twice`);
      seen?.add(t);
    }
    if (source !== undefined) {
      if (!isName(source))
        throw badCandidate(leader, i, `'source' must be a non-empty string, got ${showValue(source)}`);
      if (heldBefore(targets, source, targets.length, seen))
        throw badCandidate(leader, i, `its source '${source}' is also a target`);
    }
    if (
      transferBytes !== undefined &&
      (typeof transferBytes !== 'number' || !Number.isFinite(transferBytes) || transferBytes < 0)
    ) {
      throw badCandidate(leader, i, `'transferBytes' must be a finite number >= 0, got ${showValue(transferBytes)}`);
    }
  }
  return value as BalanceCandidate[];
}

/** `candidate 'vm:101' (candidates.3): <problem>`, as an `invalid-input` error. */
function badCandidate(leader: string, i: number, problem: string): PolicyError {
  return invalidInput(`candidate '${leader}' (candidates.${i}): ${problem}`);
}

/** Checks scored migrations against the candidates they were scored from. */
function checkScored(value: unknown, candidates: readonly MigrationCandidate[], limit: number): ScoredMigration[] {
  if (!Array.isArray(value)) throw invalidInput(`scored migrations must be an array, got ${showValue(value)}`);
  if (value.length > limit)
    throw invalidInput(`the host scored ${value.length} migrations, more than the limit ${limit}`);
  if (value.length === 0) return value as ScoredMigration[];
  const byLeader = new Map<string, MigrationCandidate>();
  for (const c of candidates) byLeader.set(c.leader, c);
  value.forEach((m: unknown, i) => {
    const at = `scored.${i}`;
    if (typeof m !== 'object' || m === null) throw invalidInput(`${at} must be an object, got ${showValue(m)}`);
    const { sid, source, target, imbalance } = m as Record<string, unknown>;
    for (const [field, v] of [
      ['sid', sid],
      ['source', source],
      ['target', target],
    ] as const) {
      if (!isName(v)) throw invalidInput(`${at}.${field} must be a non-empty string, got ${showValue(v)}`);
    }
    checkImbalance(imbalance, `${at}.imbalance (the imbalance after moving '${String(sid)}')`);
    if (source === target) throw invalidInput(`${at}: '${String(sid)}' would move from '${String(source)}' to itself`);
    const candidate = byLeader.get(sid as string);
    if (!candidate || !candidate.targets.includes(target as string)) {
      throw invalidInput(
        `${at}: '${String(sid)}' to '${String(target)}' is not one of the candidates given to the scorer`,
      );
    }
    const candidateSource = (candidate as BalanceCandidate).source;
    if (candidateSource !== undefined && candidateSource !== source) {
      throw invalidInput(
        `${at}: '${String(sid)}' is scored from '${String(source)}' but the candidate's source is '${candidateSource}'`,
      );
    }
  });
  return value as ScoredMigration[];
}

/** Checks node telemetry (see `NodeTelemetry` for the accepted range). */
function checkNodes(value: unknown): readonly NodeTelemetry[] {
  if (!Array.isArray(value)) throw invalidInput(`node telemetry must be an array, got ${showValue(value)}`);
  const names = new Set<string>();
  value.forEach((n: unknown, i) => {
    const at = `nodes.${i}`;
    if (typeof n !== 'object' || n === null) throw invalidInput(`${at} must be an object, got ${showValue(n)}`);
    const t = n as Record<string, unknown>;
    if (!isName(t.node)) throw invalidInput(`${at}.node must be a non-empty string, got ${showValue(t.node)}`);
    const name = `node '${t.node}'`;
    if (names.has(t.node)) throw invalidInput(`${name}: listed twice in the node telemetry`);
    names.add(t.node);
    for (const field of ['cpu', 'mem', 'servicesCpu', 'servicesMem', 'maxcpu', 'maxmem'] as const) {
      const v = t[field];
      const positive = field === 'maxcpu' || field === 'maxmem';
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (positive && v === 0) || v > TELEMETRY_MAX) {
        throw invalidInput(
          `${name}: '${field}' must be a finite number ${positive ? '> 0' : '>= 0'} and <= 2^53, got ${showValue(v)}`,
        );
      }
    }
    for (const field of ['pressureCpu', 'pressureMem'] as const) {
      const v = t[field];
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 100)) {
        throw invalidInput(
          `${name}: '${field}' must be a percentage in 0..100 or undefined (missing), got ${showValue(v)}`,
        );
      }
    }
  });
  return value as NodeTelemetry[];
}

/** Checks guest telemetry (see `GuestTelemetry` for the accepted range). */
function checkGuests(value: unknown): readonly GuestTelemetry[] {
  if (!Array.isArray(value)) throw invalidInput(`guest telemetry must be an array, got ${showValue(value)}`);
  const sids = new Set<string>();
  value.forEach((g: unknown, i) => {
    const at = `guests.${i}`;
    if (typeof g !== 'object' || g === null) throw invalidInput(`${at} must be an object, got ${showValue(g)}`);
    const t = g as Record<string, unknown>;
    if (!isName(t.sid)) throw invalidInput(`${at}.sid must be a non-empty string, got ${showValue(t.sid)}`);
    const name = `guest '${t.sid}'`;
    if (sids.has(t.sid)) throw invalidInput(`${name}: listed twice in the guest telemetry`);
    sids.add(t.sid);
    if (!isName(t.node)) throw invalidInput(`${name}: 'node' must be a non-empty string, got ${showValue(t.node)}`);
    for (const field of ['cpu', 'maxcpu', 'mem'] as const) {
      const v = t[field];
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > TELEMETRY_MAX) {
        throw invalidInput(`${name}: '${field}' must be a finite number >= 0 and <= 2^53, got ${showValue(v)}`);
      }
    }
  });
  return value as GuestTelemetry[];
}

/** Whether a host's reason format has the members the stages call (see `BalanceContext.format`). */
export function isReasonFormat(value: unknown): value is ReasonFormat {
  if (typeof value !== 'object' || value === null) return false;
  const { value: print, bound } = value as Record<string, unknown>;
  return typeof print === 'function' && typeof bound === 'function';
}

/** Splits reported outcomes into valid ones and a warning per invalid one. */
export function checkOutcomes(value: unknown, now: number): { outcomes: MotionOutcome[]; notices: NoticeInit[] } {
  if (value === undefined) return { outcomes: [], notices: [] };
  const bad = (i: number | undefined, why: string): NoticeInit => ({
    code: 'invalid-outcome',
    severity: 'warning',
    message: `ignored an invalid motion outcome${i === undefined ? '' : ` (outcomes.${i})`}: ${why}`,
  });
  if (!Array.isArray(value))
    return { outcomes: [], notices: [bad(undefined, `outcomes must be an array, got ${showValue(value)}`)] };
  const outcomes: MotionOutcome[] = [];
  const notices: NoticeInit[] = [];
  value.forEach((o: unknown, i) => {
    if (typeof o !== 'object' || o === null) return void notices.push(bad(i, `not an object (${showValue(o)})`));
    const { resources, source, target, ok, at, detail } = o as Record<string, unknown>;
    if (
      !Array.isArray(resources) ||
      resources.length === 0 ||
      !resources.every(isName) ||
      new Set(resources).size !== resources.length
    ) {
      return void notices.push(bad(i, "'resources' must be non-empty distinct names"));
    }
    if (!isName(source) || !isName(target))
      return void notices.push(bad(i, "'source' and 'target' must be non-empty strings"));
    if (source === target) return void notices.push(bad(i, `source and target are both '${source}'`));
    if (typeof ok !== 'boolean') return void notices.push(bad(i, `'ok' must be a boolean, got ${showValue(ok)}`));
    if (typeof at !== 'number' || !Number.isFinite(at))
      return void notices.push(bad(i, `'at' must be a finite number, got ${showValue(at)}`));
    outcomes.push({
      resources: [...resources],
      source,
      target,
      ok,
      at: Math.min(at, now),
      ...(typeof detail === 'string' ? { detail } : {}),
    });
  });
  return { outcomes, notices };
}

/**
 * Errors the host's context threw (marked on their way through the round context): a stage
 * must let them pass (see `Stage`), and the pipeline hands them on as they are, not as the
 * stage's failure.
 */
const HOST_ERRORS = new WeakSet<object>();

/** Whether `err` was thrown by a member of the host's context during a round. */
export function isHostError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && HOST_ERRORS.has(err);
}

/** `read` as a call of the host: what it throws is marked as the host's ({@link isHostError}). */
function fromHost<A extends unknown[], R>(read: (...args: A) => R): (...args: A) => R {
  return (...args) => {
    try {
      return read(...args);
    } catch (err) {
      if (typeof err === 'object' && err !== null) HOST_ERRORS.add(err);
      throw err;
    }
  };
}

/** Wraps an evaluator: memoises the imbalance and checks every value it returns. */
function checkedEvaluator(inner: BalanceEvaluator, what: string): BalanceEvaluator {
  let imbalance: number | undefined;
  const read = fromHost(() => inner.imbalance());
  const score = fromHost((candidates: MigrationCandidate[], method: BalanceMethod, limit: number) =>
    inner.score(candidates, method, limit),
  );
  return {
    imbalance: () => (imbalance ??= checkImbalance(read(), `${what} imbalance`)),
    score: (candidates: MigrationCandidate[], method: BalanceMethod, limit: number) =>
      checkScored(score(candidates, method, limit), candidates, limit),
  };
}

/**
 * The context the stages see: the host's context with `imbalance`, `candidates`, `nodes` and
 * `guests` memoised, and every value checked (out-of-range data throws `invalid-input`). Optional
 * members are present exactly when the host provides them.
 */
export function roundContext(ctx: BalanceContext, outcomes: readonly MotionOutcome[]): BalanceContext {
  const measured = checkedEvaluator(ctx, 'the host');
  const readCandidates = fromHost(() => ctx.candidates());
  let candidates: BalanceCandidate[] | undefined;
  let nodes: readonly NodeTelemetry[] | undefined;
  let guests: readonly GuestTelemetry[] | undefined;
  const round: { -readonly [K in keyof BalanceContext]: BalanceContext[K] } = {
    now: ctx.now,
    motionInFlight: ctx.motionInFlight,
    outcomes,
    imbalance: () => measured.imbalance(),
    score: (candidates, method, limit) => measured.score(candidates, method, limit),
    candidates: () => (candidates ??= checkCandidates(readCandidates())),
  };
  if (ctx.nodes) {
    const read = fromHost(ctx.nodes.bind(ctx));
    round.nodes = () => (nodes ??= checkNodes(read()));
  }
  if (ctx.guests) {
    const read = fromHost(ctx.guests.bind(ctx));
    round.guests = () => (guests ??= checkGuests(read()));
  }
  if (ctx.adjust) {
    const adjust = fromHost(ctx.adjust.bind(ctx));
    round.adjust = (list: readonly AdjustedNodeUsage[]) => checkedEvaluator(adjust(list), 'the adjusted');
  }
  if (ctx.migrationTasks) {
    const read = fromHost(ctx.migrationTasks.bind(ctx));
    let tasks: readonly FinishedMigration[] | undefined;
    round.migrationTasks = () => (tasks ??= read());
  }
  if (ctx.guestConfig) round.guestConfig = fromHost(ctx.guestConfig.bind(ctx));
  if (ctx.migratability) round.migratability = fromHost(ctx.migratability.bind(ctx));
  if (ctx.sharedStorage) round.sharedStorage = fromHost(ctx.sharedStorage.bind(ctx));
  if (ctx.planInput) {
    const read = fromHost(ctx.planInput.bind(ctx));
    let input: { value: unknown } | undefined;
    round.planInput = () => (input ??= { value: read() }).value;
  }
  if (ctx.format !== undefined) round.format = ctx.format;
  return round;
}
