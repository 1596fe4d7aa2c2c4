import { describe, expect, it } from 'vitest';
import { validateCommand } from './commands';

const NODES = ['node1', 'node2', 'node3'];

describe('validateCommand: the cmdlist language of spec §2', () => {
  const good = [
    'power node1 on',
    'power node3 off',
    'network node2 off',
    'power   node1   on  ',
    // extra trailing words are ignored where the reference ignores them
    'power node1 on now',
    'reboot node1 please',
    'service vm:101 migrate node2 quickly',
    // stats values: any decimal number; the HA core reports negative or infinite ones
    'service vm:101 set-static-stats maxcpu -2',
    'service vm:101 set-dynamic-stats cpu 1e999 mem .5',
    'delay 0',
    'delay 100',
    'skip-round crm',
    'skip-round lrm 2',
    'reboot node1',
    'shutdown node2',
    'restart-lrm node3',
    'cfs node1 rw fail',
    'cfs node2 update work',
    'pve-manager-version node1 set 9.0.0~16',
    'crm node1 stop',
    'crm node1 start',
    'crm node2 enable-node-maintenance',
    'crm node2 disable-node-maintenance',
    'crm node1 disarm-ha freeze',
    'crm node1 disarm-ha ignore',
    'crm node1 arm-ha',
    'service vm:101 started',
    'service ct:102 enabled',
    'service vm:101 disabled',
    'service vm:101 stopped',
    'service fa:1 ignored',
    'service vm:101 migrate node2',
    'service ct:102 relocate node3',
    'service vm:101 manual-migrate node3',
    'service vm:101 stop 0',
    'service vm:101 stop 120',
    'service vm:107 add node1',
    'service vm:107 add node1 stopped 1',
    'service vm:101 delete',
    'service vm:101 lock',
    'service vm:101 lock backup',
    'service vm:101 unlock backup',
    'service vm:101 set-static-stats maxcpu 8 maxmem 4096',
    'service vm:101 set-static-stats maxmem 512',
    'service vm:101 set-dynamic-stats cpu 1.5 mem 1024',
    'service vm:101 set-dynamic-stats memhost 2048',
    // node base load and pressure outside the HA services; noise amplitudes
    'node node1 set-dynamic-stats cpu 0.5',
    'node node2 set-dynamic-stats cpu 1 mem 2048 pressurecpusome 12.5 pressurememorysome 0',
    'node node3 set-dynamic-stats pressurecpusome 100',
    'node node1 set-noise cpu 0.16',
    'node node1 set-noise cpu 0 mem 512',
  ];
  it.each(good)('accepts %j', (cmd) => {
    expect(validateCommand(cmd, NODES)).toBeUndefined();
  });

  const bad: Array<[string, string]> = [
    ['', 'empty command'],
    ['  power node1 on', 'leading whitespace'],
    [' delay 5', 'leading whitespace'],
    ['delay 1.5', "usage: 'delay <seconds>'"],
    ['delay -50', "usage: 'delay <seconds>'"],
    ['skip-round crm 2 3', "usage: 'skip-round crm|lrm [<rounds>]'"],
    ['service vm:101 stop -5', "usage: 'service <sid> stop <timeout>' (whole seconds, 0 = hard stop)"],
    ['service vm:101 stop 1.5', "usage: 'service <sid> stop <timeout>' (whole seconds, 0 = hard stop)"],
    ['service vm:107 add node1 running', "unknown service state 'running' (started|disabled|stopped|ignored|enabled)"],
    ['service vm:107 add node1 started yes', "running flag must be 0 or 1, got 'yes'"],
    ['fly node1', "unknown command 'fly'"],
    ['delay', "usage: 'delay <seconds>'"],
    ['delay soon', "usage: 'delay <seconds>'"],
    ['delay 10 20', "usage: 'delay <seconds>'"],
    ['skip-round', "usage: 'skip-round crm|lrm [<rounds>]'"],
    ['skip-round node1', "usage: 'skip-round crm|lrm [<rounds>]'"],
    ['skip-round crm twice', 'rounds must be a number'],
    ['power', 'missing node'],
    ['power node4 on', "unknown node 'node4'"],
    ['power node1 up', "unknown action 'up' (on|off)"],
    ['network node1', "unknown action '' (on|off)"],
    ['reboot node9', "unknown node 'node9'"],
    ['restart-lrm', 'missing node'],
    ['cfs node1 ro fail', "unknown cfs action 'ro' (rw|update)"],
    ['cfs node1 rw maybe', "unknown cfs command 'maybe' (work|fail)"],
    ['cfs node4 rw fail', "unknown node 'node4'"],
    ['pve-manager-version node1 set', "usage: 'pve-manager-version <node> set <version>'"],
    ['pve-manager-version node1 get 9.0.0', "usage: 'pve-manager-version <node> set <version>'"],
    ['crm node1 dance', "unknown crm action 'dance'"],
    ['crm node1', "unknown crm action ''"],
    ['crm node1 disarm-ha', "unknown disarm mode '' (freeze|ignore)"],
    ['crm node1 disarm-ha pause', "unknown disarm mode 'pause' (freeze|ignore)"],
    ['crm node5 stop', "unknown node 'node5'"],
    ['service', "invalid service id '' (vm|ct|fa:<number>)"],
    ['service vm101 started', "invalid service id 'vm101' (vm|ct|fa:<number>)"],
    ['service lxc:101 started', "invalid service id 'lxc:101' (vm|ct|fa:<number>)"],
    ['service vm:101', "unknown service action ''"],
    ['service vm:101 fly', "unknown service action 'fly'"],
    ['service vm:101 migrate', 'missing node'],
    ['service vm:101 migrate node9', "unknown node 'node9'"],
    ['service vm:101 stop', "usage: 'service <sid> stop <timeout>' (whole seconds, 0 = hard stop)"],
    ['service vm:101 stop later', "usage: 'service <sid> stop <timeout>' (whole seconds, 0 = hard stop)"],
    ['service vm:107 add node7', "unknown node 'node7'"],
    ['service vm:101 set-static-stats', 'expected <key> <value> pairs (maxcpu|maxmem)'],
    ['service vm:101 set-static-stats maxcpu', 'expected <key> <value> pairs (maxcpu|maxmem)'],
    ['service vm:101 set-static-stats cpu 1', "unknown stat 'cpu' (maxcpu|maxmem)"],
    ['service vm:101 set-dynamic-stats maxmem 1', "unknown stat 'maxmem' (cpu|mem|memhost)"],
    ['service vm:101 set-dynamic-stats mem lots', "value of 'mem' must be a number, got 'lots'"],
    ['service vm:101 set-dynamic-stats memhost 1 x', 'expected <key> <value> pairs (cpu|mem|memhost)'],
    ['node', 'missing node'],
    ['node node9 set-noise cpu 1', "unknown node 'node9'"],
    ['node node1 set-stats cpu 1', "unknown node action 'set-stats' (set-dynamic-stats|set-noise)"],
    ['node node1 set-dynamic-stats', 'expected <key> <value> pairs (cpu|mem|pressurecpusome|pressurememorysome)'],
    ['node node1 set-dynamic-stats cpu', 'expected <key> <value> pairs (cpu|mem|pressurecpusome|pressurememorysome)'],
    ['node node1 set-dynamic-stats maxcpu 4', "unknown stat 'maxcpu' (cpu|mem|pressurecpusome|pressurememorysome)"],
    ['node node1 set-dynamic-stats cpu -1', "value of 'cpu' must be a number from 0 to 1099511627776, got '-1'"],
    ['node node1 set-dynamic-stats mem lots', "value of 'mem' must be a number from 0 to 1099511627776, got 'lots'"],
    [
      'node node1 set-dynamic-stats pressurecpusome 101',
      "value of 'pressurecpusome' must be a number from 0 to 100, got '101'",
    ],
    [
      'node node1 set-dynamic-stats pressurememorysome -0.5',
      "value of 'pressurememorysome' must be a number from 0 to 100, got '-0.5'",
    ],
    ['node node1 set-dynamic-stats cpu 1e999', "value of 'cpu' must be a number from 0 to 1099511627776, got '1e999'"],
    ['node node1 set-noise pressurecpusome 5', "unknown stat 'pressurecpusome' (cpu|mem)"],
    ['node node1 set-noise cpu -0.1', "value of 'cpu' must be a number from 0 to 1099511627776, got '-0.1'"],
    // beyond 2^53 a count no longer counts
    ['delay 99999999999999999999', 'seconds must be at most 9007199254740991'],
    ['skip-round crm 9007199254740992', 'rounds must be at most 9007199254740991'],
    ['service vm:101 stop 99999999999999999999', 'timeout must be at most 9007199254740991'],
  ];
  it.each(bad)('rejects %j: %s', (cmd, problem) => {
    expect(validateCommand(cmd, NODES)).toBe(problem);
  });

  it('checks nodes against the given list only', () => {
    expect(validateCommand('power node4 on', [...NODES, 'node4'])).toBeUndefined();
    expect(validateCommand('power node1 on', [])).toBe("unknown node 'node1'");
  });
});
