import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, tracesAvailability } from '../testing/upstream';
import { generateCase } from './generate/generate';
import { readParams, validateParams } from './generate/params';
import { TraceCache, traceFilePath, workloadFor } from './generate/workload-trace';

// The trace corpus (apps/sim/lab/corpus/traces) replays PlanetLab days read in place from
// ../shared/traces (or $POISE_TRACES): every case generates, is sized like a real cluster, and the
// README's table of mean cpu use is what the generator computes (seeds 1..5).
const { dir, present, mustExist } = tracesAvailability();
const CORPUS = join(REPO_ROOT, 'apps/sim/lab/corpus/traces');
const files = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const SEEDS = [1, 2, 3, 4, 5];

describe('the trace corpus', () => {
  it('the traces are available', () => {
    if (!present && mustExist)
      throw new Error(`workload traces not found at '${dir}' (set POISE_TRACES); required under CI=true`);
  });

  it('five or more cases, each naming a PlanetLab day beside the repository in load.file', () => {
    expect(files.length).toBeGreaterThanOrEqual(5);
    const days = new Set<string>();
    for (const f of files) {
      const p = validateParams(readParams(join(CORPUS, f)), f);
      expect(p.load.shape, f).toBe('trace');
      const { path } = traceFilePath(p.load.file!, join(CORPUS, f));
      expect(path, f).toMatch(new RegExp(`^${resolve(REPO_ROOT, '../shared/traces/planetlab')}/\\d{8}\\.csv$`));
      days.add(path);
    }
    expect(days.size).toBe(5);
  });

  it('sized like PVE clusters: 3–16 nodes of 16–128 cores and 64–1024 GiB, mixed sizes, every cpu curve family', () => {
    const families = new Set<string>();
    let mixed = 0;
    for (const f of files) {
      const p = validateParams(readParams(join(CORPUS, f)), f);
      const nodes = p.nodes.reduce((a, g) => a + g.count, 0);
      expect(nodes, f).toBeGreaterThanOrEqual(3);
      expect(nodes, f).toBeLessThanOrEqual(16);
      for (const g of p.nodes) {
        expect(g.cpu, f).toBeGreaterThanOrEqual(16);
        expect(g.cpu, f).toBeLessThanOrEqual(128);
        expect(g.memGiB, f).toBeGreaterThanOrEqual(64);
        expect(g.memGiB, f).toBeLessThanOrEqual(1024);
      }
      if (p.nodes.length > 1) mixed++;
      const lp = p.loadPressure as { cpu?: { family?: string }; nodes?: Record<string, { cpu?: { family?: string } }> };
      families.add(lp.cpu?.family ?? 'queue');
      for (const n of Object.values(lp.nodes ?? {})) if (n.cpu?.family) families.add(n.cpu.family);
    }
    expect([...families].sort()).toEqual(['logistic', 'piecewise', 'queue']);
    expect(mixed).toBeGreaterThanOrEqual(2);
  });

  describe.skipIf(!present)('with the traces', () => {
    const cache = new TraceCache();
    /** Mean cpu use (%) of a case per seed, as its generated README says. */
    const use = (f: string) =>
      SEEDS.map((seed) => {
        const p = validateParams({ ...(readParams(join(CORPUS, f)) as object), seed }, f);
        const { params, workload } = workloadFor(p, join(CORPUS, f), { dir: join(dir, 'planetlab') }, cache);
        const readme = generateCase(params, f, workload).get('README')!;
        return Number(/Mean cpu use over the run: ([\d.]+) % of the cores/.exec(readme)![1]);
      });

    it("the README's table holds each case's mean cpu use, and the cases span about 30 % to 70 %", () => {
      const readme = readFileSync(join(REPO_ROOT, 'apps/sim/README.md'), 'utf8');
      const means: number[] = [];
      for (const f of files) {
        const name = f.replace(/\.yaml$/, '');
        const row = new RegExp(`^\\| \`${name}\` \\|.*\\| ([\\d.]+) % \\(([\\d.]+)–([\\d.]+)\\) \\|$`, 'm').exec(
          readme,
        );
        expect(row, `apps/sim/README.md has no row for '${name}'`).not.toBeNull();
        const u = use(f);
        const mean = u.reduce((a, b) => a + b, 0) / u.length;
        expect([Number(row![1]), Number(row![2]), Number(row![3])], name).toEqual([
          Number(mean.toFixed(1)),
          Math.min(...u),
          Math.max(...u),
        ]);
        means.push(mean);
      }
      expect(Math.min(...means)).toBeGreaterThanOrEqual(28);
      expect(Math.min(...means)).toBeLessThanOrEqual(40);
      expect(Math.max(...means)).toBeGreaterThanOrEqual(62);
      expect(Math.max(...means)).toBeLessThanOrEqual(75);
    });
  });
});
