import type { ServiceStatus, Snapshot } from '@poise/env';
import { CURRENT_NODE_STATES, TARGET_NODE_STATES } from '@poise/rules';

/**
 * The manager's model of where services put load, rebuilt at the start of a round and then
 * kept current by every service state change (remove + add). Implementations: basic (service
 * count), static and dynamic (CRS on `@poise/usage`).
 */
export interface OnlineNodeUsage {
  readonly mode: 'basic' | 'static' | 'dynamic';
  /** Online nodes, byte order. */
  listNodes(): string[];
  containsNode(node: string): boolean;
  addServiceUsage(sid: string, sd: Snapshot<ServiceStatus>): void;
  removeServiceUsage(sid: string): void;
  /** Node → score, lower is better, for every node of the usage. */
  scoreNodesToStartService(sid: string): ReadonlyMap<string, number>;
  /** Node imbalance (undefined for basic, which has no load notion). */
  calculateNodeImbalance(): number | undefined;
}

/**
 * The nodes a service occupies in the usage model, and whether it counts as running
 * (reference Usage.pm semantics, the state sets of the rules engine's `getUsedServiceNodes`):
 * stopped and request_start occupy nothing; the current node counts only when it is online,
 * and so does a move's target. Runs for every service every round, so it allocates nothing
 * but its result.
 */
export function serviceUsageNodes(
  sd: Snapshot<ServiceStatus>,
  online: (node: string) => boolean,
): { current?: string; target?: string; running: boolean } {
  const state = sd.state;
  const node = sd.node;
  const target = sd.target;
  const current =
    CURRENT_NODE_STATES.has(state) && node !== undefined && node !== '' && online(node) ? node : undefined;
  const moving =
    TARGET_NODE_STATES.has(state) && target !== undefined && target !== '' && online(target) ? target : undefined;
  const running = state === 'started' ? !!sd.running : current !== undefined;
  return { current, target: moving, running };
}

/** Basic scheduler: a node's score is the number of services on it or moving to it. */
export class BasicUsage implements OnlineNodeUsage {
  readonly mode = 'basic' as const;
  private readonly counts = new Map<string, number>();
  private readonly placed = new Map<string, string[]>();

  constructor(nodes: string[]) {
    for (const n of nodes) this.counts.set(n, 0);
  }

  listNodes(): string[] {
    return [...this.counts.keys()];
  }

  containsNode(node: string): boolean {
    return this.counts.has(node);
  }

  addServiceUsage(sid: string, sd: Snapshot<ServiceStatus>): void {
    this.removeServiceUsage(sid);
    const { current, target } = serviceUsageNodes(sd, (n) => this.counts.has(n));
    const nodes: string[] = [];
    if (current !== undefined) nodes.push(current);
    if (target !== undefined && target !== current) nodes.push(target);
    for (const n of nodes) this.counts.set(n, this.counts.get(n)! + 1);
    if (nodes.length) this.placed.set(sid, nodes);
  }

  removeServiceUsage(sid: string): void {
    const nodes = this.placed.get(sid);
    if (!nodes) return;
    for (const n of nodes) this.counts.set(n, this.counts.get(n)! - 1);
    this.placed.delete(sid);
  }

  scoreNodesToStartService(): ReadonlyMap<string, number> {
    return new Map(this.counts);
  }

  calculateNodeImbalance(): number | undefined {
    return undefined;
  }
}
