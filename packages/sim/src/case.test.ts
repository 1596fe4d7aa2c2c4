import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
      // vm:999 is not configured: a command adds it later
      cmdlist: [['service vm:999 add node1']],
      service_config: { 'vm:101': { node: 'node1', state: 'enabled' }, 'ct:102': { node: 'node2' } },
      static_service_stats: { 'vm:101': { maxcpu: 2, maxmem: GIB }, 'vm:999': { maxcpu: 1, maxmem: GIB } },
    });
    const input = loadCase(dir);
    expect(input.staticServiceStats).toEqual({
      'vm:101': { maxcpu: 2, maxmem: GIB },
      'vm:999': { maxcpu: 1, maxmem: GIB },
    });
    // one default entry per *static* sid: vm:999 gets one, ct:102 (no static stats) does not
    expect(input.dynamicServiceStats).toEqual({
      'vm:101': { cpu: 2, mem: 2 * GIB },
      'vm:999': { cpu: 2, mem: 2 * GIB },
    });

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
    {
      name: 'invalid JSON in cmdlist',
      files: { cmdlist: '[["power node1 on"' },
      message: (d) => `invalid JSON in '${join(d, 'cmdlist')}'`,
    },
    {
      name: 'cmdlist not an array',
      files: { cmdlist: { a: 1 } },
      message: (d) => `'${join(d, 'cmdlist')}': expected an array of command lists`,
    },
    {
      name: 'a command list not an array',
      files: { cmdlist: [[], 'power node1 on'] },
      message: (d) => `'${join(d, 'cmdlist')}' [1]: expected an array of commands`,
    },
    {
      name: 'a command not a string',
      files: { cmdlist: [['power node1 on', 7]] },
      message: (d) => `'${join(d, 'cmdlist')}' [0][1]: expected a command string`,
    },
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
    {
      name: 'invalid JSON in hardware_status',
      files: { cmdlist: [], hardware_status: '{node1:' },
      message: (d) => `invalid JSON in '${join(d, 'hardware_status')}'`,
    },
    {
      name: 'hardware_status without nodes',
      files: { cmdlist: [], hardware_status: {} },
      message: (d) => `'${join(d, 'hardware_status')}': no nodes`,
    },
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
    {
      name: 'invalid JSON in datacenter.cfg',
      files: { cmdlist: [], 'datacenter.cfg': 'crs: ha=static' },
      message: (d) => `invalid JSON in '${join(d, 'datacenter.cfg')}'`,
    },
    {
      name: 'manager_status not an object',
      files: { cmdlist: [], manager_status: [1] },
      message: (d) => `'${join(d, 'manager_status')}': expected a JSON object`,
    },
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

// Values that load as JSON but mean nothing: each is refused at load time, naming file and
// field (before, every one of these loaded and was misread or failed later in the run).
describe('loadCase: values that mean nothing are refused, naming file and field', () => {
  const hw = (node: Record<string, unknown>) => ({ cmdlist: [], hardware_status: { node1: { ...ON, ...node } } });
  const sc = (entry: Record<string, unknown>) => ({
    cmdlist: [],
    service_config: { 'vm:101': { node: 'node1', ...entry } },
  });
  const dc = (cfg: unknown) => ({ cmdlist: [], 'datacenter.cfg': cfg });
  const ms = (status: unknown) => ({ cmdlist: [], manager_status: status });
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    // file, then the expected "<field>: <problem>" after the quoted path
    [
      'a node name with a space',
      { cmdlist: [], hardware_status: { 'node 1': ON } },
      'hardware_status',
      `["node 1"]: invalid node name 'node 1'`,
    ],
    [
      'a node name with a slash',
      { cmdlist: [], hardware_status: { 'a/b': ON } },
      'hardware_status',
      `["a/b"]: invalid node name 'a/b'`,
    ],
    ['an unknown hardware key', hw({ maxmemory: 1 }), 'hardware_status', 'node1.maxmemory: unknown key'],
    [
      'a negative node maxcpu',
      hw({ maxcpu: -4 }),
      'hardware_status',
      'node1.maxcpu: expected a number of cores from 1 to 2^64, got -4',
    ],
    [
      'a node maxmem as a string',
      hw({ maxmem: '64G' }),
      'hardware_status',
      'node1.maxmem: expected a number of bytes from 1 to 2^64, got "64G"',
    ],
    [
      'a cfs flag that is no flag',
      hw({ cfs: { rw: 'yes' } }),
      'hardware_status',
      'node1.cfs.rw: expected a flag (0, 1, true or false), got "yes"',
    ],
    [
      'an unknown shutdown target',
      hw({ shutdown: 'halt' }),
      'hardware_status',
      'node1.shutdown: expected one of shutdown, reboot, got "halt"',
    ],
    [
      'a service on a node that does not exist',
      sc({ node: 'node9' }),
      'service_config',
      "vm:101.node: node 'node9' does not exist in hardware_status",
    ],
    [
      'a failback that is no flag',
      sc({ failback: 'yes' }),
      'service_config',
      'vm:101.failback: expected a flag (0, 1, true or false), got "yes"',
    ],
    [
      'a failback of 2',
      sc({ failback: 2 }),
      'service_config',
      'vm:101.failback: expected a flag (0, 1, true or false), got 2',
    ],
    [
      'a negative max_restart',
      sc({ max_restart: -1 }),
      'service_config',
      'vm:101.max_restart: expected a whole number from 0 to 9007199254740991, got -1',
    ],
    [
      'an unknown service state',
      sc({ state: 'running' }),
      'service_config',
      'vm:101.state: expected one of started, disabled, stopped, ignored, enabled, got "running"',
    ],
    ['an unknown service key', sc({ nodes: 'node1' }), 'service_config', 'vm:101.nodes: unknown key'],
    ['crs that is not an object', dc({ crs: 'static' }), 'datacenter.cfg', 'crs: expected a JSON object, got "static"'],
    ['ha that is not an object', dc({ ha: [] }), 'datacenter.cfg', 'ha: expected a JSON object, got an array'],
    [
      'a rebalance flag that is no flag',
      dc({ crs: { 'ha-auto-rebalance': 'yes' } }),
      'datacenter.cfg',
      'crs.ha-auto-rebalance: expected a flag (0, 1, true or false), got "yes"',
    ],
    [
      'an unknown balancer method',
      dc({ crs: { 'ha-auto-rebalance-method': 'random' } }),
      'datacenter.cfg',
      'crs.ha-auto-rebalance-method: expected one of bruteforce, topsis, got "random"',
    ],
    [
      'a negative threshold',
      dc({ crs: { 'ha-auto-rebalance-threshold': -5 } }),
      'datacenter.cfg',
      'crs.ha-auto-rebalance-threshold: expected a finite number from 0 to 100, got -5',
    ],
    [
      'a hold duration that is no whole number',
      dc({ crs: { 'ha-auto-rebalance-hold-duration': 1.5 } }),
      'datacenter.cfg',
      'crs.ha-auto-rebalance-hold-duration: expected a whole number from 0 to 9007199254740991, got 1.5',
    ],
    [
      'an unknown crs key',
      dc({ crs: { 'ha-auto-rebalance-treshold': 10 } }),
      'datacenter.cfg',
      'crs.ha-auto-rebalance-treshold: unknown key',
    ],
    ['an unknown top-level key', dc({ cluster: {} }), 'datacenter.cfg', 'cluster: unknown key'],
    ['a crs.ha that is not a string', dc({ crs: { ha: 1 } }), 'datacenter.cfg', 'crs.ha: expected a string, got 1'],
    [
      'an unknown service state in the manager status',
      ms({ service_status: { 'vm:101': { state: 'running', node: 'node1' } } }),
      'manager_status',
      'service_status.vm:101.state: expected one of',
    ],
    [
      'a negative timeout in the manager status',
      ms({ service_status: { 'vm:101': { state: 'request_stop', node: 'node1', timeout: -5 } } }),
      'manager_status',
      'service_status.vm:101.timeout: expected a whole number from 0 to 9007199254740991, got -5',
    ],
    [
      'failed nodes that are no list',
      ms({ service_status: { 'vm:101': { state: 'started', node: 'node1', failed_nodes: 'node2' } } }),
      'manager_status',
      'service_status.vm:101.failed_nodes: expected an array of node names, got "node2"',
    ],
    [
      'an unknown disarm mode',
      ms({ disarm: { mode: 'pause', state: 'disarmed' } }),
      'manager_status',
      'disarm.mode: expected one of freeze, ignore, got "pause"',
    ],
    [
      'an unknown node state',
      ms({ node_status: { node1: 'up' } }),
      'manager_status',
      'node_status.node1: expected one of online, maintenance, unknown, fence, gone, got "up"',
    ],
    [
      'a stats entry that is no object',
      { cmdlist: [], static_service_stats: { 'vm:101': 4 } },
      'static_service_stats',
      'vm:101: expected a JSON object, got 4',
    ],
    [
      'a stat given as a string',
      { cmdlist: [], static_service_stats: { 'vm:101': { maxcpu: '4', maxmem: 1 } } },
      'static_service_stats',
      'vm:101.maxcpu: expected a number, got "4"',
    ],
    [
      'an unknown stat key',
      { cmdlist: [], dynamic_service_stats: { 'vm:101': { cpu: 1, memory: 1 } } },
      'dynamic_service_stats',
      'vm:101.memory: unknown key',
    ],
    [
      'a stats key that is no service id',
      { cmdlist: [], static_service_stats: { __proto__x: { maxcpu: 1, maxmem: 1 } } },
      'static_service_stats',
      "__proto__x: invalid service id '__proto__x'",
    ],
    [
      'a running flag that is no flag',
      { cmdlist: [], service_status_node1: { 'vm:101': 'yes' } },
      'service_status_node1',
      'vm:101: expected a flag (0, 1, true or false), got "yes"',
    ],
    // additions: the balancer's variant keys (scalars; the HA core judges their values), memhost, guest_config, sim_options
    [
      'a variant crs key that is an object',
      dc({ crs: { 'ha-auto-rebalance-backoff': { base: 60 } } }),
      'datacenter.cfg',
      'crs.ha-auto-rebalance-backoff: expected a number, string or flag (the HA core judges the value), got an object',
    ],
    [
      'a preset that is a list',
      dc({ crs: { 'ha-auto-rebalance-preset': ['recommended'] } }),
      'datacenter.cfg',
      'crs.ha-auto-rebalance-preset: expected a number, string or flag (the HA core judges the value), got an array',
    ],
    [
      'a memhost given as a string',
      { cmdlist: [], dynamic_service_stats: { 'vm:101': { cpu: 1, mem: 1, memhost: '2G' } } },
      'dynamic_service_stats',
      'vm:101.memhost: expected a number, got "2G"',
    ],
    [
      'a guest config of no service id',
      { cmdlist: [], guest_config: { 'qemu/101': { ide2: 'none' } } },
      'guest_config',
      '["qemu/101"]: invalid service id \'qemu/101\'',
    ],
    [
      'a guest config that is no object',
      { cmdlist: [], guest_config: { 'vm:101': 'ide2: none' } },
      'guest_config',
      'vm:101: expected a JSON object, got "ide2: none"',
    ],
    [
      'a guest config value that is an object',
      { cmdlist: [], guest_config: { 'vm:101': { ide2: { file: 'x' } } } },
      'guest_config',
      'vm:101.ide2: expected a string, number or boolean, got an object',
    ],
    [
      'a guest config key in upper case',
      { cmdlist: [], guest_config: { 'vm:101': { IDE2: 'none' } } },
      'guest_config',
      "vm:101.IDE2: invalid config key 'IDE2'",
    ],
    [
      'an unknown sim option',
      { cmdlist: [], sim_options: { seed: 1, maxtime: 5 } },
      'sim_options',
      'maxtime: unknown key (expected one of seed, max-time, pressure-model, load-pressure)',
    ],
    [
      'a negative seed',
      { cmdlist: [], sim_options: { seed: -1 } },
      'sim_options',
      'seed: expected an integer from 0 to 4294967295, got -1',
    ],
    [
      'a fractional seed',
      { cmdlist: [], sim_options: { seed: 1.5 } },
      'sim_options',
      'seed: expected an integer from 0 to 4294967295, got 1.5',
    ],
    [
      'a max-time of 0',
      { cmdlist: [], sim_options: { 'max-time': 0 } },
      'sim_options',
      'max-time: expected a whole number of seconds from 1 to 9007199254740991, got 0',
    ],
    [
      'a max-time as a string',
      { cmdlist: [], sim_options: { 'max-time': '36000' } },
      'sim_options',
      'max-time: expected a whole number of seconds from 1 to 9007199254740991, got "36000"',
    ],
    // a literal too large for a double reads as Infinity: said as such (JSON.stringify would print null)
    [
      'a node maxmem of 1e999',
      { cmdlist: [], hardware_status: '{"node1": {"power": "on", "network": "on", "maxmem": 1e999}}' },
      'hardware_status',
      'node1.maxmem: expected a number of bytes from 1 to 2^64, got a number too large for a double (beyond 1.8e308)',
    ],
    [
      'a max_restart of 1e999',
      { cmdlist: [], service_config: '{"vm:101": {"node": "node1", "max_restart": 1e999}}' },
      'service_config',
      'vm:101.max_restart: expected a whole number from 0 to 9007199254740991, got a number too large for a double (beyond 1.8e308)',
    ],
    [
      'a manager status timestamp of -1e999',
      { cmdlist: [], manager_status: '{"timestamp": -1e999}' },
      'manager_status',
      'timestamp: expected a finite number >= 0, got a negative number too large for a double (beyond -1.8e308)',
    ],
    [
      'a queued command argument of 1e999',
      {
        cmdlist: [],
        manager_status: '{"service_status": {"vm:101": {"state": "started", "node": "node1", "cmd": ["stop", 1e999]}}}',
      },
      'manager_status',
      'service_status.vm:101.cmd.1: expected a string or finite number, got a number too large',
    ],
    [
      'a threshold of 1e999',
      { cmdlist: [], 'datacenter.cfg': '{"crs": {"ha-auto-rebalance-threshold": 1e999}}' },
      'datacenter.cfg',
      'crs.ha-auto-rebalance-threshold: expected a finite number from 0 to 100, got a number too large',
    ],
    [
      'a seed of 1e999',
      { cmdlist: [], sim_options: '{"seed": 1e999}' },
      'sim_options',
      'seed: expected an integer from 0 to 4294967295, got a number too large',
    ],
    [
      'a max-time of 1e999',
      { cmdlist: [], sim_options: '{"max-time": 1e999}' },
      'sim_options',
      'max-time: expected a whole number of seconds from 1 to 9007199254740991, got a number too large',
    ],
    [
      'a guest config number of 1e999',
      { cmdlist: [], guest_config: '{"vm:101": {"cores": 1e999}}' },
      'guest_config',
      'vm:101.cores: expected a finite number, got a number too large',
    ],
    // values the HA core would refuse every round: one range, checked here
    [
      'a node maxmem of 1e300',
      hw({ maxmem: 1e300 }),
      'hardware_status',
      'node1.maxmem: expected a number of bytes from 1 to 2^64, got 1e+300',
    ],
    [
      'a node maxcpu above 2^64',
      hw({ maxcpu: 2 ** 65 }),
      'hardware_status',
      'node1.maxcpu: expected a number of cores from 1 to 2^64, got 36893488147419103000',
    ],
    [
      'a hold duration beyond 2^53',
      dc({ crs: { 'ha-auto-rebalance-hold-duration': '99999999999999999999' } }),
      'datacenter.cfg',
      'crs.ha-auto-rebalance-hold-duration: expected a whole number from 0 to 9007199254740991, got "99999999999999999999"',
    ],
    // threshold and margin in percent (PVE 9.2's schema): above 100 nothing could ever balance
    [
      'a threshold above 100',
      dc({ crs: { 'ha-auto-rebalance-threshold': 150 } }),
      'datacenter.cfg',
      'crs.ha-auto-rebalance-threshold: expected a finite number from 0 to 100, got 150',
    ],
    [
      'a margin above 100 (as a string)',
      dc({ crs: { 'ha-auto-rebalance-margin': '100.5' } }),
      'datacenter.cfg',
      'crs.ha-auto-rebalance-margin: expected a finite number from 0 to 100, got "100.5"',
    ],
    [
      'an unknown pressure model',
      { cmdlist: [], sim_options: { 'pressure-model': 'psi' } },
      'sim_options',
      'pressure-model: expected one of scripted, load, got "psi"',
    ],
    [
      'load-pressure without the load model',
      { cmdlist: [], sim_options: { 'load-pressure': {} } },
      'sim_options',
      "load-pressure: the load pressure model's settings need 'pressure-model': 'load'",
    ],
    [
      'a negative knee',
      {
        cmdlist: [],
        sim_options: { 'pressure-model': 'load', 'load-pressure': { cpu: { family: 'logistic', knee: -1 } } },
      },
      'sim_options',
      'load-pressure.cpu.knee: expected a number > 0 and ≤ 4, got -1',
    ],
    [
      'settings for an unknown node',
      { cmdlist: [], sim_options: { 'pressure-model': 'load', 'load-pressure': { nodes: { node9: { psi: 0 } } } } },
      'sim_options',
      "load-pressure.nodes.node9: node 'node9' does not exist in hardware_status",
    ],
    [
      'scripted pressure under the load model',
      {
        cmdlist: [['power node1 on'], ['node node1 set-dynamic-stats cpu 2 pressurecpusome 12']],
        sim_options: { 'pressure-model': 'load' },
      },
      'cmdlist',
      "[1][0] 'node node1 set-dynamic-stats cpu 2 pressurecpusome 12': scripted pressure, but sim_options 'pressure-model' is 'load'",
    ],
  ];
  it.each(cases)('%s', (_name, files, file, problem) => {
    const dir = caseDir(files);
    const err = loadError(dir);
    expect(err.code).toBe('bad-case');
    expect(err.message).toContain(`'${join(dir, file)}' ${problem}`);
  });

  it('a threshold and a margin of 0 and 100 load', () => {
    for (const v of [0, 100]) {
      const input = loadCase(caseDir(dc({ crs: { 'ha-auto-rebalance-threshold': v, 'ha-auto-rebalance-margin': v } })));
      expect(input.datacenterCfg.crs).toEqual({ 'ha-auto-rebalance-threshold': v, 'ha-auto-rebalance-margin': v });
    }
  });

  it('loads the additions: variant crs keys as given (judged at run time), memhost, guest_config, sim_options', () => {
    const dir = caseDir({
      cmdlist: [],
      'datacenter.cfg': {
        crs: {
          ha: 'dynamic',
          'ha-auto-rebalance-backoff': 'abc',
          'ha-auto-rebalance-preset': 'recommended',
          'ha-auto-rebalance-memhost': 1,
        },
      },
      dynamic_service_stats: { 'vm:101': { cpu: 1, mem: GIB, memhost: 2 * GIB } },
      guest_config: { 'vm:101': { ide2: 'local:iso/d.iso,media=cdrom', hostpci0: '01:00.0', cores: 4, onboot: true } },
      sim_options: { seed: 7, 'max-time': 36000 },
    });
    const input = loadCase(dir);
    expect(input.datacenterCfg.crs['ha-auto-rebalance-backoff']).toBe('abc');
    expect(input.dynamicServiceStats['vm:101']).toEqual({ cpu: 1, mem: GIB, memhost: 2 * GIB });
    expect(input.guestConfig).toEqual({
      'vm:101': { ide2: 'local:iso/d.iso,media=cdrom', hostpci0: '01:00.0', cores: 4, onboot: true },
    });
    expect(input.simOptions).toEqual({ seed: 7, maxTime: 36000 });
    // both absent: no fields at all
    const plain = loadCase(caseDir({ cmdlist: [] }));
    expect(plain.guestConfig).toBeUndefined();
    expect(plain.simOptions).toBeUndefined();
  });

  it('a duplicate key is refused with its position (JSON.parse would keep the last)', () => {
    const dir = caseDir({
      cmdlist: [],
      hardware_status: '{"node1": {"power": "on", "network": "on"},\n "node1": {"power": "off", "network": "off"}}',
    });
    expect(loadError(dir).message).toBe(
      `invalid JSON in '${join(dir, 'hardware_status')}' (line 2, column 2): duplicate key 'node1'`,
    );
  });

  it('a UTF-8 byte order mark is refused', () => {
    const dir = caseDir({ cmdlist: '\ufeff[]' });
    expect(loadError(dir).message).toBe(
      `'${join(dir, 'cmdlist')}' starts with a UTF-8 byte order mark; save it without one`,
    );
  });

  it('a file that is not UTF-8 is refused', () => {
    const dir = caseDir({ cmdlist: [] });
    writeFileSync(join(dir, 'rules_config'), Buffer.from([0x6e, 0x6f, 0xff, 0x64, 0x65]));
    expect(loadError(dir).message).toBe(`'${join(dir, 'rules_config')}' is not valid UTF-8`);
  });

  it('a file over the size limit is refused before it is read', () => {
    // {"vm:101":{"node":"node1"}} is 27 bytes
    const dir = caseDir({ cmdlist: [], service_config: { 'vm:101': { node: 'node1' } } });
    const err = (() => {
      try {
        loadCase(dir, 'x', { maxFileBytes: 16 });
      } catch (e) {
        return e as SimError;
      }
      throw new Error('no error');
    })();
    expect(err.message).toBe(`'${join(dir, 'service_config')}' is 27 bytes, over the limit of 16 bytes`);
  });

  it('a directory where a file is expected, and a file where the case directory is expected', () => {
    const dir = caseDir({ cmdlist: [] });
    mkdirSync(join(dir, 'hardware_status'));
    expect(loadError(dir).message).toBe(`'${join(dir, 'hardware_status')}' is a directory, expected a regular file`);
    const file = join(dir, 'cmdlist');
    expect(() => loadCase(file)).toThrow(`'${file}' is a file, expected a case directory`);
    expect(() => loadCase(join(dir, 'nope'))).toThrow(`no such directory '${join(dir, 'nope')}'`);
  });

  it('names that are Object.prototype keys load like any other name', () => {
    const names = ['__proto__', 'toString', 'constructor'];
    const hardware: Record<string, unknown> = Object.create(null);
    for (const n of names) hardware[n] = ON;
    const dir = caseDir({
      cmdlist: [['power __proto__ off']],
      hardware_status: JSON.stringify(hardware),
      service_config: '{"vm:101": {"node": "__proto__"}, "vm:102": {"node": "toString"}}',
      manager_status:
        '{"node_status": {"constructor": "online"}, "service_status": {"__proto__": {"state": "started", "node": "toString"}}}',
    });
    const input = loadCase(dir);
    expect(Object.keys(input.hardwareStatus)).toEqual(names);
    expect(input.serviceConfig['vm:101']!.node).toBe('__proto__');
    expect(Object.keys(input.managerStatus.service_status!)).toEqual(['__proto__']);
    expect(Object.keys(input.serviceStatus)).toEqual(names);
  });
});

describe('loadCase: commands are checked against the services there at their turn', () => {
  const NOT_THERE =
    'is not configured at this point (not in service_config, not added by an earlier command, or deleted)';
  const withCommands = (...lists: string[][]) =>
    caseDir({
      cmdlist: lists,
      hardware_status: { node1: ON, node2: ON },
      service_config: { 'vm:101': { node: 'node1', state: 'started' } },
    });
  it.each([
    // the run would abort with "no such service" at the command's turn
    [
      'a state of a service that is not configured',
      [['service vm:999 started']],
      `[0][0] 'service vm:999 started': service 'vm:999' ${NOT_THERE}`,
    ],
    ['a lock', [['service vm:999 lock']], `[0][0] 'service vm:999 lock': service 'vm:999' ${NOT_THERE}`],
    [
      'an unlock',
      [['power node1 on'], ['service vm:999 unlock backup']],
      `[1][0] 'service vm:999 unlock backup': service 'vm:999' ${NOT_THERE}`,
    ],
    [
      'a manual migration',
      [['service vm:999 manual-migrate node2']],
      `[0][0] 'service vm:999 manual-migrate node2': service 'vm:999' ${NOT_THERE}`,
    ],
    // "cannot add service 'vm:101', already exists"
    [
      'an add of a configured service',
      [['service vm:101 add node2']],
      "[0][0] 'service vm:101 add node2': service 'vm:101' already exists",
    ],
    [
      'an add of a service added before',
      [['service vm:102 add node2'], ['service vm:102 add node1']],
      "[1][0] 'service vm:102 add node1': service 'vm:102' already exists",
    ],
    [
      'a state after its delete',
      [['service vm:101 delete', 'service vm:101 stopped']],
      `[0][1] 'service vm:101 stopped': service 'vm:101' ${NOT_THERE}`,
    ],
    [
      'a state before its add',
      [['service vm:102 started'], ['service vm:102 add node2']],
      `[0][0] 'service vm:102 started': service 'vm:102' ${NOT_THERE}`,
    ],
  ])('%s is refused', (_name, lists, problem) => {
    const dir = withCommands(...lists);
    expect(loadError(dir).message).toBe(`'${join(dir, 'cmdlist')}' ${problem}`);
  });

  it('a service added, used, deleted and added again loads', () => {
    const input = loadCase(
      withCommands(
        ['service vm:102 add node2 stopped', 'service vm:102 started'],
        ['service vm:102 delete', 'service vm:102 add node1', 'service vm:102 lock'],
      ),
    );
    expect(input.warnings).toEqual([]);
  });

  it('commands the run applies although they name no service are warnings', () => {
    const dir = withCommands([
      'service vm:998 migrate node2',
      'service vm:998 stop 0',
      'service vm:998 delete',
      'service vm:997 set-static-stats maxcpu 2',
      'service vm:996 set-dynamic-stats cpu 1',
      'service vm:996 add node1',
    ]);
    const at = (j: number, cmd: string) => `'${join(dir, 'cmdlist')}' [0][${j}] '${cmd}': service`;
    expect(loadCase(dir).warnings).toEqual([
      `${at(0, 'service vm:998 migrate node2')} 'vm:998' ${NOT_THERE}; the CRM refuses the command`,
      `${at(1, 'service vm:998 stop 0')} 'vm:998' ${NOT_THERE}; the CRM refuses the command`,
      `${at(2, 'service vm:998 delete')} 'vm:998' ${NOT_THERE}; nothing is deleted`,
      // stats before the add (vm:996) are used once the service exists
      `${at(3, 'service vm:997 set-static-stats maxcpu 2')} 'vm:997' is not configured (not in service_config, not added by a command); the stats are never used`,
    ]);
  });
});

describe('loadCase: a delay that outlasts the time limit', () => {
  it('is refused, naming the command and the limit', () => {
    const dir = caseDir({ cmdlist: [['power node1 on'], ['delay 99999999999']] });
    expect(loadError(dir).message).toBe(
      `'${join(dir, 'cmdlist')}' [1][0] 'delay 99999999999': the delay ends after the time limit of 10000 s (the first command list runs at 20 s; sim_options 'max-time' sets the limit)`,
    );
    // beyond 2^53 the parser refuses it already
    const huge = caseDir({ cmdlist: [['power node1 on'], ['delay 99999999999999999999']] });
    expect(loadError(huge).message).toBe(
      `'${join(huge, 'cmdlist')}' [1][0] 'delay 99999999999999999999': seconds must be at most 9007199254740991`,
    );
    // 20 + 9980 = 10000 is not past the limit
    expect(() => loadCase(caseDir({ cmdlist: [['delay 9980']] }))).not.toThrow();
    expect(loadError(caseDir({ cmdlist: [['delay 9981']] })).message).toContain('time limit of 10000 s');
  });

  it('sim_options max-time sets the limit', () => {
    expect(() => loadCase(caseDir({ cmdlist: [['delay 50000']], sim_options: { 'max-time': 90000 } }))).not.toThrow();
    expect(loadError(caseDir({ cmdlist: [['delay 50000']], sim_options: { 'max-time': 36000 } })).message).toContain(
      'time limit of 36000 s',
    );
  });
});

describe('loadCase: names that nothing has are warnings (the reference loads them silently)', () => {
  const base = {
    cmdlist: [['service vm:103 add node2']],
    hardware_status: { node1: ON, node2: ON },
    service_config: { 'vm:101': { node: 'node1' }, 'vm:102': { node: 'node2', group: 'g1' } },
  };
  const NOT = 'not configured (not in service_config, not added by a command)';

  it('a rule naming a node or a service that does not exist, a group naming an unknown node', () => {
    const dir = caseDir({
      ...base,
      rules_config:
        'node-affinity: pin\n\tresources vm:101\n\tnodes node9,node2:2,node8\n\tstrict 1\n\nnode-affinity: prefer\n\tresources vm:101,vm:103\n\tnodes node7\n\nnode-affinity: only-gone\n\tresources vm:102\n\tnodes node9\n\tstrict 1\n\nresource-affinity: apart\n\tresources vm:101,vm:998,vm:999\n\taffinity negative\n',
      groups: 'group: g1\n\tnodes node1,node6\n',
    });
    const rules = `'${join(dir, 'rules_config')}'`;
    expect(loadCase(dir).warnings).toEqual([
      `${rules} rule 'pin' nodes: node 'node8' does not exist in hardware_status`,
      `${rules} rule 'pin' nodes: node 'node9' does not exist in hardware_status`,
      `${rules} rule 'prefer' nodes: node 'node7' does not exist in hardware_status`,
      `${rules} rule 'only-gone' nodes: node 'node9' does not exist in hardware_status`,
      `${rules} rule 'only-gone': none of its nodes exists, and the rule is strict: its services can run on no node`,
      `${rules} rule 'apart' resources: 2 services, 'vm:998', 'vm:999', are ${NOT}`,
      `'${join(dir, 'groups')}' group 'g1' nodes: node 'node6' does not exist in hardware_status`,
    ]);
  });

  it("a service's group that is not in the groups config", () => {
    const dir = caseDir(base);
    expect(loadCase(dir).warnings).toEqual([
      `'${join(dir, 'service_config')}' vm:102.group: group 'g1' does not exist in '${join(dir, 'groups')}'`,
    ]);
  });

  it('running flags, guest configurations and stats of services that are not configured; a running-flags file of an unknown node', () => {
    const dir = caseDir({
      ...base,
      groups: 'group: g1\n\tnodes node1\n',
      service_status_node1: { 'vm:101': 1, 'vm:103': 0, 'vm:999': 1 },
      service_status_node9: { 'vm:101': 1 },
      guest_config: { 'vm:101': {}, 'vm:998': {}, 'vm:999': {} },
      static_service_stats: {
        'vm:101': { maxcpu: 1, maxmem: GIB },
        'vm:103': { maxcpu: 1, maxmem: GIB },
        'vm:990': { maxcpu: 1, maxmem: GIB },
      },
      // the entries of unknown services are checked for syntax only
      dynamic_service_stats: `{"vm:101": {"cpu": 1, "mem": 1}, ${Array.from({ length: 5 }, (_, i) => `"vm:${900 + i}": {"bogus": [${i}]}`).join(', ')}}`,
    });
    const input = loadCase(dir);
    expect(input.warnings).toEqual([
      `'${join(dir, 'static_service_stats')}': service 'vm:990' is ${NOT}; its entry is ignored`,
      `'${join(dir, 'dynamic_service_stats')}': 5 services, 'vm:900', 'vm:901', 'vm:902' and 2 more, are ${NOT}; their entries are ignored`,
      `'${join(dir, 'service_status_node1')}': service 'vm:999' is ${NOT}; its entry is ignored`,
      `'${join(dir, 'service_status_node9')}': node 'node9' does not exist in hardware_status; the file is not read`,
      `'${join(dir, 'guest_config')}': 2 services, 'vm:998', 'vm:999', are ${NOT}; their entries are ignored`,
    ]);
    expect(input.serviceStatus.node1).toEqual({ 'vm:101': 1, 'vm:103': 0 });
    expect(Object.keys(input.guestConfig!)).toEqual(['vm:101']);
    // the stats of unknown services are not loaded; a service added by a command keeps its own
    expect(Object.keys(input.staticServiceStats)).toEqual(['vm:101', 'vm:103']);
    expect(Object.keys(input.dynamicServiceStats)).toEqual(['vm:101']);
  });

  it('an unknown service id among skipped entries is still refused', () => {
    const dir = caseDir({ ...base, dynamic_service_stats: { 'vm:101': { cpu: 1, mem: 1 }, 'qemu/900': { cpu: 1 } } });
    expect(loadError(dir).message).toBe(
      `'${join(dir, 'dynamic_service_stats')}' ["qemu/900"]: invalid service id 'qemu/900' (vm|ct|fa:<number>)`,
    );
  });
});
