// Fixture builders for this package's tests (not exported from the package).
import { CONTENTION_DEFAULTS, type MoveAssessment, type PressurePrediction } from '@poise/contention';
import { type BalanceContext, type Pipeline, PolicyRegistry, type ReferenceBalancerConfig } from '@poise/policy';
import { ReplayCluster, type ReplayGuest, type ReplayNode } from '@poise/policy/testing';
import { CONTENTION_OBJECTIVE, type ContentionObjective, type NodePressureNow } from '../objective';
import { CONTENTION_PACE } from '../pace';
import { contentionPlugin } from '../settings';
import { mulberry32 } from '@poise/test-support/prng';

export const GIB = 1024 ** 3;

/**
 * The pipeline a host composes for a datacenter.cfg `crs` section (the simulator's JSON form):
 * the plug-ins (default this package's, default options) in a `PolicyRegistry`, which reads the
 * keys and composes the stages and the objective with the reference settings.
 */
export function pipelineFor(
  crs: Readonly<Record<string, unknown>>,
  reference: ReferenceBalancerConfig,
  plugins: readonly unknown[] = [contentionPlugin],
): Pipeline {
  const registry = new PolicyRegistry(plugins);
  return registry.pipeline(registry.read(crs), reference);
}

/** A node's true pressure curve in the replays: load (fraction) → PSI some avg10, percent. */
export type Curve = (load: number) => number;

/** Zero up to 60 % of the cores, then 2 points per percent of load (80 % at full load). */
export const KNEE: Curve = (x) => Math.min(100, Math.max(0, 200 * (x - 0.6)));

/**
 * Makes the replay's pressure follow the load, as a node's kernel would: before every round,
 * each node's cpu pressure is `curve(cpu load)` plus gaussian noise of `noise` points (memory
 * pressure stays 0). Nodes listed in `silent` report no PSI. Deterministic (seeded).
 */
export function loadDriven(
  curve: Curve,
  options: { noise?: number; seed?: number; silent?: readonly string[] } = {},
): (cluster: ReplayCluster) => void {
  const random = mulberry32(options.seed ?? 1);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const silent = new Set(options.silent ?? []);
  return (cluster) => {
    for (const n of cluster.telemetry()) {
      const value = Math.min(100, Math.max(0, curve(n.cpu / n.maxcpu) + (options.noise ?? 0) * gauss()));
      cluster.setNode(
        n.node,
        silent.has(n.node)
          ? { pressureCpu: undefined, pressureMem: undefined }
          : { pressureCpu: value, pressureMem: 0 },
      );
    }
  };
}

/** `count` guests of `cpu` cores (of `maxcpu`) and `memGib` GiB on `node`, sids from `first`. */
export function guests(node: string, first: number, count: number, cpu: number, memGib = 4, maxcpu = 4): ReplayGuest[] {
  return Array.from({ length: count }, (_, i) => ({ sid: `vm:${first + i}`, node, cpu, maxcpu, mem: memGib * GIB }));
}

/** Three 16-core, 64 GiB nodes with 1 core of their own, and the given guests. */
export function cluster(list: readonly ReplayGuest[], nodes: readonly Partial<ReplayNode>[] = []): ReplayCluster {
  return new ReplayCluster({
    nodes: ['node1', 'node2', 'node3'].map((name, i) => ({
      name,
      maxcpu: 16,
      maxmem: 64 * GIB,
      cpu: 1,
      mem: 2 * GIB,
      pressureCpu: 0,
      pressureMem: 0,
      ...nodes[i],
    })),
    guests: list,
  });
}

/** The events of a replay as short lines: `80 move vm:101 node1 → node2`, `20 stop no-contention: …`, `40 notice …`. */
export function lines(c: ReplayCluster): string[] {
  return c.events.map((e) => {
    if (e.type === 'move') return `${e.time} move ${e.resources.join('+')} ${e.source} → ${e.target}`;
    if (e.type === 'outcome') return `${e.time} ${e.ok ? 'ok' : 'failed'}`;
    if (e.type === 'stop') return `${e.time} stop ${e.code}: ${e.reason}`;
    return `${e.time} notice ${e.code}: ${e.message}`;
  });
}

const prediction = (percent: number, confidence = 1): PressurePrediction => ({
  percent,
  confidence,
  basis: 'learned',
  reason: 'in-range',
});

/** A node's pressure now as the gate hands it on (cpu, memory percent; reported). */
export function pressureNow(node: string, cpu: number, mem = 0): NodePressureNow {
  return { node, cpu: prediction(cpu), mem: prediction(mem) };
}

/**
 * A move's assessment with the given rates (guest-seconds per second) and source cpu pressures
 * (percent, with `confidence`); the other figures follow from them over 590 counted seconds.
 */
export function stubAssessment(o: {
  rateBefore: number;
  rateAfter: number;
  movingRate: number;
  cpuBefore?: number;
  cpuAfter?: number;
  confidence?: number;
}): MoveAssessment {
  const confidence = o.confidence ?? 1;
  const same = (p: number) => ({ before: prediction(p, confidence), after: prediction(p, confidence) });
  const saved = (o.rateBefore - o.rateAfter) * 590;
  return {
    source: {
      node: 'node1',
      cpu: { before: prediction(o.cpuBefore ?? 50, confidence), after: prediction(o.cpuAfter ?? 50, confidence) },
      mem: same(0),
    },
    target: { node: 'node2', cpu: same(0), mem: same(0) },
    rateBefore: o.rateBefore,
    rateAfter: o.rateAfter,
    relative: (o.rateBefore - o.rateAfter) / o.rateBefore,
    movingRate: o.movingRate,
    movedCpu: 1,
    migrationSeconds: 10,
    savedSeconds: saved,
    escapeSeconds: 0,
    escapeConfidence: confidence,
    costSeconds: 1,
    transferSeconds: 0,
    migration: null,
    horizonSeconds: 600,
    confidence,
    netSeconds: saved * confidence - 1,
    basis: 'learned',
  };
}

/** A round's contention objective whose every move is `assessment` (the pace's defaults unless given). */
export function stubObjective(
  assessment: MoveAssessment,
  over: Partial<Omit<ContentionObjective, 'name' | 'assess'>> = {},
): ContentionObjective {
  return {
    name: CONTENTION_OBJECTIVE,
    options: CONTENTION_DEFAULTS,
    pressures: [],
    pace: CONTENTION_PACE,
    motions: [],
    calmAt: null,
    unexplained: [],
    gain: () => assessment.netSeconds,
    formatGain: String,
    ...over,
    assess: () => assessment,
  };
}

/** The plan of a round that selected `vm:101` from node1 to node2 under `objective`. */
export function selectedPlan(objective: ContentionObjective) {
  return {
    objective,
    candidates: [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2'], source: 'node1' }],
    selected: { sid: 'vm:101', source: 'node1', target: 'node2', imbalance: 0 },
  };
}

/** A round's context at `now` with nothing to move (imbalance 0.5), `over` replacing its parts. */
export function balanceContext(now: number, over: Partial<BalanceContext> = {}): BalanceContext {
  return { now, motionInFlight: false, imbalance: () => 0.5, candidates: () => [], score: () => [], ...over };
}
