/**
 * Test-only stand-in for the simulator: a small seeded model that turns (scenario, variant,
 * seed) into a plausible trace. Three nodes (`nodes: <n>` in the scenario directory's
 * `synthetic.json` changes that), a load random walk, and a balancer that moves when the
 * imbalance passes the variant's `ha-auto-rebalance-threshold` (percent, default 30);
 * `truth: true` adds ground-truth columns as the load pressure model records them (a node's
 * share grows with its load, its guests stall that share of every round). Variant
 * names `explode` (throws) and `wrong-seed` (answers for another seed) test the runner's errors.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizedImbalance } from '@poise/imbalance';
import { Prng, hash32 } from '@poise/sim';
import { TRACE_FORMAT, type RunTrace, type TraceMove } from '../lab/trace';
import type { ScenarioRef } from '../lab/runner';
import type { Variant } from '../lab/variants';

export function runOne(scenario: ScenarioRef, variant: Variant, seed: number): RunTrace {
  if (variant.name === 'explode') throw new Error('synthetic failure');
  const opts = existsSync(join(scenario.dir, 'synthetic.json'))
    ? (JSON.parse(readFileSync(join(scenario.dir, 'synthetic.json'), 'utf8')) as {
        nodes?: number;
        rounds?: number;
        pressure?: boolean;
        truth?: boolean;
        busy?: number;
      })
    : {};
  const nNodes = opts.nodes ?? 3;
  const nRounds = opts.rounds ?? 90;
  const threshold = Number(variant.crs['ha-auto-rebalance-threshold'] ?? 30) / 100;
  const rng = Prng.forStream(seed, `${scenario.name}/${hash32(variant.name)}`);
  const nodes = Array.from({ length: nNodes }, (_, i) => `node${i + 1}`).sort();
  const cpu = nodes.map(() => [] as number[]);
  const mem = nodes.map(() => [] as number[]);
  const pcpu = nodes.map(() => [] as (number | null)[]);
  const none = nodes.map(() => [] as (number | null)[]);
  const online = nodes.map(() => [] as boolean[]);
  const some = nodes.map(() => [] as number[]);
  const stall = nodes.map(() => [] as number[]);
  const zero = nodes.map(() => [] as number[]);
  const time: number[] = [];
  const imbalance: number[] = [];
  const moves: TraceMove[] = [];
  const load = nodes.map(() => rng.uniform(0.05, 0.6));
  const sid = 100;
  let t = 20;
  // busy work so that runs take different times and finish out of order
  let spin = 0;
  for (let k = 0; k < (opts.busy ?? 0) * (1 + (seed % 3)); k++) spin += Math.sqrt(k);
  for (let r = 0; r < nRounds; r++) {
    time.push(t);
    for (let i = 0; i < nNodes; i++) {
      load[i] = Math.min(1.2, Math.max(0, load[i]! + rng.uniform(-0.05, 0.05)));
      cpu[i]!.push(load[i]!);
      mem[i]!.push(Math.min(1, load[i]! * 0.8 + 0.1));
      pcpu[i]!.push(opts.pressure ? (load[i]! > 0.9 ? 30 : r % 7 === 0 ? null : 2) : null);
      none[i]!.push(null);
      online[i]!.push(true);
      some[i]!.push(Math.min(100, load[i]! * load[i]! * 60));
      // 4 guests per node, stalled the node's share of the round (its length is known below)
      stall[i]!.push((4 * 20 * Math.min(100, load[i]! * load[i]! * 60)) / 100);
      zero[i]!.push(0);
    }
    const imb = normalizedImbalance(nodes.map((_, i) => (cpu[i]![r]! + mem[i]![r]!) / 2));
    imbalance.push(imb);
    if (imb > threshold && nNodes > 1) {
      let hi = 0;
      let lo = 0;
      for (let i = 1; i < nNodes; i++) {
        if (load[i]! > load[hi]!) hi = i;
        if (load[i]! < load[lo]!) lo = i;
      }
      const ok = rng.float() < 0.85 ? true : r === nRounds - 1 ? null : false;
      moves.push({
        time: t,
        sid: `vm:${sid + rng.int(5)}`,
        source: nodes[hi]!,
        target: nodes[lo]!,
        ok,
        outcomeAt: ok === null ? null : t + 1,
      });
      if (ok) {
        const delta = (load[hi]! - load[lo]!) / 3;
        load[hi]! -= delta;
        load[lo]! += delta;
      }
    }
    t += 20 + (r % 5 === 4 ? 2 : 0); // a slightly irregular round length
  }
  void spin;
  return {
    format: TRACE_FORMAT,
    scenario: scenario.name,
    variant: variant.name,
    seed: variant.name === 'wrong-seed' ? seed + 1 : seed,
    endTime: t,
    nodes,
    rounds: {
      time,
      imbalance,
      cpu,
      mem,
      online,
      pressureCpu: pcpu,
      pressureMem: none,
      ...(opts.truth
        ? {
            truth: {
              cpuSome: some,
              memSome: zero,
              cpuStall: stall,
              memStall: zero.map((c) => [...c]),
              migrationStall: zero.map((c) => [...c]),
            },
          }
        : {}),
    },
    moves,
  };
}
