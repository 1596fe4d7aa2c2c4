/**
 * Screenshots of a lab report for the README: the top (title, how to read, verdicts) and one
 * scenario's charts (imbalance, moves, nodes), taken in Debian's Chromium through
 * playwright-core. The browser test takes them too (so this code runs in CI).
 *
 *   pnpm tsx apps/sim/src/testing/screenshot.ts <report.html> <out-dir> [<scenario>]
 *
 * writes `<out-dir>/lab-report-verdicts.png` and `<out-dir>/lab-report-charts.png` (the first
 * scenario when none is named).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '@poise/test-support/chromium';

// Debian's Chromium and its flags: one definition for every browser test and screenshot
export { CHROMIUM, CHROMIUM_ARGS } from '@poise/test-support/chromium';
/** The page width the screenshots are taken at (CSS px). */
export const SCREENSHOT_WIDTH = 1100;

/**
 * Takes the two screenshots of the report open in `page`: the top down to the verdicts' tally,
 * and `scenario`'s section from its first chart to its end. Returns the files written.
 */
export async function screenshotReport(page: Page, outDir: string, scenario?: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const verdicts = join(outDir, 'lab-report-verdicts.png');
  const charts = join(outDir, 'lab-report-charts.png');
  const end = await pageBox(page.locator('p.wins, table.verdicts').last());
  if (!end) throw new Error('the report has no verdict table');
  await page.screenshot({
    path: verdicts,
    clip: { x: 0, y: 0, width: SCREENSHOT_WIDTH, height: Math.ceil(end.bottom + 16) },
    fullPage: true,
  });
  const section = page
    .locator(
      scenario === undefined
        ? 'section.scenario'
        : `section.scenario[data-scenario="${scenario.replace(/["\\]/g, '\\$&')}"]`,
    )
    .first();
  const box = await pageBox(section);
  if (!box) throw new Error(`the report has no scenario '${scenario ?? '(any)'}'`);
  const first = await pageBox(section.locator('figure.chart').first());
  if (!first) throw new Error(`scenario '${scenario ?? '(first)'}' has no charts`);
  const top = Math.max(0, Math.floor(first.top - 8));
  await page.screenshot({
    path: charts,
    clip: { x: 0, y: top, width: SCREENSHOT_WIDTH, height: Math.ceil(box.bottom + 16 - top) },
    fullPage: true,
  });
  return [verdicts, charts];
}

/** An element's top and bottom in page coordinates (whatever the scroll position); undefined when absent. */
async function pageBox(locator: ReturnType<Page['locator']>): Promise<{ top: number; bottom: number } | undefined> {
  if ((await locator.count()) === 0) return undefined;
  // runs in the page; the package compiles without the DOM library, so the element's shape is written here
  return locator.evaluate((el: { getBoundingClientRect(): { top: number; bottom: number } }) => {
    const r = el.getBoundingClientRect();
    const scrollY = (globalThis as unknown as { scrollY: number }).scrollY;
    return { top: r.top + scrollY, bottom: r.bottom + scrollY };
  });
}

async function main(argv: string[]): Promise<void> {
  const [report, outDir, scenario] = argv;
  if (!report || !outDir) throw new Error('usage: screenshot.ts <report.html> <out-dir> [<scenario>]');
  const userDataDir = mkdtempSync(join(tmpdir(), 'poise-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: SCREENSHOT_WIDTH, height: 900 },
  });
  try {
    const page = await context.newPage();
    await page.goto(pathToFileURL(resolve(report)).href, { waitUntil: 'load' });
    for (const f of await screenshotReport(page, outDir, scenario)) console.log(`wrote ${f}`);
  } finally {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(`screenshot: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
