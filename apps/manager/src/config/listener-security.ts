import { createHash, createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { ManagerError } from '../errors';
import { secretFileModeWarning } from './secret';

/** A bearer token file longer than this is not a token (refused before it is read). */
const MAX_TOKEN_FILE_BYTES = 4096;
/** A basic-auth file longer than this is refused before it is read. */
const MAX_USERS_FILE_BYTES = 1024 * 1024;
/** A PEM file longer than this is refused before it is read (a long chain is a few KiB). */
const MAX_PEM_FILE_BYTES = 1024 * 1024;
/** A bearer token shorter than this is accepted with a warning at start (easy to guess). */
const SHORT_TOKEN_CHARS = 16;
/** RFC 6750 `b64token`: what a bearer token may be made of. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
/** A user name of the basic-auth file: no white space, no colon. */
const USER_NAME = /^[^\s:]+$/;
/**
 * The `$scrypt$` hashes accepted: `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>`, salt and
 * hash in base64 (standard or unpadded; `.` for `+` as passlib writes it).
 */
const SCRYPT_HASH =
  /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/.]+={0,2})\$([A-Za-z0-9+/.]+={0,2})$/;
/** scrypt cost bounds: ln 10..20 (N = 1024 .. 1 M), r 1..32, p 1..16; salt ≥ 8 bytes, hash 16..64 bytes. */
const SCRYPT_LN = { min: 10, max: 20 } as const;
const SCRYPT_R = { min: 1, max: 32 } as const;
const SCRYPT_P = { min: 1, max: 16 } as const;
const SCRYPT_MIN_SALT_BYTES = 8;
const SCRYPT_HASH_BYTES = { min: 16, max: 64 } as const;
/** Hash formats people find in htpasswd files that node:crypto cannot verify, and why each is refused. */
const REFUSED_FORMATS: readonly { readonly prefix: string; readonly what: string }[] = [
  { prefix: '$apr1$', what: "Apache MD5 ('$apr1$', the default of htpasswd)" },
  { prefix: '$2y$', what: "bcrypt ('$2y$', htpasswd -B)" },
  { prefix: '$2a$', what: "bcrypt ('$2a$')" },
  { prefix: '$2b$', what: "bcrypt ('$2b$')" },
  { prefix: '$1$', what: "MD5-crypt ('$1$')" },
  { prefix: '$5$', what: "SHA-256-crypt ('$5$')" },
  { prefix: '$6$', what: "SHA-512-crypt ('$6$')" },
  { prefix: '$argon2', what: "Argon2 ('$argon2…')" },
  { prefix: '{SSHA}', what: "salted SHA-1 ('{SSHA}')" },
];
const ACCEPTED_FORMATS = "accepted: '{SHA}' (htpasswd -s) and '$scrypt$ln=…,r=…,p=…$<salt>$<hash>'";

/** A password hash of the basic-auth file. */
export type PasswordHash =
  /** `{SHA}`: base64 of the SHA-1 of the password (htpasswd -s; unsalted). */
  | { readonly scheme: 'sha'; readonly digest: Buffer }
  /** `$scrypt$`: node:crypto's scrypt with these parameters. */
  | {
      readonly scheme: 'scrypt';
      readonly logN: number;
      readonly r: number;
      readonly p: number;
      readonly salt: Buffer;
      readonly hash: Buffer;
    };

/** `metrics.bearer-token-file`: the token itself is not kept, only its SHA-256 (compared in constant time). */
export interface BearerCredential {
  readonly kind: 'bearer';
  readonly file: string;
  readonly tokenSha256: Buffer;
}

/** `metrics.basic-auth-file`: user name → hash, in the file's order. */
export interface BasicCredential {
  readonly kind: 'basic';
  readonly file: string;
  readonly users: ReadonlyMap<string, PasswordHash>;
}

/** What the listener needs beyond its address: who may ask, and its certificate. */
export interface ListenerSecurity {
  readonly auth: BearerCredential | BasicCredential | undefined;
  readonly tls:
    | {
        readonly certFile: string;
        readonly keyFile: string;
        /** PEM texts, as node:https takes them. */
        readonly cert: string;
        readonly key: string;
      }
    | undefined;
  /** Lines for the start-up log (a key file readable by others, a short token, an expired certificate, …). */
  readonly warnings: readonly string[];
}

/** Thrown by a check with the key and the file in its message; collected by {@link loadListenerSecurity}. */
class Problem extends Error {}

function readSmall(key: string, path: string, maxBytes: number, what: string): string {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Problem(`${key}: '${path}' is not a regular file`);
    size = st.size;
  } catch (err) {
    if (err instanceof Problem) throw err;
    throw new Problem(`${key}: cannot read '${path}' (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  if (size > maxBytes)
    throw new Problem(`${key}: '${path}' is ${size} bytes, too long for ${what} (at most ${maxBytes})`);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Problem(`${key}: cannot read '${path}' (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

function bearer(path: string, warnings: string[]): BearerCredential {
  const key = 'metrics.bearer-token-file';
  const token = readSmall(key, path, MAX_TOKEN_FILE_BYTES, 'a token').trim();
  if (token === '') throw new Problem(`${key}: '${path}' is empty; expected one line holding the token`);
  // never echo the value: say what is wrong with it
  if (/\s/.test(token))
    throw new Problem(`${key}: '${path}' holds more than one word; expected one line holding the token`);
  if (!BEARER_TOKEN.test(token))
    throw new Problem(
      `${key}: '${path}' holds characters a bearer token cannot carry; expected letters, digits and - . _ ~ + / (then = padding)`,
    );
  if (token.length < SHORT_TOKEN_CHARS)
    warnings.push(
      `${key}: the token in '${path}' has ${token.length} characters; one of at least ${SHORT_TOKEN_CHARS} (e.g. openssl rand -hex 32) is harder to guess`,
    );
  const mode = secretFileModeWarning(path, 'bearer token file');
  if (mode !== undefined) warnings.push(`${key}: ${mode}`);
  return { kind: 'bearer', file: path, tokenSha256: createHash('sha256').update(token).digest() };
}

function base64Bytes(text: string): Buffer {
  return Buffer.from(text.replace(/\./g, '+'), 'base64');
}

/** One hash of the basic-auth file, or a message saying why it is refused. */
function parsePasswordHash(hash: string): PasswordHash | string {
  if (hash.startsWith('{SHA}')) {
    const digest = base64Bytes(hash.slice(5));
    if (digest.length !== 20 || !/^[A-Za-z0-9+/]+={0,2}$/.test(hash.slice(5)))
      return "a '{SHA}' hash is the base64 of 20 bytes (htpasswd -s)";
    return { scheme: 'sha', digest };
  }
  if (hash.startsWith('$scrypt$')) {
    const m = SCRYPT_HASH.exec(hash);
    if (m === null) return "expected '$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt base64>$<hash base64>'";
    const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const bad = (name: string, value: number, range: { min: number; max: number }) =>
      value < range.min || value > range.max
        ? `scrypt ${name} must be ${range.min} to ${range.max}, got ${value}`
        : undefined;
    const range = bad('ln', logN, SCRYPT_LN) ?? bad('r', r, SCRYPT_R) ?? bad('p', p, SCRYPT_P);
    if (range !== undefined) return range;
    const salt = base64Bytes(m[4]!);
    const digest = base64Bytes(m[5]!);
    if (salt.length < SCRYPT_MIN_SALT_BYTES)
      return `scrypt salt must be at least ${SCRYPT_MIN_SALT_BYTES} bytes, got ${salt.length}`;
    if (digest.length < SCRYPT_HASH_BYTES.min || digest.length > SCRYPT_HASH_BYTES.max)
      return `scrypt hash must be ${SCRYPT_HASH_BYTES.min} to ${SCRYPT_HASH_BYTES.max} bytes, got ${digest.length}`;
    return { scheme: 'scrypt', logN, r, p, salt, hash: digest };
  }
  const refused = REFUSED_FORMATS.find((f) => hash.startsWith(f.prefix));
  if (refused !== undefined)
    return `${refused.what} is not accepted (node:crypto cannot verify it); ${ACCEPTED_FORMATS}`;
  return `not a hash this daemon verifies (plain text or DES crypt?); ${ACCEPTED_FORMATS}`;
}

/**
 * Parses an htpasswd-style file: `user:hash` per line, `#` comments and blank lines skipped.
 * Throws a message naming `file:line` for a line that is not `user:hash`, a user given twice, or
 * a hash format that is not accepted (see {@link parsePasswordHash}).
 */
function parseBasicAuthFile(text: string, path: string, key = 'metrics.basic-auth-file'): BasicCredential {
  const users = new Map<string, PasswordHash>();
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, '').trim();
    if (line === '' || line.startsWith('#')) continue;
    const where = `${key}: '${path}':${i + 1}`;
    const colon = line.indexOf(':');
    const user = colon < 0 ? line : line.slice(0, colon);
    if (colon <= 0 || !USER_NAME.test(user)) throw new Problem(`${where}: expected 'user:hash'`);
    if (users.has(user)) throw new Problem(`${where}: user '${user}' is given twice`);
    const hash = parsePasswordHash(line.slice(colon + 1));
    if (typeof hash === 'string') throw new Problem(`${where}: user '${user}': ${hash}`);
    users.set(user, hash);
  }
  if (users.size === 0) throw new Problem(`${key}: '${path}' holds no user; expected lines of 'user:hash'`);
  return { kind: 'basic', file: path, users };
}

function basic(path: string, warnings: string[]): BasicCredential {
  const key = 'metrics.basic-auth-file';
  const credential = parseBasicAuthFile(readSmall(key, path, MAX_USERS_FILE_BYTES, 'a basic-auth file'), path);
  const weak = [...credential.users].filter(([, h]) => h.scheme === 'sha').map(([u]) => `'${u}'`);
  if (weak.length > 0)
    warnings.push(
      `${key}: ${weak.join(', ')} in '${path}' ${weak.length === 1 ? 'has a' : 'have'} '{SHA}' hash (unsalted SHA-1: quick to guess from a copy of the file); a '$scrypt$' hash is stronger`,
    );
  const mode = secretFileModeWarning(path, 'basic-auth file');
  if (mode !== undefined) warnings.push(`${key}: ${mode}`);
  return credential;
}

function tls(certFile: string, keyFile: string, warnings: string[]): NonNullable<ListenerSecurity['tls']> {
  const problems: string[] = [];
  let cert: X509Certificate | undefined;
  let certPem = '';
  let key: KeyObject | undefined;
  let keyPem = '';
  try {
    certPem = readSmall('metrics.tls.cert-file', certFile, MAX_PEM_FILE_BYTES, 'a certificate');
    if (!certPem.includes('-----BEGIN CERTIFICATE-----'))
      throw new Problem(`metrics.tls.cert-file: '${certFile}' holds no PEM certificate`);
    try {
      cert = new X509Certificate(certPem);
    } catch (err) {
      throw new Problem(
        `metrics.tls.cert-file: '${certFile}' holds no valid PEM certificate (${(err as Error).message})`,
      );
    }
  } catch (err) {
    if (!(err instanceof Problem)) throw err;
    problems.push(err.message);
  }
  try {
    keyPem = readSmall('metrics.tls.key-file', keyFile, MAX_PEM_FILE_BYTES, 'a private key');
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(keyPem))
      throw new Problem(`metrics.tls.key-file: '${keyFile}' holds no PEM private key`);
    if (/ENCRYPTED/.test(keyPem))
      throw new Problem(
        `metrics.tls.key-file: '${keyFile}' holds an encrypted private key; expected one without a passphrase`,
      );
    try {
      key = createPrivateKey(keyPem);
    } catch (err) {
      throw new Problem(
        `metrics.tls.key-file: '${keyFile}' holds no valid PEM private key (${(err as Error).message})`,
      );
    }
  } catch (err) {
    if (!(err instanceof Problem)) throw err;
    problems.push(err.message);
  }
  if (cert !== undefined && key !== undefined && !cert.checkPrivateKey(key))
    problems.push(`metrics.tls.key-file: '${keyFile}' is not the private key of the certificate in '${certFile}'`);
  if (problems.length > 0) throw new Problem(problems.join('\n'));
  const validTo = Date.parse(cert!.validTo);
  if (Number.isFinite(validTo) && validTo < Date.now())
    warnings.push(
      `metrics.tls.cert-file: the certificate in '${certFile}' expired on ${new Date(validTo).toISOString()}`,
    );
  const mode = secretFileModeWarning(keyFile, 'TLS key file');
  if (mode !== undefined) warnings.push(`metrics.tls.key-file: ${mode}`);
  return { certFile, keyFile, cert: certPem, key: keyPem };
}

/** The files of `metrics` the listener reads (`ManagerConfig['metrics']` holds them; declared here so config/load can import this module). */
interface ListenerFiles {
  readonly bearerTokenFile?: string | undefined;
  readonly basicAuthFile?: string | undefined;
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
}

/**
 * Reads the files the listener's authentication and TLS name (`metrics.bearer-token-file`,
 * `metrics.basic-auth-file`, `metrics.tls.cert-file`/`key-file`) and checks them. Throws a
 * {@link ManagerError} `invalid-config` with one line per problem, each naming the key and the
 * file (`metrics.tls.cert-file: '/etc/poise-manager/cert.pem' holds no PEM certificate`);
 * never shows a secret.
 */
export function loadListenerSecurity(metrics: ListenerFiles): ListenerSecurity {
  const warnings: string[] = [];
  const problems: string[] = [];
  const attempt = <T>(f: () => T): T | undefined => {
    try {
      return f();
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      problems.push(err.message);
      return undefined;
    }
  };
  if (metrics.bearerTokenFile !== undefined && metrics.basicAuthFile !== undefined)
    problems.push(
      "metrics.bearer-token-file: expected at most one of 'metrics.bearer-token-file' and 'metrics.basic-auth-file', got both",
    );
  const bearerFile = metrics.bearerTokenFile;
  const basicFile = metrics.basicAuthFile;
  const auth =
    bearerFile !== undefined
      ? attempt(() => bearer(bearerFile, warnings))
      : basicFile !== undefined
        ? attempt(() => basic(basicFile, warnings))
        : undefined;
  const files = metrics.tls;
  const t = files === undefined ? undefined : attempt(() => tls(files.certFile, files.keyFile, warnings));
  if (problems.length > 0) throw new ManagerError('invalid-config', problems.join('\n'));
  return { auth, tls: t, warnings };
}
