/** Generated clusters for the planner's benchmark (`bench/plan.ts`) and tests (here and in poise-manager's). */
import type { PlanGuest, PlanInput, PlanNode, PlanRule } from '../index';
import { mulberry32 } from '@poise/test-support/prng';

const GIB = 1024 ** 3;

/**
 * A generated cluster: `nodes` nodes of 32–128 cores and 256–1024 GiB, `guests` guests (in all
 * about 40 % of the cluster's cores in use and 55 % of its memory, each between 0.2 and 1.8 times
 * the mean, at most 64 GiB) placed unevenly (a third of the nodes get 1.3 times the share of
 * their size, every node ±15 %), and about `rules` rules the placement satisfies, as HA keeps
 * them: 40 % node affinity (2–5 guests of one node to a list holding that node, 1–3 others,
 * half strict, some with the home node preferred), 30 % positive pairs on one node, 30 %
 * negative groups of 3–5 guests on different nodes.
 */
export function generatedCluster(seed: number, nodeCount: number, guestCount: number, ruleCount: number): PlanInput {
  const rnd = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const nodes: PlanNode[] = Array.from(
    { length: nodeCount },
    (_, i): PlanNode => ({
      name: `node${String(i + 1).padStart(3, '0')}`,
      cpuCores: [32, 48, 64, 96, 128][int(0, 4)]!,
      memBytes: [256, 384, 512, 768, 1024][int(0, 4)]! * GIB,
    }),
  );
  const totalMem = nodes.reduce((s, n) => s + n.memBytes, 0);
  const totalCores = nodes.reduce((s, n) => s + n.cpuCores, 0);
  const meanMem = (0.55 * totalMem) / guestCount;
  const meanCpu = (0.4 * totalCores) / guestCount;
  const weights = nodes.map((_, i) => (i % 3 === 0 ? 1.3 : 1) * (0.85 + rnd() * 0.3));
  const capacityWeight = nodes.map((n, i) => weights[i]! * n.memBytes);
  const weightSum = capacityWeight.reduce((a, b) => a + b, 0);
  const guests: PlanGuest[] = [];
  for (let i = 0; i < guestCount; i++) {
    let x = rnd() * weightSum;
    let n = 0;
    while (x > capacityWeight[n]! && n < nodeCount - 1) x -= capacityWeight[n++]!;
    const mem = Math.max(1, Math.min(64, Math.round((meanMem / GIB) * (0.2 + 1.6 * rnd())))) * GIB;
    guests.push({
      id: `vm:${100000 + i}`,
      kind: 'vm',
      node: nodes[n]!.name,
      ha: true,
      cpu: Math.max(0.1, Math.round(meanCpu * (0.2 + 1.6 * rnd()) * 10) / 10),
      mem,
    });
  }
  // rules the current placement satisfies (HA keeps them): affinity to a list that holds the
  // guests' node at the top priority, pairs on one node, groups on pairwise different nodes
  const rules: PlanRule[] = [];
  const used = new Set<number>();
  const byNode = new Map<string, number[]>();
  guests.forEach((g, i) => byNode.set(g.node, [...(byNode.get(g.node) ?? []), i]));
  const freshOn = (node: string): number | undefined => {
    const list = byNode.get(node) ?? [];
    for (let tries = 0; tries < 20; tries++) {
      const g = list[int(0, list.length - 1)];
      if (g !== undefined && !used.has(g)) {
        used.add(g);
        return g;
      }
    }
    return undefined;
  };
  const someNode = () => nodes[int(0, nodeCount - 1)]!.name;
  for (let r = 0; r < ruleCount; r++) {
    const t = rnd();
    if (t < 0.4) {
      const home = someNode();
      const members = Array.from({ length: int(2, 5) }, () => freshOn(home)).filter(
        (g): g is number => g !== undefined,
      );
      const others = [...new Set(Array.from({ length: int(1, 3) }, someNode))].filter((n) => n !== home);
      const prioritised = rnd() < 0.3;
      if (members.length > 0) {
        rules.push({
          id: `affinity-${r}`,
          type: 'node-affinity',
          resources: members.map((g) => guests[g]!.id),
          nodes: [{ node: home, priority: prioritised ? 1 : 0 }, ...others.map((node) => ({ node, priority: 0 }))],
          strict: rnd() < 0.5,
        });
      }
    } else if (t < 0.7) {
      const home = someNode();
      const a = freshOn(home);
      const b = freshOn(home);
      if (a !== undefined && b !== undefined)
        rules.push({
          id: `together-${r}`,
          type: 'resource-affinity',
          affinity: 'positive',
          resources: [guests[a]!.id, guests[b]!.id],
        });
    } else {
      const spread = [...new Set(Array.from({ length: int(3, 5) }, someNode))];
      const members = spread.map(freshOn).filter((g): g is number => g !== undefined);
      if (members.length >= 2)
        rules.push({
          id: `apart-${r}`,
          type: 'resource-affinity',
          affinity: 'negative',
          resources: members.map((g) => guests[g]!.id),
        });
    }
  }
  return { nodes, guests, rules };
}
