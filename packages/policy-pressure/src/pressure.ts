import {
  type BalanceCandidate,
  type BalanceContext,
  type NodeTelemetry,
  type NoticeInit,
  PolicyError,
  type Stage,
  compareNames,
  formatList,
  formatPercent,
  invalidInput,
  missingContext,
  stateCheck,
} from '@poise/policy';

/** What to do while some node reports no pressure telemetry. */
export type PressureMissing = 'balance' | 'hold';

/** Options of the pressure stages: thresholds in percent (PSI some avg10), 0 = not judged. */
export interface PressureOptions {
  /** cpu some-pressure at which a node counts as under pressure, percent in 0..100 (0 = cpu not judged). */
  readonly cpuPercent: number;
  /** memory some-pressure at which a node counts as under pressure, percent in 0..100 (0 = memory not judged). */
  readonly memPercent: number;
  /** `balance` (default): fail open, judge the nodes that report; `hold`: move nothing while telemetry is missing. */
  readonly missing?: PressureMissing;
}

/** State of {@link pressureGate}: the nodes whose telemetry was missing last round, as reported. */
export interface PressureGateState {
  /** Labels like `node2 (cpu, mem)`, in node byte order. */
  readonly missing: readonly string[];
}

interface Judged {
  /** Nodes with memory pressure at or above its threshold. */
  readonly mem: string[];
  /** Nodes with cpu pressure at or above its threshold. */
  readonly cpu: string[];
  /** Nodes under pressure in any judged dimension, with what puts them there (`cpu 12.0%`). */
  readonly pressured: Map<string, string[]>;
  /** Labels of nodes missing a judged value: `node2 (cpu)`. */
  readonly missing: string[];
  readonly count: number;
  /** Per judged dimension, the highest known value and the threshold (for the reasons). */
  readonly extremes: { readonly dim: 'cpu' | 'mem'; readonly max: number | undefined; readonly threshold: number }[];
}

function checkOptions(options: PressureOptions): Required<PressureOptions> {
  for (const key of ['cpuPercent', 'memPercent'] as const) {
    const v = options[key];
    if (!Number.isFinite(v) || v < 0 || v > 100)
      throw new PolicyError('invalid-config', `pressure ${key} must be a percentage in 0..100, got '${v}'`);
  }
  if (options.cpuPercent === 0 && options.memPercent === 0) {
    throw new PolicyError('invalid-config', 'pressure stages need cpuPercent or memPercent above 0');
  }
  const missing = options.missing ?? 'balance';
  if (missing !== 'balance' && missing !== 'hold')
    throw new PolicyError('invalid-config', `pressure missing must be 'balance' or 'hold', got '${String(missing)}'`);
  return { cpuPercent: options.cpuPercent, memPercent: options.memPercent, missing };
}

function telemetry(ctx: BalanceContext, stage: string): readonly NodeTelemetry[] {
  if (!ctx.nodes) throw missingContext(stage, 'nodes()');
  return ctx.nodes();
}

/** Judges every node against the thresholds; a threshold of 0 leaves that dimension out. */
function judge(nodes: readonly NodeTelemetry[], options: Required<PressureOptions>): Judged {
  const dims = [
    { dim: 'cpu' as const, threshold: options.cpuPercent, value: (n: NodeTelemetry) => n.pressureCpu },
    { dim: 'mem' as const, threshold: options.memPercent, value: (n: NodeTelemetry) => n.pressureMem },
  ].filter((d) => d.threshold > 0);
  const sorted = [...nodes].sort((a, b) => compareNames(a.node, b.node));
  const result: Judged = { mem: [], cpu: [], pressured: new Map(), missing: [], count: sorted.length, extremes: [] };
  for (const d of dims) {
    let max: number | undefined;
    for (const n of sorted) {
      const v = d.value(n);
      if (v === undefined) continue;
      max = max === undefined ? v : Math.max(max, v);
      if (v >= d.threshold) {
        result[d.dim].push(n.node);
        result.pressured.set(n.node, [...(result.pressured.get(n.node) ?? []), `${d.dim} ${formatPercent(v)}`]);
      }
    }
    result.extremes.push({ dim: d.dim, max, threshold: d.threshold });
  }
  for (const n of sorted) {
    const absent = dims.filter((d) => d.value(n) === undefined).map((d) => d.dim);
    if (absent.length > 0) result.missing.push(`${n.node} (${absent.join(', ')})`);
  }
  return result;
}

/** `cpu 2.1% < 10.0%, mem 0.0% < 5.0%`: the highest value of each judged dimension and its threshold. */
function maxima(j: Judged): string {
  return j.extremes
    .map(
      (e) => `${e.dim} ${e.max === undefined ? 'unknown' : `${formatPercent(e.max)} < ${formatPercent(e.threshold)}`}`,
    )
    .join(', ');
}

/** `node1 cpu 12.0%, node2 mem 7.3%` (nodes in byte order, at most a few). */
function pressuredNodes(j: Judged): string {
  return formatList(
    [...j.pressured].sort((a, b) => compareNames(a[0], b[0])).map(([n, why]) => `${n} ${why.join(' ')}`),
  );
}

/**
 * Balance only while some node is under pressure (name `pressure`, a gate before
 * `threshold-hold`). A node is under pressure when its PSI some avg10 reaches `cpuPercent`
 * (cpu) or `memPercent` (memory) — each judged on its own threshold, and only the node's
 * pressure (a guest starving on its own vCPUs gains nothing from a move). Stops, each as a
 * round that does not qualify (the hold count starts again):
 *
 * - `no-pressure`: no node under pressure, e.g.
 *   `pressure gate: no node under pressure (highest cpu 3.1% < 10.0%, mem 0.0% < 5.0%)`;
 * - `all-under-pressure`: every node under pressure — a move cannot relieve anything; e.g.
 *   `pressure gate: every node under pressure (node1 cpu 12.0%, node2 mem 7.3%): the cluster needs more capacity`;
 * - `pressure-missing` (with `missing: 'hold'`): some node reports no value for a judged
 *   dimension, e.g. `pressure gate: no pressure telemetry for node2 (cpu)`.
 *
 * With `missing: 'balance'` (the default) a node without telemetry is judged by what it
 * reports; when no node is known to be under pressure but some telemetry is missing, the
 * round goes on as without the gate (fail open) and the sources are not restricted. A change
 * in the set of nodes without telemetry raises a `pressure-missing` warning notice (once per
 * change: `no pressure telemetry for node2 (cpu, mem): judging the nodes that report it`, or
 * `no pressure telemetry from any node: balancing as without the pressure gate`;
 * `pressure-telemetry-back` when it is complete again). Needs `ctx.nodes()`.
 */
export function pressureGate(options: PressureOptions): Stage<PressureGateState> {
  const opts = checkOptions(options);
  const check = stateCheck('pressure');
  return {
    name: 'pressure',
    kind: 'gate',
    initialState: () => ({ missing: [] }),
    validateState: (value) => ({
      missing: check.array(check.object(value, '').missing, 'missing').map((v, i) => check.string(v, `missing.${i}`)),
    }),
    run: (ctx, plan, state) => {
      const j = judge(telemetry(ctx, 'pressure'), opts);
      const changed = j.missing.join('\u0000') !== state.missing.join('\u0000');
      const next = changed ? { missing: j.missing } : state;
      const notices: NoticeInit[] = [];
      if (changed && opts.missing === 'balance') {
        // no judged value known anywhere: the gate has nothing to judge
        const none = j.extremes.every((e) => e.max === undefined);
        const message = none
          ? 'no pressure telemetry from any node: balancing as without the pressure gate'
          : `no pressure telemetry for ${formatList(j.missing)}: judging the nodes that report it`;
        notices.push(
          j.missing.length > 0
            ? { code: 'pressure-missing', severity: 'warning', message }
            : { code: 'pressure-telemetry-back', severity: 'info', message: 'pressure telemetry is complete again' },
        );
      }
      if (opts.missing === 'hold' && j.missing.length > 0) {
        const stop = `pressure gate: no pressure telemetry for ${formatList(j.missing)}`;
        return {
          stop,
          code: 'pressure-missing',
          key: `pressure:pressure-missing:${j.missing.join(', ')}`,
          breaksStreak: true,
          state: next,
          notices,
        };
      }
      if (j.count > 0 && j.pressured.size === j.count) {
        const stop = `pressure gate: every node under pressure (${pressuredNodes(j)}): the cluster needs more capacity`;
        return { stop, code: 'all-under-pressure', breaksStreak: true, state: next, notices };
      }
      if (j.pressured.size === 0 && j.missing.length === 0) {
        return {
          stop: `pressure gate: no node under pressure (highest ${maxima(j)})`,
          code: 'no-pressure',
          breaksStreak: true,
          state: next,
          notices,
        };
      }
      return { plan, state: next, notices };
    },
  };
}

/**
 * The node under pressure is the source of the move (name `pressure-source`, a filter):
 * keeps the candidates whose `source` is under memory pressure if there are any (memory
 * stalls are the more severe), else those under cpu pressure; and drops targets that are
 * under pressure themselves (moving load onto them relieves nothing). When no node is known
 * to be under pressure (the gate let the round through failing open) it changes nothing.
 * Stops with code `no-source-under-pressure` when nothing is left, e.g.
 * `no movable candidate on a node under pressure (node1)`. Needs `ctx.nodes()` and
 * `candidate.source` (a candidate without one stops the round with `invalid-input`).
 */
export function pressureSourceFilter(options: PressureOptions): Stage<null> {
  const opts = checkOptions(options);
  const check = stateCheck('pressure-source');
  return {
    name: 'pressure-source',
    kind: 'filter',
    initialState: () => null,
    validateState: (value) => check.none(value),
    run: (ctx, plan, state) => {
      const j = judge(telemetry(ctx, 'pressure-source'), opts);
      if (j.pressured.size === 0) return { plan, state };
      const candidates = plan.candidates ?? [];
      for (const c of candidates) {
        if (c.source === undefined)
          throw invalidInput(`candidate '${c.leader}' has no 'source' (stage 'pressure-source' needs it)`);
      }
      const onto = (c: BalanceCandidate): BalanceCandidate | undefined => {
        const targets = c.targets.filter((t) => !j.pressured.has(t));
        if (targets.length === 0) return undefined;
        return targets.length === c.targets.length ? c : { ...c, targets };
      };
      for (const sources of [j.mem, j.cpu]) {
        if (sources.length === 0) continue;
        const from = new Set(sources);
        const kept = candidates
          .filter((c) => from.has(c.source!))
          .map(onto)
          .filter((c): c is BalanceCandidate => c !== undefined);
        if (kept.length > 0) return { plan: { ...plan, candidates: kept }, state };
      }
      const nodes = [...j.pressured.keys()].sort(compareNames).join(', ');
      return {
        stop: `no movable candidate on a node under pressure (${nodes})`,
        code: 'no-source-under-pressure',
        key: `pressure-source:${nodes}`,
        state,
      };
    },
  };
}
