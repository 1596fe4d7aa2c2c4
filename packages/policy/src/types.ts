import type { MigrationCandidate, ScoredMigration } from '@poise/usage';
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- FRACTION_REASON_FORMAT is named by {@link} in a doc comment: typedoc resolves it through this import
import type { FRACTION_REASON_FORMAT, ReasonFormat } from './explain';

export type { MigrationCandidate, ScoredMigration };

/** How migrations are scored: minimal imbalance (bruteforce) or TOPSIS over 4 criteria. */
export type BalanceMethod = 'bruteforce' | 'topsis';

/**
 * A movable bundle as the host offers it: the usage model's {@link MigrationCandidate} plus
 * optional facts the variant stages use. The reference stages read none of the extras.
 *
 * Accepted shape (checked every round; a violation stops the round with code
 * `invalid-input`): `leader` a non-empty string and a member of `resources`; `resources`
 * non-empty, strings, no duplicates (the members in the order their stats are summed);
 * `targets` strings without duplicates (may be empty), never `source`; leaders unique across
 * the list. Whether the members exist and are stationary is the scorer's business
 * (`@poise/usage` throws `invalid-candidate`).
 */
export interface BalanceCandidate extends MigrationCandidate {
  /**
   * The node every member runs on now: the motion's source. Needed by stages that judge the
   * source (`pressure-source`); a stage that needs it and does not get it stops the round
   * with `invalid-input`.
   */
  readonly source?: string | undefined;
  /**
   * Memory the motion copies, bytes (finite, ≥ 0): the sum over the members of the memory in
   * use (the host-side footprint when the host has it). `undefined` = unknown. Read by the
   * `cost` select stage only.
   */
  readonly transferBytes?: number | undefined;
}

/**
 * Imbalance and migration scoring on one view of the node stats. The context itself is the
 * view on the measured stats; {@link BalanceContext.adjust} returns views on adjusted stats.
 */
export interface BalanceEvaluator {
  /**
   * The node imbalance (lower is better): a finite number ≥ 0, the usage metric as a fraction
   * (raw CV under `pve-5.2.0`, normalised 0..1 under `pve-9.2`). Anything else stops the round
   * with `invalid-input`. Read at most once per round per view (the pipeline memoises it).
   */
  imbalance(): number;
  /**
   * The best `limit` migrations of `candidates`, best first (`limit` ≥ 1; the reference asks
   * for 1, the `cost` stage for more). Every result must be a (leader, target) pair of the
   * given candidates, `source` ≠ `target`, `imbalance` the finite, ≥ 0 imbalance after the
   * move; at most `limit` results. A violation stops the round with `invalid-input`. May throw
   * when the candidates cannot be scored: the exception reaches the host (which, like the
   * reference, logs it and returns `[]` instead).
   */
  score(candidates: MigrationCandidate[], method: BalanceMethod, limit: number): ScoredMigration[];
}

/**
 * One online node as the host measures it, for the stages that look at node telemetry
 * (`smoothing`, `pressure`, `pressure-source`). Units: cores and bytes, like the usage model.
 *
 * Accepted range (checked every round; a violation stops the round with `invalid-input`,
 * naming the node and field): `node` a non-empty string, unique; `cpu`, `mem`,
 * `servicesCpu`, `servicesMem` finite, 0 ≤ x ≤ 2^53; `maxcpu`, `maxmem` finite, 0 < x ≤ 2^53;
 * `pressureCpu`, `pressureMem` `undefined` (telemetry missing) or finite in 0..100.
 */
export interface NodeTelemetry {
  readonly node: string;
  /** Measured cpu in use on the node, cores (everything: HA services, other guests, host). */
  readonly cpu: number;
  readonly maxcpu: number;
  /** Measured memory in use on the node, bytes. */
  readonly mem: number;
  readonly maxmem: number;
  /**
   * The part of `cpu`/`mem` the HA services account for: the sum of the dynamic stats of the
   * services the usage model places on this node (the same values it moves when scoring a
   * migration). The residual `cpu − servicesCpu` is load the balancer cannot act on; only the
   * residual is smoothed.
   */
  readonly servicesCpu: number;
  readonly servicesMem: number;
  /** PSI "some" avg10 of the node's cpu, percent (0..100); `undefined` when not reported. */
  readonly pressureCpu?: number | undefined;
  /** PSI "some" avg10 of the node's memory, percent (0..100); `undefined` when not reported. */
  readonly pressureMem?: number | undefined;
}

/**
 * One guest as the host measures it, for the stages that judge moves by what the guests feel
 * (`contention` of `@poise/policy-contention`). Units: cores and bytes, like the usage model.
 *
 * Accepted range (checked every round; a violation stops the round with `invalid-input`,
 * naming the guest and field): `sid` a non-empty string, unique; `node` a non-empty string
 * (the node it runs on); `cpu`, `maxcpu`, `mem` finite, 0 ≤ x ≤ 2^53.
 */
export interface GuestTelemetry {
  readonly sid: string;
  /** The node it runs on (a moving guest: its source). */
  readonly node: string;
  /** cpu in use, cores. */
  readonly cpu: number;
  /** Configured cores (virtual cpus); 0 when unknown. */
  readonly maxcpu: number;
  /** Memory in use, bytes: the value the usage model moves with it (the host-side footprint with `memhost`). */
  readonly mem: number;
}

/**
 * What a round minimises when it is not the imbalance: set in {@link Plan.objective} by the
 * gate of the pipeline's objective (`PipelineObjective`, e.g. the `contention` gate of
 * `@poise/policy-contention`) for the stages after it. Stages that weigh moves against each other
 * (`select-cost` of `@poise/policy-stable`) compare the objective's gains instead of the
 * imbalance's improvements; stages tied to the imbalance (`min-improvement`) leave the
 * judgement to the objective's own accept stage.
 */
export interface MoveObjective {
  /** What is minimised, for reasons and notices: e.g. `guest contention`. */
  readonly name: string;
  /**
   * The predicted gain of moving `candidate`'s bundle to `target`: a finite number, higher is
   * better (≤ 0: no gain); `undefined` when the move cannot be judged (it is then not scored).
   */
  gain(candidate: BalanceCandidate, target: string): number | undefined;
  /** A gain as reasons and notices print it, e.g. `412 guest-seconds`. */
  formatGain(gain: number): string;
}

/**
 * Node usage to evaluate instead of the measured one (see {@link BalanceContext.adjust}):
 * `cpu` cores (finite, ≥ 0), `mem` bytes (integer, ≥ 0). `maxcpu`/`maxmem` stay as measured.
 */
export interface AdjustedNodeUsage {
  readonly node: string;
  readonly cpu: number;
  readonly mem: number;
}

/**
 * The outcome of a motion the balancer issued (a `move` decision), as the host learned it.
 *
 * Contract: report only motions the balancer issued (a user's failed migration is not the
 * balancer's), once each, in the first round where the outcome is known and no later than the
 * round in which {@link BalanceContext.motionInFlight} turns false for that motion. A motion the
 * host refused to issue (e.g. a negative-affinity conflict) may be reported at once with
 * `ok: false`. A repeat (same `at` or older than the last outcome seen) is ignored, so a host
 * that replays outcomes after a restart does no harm. An invalid outcome is ignored with a
 * `warning` notice (code `invalid-outcome`).
 */
export interface MotionOutcome {
  /** The bundle as issued ({@link MoveDecision.resources}); non-empty strings, no duplicates. */
  readonly resources: readonly string[];
  readonly source: string;
  readonly target: string;
  /** `true`: every member arrived on `target`; `false`: the motion failed or was refused. */
  readonly ok: boolean;
  /** Seconds on the manager's clock when the outcome became known (finite; ≤ `now`). */
  readonly at: number;
  /** Optional text for the log, e.g. `migration error`. */
  readonly detail?: string | undefined;
}

/**
 * A guest's configuration as `GET /nodes/{node}/qemu/{vmid}/config` (or `lxc`) returns it:
 * keys to property strings or numbers (`"ide2": "local:iso/d.iso,media=cdrom"`).
 */
export type GuestConfig = Readonly<Record<string, string | number | boolean | null | undefined>>;

/** Why a guest cannot be live-migrated, one per offending config key. */
export interface MigrationBlocker {
  /** The config key, e.g. `ide2`, `hostpci0`. */
  readonly key: string;
  /** Machine-readable: `local-cdrom`, `host-cdrom`, `local-disk`, `pci-passthrough`, ... */
  readonly code: string;
  /** Lower-case text, e.g. `local cd-rom image 'local:iso/d.iso' (ide2)`. */
  readonly message: string;
}

/** Whether a guest can be moved by the balancer, and why not. */
export interface MigratabilityVerdict {
  readonly migratable: boolean;
  /** Empty when migratable. */
  readonly blockers: readonly MigrationBlocker[];
}

/** A finished live migration as the host reports it (see {@link BalanceContext.migrationTasks}). */
export interface FinishedMigration {
  /** From its start to its end, seconds (finite, > 0). */
  readonly durationSeconds: number;
  /** Memory it sent, bytes (finite, ≥ 0). */
  readonly transferredBytes: number;
}

/**
 * What one balancing round sees: the host's facts and its scoring on the measured stats.
 * Values are computed lazily by the host, so a gate that stops the round never pays for
 * candidates or scoring. Pure data and functions: no clock, no I/O inside the policy.
 *
 * The first five members are what the reference pipeline needs; everything after them is
 * optional and only read by the variant stages that need it (a stage that needs a member the
 * host does not provide throws `PolicyError` `invalid-context` naming the stage and member).
 * A host may call a member more than once per round; the pipeline memoises `imbalance`,
 * `candidates` and `nodes`, so they are asked at most once per round.
 */
export interface BalanceContext extends BalanceEvaluator {
  /** Seconds (the manager's clock); finite. Stage state stores times on this clock. */
  readonly now: number;
  /** A motion is queued or running: the reference never balances then. A boolean. */
  readonly motionInFlight: boolean;
  /** Movable bundles and their allowed target nodes (see {@link BalanceCandidate}). */
  candidates(): BalanceCandidate[];

  /** Outcomes of balancer motions that became known since the last round (see {@link MotionOutcome}). */
  readonly outcomes?: readonly MotionOutcome[] | undefined;
  /** Telemetry of every online node (see {@link NodeTelemetry}); same nodes as the usage model. */
  nodes?(): readonly NodeTelemetry[];
  /**
   * Every guest the host measures on those nodes (see {@link GuestTelemetry}): at least the
   * members of every candidate. Read by `contention`.
   */
  guests?(): readonly GuestTelemetry[];
  /**
   * A view that evaluates imbalance and migrations as if each listed node's measured cpu/mem
   * were the given ones (nodes not listed keep their measured stats; services and placements
   * are unchanged). Used by `smoothing`. The host may build the adjusted usage lazily, on the
   * view's first call.
   */
  adjust?(nodes: readonly AdjustedNodeUsage[]): BalanceEvaluator;
  /**
   * The cluster's finished live migrations, oldest first (PVE: `qmigrate` tasks and their logs;
   * the simulator: its migration model's): how long each took and how much memory it sent.
   * Read by `contention` with cost–benefit, to learn the migration link's rate.
   */
  migrationTasks?(): readonly FinishedMigration[];
  /** A guest's current configuration, or `undefined` when unknown. May be slow: cache it. */
  guestConfig?(sid: string): GuestConfig | undefined;
  /** The host's own migratability verdict (e.g. from PVE's migrate precheck); preferred over `guestConfig`. */
  migratability?(sid: string): MigratabilityVerdict | undefined;
  /**
   * Whether a storage id is shared across the nodes (`shared` in `storage.cfg`), or
   * `undefined` when unknown (then `local` and `local-*` count as local, everything else as
   * shared).
   */
  sharedStorage?(storage: string): boolean | undefined;
  /**
   * The whole cluster for stages that plan past one move (`plan-guided` of
   * `@poise/policy-plan`): a `@poise/plan` `PlanInput` (nodes, HA resources with their usage,
   * the compiled rules). Opaque here, so that the policy does not depend on the planner: the
   * stage validates it (an invalid one stops the round with `invalid-input`). Asked at most once
   * per round.
   */
  planInput?(): unknown;
  /**
   * How stop reasons and notices print imbalances, improvements and relative improvements: in
   * the units the host's operator configured (`percentReasonFormat()`: `27.4%`, `18.4 pp`).
   * Default `FRACTION_REASON_FORMAT` (fractions, `0.2738`). Only text depends on it:
   * decisions, codes and keys are the same in every format. Not an object with `value` and
   * `bound` functions: the round stops with `invalid-input`.
   */
  readonly format?: ReasonFormat | undefined;
}

/**
 * The plan a round builds stage by stage. Per round only (never persisted); stages return a
 * new plan, never mutate the one they get.
 */
export interface Plan {
  /** The imbalance the round acts on (set by `threshold-hold`; adjusted when smoothing is on). */
  readonly imbalance?: number;
  readonly candidates?: BalanceCandidate[];
  readonly scored?: ScoredMigration[];
  readonly selected?: ScoredMigration;
  /**
   * Set by a gate that adjusts the node stats (`smoothing`): later stages read the imbalance
   * and score migrations on this view instead of the context. See {@link evaluatorOf}.
   */
  readonly evaluator?: BalanceEvaluator;
  /**
   * Set by a gate that continues a rebalancing series after a failed motion
   * (`backoff-series`): `threshold-hold` still checks the threshold but does not wait the
   * hold rounds again, and `backoff` excludes the pairs that failed in this series.
   */
  readonly continueSeries?: boolean;
  /**
   * Set by the gate of the pipeline's objective (see {@link MoveObjective}): the round
   * minimises that objective, not the imbalance. Absent: the imbalance, as the reference (the
   * pipeline then judges the round with the imbalance's stages).
   */
  readonly objective?: MoveObjective;
}

/** A message a stage wants logged once (not every round): a recorded failure, a guest that cannot move. */
export interface NoticeInit {
  /** Machine-readable, stable: `motion-failed`, `not-migratable`, ... */
  readonly code: string;
  readonly severity: 'info' | 'warning';
  /** Lower-case, human-readable; identifiers quoted or plain sids/node names. */
  readonly message: string;
}

/** A notice with the name of the stage that raised it. */
export interface Notice extends NoticeInit {
  readonly stage: string;
}

/** A stage passes an updated plan on. */
export interface StagePass<S> {
  readonly plan: Plan;
  readonly state: S;
  readonly notices?: readonly NoticeInit[];
}

/** A stage stops the round: nothing moves. */
export interface StageStop<S> {
  /** Human-readable reason, lower-case, e.g. `cooldown of vm:101 until 1020`. */
  readonly stop: string;
  readonly state: S;
  /** Machine-readable reason (default `stopped`); hosts count skips by it. */
  readonly code?: string;
  /**
   * Identifies the explanation, excluding round counters and measured values, so a host can
   * log a decision not to act only when its key changes. Default `<stage>:<code>`.
   */
  readonly key?: string;
  /**
   * The round does not qualify (e.g. no node under pressure), as opposed to a round that did
   * not happen (a motion in flight): the stages after this one get {@link Stage.breakStreak},
   * so `threshold-hold` starts counting its hold rounds again.
   */
  readonly breaksStreak?: boolean;
  /**
   * Not a decision yet, only progress towards one (the hold rounds counting): a host logs
   * nothing for it and keeps comparing later keys with the last key it logged, so a round
   * cycle like `holding, holding, below-margin` logs `below-margin` once, not every cycle.
   */
  readonly quiet?: boolean;
  readonly notices?: readonly NoticeInit[];
}

/** A stage either passes an updated plan on, or stops the round with a reason. */
export type StageOutcome<S> = StagePass<S> | StageStop<S>;

/** Where in the pipeline a stage sits; the pipeline checks the order when it is built. */
export type StageKind = 'gate' | 'candidates' | 'filter' | 'score' | 'select' | 'accept';

/** What every stage sees each round before any stage runs (cheap facts only). */
export interface RoundFacts {
  readonly now: number;
  /** Validated outcomes reported this round (invalid ones already dropped). */
  readonly outcomes: readonly MotionOutcome[];
}

/** The result of {@link Stage.observe}. */
export interface Observed<S> {
  readonly state: S;
  readonly notices?: readonly NoticeInit[];
}

/**
 * One step of the balancer.
 *
 * Contract:
 * - `run` is a pure function of its arguments: its state is a value passed in and returned,
 *   never mutated in place, so a round can be replayed and the state persisted. State is plain
 *   JSON (objects, arrays, strings, finite numbers, booleans, `null`; no `undefined` fields,
 *   no Maps), so `JSON.parse(JSON.stringify(state))` restores it exactly.
 * - Invalid host data: a stage throws an `Error` whose `code` is `invalid-input` (a
 *   `PolicyError`, or, in a plug-in without a runtime import of this package, any `Error` with
 *   that `code`); the pipeline turns it into a stop with that code (the stage's state stays as
 *   it was). A stage must not catch errors thrown by the context.
 * - Any other exception, a result not of the shape {@link StageOutcome} says, or a state that is
 *   not plain JSON aborts the round with a `StageError` (`stage-failed`) naming the stage's
 *   plug-in, the stage, the round and what was wrong; it reaches the host. (`invalid-context`
 *   and the context's own errors reach it as they are.)
 */
export interface Stage<S = unknown> {
  /** Unique within a pipeline; the key of the stage's state. */
  readonly name: string;
  readonly kind: StageKind;
  /** The state before the stage ever ran. */
  initialState(): S;
  run(ctx: BalanceContext, plan: Plan, state: S): StageOutcome<S>;
  /**
   * Checks a restored (e.g. persisted) state and returns it typed; throws `PolicyError`
   * `invalid-state` naming the stage and field. Called for every stage at the start of every
   * round whose input holds a value for it. Without it, a restored value is taken as is.
   */
  validateState?(value: unknown): S;
  /**
   * Bookkeeping that must happen every round, whatever the gates decide: record motion
   * outcomes, expire entries. Called for every stage, in pipeline order, before the first
   * stage runs. Reads only the facts (no lazy context values).
   */
  observe?(facts: RoundFacts, state: S): Observed<S>;
  /** An earlier stage stopped the round as not qualifying (see {@link StageStop.breaksStreak}). */
  breakStreak?(state: S): S;
}

/** The round stopped: nothing moves. */
export interface StopDecision {
  readonly action: 'none';
  /** The stage that stopped the round (`pipeline` when the context itself was invalid). */
  readonly stage: string;
  /** Machine-readable reason; see the README for the list. */
  readonly code: string;
  /** Human-readable reason. */
  readonly reason: string;
  /**
   * Changes only when the explanation changes (no counters, no measured values). A host logs a
   * stop when it is not `quiet` and its key differs from the last key it logged (forget the
   * last key after a move), and can count skips by `code`.
   */
  readonly key: string;
  /** Progress, not a decision (`threshold-hold` counting its hold rounds): log nothing. */
  readonly quiet: boolean;
  /** Messages to log once, raised this round (possibly while stopping). */
  readonly notices: readonly Notice[];
}

/** The round chose a motion: the host queues it and later reports its {@link MotionOutcome}. */
export interface MoveDecision {
  readonly action: 'move';
  readonly migration: ScoredMigration;
  /** The whole bundle that moves (the selected candidate's `resources`; `[sid]` if unknown). */
  readonly resources: readonly string[];
  /** Imbalance before the move and the expected one after it (adjusted when smoothing is on). */
  readonly imbalanceBefore: number;
  readonly imbalanceAfter: number;
  readonly notices: readonly Notice[];
}

/** The outcome of a round. */
export type Decision = StopDecision | MoveDecision;

/** Per-stage state of a pipeline, keyed by stage name. Plain JSON; persist it as is. */
export type PipelineState = Readonly<Record<string, unknown>>;
