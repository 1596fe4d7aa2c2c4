import {
  ContentionError,
  type ContentionModelState,
  type ContentionOptions,
  type FittedModel,
  HORIZON_SPELLS_KEPT,
  checkModelState,
  contentionOptions,
  emptyModel,
  fitModel,
  learnMigrationSettings,
  observeNodes,
  spellHorizon,
} from '@poise/contention';
import {
  type NodeTelemetry,
  type NoticeInit,
  PolicyError,
  type Stage,
  compareNames,
  formatList,
  formatPercent,
  missingContext,
  stateCheck,
} from '@poise/policy';
import { CONTENTION_FLOOR, SATURATED } from './limits';
import { type ContentionPace, type RecentMotion, checkMotions, contentionPace, recordMotions } from './pace';
import {
  type PressureSample,
  type UnexplainedRise,
  checkRises,
  checkSamples,
  detectRises,
  lastingRises,
  recordSamples,
} from './rise';

import { type NodePressureNow, modelCall, reaches, roundObjective } from './objective';

/** State of {@link contentionGate}. */
export interface ContentionGateState {
  /** What the model learned (plain JSON, bounded: see `@poise/contention`). */
  readonly model: ContentionModelState;
  /** Nodes whose pressure is predicted from their load alone last round (`node2 (cpu, mem)`), for the notice. */
  readonly fallback: readonly string[];
  /** The balancer's motions that landed within the pace window, oldest first (for the pace). */
  readonly motions: readonly RecentMotion[];
  /** The newest motion outcome seen (seconds), `null` before the first. */
  readonly lastOutcomeAt: number | null;
  /** The last round no guest waited (seconds), `null` before the first: a hot spell starts after it. */
  readonly calmAt: number | null;
  /** Whether the last round it ran saw no node that ever reported PSI (it then hands the round to the imbalance). */
  readonly noPsi: boolean;
  /** The nodes' loads and pressures of the rounds of the last 180 s (see `rise.ts`). */
  readonly samples: readonly PressureSample[];
  /** Nodes whose pressure rose while their load did not, until it falls below the contention floor. */
  readonly unexplained: readonly UnexplainedRise[];
  /** Each node's hot spells, byte order (cost–benefit: how long a move's saving is counted). */
  readonly spells: readonly NodeSpells[];
  /** Whether the last round it priced a move found no finished migration to learn the link rate from (for the notice). */
  readonly noTasks: boolean;
  /** How many reported finished migrations were left out as bad the last round (for the notice). */
  readonly badTasks: number;
}

/** A node's hot spells: contention from the round it reached the floor to the round it fell below. */
export interface NodeSpells {
  readonly node: string;
  /** When its spell going on began (seconds), `null` while it is calm. */
  readonly since: number | null;
  /** The durations of its last spells, seconds, oldest first (at most `HORIZON_SPELLS_KEPT`). */
  readonly durations: readonly number[];
}

/** The spells after a round in which `hot` nodes reached the contention floor (nodes of `seen` only). */
export function recordSpells(
  spells: readonly NodeSpells[],
  seen: readonly string[],
  hot: ReadonlySet<string>,
  now: number,
): NodeSpells[] {
  const byNode = new Map(spells.map((s) => [s.node, s]));
  for (const node of seen) {
    const s = byNode.get(node) ?? { node, since: null, durations: [] };
    if (hot.has(node) && s.since === null) byNode.set(node, { ...s, since: now });
    else if (!hot.has(node) && s.since !== null)
      byNode.set(node, { node, since: null, durations: [...s.durations, now - s.since].slice(-HORIZON_SPELLS_KEPT) });
    else if (!byNode.has(node)) byNode.set(node, s);
  }
  return [...byNode.values()].sort((a, b) => compareNames(a.node, b.node));
}

function checkCount(check: ReturnType<typeof stateCheck>, value: unknown, field: string): number {
  const n = check.numberOrNull(value, field);
  if (n === null || !Number.isInteger(n) || n < 0)
    throw new PolicyError(
      'invalid-state',
      `stage 'contention': state field '${field}' must be an integer >= 0, got ${String(value)}`,
    );
  return n;
}

function checkSpells(check: ReturnType<typeof stateCheck>, value: unknown, field: string): NodeSpells[] {
  if (value === undefined) return [];
  return check.array(value, field).map((v, i) => {
    const o = check.object(v, `${field}.${i}`);
    const durations = check.array(o.durations, `${field}.${i}.durations`).map((d, j) => {
      const n = check.numberOrNull(d, `${field}.${i}.durations.${j}`);
      if (n === null || n < 0)
        throw new PolicyError(
          'invalid-state',
          `stage 'contention': state field '${field}.${i}.durations.${j}' must be a number >= 0, got ${String(d)}`,
        );
      return n;
    });
    return {
      node: check.string(o.node, `${field}.${i}.node`),
      since: check.numberOrNull(o.since, `${field}.${i}.since`),
      durations: durations.slice(-HORIZON_SPELLS_KEPT),
    };
  });
}

/** Options of {@link contentionGate}. */
export interface ContentionGateOptions {
  /** The model's horizon and migration costs (default `CONTENTION_DEFAULTS` of `@poise/contention`). */
  readonly model?: Partial<ContentionOptions>;
  /** How sparingly it moves (default `CONTENTION_PACE`). */
  readonly pace?: Partial<ContentionPace>;
  /**
   * Cost–benefit (`ha-auto-rebalance-contention-cost-benefit`): each source's horizon is learned
   * from its own hot spells (`spellHorizon`, the model's `horizonSeconds` until it has shown
   * a few), and with a migration model the link rate from `ctx.migrationTasks()`.
   */
  readonly costBenefit?: boolean;
}

/** Every node's pressure now: what it reports, else the model's prediction at its load (usage-based for a node without PSI). */
function pressuresNow(model: FittedModel, nodes: readonly NodeTelemetry[]): NodePressureNow[] {
  const now = (node: string, dimension: 'cpu' | 'mem', reported: number | undefined, load: number) =>
    reported !== undefined
      ? { percent: reported, confidence: 1, basis: 'learned' as const, reason: 'in-range' as const }
      : model.predict(node, dimension, load);
  return [...nodes]
    .sort((a, b) => compareNames(a.node, b.node))
    .map((n) => ({
      node: n.node,
      cpu: now(n.node, 'cpu', n.pressureCpu, n.cpu / n.maxcpu),
      mem: now(n.node, 'mem', n.pressureMem, n.mem / n.maxmem),
    }));
}

/** `node1 cpu 62.0%` / `node2 cpu 45.0% mem 21.0%`: the dimensions at or above the limits. */
function describe(p: NodePressureNow, limits: { readonly cpuPercent: number; readonly memPercent: number }): string {
  const parts = [];
  if (p.cpu.percent >= limits.cpuPercent) parts.push(`cpu ${formatPercent(p.cpu.percent)}`);
  if (p.mem.percent >= limits.memPercent) parts.push(`mem ${formatPercent(p.mem.percent)}`);
  return `${p.node} ${parts.join(' ')}`;
}

/**
 * The gate's model options and pace with their defaults, checked (by the gate, and by
 * `createContentionPlugin` when the plug-in is made). Throws `PolicyError` `invalid-config` naming the field, e.g. `contention
 * pace factor must be a finite number >= 1, got '0.5'`.
 */
export function checkedGateOptions(options: Pick<ContentionGateOptions, 'model' | 'pace'>): {
  model: ContentionOptions;
  pace: ContentionPace;
} {
  let model: ContentionOptions;
  try {
    model = contentionOptions(options.model);
  } catch (err) {
    if (err instanceof ContentionError) throw new PolicyError('invalid-config', err.message, { cause: err });
    throw err;
  }
  return { model, pace: contentionPace(options.pace) };
}

/**
 * Guest contention as the balancer's objective (name `contention`, the objective's gate: the
 * pipeline runs it first, so it learns in every round another gate stops). Every round it runs
 * (all but those with a motion in flight) it learns from `ctx.nodes()` how each node's PSI
 * follows its load
 * (`observeNodes` of `@poise/contention`; the model is this stage's state), then judges the
 * round on the nodes' pressure now (reported, else predicted from the load):
 *
 * - no node with contention (cpu some below `CONTENTION_FLOOR` 5 %, memory below 2 %) → stop
 *   `no-contention`, e.g. `contention: no guest waits (highest cpu 2.1% < 5.0%, mem 0.0% < 2.0%)`;
 * - every node saturated (cpu ≥ `SATURATED` 40 % or memory ≥ 20 %) → stop `all-saturated`, e.g.
 *   `contention: every node saturated (node1 cpu 62.0%, node2 mem 25.0%): the cluster needs more capacity`;
 * - otherwise the round goes on with `plan.objective` set to the round's contention objective
 *   (`contention-hold` then counts the hold rounds).
 *
 * A cluster none of whose nodes ever reported PSI (some avg10, cpu or memory) shows no
 * contention to balance: the round goes on without `plan.objective`, and the pipeline judges it
 * by the imbalance (the reference objective: `threshold-hold`, `score-<method>`,
 * `relative-margin` in place of `contention-hold`, `contention-score`, `contention-margin`); a `contention-no-psi` warning says so once, a
 * `contention-psi` info notice when a node reports PSI again.
 *
 * Both stops break the streak of the later stages. A node whose pressure comes from its load
 * alone (no PSI, or too little history) raises a `contention-usage-based` info notice, once per
 * change of that set. Needs `ctx.nodes()` (and, once a move is assessed, `ctx.guests()`).
 */
export function contentionGate(options: ContentionGateOptions = {}): Stage<ContentionGateState> {
  const { model, pace } = checkedGateOptions(options);
  const check = stateCheck('contention');
  return {
    name: 'contention',
    kind: 'gate',
    initialState: () => ({
      model: emptyModel(),
      fallback: [],
      motions: [],
      lastOutcomeAt: null,
      calmAt: null,
      noPsi: false,
      samples: [],
      unexplained: [],
      spells: [],
      noTasks: false,
      badTasks: 0,
    }),
    validateState: (value) => {
      const s = check.object(value, '');
      let learned: ContentionModelState;
      try {
        learned = checkModelState(s.model);
      } catch (err) {
        if (err instanceof ContentionError)
          throw new PolicyError('invalid-state', `stage 'contention': ${err.message}`, { cause: err });
        throw err;
      }
      return {
        model: learned,
        fallback: check.array(s.fallback, 'fallback').map((v, i) => check.string(v, `fallback.${i}`)),
        // a state saved before the pace existed has neither field
        motions: s.motions === undefined ? [] : checkMotions(check, s.motions, 'motions'),
        lastOutcomeAt: s.lastOutcomeAt === undefined ? null : check.numberOrNull(s.lastOutcomeAt, 'lastOutcomeAt'),
        calmAt: s.calmAt === undefined ? null : check.numberOrNull(s.calmAt, 'calmAt'),
        // a state saved before the imbalance hand-over has no field
        noPsi: s.noPsi === undefined ? false : check.boolean(s.noPsi, 'noPsi'),
        samples: checkSamples(check, s.samples, 'samples'),
        unexplained: checkRises(check, 'contention', s.unexplained, 'unexplained'),
        // a state saved before cost–benefit has neither field
        spells: checkSpells(check, s.spells, 'spells'),
        noTasks: s.noTasks === undefined ? false : check.boolean(s.noTasks, 'noTasks'),
        badTasks: s.badTasks === undefined ? 0 : checkCount(check, s.badTasks, 'badTasks'),
      };
    },
    observe: (facts, state) => {
      const next = recordMotions(state.motions, state.lastOutcomeAt, facts.outcomes, facts.now, pace, state.calmAt);
      if (next.lastOutcomeAt === state.lastOutcomeAt && next.motions.length === state.motions.length) return { state };
      return { state: { ...state, ...next } };
    },
    run: (ctx, plan, state) => {
      if (!ctx.nodes) throw missingContext('contention', 'nodes()');
      const nodes = ctx.nodes();
      const learned = modelCall('contention model', () =>
        observeNodes(
          state.model,
          ctx.now,
          nodes.map((n) => ({
            node: n.node,
            cpuLoad: n.cpu / n.maxcpu,
            memLoad: n.mem / n.maxmem,
            pressureCpu: n.pressureCpu,
            pressureMem: n.pressureMem,
          })),
        ),
      );
      // a cluster none of whose nodes ever reported PSI shows no contention to balance: the
      // round is the imbalance's (the reference objective), which the pipeline judges by its stages
      const reported = new Set(
        learned.nodes.filter((n) => n.cpu.reportedAt !== null || n.mem.reportedAt !== null).map((n) => n.node),
      );
      if (!nodes.some((n) => reported.has(n.node))) {
        const notices: NoticeInit[] = state.noPsi
          ? []
          : [
              {
                code: 'contention-no-psi',
                severity: 'warning',
                message:
                  'no node reports pressure (PSI): balancing the load imbalance (the reference objective) until one does',
              },
            ];
        // no contention to see: calm, as far as the pace's hot spell goes
        return { plan, state: { ...state, model: learned, fallback: [], noPsi: true, calmAt: ctx.now }, notices };
      }
      const fitted = fitModel(learned);
      const pressures = modelCall('contention model', () => pressuresNow(fitted, nodes));

      const fallback = pressures
        .map((p) => ({ node: p.node, dims: (['cpu', 'mem'] as const).filter((d) => p[d].basis === 'usage') }))
        .filter((f) => f.dims.length > 0)
        .map((f) => `${f.node} (${f.dims.join(', ')})`);
      const notices: NoticeInit[] = [];
      if (fallback.join('\u0000') !== state.fallback.join('\u0000') && fallback.length > 0) {
        notices.push({
          code: 'contention-usage-based',
          severity: 'info',
          message: `no pressure history for ${formatList(fallback)}: predicted from the load alone`,
        });
      }
      if (state.noPsi) {
        notices.push({
          code: 'contention-psi',
          severity: 'info',
          message: 'nodes report pressure (PSI): balancing guest contention',
        });
      }
      // pressure that rose while the load did not is not the guests' doing: such a node is no
      // source, and where it is the only contention the round is the imbalance's
      const samples = recordSamples(state.samples, nodes, ctx.now);
      const rises = detectRises(
        samples,
        ctx.now,
        (node, dimension, from, to) =>
          Math.max(0, fitted.predict(node, dimension, to).percent - fitted.predict(node, dimension, from).percent),
        CONTENTION_FLOOR.cpuPercent,
      );
      const hot = new Set(pressures.filter((p) => reaches(p, CONTENTION_FLOOR)).map((p) => p.node));
      const unexplained = lastingRises(state.unexplained, rises, (node) => hot.has(node));
      const unexplainedNodes = new Set(unexplained.map((r) => r.node));
      const spells = options.costBenefit
        ? recordSpells(
            state.spells,
            pressures.map((p) => p.node),
            hot,
            ctx.now,
          )
        : state.spells;
      let next: ContentionGateState = {
        ...state,
        model: learned,
        fallback,
        noPsi: false,
        samples,
        unexplained,
        spells,
      };

      const contended = pressures.filter((p) => reaches(p, CONTENTION_FLOOR) && !unexplainedNodes.has(p.node));
      for (const r of rises) {
        // said once, when a node's rise is first seen (it is seen again while the rise is within the look-back)
        if (state.unexplained.some((o) => o.node === r.node && o.dimension === r.dimension)) continue;
        notices.push({
          code: 'contention-unexplained',
          severity: 'warning',
          message: `${r.node}'s ${r.why}: not its guests' doing; no move off it for the contention while it lasts`,
        });
      }
      if (contended.length === 0 && unexplained.length > 0) {
        // nothing the guests' load explains: the round is the imbalance's, as without PSI, and
        // no hot spell of the objective's goes on
        return { plan, state: { ...next, calmAt: ctx.now }, notices };
      }
      if (contended.length === 0) {
        const highest = (d: 'cpu' | 'mem') => Math.max(0, ...pressures.map((p) => p[d].percent));
        const stop =
          `contention: no guest waits (highest cpu ${formatPercent(highest('cpu'))} < ${formatPercent(CONTENTION_FLOOR.cpuPercent)}, ` +
          `mem ${formatPercent(highest('mem'))} < ${formatPercent(CONTENTION_FLOOR.memPercent)})`;
        // the hot spell is over: the next one starts with the pace's full budget
        return { stop, code: 'no-contention', breaksStreak: true, state: { ...next, calmAt: ctx.now }, notices };
      }
      if (pressures.length > 0 && pressures.every((p) => reaches(p, SATURATED))) {
        const stop = `contention: every node saturated (${formatList(pressures.map((p) => describe(p, SATURATED)))}): the cluster needs more capacity`;
        return { stop, code: 'all-saturated', breaksStreak: true, state: next, notices };
      }
      const guests = () => {
        if (!ctx.guests) throw missingContext('contention', 'guests()');
        return ctx.guests();
      };
      let round = model;
      let horizons: ReadonlyMap<string, number> | undefined;
      if (options.costBenefit) {
        horizons = new Map(spells.map((s) => [s.node, spellHorizon(s.durations, model.horizonSeconds)]));
        if (model.migration !== null) {
          // the link rate the cluster's finished migrations show; without them, the model's own
          const reported = ctx.migrationTasks?.();
          // a task without a positive duration or with a bad volume teaches nothing: left out, said
          const tasks = reported?.filter(
            (t) =>
              typeof t === 'object' &&
              t !== null &&
              Number.isFinite(t.durationSeconds) &&
              t.durationSeconds > 0 &&
              Number.isFinite(t.transferredBytes) &&
              t.transferredBytes >= 0,
          );
          const bad = reported && tasks ? reported.length - tasks.length : 0;
          if (bad !== state.badTasks) {
            if (bad > 0)
              notices.push({
                code: 'contention-bad-migration-tasks',
                severity: 'warning',
                message: `${bad} finished migration${bad === 1 ? '' : 's'} reported without a positive duration or a byte count: left out of the link rate`,
              });
            next = { ...next, badTasks: bad };
          }
          const learnedRate = tasks
            ? modelCall('migration tasks', () => learnMigrationSettings(model.migration!, tasks))
            : undefined;
          if (learnedRate && learnedRate.learnedFrom > 0) {
            round = { ...model, migration: learnedRate.settings };
            next = { ...next, noTasks: false };
          } else {
            if (!state.noTasks)
              notices.push({
                code: 'contention-no-migration-tasks',
                severity: 'info',
                message: tasks
                  ? `fewer than 3 finished migrations known (${tasks.length}): migrations priced at the default link rate`
                  : 'the host reports no finished migrations: migrations priced at the default link rate',
              });
            next = { ...next, noTasks: true };
          }
        }
      }
      const objective = roundObjective(fitted, nodes, guests, round, pressures, {
        pace,
        motions: state.motions,
        calmAt: state.calmAt,
        unexplained: [...unexplainedNodes],
        ...(horizons ? { horizons } : {}),
      });
      return { plan: { ...plan, objective }, state: next, notices };
    },
  };
}
