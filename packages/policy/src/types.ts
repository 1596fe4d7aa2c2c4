import type { MigrationCandidate, ScoredMigration } from '@poise/usage';

export type { MigrationCandidate, ScoredMigration };

/** How migrations are scored: minimal imbalance (bruteforce) or TOPSIS over 4 criteria. */
export type BalanceMethod = 'bruteforce' | 'topsis';

/**
 * What one balancing round sees. Values are computed lazily by the host, so a gate that stops
 * the round never pays for candidates or scoring. Pure data and functions: no clock, no I/O.
 */
export interface BalanceContext {
  /** Seconds (the manager's clock). */
  readonly now: number;
  /** A motion is queued or running: the reference never balances then. */
  readonly motionInFlight: boolean;
  /** The current node imbalance (lower is better). */
  imbalance(): number;
  /** Movable bundles and their allowed target nodes. */
  candidates(): MigrationCandidate[];
  /** Best migrations first; throws when the candidates cannot be scored. */
  score(candidates: MigrationCandidate[], method: BalanceMethod, limit: number): ScoredMigration[];
}

/** The plan a round builds stage by stage. */
export interface Plan {
  imbalance?: number;
  candidates?: MigrationCandidate[];
  scored?: ScoredMigration[];
  selected?: ScoredMigration;
}

/** A stage either passes an updated plan on, or stops the round with a reason. */
export type StageOutcome<S> =
  | { readonly plan: Plan; readonly state: S }
  | { readonly stop: string; readonly state: S };

/** Where in the pipeline a stage sits; the pipeline checks the order when it is built. */
export type StageKind = 'gate' | 'candidates' | 'filter' | 'score' | 'select' | 'accept';

/**
 * One step of the balancer. Contract: `run` is a pure function of its arguments — its state
 * is a value passed in and returned (never mutated in place), so a round can be replayed and
 * the state persisted. A stage that throws aborts the round (the pipeline reports it).
 */
export interface Stage<S = unknown> {
  readonly name: string;
  readonly kind: StageKind;
  /** The state before the stage ever ran. */
  initialState(): S;
  run(ctx: BalanceContext, plan: Plan, state: S): StageOutcome<S>;
}

/** The outcome of a round. */
export type Decision =
  | { readonly action: 'none'; readonly stage: string; readonly reason: string }
  | {
      readonly action: 'move';
      readonly migration: ScoredMigration;
      /** Imbalance before the move and the expected one after it. */
      readonly imbalanceBefore: number;
      readonly imbalanceAfter: number;
    };

/** Per-stage state of a pipeline, keyed by stage name. */
export type PipelineState = Readonly<Record<string, unknown>>;
