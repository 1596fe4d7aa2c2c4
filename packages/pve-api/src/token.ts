import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { PveApiError } from './errors';

/** What a token looks like in every message: the id is shown, the secret never. */
const REDACTED = '[redacted]';

/**
 * A Proxmox VE API token (`USER@REALM!TOKENID=SECRET`). The secret lives in a private field: it
 * is in no enumerable property, and `toString`, `toJSON` and `util.inspect` print only the
 * token id. Only the transport reads it, to build the `Authorization` header.
 */
export class ApiToken {
  /** `USER@REALM!TOKENID` — safe to log. */
  readonly tokenId: string;
  readonly #secret: string;

  private constructor(tokenId: string, secret: string) {
    this.tokenId = tokenId;
    this.#secret = secret;
  }

  /**
   * Parse `USER@REALM!TOKENID=SECRET` (an optional leading `PVEAPIToken=` and surrounding
   * white space are accepted). The split is at the last `=`, as the server does.
   * @param text the token text
   * @param source where it came from, for messages (e.g. `file '/etc/poise/token'`)
   * @throws PveApiError `bad-token` when empty or not of that form; the message never repeats the text
   */
  static parse(text: string, source = 'the token'): ApiToken {
    let value = text.trim();
    if (value.startsWith('PVEAPIToken=')) value = value.slice('PVEAPIToken='.length);
    if (value === '') throw new PveApiError('bad-token', `${source} is empty`);
    if (/\s/.test(value)) {
      throw new PveApiError(
        'bad-token',
        `${source} contains white space inside; expected one line 'USER@REALM!TOKENID=SECRET'`,
      );
    }
    const eq = value.lastIndexOf('=');
    const tokenId = eq < 0 ? value : value.slice(0, eq);
    const secret = eq < 0 ? '' : value.slice(eq + 1);
    const bang = tokenId.indexOf('!');
    const user = bang < 0 ? tokenId : tokenId.slice(0, bang);
    const name = bang < 0 ? '' : tokenId.slice(bang + 1);
    const at = user.lastIndexOf('@');
    if (eq < 0 || secret === '' || bang < 0 || name === '' || at <= 0 || at === user.length - 1) {
      throw new PveApiError(
        'bad-token',
        `${source} has the wrong format; expected 'USER@REALM!TOKENID=SECRET' (e.g. 'poise@pve!balancer=<uuid>')`,
      );
    }
    return new ApiToken(tokenId, secret);
  }

  /** The value of the `Authorization` header. Used by the transport only; never log it. */
  authorizationHeader(): string {
    return `PVEAPIToken=${this.tokenId}=${this.#secret}`;
  }

  /** Replace every occurrence of the secret in `text` (defence in depth for messages built from replies). */
  redact(text: string): string {
    return this.#secret.length > 0 ? text.split(this.#secret).join(REDACTED) : text;
  }

  /** `ApiToken(USER@REALM!TOKENID=[redacted])`. */
  toString(): string {
    return `ApiToken(${this.tokenId}=${REDACTED})`;
  }

  /** `{ tokenId }` only. */
  toJSON(): { tokenId: string } {
    return { tokenId: this.tokenId };
  }

  /** `util.inspect` shows the id only. */
  [inspect.custom](): string {
    return this.toString();
  }
}

/**
 * Read an API token from a file (one line `USER@REALM!TOKENID=SECRET`, a trailing newline is fine).
 * @throws PveApiError `bad-token`: file missing or unreadable, empty, wrong format
 */
export function readTokenFile(path: string): ApiToken {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'is not readable (permission denied)'
          : `cannot be read (${code ?? 'error'})`;
    throw new PveApiError('bad-token', `token file '${path}' ${why}`, { cause: err });
  }
  return ApiToken.parse(text, `token file '${path}'`);
}

/**
 * Read an API token from an environment variable (default `PVE_API_TOKEN`).
 * @param name variable name
 * @param env the environment (default `process.env`)
 * @throws PveApiError `bad-token`: unset, empty, wrong format
 */
export function tokenFromEnv(name = 'PVE_API_TOKEN', env: NodeJS.ProcessEnv = process.env): ApiToken {
  const value = env[name];
  if (value === undefined) throw new PveApiError('bad-token', `environment variable '${name}' is not set`);
  return ApiToken.parse(value, `environment variable '${name}'`);
}
