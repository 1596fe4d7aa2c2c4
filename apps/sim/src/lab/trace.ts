import { readFileSync } from 'node:fs';
import type { ResourceMove, TruthColumns } from '@poise/sim';
import { z } from 'zod';
import { LabError } from './errors';
import type { PlanRule } from '@poise/plan';
import { compareNames } from '@poise/usage';

/**
 * The format tag of a {@link RunTrace} file; bumped when the layout changes. `/2`: moves carry
 * `outcomeAt` (and `detail`), rounds carry `online`, the pressure columns are always there.
 * `/3`: moves carry `landedAt`; rounds carry `truth` (the load pressure model's ground truth)
 * when the run used that model, and the trace the nodes' cpu curve families (`cpuFamilies`,
 * optional: a `/3` trace without it reads as before).
 */
export const TRACE_FORMAT = 'poise-run-trace/3';

/**
 * One resource's part of a motion the balancer issued (`ResourceMove` of `@poise/sim`): a
 * bundle (positive resource affinity) is one move per resource, all with the same times,
 * target and outcome.
 */
export type TraceMove = ResourceMove;

/**
 * The time series of a run, one column per quantity (index r = sample, index i = node in
 * `RunTrace.nodes` order): the `rounds` of `@poise/sim`'s `RunRecorder`. A sample is taken
 * before the first round and after every round, and holds until the next sample (the last one
 * until `RunTrace.endTime`).
 */
export interface TraceRounds {
  /** Sample times, seconds, strictly increasing, each ≤ `endTime`. */
  time: number[];
  /** Node imbalance of the measured loads of the online nodes (the `pve-9.2` normalised metric), 0..1, lower is better. */
  imbalance: number[];
  /** `cpu[i][r]`: node i's cpu use as a fraction of its cores (≥ 0; above 1 when overcommitted). */
  cpu: number[][];
  /** `mem[i][r]`: node i's memory use as a fraction of its memory (≥ 0). */
  mem: number[][];
  /** `online[i][r]`: node i was online (powered, networked, quorate). */
  online: boolean[][];
  /** `pressureCpu[i][r]`: PSI cpu "some" avg10, percent 0..100; null = not reported that round. */
  pressureCpu: (number | null)[][];
  /** `pressureMem[i][r]`: PSI memory "some" avg10, percent 0..100; null = not reported. */
  pressureMem: (number | null)[][];
  /**
   * The load pressure model's ground truth (`TruthColumns` of `@poise/sim`: each node's PSI some
   * shares without noise or delay, and its guests' stall per sample interval); absent when the
   * run's pressure was scripted.
   */
  truth?: TruthColumns;
}

/** What one simulation run (scenario × variant × seed) produced for the lab. */
export interface RunTrace {
  format: typeof TRACE_FORMAT;
  scenario: string;
  variant: string;
  seed: number;
  /** Simulated seconds from 0 to the end of the run. */
  endTime: number;
  /** Node names in byte order. */
  nodes: string[];
  rounds: TraceRounds;
  /** Balancer motions per resource, in issue order (times non-decreasing). */
  moves: TraceMove[];
  /**
   * Under the load pressure model: each node's cpu curve family (`cpuFamilies[i]` of `nodes[i]`,
   * `queue`, `logistic`, …), what the prediction error is grouped by; absent otherwise.
   */
  cpuFamilies?: string[];
  /** Where the guests started and ended, for the hindsight oracle (`regret.ts`); absent in a trace recorded without it. */
  placement?: TracePlacement;
}

/** One node as a run ended: capacity, state and measured use (the trace's last sample). */
export interface PlacementNode {
  name: string;
  /** Cores, > 0. */
  cpuCores: number;
  /** Bytes, > 0. */
  memBytes: number;
  online: boolean;
  maintenance: boolean;
  /** Measured cpu in use, cores (base load, noise and the running guests). */
  cpu: number;
  /** Measured memory in use, bytes. */
  mem: number;
}

/** One guest that ran when the run ended: where it started, where it ended, its use at the end. */
export interface PlacementGuest {
  sid: string;
  /** Its node when the run started. */
  initial: string;
  /** Its node when the run ended. */
  final: string;
  /** Cores in use at the end. */
  cpu: number;
  /** Bytes in use at the end (the host-side footprint when known, as the node measurement counts it). */
  mem: number;
  /** False when it cannot be migrated (a local CD-ROM, …); `reason` says why. */
  migratable: boolean;
  reason?: string;
  /** HA ignores it: it stays, its load counts. */
  ignored: boolean;
}

/** What the oracle needs of a run, recorded at its end (`RunTrace.placement`). */
export interface TracePlacement {
  nodes: PlacementNode[];
  guests: PlacementGuest[];
  /** The case's HA rules (`@poise/plan` form), restricted to these guests and nodes. */
  rules: PlanRule[];
  /** Which balancer ran: `planned` when the run's `ha-auto-rebalance-plan` was on. */
  balancer?: 'greedy' | 'planned';
}

/** Whether some node reported pressure at some sample (else the run has no pressure telemetry). */
export function hasPressure(rounds: TraceRounds): boolean {
  for (const col of [rounds.pressureCpu, rounds.pressureMem])
    for (const c of col) for (const v of c) if (v !== null) return true;
  return false;
}

const finite = z.number().refine(Number.isFinite, { message: 'expected a finite number' });
const nonNeg = finite.refine((v) => v >= 0, { message: 'expected a number ≥ 0' });
const percent = finite.refine((v) => v >= 0 && v <= 100, { message: 'expected a percentage in 0..100' });

const moveSchema = z.strictObject({
  time: nonNeg,
  sid: z.string().regex(/^(vm|ct|fa):\d+$/, { message: "expected a service id such as 'vm:101'" }),
  source: z.string().min(1),
  target: z.string().min(1),
  ok: z.boolean().nullable(),
  outcomeAt: nonNeg.nullable(),
  detail: z.string().optional(),
  landedAt: nonNeg.nullable().optional(),
});

/** The truth columns: one series of numbers per node. */
const TRUTH_KEYS = ['cpuSome', 'memSome', 'cpuStall', 'memStall', 'migrationStall'] as const;
const truthSchema = z.strictObject({
  cpuSome: z.array(z.array(percent)),
  memSome: z.array(z.array(percent)),
  cpuStall: z.array(z.array(nonNeg)),
  memStall: z.array(z.array(nonNeg)),
  migrationStall: z.array(z.array(nonNeg)),
});

const positive = finite.refine((v) => v > 0, { message: 'expected a number > 0' });
// the rules are checked by the planner when the oracle reads them (errors name the field)
const placementSchema = z.strictObject({
  balancer: z.enum(['greedy', 'planned']).optional(),
  nodes: z.array(
    z.strictObject({
      name: z.string().min(1),
      cpuCores: positive,
      memBytes: positive,
      online: z.boolean(),
      maintenance: z.boolean(),
      cpu: nonNeg,
      mem: nonNeg,
    }),
  ),
  guests: z.array(
    z.strictObject({
      sid: z.string().min(1),
      initial: z.string().min(1),
      final: z.string().min(1),
      cpu: nonNeg,
      mem: nonNeg,
      migratable: z.boolean(),
      reason: z.string().optional(),
      ignored: z.boolean(),
    }),
  ),
  rules: z.array(z.looseObject({ id: z.string(), type: z.enum(['node-affinity', 'resource-affinity']) })),
});

const traceSchema = z
  .strictObject({
    format: z.literal(TRACE_FORMAT, {
      error: `expected '${TRACE_FORMAT}' (a trace of another format: run it again with this poise-sim)`,
    }),
    scenario: z.string().min(1),
    variant: z.string().min(1),
    seed: z.number().int().nonnegative(),
    endTime: nonNeg,
    nodes: z.array(z.string().min(1)),
    rounds: z.strictObject({
      time: z.array(nonNeg),
      imbalance: z.array(nonNeg.refine((v) => v <= 1, { message: 'expected an imbalance in 0..1' })),
      cpu: z.array(z.array(nonNeg)),
      mem: z.array(z.array(nonNeg)),
      online: z.array(z.array(z.boolean())),
      pressureCpu: z.array(z.array(percent.nullable())),
      pressureMem: z.array(z.array(percent.nullable())),
      truth: truthSchema.optional(),
    }),
    moves: z.array(moveSchema),
    cpuFamilies: z.array(z.string().min(1)).optional(),
    placement: placementSchema.optional(),
  })
  .superRefine((t, ctx) => {
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    const sorted = [...t.nodes].sort(compareNames);
    t.nodes.forEach((n, i) => {
      if (n !== sorted[i]) issue(['nodes', i], 'node names must be unique and in byte order');
    });
    const n = t.rounds.time.length;
    t.rounds.time.forEach((v, r) => {
      if (r > 0 && v <= t.rounds.time[r - 1]!) issue(['rounds', 'time', r], 'sample times must be strictly increasing');
      if (v > t.endTime) issue(['rounds', 'time', r], `sample time ${v} is after 'endTime' ${t.endTime}`);
    });
    if (t.rounds.imbalance.length !== n)
      issue(['rounds', 'imbalance'], `expected ${n} values (one per sample time), got ${t.rounds.imbalance.length}`);
    for (const key of ['cpu', 'mem', 'online', 'pressureCpu', 'pressureMem'] as const) {
      const cols = t.rounds[key];
      if (cols.length !== t.nodes.length)
        issue(['rounds', key], `expected ${t.nodes.length} series (one per node), got ${cols.length}`);
      cols.forEach((c, i) => {
        if (c.length !== n) issue(['rounds', key, i], `expected ${n} values (one per sample time), got ${c.length}`);
      });
    }
    if (t.cpuFamilies && t.cpuFamilies.length !== t.nodes.length)
      issue(['cpuFamilies'], `expected ${t.nodes.length} families (one per node), got ${t.cpuFamilies.length}`);
    const truth = t.rounds.truth;
    if (truth) {
      for (const key of TRUTH_KEYS) {
        const cols = truth[key];
        if (cols.length !== t.nodes.length)
          issue(['rounds', 'truth', key], `expected ${t.nodes.length} series (one per node), got ${cols.length}`);
        cols.forEach((c, i) => {
          if (c.length !== n)
            issue(['rounds', 'truth', key, i], `expected ${n} values (one per sample time), got ${c.length}`);
        });
      }
    }
    const known = new Set(t.nodes);
    t.moves.forEach((m, j) => {
      if (j > 0 && m.time < t.moves[j - 1]!.time) issue(['moves', j, 'time'], 'moves must be in time order');
      if (m.time > t.endTime) issue(['moves', j, 'time'], `move time ${m.time} is after 'endTime' ${t.endTime}`);
      if (!known.has(m.source)) issue(['moves', j, 'source'], `unknown node '${m.source}'`);
      if (!known.has(m.target)) issue(['moves', j, 'target'], `unknown node '${m.target}'`);
      if (m.source === m.target) issue(['moves', j, 'target'], 'a move needs a target other than its source');
      if ((m.ok === null) !== (m.outcomeAt === null))
        issue(
          ['moves', j, 'outcomeAt'],
          m.ok === null ? 'a move in flight has no outcome time' : 'a move with an outcome needs its time',
        );
      if (m.outcomeAt !== null && (m.outcomeAt < m.time || m.outcomeAt > t.endTime))
        issue(['moves', j, 'outcomeAt'], `outcome time ${m.outcomeAt} is not within ${m.time}..${t.endTime}`);
      if (m.landedAt != null && (m.ok !== true || m.landedAt < m.outcomeAt! || m.landedAt > t.endTime)) {
        issue(
          ['moves', j, 'landedAt'],
          m.ok !== true
            ? 'only a successful move lands'
            : `landing time ${m.landedAt} is not within ${m.outcomeAt}..${t.endTime}`,
        );
      }
    });
    t.placement?.guests.forEach((g, j) => {
      if (!known.has(g.initial)) issue(['placement', 'guests', j, 'initial'], `unknown node '${g.initial}'`);
      if (!known.has(g.final)) issue(['placement', 'guests', j, 'final'], `unknown node '${g.final}'`);
    });
    t.placement?.nodes.forEach((n, i) => {
      if (n.name !== t.nodes[i])
        issue(['placement', 'nodes', i, 'name'], `expected '${t.nodes[i] ?? '(none)'}' (the trace's nodes, in order)`);
    });
  });

/** `rounds.cpu[2][17]` from a zod issue path. */
export function dotPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out === '' ? '(top level)' : out;
}

/** First problem of a zod error as `field: message` (dot path). */
function firstIssue(error: z.ZodError): string {
  const i = error.issues[0]!;
  return `${dotPath(i.path)}: ${i.message.charAt(0).toLowerCase()}${i.message.slice(1)}`;
}

/**
 * Checks a value against the trace format; throws {@link LabError} `bad-trace` naming `where`
 * (a file or a run) and the first bad field.
 */
export function validateTrace(value: unknown, where: string): RunTrace {
  const res = traceSchema.safeParse(value);
  if (!res.success) throw new LabError('bad-trace', `'${where}': ${firstIssue(res.error)}`);
  return res.data as RunTrace;
}

/** Reads and validates a trace file (JSON); a bad file is an error naming the file and field. */
export function readTrace(file: string): RunTrace {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new LabError('bad-trace', `cannot read '${file}': ${(err as Error).message}`, { cause: err });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new LabError('bad-trace', `'${file}': invalid JSON: ${(err as Error).message}`, { cause: err });
  }
  return validateTrace(value, file);
}
