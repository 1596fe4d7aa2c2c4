import { statSync } from 'node:fs';
import { type ApiToken, PveApiError, readTokenFile, tokenFromEnv } from '@poise/pve-api';
import { ManagerError } from '../errors';

/**
 * The API token and where it came from. The token is `@poise/pve-api`'s `ApiToken`, the one
 * parser of `USER@REALM!TOKENID=SECRET` (a leading `PVEAPIToken=` and white space around it
 * are accepted, split at the last `=` as the server does): its secret is in a private field,
 * and `String()`, `JSON.stringify`, `util.inspect` show only the token id.
 */
export interface LoadedToken {
  readonly token: ApiToken;
  /** For the start-up line: `file '/etc/poise-manager/token'` or `environment variable 'X'`. */
  readonly origin: string;
}

/**
 * A warning when a file holding a secret (`what`: `API token file`, …) can be read by group or
 * others, `undefined` when only its owner can (or it cannot be stat'ed: its reader says why).
 */
export function secretFileModeWarning(path: string, what: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o077) === 0) return undefined;
  return `${what} '${path}' is readable by group or others (mode ${mode.toString(8).padStart(4, '0')}); use chmod 600`;
}

/**
 * Reads the API token from a file or an environment variable (`@poise/pve-api`'s
 * `readTokenFile` / `tokenFromEnv`). Throws `invalid-token` naming the source, never the value.
 * `warnings` get a line when the file is readable by group or others.
 */
export function loadToken(
  source: { file?: string | undefined; env?: string | undefined },
  environment: NodeJS.ProcessEnv = process.env,
  warnings: string[] = [],
): LoadedToken {
  try {
    if (source.file !== undefined) {
      const token = readTokenFile(source.file);
      const warning = secretFileModeWarning(source.file, 'API token file');
      if (warning !== undefined) warnings.push(warning);
      return { token, origin: `file '${source.file}'` };
    }
    if (source.env !== undefined)
      return { token: tokenFromEnv(source.env, environment), origin: `environment variable '${source.env}'` };
  } catch (err) {
    if (err instanceof PveApiError)
      throw new ManagerError('invalid-token', `API token: ${err.message}`, { cause: err });
    throw err;
  }
  throw new ManagerError('invalid-token', "no API token configured ('pve.token-file' or 'pve.token-env')");
}
