import { inspect } from 'node:util';
import { Agent, fetch } from 'undici';
import { PveApiError, type PveApiErrorCode } from './errors';
import type { ApiToken } from './token';
import { buildTls, failedBeforeSending, type PveTlsOptions, type TransportSecurity } from './tls';

/** Default time for one attempt (connect, send, whole reply), in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** Default number of GET retries after every base URL has been tried once. */
export const DEFAULT_RETRIES = 2;
/** Default first backoff delay, in milliseconds (doubled per retry, with jitter). */
export const DEFAULT_BACKOFF_BASE_MS = 250;
/** Default cap of one backoff delay, in milliseconds. */
export const DEFAULT_BACKOFF_MAX_MS = 5_000;
/** Longest time to wait for a TCP + TLS connection, in milliseconds (capped by the attempt timeout). */
const CONNECT_TIMEOUT_MS = 10_000;
/** The API root that is appended to base URLs that do not end with it. */
const API_ROOT = '/api2/json';

/** Options of the HTTP transport (also accepted by `PveClient`). */
export interface TransportOptions {
  /**
   * Base URLs of cluster nodes, tried in order with failover: `https://node1:8006` (the
   * `/api2/json` root is appended when missing). At least one. Plain `http:` needs `allowPlainHttp`.
   */
  baseUrls: readonly string[];
  /** The API token (see `readTokenFile`, `tokenFromEnv`, `ApiToken.parse`). */
  token: ApiToken;
  /** Certificate verification (verified against the system CAs when left out). */
  tls?: PveTlsOptions;
  /** Allow `http:` base URLs. Insecure; reported by `security.plainHttp`. Default `false`. */
  allowPlainHttp?: boolean;
  /** Time for one attempt in ms (connect, send, complete reply). Default 15 000. */
  timeoutMs?: number;
  /**
   * GET retries after each base URL has been tried once (so at most `baseUrls.length + retries`
   * attempts). Default 2. POSTs are retried only after a connection failure that happened before
   * any byte was sent (then the same bound applies); never once the request may have reached a server.
   */
  retries?: number;
  /** First backoff delay in ms (then doubled, capped by `backoffMaxMs`, times a jitter in [0.5, 1)). Default 250. */
  backoffBaseMs?: number;
  /** Cap of one backoff delay in ms. Default 5 000. */
  backoffMaxMs?: number;
  /** Aborts every call in flight and every later call (daemon shutdown). */
  signal?: AbortSignal;
  /** Called after each failed attempt that will be retried (for logs and metrics). */
  onRetry?: (event: RetryEvent) => void;
  /** Random numbers in [0, 1) for the jitter (default `Math.random`; tests pass a fixed one). */
  random?: () => number;
  /** Waits `ms` (default a timer that the signal cancels; tests may pass a fake). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** One failed attempt that is about to be retried. */
export interface RetryEvent {
  /** `METHOD /path/template`. */
  endpoint: string;
  /** Base URL of the failed attempt. */
  baseUrl: string;
  /** 1-based attempt number that failed. */
  attempt: number;
  /** The failure. */
  error: PveApiError;
  /** Base URL of the next attempt. */
  nextBaseUrl: string;
  /** Delay before the next attempt, ms (0 when failing over to a URL not tried yet). */
  delayMs: number;
}

/** One request, as the client hands it to the transport. */
export interface CallSpec {
  method: 'GET' | 'POST';
  /** `METHOD /path/template`, for messages. */
  endpoint: string;
  /** Path below the API root, already percent-encoded (`/nodes/pve1/status`). */
  path: string;
  /** Query parameters (booleans are sent as 1/0; undefined values are left out). */
  query?: Record<string, string | number | boolean | undefined>;
  /** Form parameters of a POST (booleans as 1/0). */
  form?: Record<string, string | number | boolean | undefined>;
  /** Privilege the endpoint needs, named in 401/403 errors. */
  privilege: string;
  /** Per-call abort signal. */
  signal?: AbortSignal;
  /** A non-2xx reply that is an answer rather than a failure (returned, not thrown or retried). */
  isAnswer?: (status: number, message: string) => boolean;
  /**
   * A non-2xx reply that is the handler's refusal of an action (see `isActionRefusal`): thrown
   * as `refused` with `mayHaveBeenApplied: false`, never retried.
   */
  isRefusal?: (status: number, message: string) => boolean;
}

/** What a call returns: the `data` of a 2xx reply, or an answer accepted by `isAnswer`. */
export interface CallResult {
  /** HTTP status. */
  status: number;
  /** `data` of the reply (`undefined` for an accepted non-2xx answer). */
  data: unknown;
  /** The server's message (reason phrase or `message`), for non-2xx answers. */
  message: string;
  /** Base URL that answered. */
  baseUrl: string;
}

interface ParsedBaseUrl {
  /** `https://host:8006/api2/json` */
  root: string;
  /** `https://host:8006` (for messages) */
  display: string;
  plain: boolean;
}

function parseBaseUrl(text: string, allowPlainHttp: boolean): ParsedBaseUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new PveApiError('bad-option', `base url '${text}' is not a url (expected e.g. 'https://pve1:8006')`);
  }
  if (url.username || url.password) {
    throw new PveApiError('bad-option', `base url '${url.host}' must not carry credentials; use an API token`);
  }
  if (url.search || url.hash)
    throw new PveApiError('bad-option', `base url '${text}' must not have a query or fragment`);
  if (url.protocol === 'http:') {
    if (!allowPlainHttp) {
      throw new PveApiError(
        'bad-option',
        `base url '${text}' is plain http; the token would travel in clear text. Use https, or set 'allowPlainHttp: true' explicitly`,
      );
    }
  } else if (url.protocol !== 'https:') {
    throw new PveApiError('bad-option', `base url '${text}' has protocol '${url.protocol}'; expected 'https:'`);
  }
  let path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith(API_ROOT)) path += API_ROOT;
  return { root: `${url.origin}${path}`, display: url.origin, plain: url.protocol === 'http:' };
}

function encodeParams(params: Record<string, string | number | boolean | undefined>): URLSearchParams {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    out.append(key, typeof value === 'boolean' ? (value ? '1' : '0') : String(value));
  }
  return out;
}

const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS_|ERR_SSL_/;

function errorCodeOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function rootCause(err: unknown): unknown {
  let e = err;
  for (let depth = 0; depth < 5 && e instanceof Error && e.cause !== undefined; depth++) e = e.cause;
  return e;
}

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the abort reason as given, as fetch and timers/promises reject
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as above
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Bounded `n` ≥ 0 integer option, or the default. */
function intOption(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) {
    throw new PveApiError('bad-option', `'${name}' must be an integer ≥ ${min}, got ${String(value)}`);
  }
  return value;
}

/**
 * HTTPS transport of the client: token header, failover between base URLs, per-attempt timeout,
 * bounded retries with exponential backoff and jitter (GETs; POSTs only when nothing was sent),
 * verified TLS. The token secret is held by the `ApiToken` and never copied into messages.
 */
export class Transport {
  /** What is verified, for the daemon to log at start. */
  readonly security: TransportSecurity;
  readonly #urls: ParsedBaseUrl[];
  readonly #token: ApiToken;
  readonly #agent: Agent;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #backoffBaseMs: number;
  readonly #backoffMaxMs: number;
  readonly #signal: AbortSignal | undefined;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;
  readonly #random: () => number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  #preferred = 0;

  constructor(options: TransportOptions) {
    // checked through an `unknown` copy: Array.isArray would narrow the typed array itself to any[]
    const baseUrls: unknown = options?.baseUrls;
    if (!options || !Array.isArray(baseUrls) || baseUrls.length === 0) {
      throw new PveApiError('bad-option', "'baseUrls' must list at least one node url (e.g. 'https://pve1:8006')");
    }
    if (!options.token || typeof options.token.authorizationHeader !== 'function') {
      throw new PveApiError(
        'bad-option',
        "'token' must be an ApiToken (see 'readTokenFile', 'tokenFromEnv', 'ApiToken.parse')",
      );
    }
    const allowPlain = options.allowPlainHttp === true;
    this.#urls = options.baseUrls.map((u) => parseBaseUrl(u, allowPlain));
    this.#token = options.token;
    this.#timeoutMs = intOption('timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS, 1);
    this.#retries = intOption('retries', options.retries, DEFAULT_RETRIES, 0);
    this.#backoffBaseMs = intOption('backoffBaseMs', options.backoffBaseMs, DEFAULT_BACKOFF_BASE_MS, 0);
    this.#backoffMaxMs = intOption('backoffMaxMs', options.backoffMaxMs, DEFAULT_BACKOFF_MAX_MS, 0);
    this.#signal = options.signal;
    this.#onRetry = options.onRetry;
    this.#random = options.random ?? Math.random;
    this.#sleep = options.sleep ?? defaultSleep;

    const tls = buildTls(options.tls ?? {}, Math.min(this.#timeoutMs, CONNECT_TIMEOUT_MS));
    this.#agent = new Agent({ connect: tls.connect });
    const plainHttp = this.#urls.some((u) => u.plain);
    const warnings: string[] = [];
    if (plainHttp) warnings.push('plain http is allowed: the API token and all replies travel unencrypted');
    if (tls.security.mode === 'none')
      warnings.push('tls verification is disabled: any server can impersonate the cluster and receive the API token');
    if ((tls.security.mode === 'ca' || tls.security.mode === 'ca+pin') && !tls.security.hostnameChecked) {
      warnings.push('the certificate host name is not checked (any certificate of the configured ca is accepted)');
    }
    this.security = { ...tls.security, plainHttp, insecure: plainHttp || tls.security.mode === 'none', warnings };
  }

  /** The base URLs, as `https://host:port` (no credentials). */
  get baseUrls(): string[] {
    return this.#urls.map((u) => u.display);
  }

  /** Close idle connections and refuse new calls. */
  async close(): Promise<void> {
    await this.#agent.close();
  }

  /**
   * Run one call with failover and retries; returns the reply's `data`.
   * @throws PveApiError see {@link PveApiErrorCode}
   */
  async call(spec: CallSpec): Promise<CallResult> {
    const n = this.#urls.length;
    const budget = n + this.#retries;
    const start = this.#preferred;
    let backoffs = 0;
    let last: PveApiError | undefined;
    for (let attempt = 1; attempt <= budget; attempt++) {
      const index = (start + attempt - 1) % n;
      const url = this.#urls[index]!;
      try {
        const result = await this.#attempt(spec, url);
        this.#preferred = index;
        return result;
      } catch (err) {
        if (!(err instanceof PveApiError)) throw err;
        last = err;
        const untriedLeft = attempt < n;
        const sentNothing = err.mayHaveBeenApplied === false;
        let again: boolean;
        if (err.code === 'tls-untrusted' || err.code === 'tls-pin-mismatch') again = untriedLeft;
        else if (!err.retryable) again = false;
        else if (spec.method === 'GET') again = attempt < budget;
        else again = sentNothing && attempt < budget;
        if (!again) throw this.#final(err, attempt);
        const nextIndex = (start + attempt) % n;
        const delayMs = untriedLeft ? 0 : this.#backoff(backoffs++);
        this.#onRetry?.({
          endpoint: spec.endpoint,
          baseUrl: url.display,
          attempt,
          error: err,
          nextBaseUrl: this.#urls[nextIndex]!.display,
          delayMs,
        });
        if (delayMs > 0) {
          const signals = [spec.signal, this.#signal].filter((s): s is AbortSignal => s !== undefined);
          try {
            await this.#sleep(delayMs, signals.length ? AbortSignal.any(signals) : new AbortController().signal);
          } catch (abortErr) {
            throw new PveApiError('aborted', `${spec.endpoint}: aborted while waiting to retry`, {
              endpoint: spec.endpoint,
              attempts: attempt,
              cause: abortErr,
              mayHaveBeenApplied: err.mayHaveBeenApplied,
            });
          }
        }
      }
    }
    throw this.#final(last!, budget);
  }

  #backoff(k: number): number {
    const ceiling = Math.min(this.#backoffMaxMs, this.#backoffBaseMs * 2 ** k);
    return Math.round(ceiling * (0.5 + 0.5 * this.#random()));
  }

  #final(err: PveApiError, attempts: number): PveApiError {
    if (attempts <= 1) return err;
    return new PveApiError(err.code, `${err.message} (after ${attempts} attempts)`, {
      endpoint: err.endpoint,
      baseUrl: err.baseUrl,
      status: err.status,
      field: err.field,
      privilege: err.privilege,
      attempts,
      mayHaveBeenApplied: err.mayHaveBeenApplied,
      serverMessage: err.serverMessage,
      cause: err.cause,
    });
  }

  async #attempt(spec: CallSpec, url: ParsedBaseUrl): Promise<CallResult> {
    const where = `${spec.endpoint} via ${url.display}`;
    const post = spec.method === 'POST';
    const base = { endpoint: spec.endpoint, baseUrl: url.display, attempts: 1 };
    const fail = (
      code: PveApiErrorCode,
      message: string,
      extra: {
        status?: number;
        field?: string;
        privilege?: string;
        cause?: unknown;
        sentNothing?: boolean;
        serverMessage?: string;
      } = {},
    ) =>
      new PveApiError(code, this.#token.redact(message), {
        ...base,
        status: extra.status,
        field: extra.field,
        privilege: extra.privilege,
        cause: extra.cause,
        mayHaveBeenApplied: post ? !extra.sentNothing : undefined,
        serverMessage: extra.serverMessage === undefined ? undefined : this.#token.redact(extra.serverMessage),
      });

    const outer = [spec.signal, this.#signal].filter((s): s is AbortSignal => s !== undefined);
    if (outer.some((s) => s.aborted)) throw fail('aborted', `${where}: aborted before sending`, { sentNothing: true });
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = AbortSignal.any([timeout, ...outer]);
    const query = spec.query ? encodeParams(spec.query).toString() : '';
    const target = `${url.root}${spec.path}${query ? `?${query}` : ''}`;
    const headers: Record<string, string> = {
      authorization: this.#token.authorizationHeader(),
      accept: 'application/json',
      'user-agent': 'poise-pve-api',
    };
    let body: string | undefined;
    if (post) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = encodeParams(spec.form ?? {}).toString();
    }

    let status: number;
    let statusText: string;
    let text: string;
    try {
      const res = await fetch(target, {
        method: spec.method,
        headers,
        body,
        signal,
        dispatcher: this.#agent,
        redirect: 'error',
      });
      status = res.status;
      statusText = res.statusText;
      text = await res.text();
    } catch (err) {
      const sentNothing = failedBeforeSending(err);
      if (outer.some((s) => s.aborted)) throw fail('aborted', `${where}: aborted`, { cause: err, sentNothing });
      const cause = rootCause(err);
      if (cause instanceof PveApiError && cause.code === 'tls-pin-mismatch') {
        throw fail('tls-pin-mismatch', `${where}: ${cause.message}; refused before sending the request`, {
          sentNothing: true,
        });
      }
      const code = errorCodeOf(err);
      if (
        timeout.aborted ||
        code === 'UND_ERR_CONNECT_TIMEOUT' ||
        code === 'UND_ERR_HEADERS_TIMEOUT' ||
        code === 'UND_ERR_BODY_TIMEOUT'
      ) {
        throw fail('timeout', `${where}: no complete reply within ${this.#timeoutMs} ms`, { cause: err, sentNothing });
      }
      if (code && TLS_CODE.test(code)) {
        const detail = cause instanceof Error ? cause.message : code;
        throw fail('tls-untrusted', `${where}: server certificate refused (${code}: ${detail})`, {
          cause: err,
          sentNothing: true,
        });
      }
      const detail = cause instanceof Error ? cause.message : String(cause);
      throw fail('connection', `${where}: connection failed (${code ?? 'error'}: ${detail})`, {
        cause: err,
        sentNothing,
      });
    }

    let json: unknown;
    let jsonOk = true;
    try {
      json = JSON.parse(text);
    } catch {
      jsonOk = false;
    }
    if (status >= 200 && status < 300) {
      if (!jsonOk) {
        throw fail(
          'bad-reply',
          `${where}: reply is not valid json (${text.length} bytes, starts '${text.slice(0, 40)}')`,
          { status },
        );
      }
      if (json === null || typeof json !== 'object' || Array.isArray(json) || !('data' in json)) {
        throw fail('bad-reply', `${where}: reply has no 'data' member`, { status, field: 'data' });
      }
      return { status, data: json.data, message: statusText, baseUrl: url.display };
    }

    const obj = jsonOk && json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : {};
    const serverMessage = String(
      typeof obj.message === 'string' && obj.message.trim() ? obj.message.trim() : statusText || `http ${status}`,
    );
    if (spec.isAnswer?.(status, serverMessage)) {
      return { status, data: undefined, message: serverMessage, baseUrl: url.display };
    }
    const said = `server said '${serverMessage}'`;
    const reply = { status, serverMessage };
    switch (true) {
      case status === 401:
        throw fail(
          'unauthorized',
          `${where}: http 401, the api token was refused (wrong, expired or revoked token, or disabled user); ${said}`,
          { ...reply, privilege: spec.privilege },
        );
      case status === 403:
        throw fail(
          'forbidden',
          `${where}: http 403, permission denied: this endpoint needs ${spec.privilege} (with privilege separation, grant it to the user and to the token); ${said}`,
          { ...reply, privilege: spec.privilege },
        );
      case status === 400: {
        const errors =
          obj.errors && typeof obj.errors === 'object'
            ? Object.entries(obj.errors as Record<string, unknown>).map(([k, v]) => `'${k}': ${String(v).trim()}`)
            : [];
        throw fail(
          'bad-request',
          `${where}: http 400, parameters refused${errors.length ? ` (${errors.join('; ')})` : ''}; ${said}`,
          reply,
        );
      }
      case status === 501:
        throw fail(
          'not-implemented',
          `${where}: http 501, not available on this server (older Proxmox VE?); ${said}`,
          reply,
        );
      case spec.isRefusal?.(status, serverMessage) === true:
        throw fail('refused', `${where}: http ${status}, refused by the server (nothing was applied); ${said}`, {
          ...reply,
          sentNothing: true,
        });
      case status >= 500 && status <= 599:
        throw fail(
          'server-error',
          `${where}: http ${status}${status >= 590 ? ' (pveproxy could not reach the node)' : ''}; ${said}`,
          reply,
        );
      default:
        throw fail('http-error', `${where}: http ${status}; ${said}`, reply);
    }
  }

  /** Shows the base URLs and the security mode; never the token secret. */
  [inspect.custom](): string {
    return `Transport(${this.baseUrls.join(', ')}; token ${this.#token.tokenId}=[redacted]; tls ${this.security.mode})`;
  }
}
