import type { ClusterSnapshot, NodeCondition } from './port';

/** The HA manager's node states that mean the node failed (spec §3.5: `unknown`, `fence`, `gone`). */
const HA_FAILED_STATES: ReadonlySet<string> = new Set(['unknown', 'fence', 'gone']);

/**
 * A node's condition from what the adapters read: its cluster membership (`up`), the HA
 * manager's node state (`undefined` without HA), and whether maintenance is requested. An HA
 * failure state wins over the membership (a node being fenced is `fence`, not `offline`); a node
 * that is down without one is `offline`; a state this build does not know is `unknown`.
 */
export function nodeCondition(up: boolean, haState: string | undefined, maintenance: boolean): NodeCondition {
  if (haState !== undefined && HA_FAILED_STATES.has(haState)) return haState as NodeCondition;
  if (!up) return 'offline';
  if (maintenance || haState === 'maintenance') return 'maintenance';
  if (haState === undefined || haState === 'online') return 'online';
  return 'unknown';
}

/** Whether a node of this condition has failed (not `online`, not in `maintenance`). */
export function nodeFailed(condition: NodeCondition): boolean {
  return condition !== 'online' && condition !== 'maintenance';
}

/** A node condition in words, for the log (`is offline`, `is being fenced (HA state fence)`). */
export function describeCondition(condition: NodeCondition): string {
  switch (condition) {
    case 'online':
      return 'is online';
    case 'maintenance':
      return 'is in maintenance';
    case 'offline':
      return 'is offline (not in the cluster membership)';
    case 'unknown':
      return "has failed (HA node state 'unknown': its HA services wait for fencing)";
    case 'fence':
      return "is being fenced (HA node state 'fence')";
    case 'gone':
      return "is gone from the cluster (HA node state 'gone')";
  }
}

/**
 * HA service states of a failure or a change under way that poise did not make (spec §3.5): a
 * service waiting for fencing (`fence`), being recovered on another node (`recovery`), frozen
 * by a node shutdown (`freeze`), being placed or started (`request_start`,
 * `request_start_balance`), being stopped (`request_stop`). A motion of someone else
 * (`migrate`, `relocate`) stops the round at the policy's motion-in-flight gate instead.
 */
export const TRANSITIONAL_SERVICE_STATES: ReadonlySet<string> = new Set([
  'fence',
  'recovery',
  'freeze',
  'request_start',
  'request_start_balance',
  'request_stop',
]);

/** A failed node in a reason. */
const FAILED_NODE_PHRASES: Readonly<Record<NodeCondition, string>> = {
  online: 'is online',
  maintenance: 'is in maintenance',
  offline: 'is offline',
  unknown: "has failed (HA state 'unknown')",
  fence: 'is being fenced',
  gone: "is gone (HA state 'gone')",
};

/** Sids named in a reason at most; the rest are counted. */
const MAX_NAMED_SIDS = 4;

/**
 * Why the cluster is not settled now, one phrase each (empty when it is): every failed node,
 * and the HA services in each transitional state (`vm:103, vm:104 in HA state 'recovery'`),
 * except the resources of poise's own motion (`own`). While any reason holds, and for the
 * settle time after the last one, poise requests no motion (the HA manager's fencing and
 * recovery must not race a balancing move).
 */
export function unsettledReasons(snapshot: ClusterSnapshot, own: ReadonlySet<string>): string[] {
  const reasons: string[] = [];
  for (const n of snapshot.nodes)
    if (nodeFailed(n.condition)) reasons.push(`node '${n.name}' ${FAILED_NODE_PHRASES[n.condition]}`);
  const byState = new Map<string, string[]>();
  for (const g of snapshot.guests) {
    const state = g.ha?.state;
    if (state === undefined || !TRANSITIONAL_SERVICE_STATES.has(state) || own.has(g.sid)) continue;
    byState.set(state, [...(byState.get(state) ?? []), g.sid]);
  }
  for (const [state, sids] of byState) {
    const named = sids.slice(0, MAX_NAMED_SIDS).join(', ');
    const more = sids.length > MAX_NAMED_SIDS ? ` and ${sids.length - MAX_NAMED_SIDS} more` : '';
    reasons.push(`${named}${more} in HA state '${state}'`);
  }
  return reasons;
}
