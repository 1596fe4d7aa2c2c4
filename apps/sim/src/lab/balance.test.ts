import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { main, type Io } from '../main';
import type { LabSummary } from './compare';
import { CHROMIUM, CHROMIUM_ARGS, SCREENSHOT_WIDTH } from '../testing/screenshot';

const SHOTS = fileURLToPath(new URL('../../test-output/', import.meta.url));

/** Opens the report in Chromium: the regret chart's points as the browser draws them, console errors; a screenshot of the balance section. */
async function inBrowser(report: string): Promise<{ points: number; problems: string[] }> {
  const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'poise-chromium-')), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: SCREENSHOT_WIDTH, height: 900 },
  });
  try {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) problems.push(`request ${r.url()}`);
    });
    await page.goto(pathToFileURL(report).href);
    const points = await page.locator('figure[data-chart="regret"] svg path[aria-roledescription="point"]').count();
    const top = await page.locator('#balance').boundingBox();
    const end = await page.locator('figure[data-chart="regret"]').boundingBox();
    mkdirSync(SHOTS, { recursive: true });
    if (top && end)
      await page.screenshot({
        path: join(SHOTS, 'lab-balance.png'),
        clip: { x: 0, y: top.y - 8, width: SCREENSHOT_WIDTH, height: Math.ceil(end.y + end.height - top.y + 16) },
        fullPage: true,
      });
    return { points, problems };
  } finally {
    await context.close();
  }
}

function capture(): Io & { stderr: string[] } {
  const stderr: string[] = [];
  return {
    stderr,
    out: () => undefined,
    err: (l) => stderr.push(l),
    write: () => undefined,
    progress: { isTTY: false, write: () => undefined },
  };
}

// A small corpus on the real simulator: greedy vs planned, the oracle and the regret of every run.
describe('compare: balance, greedy vs planned', () => {
  it('every run gets moves to balance, an oracle and a regret; summary.md and the report show them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-lab-balance-'));
    const variants = join(dir, 'variants.yaml');
    writeFileSync(variants, 'greedy: {}\nplanned: {ha-auto-rebalance-plan: 1}\n');
    const params = join(dir, 'packed.yaml');
    writeFileSync(
      params,
      'duration: 30m\nnodes: [{count: 2, cpu: 8, memGiB: 32}, {count: 1, cpu: 32, memGiB: 128}]\nguests: {count: 6, placement: packed}\n',
    );
    const out = join(dir, 'out');
    const io = capture();
    expect(
      await main(['compare', params, '--variants', variants, '--seeds', '1,2', '--jobs', '1', '--out', out], io),
      io.stderr.join('\n'),
    ).toBe(0);

    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as LabSummary;
    expect(s.balance.threshold).toBe(0.3);
    expect(s.balance.runs).toHaveLength(4);
    for (const r of s.balance.runs) {
      // the oracle is never above the run's own final placement, nor below its bound
      expect(r.oracleMoves, `${r.variant} seed ${r.seed}`).not.toBeNull();
      expect(r.oracleMoves!).toBeLessThanOrEqual(r.runDisplaced!);
      expect(r.oracleBound!).toBeLessThanOrEqual(r.oracleMoves!);
      // no guest moved but by the balancer here, so it moved at least as often as the oracle
      expect(r.excess!).toBeGreaterThanOrEqual(0);
      if (r.regret === null) expect(r.oracleMoves).toBe(0);
      else expect(r.regret).toBeGreaterThanOrEqual(1);
      expect(Number.isNaN(r.regret)).toBe(false);
    }
    expect(s.balance.groups.map((g) => [g.variant, g.balancer, g.runs])).toEqual([
      ['greedy', 'greedy', 2],
      ['planned', 'planned', 2],
    ]);

    const md = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(md).toContain('Balance: greedy vs planned.');
    expect(md).toMatch(/\| packed \| greedy \| greedy \| \d\/2 \|/);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('<h2 id="balance">Balance: greedy vs planned, and regret</h2>');
    const chart = /<figure class="chart" data-chart="regret">\n(<svg[\s\S]*?<\/svg>)\n<\/figure>/.exec(html);
    expect(chart, 'the regret chart').not.toBeNull();
    // one point per run with a finite regret
    const finite = s.balance.runs.filter((r) => r.regret !== null).length;
    expect(chart![1]!.match(/<path[^>]*aria-roledescription="point"/g) ?? []).toHaveLength(finite);
    if (existsSync(CHROMIUM) || process.env.CI === 'true') {
      const seen = await inBrowser(join(out, 'report.html'));
      expect(seen).toEqual({ points: finite, problems: [] });
    }
  }, 600_000);
});
