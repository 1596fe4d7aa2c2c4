import { describe, expect, it } from 'vitest';
import { CLI_SPEC } from '../spec';
import { parseGuestSpec, parsePlanArgs, parseSize } from './args';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

describe('plan, drain and place command lines', () => {
  it('reads the source, capacity and flags', () => {
    expect(
      parsePlanArgs([
        'plan',
        '--snapshot',
        'c.json',
        '--cpu-overcommit',
        '4',
        '--memory-headroom',
        '10',
        '--json',
        '--drain',
        'node3',
        '--drain',
        'node4',
      ]),
    ).toMatchObject({
      command: 'plan',
      source: { kind: 'snapshot', file: 'c.json' },
      capacity: { cpuOvercommitRatio: 4, memoryHeadroomPercent: 10 },
      json: true,
      drain: ['node3', 'node4'],
      execute: false,
    });
    expect(parsePlanArgs(['plan', '--sim'])).toMatchObject({ source: { kind: 'sim', dir: undefined }, capacity: {} });
    expect(parsePlanArgs(['plan', '--sim', 'case', '--what-if', 'node-failure'])).toMatchObject({
      source: { kind: 'sim', dir: 'case' },
      whatIf: 'node-failure',
    });
    expect(parsePlanArgs(['drain', 'node3', '-c', 'p.yaml', '--execute'])).toMatchObject({
      command: 'drain',
      drain: ['node3'],
      source: { kind: 'config', file: 'p.yaml' },
      execute: true,
    });
    expect(parsePlanArgs(['place', '--sim', '--guest', 'cpu=4,mem=8G', '--count', '20']).guests).toEqual([
      { cores: 4, mem: 8 * GIB, count: 20 },
    ]);
  });

  it.each([
    [
      ['plan'],
      "'plan' reads the cluster from --config <file>, --sim [<case-dir>] or --snapshot <file.json>: none given",
    ],
    [['plan', '--sim', '--snapshot', 'x.json'], 'do not go together'],
    [
      ['plan', '--sim', '--cpu-overcommit', 'abc'],
      "'--cpu-overcommit' takes a ratio > 0 (assigned cores per physical core, e.g. 4), got 'abc'",
    ],
    [
      ['plan', '--sim', '--cpu-overcommit', '0'],
      "'--cpu-overcommit' takes a ratio > 0 (assigned cores per physical core, e.g. 4), got '0'",
    ],
    [['plan', '--sim', '--cpu-overcommit', 'Infinity'], "got 'Infinity'"],
    [['plan', '--sim', '--cpu-overcommit', '2x'], "got '2x'"],
    [
      ['plan', '--sim', '--cpu-overcommit', '-1'],
      "'--cpu-overcommit' takes a ratio > 0 (assigned cores per physical core, e.g. 4), got '-1'",
    ],
    [
      ['plan', '--sim', '--memory-headroom', '100'],
      "'--memory-headroom' takes a percent from 0 up to (not including) 100, got '100'",
    ],
    [['plan', '--sim', '--memory-headroom', 'lots'], "got 'lots'"],
    [['plan', '--sim', '--memory-headroom', '5', '--memory-headroom', '6'], "'--memory-headroom' given more than once"],
    [['plan', '--sim', '--what-if', 'meteor'], "'--what-if' takes node-failure, got 'meteor'"],
    [['plan', '--sim', '--what-if', 'node-failure', '--drain', 'n1'], "'--what-if' and '--drain' do not go together"],
    [['plan', '--sim', '--execute'], "unknown option '--execute' for 'plan'"],
    [['plan', '--snapshot', 'c.json', 'node3'], "unexpected argument 'node3' for 'plan'"],
    [['drain', '--sim'], "'drain' needs the node to empty: poise-manager drain <node>"],
    [['drain', 'a', 'b', '--sim'], "'drain' takes one node, got 'a', 'b'"],
    [['drain', 'node3', '--snapshot', 'x.json'], "unknown option '--snapshot' for 'drain'"],
    [['place', '--sim'], "'place' needs at least one --guest cpu=<cores>,mem=<size>"],
    [
      ['place', '--sim', '--guest', 'cpu=4,mem=8G', '--count', '0'],
      "'--count' takes a whole number from 1 to 100000, got '0'",
    ],
    [['place', '--sim', '--guest', 'cpu=4,mem=8G', '--count', '2.5'], "got '2.5'"],
  ])('%j: %s', (argv, message) => {
    expect(() => parsePlanArgs(argv)).toThrow(message);
  });

  it('every option of the subcommands in the spec is parsed', () => {
    const sample: Record<string, string> = {
      cpuOvercommit: '2',
      memoryHeadroom: '5',
      whatIf: 'node-failure',
      guest: 'cpu=1,mem=1G',
      count: '2',
      at: 'end',
      parallel: '4',
    };
    for (const sub of CLI_SPEC.subcommands) {
      for (const o of sub.options) {
        for (const name of o.names) {
          const source = o.key === 'config' || o.key === 'sim' || o.key === 'snapshot' ? [] : ['--sim'];
          const value = o.value === undefined || o.valueOptional ? [] : [sample[o.key] ?? 'x'];
          const argv = [
            sub.name,
            ...(sub.name === 'drain' ? ['node1'] : []),
            ...source,
            name,
            ...value,
            ...(sub.name === 'place' && o.key !== 'guest' ? ['--guest', 'cpu=1,mem=1G'] : []),
          ];
          expect(() => parsePlanArgs(argv), argv.join(' ')).not.toThrow();
        }
      }
    }
  });
});

describe('--guest specs', () => {
  it.each([
    // a bare number is MiB, as `memory: 8192` in a guest config
    ['cpu=4,mem=8192', { cores: 4, mem: 8192 * MIB, count: 1 }],
    [
      'cpu=2,mem=512M,load=0.5,id=web,kind=ct,count=3',
      { cores: 2, mem: 512 * MIB, cpu: 0.5, id: 'web', kind: 'ct', count: 3 },
    ],
    ['cpu=1.5, mem=1.5GiB', { cores: 1.5, mem: 1.5 * GIB, count: 1 }],
  ])('%s', (spec, guest) => {
    expect(parseGuestSpec(spec, undefined)).toEqual(guest);
  });

  it('takes --count for a spec without count=', () => {
    expect(parseGuestSpec('cpu=1,mem=1G', 7).count).toBe(7);
    expect(parseGuestSpec('cpu=1,mem=1G,count=2', 7).count).toBe(2);
  });

  it.each([
    ['mem=8G', "'--guest mem=8G': cpu=<assigned cores> is missing"],
    ['cpu=4', "'--guest cpu=4': mem=<size> is missing"],
    ['cpu=four,mem=8G', "'--guest cpu=four,mem=8G': cpu must be a number of cores > 0, got 'four'"],
    ['cpu=0,mem=8G', "cpu must be a number of cores > 0, got '0'"],
    ['cpu=4,mem=8X', "'--guest cpu=4,mem=8X': mem must be a size > 0 such as 8G, 512M or 8192 (MiB), got '8X'"],
    ['cpu=4,mem=-8G', "got '-8G'"],
    ['cpu=4,mem=8G,disk=32G', "unknown key 'disk' (keys: cpu, mem, load, id, kind, count)"],
    ['cpu=4,mem=8G,cpu=2', "'cpu' given twice"],
    ['cpu=4,mem=8G,kind=lxc', "kind must be vm or ct, got 'lxc'"],
    ['cpu=4,mem=8G,load=x', "load must be a number of cores ≥ 0, got 'x'"],
    ['cpu=4,mem=8G,count=0', "count takes a whole number from 1 to 100000, got '0'"],
    ['cpu=4,mem=8G,oops', "'oops' is not key=value"],
    ['cpu=4,mem=8G,id=', 'id must not be empty'],
  ])('%s: %s', (spec, message) => {
    expect(() => parseGuestSpec(spec, undefined)).toThrow(message);
  });

  it('reads sizes in binary units', () => {
    expect(parseSize('1K')).toBe(1024);
    expect(parseSize('2t')).toBe(2 * 1024 ** 4);
    expect(parseSize('0')).toBeUndefined();
    expect(parseSize('')).toBeUndefined();
  });
});
