import type { Manager } from './manager';

/** The balancer's state across rounds (lives as long as the manager). */
export interface BalancerState {
  sustainedImbalanceRounds: number;
}

export function initialBalancerState(): BalancerState {
  return { sustainedImbalanceRounds: 0 };
}

/** Auto-rebalance (spec §3.7). */
export function loadBalance(manager: Manager, _state: BalancerState): void {
  if (!manager.crs.autoRebalance) return;
}
