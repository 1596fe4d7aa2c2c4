import type { ImbalanceMetric } from '@poise/imbalance';

export type { ImbalanceMetric };

/** Lifecycle state of a resource as the scheduler sees it (spec §4.1). */
export type ResourceState = 'stopped' | 'starting' | 'started';

/**
 * Node stats (spec §4.1): `cpu` in cores (float), `maxcpu` cores (an integer in the
 * reference), `mem` and `maxmem` bytes (integers). Static nodes start at cpu 0 / mem 0; dynamic
 * nodes carry the measured usage. `maxcpu` and `maxmem` must be > 0.
 */
export interface NodeStats {
  readonly cpu: number;
  readonly maxcpu: number;
  readonly mem: number;
  readonly maxmem: number;
}

/**
 * Resource stats: `cpu` cores in use, `maxcpu` configured cores (0 = "as many as the node
 * has"), `mem` bytes in use, `maxmem` configured bytes. Static resources are passed as
 * `{ cpu: maxcpu, maxcpu, mem: maxmem, maxmem }` (spec §4.1, `pve_static.rs`).
 */
export interface ResourceStats {
  readonly cpu: number;
  readonly maxcpu: number;
  readonly mem: number;
  readonly maxmem: number;
}

/** Where a resource is: stationary on `current`, or moving from `current` to `target`. */
export interface Placement {
  readonly current: string;
  readonly target?: string | undefined;
}

/**
 * How node usage is aggregated (spec §4.2):
 * - `basic`: only resource counts per node;
 * - `static`: every assigned resource counts as started at (maxcpu, maxmem);
 * - `dynamic`: measured node stats; for start scoring, `starting` resources are added as started.
 */
export type Aggregation = 'basic' | 'static' | 'dynamic';

/** A resource as the usage sees it. */
export interface ResourceSpec {
  readonly stats: ResourceStats;
  readonly state: ResourceState;
  readonly placement: Placement;
}

/**
 * A balancing candidate: the bundle `leader` (its current node is the source), the bundle's
 * member sids (in the order their stats are summed; includes the leader) and the target nodes.
 */
export interface MigrationCandidate {
  readonly leader: string;
  readonly resources: readonly string[];
  readonly targets: readonly string[];
}

/**
 * A scored migration: `imbalance` is the cluster imbalance after the move, truncated to 15
 * decimals (`trunc(x·1e15)/1e15`, like the reference's `ScoredMigration::new`); lower is better.
 */
export interface ScoredMigration {
  readonly sid: string;
  readonly source: string;
  readonly target: string;
  readonly imbalance: number;
}

/** How balancing migrations are chosen: minimal imbalance, or TOPSIS over the 4 criteria. */
export type MigrationMethod = 'bruteforce' | 'topsis';

/** A node's start score. */
export interface NodeScore {
  readonly node: string;
  readonly score: number;
}
