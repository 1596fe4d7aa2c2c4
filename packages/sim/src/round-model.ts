/**
 * How simulated time is laid out: the round models (the reference's node after node, or every
 * node's daemons side by side), the length of a round, and the simulation's time limit.
 */
import type { ManagerOptions } from '@poise/ha';
import { SimError } from './errors';

/** The simulation dies once simulated time passes this (the reference's limit, seconds). */
export const MAX_SIM_TIME = 10000;
/** A round lasts at least this many seconds (the reference: max(20, 2 × nodes)). */
export const MIN_ROUND_SECONDS = 20;
/** The reference dies when a round would take this long (30 nodes and more). */
export const MAX_ROUND_SECONDS = 60;
/** Length of a round of the `concurrent` model, whatever the number of nodes. */
export const CONCURRENT_ROUND_SECONDS = 20;
/**
 * From this many nodes on, `pve-9.2` runs the `concurrent` round model unless told otherwise:
 * the reference's model cannot run such a cluster at all (its round would reach 60 s).
 */
export const CONCURRENT_MIN_NODES = MAX_ROUND_SECONDS / 2;

/**
 * How the daemons of one round are laid out in simulated time:
 * - `reference`: node after node in byte order, each node's CRM then LRM iteration taking 1 s
 *   (node1/crm at T, node1/lrm at T+1, node2/crm at T+2, ...); a round lasts
 *   max(20, 2 × nodes) s and 30 nodes or more abort with `too many nodes` (the reference's
 *   harness);
 * - `concurrent`: every node's daemons run side by side, as on a real cluster: all CRM
 *   iterations at T (in node byte order), then all LRM iterations at T+1; a round lasts 20 s
 *   for any number of nodes.
 */
export type RoundModel = 'reference' | 'concurrent';

/**
 * The round model in force for a profile, a node count and an optional request: the request,
 * else `reference`, except under `pve-9.2` for a case of {@link CONCURRENT_MIN_NODES} nodes or
 * more (`concurrent`); `pve-5.2.0` runs the reference's model only. Throws `SimError`
 * `bad-case` for `concurrent` under `pve-5.2.0` and for an unknown model.
 */
export function resolveRoundModel(
  profile: ManagerOptions['profile'],
  nodeCount: number,
  requested?: RoundModel,
): RoundModel {
  if (requested !== undefined && requested !== 'reference' && requested !== 'concurrent') {
    throw new SimError('bad-case', `unknown round model '${String(requested)}', expected 'reference' or 'concurrent'`);
  }
  if (profile === 'pve-5.2.0') {
    if (requested === 'concurrent')
      throw new SimError(
        'bad-case',
        "round model 'concurrent' needs the 'pve-9.2' profile ('pve-5.2.0' is the reference's harness)",
      );
    return 'reference';
  }
  return requested ?? (nodeCount >= CONCURRENT_MIN_NODES ? 'concurrent' : 'reference');
}

/** Skip counters of `skip-round` (rounds left without CRM / LRM iterations). */
export interface SkipRounds {
  crm: number;
  lrm: number;
}
