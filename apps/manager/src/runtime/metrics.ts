import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { MOTION_VIAS, PORT_ERROR_KINDS } from '../cluster/port';
import { ROUND_OUTCOMES } from './journal';

/** Round duration buckets, seconds (a round is a few API calls: tens of ms to a few s). */
const ROUND_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The `via` of a drain's motions: `poise-manager drain` runs as a process of its own, and the
 * daemon books the motions its progress record shows (`drain-progress.json`) under this value.
 */
export const DRAIN_VIA = 'drain';

/** Every `via` of the motion counters: the daemon's own ({@link MOTION_VIAS}) and a drain's. */
export const MOTION_VIA_LABELS = [...MOTION_VIAS, DRAIN_VIA] as const;

/**
 * The label values the labelled counters take that depend on what the daemon runs: they start
 * at 0 (so `increase()` sees the first event), the fixed ones (outcomes, `via`, error kinds)
 * with them.
 */
export interface CounterLabels {
  /** `poise_round_skips_total{reason}`: the reasons known before a round (`knownSkipReasons`). */
  readonly skipReasons: readonly string[];
  /** `poise_api_errors_total{endpoint}`, each with every kind: the port's `errorEndpoints`. */
  readonly errorEndpoints: readonly string[];
}

/**
 * The daemon's Prometheus metrics, in a registry of its own (no global state). Label values are
 * bounded: node names, reasons and endpoint templates, never guest ids or free text. Every
 * labelled counter has a series at 0 for each value it is known to take before its first event
 * ({@link Metrics.countFromZero}); a value first seen later (a variant stage's stop code) has
 * its series from its first event.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly info = new Gauge({
    name: 'poise_info',
    help: 'Constant 1, labelled with the mode and environment in force.',
    labelNames: ['mode', 'env', 'version'] as const,
    registers: [this.registry],
  });
  readonly active = new Gauge({
    name: 'poise_active',
    help: '1 while this instance holds the active/standby lock (or runs without one), 0 on standby.',
    registers: [this.registry],
  });
  readonly clusterAutoRebalance = new Gauge({
    name: 'poise_cluster_auto_rebalance',
    help: "1 when the cluster's own ha-auto-rebalance is on (poise then leaves HA resources alone).",
    registers: [this.registry],
  });
  readonly imbalance = new Gauge({
    name: 'poise_imbalance_ratio',
    help: 'Node imbalance of the last round, normalised (0 balanced .. 1).',
    registers: [this.registry],
  });
  /**
   * `resource`: `cpu`, `memory` (the word Linux PSI, `/proc/pressure/memory`, and PVE's RRD,
   * `pressurememorysome`, use; the pressure gauge's too) and `total`.
   */
  readonly nodeLoad = new Gauge({
    name: 'poise_node_load_ratio',
    help: 'Measured node load of the last round: cpu and memory as fractions of the node capacity, total = their mean.',
    labelNames: ['node', 'resource'] as const,
    registers: [this.registry],
  });
  readonly nodePressure = new Gauge({
    name: 'poise_node_pressure_some_avg10_percent',
    help: 'Node pressure stall "some" avg10 in percent (absent when the node does not report it).',
    labelNames: ['node', 'resource'] as const,
    registers: [this.registry],
  });
  readonly rounds = new Counter({
    name: 'poise_rounds_total',
    help: 'Rounds run.',
    registers: [this.registry],
  });
  readonly decisions = new Counter({
    name: 'poise_round_decisions_total',
    help: `Round outcomes: move (requested), would-move (observe mode), refused, skip, standby, error (${ROUND_OUTCOMES.join(', ')}).`,
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly skips = new Counter({
    name: 'poise_round_skips_total',
    help: 'Rounds that moved nothing, by reason (the policy stage that stopped, or the daemon reason).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly motionsIssued = new Counter({
    name: 'poise_motions_issued_total',
    help: `Motions requested from the cluster, by how they are followed (${MOTION_VIA_LABELS.join(', ')}).`,
    labelNames: ['via'] as const,
    registers: [this.registry],
  });
  readonly motionsSucceeded = new Counter({
    name: 'poise_motions_succeeded_total',
    help: 'Motions that ended on their target.',
    labelNames: ['via'] as const,
    registers: [this.registry],
  });
  readonly motionsFailed = new Counter({
    name: 'poise_motions_failed_total',
    help: 'Motions that failed, were refused by the cluster or timed out.',
    labelNames: ['via'] as const,
    registers: [this.registry],
  });
  readonly motionInFlight = new Gauge({
    name: 'poise_motion_in_flight',
    help: '1 while a motion this daemon issued is being followed.',
    registers: [this.registry],
  });
  readonly roundDuration = new Histogram({
    name: 'poise_round_duration_seconds',
    help: 'Wall-clock duration of a round.',
    buckets: ROUND_DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly apiErrors = new Counter({
    name: 'poise_api_errors_total',
    help: `Failed cluster calls by endpoint template and kind (${PORT_ERROR_KINDS.join(', ')}).`,
    labelNames: ['endpoint', 'kind'] as const,
    registers: [this.registry],
  });

  constructor(labels: CounterLabels = { skipReasons: [], errorEndpoints: [] }) {
    for (const outcome of ROUND_OUTCOMES) this.decisions.inc({ outcome }, 0);
    for (const via of MOTION_VIA_LABELS)
      for (const counter of [this.motionsIssued, this.motionsSucceeded, this.motionsFailed]) counter.inc({ via }, 0);
    this.countFromZero(labels);
  }

  /**
   * Gives each label value a series at 0 unless it has one (a counted value keeps its count):
   * at start, and for the skip reasons of a policy a reload brings.
   */
  countFromZero(labels: Partial<CounterLabels>): void {
    for (const reason of labels.skipReasons ?? []) this.skips.inc({ reason }, 0);
    for (const endpoint of labels.errorEndpoints ?? [])
      for (const kind of PORT_ERROR_KINDS) this.apiErrors.inc({ endpoint, kind }, 0);
  }

  /** Replaces the per-node gauges with the nodes of this round (nodes that left disappear). */
  setNodes(
    nodes: readonly {
      name: string;
      cpu?: number;
      mem?: number;
      load?: number;
      pressureCpu?: number;
      pressureMem?: number;
    }[],
  ): void {
    this.nodeLoad.reset();
    this.nodePressure.reset();
    for (const n of nodes) {
      if (n.load !== undefined) this.nodeLoad.set({ node: n.name, resource: 'total' }, n.load);
      if (n.cpu !== undefined) this.nodeLoad.set({ node: n.name, resource: 'cpu' }, n.cpu);
      if (n.mem !== undefined) this.nodeLoad.set({ node: n.name, resource: 'memory' }, n.mem);
      if (n.pressureCpu !== undefined) this.nodePressure.set({ node: n.name, resource: 'cpu' }, n.pressureCpu);
      if (n.pressureMem !== undefined) this.nodePressure.set({ node: n.name, resource: 'memory' }, n.pressureMem);
    }
  }
}
