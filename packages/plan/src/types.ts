/**
 * The planner's input and output types. Units: cores and bytes, like `@poise/usage`;
 * utilisations are fractions (0.42 = 42 %).
 */

/** A cluster node. */
export interface PlanNode {
  /** Unique, non-empty. */
  readonly name: string;
  /** Physical cores, finite > 0. */
  readonly cpuCores: number;
  /** Physical memory, bytes, finite > 0. */
  readonly memBytes: number;
  /** Up and part of the cluster (default `true`). An offline node holds nothing; its HA guests must be recovered elsewhere. */
  readonly online?: boolean | undefined;
  /** In maintenance (default `false`): every guest that can move must leave it, none may arrive. */
  readonly maintenance?: boolean | undefined;
  /**
   * Load on the node that no listed guest accounts for (the host itself, guests left out), cores
   * in use, finite ≥ 0 (default 0). It stays where it is and counts in the balance and capacity.
   */
  readonly baseCpu?: number | undefined;
  /** Like {@link baseCpu}: bytes in use, finite ≥ 0 (default 0). */
  readonly baseMem?: number | undefined;
}

/** A guest (virtual machine or container). */
export interface PlanGuest {
  /** Unique, non-empty; HA's sid (`vm:101`) when it is an HA resource. */
  readonly id: string;
  readonly kind: 'vm' | 'ct';
  /** The node it is on now: one of the nodes. */
  readonly node: string;
  /** An HA resource (default `false`): only HA resources are recovered when their node fails. */
  readonly ha?: boolean | undefined;
  /** Cores in use, finite ≥ 0: what the balance counts. */
  readonly cpu: number;
  /** Assigned cores, finite ≥ 0 (default `cpu`): what the cpu overcommit limit counts. */
  readonly cores?: number | undefined;
  /** Memory in use, bytes, finite ≥ 0. */
  readonly mem: number;
  /**
   * Host-side memory footprint, bytes, finite ≥ 0, when known: used instead of `mem` for the
   * balance, the memory limit and the memory a migration copies.
   */
  readonly memhost?: number | undefined;
  /** Whether it can be migrated (default `true`); a guest that cannot stays where it is. */
  readonly migratable?: boolean | undefined;
  /** Why it cannot be migrated (`has a local disk`), shown in reasons; only with `migratable: false`. */
  readonly reason?: string | undefined;
  /**
   * HA ignores it (default `false`): it stays, its load counts on its node, and rules do not
   * apply to it (the HA manager does not place it).
   */
  readonly ignored?: boolean | undefined;
}

/** A node of a node-affinity rule and its priority (higher is preferred; default 0). */
export interface PlanRuleNode {
  readonly node: string;
  readonly priority?: number | undefined;
}

/**
 * An HA rule as `@poise/rules` keeps it (see `rulesFromConfig` and `rulesFromCompiled`):
 *
 * - `node-affinity`: each resource runs on one of the highest-priority nodes of `nodes` that are
 *   usable (online, not in maintenance, not drained); non-strict rules allow every other usable
 *   node at priority −1 when no listed node is usable (as HA compiles them);
 * - `resource-affinity` positive: the resources share one node (and move together);
 *   negative: they are on pairwise different nodes.
 */
export type PlanRule =
  | {
      readonly id: string;
      readonly type: 'node-affinity';
      readonly resources: readonly string[];
      readonly nodes: readonly PlanRuleNode[];
      /** Default `false`. */
      readonly strict?: boolean | undefined;
    }
  | {
      readonly id: string;
      readonly type: 'resource-affinity';
      readonly affinity: 'positive' | 'negative';
      readonly resources: readonly string[];
    };

/** Capacity limits every node must respect in the target placement and at every step. */
export interface CapacityPolicy {
  /**
   * Assigned cores (guests' `cores`) ≤ ratio × node cores; finite > 0. Absent: no cpu limit
   * (cpu is balanced, not capped).
   */
  readonly cpuOvercommitRatio?: number | undefined;
  /** Memory kept free, percent of the node's memory, 0 ≤ x < 100 (default 0): memory in use ≤ (1 − x/100) × memBytes. */
  readonly memoryHeadroomPercent?: number | undefined;
}

/**
 * Weights of the objective (see {@link PlanObjective}); each finite ≥ 0. Defaults:
 * {@link DEFAULT_WEIGHTS}.
 */
export interface PlanWeights {
  /** Weight of the highest cpu utilisation. */
  readonly cpu?: number | undefined;
  /** Weight of the highest memory utilisation. */
  readonly mem?: number | undefined;
  /** Cost of one guest migration, in weighted utilisation (0.001 = a move must gain 0.1 pp). */
  readonly move?: number | undefined;
  /** Cost of each GiB a migration copies, in weighted utilisation. */
  readonly gib?: number | undefined;
}

/** The cluster as the planner sees it: a plain value (see `validatePlanInput` for the rules). */
export interface PlanInput {
  readonly nodes: readonly PlanNode[];
  readonly guests: readonly PlanGuest[];
  readonly rules?: readonly PlanRule[] | undefined;
  readonly capacity?: CapacityPolicy | undefined;
  readonly weights?: PlanWeights | undefined;
}

/** Options of `planPlacement`. */
export interface PlanOptions {
  /** Nodes to empty completely (a drain): every guest on them must leave; one that cannot makes the plan infeasible. */
  readonly drain?: readonly string[] | undefined;
  /** Migrations a node takes part in (as source or target) per step, integer ≥ 1 (default 1). */
  readonly maxParallelPerNode?: number | undefined;
  /** Seed of the search's perturbations, integer 0..2^32−1 (default 1): the same input and seed give the same plan. */
  readonly seed?: number | undefined;
  /** Search effort, a multiplier of the default number of restarts, finite > 0 (default 1). */
  readonly effort?: number | undefined;
  /** The reference imbalance metric reported beside the objective (default `normalized`, as `pve-9.2`). */
  readonly metric?: 'raw' | 'normalized' | undefined;
}

/**
 * The objective of a placement (lower is better):
 *
 *   weights.cpu · max over usable nodes of (cpu in use / cores)
 * + weights.mem · max over usable nodes of (memory in use / memory)
 * + weights.move · migrations + weights.gib · GiB copied
 *
 * where a node's use includes its base load and every guest on it, "usable" is online, not in
 * maintenance and not drained, a migration is one guest leaving the node it is on now, and a
 * migration copies the guest's memory (memhost when known). A guest recovered from an offline
 * node counts as a migration that copies nothing.
 */
export interface PlanObjective {
  /** The weighted sum above. */
  readonly value: number;
  /** The highest cpu utilisation (fraction). */
  readonly cpu: number;
  /** The highest memory utilisation (fraction). */
  readonly mem: number;
  /** Guests that leave the node they are on now. */
  readonly moves: number;
  /** Memory those migrations copy, bytes. */
  readonly bytes: number;
}

/** One motion: a guest, or a positive-affinity bundle moving together, from one node to another. */
export interface PlannedMove {
  /** The guests that move (byte order); one for a guest without positive affinity. */
  readonly guests: readonly string[];
  readonly source: string;
  readonly target: string;
  /** Memory copied, bytes. */
  readonly bytes: number;
  /**
   * `move`: to its place in the target placement; `temporary`: to a third node, to break a
   * cycle (it moves on in a later step); `recover`: from an offline node (HA restarts it).
   */
  readonly kind: 'move' | 'temporary' | 'recover';
}

/** Per-node view of a placement. */
export interface NodeUse {
  readonly node: string;
  /** Cores in use / cores. */
  readonly cpu: number;
  /** Memory in use / memory. */
  readonly mem: number;
  readonly guests: number;
}

/** A placement that satisfies every hard constraint, the steps to reach it, and its quality. */
export interface FeasiblePlan {
  readonly feasible: true;
  /** Where every guest ends up (id → node), ids in byte order; guests on offline nodes that are not recovered are left out. */
  readonly placement: ReadonlyMap<string, string>;
  /** The steps, in order; the motions of a step run in parallel. Empty when nothing moves. */
  readonly steps: readonly (readonly PlannedMove[])[];
  /** The objective of the target placement. */
  readonly objective: PlanObjective;
  /** The objective of the current placement (it may break a constraint: `currentViolations`). */
  readonly current: PlanObjective;
  /** A lower bound on the objective of every placement that satisfies the constraints. */
  readonly bound: number;
  /** (objective − bound) / objective, 0 when both are 0: the target is at most this far from the optimum. */
  readonly gap: number;
  /** The reference imbalance (`@poise/imbalance`, node load (cpu/cores + mem/memory)/2 over usable nodes) now and after. */
  readonly imbalance: { readonly current: number; readonly target: number };
  /** Per usable node, byte order: the use after. */
  readonly nodes: readonly NodeUse[];
  /**
   * Whether the steps reach the target placement. `false`: `blocked` says which motions could
   * not be ordered safely, and `steps` holds those that could.
   */
  readonly executable: boolean;
  readonly blocked?: string | undefined;
  /** Hard constraints the current placement breaks (what the plan fixes). */
  readonly currentViolations: readonly string[];
  /** Facts worth knowing: guests that cannot move off a node in maintenance, temporary moves, … */
  readonly notes: readonly string[];
  /** A drain's plan (`planDrain`): what it moves and why. Absent on a plan of `planPlacement`. */
  readonly drain?: DrainSummary | undefined;
}

/**
 * A guest a drain moves although it is not on a drained node: the only way the drain found to
 * make room for one that is.
 */
export interface RoomMove {
  /** The guests that move (a positive-affinity bundle moves together). */
  readonly guests: readonly string[];
  readonly source: string;
  readonly target: string;
  /** The guest (or first of a bundle) of a drained node it makes room for. */
  readonly for: string;
  /** In words: `vm:123 node7 → node9 to make room for vm:101 (needs 8.0 GiB, node7 has 3.0 GiB free)`. */
  readonly reason: string;
}

/** What a drain plan moves: the guests that must leave, and the others it moves to make room. */
export interface DrainSummary {
  /** The nodes drained. */
  readonly nodes: readonly string[];
  /** Guests that must move: on a drained node (or on a node in maintenance, or to be recovered). */
  readonly required: number;
  /** Every other guest the drain moves, each with why. */
  readonly makeRoom: readonly RoomMove[];
  /** Motions of the steps in all (a bundle spread over nodes is one per source; temporary motions count). */
  readonly motions: number;
}

/** No placement satisfies every hard constraint. */
export interface InfeasiblePlan {
  readonly feasible: false;
  /** Why, in words an operator can act on; at least one. */
  readonly reasons: readonly string[];
  /** The objective of the current placement. */
  readonly current: PlanObjective;
  readonly notes: readonly string[];
}

/** The answer of `planPlacement`. */
export type PlacementPlan = FeasiblePlan | InfeasiblePlan;
