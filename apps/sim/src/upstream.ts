import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (two levels above apps/sim/src). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * The reference regression cases: `$POISE_UPSTREAM_TESTS`, else `../shared/upstream-tests`
 * beside the repository. They are read in place, never copied.
 */
export function upstreamTestsDir(): string {
  const fromEnv = process.env.POISE_UPSTREAM_TESTS;
  return fromEnv ? resolve(fromEnv) : resolve(REPO_ROOT, '../shared/upstream-tests');
}

/** Whether the reference cases are present; under CI their absence is an error, not a skip. */
export function upstreamAvailability(): { dir: string; present: boolean; mustExist: boolean } {
  const dir = upstreamTestsDir();
  return { dir, present: existsSync(dir), mustExist: process.env.CI === 'true' };
}
