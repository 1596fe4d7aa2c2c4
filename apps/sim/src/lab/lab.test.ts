import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reportTraces, runComparison } from './lab';
import { fmt } from './report';
import { TRACE_FORMAT } from './trace';
import { readTrace } from './trace';
import type { Variant } from './variants';

const MODEL = new URL('../testing/synthetic-model.ts', import.meta.url);

function scenarios() {
  const root = mkdtempSync(join(tmpdir(), 'poise-lab-cmp-'));
  const mk = (name: string, opts: object) => {
    mkdirSync(join(root, name));
    writeFileSync(join(root, name, 'synthetic.json'), JSON.stringify(opts));
    return { name, dir: join(root, name) };
  };
  return [mk('small', { nodes: 3, rounds: 120, pressure: true, busy: 5000 }), mk('wide', { nodes: 12, rounds: 60 })];
}

describe('runComparison', () => {
  const sc = scenarios();
  const variants: Variant[] = [
    { name: 'defaults', crs: {} },
    { name: 'calm', crs: { 'ha-auto-rebalance-threshold': 50 } },
  ];
  const files = ['report.html', 'summary.json', 'summary.csv', 'runs.csv', 'summary.md'];

  it('2 workers write the same bytes as 1 worker', async () => {
    const outs = [mkdtempSync(join(tmpdir(), 'poise-lab-out1-')), mkdtempSync(join(tmpdir(), 'poise-lab-out2-'))];
    await runComparison({ scenarios: sc, variants, seeds: [1, 2, 3], module: MODEL, jobs: 1, out: outs[0]! });
    await runComparison({ scenarios: sc, variants, seeds: [1, 2, 3], module: MODEL, jobs: 2, out: outs[1]! });
    for (const f of files)
      expect(readFileSync(join(outs[1]!, f), 'utf8'), f).toBe(readFileSync(join(outs[0]!, f), 'utf8'));
  });

  it('summary files: one run row per run, one stats row per scenario × variant × metric', async () => {
    const out = mkdtempSync(join(tmpdir(), 'poise-lab-out-'));
    const s = await runComparison({
      scenarios: sc,
      variants,
      seeds: [1, 2],
      module: MODEL,
      jobs: 2,
      out,
      saveTraces: true,
    });
    expect(s.runs.map((r) => `${r.scenario}/${r.variant}/${r.seed}`)).toEqual([
      'small/defaults/1',
      'small/defaults/2',
      'small/calm/1',
      'small/calm/2',
      'wide/defaults/1',
      'wide/defaults/2',
      'wide/calm/1',
      'wide/calm/2',
    ]);
    const csv = readFileSync(join(out, 'summary.csv'), 'utf8').trimEnd().split('\n');
    expect(csv[0]).toBe('scenario,variant,metric,unit,better,n,mean,sd,p50,p95,min,max,note');
    expect(csv.length).toBe(1 + 2 * 2 * 9);
    // 'wide' has no pressure telemetry: empty numbers and the reason
    expect(csv).toContain('wide,calm,pressureSeconds,node·s,lower,,,,,,,,no pressure telemetry');
    const runs = readFileSync(join(out, 'runs.csv'), 'utf8').trimEnd().split('\n');
    expect(runs.length).toBe(1 + 8);
    expect(runs[0]).toBe(
      'scenario,variant,seed,guestContentionSeconds,migrationSeconds,moves,failedMoves,pingPongs,maxMovesPerSid,imbalanceTimeWeighted,pressureSeconds,simSeconds',
    );
    // the saved trace reads back and matches its run row
    const t = readTrace(join(out, 'traces', 'small', 'calm', 'seed-2.json'));
    expect(t.moves.length).toBe(s.runs[3]!.moves);
    // summary.md: one row per scenario × variant, then one verdict row per scenario
    const md = readFileSync(join(out, 'summary.md'), 'utf8');
    const sd = s.stats.find((x) => x.scenario === 'small' && x.variant === 'calm' && x.metric === 'moves')!.stats!;
    expect(md).toContain(`| small | defaults | `);
    // the first metric: these cases script their pressure (no ground truth)
    expect(md).toContain(`|  | calm | no load pressure model | ${fmt(sd.mean)} ± ${fmt(sd.sd)} |`);
    expect(md).toContain('| wide | ');
    const [tables, balance] = md.split('Balance: greedy vs planned.');
    expect(tables!.match(/^\| (small|wide) \|/gm)).toHaveLength(4);
    // then the balance table: a row per scenario × variant (no placement in these traces: no oracle)
    expect(
      balance!.match(
        /^\| (small|wide)? ?\| (defaults|calm) \| greedy \| \d\/2 \| .* \| — \(0\/2 runs\) \| — \| 0 \| — \|$/gm,
      ),
    ).toHaveLength(4);
    const json = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(json.format).toBe('poise-lab-summary/1');
    expect(json.verdicts.length).toBe(2 * 9);
  });
});

describe('reportTraces', () => {
  it('an empty run (no samples, no moves) still makes a report, with the metrics it cannot tell marked', async () => {
    const out = mkdtempSync(join(tmpdir(), 'poise-lab-empty-'));
    const empty = {
      format: TRACE_FORMAT,
      scenario: 'empty',
      variant: 'defaults',
      seed: 1,
      endTime: 0,
      nodes: ['node1'],
      rounds: { time: [], imbalance: [], cpu: [[]], mem: [[]], online: [[]], pressureCpu: [[]], pressureMem: [[]] },
      moves: [],
    } as const;
    const s = await reportTraces([structuredClone(empty) as never], out, 'empty run');
    expect(s.stats.find((x) => x.metric === 'imbalanceTimeWeighted')).toMatchObject({
      stats: null,
      reason: 'no samples in some runs',
    });
    expect(s.stats.find((x) => x.metric === 'moves')!.stats).toMatchObject({ n: 1, mean: 0 });
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('no samples in some runs');
  });
});
