import { type Pipeline, type StagePart, composePipeline, readCrs } from '@poise/policy';
import { ReplayCluster } from '@poise/policy/testing';
import { parseStableSettings, stableStages } from '@poise/policy-stable';
import { describe, expect, it } from 'vitest';
import { readmeBlock, testReadmeExample } from '@poise/test-support/readme';
import { PRESSURE_OFF, parsePressureSettings, pressureStages } from './index';
import { GIB, idleCluster } from './testing/support';

const README = new URL('../README.md', import.meta.url);

describe('README', () => {
  // The README's example is real code: run the ```ts block under "## Example" and compare what
  // it prints with the ```text block that follows it.
  testReadmeExample(README, new URL('./', import.meta.url));

  // The replay table is computed here; POISE_UPDATE_README=1 writes it into the README.
  it('the replay table is what the replays give', () => {
    const REFERENCE = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
    const recommended = readCrs({ 'ha-auto-rebalance-preset': 'recommended' });
    const variants: Array<[string, StagePart[]]> = [
      ['defaults', pressureStages(PRESSURE_OFF)],
      ['min-pressure-cpu 10', pressureStages({ ...PRESSURE_OFF, minPressureCpuPercent: 10 })],
      ['min-pressure-mem 5', pressureStages({ ...PRESSURE_OFF, minPressureMemPercent: 5 })],
      [
        'cpu 10, pressure-missing hold',
        pressureStages({ ...PRESSURE_OFF, minPressureCpuPercent: 10, pressureMissing: 'hold' }),
      ],
      ['check-migratable', pressureStages({ ...PRESSURE_OFF, checkMigratable: true })],
      ['recommended (pressure)', pressureStages(parsePressureSettings(recommended).settings)],
      [
        'recommended (both packages)',
        [
          ...stableStages(parseStableSettings(recommended).settings),
          ...pressureStages(parsePressureSettings(recommended).settings),
        ],
      ],
    ];
    const logLines = (c: ReplayCluster) => c.events.filter((e) => e.type === 'stop' || e.type === 'notice').length;
    const rows: Array<[string, (p: Pipeline) => string]> = [
      [
        'idle cluster, no pressure, 8 h: moves; log lines',
        (p) => {
          const c = idleCluster(true);
          c.run(p, { until: 8 * 3600 });
          return `${c.moves().length}; ${logLines(c)}`;
        },
      ],
      [
        'idle 1 h, then node1 cpu 12 %: moves in the idle hour; seconds until a guest leaves node1',
        (p) => {
          const c = idleCluster(true);
          const state = c.run(p, { until: 3600 });
          const idle = c.moves().length;
          c.setNode('node1', { pressureCpu: 12 });
          c.run(p, { until: 7200, state });
          const leaves = c.moves().find((m) => m.time >= 3600 && m.type === 'move' && m.source === 'node1');
          return `${idle}; ${leaves ? leaves.time - 3600 : 'none'}`;
        },
      ],
      [
        'every node under pressure, 1 h: moves; log lines',
        (p) => {
          const c = idleCluster(true);
          for (const node of ['node1', 'node2', 'node3']) c.setNode(node, { pressureCpu: 25, pressureMem: 8 });
          c.run(p, { until: 3600 });
          return `${c.moves().length}; ${logLines(c)}`;
        },
      ],
      [
        'no pressure telemetry at all, 1 h: moves',
        (p) => {
          const c = idleCluster(true);
          for (const node of ['node1', 'node2', 'node3'])
            c.setNode(node, { pressureCpu: undefined, pressureMem: undefined });
          c.run(p, { until: 3600 });
          return `${c.moves().length}`;
        },
      ],
      [
        'seed 004, vm:101 with a local cd-rom image, 20 min: moves (failed)',
        (p) => {
          const c = new ReplayCluster({
            nodes: ['node1', 'node2', 'node3'].map((name) => ({
              name,
              maxcpu: 24,
              maxmem: 32 * GIB,
              pressureCpu: 15,
              pressureMem: 0,
            })),
            guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104'].map((sid) => ({
              sid,
              node: 'node1',
              cpu: 1,
              mem: 4 * GIB,
              ...(sid === 'vm:101'
                ? { failures: 1_000_000, config: { ide2: 'local:iso/d.iso,media=cdrom' } }
                : { config: { scsi0: `ceph:${sid}` } }),
            })),
            start: 40,
          });
          c.setNode('node2', { pressureCpu: 0 });
          c.setNode('node3', { pressureCpu: 0 });
          c.run(p, { until: 40 + 1200 });
          return `${c.moves().length} (${c.outcomes().filter((o) => o.type === 'outcome' && !o.ok).length})`;
        },
      ],
    ];
    const table = [
      `| scenario | ${variants.map(([name]) => name).join(' | ')} |`,
      `|---|${variants.map(() => '---').join('|')}|`,
      ...rows.map(
        ([name, cell]) =>
          `| ${name} | ${variants.map(([, parts]) => cell(composePipeline(REFERENCE, parts))).join(' | ')} |`,
      ),
    ].join('\n');
    const current = readmeBlock(README, 'replay-table', table);
    expect(current, 'README has the replay-table markers').toBeDefined();
    expect(current).toBe(table);
  });
});
