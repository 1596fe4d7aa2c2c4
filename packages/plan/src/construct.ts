import { type Problem, costAt } from './model';
import { CAPACITY_SLACK } from './objective';

/**
 * A first assignment that satisfies every hard constraint, close to the current placement:
 * every unit stays where it is when it may; units that may not (their node is not usable or
 * breaks their rules, a negative partner shares the node, the node is over its limits) are
 * evicted, cheapest first, and placed again, hardest first (fewest allowed nodes, then largest),
 * on the node where the node's weighted utilisation after is lowest; a unit that fits nowhere
 * makes room by moving one unit of a node it may use elsewhere. `undefined` when that fails
 * (the exact search decides then).
 */
export function constructAssignment(p: Problem): Int32Array | undefined {
  const N = p.nodeNames.length;
  const U = p.units.length;
  const assign = new Int32Array(U).fill(-1);
  const mem = Float64Array.from(p.fixMem);
  const cores = Float64Array.from(p.fixCores);
  const cpu = Float64Array.from(p.fixCpu);
  const limMem = p.limMem.map((l) => l + CAPACITY_SLACK * l);
  const limCores = p.limCores.map((l) => l + CAPACITY_SLACK * l);
  const onNode: number[][] = Array.from({ length: N }, () => []);
  const put = (u: number, n: number) => {
    assign[u] = n;
    mem[n]! += p.unitMem[u]!;
    cores[n]! += p.unitCores[u]!;
    cpu[n]! += p.unitCpu[u]!;
    onNode[n]!.push(u);
  };
  const take = (u: number) => {
    const n = assign[u]!;
    assign[u] = -1;
    mem[n]! -= p.unitMem[u]!;
    cores[n]! -= p.unitCores[u]!;
    cpu[n]! -= p.unitCpu[u]!;
    const list = onNode[n]!;
    list.splice(list.indexOf(u), 1);
  };
  const conflict = (u: number, n: number) => {
    for (const v of p.negatives[u]!) if (assign[v] === n) return true;
    return false;
  };
  const fitsOn = (u: number, n: number) =>
    p.allowed[u * N + n] === 1 &&
    mem[n]! + p.unitMem[u]! <= limMem[n]! &&
    cores[n]! + p.unitCores[u]! <= limCores[n]! &&
    !conflict(u, n);

  // 1. stay where allowed (largest first, so a negative conflict evicts the smaller one)
  const bySize = Array.from({ length: U }, (_, u) => u).sort(
    (a, b) => p.unitMem[b]! - p.unitMem[a]! || p.unitCpu[b]! - p.unitCpu[a]! || a - b,
  );
  for (const u of bySize) {
    const h = p.home[u]!;
    if (h >= 0 && p.allowed[u * N + h] && !conflict(u, h)) put(u, h);
  }
  // 2. nodes over their limits give up units: one that covers the overflow alone, cheapest; else the largest
  for (let n = 0; n < N; n++) {
    while (mem[n]! > limMem[n]! || cores[n]! > limCores[n]!) {
      const overMem = mem[n]! - limMem[n]!;
      const overCores = cores[n]! - limCores[n]!;
      let pick = -1;
      let pickCost = Infinity;
      for (const u of onNode[n]!) {
        if (p.unitMem[u]! >= overMem && p.unitCores[u]! >= overCores) {
          const c = p.fullCost[u]!;
          if (c < pickCost) {
            pick = u;
            pickCost = c;
          }
        }
      }
      if (pick < 0) {
        let size = -Infinity;
        for (const u of onNode[n]!) {
          const s =
            (overMem > 0 ? p.unitMem[u]! / p.limMem[n]! : 0) + (overCores > 0 ? p.unitCores[u]! / p.limCores[n]! : 0);
          if (s > size) {
            size = s;
            pick = u;
          }
        }
      }
      if (pick < 0) break; // fixed load alone is over: diagnosed before, nothing to evict
      take(pick);
    }
  }
  // 3. place the rest, hardest first
  const rest = Array.from({ length: U }, (_, u) => u)
    .filter((u) => assign[u]! < 0)
    .sort((a, b) => p.allowedList[a]!.length - p.allowedList[b]!.length || p.unitMem[b]! - p.unitMem[a]! || a - b);
  const w = p.input.weights;
  const score = (u: number, n: number) =>
    Math.max(w.cpu * ((cpu[n]! + p.unitCpu[u]!) / p.capCpu[n]!), w.mem * ((mem[n]! + p.unitMem[u]!) / p.capMem[n]!)) +
    costAt(p, u, n);
  for (const u of rest) {
    let best = -1;
    let bestScore = Infinity;
    for (const n of p.allowedList[u]!) {
      if (!fitsOn(u, n)) continue;
      const s = score(u, n);
      if (s < bestScore) {
        best = n;
        bestScore = s;
      }
    }
    if (best < 0) best = makeRoom(u);
    if (best < 0) return undefined;
    put(u, best);
  }
  return assign;

  /** Moves one unit off a node `u` may use so that `u` fits there; the node, or −1. */
  function makeRoom(u: number): number {
    for (const n of p.allowedList[u]!) {
      for (const v of [...onNode[n]!]) {
        take(v);
        if (fitsOn(u, n)) {
          for (const w2 of p.allowedList[v]!) {
            if (w2 === n) continue;
            // v must fit on w2 with u already on n
            put(u, n);
            const ok = fitsOn(v, w2);
            take(u);
            if (ok) {
              put(v, w2);
              return n;
            }
          }
        }
        put(v, n);
      }
    }
    return -1;
  }
}

/**
 * A balanced assignment built from scratch, ignoring where the units are now (longest
 * processing time first: largest unit first, each on the node it leaves least used); a second
 * start for the search, which then takes back the migrations that do not pay. `undefined` when
 * a unit finds no node (the search then starts from {@link constructAssignment} alone).
 */
export function balancedAssignment(p: Problem): Int32Array | undefined {
  const N = p.nodeNames.length;
  const U = p.units.length;
  const w = p.input.weights;
  const assign = new Int32Array(U).fill(-1);
  const mem = Float64Array.from(p.fixMem);
  const cores = Float64Array.from(p.fixCores);
  const cpu = Float64Array.from(p.fixCpu);
  const limMem = p.limMem.map((l) => l + CAPACITY_SLACK * l);
  const limCores = p.limCores.map((l) => l + CAPACITY_SLACK * l);
  let capC = 0;
  let capM = 0;
  for (let n = 0; n < N; n++) {
    if (!p.usable[n]) continue;
    capC += p.capCpu[n]!;
    capM += p.capMem[n]!;
  }
  const share = (u: number) => Math.max((w.cpu * p.unitCpu[u]!) / (capC || 1), (w.mem * p.unitMem[u]!) / (capM || 1));
  const order = Array.from({ length: U }, (_, u) => u).sort((a, b) => share(b) - share(a) || a - b);
  for (const u of order) {
    let best = -1;
    let bestScore = Infinity;
    for (const n of p.allowedList[u]!) {
      if (mem[n]! + p.unitMem[u]! > limMem[n]! || cores[n]! + p.unitCores[u]! > limCores[n]!) continue;
      let clash = false;
      for (const v of p.negatives[u]!) if (assign[v] === n) clash = true;
      if (clash) continue;
      const s = Math.max(
        w.cpu * ((cpu[n]! + p.unitCpu[u]!) / p.capCpu[n]!),
        w.mem * ((mem[n]! + p.unitMem[u]!) / p.capMem[n]!),
      );
      if (s < bestScore) {
        bestScore = s;
        best = n;
      }
    }
    if (best < 0) return undefined;
    assign[u] = best;
    mem[best]! += p.unitMem[u]!;
    cores[best]! += p.unitCores[u]!;
    cpu[best]! += p.unitCpu[u]!;
  }
  return assign;
}
