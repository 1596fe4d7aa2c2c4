import { readFileSync, statSync } from 'node:fs';
import { inspect } from 'node:util';
import { ManagerError } from '../errors';

/** `USER@REALM!TOKENID=SECRET` (pve-docs `pveum.adoc`); the secret is what follows the last `=`. */
const TOKEN_FORMAT = /^([^\s@!=]+@[^\s@!=]+![^\s@!=]+)=(\S+)$/;

/**
 * A Proxmox VE API token. Its value is only reachable through {@link reveal}; every way it
 * could end up in a log, an error or a metric (`String()`, `JSON.stringify`, `util.inspect`)
 * prints `[redacted]`.
 */
export class ApiToken {
  readonly #value: string;
  /** `USER@REALM!TOKENID`: not secret, fine to log. */
  readonly id: string;
  /** Where it came from, for the start-up line: `file '/etc/poise/token'` or `environment variable 'X'`. */
  readonly origin: string;

  constructor(value: string, origin: string) {
    const m = TOKEN_FORMAT.exec(value);
    if (!m) {
      // never echo the value: it may be the secret in a wrong shape
      throw new ManagerError(
        'invalid-token',
        `API token from ${origin}: expected USER@REALM!TOKENID=SECRET (${value.length} characters read, not shown)`,
      );
    }
    this.#value = value;
    this.id = m[1]!;
    this.origin = origin;
  }

  /** The `Authorization` header value. Only the HTTP client calls this. */
  reveal(): string {
    return this.#value;
  }

  /** Strings a log line must never contain (the whole token and its secret part). */
  secrets(): string[] {
    return [this.#value, this.#value.slice(this.#value.lastIndexOf('=') + 1)];
  }

  toString(): string {
    return `[redacted token ${this.id}]`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/**
 * Reads the API token from a file (trailing newline and spaces trimmed) or an environment
 * variable. Throws `invalid-token` naming the source, never the value. `warnings` get a line
 * when the file is readable by group or others.
 */
export function loadToken(
  source: { file?: string | undefined; env?: string | undefined },
  environment: NodeJS.ProcessEnv = process.env,
  warnings: string[] = [],
): ApiToken {
  if (source.file !== undefined) {
    let text: string;
    try {
      text = readFileSync(source.file, 'utf8');
      const mode = statSync(source.file).mode & 0o777;
      if ((mode & 0o077) !== 0) {
        warnings.push(
          `API token file '${source.file}' is readable by group or others (mode ${mode.toString(8).padStart(4, '0')}); use chmod 600`,
        );
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new ManagerError('invalid-token', `cannot read the API token file '${source.file}' (${code ?? 'error'})`, {
        cause: err,
      });
    }
    return new ApiToken(text.trim(), `file '${source.file}'`);
  }
  if (source.env !== undefined) {
    const value = environment[source.env];
    if (value === undefined || value.trim() === '') {
      throw new ManagerError(
        'invalid-token',
        `the environment variable '${source.env}' holding the API token is not set`,
      );
    }
    return new ApiToken(value.trim(), `environment variable '${source.env}'`);
  }
  throw new ManagerError('invalid-token', "no API token configured ('pve.token-file' or 'pve.token-env')");
}
