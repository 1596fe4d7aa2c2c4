import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SimError, loadCase } from './index';

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

/** A fresh case directory holding `files` (objects are written as JSON, strings as they are). */
function caseDir(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'poise-sim-case-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

/** The SimError thrown by loading `dir`. */
function loadError(dir: string): SimError {
  try {
    loadCase(dir);
  } catch (err) {
    expect(err).toBeInstanceOf(SimError);
    return err as SimError;
  }
  throw new Error('loadCase did not throw');
}

const ON = { power: 'on', network: 'on' };

describe('loadCase: defaults of spec §1.2 when optional files are absent', () => {
  it('fills in 3 powered-off nodes, 6 VMs round-robin and their stats from a lone cmdlist', () => {
    const dir = caseDir({ cmdlist: [['power node1 on']] });
    const input = loadCase(dir, 'tiny');
    expect(input.name).toBe('tiny');
    expect(input.cmdlist).toEqual([['power node1 on']]);
    // 131072 MiB = 128 GiB
    const node = { power: 'off', network: 'off', maxcpu: 24, maxmem: 131072 * MIB };
    expect(input.hardwareStatus).toEqual({ node1: node, node2: node, node3: node });
    // vm:101+i on node((i mod 3) + 1), no state (read as 'disabled' later)
    expect(input.serviceConfig).toEqual({
      'vm:101': { node: 'node1' },
      'vm:102': { node: 'node2' },
      'vm:103': { node: 'node3' },
      'vm:104': { node: 'node1' },
      'vm:105': { node: 'node2' },
      'vm:106': { node: 'node3' },
    });
    expect(input.managerStatus).toEqual({});
    expect(input.rulesConfig).toBe('');
    expect(input.groups).toBe('');
    expect(input.datacenterCfg).toEqual({ ha: {}, crs: {} });
    for (let i = 101; i <= 106; i++) {
      expect(input.staticServiceStats[`vm:${i}`]).toEqual({ maxcpu: 4, maxmem: 4 * GIB });
      expect(input.dynamicServiceStats[`vm:${i}`]).toEqual({ cpu: 2, mem: 2 * GIB });
    }
    expect(input.serviceStatus).toEqual({ node1: {}, node2: {}, node3: {} });
  });

  it('names the case after its directory by default', () => {
    const dir = caseDir({ cmdlist: [] });
    expect(loadCase(dir).name).toBe(dir);
  });

  it('derives default static stats from the service config, and dynamic ones from the static stats', () => {
    const dir = caseDir({
      cmdlist: [],
      service_config: { 'vm:101': { node: 'node1', state: 'enabled' }, 'ct:102': { node: 'node2' } },
      static_service_stats: { 'vm:101': { maxcpu: 2, maxmem: GIB }, 'vm:999': { maxcpu: 1, maxmem: GIB } },
    });
    const input = loadCase(dir);
    expect(input.staticServiceStats).toEqual({ 'vm:101': { maxcpu: 2, maxmem: GIB }, 'vm:999': { maxcpu: 1, maxmem: GIB } });
    // one default entry per *static* sid: vm:999 gets one, ct:102 (no static stats) does not
    expect(input.dynamicServiceStats).toEqual({ 'vm:101': { cpu: 2, mem: 2 * GIB }, 'vm:999': { cpu: 2, mem: 2 * GIB } });

    const noStatic = loadCase(caseDir({ cmdlist: [], service_config: { 'ct:102': { node: 'node2' } } }));
    expect(noStatic.staticServiceStats).toEqual({ 'ct:102': { maxcpu: 4, maxmem: 4 * GIB } });
  });

  it('reads the optional files it finds', () => {
    const dir = caseDir({
      cmdlist: [['power node1 on'], []],
      hardware_status: { node1: { ...ON, maxcpu: 8, maxmem: 16 * GIB }, node2: { power: 'off', network: 'off' } },
      service_config: { 'vm:101': { node: 'node1', state: 'started' } },
      manager_status: { master_node: 'node1', node_status: { node1: 'online' } },
      rules_config: 'node-affinity: r1\n\tresources vm:101\n\tnodes node1\n',
      groups: 'group: g1\n\tnodes node1\n',
      'datacenter.cfg': { crs: { ha: 'static' } },
      service_status_node1: { 'vm:101': 1 },
    });
    const input = loadCase(dir);
    expect(Object.keys(input.hardwareStatus)).toEqual(['node1', 'node2']);
    expect(input.hardwareStatus.node1!.maxcpu).toBe(8);
    expect(input.managerStatus.master_node).toBe('node1');
    expect(input.rulesConfig).toContain('node-affinity: r1');
    expect(input.groups).toContain('group: g1');
    // a missing section of datacenter.cfg reads as {}
    expect(input.datacenterCfg).toEqual({ ha: {}, crs: { ha: 'static' } });
    expect(input.serviceStatus).toEqual({ node1: { 'vm:101': 1 }, node2: {} });
  });

  it('only reads: the directory is left as it was', () => {
    const dir = caseDir({ cmdlist: [] });
    loadCase(dir);
    expect(loadCase(dir).cmdlist).toEqual([]);
  });
});

describe('loadCase: malformed cases fail with the file and position', () => {
  const cases: Array<{ name: string; files: Record<string, unknown>; message: (dir: string) => string }> = [
    { name: 'missing cmdlist', files: {}, message: (d) => `missing '${join(d, 'cmdlist')}'` },
    { name: 'invalid JSON in cmdlist', files: { cmdlist: '[["power node1 on"' }, message: (d) => `invalid JSON in '${join(d, 'cmdlist')}'` },
    { name: 'cmdlist not an array', files: { cmdlist: { a: 1 } }, message: (d) => `'${join(d, 'cmdlist')}': expected an array of command lists` },
    { name: 'a command list not an array', files: { cmdlist: [[], 'power node1 on'] }, message: (d) => `'${join(d, 'cmdlist')}' [1]: expected an array of commands` },
    { name: 'a command not a string', files: { cmdlist: [['power node1 on', 7]] }, message: (d) => `'${join(d, 'cmdlist')}' [0][1]: expected a command string` },
    {
      name: 'unknown command',
      files: { cmdlist: [['power node1 on'], ['fly node1']] },
      message: (d) => `'${join(d, 'cmdlist')}' [1][0] 'fly node1': unknown command 'fly'`,
    },
    {
      name: 'unknown node (default nodes node1..3)',
      files: { cmdlist: [['power node1 on', 'power node2 on', 'power node4 on']] },
      message: (d) => `'${join(d, 'cmdlist')}' [0][2] 'power node4 on': unknown node 'node4'`,
    },
    {
      name: 'unknown node against hardware_status',
      files: { cmdlist: [['network node3 off']], hardware_status: { node1: ON, node2: ON } },
      message: (d) => `'${join(d, 'cmdlist')}' [0][0] 'network node3 off': unknown node 'node3'`,
    },
    { name: 'invalid JSON in hardware_status', files: { cmdlist: [], hardware_status: '{node1:' }, message: (d) => `invalid JSON in '${join(d, 'hardware_status')}'` },
    { name: 'hardware_status without nodes', files: { cmdlist: [], hardware_status: {} }, message: (d) => `'${join(d, 'hardware_status')}': no nodes` },
    {
      name: 'a bad power state',
      files: { cmdlist: [], hardware_status: { node1: { power: 'maybe', network: 'on' } } },
      message: (d) => `'${join(d, 'hardware_status')}' node1.power: expected one of on, off, got "maybe"`,
    },
    {
      name: 'a bad service id',
      files: { cmdlist: [], service_config: { vm101: { node: 'node1' } } },
      message: (d) => `'${join(d, 'service_config')}' vm101: invalid service id 'vm101'`,
    },
    {
      name: 'a service without node',
      files: { cmdlist: [], service_config: { 'vm:101': { state: 'started' } } },
      message: (d) => `'${join(d, 'service_config')}' vm:101.node: service without assigned node`,
    },
    { name: 'invalid JSON in datacenter.cfg', files: { cmdlist: [], 'datacenter.cfg': 'crs: ha=static' }, message: (d) => `invalid JSON in '${join(d, 'datacenter.cfg')}'` },
    { name: 'manager_status not an object', files: { cmdlist: [], manager_status: [1] }, message: (d) => `'${join(d, 'manager_status')}': expected a JSON object` },
    {
      name: 'invalid JSON in a service_status file',
      files: { cmdlist: [], service_status_node2: 'x' },
      message: (d) => `invalid JSON in '${join(d, 'service_status_node2')}'`,
    },
  ];
  it.each(cases)('$name', ({ files, message }) => {
    const dir = caseDir(files);
    const err = loadError(dir);
    expect(err.name).toBe('SimError');
    expect(err.code).toBe('bad-case');
    expect(err.message).toContain(message(dir));
  });

  it('keeps the JSON parser error as the cause', () => {
    const err = loadError(caseDir({ cmdlist: '[' }));
    expect(err.cause).toBeInstanceOf(SyntaxError);
  });
});
