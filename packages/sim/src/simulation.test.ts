import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SimError, Simulation, simulate, type CaseInput } from './index';
import { validateCommand } from './commands';

const GIB = 1024 ** 3;
const NODES = ['node1', 'node2', 'node3'];

/** A case built in memory (no loader checks): three nodes, two services. */
function caseInput(cmdlist: string[][], extra: Partial<CaseInput> = {}): CaseInput {
  const off = { power: 'off', network: 'off', maxcpu: 16, maxmem: 64 * GIB };
  return {
    name: 'in-memory',
    cmdlist,
    hardwareStatus: { node1: { ...off }, node2: { ...off }, node3: { ...off } },
    serviceConfig: { 'vm:101': { node: 'node1', state: 'started' }, 'vm:102': { node: 'node2', state: 'started' } },
    managerStatus: {},
    rulesConfig: '',
    groups: '',
    datacenterCfg: { ha: {}, crs: {} },
    staticServiceStats: { 'vm:101': { maxcpu: 2, maxmem: 4 * GIB }, 'vm:102': { maxcpu: 2, maxmem: 4 * GIB } },
    dynamicServiceStats: { 'vm:101': { cpu: 1, mem: 2 * GIB }, 'vm:102': { cpu: 1, mem: 2 * GIB } },
    serviceStatus: { node1: {}, node2: {}, node3: {} },
    ...extra,
  };
}

const powerOn = ['power node1 on', 'power node2 on', 'power node3 on'];

describe('Simulation: round by round', () => {
  it('step() by step() writes the same log as run() and as simulate()', () => {
    const input = caseInput([powerOn, ['service vm:101 migrate node3'], ['network node2 off']]);
    const stepped = new Simulation(input, { profile: 'pve-9.2' });
    let steps = 0;
    while (stepped.step()) steps++;
    const ran = new Simulation(input, { profile: 'pve-9.2' }).run();
    expect(stepped.log()).toBe(ran.log);
    expect(simulate(input, { profile: 'pve-9.2' }).log).toBe(ran.log);
    // the last command runs at 220, the end is 220 + 600 = 820: 41 rounds of 20 s, the last
    // of which ends the simulation (step() returns false for it)
    expect(steps).toBe(40);
    expect(stepped.time).toBe(820);
    expect(stepped.ended).toBe(true);
    expect(stepped.step()).toBe(false);
    expect(stepped.log().endsWith('info    820     hardware: exit simulation - done\n')).toBe(true);
  });

  it('time advances 20 s per round, and onRound listeners hear every round until they unsubscribe', () => {
    const sim = new Simulation(caseInput([powerOn]), { profile: 'pve-9.2' });
    const events: Array<[number, number]> = [];
    const off = sim.onRound((e) => events.push([e.round, e.time]));
    sim.step();
    sim.step();
    off();
    sim.step();
    expect(events).toEqual([
      [1, 20],
      [2, 40],
    ]);
    expect(sim.time).toBe(60);
  });

  it('view() shows nodes, services, stats, the manager status and LRM modes, read-only', () => {
    const sim = new Simulation(caseInput([powerOn]), { profile: 'pve-9.2' });
    for (let i = 0; i < 3; i++) sim.step();
    const view = sim.view();
    expect(view.time).toBe(60);
    expect([...view.nodes.keys()]).toEqual(NODES);
    expect(view.nodes.get('node1')).toEqual({ power: 'on', network: 'on', online: true, maxcpu: 16, maxmem: 64 * GIB });
    expect(view.services.get('vm:101')).toMatchObject({ node: 'node1', state: 'started', running: true });
    expect(view.services.get('vm:101')!.staticStats).toEqual({ maxcpu: 2, maxmem: 4 * GIB });
    // measured: one running service of 1 core and 2 GiB on each of node1 and node2
    expect(view.nodeStats.get('node1')).toEqual({ cpu: 1, maxcpu: 16, mem: 2 * GIB, maxmem: 64 * GIB });
    expect(view.nodeStats.get('node3')!.cpu).toBe(0);
    expect(view.managerStatus.service_status?.['vm:102']).toMatchObject({ state: 'started', node: 'node2' });
    expect(view.lrmModes.get('node1')).toBe('active');
    expect(Object.isFrozen(view.managerStatus)).toBe(true);
    expect(Object.isFrozen(view.services.get('vm:101'))).toBe(true);
    // a view is a picture: the next round does not change it
    sim.execute('service vm:101 stopped');
    sim.step();
    expect(view.services.get('vm:101')!.state).toBe('started');
    expect(sim.view().services.get('vm:101')!.state).toBe('stopped');
  });

  it('execute() runs a command now, logged like a command of the list, and moves the end', () => {
    const sim = new Simulation(caseInput([powerOn]), { profile: 'pve-9.2' });
    sim.step();
    sim.step();
    sim.execute('service vm:101 migrate node3');
    while (sim.step());
    const log = sim.log();
    expect(log).toContain('info     40      cmdlist: execute service vm:101 migrate node3\n');
    expect(log).toContain('node1/crm: got crm command: migrate vm:101 node3');
    // last command at 40: the simulation ends at the first slot more than 500 s later
    expect(sim.time).toBe(620);
  });

  it('execute() refuses what the language does not accept, and commands that cannot apply, without ending the run', () => {
    const sim = new Simulation(caseInput([powerOn]), { profile: 'pve-9.2' });
    sim.step();
    expect(() => sim.execute('delay 1.5')).toThrow(expect.objectContaining({ code: 'bad-command' }));
    expect(() => sim.execute('service vm:101 add node2')).toThrow(expect.objectContaining({ code: 'command-failed' }));
    expect(sim.ended).toBe(false);
    expect(sim.step()).toBe(true);
  });

  it('queueCrmCommand() reaches the master in its next round', () => {
    const sim = new Simulation(caseInput([powerOn]), { profile: 'pve-9.2' });
    // the first round ends at 20 with the power-on; the next one starts at 20 (its lines carry 20)
    sim.step();
    sim.queueCrmCommand('migrate vm:102 node1');
    sim.queueCrmCommand('dance vm:102');
    sim.step();
    sim.step();
    expect(sim.log()).toContain('info     20    node1/crm: got crm command: migrate vm:102 node1\n');
    expect(sim.log()).toContain('err      20    node1/crm: unable to parse crm command: dance vm:102\n');
  });

  it('maxTimeSeconds ends a run that would go on, as the reference does at 10,000 s', () => {
    const sim = new Simulation(caseInput([powerOn, ['delay 0']]), { profile: 'pve-9.2', maxTimeSeconds: 100 });
    const res = sim.run();
    expect(res.error).toBe('simulation end - time limit reached');
    expect(res.log.endsWith('err     120     hardware: exit simulation - simulation end - time limit reached \n')).toBe(
      true,
    );
  });
});

// One command language: the up-front check accepts exactly what the runner runs.
describe('the command check and the runner agree', () => {
  // commands that passed the old check and then aborted the run ("no such node"), and commands
  // the runner understands
  const table = [
    'delay 1.5',
    'delay -50',
    ' power node1 on',
    'delay 5 extra',
    'skip-round crm 2 more',
    'power node1 on extra words',
    'service vm:101 migrate node3 now',
    'skip-round lrm',
    'delay 0',
    'service vm:101 set-dynamic-stats cpu -1',
  ];
  it.each(table)('%j: validate ok ⇔ the run has no command error', (cmd) => {
    const ok = validateCommand(cmd, NODES) === undefined;
    const { error } = simulate(caseInput([powerOn, [cmd]]), { profile: 'pve-9.2' });
    // a command the check accepts never fails to run here; one it refuses never runs
    expect(error === undefined).toBe(ok);
    if (!ok) expect(error).toMatch(/^invalid command /);
  });

  const word = fc.constantFrom(
    'power',
    'network',
    'reboot',
    'shutdown',
    'restart-lrm',
    'cfs',
    'crm',
    'service',
    'delay',
    'skip-round',
    'pve-manager-version',
    'node1',
    'node3',
    'node9',
    'on',
    'off',
    'rw',
    'update',
    'work',
    'fail',
    'set',
    '9.0.0',
    'stop',
    'start',
    'arm-ha',
    'disarm-ha',
    'freeze',
    'ignore',
    'enable-node-maintenance',
    'vm:101',
    'vm:107',
    'ct:1',
    'lxc:1',
    'started',
    'stopped',
    'disabled',
    'ignored',
    'enabled',
    'migrate',
    'relocate',
    'add',
    'delete',
    'lock',
    'unlock',
    'set-static-stats',
    'set-dynamic-stats',
    'manual-migrate',
    'maxcpu',
    'maxmem',
    'cpu',
    'mem',
    '0',
    '1',
    '20',
    '1.5',
    '-50',
    '1e999',
    'abc',
    'crm',
    'lrm',
    '',
  );
  const separator = fc.constantFrom(' ', '  ', '\t', ' \t ');
  const command = fc
    .tuple(
      fc.constantFrom('', ' '),
      fc.array(fc.tuple(word, separator), { minLength: 1, maxLength: 6 }),
      fc.constantFrom('', ' '),
    )
    .map(([lead, parts, trail]) => lead + parts.map(([w, s], i) => (i ? s : '') + w).join('') + trail);

  it('property: validate(cmd) ok ⇔ executing it raises no parse error (bad-command)', () => {
    fc.assert(
      fc.property(command, (cmd) => {
        const ok = validateCommand(cmd, NODES) === undefined;
        const sim = new Simulation(caseInput([]), { profile: 'pve-9.2' });
        let code: string | undefined;
        try {
          sim.execute(cmd);
        } catch (err) {
          // anything but a SimError would be the runner not understanding an accepted command
          expect(err).toBeInstanceOf(SimError);
          code = (err as SimError).code;
        }
        if (ok) expect(code === undefined || code === 'command-failed').toBe(true);
        else expect(code).toBe('bad-command');
      }),
      { numRuns: 2000 },
    );
  });
});

describe('measured node usage with a bad service measurement', () => {
  // pve-9.2 leaves a value that is not a finite number >= 0 out of its node's sum, so one bad
  // measurement cannot make the node's own stats invalid (and the whole cluster fall back to
  // basic); pve-5.2.0 sums what it is given, as the reference does
  it.each([
    ['pve-9.2', 1],
    ['pve-5.2.0', 1 + -5],
  ] as const)('%s: node1 measures %d cores', (profile, cpu) => {
    const input = caseInput([powerOn], {
      serviceConfig: { 'vm:101': { node: 'node1', state: 'started' }, 'vm:102': { node: 'node1', state: 'started' } },
    });
    const sim = new Simulation(input, { profile });
    sim.step();
    sim.step();
    sim.execute('service vm:102 set-dynamic-stats cpu -5');
    expect(sim.view().nodeStats.get('node1')!.cpu).toBe(cpu);
  });
});
