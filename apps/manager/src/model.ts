import { ClusterUsage, compareNames, type MigrationCandidate, nodeLoad } from '@poise/usage';
import { errorMessage } from './errors';
import type { ClusterSnapshot, GuestSnapshot, NodeSnapshot } from './port';

/**
 * The usage model of one round: `@poise/usage` with dynamic aggregation (the measured node
 * stats as given) and the normalised imbalance metric (0..1, the pve-9.2 profile), so the
 * threshold and margin are the datacenter.cfg percentages divided by 100.
 */
export interface UsageModel {
  readonly usage: ClusterUsage;
  /** Nodes in the model: online, not in maintenance, with valid stats; byte order. */
  readonly nodes: readonly string[];
  /** Per node in the model: `load` = (cpu/maxcpu + mem/maxmem)/2 and the two ratios. */
  readonly loads: ReadonlyMap<string, { readonly load: number; readonly cpu: number; readonly mem: number }>;
  /** Items left out, one line each (a node or guest with unusable stats); the round goes on without them. */
  readonly problems: readonly string[];
}

/** A node balancing may use: online in the HA sense and not in maintenance. */
export function isUsableNode(node: NodeSnapshot): boolean {
  return node.online && !node.maintenance;
}

/** Whether a guest occupies a node in the model as a resource (running, or an HA resource started or moving). */
function occupies(guest: GuestSnapshot): boolean {
  if (guest.ha) return guest.ha.state === 'started' || guest.ha.state === 'migrate' || guest.ha.state === 'relocate';
  return guest.running;
}

/**
 * Builds the usage model from a snapshot. Nodes that are not usable are left out, and with
 * them their guests; a node or guest whose stats `@poise/usage` refuses is left out and named
 * in `problems` (one bad value never stops the round). A moving HA resource counts on its
 * source and its target.
 */
export function buildUsageModel(snapshot: ClusterSnapshot): UsageModel {
  const usage = new ClusterUsage({ aggregation: 'dynamic', metric: 'normalized' });
  const problems: string[] = [];
  const loads = new Map<string, { load: number; cpu: number; mem: number }>();
  for (const node of snapshot.nodes) {
    if (!isUsableNode(node)) continue;
    try {
      usage.addNode(node.name, { cpu: node.cpu, maxcpu: node.maxcpu, mem: node.mem, maxmem: node.maxmem });
      loads.set(node.name, {
        load: nodeLoad(node.cpu, node.maxcpu, node.mem, node.maxmem),
        cpu: node.cpu / node.maxcpu,
        mem: node.mem / node.maxmem,
      });
    } catch (err) {
      problems.push(`node '${node.name}' left out: ${errorMessage(err)}`);
    }
  }
  for (const guest of snapshot.guests) {
    if (!occupies(guest) || !usage.hasNode(guest.node)) continue;
    const target = guest.ha?.target;
    const moving = target !== undefined && target !== guest.node && usage.hasNode(target) && (guest.ha?.state === 'migrate' || guest.ha?.state === 'relocate');
    try {
      const { cpu, maxcpu, mem, maxmem } = guest.stats;
      usage.addResource(guest.sid, {
        stats: { cpu, maxcpu, mem, maxmem },
        state: 'started',
        placement: moving ? { current: guest.node, target } : { current: guest.node },
      });
    } catch (err) {
      problems.push(`guest '${guest.sid}' left out: ${errorMessage(err)}`);
    }
  }
  return { usage, nodes: usage.nodeNames(), loads, problems };
}

function targetsFrom(snapshot: ClusterSnapshot, source: string): string[] {
  return snapshot.nodes.filter((n) => isUsableNode(n) && n.name !== source).map((n) => n.name).sort(compareNames);
}

function movable(guest: GuestSnapshot, snapshot: ClusterSnapshot): boolean {
  if (guest.lock !== undefined || guest.template) return false;
  const node = snapshot.nodes.find((n) => n.name === guest.node);
  return node !== undefined && isUsableNode(node);
}

/**
 * The balancing candidates among HA resources: every HA resource that is `started` (not moving,
 * not opted out with `auto-rebalance: 0`, not locked) on a usable node is a bundle of its own,
 * with every other usable node as a target. Leaders and targets in byte order.
 *
 * This function does not read `snapshot.rules`: affinity (node affinity and its priority
 * classes, positive resource affinity that bundles resources, negative resource affinity that
 * keeps them apart) is applied by the rules engine, `@poise/rules`, whose candidate function
 * takes this one's place with the same signature.
 */
export function migrationCandidates(snapshot: ClusterSnapshot): MigrationCandidate[] {
  const out: MigrationCandidate[] = [];
  for (const guest of [...snapshot.guests].sort((a, b) => compareNames(a.sid, b.sid))) {
    const ha = guest.ha;
    if (!ha || ha.state !== 'started' || !ha.autoRebalance || !movable(guest, snapshot)) continue;
    const targets = targetsFrom(snapshot, guest.node);
    if (targets.length === 0) continue;
    out.push({ leader: guest.sid, resources: [guest.sid], targets });
  }
  return out;
}

/**
 * The balancing candidates among guests that are not HA resources (balanced only when
 * `guests.non-ha` is on): running, not locked, not templates, on a usable node; each alone,
 * every other usable node a target. The guest migrate endpoint's precondition check runs on
 * the chosen one before it is moved.
 */
export function nonHaCandidates(snapshot: ClusterSnapshot): MigrationCandidate[] {
  const out: MigrationCandidate[] = [];
  for (const guest of [...snapshot.guests].sort((a, b) => compareNames(a.sid, b.sid))) {
    if (guest.ha || !guest.running || !movable(guest, snapshot)) continue;
    const targets = targetsFrom(snapshot, guest.node);
    if (targets.length === 0) continue;
    out.push({ leader: guest.sid, resources: [guest.sid], targets });
  }
  return out;
}

/**
 * Candidates restricted to what the usage model holds (a node or guest left out for bad stats
 * cannot be scored); a candidate without a remaining target is dropped.
 */
export function restrictToModel(candidates: readonly MigrationCandidate[], model: UsageModel): MigrationCandidate[] {
  const out: MigrationCandidate[] = [];
  for (const c of candidates) {
    if (!c.resources.every((sid) => model.usage.hasResource(sid))) continue;
    const targets = c.targets.filter((t) => model.usage.hasNode(t));
    if (targets.length > 0) out.push(targets.length === c.targets.length ? c : { ...c, targets });
  }
  return out;
}

/**
 * Whether a motion is queued or running anywhere in the cluster (an HA resource in
 * `migrate`/`relocate`, or a guest locked by a migration). Queued CRM commands are not
 * visible through the API; the daemon's own motion record covers those it issued.
 */
export function clusterMotionInFlight(snapshot: ClusterSnapshot): boolean {
  return snapshot.guests.some((g) => g.ha?.state === 'migrate' || g.ha?.state === 'relocate' || g.lock === 'migrate');
}
