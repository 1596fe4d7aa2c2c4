import { describeCondition, unsettledReasons } from '../cluster/condition';
import type { ClusterSnapshot, NodeCondition } from '../cluster/port';
import type { DaemonContext } from './context';
import type { PartialReport } from './report';

/**
 * What the daemon watches of the cluster between rounds beyond the balance: each node's
 * condition (a line when a node goes offline, fails, is fenced, enters or leaves maintenance,
 * or comes back) and whether the cluster is settled. While a node has failed or an HA service
 * is in a transitional state poise did not cause, and for `limits.settle-time` after the last
 * such change, no motion is requested: the HA manager's fencing and recovery must not race a
 * balancing move (a recovery could land on the node a motion was just sent to).
 */
export class ClusterWatch {
  private conditions: Map<string, NodeCondition> | undefined;
  /** Seconds (the daemon's clock) of the last change, and what it was. */
  private lastChange: { readonly at: number; readonly what: string } | undefined;
  private reasons: string[] = [];
  /** Nodes the HA manager has fenced since they were last online or offline. */
  private readonly fenced = new Set<string>();

  constructor(private readonly ctx: DaemonContext) {}

  /** Takes a round's snapshot: logs node changes, notes what keeps the cluster unsettled. `own`: the resources of poise's motion. */
  observe(snapshot: ClusterSnapshot, own: ReadonlySet<string>, now: number): void {
    const first = this.conditions === undefined;
    const before = this.conditions ?? new Map<string, NodeCondition>();
    const after = new Map(snapshot.nodes.map((n) => [n.name, n.condition]));
    const changes: string[] = [];
    for (const [name, condition] of after) {
      const was = before.get(name);
      if (first) {
        if (condition !== 'online') this.logNode(name, condition, undefined);
        continue;
      }
      if (was === condition) continue;
      this.logNode(name, condition, was);
      changes.push(
        condition === 'online'
          ? `node '${name}' back online`
          : `node '${name}' ${condition === 'offline' ? 'offline' : `now ${condition}`}`,
      );
    }
    for (const name of before.keys()) {
      if (after.has(name)) continue;
      this.ctx.log.warn('cluster', `node '${name}' is no longer in the cluster`, { node: name });
      changes.push(`node '${name}' removed`);
    }
    this.conditions = after;
    this.reasons = unsettledReasons(snapshot, own);
    if (this.reasons.length > 0) this.lastChange = { at: now, what: this.reasons.join('; ') };
    else if (changes.length > 0) this.lastChange = { at: now, what: changes.join(', ') };
  }

  private logNode(name: string, condition: NodeCondition, was: NodeCondition | undefined): void {
    const since = was === undefined ? '' : ` (was ${was})`;
    // the HA manager marks a node it has fenced 'unknown' until it rejoins: nothing waits for
    // fencing any more (its services are recovered or being recovered)
    const fenced = condition === 'unknown' && (was === 'fence' || this.fenced.has(name));
    if (condition === 'fence') this.fenced.add(name);
    if (condition === 'online' || condition === 'offline') this.fenced.delete(name);
    const text =
      condition === 'online'
        ? `node '${name}' is back online${since}`
        : fenced
          ? `node '${name}' has been fenced (HA node state 'unknown' until it rejoins; its HA services are recovered on other nodes)${since}`
          : `node '${name}' ${describeCondition(condition)}${since}`;
    const level = condition === 'online' || condition === 'maintenance' ? 'info' : 'warn';
    this.ctx.log.log(level, 'cluster', text, { node: name, condition, ...(was === undefined ? {} : { was }) });
  }

  /** When motions may be requested again (`undefined`: now, or not known while unsettled). */
  private resumeAt(): number | undefined {
    if (this.reasons.length > 0 || this.lastChange === undefined) return undefined;
    return this.lastChange.at + this.ctx.config.limits.settleSeconds;
  }

  /** The skip line while the cluster is not settled; `undefined` when motions may be requested. */
  gate(now: number): PartialReport | undefined {
    const settle = this.ctx.config.limits.settleSeconds;
    if (this.reasons.length > 0) {
      return {
        outcome: 'skip',
        reason: 'not-settled',
        message: `the cluster is not settled: ${this.reasons.join('; ')}; no motion is requested until ${settle} s after the last change`,
      };
    }
    const resume = this.resumeAt();
    if (resume === undefined || now >= resume) return undefined;
    return {
      outcome: 'skip',
      reason: 'settling',
      message: `the cluster is settling: the last change (${this.lastChange!.what}) was ${Math.round(now - this.lastChange!.at)} s ago; motions resume at ${this.ctx.timeText(resume)} (limits.settle-time ${settle} s)`,
    };
  }

  /** For `/status`. */
  status(now: number): Record<string, unknown> {
    const resume = this.resumeAt();
    return {
      settled: this.reasons.length === 0 && (resume === undefined || now >= resume),
      reasons: this.reasons,
      lastChange: this.lastChange ? { what: this.lastChange.what, at: this.ctx.timeText(this.lastChange.at) } : null,
      resumeAt: resume === undefined || now >= resume ? null : this.ctx.timeText(resume),
      nodes: Object.fromEntries(this.conditions ?? []),
    };
  }
}
