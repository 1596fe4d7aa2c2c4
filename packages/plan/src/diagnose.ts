import { type Problem, GIB, listText } from './model';
import { fits } from './objective';
import { type ExactResult, findFeasible } from './exact';

const gib = (bytes: number) => `${(bytes / GIB).toFixed(1)} GiB`;
const cores = (n: number) => `${Number.isInteger(n) ? n : n.toFixed(1)}`;

/**
 * Infeasibility that simple counting proves, in words an operator can act on: more memory (or
 * assigned cores) than the usable nodes allow in total, a node over its limits with what cannot
 * leave it, a guest larger than any node it may use, a negative-affinity rule with more members
 * than nodes they may use. Empty when none applies (the input may still be infeasible: the
 * search decides then).
 */
export function countingReasons(p: Problem): string[] {
  const N = p.nodeNames.length;
  const U = p.units.length;
  const out: string[] = [];
  const headroom = p.input.memoryHeadroomPercent;
  const ratio = p.input.cpuOvercommitRatio;
  const usableNames: string[] = [];
  let needMem = 0;
  let haveMem = 0;
  let needCores = 0;
  let haveCores = 0;
  for (let n = 0; n < N; n++) {
    if (!p.usable[n]) continue;
    usableNames.push(p.nodeNames[n]!);
    needMem += p.fixMem[n]!;
    haveMem += p.limMem[n]!;
    needCores += p.fixCores[n]!;
    haveCores += p.limCores[n]!;
    if (!fits(p.fixMem[n]!, p.limMem[n]!)) {
      out.push(
        `${p.nodeNames[n]}: what cannot leave it uses ${gib(p.fixMem[n]!)} of memory, its limit is ${gib(p.limMem[n]!)}${headroom > 0 ? ` (${headroom} % headroom)` : ''}`,
      );
    }
    if (!fits(p.fixCores[n]!, p.limCores[n]!)) {
      out.push(
        `${p.nodeNames[n]}: the guests that cannot leave it have ${cores(p.fixCores[n]!)} cores assigned, the limit is ${cores(p.limCores[n]!)} (${ratio} × ${cores(p.capCpu[n]!)} cores)`,
      );
    }
  }
  for (let u = 0; u < U; u++) {
    needMem += p.unitMem[u]!;
    needCores += p.unitCores[u]!;
    let bestMem = -Infinity;
    let bestMemNode = -1;
    let bestCores = -Infinity;
    for (const n of p.allowedList[u]!) {
      if (p.limMem[n]! - p.fixMem[n]! > bestMem) {
        bestMem = p.limMem[n]! - p.fixMem[n]!;
        bestMemNode = n;
      }
      bestCores = Math.max(bestCores, p.limCores[n]! - p.fixCores[n]!);
    }
    const label = p.units[u]!.ids.join(' + ');
    if (bestMemNode >= 0 && !fits(p.unitMem[u]!, bestMem)) {
      out.push(
        `${label} needs ${gib(p.unitMem[u]!)} of memory; the most any node it may use has free is ${gib(Math.max(0, bestMem))} (${p.nodeNames[bestMemNode]})`,
      );
    }
    if (bestMemNode >= 0 && !fits(p.unitCores[u]!, bestCores)) {
      out.push(
        `${label} has ${cores(p.unitCores[u]!)} cores assigned; the most any node it may use allows is ${cores(Math.max(0, bestCores))}`,
      );
    }
  }
  if (usableNames.length > 0 && !fits(needMem, haveMem)) {
    out.push(
      `memory: the guests need ${gib(needMem)}, the usable nodes have ${gib(haveMem)}${headroom > 0 ? ` after the ${headroom} % headroom` : ''} (${listText(usableNames)})`,
    );
  }
  if (usableNames.length > 0 && ratio !== undefined && !fits(needCores, haveCores)) {
    out.push(
      `cpu: the guests have ${cores(needCores)} cores assigned, the usable nodes allow ${cores(haveCores)} (overcommit ${ratio})`,
    );
  }
  for (const rule of p.negativeRules) {
    const nodes = new Set<number>(rule.fixedNodes);
    for (const u of rule.units) for (const n of p.allowedList[u]!) nodes.add(n);
    const need = rule.units.length + rule.fixedNodes.length;
    if (need > nodes.size) {
      const names = [...nodes].sort((a, b) => a - b).map((n) => p.nodeNames[n]!);
      out.push(
        `negative affinity '${rule.id}' needs ${need} nodes, ${nodes.size} ${nodes.size === 1 ? 'is' : 'are'} eligible${names.length > 0 ? ` (${listText(names)})` : ''}`,
      );
    }
  }
  return out;
}

/**
 * Why the exact search found no assignment: which family of constraints is infeasible on its
 * own (memory, assigned cores, negative affinity), else that they are only together.
 */
export function searchReasons(p: Problem, result: ExactResult): string[] {
  if (result.kind === 'unknown') {
    return [
      'no placement that satisfies every constraint was found within the search budget: the constraints are too tight to decide quickly',
    ];
  }
  const largest = Array.from({ length: p.units.length }, (_, u) => u)
    .sort((a, b) => p.unitMem[b]! - p.unitMem[a]! || a - b)
    .slice(0, 3)
    .map((u) => `${p.units[u]!.ids.join(' + ')} ${gib(p.unitMem[u]!)}`);
  const out: string[] = [];
  if (findFeasible(p, { memory: true, cores: false, negatives: false }).kind === 'infeasible') {
    out.push(
      `memory: no split of the guests fits the usable nodes' memory limits, though the total would (the largest: ${listText(largest)})`,
    );
  }
  if (
    p.input.cpuOvercommitRatio !== undefined &&
    findFeasible(p, { memory: false, cores: true, negatives: false }).kind === 'infeasible'
  ) {
    out.push(
      `cpu: no split of the guests' assigned cores fits the usable nodes' limits (overcommit ${p.input.cpuOvercommitRatio})`,
    );
  }
  if (findFeasible(p, { memory: false, cores: false, negatives: true }).kind === 'infeasible') {
    const rules = p.negativeRules.map((r) => `'${r.id}'`);
    out.push(`the negative affinity rules ${listText(rules)} cannot all hold on the nodes their guests may use`);
  }
  if (out.length === 0) {
    out.push(
      `capacity and rules together leave no placement: each alone could be met, but the guests kept apart by negative affinity do not fit the nodes left to them (the largest guests: ${listText(largest)})`,
    );
  }
  return out;
}
