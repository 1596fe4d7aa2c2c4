import { type Pipeline, PolicyRegistry } from '@poise/policy';
import { ReplayCluster } from '@poise/policy/testing';
import { stablePlugin } from '@poise/policy-stable';
import { describe, expect, it } from 'vitest';
import { readmeBlock, testReadmeExample } from '@poise/test-support/readme';
import { pressurePlugin } from './index';
import { GIB, idleCluster } from './testing/support';

const README = new URL('../README.md', import.meta.url);

describe('README', () => {
  // The README's example is real code: run the ```ts block under "## Example" and compare what
  // it prints with the ```text block that follows it.
  testReadmeExample(README, new URL('./', import.meta.url));

  // The replay table is computed here; POISE_UPDATE_README=1 writes it into the README.
  it('the replay table is what the replays give', () => {
    const REFERENCE = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
    // each column: the plug-ins registered and a `crs` section, read and composed as a host does
    const pressure = new PolicyRegistry([pressurePlugin]);
    const both = new PolicyRegistry([stablePlugin, pressurePlugin]);
    const recommended = { 'ha-auto-rebalance-preset': 'recommended' };
    const variants: Array<[string, PolicyRegistry, Record<string, unknown>]> = [
      ['defaults', pressure, {}],
      ['min-pressure-cpu 10', pressure, { 'ha-auto-rebalance-min-pressure-cpu': 10 }],
      ['min-pressure-mem 5', pressure, { 'ha-auto-rebalance-min-pressure-mem': 5 }],
      [
        'cpu 10, pressure-missing hold',
        pressure,
        { 'ha-auto-rebalance-min-pressure-cpu': 10, 'ha-auto-rebalance-pressure-missing': 'hold' },
      ],
      ['check-migratable', pressure, { 'ha-auto-rebalance-check-migratable': 1 }],
      ['recommended (pressure)', pressure, recommended],
      ['recommended (both packages)', both, recommended],
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
          `| ${name} | ${variants.map(([, registry, crs]) => cell(registry.pipeline(registry.read(crs), REFERENCE))).join(' | ')} |`,
      ),
    ].join('\n');
    const current = readmeBlock(README, 'replay-table', table);
    expect(current, 'README has the replay-table markers').toBeDefined();
    expect(current).toBe(table);
  });
});
