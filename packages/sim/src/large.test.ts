import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Simulation, loadCase } from './index';

// A cluster far beyond the reference's test cases: 20,000 services on 3 nodes (the seed-003
// workload: static scheduler, rebalance on start, all configured to start at once). It must
// load and run; the assertions are on results, never on time.
const SERVICES = 20_000;
const GIB = 1024 ** 3;
const root = mkdtempSync(join(tmpdir(), 'poise-sim-large-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function writeCase(): string {
  const nodes = ['node1', 'node2', 'node3'];
  const hw: Record<string, unknown> = {};
  for (const n of nodes) hw[n] = { power: 'off', network: 'off', maxcpu: 32, maxmem: 256 * GIB };
  const sc: Record<string, unknown> = {};
  const stats: Record<string, unknown> = {};
  for (let k = 0; k < SERVICES; k++) {
    sc[`vm:${100 + k}`] = { node: nodes[k % 3], state: 'started' };
    stats[`vm:${100 + k}`] = { maxcpu: 2, maxmem: 2 * GIB };
  }
  writeFileSync(join(root, 'hardware_status'), JSON.stringify(hw));
  writeFileSync(join(root, 'service_config'), JSON.stringify(sc));
  writeFileSync(join(root, 'static_service_stats'), JSON.stringify(stats));
  writeFileSync(join(root, 'datacenter.cfg'), JSON.stringify({ crs: { ha: 'static', 'ha-rebalance-on-start': 1 } }));
  writeFileSync(join(root, 'cmdlist'), JSON.stringify([nodes.map((n) => `power ${n} on`)]));
  return root;
}

describe('a 20,000-service cluster', () => {
  it('loads, places and starts every service within a few rounds', () => {
    const input = loadCase(writeCase(), 'large');
    expect(Object.keys(input.serviceConfig)).toHaveLength(SERVICES);
    const sim = new Simulation(input, { profile: 'pve-9.2' });
    // round 1 ends at 20 with the power-on; in round 2 (from 20) the master adds every service
    // and picks its start node (2/3 of them move), in round 3 (from 40) they are started where
    // they landed; round 4 changes nothing
    for (let round = 0; round < 4; round++) expect(sim.step()).toBe(true);
    expect(sim.time).toBe(80);
    const view = sim.view();
    const ss = view.managerStatus.service_status!;
    expect(Object.keys(ss)).toHaveLength(SERVICES);
    const perNode = new Map<string, number>();
    let running = 0;
    for (const [sid, s] of view.services) {
      expect(ss[sid]!.state).toBe('started');
      expect(ss[sid]!.node).toBe(s.node);
      if (s.running) running++;
      perNode.set(s.node, (perNode.get(s.node) ?? 0) + 1);
    }
    expect(running).toBe(SERVICES);
    // identical services on identical nodes: start placement spreads them evenly
    expect([...perNode.values()].every((n) => Math.abs(n - SERVICES / 3) <= 1)).toBe(true);
    expect(sim.log()).not.toContain('got unexpected error');
  });
});
