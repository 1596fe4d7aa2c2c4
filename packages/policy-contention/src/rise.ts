import {
  type NodeTelemetry,
  PolicyError,
  type StateCheck,
  compareNames,
  formatPercent,
  showValue,
} from '@poise/policy';

/**
 * Pressure that rose while the load did not. PSI says that a node's work waits, not why; when
 * it jumps on a node whose load stayed where it was (a host process, a storage stall, a noisy
 * tenant of the hardware), no guest's move explains it or relieves it, and the model, which
 * learns pressure against load, would read the coincidence as a curve. Such a node is not a
 * source of the contention objective while its pressure lasts.
 */

/** A node's loads (fractions) and reported pressures (percent, `null` when not reported) in one round. */
export interface PressureSample {
  readonly node: string;
  /** Seconds. */
  readonly at: number;
  readonly cpuLoad: number;
  readonly memLoad: number;
  readonly cpu: number | null;
  readonly mem: number | null;
}

/** A node whose pressure rose while its load did not, until its pressure falls below the contention floor. */
export interface UnexplainedRise {
  readonly node: string;
  readonly dimension: 'cpu' | 'mem';
  /** Seconds: when the rise was seen. */
  readonly at: number;
  /** `cpu pressure rose 2.0% → 25.0% in 60 s while its load stayed within 40.1%–40.5%`. */
  readonly why: string;
}

/**
 * The rule's figures: a rise is measured over `lookbackSeconds` (six time constants of avg10,
 * as the pace's settle time: a load step shows fully in the pressure within it), the load must
 * have stayed within `steadyLoad` (a fraction of capacity) over `loadWindowSeconds` (the rise's
 * span and as long again before it, for the delay of avg10 and of the host's report), and the
 * pressure must rise by `risePoints` more than the node's learned curve predicts for the load
 * change: a noise of a few points, or a steep knee the model knows, is no rise.
 */
const RISE = { lookbackSeconds: 60, loadWindowSeconds: 120, steadyLoad: 0.02, risePoints: 10 } as const;

/** How long samples are kept, seconds. */
const KEEP_SECONDS = RISE.loadWindowSeconds + RISE.lookbackSeconds;

/** The samples of the last `KEEP_SECONDS` with this round's appended (nodes not in the round dropped). */
export function recordSamples(
  samples: readonly PressureSample[],
  nodes: readonly NodeTelemetry[],
  now: number,
): PressureSample[] {
  const present = new Set(nodes.map((n) => n.node));
  const kept = samples.filter((s) => present.has(s.node) && s.at < now && s.at >= now - KEEP_SECONDS);
  for (const n of nodes) {
    kept.push({
      node: n.node,
      at: now,
      cpuLoad: n.cpu / n.maxcpu,
      memLoad: n.mem / n.maxmem,
      cpu: n.pressureCpu ?? null,
      mem: n.pressureMem ?? null,
    });
  }
  return kept;
}

/**
 * The rises of this round (`now`, the last samples of each node): per node, the reported cpu
 * pressure now against the latest sample at least `lookbackSeconds` old, when that one was
 * calm (below `calmBelow`, percent: the contention floor); a rise of at least `risePoints` over
 * what `predictedRise(node, dimension, loadThen, loadNow)` says, with the load within
 * `steadyLoad` over `loadWindowSeconds`, is unexplained. Memory pressure is not judged: it
 * rises late and steeply near the limit (the review's "much more serious"), on a load that
 * grows by less than the steadiness allows.
 */
export function detectRises(
  samples: readonly PressureSample[],
  now: number,
  predictedRise: (node: string, dimension: 'cpu' | 'mem', from: number, to: number) => number,
  calmBelow: number,
): UnexplainedRise[] {
  const rises: UnexplainedRise[] = [];
  const byNode = new Map<string, PressureSample[]>();
  for (const s of samples) {
    const list = byNode.get(s.node);
    if (list) list.push(s);
    else byNode.set(s.node, [s]);
  }
  for (const [node, list] of byNode) {
    const current = list.find((s) => s.at === now);
    if (!current) continue;
    for (const dimension of ['cpu'] as const) {
      const value = current[dimension];
      const load = (s: PressureSample) => (dimension === 'cpu' ? s.cpuLoad : s.memLoad);
      if (value === null) continue;
      let then: PressureSample | undefined;
      for (const s of list) {
        if (s.at <= now - RISE.lookbackSeconds && s[dimension] !== null && (!then || s.at > then.at)) then = s;
      }
      // a node already waiting that waits more is a question of degree the model answers; a calm
      // node that starts waiting with no more load is what no guest's move explains
      if (!then || then[dimension]! >= calmBelow) continue;
      const rise = value - then[dimension]!;
      if (rise < RISE.risePoints) continue;
      const window = list.filter((s) => s.at >= now - RISE.loadWindowSeconds).map(load);
      const low = Math.min(...window);
      const high = Math.max(...window);
      if (high - low > RISE.steadyLoad) continue;
      if (rise - Math.max(0, predictedRise(node, dimension, load(then), load(current))) < RISE.risePoints) continue;
      rises.push({
        node,
        dimension,
        at: now,
        why:
          `${dimension} pressure rose ${formatPercent(then[dimension]!)} → ${formatPercent(value)} in ${now - then.at} s ` +
          `while its load stayed within ${formatPercent(low * 100)}–${formatPercent(high * 100)}`,
      });
    }
  }
  return rises;
}

/**
 * The unexplained rises that last: the earlier ones whose node still reaches the contention
 * floor (`stillHot`), with this round's replacing those of the same node and dimension.
 */
export function lastingRises(
  previous: readonly UnexplainedRise[],
  fresh: readonly UnexplainedRise[],
  stillHot: (node: string) => boolean,
): UnexplainedRise[] {
  const key = (r: UnexplainedRise) => `${r.node}\u0000${r.dimension}`;
  const replaced = new Set(fresh.map(key));
  return [...previous.filter((r) => !replaced.has(key(r)) && stillHot(r.node)), ...fresh].sort(
    (a, b) =>
      // node, then dimension; never 0 (as this order always was)
      compareNames(a.node, b.node) || compareNames(a.dimension, b.dimension) || 1,
  );
}

/** A restored list of samples, checked field by field (absent: none, a state saved before the rule). */
export function checkSamples(check: StateCheck, value: unknown, path: string): PressureSample[] {
  if (value === undefined) return [];
  return check.array(value, path).map((v, i) => {
    const o = check.object(v, `${path}.${i}`);
    const pressure = (x: unknown, field: string) =>
      x === null ? null : check.number(x, `${path}.${i}.${field}`, { min: 0, max: 100 });
    return {
      node: check.string(o.node, `${path}.${i}.node`),
      at: check.number(o.at, `${path}.${i}.at`),
      cpuLoad: check.number(o.cpuLoad, `${path}.${i}.cpuLoad`, { min: 0 }),
      memLoad: check.number(o.memLoad, `${path}.${i}.memLoad`, { min: 0 }),
      cpu: pressure(o.cpu, 'cpu'),
      mem: pressure(o.mem, 'mem'),
    };
  });
}

/** A restored list of unexplained rises, checked field by field (absent: none). */
export function checkRises(check: StateCheck, stage: string, value: unknown, path: string): UnexplainedRise[] {
  if (value === undefined) return [];
  return check.array(value, path).map((v, i) => {
    const o = check.object(v, `${path}.${i}`);
    const dimension = o.dimension;
    if (dimension !== 'cpu' && dimension !== 'mem') {
      throw new PolicyError(
        'invalid-state',
        `stage '${stage}': state field '${path}.${i}.dimension' must be 'cpu' or 'mem', got ${showValue(dimension)}`,
      );
    }
    return {
      node: check.string(o.node, `${path}.${i}.node`),
      dimension,
      at: check.number(o.at, `${path}.${i}.at`),
      why: check.string(o.why, `${path}.${i}.why`),
    };
  });
}
