import { composePipeline, readCrs } from '@poise/policy';
import { type ReplayCluster } from '@poise/policy/testing';
import { describe, expect, it } from 'vitest';
import { readmeBlock, testReadmeExample } from '@poise/test-support/readme';
import { STABLE_OFF, type StableSettings, parseStableSettings, stableStages } from './index';
import { dominantGuest, seed004 } from './testing/support';

const README = new URL('../README.md', import.meta.url);

describe('README', () => {
  // The README's example is real code: run the ```ts block under "## Example" and compare what
  // it prints with the ```text block that follows it.
  testReadmeExample(README, new URL('./', import.meta.url));

  // The replay table is computed here; POISE_UPDATE_README=1 writes it into the README.
  it('the replay table is what the replays give', () => {
    const REFERENCE = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
    const variants: Array<[string, StableSettings]> = [
      ['defaults', STABLE_OFF],
      ['backoff 60', { ...STABLE_OFF, backoffSeconds: 60 }],
      ['cooldown 600', { ...STABLE_OFF, cooldownSeconds: 600 }],
      ['min-improvement 5', { ...STABLE_OFF, minImprovementPoints: 5 }],
      ['smoothing 300', { ...STABLE_OFF, smoothingHalfLifeSeconds: 300 }],
      ['cost-weight 0.2', { ...STABLE_OFF, costWeight: 0.2 }],
      ['recommended', parseStableSettings(readCrs({ 'ha-auto-rebalance-preset': 'recommended' })).settings],
    ];
    const moves = (c: ReplayCluster) => {
      const failed = c.outcomes().filter((o) => o.type === 'outcome' && !o.ok).length;
      const perPair = new Map<string, number>();
      for (const m of c.moves())
        if (m.type === 'move')
          perPair.set(`${m.resources.join()}>${m.target}`, (perPair.get(`${m.resources.join()}>${m.target}`) ?? 0) + 1);
      return `${c.moves().length} (${failed} failed, ≤ ${Math.max(0, ...perPair.values())} per pair)`;
    };
    const rows: Array<[string, (s: StableSettings) => string]> = [
      [
        'seed 004 fa:109 (fails 9×), 20 min: moves',
        (s) => {
          const c = seed004('fa:109', 9);
          c.run(composePipeline(REFERENCE, stableStages(s)), { until: 40 + 1200 });
          return moves(c);
        },
      ],
      [
        'a guest that never migrates, 20 min: moves',
        (s) => {
          const c = seed004('vm:101', 1_000_000);
          c.run(composePipeline(REFERENCE, stableStages(s)), { until: 40 + 1200 });
          return moves(c);
        },
      ],
      [
        'dominant guest ±0.5 pp, 27 min: moves, seeds 1/2/3',
        (s) =>
          [1, 2, 3]
            .map((seed) => {
              const { cluster, noise } = dominantGuest(seed);
              cluster.run(composePipeline(REFERENCE, stableStages(s)), { until: 27 * 60, beforeRound: noise });
              return cluster.moves().length;
            })
            .join('/'),
      ],
      [
        'dominant guest ±0.5 pp, 24 h (seed 1): moves; log lines',
        (s) => {
          const { cluster, noise } = dominantGuest(1);
          cluster.run(composePipeline(REFERENCE, stableStages(s)), { until: 24 * 3600, beforeRound: noise });
          return `${cluster.moves().length}; ${cluster.events.filter((e) => e.type === 'stop' || e.type === 'notice').length}`;
        },
      ],
    ];
    const table = [
      `| scenario | ${variants.map(([name]) => name).join(' | ')} |`,
      `|---|${variants.map(() => '---').join('|')}|`,
      ...rows.map(([name, cell]) => `| ${name} | ${variants.map(([, s]) => cell(s)).join(' | ')} |`),
    ].join('\n');
    const current = readmeBlock(README, 'replay-table', table);
    expect(current, 'README has the replay-table markers').toBeDefined();
    expect(current).toBe(table);
  });
});
