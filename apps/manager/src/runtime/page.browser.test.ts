/**
 * The status page as a person sees it, in Debian's Chromium (playwright-core) on a daemon
 * running the bundled scenario on the simulator (its rounds driven by the test): the nodes, the
 * history, the decision log, the motions, the plan and the what-if appear; the page asks only
 * the daemon (no CDN), logs no error, and when the cluster read fails, or the daemon goes away,
 * it says so and keeps the last good state. Screenshots at desktop and phone widths go to
 * apps/manager/test-output/ (the README's are taken by the same code: `status-showcase.ts`).
 * Under CI=true a missing Chromium fails the test; elsewhere the test is skipped.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium } from '@poise/test-support/chromium';
import { PortError } from '../cluster/port';
import {
  DESKTOP,
  PHONE,
  SHOWCASE_ROUND,
  screenshotStatusPage,
  simulatedDaemon,
  waitForRound,
} from '../testing/status-showcase';

const haveChromium = existsSync(CHROMIUM);
const OUT = fileURLToPath(new URL('../../test-output/', import.meta.url));

describe('the status page in a headless browser', () => {
  it.runIf(haveChromium || process.env.CI === 'true')(
    'shows the scenario unfolding: a motion appears; a failed read and a daemon gone are said, the last state kept',
    async () => {
      expect(haveChromium, `Chromium not found at ${CHROMIUM} (apt-get install -y chromium)`).toBe(true);
      const sim = await simulatedDaemon();
      const browser = await launchChromium(DESKTOP);
      try {
        const page = await browser.context.newPage();
        const problems: string[] = [];
        const elsewhere: string[] = [];
        page.on('console', (m) => {
          if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
        });
        page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
        page.on('request', (r) => {
          if (!r.url().startsWith(sim.url)) elsewhere.push(r.url());
        });
        await page.goto(sim.url);
        await page.waitForSelector('body[data-round="0"]');
        expect(await page.textContent('#nodes-summary')).toBe('No round has read the cluster yet.');

        // rounds until the daemon requests a motion, then the page must show it
        while (sim.daemon.currentState().motion === null && sim.rounds() < 40) await sim.round();
        const first = sim.daemon.currentState().motion!;
        expect(first).not.toBeNull();
        const row = page.locator(`#motions-body tr[data-sid="${first.sid}"]`);
        await row.waitFor({ timeout: 60_000 });
        expect(await row.textContent()).toContain(`${first.source} → ${first.target}`);
        await expect.poll(() => page.textContent('#motion-now'), { timeout: 30_000 }).toContain(first.sid);

        // on to the README's round: one motion done, the next in flight, a plan for the rest
        while (sim.rounds() < SHOWCASE_ROUND) await sim.round();
        await waitForRound(page, SHOWCASE_ROUND);
        expect(await page.locator('#node-grid article.node').count()).toBe(3);
        expect(await page.locator('#decisions-body tr').count()).toBe(SHOWCASE_ROUND);
        expect(await page.locator('#decisions-body tr.outcome-move').count()).toBe(2);
        expect(await page.locator('#motions-body tr.result-succeeded').count()).toBe(1);
        // the plan was made when the page first saw a read: it says it is older than the cluster, and is made anew when asked
        await page.locator('#plan-stale').waitFor({ timeout: 30_000 });
        await page.click('#plan-refresh');
        await expect
          .poll(() => page.textContent('#plan-body'), { timeout: 30_000 })
          .toContain(`From round ${SHOWCASE_ROUND} `);
        expect(await page.locator('#plan-stale').count()).toBe(0);
        expect(await page.textContent('#plan-summary')).toMatch(/^\d+ migrations in \d+ steps/);
        expect(await page.textContent('#whatif-summary')).toContain('N+1');
        // the charts: a line of imbalance, a line per node in each load chart, a mark per motion
        const marks = await page.$$eval('figure.chart', (figs) =>
          figs.map((f) => ({
            chart: f.getAttribute('data-chart'),
            lines: f.querySelectorAll('g.mark-line.role-mark > path').length,
            points: f.querySelectorAll('g.mark-symbol.role-mark > path').length,
          })),
        );
        expect(marks).toEqual([
          { chart: 'imbalance', lines: 1, points: 2 },
          { chart: 'cpu', lines: 3, points: 0 },
          { chart: 'memory', lines: 3, points: 0 },
        ]);
        // the decision filter
        await page.selectOption('#filter-outcome', 'motions');
        expect(await page.locator('#decisions-body tr').count()).toBe(2);
        await page.selectOption('#filter-outcome', 'all');

        mkdirSync(OUT, { recursive: true });
        for (const f of await screenshotStatusPage(page, OUT)) expect(statSync(f).size, f).toBeGreaterThan(50_000);
        // at phone width nothing is wider than the screen
        await page.setViewportSize(PHONE);
        await page.waitForTimeout(800);
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
        await page.setViewportSize(DESKTOP);

        // the cluster read fails: the page says so and keeps the nodes of the last good read
        const port = sim.host.port;
        const read = port.readSnapshot.bind(port);
        port.readSnapshot = async () => {
          throw new PortError('GET /cluster/resources', 'timeout', 'no reply within 10 s');
        };
        await sim.round();
        const failed = page.locator('#banner-read-failed');
        await failed.waitFor({ timeout: 60_000 });
        expect(await failed.textContent()).toContain(`Reading the cluster failed in round ${SHOWCASE_ROUND + 1}`);
        expect(await failed.textContent()).toContain(`Showing the cluster as read in round ${SHOWCASE_ROUND}`);
        expect(await page.locator('#node-grid article.node').count()).toBe(3);
        await page.screenshot({ path: `${OUT}/status-page-read-failed.png` });
        port.readSnapshot = read;
        await sim.round();
        await failed.waitFor({ state: 'detached', timeout: 60_000 });

        // the daemon goes away: the page says it does not answer and keeps what it had
        await sim.close();
        await page.locator('#banner-silent').waitFor({ timeout: 60_000 });
        expect(await page.locator('#node-grid article.node').count()).toBe(3);
        expect(await page.textContent('#liveness')).toBe('● no answer');

        expect(problems.filter((p) => !/Failed to load resource|ERR_CONNECTION_REFUSED/.test(p))).toEqual([]);
        expect(elsewhere).toEqual([]);
      } finally {
        await browser.close();
        await sim.close();
      }
    },
    180_000,
  );
});
