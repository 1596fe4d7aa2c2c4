import { createHash, scrypt, timingSafeEqual } from 'node:crypto';
import type { BasicCredential, BearerCredential, PasswordHash } from '../config/listener-security';

/**
 * scrypt verifications at once at most: each takes tens of ms of a thread-pool thread, so a
 * flood of wrong passwords could otherwise keep the pool (and the API client's DNS lookups) busy.
 * A request beyond it is answered 503 with `retry-after`.
 */
const MAX_PENDING_VERIFICATIONS = 4;
/**
 * Authorization headers verified with scrypt that are remembered (by their SHA-256) so that a
 * page polling every 2 s or a Prometheus scrape does not pay for scrypt each time. Only headers
 * that were right are kept; the oldest is forgotten first.
 */
const VERIFIED_CACHE_SIZE = 32;
/** The realm of the challenge (`WWW-Authenticate`). */
const REALM = 'poise-manager';

/** What an `Authorization` header is worth: `missing` (none, or another scheme), `wrong`, `ok`, or `busy` (try again). */
export type AuthVerdict = 'ok' | 'missing' | 'wrong' | 'busy';

function sha256(text: string | Buffer): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Equal in time independent of where they differ (both are hashed first, so lengths match). */
function sameSecret(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `Basic <base64(user:password)>` → the user and the password, or `undefined` when it is not that. */
function parseBasicHeader(header: string): { user: string; password: string } | undefined {
  const m = /^basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header);
  if (m === null) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Checks the `Authorization` header of a request against the listener's credential: a bearer
 * token (its SHA-256 compared in constant time) or an htpasswd-style file (`{SHA}`: SHA-1;
 * `$scrypt$`: node:crypto's scrypt on the thread pool, at most
 * {@link MAX_PENDING_VERIFICATIONS} at once, right answers cached). An unknown user costs the
 * same as a wrong password.
 */
export class RequestAuthenticator {
  private pending = 0;
  private readonly verified = new Map<string, true>();
  private readonly decoy: PasswordHash | undefined;

  constructor(private readonly credential: BearerCredential | BasicCredential) {
    this.decoy = credential.kind === 'basic' ? credential.users.values().next().value : undefined;
  }

  /** `Bearer` or `Basic`. */
  get scheme(): 'Bearer' | 'Basic' {
    return this.credential.kind === 'bearer' ? 'Bearer' : 'Basic';
  }

  /** The `WWW-Authenticate` of a 401. */
  get challenge(): string {
    return this.credential.kind === 'bearer' ? `Bearer realm="${REALM}"` : `Basic realm="${REALM}", charset="UTF-8"`;
  }

  /** For the start-up line: `bearer token from '/etc/…'`, `basic authentication, 2 users from '/etc/…'`. */
  get description(): string {
    const c = this.credential;
    return c.kind === 'bearer'
      ? `bearer token from '${c.file}'`
      : `basic authentication, ${c.users.size} ${c.users.size === 1 ? 'user' : 'users'} from '${c.file}'`;
  }

  /** The verdict on a request's `Authorization` header. */
  async verify(header: string | undefined): Promise<AuthVerdict> {
    if (header === undefined || header === '') return 'missing';
    const c = this.credential;
    if (c.kind === 'bearer') {
      const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
      if (m === null) return /^bearer\b/i.test(header) ? 'wrong' : 'missing';
      return sameSecret(sha256(m[1]!), c.tokenSha256) ? 'ok' : 'wrong';
    }
    if (!/^basic\b/i.test(header)) return 'missing';
    const given = parseBasicHeader(header);
    if (given === undefined) return 'wrong';
    const known = c.users.get(given.user);
    const hash = known ?? this.decoy!;
    const ok = await this.check(hash, given.password, header);
    return ok === 'busy' ? 'busy' : ok && known !== undefined ? 'ok' : 'wrong';
  }

  private async check(hash: PasswordHash, password: string, header: string): Promise<boolean | 'busy'> {
    if (hash.scheme === 'sha') return sameSecret(createHash('sha1').update(password).digest(), hash.digest);
    const key = sha256(header).toString('hex');
    if (this.verified.has(key)) {
      // most recently used last
      this.verified.delete(key);
      this.verified.set(key, true);
      return true;
    }
    if (this.pending >= MAX_PENDING_VERIFICATIONS) return 'busy';
    this.pending++;
    try {
      const n = 2 ** hash.logN;
      const derived = await new Promise<Buffer>((resolve, reject) =>
        scrypt(
          password,
          hash.salt,
          hash.hash.length,
          { N: n, r: hash.r, p: hash.p, maxmem: 256 * n * hash.r + 1024 * 1024 },
          (err, out) => (err ? reject(err) : resolve(out)),
        ),
      );
      const ok = sameSecret(derived, hash.hash);
      if (ok) {
        this.verified.set(key, true);
        if (this.verified.size > VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
      }
      return ok;
    } finally {
      this.pending--;
    }
  }
}

/**
 * An `$scrypt$` line for the basic-auth file (`user:` + this): what `poise-manager`'s README
 * shows how to make with node. `salt` random bytes (16 or more).
 */
export async function scryptHash(
  password: string,
  salt: Buffer,
  params: { logN: number; r: number; p: number } = { logN: 15, r: 8, p: 1 },
): Promise<string> {
  const n = 2 ** params.logN;
  const hash = await new Promise<Buffer>((resolve, reject) =>
    scrypt(
      password,
      salt,
      32,
      { N: n, r: params.r, p: params.p, maxmem: 256 * n * params.r + 1024 * 1024 },
      (err, out) => (err ? reject(err) : resolve(out)),
    ),
  );
  return `$scrypt$ln=${params.logN},r=${params.r},p=${params.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}
