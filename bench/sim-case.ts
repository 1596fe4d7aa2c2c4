/**
 * Writes simulator case directories for whole-system measurements (never run by tests):
 *
 * - `seed3`: the seed-003 workload (3 nodes, static CRS, rebalance on start, homogeneous guests
 *   spread round-robin and all configured to start; one command list, so 31 rounds) at any size;
 * - `dynamic`: a large cluster in dynamic mode with auto-rebalance: mixed node sizes, guests of
 *   mixed sizes placed skewed (a few hot nodes), already running with measured usage.
 *
 * `until` (seconds) appends empty command lists and a last `delay 0` so that the run lasts at
 * least that long (the simulation ends 500–600 s after the last command).
 *
 *   pnpm tsx bench/sim-case.ts <out-dir> [services=9000] [nodes=3]
 *   pnpm tsx bench/sim-case.ts --dynamic <out-dir> [services=5000] [nodes=64]
 *   pnpm tsx bench/sim-case.ts --rules <out-dir> [services=9000] [nodes=3]   (seed3 + services rules)
 *   /usr/bin/time -v pnpm poise-sim run <out-dir> > /dev/null
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { mulberry32 as prng } from '../tools/test-support/prng';

const GIB = 1024 ** 3;

/** Command lists that power every node on at 20 and, with `until`, keep the run going that long. */
function commandLists(names: readonly string[], until: number | undefined): string[][] {
  const lists: string[][] = [names.map((n) => `power ${n} on`)];
  if (until !== undefined) {
    // list k runs at 20 + 100·k; the run ends at the first slot > 500 s after the last command
    const last = Math.max(1, Math.ceil((until - 500 - 20) / 100));
    for (let k = 1; k < last; k++) lists.push([]);
    lists.push(['delay 0']);
  }
  return lists;
}

/**
 * HA rules over the seed-003 services, two per pair of services (vm:100+2p, vm:101+2p): a
 * positive resource affinity and a (non-strict) node affinity to node p mod nodes. Both are
 * feasible together, so every rule survives the checks.
 */
function pairRules(services: number, names: readonly string[]): string {
  const out: string[] = [];
  for (let p = 0; 2 * p + 1 < services; p++) {
    const pair = `vm:${100 + 2 * p},vm:${101 + 2 * p}`;
    out.push(`resource-affinity: together${p}\n\tresources ${pair}\n\taffinity positive\n`);
    out.push(`node-affinity: prefer${p}\n\tnodes ${names[p % names.length]}\n\tresources ${pair}\n`);
  }
  return out.join('\n');
}

export function writeSeed3Case(dir: string, services: number, nodes = 3, until?: number, rules = false): void {
  mkdirSync(dir, { recursive: true });
  const names = Array.from({ length: nodes }, (_, i) => `node${i + 1}`);
  const hw: Record<string, unknown> = {};
  for (const n of names) hw[n] = { power: 'off', network: 'off', maxcpu: 32, maxmem: 256 * GIB };
  const sc: Record<string, unknown> = {};
  const stats: Record<string, unknown> = {};
  for (let k = 0; k < services; k++) {
    const sid = `vm:${100 + k}`;
    sc[sid] = { node: names[k % nodes], state: 'started' };
    stats[sid] = { maxcpu: 2, maxmem: 2 * GIB };
  }
  writeFileSync(join(dir, 'hardware_status'), JSON.stringify(hw));
  writeFileSync(join(dir, 'service_config'), JSON.stringify(sc));
  writeFileSync(join(dir, 'static_service_stats'), JSON.stringify(stats));
  if (rules) writeFileSync(join(dir, 'rules_config'), pairRules(services, names));
  writeFileSync(join(dir, 'datacenter.cfg'), JSON.stringify({ crs: { ha: 'static', 'ha-rebalance-on-start': 1 } }));
  writeFileSync(join(dir, 'cmdlist'), JSON.stringify(commandLists(names, until)));
}

/**
 * `nodes` nodes of mixed sizes (32–128 cores, 128–1024 GiB), `services` guests of 1–4 cores and
 * 1–16 GiB using 5–50 % of it, 40 % of them on the first eighth of the nodes; every guest
 * runs where it is placed; dynamic CRS with auto-rebalance above 5 % (normalised imbalance;
 * margin 0.1 %, hold 3 rounds, bruteforce).
 */
export function writeDynamicCase(dir: string, services: number, nodes = 64, until?: number, seed = 5): void {
  mkdirSync(dir, { recursive: true });
  const rand = prng(seed);
  const width = String(nodes).length;
  const names = Array.from({ length: nodes }, (_, i) => `node${String(i + 1).padStart(width, '0')}`);
  const hw: Record<string, unknown> = {};
  for (const n of names)
    hw[n] = {
      power: 'off',
      network: 'off',
      maxcpu: [32, 64, 96, 128][Math.floor(rand() * 4)],
      maxmem: [128, 256, 512, 1024][Math.floor(rand() * 4)]! * GIB,
    };
  const sc: Record<string, unknown> = {};
  const staticStats: Record<string, unknown> = {};
  const dynamicStats: Record<string, unknown> = {};
  const running: Record<string, Record<string, number>> = {};
  for (const n of names) running[n] = {};
  const hot = Math.max(1, Math.floor(nodes / 8));
  for (let k = 0; k < services; k++) {
    const sid = `vm:${1000 + k}`;
    const node = names[rand() < 0.4 ? Math.floor(rand() * hot) : Math.floor(rand() * nodes)]!;
    const maxcpu = [1, 2, 4][Math.floor(rand() * 3)]!;
    const maxmem = [1, 2, 4, 8, 16][Math.floor(rand() * 5)]! * GIB;
    const use = 0.05 + 0.45 * rand();
    sc[sid] = { node, state: 'started' };
    staticStats[sid] = { maxcpu, maxmem };
    dynamicStats[sid] = { cpu: Math.round(maxcpu * use * 100) / 100, mem: Math.floor(maxmem * use) };
    running[node]![sid] = 1;
  }
  writeFileSync(join(dir, 'hardware_status'), JSON.stringify(hw));
  writeFileSync(join(dir, 'service_config'), JSON.stringify(sc));
  writeFileSync(join(dir, 'static_service_stats'), JSON.stringify(staticStats));
  writeFileSync(join(dir, 'dynamic_service_stats'), JSON.stringify(dynamicStats));
  for (const n of names) writeFileSync(join(dir, `service_status_${n}`), JSON.stringify(running[n]));
  writeFileSync(
    join(dir, 'datacenter.cfg'),
    JSON.stringify({
      crs: { ha: 'dynamic', 'ha-auto-rebalance': 1, 'ha-auto-rebalance-threshold': 5, 'ha-auto-rebalance-margin': 0.1 },
    }),
  );
  writeFileSync(join(dir, 'cmdlist'), JSON.stringify(commandLists(names, until)));
}

if (process.argv[1]?.endsWith('sim-case.ts')) {
  const args = process.argv.slice(2);
  const dynamic = args[0] === '--dynamic';
  const rules = args[0] === '--rules';
  const [dir, services, nodes] = dynamic || rules ? args.slice(1) : args;
  if (!dir) {
    console.error('usage: tsx bench/sim-case.ts [--dynamic|--rules] <out-dir> [services] [nodes]');
    process.exit(2);
  }
  if (dynamic) writeDynamicCase(dir, Number(services ?? 5000), Number(nodes ?? 64));
  else writeSeed3Case(dir, Number(services ?? 9000), Number(nodes ?? 3), undefined, rules);
}
