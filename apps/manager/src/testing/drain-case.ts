import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const GIB = 1024 ** 3;

/**
 * A simulator case for drains: `nodes` nodes of 64 cores and 256 GiB, `guests` HA VMs (2 cores
 * and 4 GiB assigned, 1 core and 2 GiB in use) all on node1, the cluster's own balancer off;
 * `max_workers` in datacenter.cfg when given. Returns the case directory.
 */
export function writeDrainCase(nodes: number, guests: number, maxWorkers?: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'poise-drain-case-'));
  const names = Array.from({ length: nodes }, (_, i) => `node${i + 1}`);
  const sids = Array.from({ length: guests }, (_, i) => `vm:${101 + i}`);
  const json = (file: string, value: unknown) => writeFileSync(join(dir, file), JSON.stringify(value, null, 1));
  json('cmdlist', [names.map((n) => `power ${n} on`)]);
  json('datacenter.cfg', { crs: { ha: 'dynamic' }, ...(maxWorkers === undefined ? {} : { max_workers: maxWorkers }) });
  json(
    'hardware_status',
    Object.fromEntries(names.map((n) => [n, { power: 'off', network: 'off', maxcpu: 64, maxmem: 256 * GIB }])),
  );
  json('manager_status', {});
  json('service_config', Object.fromEntries(sids.map((sid) => [sid, { node: names[0], state: 'started' }])));
  json('static_service_stats', Object.fromEntries(sids.map((sid) => [sid, { maxcpu: 2, maxmem: 4 * GIB }])));
  json('dynamic_service_stats', Object.fromEntries(sids.map((sid) => [sid, { cpu: 1, mem: 2 * GIB }])));
  writeFileSync(join(dir, 'README'), `drain case: ${nodes} nodes, ${guests} guests\n`);
  return dir;
}
