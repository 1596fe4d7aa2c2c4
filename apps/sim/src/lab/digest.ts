/**
 * What the lab keeps of a run (its digest) and of a comparison (its summary): the data the
 * comparison, the Markdown summary and the report share. Types and the reduction of a trace
 * only: the modules that write or draw them import this one, never each other in a circle.
 */
import { contentionRate } from '@poise/sim';
import { predictionPoints, type PredictionErrorStats, type PredictionPoint } from './prediction';
import { runBalance, type RunBalance } from './regret';
import { binSteps, binWidth, type Bins } from './series';
import type { METRICS, MetricStats, Verdict } from './stats';
import { summarize, type RunSummary } from './summary';
import { hasPressure, type RunTrace, type TraceMove } from './trace';
import type { Variant } from './variants';

/** Bins kept per run series (the report merges them further). */
const DIGEST_MAX_BINS = 1000;

/** Node series of one run, binned. */
interface NodeDigest {
  names: string[];
  cpu: Bins[];
  mem: Bins[];
  pressureCpu?: Bins[];
  pressureMem?: Bins[];
}

/** What the lab keeps of a run: its summary, binned imbalance, its moves, and (for one seed) node series. */
export interface RunDigest {
  scenario: string;
  variant: string;
  seed: number;
  endTime: number;
  summary: RunSummary;
  imbalance: Bins;
  /** Guest contention as a rate (guest-seconds of stall per second), binned; absent without the load pressure model. */
  contention?: Bins;
  moves: TraceMove[];
  /** Moves to balance, the hindsight oracle and the regret (`regret.ts`). */
  balance: RunBalance;
  nodes?: NodeDigest;
  /** Predicted against realised cpu pressure after each landed move (`predictionPoints`); absent without the load pressure model. */
  predictions?: PredictionPoint[];
}

/** Reduces a trace to a {@link RunDigest}; node series only when `keepNodes`. */
export function digestTrace(trace: RunTrace, keepNodes: boolean): RunDigest {
  const width = binWidth(trace.endTime, DIGEST_MAX_BINS);
  const { time } = trace.rounds;
  const bin = (values: readonly (number | null)[]) => binSteps(time, values, trace.endTime, width);
  const digest: RunDigest = {
    scenario: trace.scenario,
    variant: trace.variant,
    seed: trace.seed,
    endTime: trace.endTime,
    summary: summarize(trace),
    imbalance: bin(trace.rounds.imbalance),
    ...(trace.rounds.truth ? { contention: bin(contentionRate(time, trace.rounds.truth, trace.endTime)) } : {}),
    moves: trace.moves,
    balance: runBalance(trace),
  };
  if (trace.rounds.truth && trace.cpuFamilies) digest.predictions = predictionPoints(trace);
  if (keepNodes) {
    const r = trace.rounds;
    digest.nodes = {
      names: trace.nodes,
      cpu: r.cpu.map(bin),
      mem: r.mem.map(bin),
      ...(hasPressure(r) ? { pressureCpu: r.pressureCpu.map(bin), pressureMem: r.pressureMem.map(bin) } : {}),
    };
  }
  return digest;
}

/** The numbers of a comparison, as written to summary.json. */
export interface LabSummary {
  format: 'poise-lab-summary/1';
  scenarios: string[];
  variants: Variant[];
  seeds: number[];
  metrics: typeof METRICS;
  runs: ({ scenario: string; variant: string; seed: number } & RunSummary)[];
  stats: MetricStats[];
  verdicts: Verdict[];
  /** Balance per run and per scenario × variant: moves to balance, oracle, regret (`balance-summary.ts`). */
  balance: BalanceSummary;
  /** The contention model's cpu prediction error after a move, per curve family, over every run; absent without the load pressure model. */
  prediction?: PredictionErrorStats[];
}

/** One run's balance figures (summary.json `balance.runs`). */
export interface BalanceRun {
  scenario: string;
  variant: string;
  seed: number;
  /** The balancer the run recorded; null for a trace without its placement record. */
  balancer: 'greedy' | 'planned' | null;
  moves: number;
  balancedAt: number | null;
  movesToBalance: number | null;
  oracleMoves: number | null;
  oracleSource: 'planner' | 'run' | 'both' | null;
  plannerMoves: number | null;
  oracleBound: number | null;
  runDisplaced: number | null;
  regret: number | null;
  excess: number | null;
  imbalanceEnd: number | null;
  imbalanceOracle: number | null;
  note?: string;
}

/** Per scenario × variant (summary.json `balance.groups`); means over the runs that have the figure. */
export interface BalanceGroup {
  scenario: string;
  variant: string;
  balancer: 'greedy' | 'planned';
  runs: number;
  /** Runs that ended balanced (see `movesToBalance`). */
  balanced: number;
  /** Mean moves to balance over the balanced runs; null when none. */
  movesToBalance: number | null;
  /** Mean balancer moves over all runs. */
  moves: number;
  /** Runs with an oracle, and its mean moves over them. */
  withOracle: number;
  oracleMoves: number | null;
  /** Regret over the runs with a finite one: mean, median, max; `unbounded` counts oracle 0 with moves > 0. */
  regretMean: number | null;
  regretMedian: number | null;
  regretMax: number | null;
  unbounded: number;
  /** Mean moves − oracle moves over the runs with an oracle. */
  excess: number | null;
}

/** summary.json `balance`. */
export interface BalanceSummary {
  /** The balanced line (imbalance fraction). */
  threshold: number;
  runs: BalanceRun[];
  groups: BalanceGroup[];
}
