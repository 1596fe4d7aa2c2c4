import { describe, expect, it } from 'vitest';
import { SimError, Simulation, simulate, type CaseInput } from './index';
import { CONCURRENT_MIN_NODES, resolveRoundModel } from './round-model';

const GIB = 1024 ** 3;

/** `nodes` nodes (node01, node02, ...), two services per node, all to be started; power on at 20. */
function cluster(nodes: number, extraCommands: string[][] = []): CaseInput {
  const names = Array.from({ length: nodes }, (_, i) => `node${String(i + 1).padStart(2, '0')}`);
  const hardwareStatus: CaseInput['hardwareStatus'] = {};
  const serviceStatus: CaseInput['serviceStatus'] = {};
  for (const n of names) {
    hardwareStatus[n] = { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GIB };
    serviceStatus[n] = {};
  }
  const serviceConfig: CaseInput['serviceConfig'] = {};
  const staticServiceStats: CaseInput['staticServiceStats'] = {};
  names.forEach((n, i) => {
    for (const k of [0, 1]) {
      const sid = `vm:${100 + 2 * i + k}`;
      serviceConfig[sid] = { node: n, state: 'started' };
      staticServiceStats[sid] = { maxcpu: 2, maxmem: 4 * GIB };
    }
  });
  return {
    name: `${nodes}-nodes`,
    cmdlist: [names.map((n) => `power ${n} on`), ...extraCommands],
    hardwareStatus,
    serviceConfig,
    managerStatus: {},
    rulesConfig: '',
    groups: '',
    datacenterCfg: { ha: {}, crs: { ha: 'static' } },
    staticServiceStats,
    dynamicServiceStats: {},
    serviceStatus,
  };
}

/** Log lines as [time, id, message]. */
function lines(log: string): [number, string, string][] {
  return log
    .trimEnd()
    .split('\n')
    .map((l) => {
      const m = /^\S+\s+(\d+)\s+(\S+): (.*)$/.exec(l)!;
      return [Number(m[1]), m[2]!, m[3]!];
    });
}

describe('round model', () => {
  it('is chosen by profile and node count unless asked for', () => {
    // table: profile, nodes, requested → model
    expect(resolveRoundModel('pve-5.2.0', 3)).toBe('reference');
    expect(resolveRoundModel('pve-5.2.0', 64)).toBe('reference'); // and it aborts, as the reference does
    expect(resolveRoundModel('pve-9.2', 29)).toBe('reference');
    expect(resolveRoundModel('pve-9.2', CONCURRENT_MIN_NODES)).toBe('concurrent');
    expect(resolveRoundModel('pve-9.2', 3, 'concurrent')).toBe('concurrent');
    expect(resolveRoundModel('pve-9.2', 64, 'reference')).toBe('reference');
    expect(CONCURRENT_MIN_NODES).toBe(30);
  });

  it('refuses concurrent under pve-5.2.0 and unknown models, naming them', () => {
    expect(() => resolveRoundModel('pve-5.2.0', 3, 'concurrent')).toThrow(
      /round model 'concurrent' needs the 'pve-9.2' profile/,
    );
    expect(() => new Simulation(cluster(3), { profile: 'pve-5.2.0', roundModel: 'concurrent' })).toThrow(SimError);
    expect(() => resolveRoundModel('pve-9.2', 3, 'parallel' as 'concurrent')).toThrow(/unknown round model 'parallel'/);
  });

  it('keeps the reference harness under pve-5.2.0: 30 nodes abort with too many nodes', () => {
    const { log, error } = simulate(cluster(30), { profile: 'pve-5.2.0' });
    expect(error).toBe('too many nodes');
    expect(log).toContain('err       0     hardware: exit simulation - too many nodes ');
  });

  it('keeps the reference layout below 30 nodes under pve-9.2 (node after node, 2 s per node)', () => {
    const sim = new Simulation(cluster(12), { profile: 'pve-9.2' });
    expect(sim.roundModel).toBe('reference');
    for (let i = 0; i < 3; i++) sim.step();
    // round 2 starts at 24 (12 nodes: 24 s rounds); node k's CRM runs at 24 + 2(k-1), its LRM one second later
    const byId = new Map<string, number>();
    // (a daemon started by the power-on at 24 logs its first state change then, in the slot)
    for (const [t, id, msg] of lines(sim.log()))
      if (t >= 24 && t < 48 && !msg.startsWith('status change startup') && !byId.has(id)) byId.set(id, t);
    expect(byId.get('node01/crm')).toBe(24);
    expect(byId.get('node01/lrm')).toBe(25);
    expect(byId.get('node05/crm')).toBe(32);
    expect(byId.get('node12/lrm')).toBe(47);
  });

  it('runs 64 nodes under pve-9.2 in 20 s rounds: every CRM at T, every LRM at T+1', () => {
    const sim = new Simulation(cluster(64), { profile: 'pve-9.2' });
    expect(sim.roundModel).toBe('concurrent');
    for (let i = 0; i < 4; i++) expect(sim.step()).toBe(true);
    expect(sim.time).toBe(80);
    // (daemons started by the power-on at 20 log their first state change in that slot)
    const daemonLines = lines(sim.log()).filter(
      ([, id, msg]) => id.includes('/') && !msg.startsWith('status change startup'),
    );
    for (const [t, id] of daemonLines) {
      // round starts at 20, 40, 60: CRM lines at T, LRM lines at T + 1
      expect(t % 20).toBe(id.endsWith('/crm') ? 0 : 1);
    }
    // the log stays in time order
    const times = lines(sim.log()).map(([t]) => t);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    // one master, which adds all 128 services in its first round; at 60 they all run
    const { log } = { log: sim.log() };
    expect(log.match(/status change slave => master|status change wait_for_quorum => master/g)).toHaveLength(1);
    const view = sim.view();
    expect([...view.services.values()].filter((s) => s.running)).toHaveLength(128);
    expect(Object.values(view.managerStatus.service_status!).every((s) => s.state === 'started')).toBe(true);
  });

  it('a node that fails is fenced and its services recovered in the concurrent model too', () => {
    const input = cluster(32, [['network node05 off']]);
    const { log, error } = simulate(input, { profile: 'pve-9.2' });
    expect(error).toBeUndefined();
    // the node's watchdog expires (its LRM lost the agent lock), the master fences it and
    // recovers both of its services elsewhere
    expect(log).toMatch(/hardware: server 'node05' stopped by poweroff \(watchdog\)/);
    // the poweroff's lines carry the hardware's time (the log stays in time order)
    const times = lines(log).map(([t]) => t);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(log).toMatch(/node\d\d\/crm: recover service 'vm:108' from fenced node 'node05' to node 'node\d\d'/);
    expect(log).toMatch(/node\d\d\/crm: recover service 'vm:109' from fenced node 'node05' to node 'node\d\d'/);
  });
});
