/**
 * The status page as a person sees it, in Debian's Chromium (playwright-core) on a daemon
 * running the bundled scenario on the simulator (its rounds driven by the test): the nodes, the
 * history, the decision log, the motions, the plan and the what-if appear; the page asks only
 * the daemon (no CDN), logs no error, and when the cluster read fails, or the daemon goes away,
 * it says so and keeps the last good state. On a fake cluster of 13 nodes: the nodes in natural
 * order, a drain's node marked and its progress said, polls that bring nothing change nothing,
 * a text selection survives the next rounds, the end of the run said. Screenshots at desktop and phone widths go to
 * apps/manager/test-output/ (the README's are taken by the same code: `status-showcase.ts`).
 * Under CI=true a missing Chromium fails the test; elsewhere the test is skipped.
 */
import { existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium } from '@poise/test-support/chromium';
import type { Host } from '../cluster/host';
import { PortError } from '../cluster/port';
import { parseConfig } from '../config/load';
import { Logger } from '../log';
import { FAKE_START_TIME, FakeCluster, type FakeClusterSpec, fakeHost } from '../testing/fake-cluster';
import { GIB } from '../testing/support';
import { Daemon } from './daemon';
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

/** 13 nodes named node1…node13 (a heatmap, and names whose byte order is not their order); HA VMs on node2 and node11. */
function thirteenNodes(): FakeClusterSpec {
  return {
    nodes: Array.from({ length: 13 }, (_, i) => ({ name: `node${i + 1}` })),
    guests: Array.from({ length: 8 }, (_, i) => ({
      sid: `vm:${101 + i}`,
      node: i < 5 ? 'node2' : 'node11',
      cpu: 2,
      mem: 8 * GIB,
    })),
  };
}

/** A drain's progress record as `drain --execute` writes it (this process stands for it: it runs). */
function drainRecord(change: Record<string, unknown> = {}): string {
  return JSON.stringify({
    format: 'poise-drain-progress',
    version: 1,
    pid: process.pid,
    hostname: hostname(),
    nodes: ['node2'],
    state: 'running',
    startedAt: FAKE_START_TIME,
    updatedAt: FAKE_START_TIME + 40,
    total: 5,
    succeeded: 1,
    failed: 0,
    inFlight: [{ sid: 'vm:102', source: 'node2', target: 'node7', since: FAKE_START_TIME + 40 }],
    message: 'step 2: migrate vm:102 from node2 to node7',
    ...change,
  });
}

describe('the status page of a larger cluster in a headless browser', () => {
  it.runIf(haveChromium || process.env.CI === 'true')(
    'nodes in natural order, a draining node marked, nothing redrawn between rounds, a selection kept, the end said',
    async () => {
      expect(haveChromium, `Chromium not found at ${CHROMIUM} (apt-get install -y chromium)`).toBe(true);
      const dir = mkdtempSync(join(tmpdir(), 'poise-page-'));
      const config = parseConfig(
        {
          env: 'pve',
          mode: 'observe',
          pve: { urls: ['https://node1:8006'], 'token-env': 'POISE_TEST_TOKEN' },
          state: { file: join(dir, 'state.json') },
          metrics: { enabled: true, listen: '127.0.0.1:0' },
          lock: { enabled: false },
        },
        join(dir, 'poise-manager.yaml'),
      );
      const cluster = FakeCluster.create(thirteenNodes());
      const host = fakeHost(cluster) as Host & { finished?: () => boolean };
      let port = 0;
      const daemon = new Daemon({
        config,
        host,
        log: new Logger(
          { format: 'json', level: 'info' },
          () => undefined,
          () => cluster.time,
        ),
        version: 'test',
        onListening: (a) => (port = a.port),
      });
      await daemon.start();
      const never = new AbortController().signal;
      const round = async () => {
        await daemon.runRound();
        await host.clock.sleep(config.intervalSeconds, never);
      };
      const browser = await launchChromium(DESKTOP);
      try {
        for (let i = 0; i < 3; i++) await round();
        writeFileSync(join(dir, 'drain-progress.json'), drainRecord());
        const page = await browser.context.newPage();
        const problems: string[] = [];
        page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
        page.on('console', (m) => {
          if (m.type() === 'error') problems.push(`${m.type()}: ${m.text()}`);
        });
        await page.goto(`http://127.0.0.1:${port}/`);
        await page.waitForSelector('body[data-ready="true"][data-round="3"]', { timeout: 60_000 });

        // natural order: node2 before node10, in the cards and in the heatmap's rows
        const natural = Array.from({ length: 13 }, (_, i) => `node${i + 1}`);
        expect(
          await page.$$eval('#node-grid article.node', (cards) => cards.map((c) => c.getAttribute('data-node'))),
        ).toEqual(natural);
        expect(await page.locator('#chart-cpu canvas').count()).toBe(1);
        expect(await page.getAttribute('#chart-cpu canvas', 'aria-label')).toBe('Node CPU: 13 nodes');

        // the drain: its node marked, its progress at the top, the banner says what runs
        const node2 = page.locator('article[data-node="node2"]');
        expect(await node2.getAttribute('class')).toContain('draining');
        expect(await node2.textContent()).toContain('draining');
        expect(await page.locator('article.node.draining').count()).toBe(1);
        expect(await page.textContent('#banner-drain')).toBe(
          'observe mode — a drain of node2 is running: 1 of 5 moved, 1 in flight. The daemon itself moves nothing; the drain (poise-manager drain --execute) moves the guests.',
        );
        expect(await page.locator('#banner-notice').count()).toBe(0);
        expect(await page.textContent('#drain')).toContain('1 of 5 moved, 1 in flight, 3 left');
        expect(await page.textContent('#drain')).toContain('vm:102 node2 → node7');

        // polls that bring nothing new change nothing on the page
        await page.evaluate(`(() => {
          window.mutations = 0;
          new MutationObserver((records) => { window.mutations += records.length; })
            .observe(document.querySelector('main'), { subtree: true, childList: true, characterData: true, attributes: true });
        })()`);
        const polls = Number(await page.getAttribute('body', 'data-polls'));
        await page.waitForFunction(`Number(document.body.dataset.polls) >= ${polls + 2}`, undefined, {
          timeout: 60_000,
        });
        expect(await page.evaluate('window.mutations')).toBe(0);

        // a selection in the decision log survives the polls of the next rounds
        await page.evaluate(`(() => {
          const cell = document.querySelector('#decisions-body tr[data-round="2"] td.message');
          const range = document.createRange();
          range.selectNodeContents(cell);
          window.getSelection().removeAllRanges();
          window.getSelection().addRange(range);
        })()`);
        const selected = String(await page.evaluate('window.getSelection().toString()'));
        expect(selected.length).toBeGreaterThan(10);
        for (let i = 0; i < 2; i++) await round();
        await page.waitForSelector('body[data-round="5"]', { timeout: 60_000 });
        await page.waitForSelector('#decisions-body tr[data-round="5"]', { timeout: 60_000 });
        expect(await page.evaluate('window.getSelection().toString()')).toBe(selected);
        expect(await page.evaluate('window.getSelection().anchorNode.isConnected')).toBe(true);

        // the drain stops: said with its reason, the node no longer marked
        writeFileSync(
          join(dir, 'drain-progress.json'),
          drainRecord({
            state: 'stopped',
            inFlight: [],
            failed: 1,
            message: 'drain stopped after vm:102 failed: refused by HA',
          }),
        );
        await expect.poll(() => page.textContent('#drain'), { timeout: 60_000 }).toContain('Drain of node2: stopped');
        expect(await page.textContent('#drain')).toContain('drain stopped after vm:102 failed: refused by HA');
        expect(await page.locator('article.node.draining').count()).toBe(0);
        expect(await page.locator('#banner-drain').count()).toBe(0);

        // the environment ends: the page says so, no longer "live" or "active", and polls slowly
        host.finished = () => true;
        await page.locator('#banner-ended').waitFor({ timeout: 60_000 });
        expect(await page.textContent('#banner-ended')).toContain('The run has ended: the environment has ended.');
        expect(await page.textContent('#liveness')).toBe('● ended');
        expect(await page.textContent('#meta')).not.toMatch(/\bactive\b|live/);
        await page.waitForSelector('body[data-polling="30000"]', { timeout: 60_000 });
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
        daemon.stop('SIGTERM');
        await daemon.close();
      }
    },
    180_000,
  );
});
