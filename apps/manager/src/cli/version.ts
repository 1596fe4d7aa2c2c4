import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package version, set by the build (`tsup.config.ts` defines it from package.json, so a
 * bundle of one file carries it); `undefined` when running from source.
 */
declare const __POISE_MANAGER_VERSION__: string | undefined;

/** The package this app is (the version is read from its package.json when running from source). */
const PACKAGE_NAME = '@poise/manager';
/** How many directories up from this module the package.json may be (src/ → 1, dist/ → 1). */
const MAX_LEVELS_UP = 3;

/**
 * The version of `@poise/manager`: the one the build defined, else read from the package.json
 * above `moduleUrl` (the source tree under tsx). Throws when neither is found: a version that
 * cannot be told is a broken install, not `0.0.0`.
 */
export function packageVersion(
  defined: string | undefined = buildVersion(),
  moduleUrl: string = import.meta.url,
): string {
  if (defined !== undefined && defined !== '') return defined;
  let dir = dirname(fileURLToPath(moduleUrl));
  for (let level = 0; level <= MAX_LEVELS_UP; level++) {
    const version = versionIn(join(dir, 'package.json'));
    if (version !== undefined) return version;
    dir = dirname(dir);
  }
  throw new Error(
    `cannot find the package.json of '${PACKAGE_NAME}' above '${fileURLToPath(moduleUrl)}' to read the version from`,
  );
}

function buildVersion(): string | undefined {
  return typeof __POISE_MANAGER_VERSION__ === 'string' ? __POISE_MANAGER_VERSION__ : undefined;
}

/** The version of the package.json at `path` if it is this app's, else `undefined`. */
function versionIn(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
  return pkg.name === PACKAGE_NAME && typeof pkg.version === 'string' ? pkg.version : undefined;
}

/** The running version of poise-manager. */
export const VERSION = packageVersion();
