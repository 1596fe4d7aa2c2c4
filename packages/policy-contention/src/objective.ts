import {
  ContentionError,
  type ContentionOptions,
  type FittedModel,
  type MoveAssessment,
  type NodeContention,
  type PressurePrediction,
  guestActivity,
  moveScorer,
} from '@poise/contention';
import {
  type BalanceCandidate,
  type GuestTelemetry,
  type MoveObjective,
  type NodeTelemetry,
  type Plan,
  PolicyError,
  compareNames,
  formatPercent,
  invalidInput,
} from '@poise/policy';
import type { ContentionPace, RecentMotion } from './pace';

/** The name the contention objective carries in `plan.objective` (and in reasons). */
export const CONTENTION_OBJECTIVE = 'guest contention';

/** A node's pressure now: what it reports, else what the model predicts at its load. */
export interface NodePressureNow {
  readonly node: string;
  readonly cpu: PressurePrediction;
  readonly mem: PressurePrediction;
}

/**
 * The round's contention view, set by the `contention` gate in `plan.objective` for
 * `contention-score` and `contention-margin` (and, as a `MoveObjective`, for `select-cost`):
 * the fitted model, the nodes and guests of the round, and every move's assessment (memoised).
 */
export interface ContentionObjective extends MoveObjective {
  readonly name: typeof CONTENTION_OBJECTIVE;
  /** The model's horizon and migration costs. */
  readonly options: ContentionOptions;
  /** Every node's pressure now, byte order. */
  readonly pressures: readonly NodePressureNow[];
  /** How sparingly the objective moves. */
  readonly pace: ContentionPace;
  /** The balancer's motions that landed within the pace window, oldest first. */
  readonly motions: readonly RecentMotion[];
  /** The last round no guest waited (the hot spell began after it), `null` if none yet. */
  readonly calmAt: number | null;
  /** Nodes whose pressure rose while their load did not (byte order): no source of a move. */
  readonly unexplained: readonly string[];
  /**
   * The predicted effect of moving the candidate's bundle to `target` (see `assessMove` of
   * `@poise/contention`), or `undefined` when it cannot be judged: a member the host reports no
   * telemetry for, or on another node than the bundle's source, or a node without telemetry.
   */
  assess(candidate: BalanceCandidate, target: string): MoveAssessment | undefined;
}

/**
 * A move's expected saving, guest-seconds: the prediction as it is, net of the migration (no
 * discount). What ranks the moves worth making (`contention-score`) and what `select-cost`
 * compares (`gain`): one figure for both.
 */
export function expectedSaving(a: MoveAssessment): number {
  return a.savedSeconds - a.costSeconds;
}

/** Whether `plan.objective` is the contention objective (set by the `contention` gate). */
export function contentionObjectiveOf(plan: Plan, stage: string): ContentionObjective {
  const o = plan.objective as Partial<ContentionObjective> | undefined;
  if (!o || o.name !== CONTENTION_OBJECTIVE || typeof o.assess !== 'function') {
    throw new PolicyError(
      'invalid-pipeline',
      `stage '${stage}' needs the objective of the 'contention' gate (plan.objective), got ${o ? `'${String(o.name)}'` : 'none'}`,
    );
  }
  return o as ContentionObjective;
}

/** Whether a node's pressure now reaches either limit (cpu or memory, percent). */
export function reaches(
  p: NodePressureNow,
  limits: { readonly cpuPercent: number; readonly memPercent: number },
): boolean {
  return p.cpu.percent >= limits.cpuPercent || p.mem.percent >= limits.memPercent;
}

/** `412 guest-seconds` (rounded to whole seconds, sign kept). */
export function formatGuestSeconds(seconds: number): string {
  return `${Math.round(seconds)} guest-seconds`;
}

/** `cpu 32.0% → 14.1%` for a pressure change, the dimension that changes most (cpu on a tie). */
export function formatChange(change: MoveAssessment['source']): string {
  const cpu = Math.abs(change.cpu.after.percent - change.cpu.before.percent);
  const mem = Math.abs(change.mem.after.percent - change.mem.before.percent);
  const [dim, c] = mem > cpu ? (['mem', change.mem] as const) : (['cpu', change.cpu] as const);
  return `${change.node} ${dim} ${formatPercent(c.before.percent)} → ${formatPercent(c.after.percent)}`;
}

/** Runs a model computation; its `ContentionError` (data the host gave) stops the round as `invalid-input`. */
export function modelCall<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof ContentionError) throw invalidInput(`${what}: ${err.message}`);
    throw err;
  }
}

/**
 * Builds the round's objective. `nodes` are the round's node telemetry; `guests` is read on the
 * first assessment (a gate that stops never asks the host for it).
 */
export function roundObjective(
  model: FittedModel,
  nodes: readonly NodeTelemetry[],
  guests: () => readonly GuestTelemetry[],
  options: ContentionOptions,
  pressures: readonly NodePressureNow[],
  history: {
    readonly pace: ContentionPace;
    readonly motions: readonly RecentMotion[];
    readonly calmAt: number | null;
    readonly unexplained?: readonly string[];
    /** Cost–benefit: each source node's learned horizon, seconds (absent: the options'). */
    readonly horizons?: ReadonlyMap<string, number>;
  },
): ContentionObjective {
  const score = moveScorer(model, options);
  const byNode = new Map(nodes.map((n) => [n.node, n]));
  let bySid: Map<string, GuestTelemetry> | undefined;
  let activity: Map<string, number> | undefined;
  const guestIndex = () => {
    if (!bySid) {
      bySid = new Map();
      activity = new Map();
      for (const g of [...guests()].sort((a, b) => compareNames(a.sid, b.sid))) {
        bySid.set(g.sid, g);
        activity.set(g.node, (activity.get(g.node) ?? 0) + guestActivity(g.cpu, g.maxcpu));
      }
    }
    return { bySid, activity: activity! };
  };
  const contention = new Map<string, NodeContention | undefined>();
  const node = (name: string): NodeContention | undefined => {
    if (contention.has(name)) return contention.get(name);
    const n = byNode.get(name);
    const c = n && {
      node: n.node,
      cpu: n.cpu,
      maxcpu: n.maxcpu,
      mem: n.mem,
      maxmem: n.maxmem,
      activity: guestIndex().activity.get(name) ?? 0,
    };
    contention.set(name, c);
    return c;
  };
  // by leader, then target: a round asks for ~1,000 moves, and a string key per move cost more
  // than the lookup it served
  const assessed = new Map<string, Map<string, MoveAssessment | undefined>>();
  const assess = (candidate: BalanceCandidate, target: string): MoveAssessment | undefined => {
    let byTarget = assessed.get(candidate.leader);
    if (byTarget === undefined) {
      byTarget = new Map<string, MoveAssessment | undefined>();
      assessed.set(candidate.leader, byTarget);
    } else if (byTarget.has(target)) return byTarget.get(target);
    const { bySid: index } = guestIndex();
    const sids = candidate.resources;
    const first = sids.length > 0 ? index.get(sids[0]!) : undefined;
    const sourceName = candidate.source ?? first?.node;
    let result: MoveAssessment | undefined;
    const source = sourceName === undefined ? undefined : node(sourceName);
    const destination = node(target);
    if (source && destination && source.node !== destination.node) {
      let cpu = 0;
      let mem = 0;
      let moving = 0;
      let vcpus = 0;
      let members = 0;
      for (const sid of sids) {
        const g = index.get(sid);
        if (g === undefined || g.node !== source.node) break;
        members++;
        cpu += g.cpu;
        mem += g.mem;
        moving += guestActivity(g.cpu, g.maxcpu);
        vcpus += Number.isFinite(g.maxcpu) && g.maxcpu >= 1 ? Math.ceil(g.maxcpu) : 1;
      }
      // every member known and on the source
      if (members === sids.length) {
        const bundle = {
          cpu,
          mem,
          activity: moving,
          guests: members,
          transferBytes: candidate.transferBytes ?? mem,
          vcpus,
        };
        const horizonSeconds = history.horizons?.get(source.node);
        const move =
          horizonSeconds === undefined
            ? { source, target: destination, bundle }
            : { source, target: destination, bundle, horizonSeconds };
        // modelCall's rule inline: no two closures per move
        try {
          result = score(move);
        } catch (err) {
          if (err instanceof ContentionError)
            throw invalidInput(`candidate '${candidate.leader}' to '${target}': ${err.message}`);
          throw err;
        }
      }
    }
    byTarget.set(target, result);
    return result;
  };
  return {
    name: CONTENTION_OBJECTIVE,
    options,
    pressures,
    pace: history.pace,
    motions: history.motions,
    calmAt: history.calmAt,
    unexplained: history.unexplained ?? [],
    assess,
    gain: (candidate, target) => {
      const a = assess(candidate, target);
      return a && expectedSaving(a);
    },
    formatGain: formatGuestSeconds,
  };
}
