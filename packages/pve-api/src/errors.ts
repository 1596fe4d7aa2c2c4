/**
 * Error codes of `@poise/pve-api`.
 *
 * | code | meaning | retried (GET) |
 * |---|---|---|
 * | `bad-option` | a constructor or method argument is invalid (bad URL, plain http without `allowPlainHttp`, bad fingerprint, unreadable CA file) | — |
 * | `bad-token` | the API token is missing, empty or not `USER@REALM!TOKENID=SECRET` (file or environment variable) | — |
 * | `bad-reply` | the reply is not JSON, has no `data`, or a field poise uses is missing or of the wrong type; `field` names the dot path | no |
 * | `unauthorized` | HTTP 401: the token was rejected (wrong, expired, revoked, user disabled) | no |
 * | `forbidden` | HTTP 403: a privilege is missing; `privilege` names the one the endpoint needs | no |
 * | `bad-request` | HTTP 400: a parameter was refused (`errors` of the reply in the message) | no |
 * | `not-implemented` | HTTP 501: the endpoint does not exist on this version (e.g. `/cluster/ha/rules` on PVE 8) | no |
 * | `http-error` | any other 4xx | no |
 * | `server-error` | HTTP 5xx or pveproxy's 59x (target node unreachable) | yes |
 * | `refused` | an action's HTTP 500 whose message is the API handler's refusal (`ACTION_REFUSALS`): nothing was applied | no |
 * | `timeout` | no complete reply within `timeoutMs` | yes |
 * | `connection` | connection refused, reset or dropped mid-reply | yes |
 * | `tls-untrusted` | the certificate chain or host name did not verify | no (next URL only) |
 * | `tls-pin-mismatch` | the certificate's SHA-256 fingerprint is not one of the pinned ones | no (next URL only) |
 * | `aborted` | the caller's `AbortSignal` fired | no |
 */
export type PveApiErrorCode =
  | 'bad-option'
  | 'bad-token'
  | 'bad-reply'
  | 'unauthorized'
  | 'forbidden'
  | 'bad-request'
  | 'not-implemented'
  | 'http-error'
  | 'server-error'
  | 'refused'
  | 'timeout'
  | 'connection'
  | 'tls-untrusted'
  | 'tls-pin-mismatch'
  | 'aborted';

/** Details carried by a {@link PveApiError} besides its code and message. */
export interface PveApiErrorDetails {
  /** The endpoint, as `METHOD /path/template` (e.g. `GET /nodes/{node}/status`). */
  endpoint?: string;
  /** The base URL of the last attempt (never carries credentials). */
  baseUrl?: string;
  /** The HTTP status of the reply, when there was one. */
  status?: number;
  /** For `bad-reply`: the dot path of the offending field (e.g. `data[3].maxmem`). */
  field?: string;
  /** For `forbidden` (and `unauthorized`): the privilege the endpoint needs (spec §2). */
  privilege?: string;
  /** Number of attempts made before giving up. */
  attempts?: number;
  /**
   * For a failed POST: `false` only when the request provably never left the client (the
   * connection failed before any byte was sent); `true` otherwise — the action may have been
   * applied, so it must be checked (e.g. in `manager_status`) before it is issued again.
   */
  mayHaveBeenApplied?: boolean;
  /** For an error reply: the server's message (the reason phrase or the body's `message`), as sent. */
  serverMessage?: string;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * The one error class of `@poise/pve-api`. Messages are lower-case, quote identifiers, and name
 * the endpoint and (for replies) the field. Never contains the API token secret.
 */
export class PveApiError extends Error {
  override readonly name = 'PveApiError';
  /** What went wrong, see {@link PveApiErrorCode}. */
  readonly code: PveApiErrorCode;
  /** `METHOD /path/template` of the call, when the error comes from a call. */
  readonly endpoint: string | undefined;
  /** Base URL of the last attempt. */
  readonly baseUrl: string | undefined;
  /** HTTP status, when a reply arrived. */
  readonly status: number | undefined;
  /** Dot path of the offending reply field (`bad-reply`). */
  readonly field: string | undefined;
  /** The privilege the endpoint needs (`forbidden`, `unauthorized`). */
  readonly privilege: string | undefined;
  /** Attempts made. */
  readonly attempts: number | undefined;
  /** See {@link PveApiErrorDetails.mayHaveBeenApplied}; `undefined` for GETs. */
  readonly mayHaveBeenApplied: boolean | undefined;
  /** The server's message of an error reply (reason phrase or `message`), when there was one. */
  readonly serverMessage: string | undefined;

  constructor(code: PveApiErrorCode, message: string, details: PveApiErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.endpoint = details.endpoint;
    this.baseUrl = details.baseUrl;
    this.status = details.status;
    this.field = details.field;
    this.privilege = details.privilege;
    this.attempts = details.attempts;
    this.mayHaveBeenApplied = details.mayHaveBeenApplied;
    this.serverMessage = details.serverMessage;
  }

  /** Whether a GET that failed with this error may be retried (5xx, 59x, timeouts, connection errors). */
  get retryable(): boolean {
    return this.code === 'server-error' || this.code === 'timeout' || this.code === 'connection';
  }
}
