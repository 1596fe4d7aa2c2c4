import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (above apps/sim/src/testing). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * The reference regression cases: `$POISE_UPSTREAM_TESTS`, else `../shared/upstream-tests`
 * beside the repository. They are read in place, never copied.
 */
function upstreamTestsDir(): string {
  const fromEnv = process.env.POISE_UPSTREAM_TESTS;
  return fromEnv ? resolve(fromEnv) : resolve(REPO_ROOT, '../shared/upstream-tests');
}

/** Whether the reference cases are present; under CI their absence is an error, not a skip. */
export function upstreamAvailability(): { dir: string; present: boolean; mustExist: boolean } {
  const dir = upstreamTestsDir();
  return { dir, present: existsSync(dir), mustExist: process.env.CI === 'true' };
}

/**
 * The workload traces (PlanetLab days in `planetlab/`): `$POISE_TRACES`, else `../shared/traces`
 * beside the repository, read in place; under CI their absence is an error, not a skip.
 */
export function tracesAvailability(): { dir: string; present: boolean; mustExist: boolean } {
  const fromEnv = process.env.POISE_TRACES;
  const dir = fromEnv ? resolve(fromEnv) : resolve(REPO_ROOT, '../shared/traces');
  return { dir, present: existsSync(join(dir, 'planetlab')), mustExist: process.env.CI === 'true' };
}

/**
 * A scenario's variants: its `variants` file (`{"<name>": ["<crs-key>=<value>", ...]}`), each
 * run with those `--set` overrides and compared with `log.expect.<name>`; `{}` without the
 * file. Throws naming the file when it is malformed.
 */
export function scenarioVariants(dir: string): Record<string, string[]> {
  const path = resolve(dir, 'variants');
  if (!existsSync(path)) return {};
  const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const ok =
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.entries(value).every(
      ([k, v]) =>
        /^[a-z0-9][a-z0-9.-]*$/.test(k) &&
        k !== 'pve-5.2.0' &&
        Array.isArray(v) &&
        v.every((x) => typeof x === 'string'),
    );
  if (!ok) throw new Error(`'${path}': expected {"<variant name>": ["<crs-key>=<value>", ...]}`);
  return value as Record<string, string[]>;
}
