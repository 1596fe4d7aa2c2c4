/**
 * Debian's Chromium through playwright-core, for the tests and screenshots that look at a page
 * as a person would (the lab's report, the daemon's status page). Repository tooling, imported
 * by path; never shipped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Where Debian installs Chromium (`apt-get install -y chromium`); `POISE_CHROMIUM` overrides it. */
export const CHROMIUM = process.env.POISE_CHROMIUM ?? '/usr/bin/chromium';
/** Flags for a headless Chromium that talks to nobody. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium with a fresh profile; `close()` closes it and removes the profile. */
export async function launchChromium(viewport: {
  width: number;
  height: number;
}): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'poise-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
