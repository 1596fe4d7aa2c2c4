/**
 * The status page on the bundled scenario, as the README shows it: a daemon on the embedded
 * simulator whose rounds the caller drives (so a page and a test see exactly the rounds they
 * ask for, whatever the machine's pace), and the screenshots of the page at desktop and phone
 * widths. The browser test takes them (so this code runs in CI); the README's come from
 *
 *   pnpm tsx --conditions=poise-source apps/manager/src/testing/status-showcase.ts apps/manager/docs
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { launchChromium } from '@poise/test-support/chromium';
import { bundledSimCase, createSimHost, type Host } from '../cluster/host';
import { parseConfig, withPolicyLayer } from '../config/load';
import { Daemon } from '../runtime';
import { Logger } from '../log';
import { VERSION } from '../cli/version';

/** The page widths of the screenshots (CSS px): a desktop, a phone. */
export const DESKTOP = { width: 1280, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;
/**
 * The round the README's screenshots show: the bundled scenario with one motion done, the
 * next in flight and a plan for the rest (its log: apps/manager/README.md, *On the simulator*).
 */
export const SHOWCASE_ROUND = 15;

/** A daemon on the bundled scenario, listening on a free loopback port, its rounds driven by `round()`. */
export interface SimulatedDaemon {
  readonly daemon: Daemon;
  readonly host: Host;
  /** The status page's address. */
  readonly url: string;
  /** Rounds run so far. */
  rounds(): number;
  /** Runs one round, then one simulated interval. */
  round(): Promise<void>;
  close(): Promise<void>;
}

export async function simulatedDaemon(): Promise<SimulatedDaemon> {
  let config = parseConfig({ interval: 20, metrics: { enabled: true, listen: '127.0.0.1:0' } }, undefined, {
    env: 'sim',
    simCaseDir: bundledSimCase(),
    mode: 'act',
  });
  const host = createSimHost(config);
  config = withPolicyLayer(config, host.policyLayer);
  let port = 0;
  const daemon = new Daemon({
    config,
    host,
    log: new Logger(
      { format: 'json', level: 'info', ...(host.timeLabel ? { timeLabel: host.timeLabel.bind(host) } : {}) },
      () => undefined,
      () => host.clock.now(),
    ),
    version: VERSION,
    onListening: (a) => (port = a.port),
  });
  await daemon.start();
  const never = new AbortController().signal;
  let n = 0;
  return {
    daemon,
    host,
    url: `http://127.0.0.1:${port}/`,
    rounds: () => n,
    round: async () => {
      await daemon.runRound();
      n++;
      await host.clock.sleep(config.intervalSeconds, never);
    },
    close: async () => {
      daemon.stop('SIGTERM');
      await daemon.close();
    },
  };
}

/** Waits until the page shows round `n`: its nodes, its history drawn, the plan and the what-if. */
export async function waitForRound(page: Page, n: number): Promise<void> {
  await page.waitForSelector(`body[data-round="${n}"]`, { timeout: 60_000 });
  // an expression evaluated in the page (this program has no DOM types)
  await page.waitForFunction(
    [
      `(document.getElementById('history-note')?.textContent ?? '').includes('of ${n} kept')`,
      `document.querySelectorAll('figure.chart svg').length === 3`,
      `document.getElementById('plan-summary') !== null`,
      `document.getElementById('whatif-summary') !== null`,
    ].join(' && '),
    undefined,
    { timeout: 60_000 },
  );
  // the charts redraw after the data: one frame more
  await page.waitForTimeout(300);
}

/** Screenshots of the whole page at desktop and phone widths; returns the files written. */
export async function screenshotStatusPage(page: Page, outDir: string, name = 'status-page'): Promise<string[]> {
  const files: string[] = [];
  await page.setViewportSize(DESKTOP);
  await page.waitForTimeout(500);
  files.push(resolve(outDir, `${name}-desktop.png`));
  await page.screenshot({ path: files.at(-1)!, fullPage: true });
  await page.setViewportSize(PHONE);
  // the charts follow the width after a resize (200 ms debounce)
  await page.waitForTimeout(800);
  files.push(resolve(outDir, `${name}-phone.png`));
  await page.screenshot({ path: files.at(-1)!, fullPage: true });
  await page.setViewportSize(DESKTOP);
  return files;
}

async function main(outDir: string): Promise<void> {
  const sim = await simulatedDaemon();
  const browser = await launchChromium(DESKTOP);
  try {
    while (sim.rounds() < SHOWCASE_ROUND) await sim.round();
    const page = await browser.context.newPage();
    await page.goto(sim.url);
    await waitForRound(page, SHOWCASE_ROUND);
    for (const f of await screenshotStatusPage(page, outDir)) console.log(`wrote ${f}`);
  } finally {
    await browser.close();
    await sim.close();
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (out === undefined) {
    console.error('usage: status-showcase.ts <out-dir>');
    process.exitCode = 2;
  } else {
    main(resolve(out)).catch((err: unknown) => {
      console.error(`status-showcase: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    });
  }
}
