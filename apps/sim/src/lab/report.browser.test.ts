/**
 * Opens a generated report in a real headless browser (Debian's Chromium through
 * playwright-core): every chart rendered as SVG with the data marks the traces call for, no
 * console errors, no network requests; saves screenshots to apps/sim/test-output/ (gitignored).
 * Under CI=true a missing Chromium fails the test; elsewhere the test is skipped.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import { CHART_MAX_BINS, HEATMAP_MAX_CELLS, MAX_NODE_LINES } from './charts';
import { runComparison } from './lab';
import { CHROMIUM, CHROMIUM_ARGS, screenshotReport } from '../testing/screenshot';
import { binWidth } from './series';
import { hasPressure, readTrace, type RunTrace } from './trace';
import type { Variant } from './variants';

const haveChromium = existsSync(CHROMIUM);
const OUT = fileURLToPath(new URL('../../test-output/', import.meta.url));
const MODEL = new URL('../testing/synthetic-model.ts', import.meta.url);

function loadTraces(out: string): RunTrace[] {
  const traces: RunTrace[] = [];
  for (const sc of readdirSync(join(out, 'traces')).sort())
    for (const v of readdirSync(join(out, 'traces', sc)).sort())
      for (const f of readdirSync(join(out, 'traces', sc, v)).sort())
        traces.push(readTrace(join(out, 'traces', sc, v, f)));
  return traces;
}

/** Bins of width w that overlap [first sample, end). */
function binsWithData(t: RunTrace, w: number): number {
  const t0 = t.rounds.time[0]!;
  return Math.ceil(t.endTime / w) - Math.floor(t0 / w);
}

describe('report.html in a headless browser', () => {
  it.runIf(haveChromium || process.env.CI === 'true')(
    'renders every chart with its data marks, no console errors, no network',
    async () => {
      expect(haveChromium, `Chromium not found at ${CHROMIUM} (apt-get install -y chromium; .ci/run does it)`).toBe(
        true,
      );
      const root = mkdtempSync(join(tmpdir(), 'poise-lab-browser-'));
      const mk = (name: string, opts: object) => {
        mkdirSync(join(root, name));
        writeFileSync(join(root, name, 'synthetic.json'), JSON.stringify(opts));
        return { name, dir: join(root, name) };
      };
      const out = join(root, 'out');
      const variants: Variant[] = [
        { name: 'defaults', crs: {} },
        { name: 'calm', crs: { 'ha-auto-rebalance-threshold': 50 } },
      ];
      await runComparison({
        scenarios: [
          mk('three-nodes', { nodes: 3, rounds: 180, pressure: true, truth: true }),
          mk('twelve-nodes', { nodes: 12, rounds: 90 }),
        ],
        variants,
        seeds: [1, 2, 3],
        module: MODEL,
        jobs: 2,
        out,
        saveTraces: true,
        title: 'poise policy lab (synthetic model)',
      });
      const traces = loadTraces(out);

      const userDataDir = mkdtempSync(join(tmpdir(), 'poise-chromium-'));
      const context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        viewport: { width: 1100, height: 900 },
      });
      try {
        const page = await context.newPage();
        const problems: string[] = [];
        const requests: string[] = [];
        page.on('console', (m) => {
          if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
        });
        page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
        const reportUrl = pathToFileURL(join(out, 'report.html')).href;
        page.on('request', (r) => {
          if (r.url() !== reportUrl) requests.push(r.url());
        });
        await page.goto(reportUrl, { waitUntil: 'load' });

        const charts = await page.$$eval('figure.chart', (figs) =>
          figs.map((f) => {
            const svg = f.querySelector('svg');
            const count = (sel: string) => f.querySelectorAll(sel).length;
            const box = svg?.getBoundingClientRect();
            return {
              chart: f.getAttribute('data-chart'),
              scenario: f.getAttribute('data-scenario'),
              variant: f.getAttribute('data-variant'),
              svg: !!svg,
              width: box?.width ?? 0,
              height: box?.height ?? 0,
              lines: count('g.mark-line.role-mark > path'),
              areas: count('g.mark-area.role-mark > path'),
              symbols: count('g.mark-symbol.role-mark > path'),
              rects: count('g.mark-rect.role-mark > path'),
              title: svg?.querySelector('.role-title-text')?.textContent ?? '',
            };
          }),
        );
        const expected: typeof charts = [];
        for (const sc of ['three-nodes', 'twelve-nodes']) {
          const ts = traces.filter((t) => t.scenario === sc);
          const horizon = Math.max(...ts.map((t) => t.endTime));
          // guest contention over time where the runs have the ground truth: one line and one band per variant
          if (ts.some((t) => t.rounds.truth))
            expected.push({
              chart: 'contention',
              scenario: sc,
              variant: null,
              svg: true,
              width: 0,
              height: 0,
              lines: variants.length,
              areas: variants.length,
              symbols: 0,
              rects: 0,
              title: '',
            });
          // one line and one band per variant
          expected.push({
            chart: 'imbalance',
            scenario: sc,
            variant: null,
            svg: true,
            width: 0,
            height: 0,
            lines: variants.length,
            areas: variants.length,
            symbols: 0,
            rects: 0,
            title: '',
          });
          // one marker per move of every run
          expected.push({
            chart: 'moves',
            scenario: sc,
            variant: null,
            svg: true,
            width: 0,
            height: 0,
            lines: 0,
            areas: 0,
            symbols: ts.reduce((a, t) => a + t.moves.length, 0),
            rects: 0,
            title: '',
          });
          for (const v of variants) {
            const first = ts.find((t) => t.variant === v.name && t.seed === 1)!;
            const n = first.nodes.length;
            const heat = n > MAX_NODE_LINES;
            // heatmap: one cell per node, panel (cpu, memory) and bin with data
            const w = binWidth(
              horizon,
              heat ? Math.floor(HEATMAP_MAX_CELLS / n) : CHART_MAX_BINS,
              binWidth(first.endTime, 1000),
            );
            const load = heat ? { lines: 0, rects: 2 * n * binsWithData(first, w) } : { lines: 2 * n, rects: 0 };
            expected.push({
              chart: 'load',
              scenario: sc,
              variant: v.name,
              svg: true,
              width: 0,
              height: 0,
              areas: 0,
              symbols: 0,
              title: '',
              ...load,
            });
            // a pressure panel holding one value everywhere is said in words, not drawn
            const distinct = new Set(first.rounds.pressureCpu.flat().filter((x) => x !== null));
            if (hasPressure(first.rounds) && distinct.size > 1)
              expected.push({
                chart: 'pressure',
                scenario: sc,
                variant: v.name,
                svg: true,
                width: 0,
                height: 0,
                lines: n,
                areas: 0,
                symbols: 0,
                rects: 0,
                title: '',
              });
          }
        }
        const strip = (c: (typeof charts)[number]) => ({ ...c, width: 0, height: 0, title: '' });
        expect(charts.map(strip)).toEqual(expected);
        for (const c of charts) {
          expect(c.width, `${c.chart} ${c.scenario} ${c.variant ?? ''} has no size`).toBeGreaterThan(300);
          expect(c.height).toBeGreaterThan(100);
          expect(c.title).not.toBe('');
        }
        expect(charts.find((c) => c.chart === 'moves')!.symbols).toBeGreaterThan(0);
        expect(problems).toEqual([]);
        expect(requests).toEqual([]);
        mkdirSync(OUT, { recursive: true });
        await page.screenshot({ path: join(OUT, 'report-full.png'), fullPage: true });
        await page.screenshot({ path: join(OUT, 'report-top.png'), clip: { x: 0, y: 0, width: 1100, height: 1400 } });
        const heat = page.locator('figure[data-chart="load"][data-scenario="twelve-nodes"]').first();
        await heat.screenshot({ path: join(OUT, 'report-heatmap.png') });
        // the README's screenshots are taken by the same code
        const shots = await screenshotReport(page, OUT, 'three-nodes');
        for (const f of shots) expect(statSync(f).size, f).toBeGreaterThan(10_000);
        await expect(screenshotReport(page, OUT, 'no-such-scenario')).rejects.toThrow(
          "the report has no scenario 'no-such-scenario'",
        );
      } finally {
        await context.close();
      }
    },
  );
});
