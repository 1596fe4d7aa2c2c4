// Fixture builders for this package's tests (not exported from the package).
import { mulberry32 } from '@poise/test-support/prng';
import {
  type BalanceCandidate,
  type BalanceContext,
  type MotionOutcome,
  type Plan,
  type ScoredMigration,
  type Stage,
  type StageOutcome,
} from '@poise/policy';
import { ReplayCluster } from '@poise/policy/testing';

export const GIB = 1024 ** 3;

/** A context whose values are fixed; `score` returns `scored` cut to the limit. */
export function fixedContext(
  over: Partial<BalanceContext> & { scored?: ScoredMigration[]; imbalanceValue?: number } = {},
): BalanceContext {
  const { scored = [], imbalanceValue = 0.5, ...rest } = over;
  return {
    now: 100,
    motionInFlight: false,
    imbalance: () => imbalanceValue,
    candidates: () => [],
    score: (_c, _m, limit) => scored.slice(0, limit),
    ...rest,
  };
}

export const candidate = (
  leader: string,
  targets: string[],
  extra: Partial<BalanceCandidate> = {},
): BalanceCandidate => ({
  leader,
  resources: [leader],
  targets,
  source: 'node1',
  ...extra,
});

export const failed = (resources: string[], target: string, at: number): MotionOutcome => ({
  resources,
  source: 'node1',
  target,
  ok: false,
  at,
});
export const succeeded = (resources: string[], target: string, at: number): MotionOutcome => ({
  resources,
  source: 'node1',
  target,
  ok: true,
  at,
});

/** Observes `outcomes` at `now`, then runs the stage on `plan`. */
export function observeAndRun<S>(
  stage: Stage<S>,
  state: S,
  now: number,
  outcomes: MotionOutcome[],
  plan: Plan,
  ctx?: BalanceContext,
) {
  const seen = stage.observe ? stage.observe({ now, outcomes }, state) : { state };
  const out: StageOutcome<S> = stage.run(ctx ?? fixedContext({ now }), plan, seen.state);
  return { observed: seen, out };
}

/** The candidates a stage passed on as `leader→target` strings, or its stop reason. */
export function passed<S>(out: StageOutcome<S>): string[] | string {
  if ('stop' in out) return out.stop;
  return (out.plan.candidates ?? []).flatMap((c) => c.targets.map((t) => `${c.leader}→${t}`));
}

/**
 * Seed 004's case: three 24-core, 32 GiB nodes; four guests of 1 core and 4 GiB on node1, the
 * first of them failing its first `failures` motions (fa:102 fails 2, fa:109 fails 9). All on
 * one node is 100 % imbalance; one guest moved is 66.1 %, whichever guest and target.
 */
export function seed004(sid: string, failures: number) {
  return new ReplayCluster({
    nodes: ['node1', 'node2', 'node3'].map((name) => ({ name, maxcpu: 24, maxmem: 32 * GIB })),
    guests: [sid, 'vm:102', 'vm:103', 'vm:104'].map((s) => ({
      sid: s,
      node: 'node1',
      cpu: 1,
      mem: 4 * GIB,
      failures: s === sid ? failures : 0,
    })),
    start: 40,
  });
}

/**
 * Seed symptom 2: two 16-core, 64 GiB nodes, each with 0.5 cores and 2 GiB of its own load;
 * one dominant guest (1.2 cores, 2.4 GiB). Every round the nodes' own cpu is resampled by
 * ±0.16 cores, ±0.5 pp of node load. The guest's load v is 5.6 pp, the total S 11.9 pp: the
 * imbalance is (v ± d) / S ≈ 47 % on either node, and moving the guest is a relative
 * improvement of 2d / (v + d), above the 10 % margin as soon as d ≥ v / 19 ≈ 0.3 pp.
 */
export function dominantGuest(seed: number) {
  const random = mulberry32(seed);
  const cluster = new ReplayCluster({
    nodes: ['node1', 'node2'].map((name) => ({ name, maxcpu: 16, maxmem: 64 * GIB, cpu: 0.5, mem: 2 * GIB })),
    guests: [{ sid: 'vm:100', node: 'node1', cpu: 1.2, mem: 2.4 * GIB }],
  });
  const noise = (c: ReplayCluster) => {
    for (const node of ['node1', 'node2']) c.setNode(node, { cpu: 0.5 + (random() * 2 - 1) * 0.16 });
  };
  return { cluster, noise };
}
