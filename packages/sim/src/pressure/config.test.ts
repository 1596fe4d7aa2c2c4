import { describe, expect, it } from 'vitest';
import { MIGRATION_DEFAULTS } from '@poise/contention';
import { SimError } from '../errors';
import { CPU_FAMILY_DEFAULTS, DEFAULT_DELAY_SECONDS, MEMORY_FAMILY_DEFAULTS, parseLoadPressure } from './config';

const NODES = ['node1', 'node2'];
const parse = (value: unknown) => parseLoadPressure(value, 'case/sim_options', ['load-pressure'], NODES);

function problem(value: unknown): string {
  try {
    parse(value);
  } catch (err) {
    expect(err).toBeInstanceOf(SimError);
    expect((err as SimError).code).toBe('bad-case');
    return (err as SimError).message;
  }
  throw new Error('parseLoadPressure did not throw');
}

describe('load-pressure: defaults', () => {
  it('fills every default: queue cpu, logistic memory, avg10, no noise, no heterogeneity', () => {
    const o = parse(undefined);
    expect(o.cpu).toEqual({
      curve: CPU_FAMILY_DEFAULTS.queue,
      delaySeconds: DEFAULT_DELAY_SECONDS,
      noisePercent: 0,
      outlierProbability: 0,
      outlierPercent: 0,
    });
    expect(o.memory.curve).toEqual(MEMORY_FAMILY_DEFAULTS.logistic);
    expect(o.heterogeneity).toBe(0);
    expect(Object.keys(o.nodes)).toEqual([]);
    expect(o.migration).toEqual({ model: MIGRATION_DEFAULTS, relocateSeconds: 10 });
  });

  it('the migration keys become the migration model’s settings, in its units', () => {
    const o = parse({
      migration: {
        'bandwidth-mib-per-second': 512,
        'bwlimit-kib-per-second': 102400, // PVE's unit: 100 MiB/s
        'max-downtime-seconds': 0.3,
        'dirty-mib-per-core-second': 16,
        'transfer-cores': 0,
        'auto-converge': 0,
        'timeout-seconds': 600,
        'degradation-share': 0.2,
        'setup-seconds': 5,
        'relocate-seconds': 30,
      },
    });
    expect(o.migration).toEqual({
      model: {
        ...MIGRATION_DEFAULTS,
        linkBytesPerSecond: 512 * 1024 ** 2,
        bwlimitBytesPerSecond: 100 * 1024 ** 2,
        maxDowntimeSeconds: 0.3,
        dirtyBytesPerCoreSecond: 16 * 1024 ** 2,
        transferCpuCores: 0,
        autoConverge: false,
        timeoutSeconds: 600,
        degradationShare: 0.2,
        setupSeconds: 5,
      },
      relocateSeconds: 30,
    });
  });

  it('a family without parameters gets that resource’s defaults', () => {
    expect(parse({ cpu: { family: 'logistic' }, memory: { family: 'queue' } })).toMatchObject({
      cpu: { curve: CPU_FAMILY_DEFAULTS.logistic },
      memory: { curve: MEMORY_FAMILY_DEFAULTS.queue },
    });
  });

  it('per node: capacity factor, psi off, its own curves', () => {
    const o = parse({
      nodes: {
        node2: {
          'capacity-factor': 0.8,
          psi: false,
          cpu: {
            family: 'piecewise',
            points: [
              [0, 0],
              [1, 50],
            ],
          },
        },
      },
    });
    expect(o.nodes.node2).toEqual({
      psi: false,
      capacityFactor: 0.8,
      cpu: {
        curve: {
          family: 'piecewise',
          points: [
            [0, 0],
            [1, 50],
          ],
        },
        delaySeconds: 10,
        noisePercent: 0,
        outlierProbability: 0,
        outlierPercent: 0,
      },
    });
  });
});

describe('load-pressure: bad values are refused, naming the file and the field', () => {
  it.each<[string, unknown, string]>([
    ['not an object', 5, 'load-pressure: expected a JSON object, got 5'],
    [
      'an unknown key',
      { knee: 0.8 },
      'load-pressure.knee: unknown key (expected one of cpu, memory, heterogeneity, nodes, migration)',
    ],
    [
      'an unknown family',
      { cpu: { family: 'mm1' } },
      'load-pressure.cpu.family: expected one of queue, logistic, piecewise, got "mm1"',
    ],
    [
      'a parameter of another family',
      { cpu: { family: 'queue', knee: 0.8 } },
      "load-pressure.cpu.knee: not a parameter of the 'queue' family (it takes burstiness, max-percent)",
    ],
    [
      'burstiness below 1',
      { cpu: { burstiness: 0.5 } },
      'load-pressure.cpu.burstiness: expected a number from 1 to 1024, got 0.5',
    ],
    [
      'a max of 0 %',
      { memory: { 'max-percent': 0 } },
      'load-pressure.memory.max-percent: expected a number > 0 and ≤ 100, got 0',
    ],
    ['a width of 0', { memory: { width: 0 } }, 'load-pressure.memory.width: expected a number from 0.001 to 2, got 0'],
    [
      'a knee as a string',
      { cpu: { family: 'logistic', knee: '0.8' } },
      'load-pressure.cpu.knee: expected a number > 0 and ≤ 4, got "0.8"',
    ],
    [
      'piecewise without points',
      { cpu: { family: 'piecewise' } },
      "load-pressure.cpu.points: the 'piecewise' family needs its points: [[0, 0], [ratio, percent], …]",
    ],
    [
      'one point',
      { cpu: { family: 'piecewise', points: [[0, 0]] } },
      'load-pressure.cpu.points: expected an array of 2 to 64 [load ratio, percent] pairs, got an array',
    ],
    [
      'a first point not at 0',
      {
        cpu: {
          family: 'piecewise',
          points: [
            [0.1, 0],
            [1, 50],
          ],
        },
      },
      'load-pressure.cpu.points.0.0: the first point must be at load ratio 0, got 0.1',
    ],
    [
      'ratios not increasing',
      {
        cpu: {
          family: 'piecewise',
          points: [
            [0, 0],
            [0.5, 5],
            [0.5, 9],
          ],
        },
      },
      'load-pressure.cpu.points.2.0: load ratios must increase strictly (0.5 after 0.5)',
    ],
    [
      'pressure falling',
      {
        cpu: {
          family: 'piecewise',
          points: [
            [0, 0],
            [0.5, 9],
            [1, 5],
          ],
        },
      },
      'load-pressure.cpu.points.2.1: pressure must not fall as load grows (5 % after 9 %)',
    ],
    [
      'a pair of three',
      {
        cpu: {
          family: 'piecewise',
          points: [
            [0, 0],
            [1, 5, 6],
          ],
        },
      },
      'load-pressure.cpu.points.1: expected a [load ratio, percent] pair, got an array',
    ],
    [
      'a percentage above 100',
      {
        cpu: {
          family: 'piecewise',
          points: [
            [0, 0],
            [1, 150],
          ],
        },
      },
      'load-pressure.cpu.points.1.1: expected a number from 0 to 100, got 150',
    ],
    [
      'a negative delay',
      { cpu: { 'delay-seconds': -10 } },
      'load-pressure.cpu.delay-seconds: expected a number from 0 to 3600, got -10',
    ],
    [
      'noise of 60 points',
      { cpu: { 'noise-percent': 60 } },
      'load-pressure.cpu.noise-percent: expected a number from 0 to 50, got 60',
    ],
    [
      'an outlier probability of 2',
      { cpu: { 'outlier-probability': 2 } },
      'load-pressure.cpu.outlier-probability: expected a number from 0 to 1, got 2',
    ],
    ['heterogeneity of 1', { heterogeneity: 1 }, 'load-pressure.heterogeneity: expected a number from 0 to 0.9, got 1'],
    [
      'an unknown node',
      { nodes: { node3: {} } },
      "load-pressure.nodes.node3: node 'node3' does not exist in hardware_status",
    ],
    [
      'a capacity factor of 0',
      { nodes: { node1: { 'capacity-factor': 0 } } },
      'load-pressure.nodes.node1.capacity-factor: expected a number from 0.05 to 10, got 0',
    ],
    [
      'psi not a flag',
      { nodes: { node1: { psi: 'no' } } },
      'load-pressure.nodes.node1.psi: expected a flag (0, 1, true or false), got "no"',
    ],
    [
      'an unknown node key',
      { nodes: { node1: { speed: 2 } } },
      'load-pressure.nodes.node1.speed: unknown key (expected one of capacity-factor, psi, cpu, memory)',
    ],
    [
      'a node’s bad curve',
      { nodes: { node1: { memory: { family: 'logistic', knee: 9 } } } },
      'load-pressure.nodes.node1.memory.knee: expected a number > 0 and ≤ 4, got 9',
    ],
    [
      'no bandwidth',
      { migration: { 'bandwidth-mib-per-second': 0 } },
      'load-pressure.migration.bandwidth-mib-per-second: expected a number from 1 to 1000000, got 0',
    ],
    [
      'the former stall share',
      { migration: { 'stall-share': 0.2 } },
      "load-pressure.migration.stall-share: replaced by the migration model: 'degradation-share' (the guest's loss while it migrates)",
    ],
    [
      'the former downtime',
      { migration: { 'downtime-seconds': 0.1 } },
      "load-pressure.migration.downtime-seconds: replaced by the migration model: 'max-downtime-seconds' (the longest pause allowed)",
    ],
    [
      'a bwlimit of 0',
      { migration: { 'bwlimit-kib-per-second': 0 } },
      'load-pressure.migration.bwlimit-kib-per-second: expected a number from 1 to 1000000000, got 0',
    ],
    [
      'no pause allowed',
      { migration: { 'max-downtime-seconds': 0 } },
      'load-pressure.migration.max-downtime-seconds: expected a number > 0 and ≤ 3600, got 0',
    ],
    [
      'a negative dirty rate',
      { migration: { 'dirty-mib-per-core-second': -1 } },
      'load-pressure.migration.dirty-mib-per-core-second: expected a number from 0 to 1000000, got -1',
    ],
    [
      'transfer cores as a string',
      { migration: { 'transfer-cores': '1' } },
      'load-pressure.migration.transfer-cores: expected a number from 0 to 64, got "1"',
    ],
    [
      'auto-converge not a flag',
      { migration: { 'auto-converge': 'yes' } },
      'load-pressure.migration.auto-converge: expected a flag (0, 1, true or false), got "yes"',
    ],
    [
      'no timeout',
      { migration: { 'timeout-seconds': 0 } },
      'load-pressure.migration.timeout-seconds: expected a number > 0 and ≤ 86400, got 0',
    ],
    [
      'a degradation share above 1',
      { migration: { 'degradation-share': 1.5 } },
      'load-pressure.migration.degradation-share: expected a number from 0 to 1, got 1.5',
    ],
    [
      'a negative set-up',
      { migration: { 'setup-seconds': -2 } },
      'load-pressure.migration.setup-seconds: expected a number from 0 to 3600, got -2',
    ],
    [
      'a relocation of a day',
      { migration: { 'relocate-seconds': 86400 } },
      'load-pressure.migration.relocate-seconds: expected a number from 0 to 3600, got 86400',
    ],
    [
      'an unknown migration key',
      { migration: { speed: 1 } },
      'load-pressure.migration.speed: unknown key (expected one of bandwidth-mib-per-second, bwlimit-kib-per-second, max-downtime-seconds, dirty-mib-per-core-second, transfer-cores, auto-converge, timeout-seconds, degradation-share, setup-seconds, relocate-seconds)',
    ],
  ])('%s', (_name, value, expected) => {
    expect(problem(value)).toBe(`'case/sim_options' ${expected}`);
  });
});
