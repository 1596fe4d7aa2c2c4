import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Pipeline, ReplayCluster, type StagePart, composePipeline, readCrs } from '@poise/policy';
import { parseStableSettings, stableStages } from '@poise/policy-stable';
import { describe, expect, it, vi } from 'vitest';
import { PRESSURE_OFF, parsePressureSettings, pressureStages } from './index';

const README = new URL('../README.md', import.meta.url);
const GIB = 1024 ** 3;

/** Seed symptom 3's idle cluster (node loads 6.3 %, 1.9 %, 1.9 %; imbalance 43 %). */
function idleCluster(configs = false) {
  return new ReplayCluster({
    nodes: [
      { name: 'node1', maxcpu: 32, maxmem: 128 * GIB, cpu: 0.5, mem: 2 * GIB, pressureCpu: 3.1, pressureMem: 0 },
      { name: 'node2', maxcpu: 32, maxmem: 128 * GIB, cpu: 0.6, mem: 2.5 * GIB, pressureCpu: 0.4, pressureMem: 0 },
      { name: 'node3', maxcpu: 32, maxmem: 128 * GIB, cpu: 0.6, mem: 2.5 * GIB, pressureCpu: 0.2, pressureMem: 0 },
    ],
    guests: [
      { sid: 'vm:101', node: 'node1', cpu: 1, mem: 4 * GIB, ...(configs ? { config: { scsi0: 'ceph:vm-101-disk-0' } } : {}) },
      { sid: 'vm:102', node: 'node1', cpu: 0.5, mem: 2 * GIB, ...(configs ? { config: { scsi0: 'ceph:vm-102-disk-0' } } : {}) },
    ],
  });
}

describe('README', () => {
  // The README's example is real code: run the ```ts block under "## Example" and compare what
  // it prints with the ```text block that follows it.
  it('the example runs and prints what the README shows', async () => {
    const match = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```\n+```text\n([\s\S]*?)```/.exec(readFileSync(README, 'utf8'));
    expect(match, 'README has an example and its output').not.toBeNull();
    const file = fileURLToPath(new URL('./readme-example.tmp.ts', import.meta.url));
    writeFileSync(file, match![1]!);
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    try {
      await import(/* @vite-ignore */ file);
    } finally {
      log.mockRestore();
      rmSync(file, { force: true });
    }
    expect(`${lines.join('\n')}\n`).toBe(match![2]);
  });

  // The replay table is computed here; POISE_UPDATE_README=1 writes it into the README.
  it('the replay table is what the replays give', () => {
    const REFERENCE = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
    const recommended = readCrs({ 'ha-auto-rebalance-preset': 'recommended' });
    const variants: Array<[string, StagePart[]]> = [
      ['defaults', pressureStages(PRESSURE_OFF)],
      ['min-pressure-cpu 10', pressureStages({ ...PRESSURE_OFF, minPressureCpuPercent: 10 })],
      ['min-pressure-mem 5', pressureStages({ ...PRESSURE_OFF, minPressureMemPercent: 5 })],
      ['cpu 10, pressure-missing hold', pressureStages({ ...PRESSURE_OFF, minPressureCpuPercent: 10, pressureMissing: 'hold' })],
      ['check-migratable', pressureStages({ ...PRESSURE_OFF, checkMigratable: true })],
      ['recommended (pressure)', pressureStages(parsePressureSettings(recommended).settings)],
      ['recommended (both packages)', [...stableStages(parseStableSettings(recommended).settings), ...pressureStages(parsePressureSettings(recommended).settings)]],
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
          for (const node of ['node1', 'node2', 'node3']) c.setNode(node, { pressureCpu: undefined, pressureMem: undefined });
          c.run(p, { until: 3600 });
          return `${c.moves().length}`;
        },
      ],
      [
        'seed 004, vm:101 with a local cd-rom image, 20 min: moves (failed)',
        (p) => {
          const c = new ReplayCluster({
            nodes: ['node1', 'node2', 'node3'].map((name) => ({ name, maxcpu: 24, maxmem: 32 * GIB, pressureCpu: 15, pressureMem: 0 })),
            guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104'].map((sid) => ({
              sid,
              node: 'node1',
              cpu: 1,
              mem: 4 * GIB,
              ...(sid === 'vm:101' ? { failures: 1_000_000, config: { ide2: 'local:iso/d.iso,media=cdrom' } } : { config: { scsi0: `ceph:${sid}` } }),
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
      ...rows.map(([name, cell]) => `| ${name} | ${variants.map(([, parts]) => cell(composePipeline(REFERENCE, parts))).join(' | ')} |`),
    ].join('\n');
    const text = readFileSync(README, 'utf8');
    const block = /(<!-- replay-table -->\n)([\s\S]*?)\n?(<!-- \/replay-table -->)/;
    expect(block.test(text), 'README has the replay-table markers').toBe(true);
    if (process.env.POISE_UPDATE_README === '1') writeFileSync(README, text.replace(block, (_m, open: string, _old, close: string) => `${open}${table}\n${close}`));
    else expect(block.exec(text)?.[2]).toBe(table);
  });
});
