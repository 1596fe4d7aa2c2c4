import {
  type AdjustedNodeUsage,
  PolicyError,
  type Stage,
  TELEMETRY_MAX,
  compareNames,
  missingContext,
  stateCheck,
} from '@poise/policy';

/** The smoothed residual of one node: cores and bytes not accounted for by the HA services. */
interface ResidualEntry {
  readonly node: string;
  /** Seconds: when the average was last updated. */
  readonly at: number;
  /** Time-decayed mean of `cpu − servicesCpu` (cores; may be negative). */
  readonly cpu: number;
  /** Time-decayed mean of `mem − servicesMem` (bytes; may be negative). */
  readonly mem: number;
  /** The sum of the samples' current weights (≥ 1: the newest sample weighs 1). */
  readonly weight: number;
}

/** State of {@link smoothingGate}: one entry per node seen last round, sorted by node. */
export interface SmoothingState {
  readonly nodes: readonly ResidualEntry[];
}

/**
 * The weight the previous average keeps after `dtSeconds` with half-life `halfLifeSeconds`:
 * `2^(−dt/halfLife)` (1 at dt 0, ½ after one half-life, → 0 for long gaps).
 */
export function decayWeight(dtSeconds: number, halfLifeSeconds: number): number {
  return 2 ** (-dtSeconds / halfLifeSeconds);
}

/**
 * Smooths the part of each node's load the HA services do not account for (name `smoothing`,
 * a gate before `threshold-hold`). Node load = the HA services' usage + a residual (other
 * guests, the host, measurement noise). Only the residual is averaged, with an exponentially
 * time-decayed mean of half-life `halfLifeSeconds`, kept across rounds in the stage's state;
 * the services' part is taken as measured, so a known structural change (a start, a stop, a
 * move) takes effect at once. The round then judges the adjusted stats
 * (`services + mean residual`, cpu ≥ 0, mem rounded to bytes ≥ 0) through
 * `ctx.adjust(...)`: the threshold, the scorer and the accept stages read that view.
 *
 * The mean: every round's residual sample weighs 1 when taken and its weight halves every
 * `halfLifeSeconds` (by the time elapsed, `d = 2^(−dt/halfLife)`, so irregular rounds and
 * rounds skipped while a motion is in flight decay correctly):
 * `weight' = d·weight + 1`, `mean' = (d·weight·mean + residual) / weight'`. Unlike a plain
 * EMA seeded with the first sample, the first rounds are the plain mean of the samples so far,
 * so one noisy first sample does not linger for a half-life. With 20 s rounds and a 300 s
 * half-life the steady weight is 1/(1 − d) ≈ 22.1 and a sample's noise is divided by ≈ 6.6
 * (variance × (1 − d)/(1 + d)). First round, a node that joined, or a clock that went
 * backwards: the mean starts at the current residual. A second sample at the same time is
 * ignored. A node that left is dropped. Never stops a round. Needs `ctx.nodes()` and
 * `ctx.adjust()` (`PolicyError` `invalid-context` without them).
 */
export function smoothingGate(options: { halfLifeSeconds: number }): Stage<SmoothingState> {
  const halfLife = options.halfLifeSeconds;
  if (!Number.isFinite(halfLife) || halfLife <= 0) {
    throw new PolicyError('invalid-config', `smoothing halfLifeSeconds must be a finite number > 0, got '${halfLife}'`);
  }
  const check = stateCheck('smoothing');
  const bound = { min: -TELEMETRY_MAX, max: TELEMETRY_MAX };
  return {
    name: 'smoothing',
    kind: 'gate',
    initialState: () => ({ nodes: [] }),
    validateState: (value) => {
      const s = check.object(value, '');
      const seen = new Set<string>();
      return {
        nodes: check.array(s.nodes, 'nodes').map((v, i) => {
          const e = check.object(v, `nodes.${i}`);
          const node = check.string(e.node, `nodes.${i}.node`);
          if (seen.has(node))
            throw new PolicyError(
              'invalid-state',
              `stage 'smoothing': state field 'nodes.${i}.node' lists '${node}' twice`,
            );
          seen.add(node);
          return {
            node,
            at: check.number(e.at, `nodes.${i}.at`),
            cpu: check.number(e.cpu, `nodes.${i}.cpu`, bound),
            mem: check.number(e.mem, `nodes.${i}.mem`, bound),
            weight: check.number(e.weight, `nodes.${i}.weight`, { min: 1 }),
          };
        }),
      };
    },
    run: (ctx, plan, state) => {
      if (!ctx.nodes) throw missingContext('smoothing', 'nodes()');
      if (!ctx.adjust) throw missingContext('smoothing', 'adjust()');
      const previous = new Map(state.nodes.map((e) => [e.node, e]));
      const entries: ResidualEntry[] = [];
      const adjusted: AdjustedNodeUsage[] = [];
      for (const t of ctx.nodes()) {
        const cpu = t.cpu - t.servicesCpu;
        const mem = t.mem - t.servicesMem;
        const prev = previous.get(t.node);
        let entry: ResidualEntry;
        if (!prev || ctx.now < prev.at) {
          entry = { node: t.node, at: ctx.now, cpu, mem, weight: 1 };
        } else if (ctx.now === prev.at) {
          entry = prev;
        } else {
          const old = decayWeight(ctx.now - prev.at, halfLife) * prev.weight;
          const weight = old + 1;
          entry = {
            node: t.node,
            at: ctx.now,
            cpu: (old * prev.cpu + cpu) / weight,
            mem: (old * prev.mem + mem) / weight,
            weight,
          };
        }
        entries.push(entry);
        adjusted.push({
          node: t.node,
          cpu: Math.max(0, t.servicesCpu + entry.cpu),
          mem: Math.max(0, Math.round(t.servicesMem + entry.mem)),
        });
      }
      entries.sort((a, b) => compareNames(a.node, b.node));
      return { plan: { ...plan, evaluator: ctx.adjust(adjusted) }, state: { nodes: entries } };
    },
  };
}
