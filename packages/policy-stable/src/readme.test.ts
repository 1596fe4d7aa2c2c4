import { PolicyRegistry } from '@poise/policy';
import { type ReplayCluster } from '@poise/policy/testing';
import { describe, expect, it } from 'vitest';
import { readmeBlock, testReadmeExample } from '@poise/test-support/readme';
import { stablePlugin } from './index';
import { dominantGuest, seed004 } from './testing/support';

const README = new URL('../README.md', import.meta.url);

/** A datacenter.cfg `crs` section (the simulator's JSON form). */
type Crs = Record<string, unknown>;

describe('README', () => {
  // The README's example is real code: run the ```ts block under "## Example" and compare what
  // it prints with the ```text block that follows it.
  testReadmeExample(README, new URL('./', import.meta.url));

  // The replay table is computed here; POISE_UPDATE_README=1 writes it into the README.
  it('the replay table is what the replays give', () => {
    const REFERENCE = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
    // each column is a `crs` section, read and composed as a host does
    const registry = new PolicyRegistry([stablePlugin]);
    const pipelineOf = (crs: Crs) => registry.pipeline(registry.read(crs), REFERENCE);
    const variants: Array<[string, Crs]> = [
      ['defaults', {}],
      ['backoff 60', { 'ha-auto-rebalance-backoff': 60 }],
      ['cooldown 600', { 'ha-auto-rebalance-cooldown': 600 }],
      ['min-improvement 5', { 'ha-auto-rebalance-min-improvement': 5 }],
      ['smoothing 300', { 'ha-auto-rebalance-smoothing': 300 }],
      ['cost-weight 0.2', { 'ha-auto-rebalance-cost-weight': 0.2 }],
      ['recommended', { 'ha-auto-rebalance-preset': 'recommended' }],
    ];
    const moves = (c: ReplayCluster) => {
      const failed = c.outcomes().filter((o) => o.type === 'outcome' && !o.ok).length;
      const perPair = new Map<string, number>();
      for (const m of c.moves())
        if (m.type === 'move')
          perPair.set(`${m.resources.join()}>${m.target}`, (perPair.get(`${m.resources.join()}>${m.target}`) ?? 0) + 1);
      return `${c.moves().length} (${failed} failed, ≤ ${Math.max(0, ...perPair.values())} per pair)`;
    };
    const rows: Array<[string, (crs: Crs) => string]> = [
      [
        'seed 004 fa:109 (fails 9×), 20 min: moves',
        (crs) => {
          const c = seed004('fa:109', 9);
          c.run(pipelineOf(crs), { until: 40 + 1200 });
          return moves(c);
        },
      ],
      [
        'a guest that never migrates, 20 min: moves',
        (crs) => {
          const c = seed004('vm:101', 1_000_000);
          c.run(pipelineOf(crs), { until: 40 + 1200 });
          return moves(c);
        },
      ],
      [
        'dominant guest ±0.5 pp, 27 min: moves, seeds 1/2/3',
        (crs) =>
          [1, 2, 3]
            .map((seed) => {
              const { cluster, noise } = dominantGuest(seed);
              cluster.run(pipelineOf(crs), { until: 27 * 60, beforeRound: noise });
              return cluster.moves().length;
            })
            .join('/'),
      ],
      [
        'dominant guest ±0.5 pp, 24 h (seed 1): moves; log lines',
        (crs) => {
          const { cluster, noise } = dominantGuest(1);
          cluster.run(pipelineOf(crs), { until: 24 * 3600, beforeRound: noise });
          return `${cluster.moves().length}; ${cluster.events.filter((e) => e.type === 'stop' || e.type === 'notice').length}`;
        },
      ],
    ];
    const table = [
      `| scenario | ${variants.map(([name]) => name).join(' | ')} |`,
      `|---|${variants.map(() => '---').join('|')}|`,
      ...rows.map(([name, cell]) => `| ${name} | ${variants.map(([, crs]) => cell(crs)).join(' | ')} |`),
    ].join('\n');
    const current = readmeBlock(README, 'replay-table', table);
    expect(current, 'README has the replay-table markers').toBeDefined();
    expect(current).toBe(table);
  });
});
