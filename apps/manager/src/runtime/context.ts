import type { Host } from '../cluster/host';
import type { ManagerConfig } from '../config/load';
import type { Logger } from '../log';
import { Journal } from './journal';
import { Metrics } from './metrics';
import { knownSkipReasons } from './reasons';
import type { BuiltPolicy } from '../balancing/policy';
import { readableTimes } from './text';

/** This run's motions and observe-mode decisions, for the closing line. */
export interface RunCounts {
  requested: number;
  succeeded: number;
  failed: number;
  wouldMove: number;
  /** Requests the cluster refused for the credentials (403/401): no outcome, so counted apart; the last fault said. */
  forbidden: number;
  forbiddenFault?: string;
}

/**
 * What every concern of the daemon (round, motion follower, lock, reload, status) shares: the
 * host, the logger, metrics and journal, the config and policy in force (a reload replaces
 * both), the clock, and this run's counts.
 */
export class DaemonContext {
  /** Its labelled counters start at 0: the skip reasons of this policy, the port's error endpoints. */
  readonly metrics: Metrics;
  readonly runCounts: RunCounts = { requested: 0, succeeded: 0, failed: 0, wouldMove: 0, forbidden: 0 };
  /** What the status page shows of this run: history, decisions, motions, the cluster as last read. */
  readonly journal: Journal;

  constructor(
    readonly host: Host,
    readonly log: Logger,
    readonly version: string,
    public config: ManagerConfig,
    public policy: BuiltPolicy,
  ) {
    this.journal = new Journal(config.intervalSeconds);
    this.metrics = new Metrics({
      skipReasons: knownSkipReasons(policy.pipeline.stages),
      errorEndpoints: host.port.errorEndpoints ?? [],
    });
  }

  now(): number {
    return this.host.clock.now();
  }

  /** A time of the daemon's clock in a message: ISO 8601, or the host's own label (simulated time). */
  timeText(seconds: number): string {
    return this.host.timeLabel?.(seconds) ?? new Date(seconds * 1000).toISOString();
  }

  /** A policy text with its epoch seconds as times: UTC, or the host's own label. */
  policyText(text: string): string {
    const label = this.host.timeLabel?.bind(this.host);
    return label ? readableTimes(text, label) : readableTimes(text);
  }
}
