import type { Env } from '@poise/env';
import { own } from './tools';
import { compareNames } from '@poise/usage';

/** Seconds a node must be offline before its services are fenced. */
const FENCE_DELAY_SECONDS = 60;
/** Seconds a vanished node stays 'gone' before it is forgotten. */
const GONE_NODE_DELETE_SECONDS = 3600;

/**
 * The master's view of node health (persisted in the manager status as `node_status`), with
 * the in-memory time each node was last seen online.
 */
export class NodeStatus {
  private readonly lastOnline = new Map<string, number>();

  constructor(
    private readonly env: Env,
    /** The persisted `node_status` map (a null-prototype object the manager owns); updated in place. */
    readonly status: Record<string, string>,
  ) {}

  /** Nodes known to the status, in byte order. */
  listNodes(): string[] {
    return Object.keys(this.status).sort(compareNames);
  }

  /** Nodes in state 'online' (not maintenance), in byte order. */
  listOnlineNodes(): string[] {
    return this.listNodes().filter((n) => this.status[n] === 'online');
  }

  getNodeState(node: string): string {
    const state = own(this.status, node);
    if (state !== undefined) return state;
    this.status[node] = 'unknown';
    return 'unknown';
  }

  /** Online or in maintenance: the node runs an LRM the master can talk to. */
  nodeIsOperational(node: string): boolean {
    const s = this.getNodeState(node);
    return s === 'online' || s === 'maintenance';
  }

  nodeIsOnline(node: string): boolean {
    return this.getNodeState(node) === 'online';
  }

  /**
   * Undefined when the node is online (maintenance counts as offline); otherwise whether it has been offline for at
   * least `FENCE_DELAY_SECONDS`. A node never seen is counted from now.
   */
  nodeIsOfflineDelayed(node: string, delay = FENCE_DELAY_SECONDS): boolean | undefined {
    const now = this.env.getTime();
    if (this.nodeIsOnline(node)) return undefined;
    const last = this.lastOnline.get(node);
    if (last === undefined) {
      this.lastOnline.set(node, now);
      return false;
    }
    return now - last >= delay;
  }

  private setNodeState(node: string, state: string): void {
    const old = own(this.status, node);
    if (old === state) return;
    this.env.log('info', `node '${node}': state changed from '${old ?? 'unknown'}' => '${state}'\n`);
    this.status[node] = state;
  }

  /** Folds the cluster membership and the LRM modes into the node states. */
  update(
    nodeInfo: { readonly [node: string]: { readonly online: boolean } },
    lrmModes: { readonly [node: string]: string | undefined },
  ): void {
    const now = this.env.getTime();
    for (const node of Object.keys(nodeInfo).sort(compareNames)) {
      const d = nodeInfo[node]!;
      if (!d.online) continue;
      this.lastOnline.set(node, now);
      const state = this.getNodeState(node);
      const mode = own(lrmModes, node);
      if (state === 'unknown' || state === 'gone') {
        this.setNodeState(node, 'online');
      } else if (state === 'online' && mode === 'maintenance') {
        this.setNodeState(node, 'maintenance');
      } else if (state === 'maintenance' && mode !== 'maintenance') {
        this.setNodeState(node, 'online');
      }
      // fence: stays until fencing succeeded
    }

    for (const node of this.listNodes()) {
      const d = own(nodeInfo, node);
      if (d?.online) continue;
      const state = this.getNodeState(node);
      if (state === 'online') {
        this.setNodeState(node, 'unknown');
      } else if (state === 'maintenance') {
        if (own(lrmModes, node) !== 'maintenance') this.setNodeState(node, 'unknown');
      } else if (state === 'unknown') {
        if (!d) this.setNodeState(node, 'gone');
      } else if (state === 'gone') {
        const last = this.lastOnline.get(node);
        if (last !== undefined && now - last >= GONE_NODE_DELETE_SECONDS) {
          delete this.status[node];
          this.lastOnline.delete(node);
        }
      }
    }
  }

  /**
   * Fences `node`: marks it, announces it, and succeeds once the master holds the node's agent
   * lock (its LRM lost it, so its watchdog fired or will fire).
   */
  fenceNode(node: string): boolean {
    const state = this.getNodeState(node);
    if (state !== 'fence') {
      this.setNodeState(node, 'fence');
      this.env.sendNotification('FENCE', `Try to fence node '${node}'`);
    }
    if (this.env.getHaAgentLock(node)) {
      const msg = `fencing: acknowledged - got agent lock for node '${node}'`;
      this.env.log('info', msg);
      this.setNodeState(node, 'unknown');
      this.env.sendNotification('SUCCEED', msg);
      return true;
    }
    return false;
  }
}
