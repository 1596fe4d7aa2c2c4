/**
 * Writes a simulator case directory for whole-simulator measurements (never run by tests):
 * the seed-003 workload (3 nodes, static CRS, rebalance on start, homogeneous guests spread
 * round-robin and all configured to start; one command list, so 31 rounds) at any size.
 *
 *   pnpm tsx bench/sim-case.ts <out-dir> [services=9000] [nodes=3]
 *   /usr/bin/time -v pnpm poise-sim run <out-dir> > /dev/null
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

const GIB = 1024 ** 3;

export function writeSeed3Case(dir: string, services: number, nodes = 3): void {
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
  writeFileSync(join(dir, 'datacenter.cfg'), JSON.stringify({ crs: { ha: 'static', 'ha-rebalance-on-start': 1 } }));
  writeFileSync(join(dir, 'cmdlist'), JSON.stringify([names.map((n) => `power ${n} on`)]));
}

if (process.argv[1]?.endsWith('sim-case.ts')) {
  const [dir, services = '9000', nodes = '3'] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: tsx bench/sim-case.ts <out-dir> [services=9000] [nodes=3]');
    process.exit(2);
  }
  writeSeed3Case(dir, Number(services), Number(nodes));
}
