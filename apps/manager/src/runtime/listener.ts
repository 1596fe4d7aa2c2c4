import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, isIP, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { gzipSync } from 'node:zlib';
import type { ListenerSecurity } from '../config/listener-security';
import { normaliseHostName } from '../config/load';
import { errorMessage, ManagerError } from '../errors';
import type { LogLevel, Logger } from '../log';
import { type AuthVerdict, RequestAuthenticator } from './http-auth';
import { RateLimitedLog } from './log-limiter';
import type { Metrics } from './metrics';

/** A reply of a route of the listener. */
export interface HttpReply {
  readonly status: number;
  /** The `content-type`. */
  readonly type: string;
  readonly body: string | Buffer;
  /** Extra headers (`cache-control`, `content-security-policy`, …). */
  readonly headers?: Readonly<Record<string, string>>;
  /** A gzip of `body`, sent to a client that accepts it. */
  readonly gzip?: Buffer;
}

/** A route: the query of a GET in, a reply out. */
export type HttpRoute = (query: URLSearchParams) => HttpReply | Promise<HttpReply>;

/** Bodies at least this long are sent gzipped to a client that accepts it (JSON is computed per request). */
const GZIP_MIN_BYTES = 8192;
/** Request line and headers together at most (node's `maxHeaderSize`); beyond: 431 and the socket closed. */
const MAX_HEADER_BYTES = 16 * 1024;
/** A GET or HEAD may carry a body this long at most (it is read and ignored); beyond: 413 and the socket closed. */
export const MAX_BODY_BYTES = 1024;
/** The request line and headers must arrive within this (node's `headersTimeout`). */
const HEADERS_TIMEOUT_MS = 10_000;
/** The whole request, body included, must arrive within this (node's `requestTimeout`); else 408. */
const REQUEST_TIMEOUT_MS = 30_000;
/** An idle kept-alive connection is closed after this. */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** A connection on which nothing moves either way for this long (a client that stopped reading the reply) is closed. */
const SOCKET_IDLE_TIMEOUT_MS = 60_000;
/** How often node checks the header and request timeouts (they fire at most this late). */
const TIMEOUT_CHECK_MS = 1_000;
/** A TLS handshake must end within this. */
const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
/** Connections open at once at most; a connection beyond is dropped at once (and logged). */
export const MAX_CONNECTIONS = 64;
/** Lines about refused requests per window at most (then one line says how many were left out). */
const REFUSAL_LOG_LINES = 20;
const REFUSAL_LOG_WINDOW_SECONDS = 60;
/** A refused request's address in a log line: at most this long (it comes from the client). */
const MAX_LOGGED_TARGET_CHARS = 120;

/** What the listener is given beside its routes. */
export interface ListenerOptions {
  readonly log: Logger;
  /** `metrics.allowed-hosts` (normalised): Host names accepted besides the listen address. */
  readonly allowedHosts: readonly string[];
  /** The authentication and TLS read from the config's files (none: open, plain HTTP). */
  readonly security?: ListenerSecurity;
  /** Seconds of a monotonic clock for the log's rate limit (default: `performance.now()`). */
  readonly now?: () => number;
}

/** A request target split into the path (not decoded) and the query, or why it is refused. */
export type ParsedTarget =
  | { readonly path: string; readonly query: URLSearchParams; readonly authority?: string }
  | { readonly error: string };

/**
 * The path and query of a request target: origin-form (`/a?b`, also `//` and `/%zz`: never
 * decoded, so never an error), or absolute-form (`http://host/a`, whose host is checked like
 * the Host header). `*` and anything else are refused.
 */
export function parseTarget(target: string | undefined): ParsedTarget {
  if (target === undefined || target === '') return { error: 'no request target' };
  if (target.startsWith('/')) {
    const q = target.indexOf('?');
    return q < 0
      ? { path: target, query: new URLSearchParams() }
      : { path: target.slice(0, q), query: new URLSearchParams(target.slice(q + 1)) };
  }
  if (/^https?:\/\//i.test(target)) {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return { error: 'not a URL' };
    }
    return { path: url.pathname, query: url.searchParams, authority: url.hostname };
  }
  return { error: target === '*' ? "'*' is only for OPTIONS" : 'expected a path' };
}

/** The host of a `Host` header (`name`, `name:port`, `[v6]:port`), normalised; `undefined` when it is none of those. */
export function hostOfHeader(header: string): string | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9._~%!$&'()*+,;=-]*))(?::(\d{0,5}))?$/.exec(header.trim());
  if (m === null) return undefined;
  const host = m[1] ?? m[2]!;
  return host === '' ? undefined : normaliseHostName(host);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host) || /^::ffff:127\./.test(host);
}

function isWildcard(host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::';
}

/** Whether an address listens beyond loopback (a wildcard, a name other than `localhost`, any other address). */
export function beyondLoopback(host: string): boolean {
  return !isLoopback(normaliseHostName(host));
}

/**
 * Which Host names a listener answers: its listen addresses (as configured and as bound) and
 * `allowed`; on loopback also `localhost` and the loopback addresses; on a wildcard address
 * (`0.0.0.0`, `::`) also this machine's name and any address literal (an address is never the
 * name of a DNS rebinding). Anything else is another origin's name.
 */
export function hostAcceptor(listenHosts: readonly string[], allowed: readonly string[]): (host: string) => boolean {
  const listen = listenHosts.map(normaliseHostName);
  const names = new Set([...allowed.map(normaliseHostName), ...listen]);
  const wildcard = listen.some(isWildcard);
  if (wildcard) {
    const own = hostname().toLowerCase();
    names.add(own);
    names.add(own.split('.')[0]!);
  }
  const loopbackToo = wildcard || listen.some(isLoopback);
  return (host) => names.has(host) || (loopbackToo && isLoopback(host)) || (wildcard && isIP(host) !== 0);
}

/** A text from the client, made safe and short for a log line. */
function shown(text: string): string {
  const clean = JSON.stringify(
    text.length > MAX_LOGGED_TARGET_CHARS ? `${text.slice(0, MAX_LOGGED_TARGET_CHARS)}…` : text,
  );
  return clean.slice(1, -1);
}

/**
 * The daemon's listener, HTTP or HTTPS: `/metrics` (Prometheus text) and the routes it is given
 * (`/status`, the status page and its JSON endpoints). GET and HEAD only.
 *
 * Every request is answered or dropped by a guard, never by an exception that ends the process:
 * the target is split without decoding (`//`, `/%zz` are a 404), the Host must be one this
 * daemon answers to (421 otherwise: no DNS rebinding), the credentials must match when
 * configured (401), a body beyond {@link MAX_BODY_BYTES} is a 413 and the socket closed; a
 * route that throws, a reply that cannot be written and a client gone mid-reply are logged.
 * Headers, request time, idle sockets and connections are bounded (the constants above).
 * Refusals are logged at most {@link REFUSAL_LOG_LINES} per minute.
 */
export class MetricsServer {
  private server: Server | undefined;
  private readonly refusals: RateLimitedLog;
  private readonly auth: RequestAuthenticator | undefined;
  private accepts: (host: string) => boolean = () => false;

  constructor(
    private readonly metrics: Metrics,
    private readonly routes: ReadonlyMap<string, HttpRoute>,
    private readonly options: ListenerOptions,
  ) {
    this.refusals = new RateLimitedLog(
      options.log,
      'metrics',
      { lines: REFUSAL_LOG_LINES, windowSeconds: REFUSAL_LOG_WINDOW_SECONDS },
      options.now ?? (() => performance.now() / 1000),
    );
    const credential = options.security?.auth;
    this.auth = credential === undefined ? undefined : new RequestAuthenticator(credential);
  }

  /** `https` with TLS configured, else `http`. */
  get scheme(): 'http' | 'https' {
    return this.options.security?.tls === undefined ? 'http' : 'https';
  }

  /** For the start-up line: how requests are authenticated (`none`, `bearer token from '…'`, …). */
  get authDescription(): string {
    return this.auth?.description ?? 'none';
  }

  private async reply(path: string, query: URLSearchParams): Promise<HttpReply> {
    if (path === '/metrics') {
      try {
        return { status: 200, type: this.metrics.registry.contentType, body: await this.metrics.registry.metrics() };
      } catch (err) {
        this.refusals.write('error', `/metrics failed: ${errorMessage(err)}`);
        return { status: 500, type: 'text/plain', body: 'metrics failed (logged)\n' };
      }
    }
    const route = this.routes.get(path);
    if (route === undefined) {
      const paths = ['/metrics', ...this.routes.keys()].filter((p) => !p.startsWith('/ui/'));
      return { status: 404, type: 'text/plain', body: `not found: try ${paths.join(', ')}\n` };
    }
    return route(query);
  }

  /** A request answered with an error status; logged (rate-limited) at `level`. */
  private refuse(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    why: string,
    level: LogLevel,
    headers: Record<string, string> = {},
  ): void {
    this.refusals.write(
      level,
      `refused ${shown(req.method ?? '?')} ${shown(req.url ?? '')} from ${req.socket.remoteAddress ?? '?'}: ${status} ${why}`,
      { status, remote: req.socket.remoteAddress ?? null },
    );
    this.send(
      res,
      { status, type: 'text/plain', body: `${STATUS_CODES[status] ?? 'refused'}: ${why}\n`, headers },
      false,
    );
  }

  /** Writes a reply unless the client is gone; never throws. */
  private send(res: ServerResponse, r: HttpReply, gzipOk: boolean, close = false): void {
    if (res.headersSent || res.destroyed || res.writableEnded) return;
    try {
      const headers: Record<string, string> = {
        'content-type': r.type,
        'x-content-type-options': 'nosniff',
        ...r.headers,
      };
      let body = r.body;
      const zipped = r.gzip ?? (gzipOk && body.length >= GZIP_MIN_BYTES ? gzipSync(body) : undefined);
      if (gzipOk && zipped !== undefined) {
        headers['content-encoding'] = 'gzip';
        body = zipped;
      }
      headers.vary = 'accept-encoding';
      if (close) headers.connection = 'close';
      res.writeHead(r.status, headers).end(body);
    } catch (err) {
      this.refusals.write('error', `cannot write a reply (${r.status}): ${errorMessage(err)}`);
      if (!res.headersSent) {
        try {
          res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error (logged)\n');
          return;
        } catch {
          // fall through: drop the connection
        }
      }
      res.destroy();
    }
  }

  /** 413, then the socket is closed once the reply is out (a body that never ends cannot hold it). */
  private refuseBody(req: IncomingMessage, res: ServerResponse, why: string): void {
    req.pause();
    const socket = req.socket;
    res.once('finish', () => socket.destroy());
    res.once('close', () => socket.destroy());
    this.refusals.write(
      'warn',
      `refused ${shown(req.method ?? '?')} ${shown(req.url ?? '')} from ${socket.remoteAddress ?? '?'}: 413 ${why}`,
      { status: 413, remote: socket.remoteAddress ?? null },
    );
    this.send(res, { status: 413, type: 'text/plain', body: `Payload Too Large: ${why}\n` }, false, true);
  }

  /** The request handler: the body bound first, then {@link respond} once the request is in. */
  private handle(req: IncomingMessage, res: ServerResponse): void {
    res.on('error', (err) => this.refusals.write('debug', `reply not sent: ${errorMessage(err)}`));
    req.on('error', (err) => this.refusals.write('debug', `request aborted: ${errorMessage(err)}`));
    try {
      const declared = Number(req.headers['content-length'] ?? '0');
      if (declared > MAX_BODY_BYTES) {
        this.refuseBody(
          req,
          res,
          `a body of ${declared} bytes (a GET or HEAD carries ${MAX_BODY_BYTES} bytes at most)`,
        );
        return;
      }
      let received = 0;
      let refused = false;
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_BODY_BYTES && !refused) {
          refused = true;
          this.refuseBody(req, res, `a body beyond ${MAX_BODY_BYTES} bytes`);
        }
      });
      req.on('end', () => {
        if (refused) return;
        this.respond(req, res).catch((err: unknown) => this.failed(res, err));
      });
    } catch (err) {
      this.failed(res, err);
    }
  }

  /** A route or the guard threw: 500 (or the connection dropped when a reply had begun), logged. */
  private failed(res: ServerResponse, err: unknown): void {
    this.refusals.write('error', `request failed: ${errorMessage(err)}`);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    this.send(res, { status: 500, type: 'text/plain', body: 'internal error (logged)\n' }, false);
  }

  private async respond(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = parseTarget(req.url);
    if ('error' in target) return this.refuse(req, res, 400, target.error, 'warn');
    const header = req.headers.host;
    const host = header === undefined ? undefined : hostOfHeader(header);
    if (header !== undefined && host === undefined)
      return this.refuse(req, res, 400, 'a Host header that is not host[:port]', 'warn');
    for (const name of [host, target.authority === undefined ? undefined : normaliseHostName(target.authority)]) {
      if (name !== undefined && !this.accepts(name))
        return this.refuse(
          req,
          res,
          421,
          `the Host '${shown(name)}' is not a name this daemon answers to (add it to metrics.allowed-hosts)`,
          'warn',
        );
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return this.refuse(req, res, 405, 'only GET and HEAD', 'info', { allow: 'GET, HEAD' });
    if (this.auth !== undefined) {
      const verdict: AuthVerdict = await this.auth.verify(req.headers.authorization);
      if (verdict === 'busy')
        return this.refuse(req, res, 503, 'too many logins being checked; try again', 'warn', { 'retry-after': '1' });
      if (verdict !== 'ok')
        return this.refuse(
          req,
          res,
          401,
          verdict === 'missing' ? `${this.auth.scheme} authentication required` : 'wrong credentials',
          // a browser asks without credentials first; a wrong one is worth a warning
          verdict === 'missing' ? 'debug' : 'warn',
          { 'www-authenticate': this.auth.challenge },
        );
    }
    const gzipOk = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const reply = await this.reply(target.path, target.query);
    if (reply.status === 404)
      this.refusals.write('debug', `not found: ${shown(req.method ?? '?')} ${shown(req.url ?? '')}`);
    this.send(res, reply, gzipOk);
  }

  /** A request node could not parse (bad request line, headers too long, timed out): answered and closed. */
  private clientError(err: NodeJS.ErrnoException, socket: Socket): void {
    const code = err.code ?? '';
    const inProgress =
      (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable || inProgress) {
      this.refusals.write('debug', `connection from ${socket.remoteAddress ?? '?'} dropped: ${code || err.message}`);
      socket.destroy();
      return;
    }
    const status =
      code === 'HPE_HEADER_OVERFLOW'
        ? 431
        : code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADERS_TIMEOUT'
          ? 408
          : 400;
    this.refusals.write(
      'warn',
      `refused a request from ${socket.remoteAddress ?? '?'}: ${status} (${code || err.message})`,
      {
        status,
        remote: socket.remoteAddress ?? null,
      },
    );
    try {
      socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    } catch {
      // already closing
    }
    setTimeout(() => socket.destroy(), KEEP_ALIVE_TIMEOUT_MS).unref();
  }

  /** Listens; resolves with the bound address (port 0 picks a free one). */
  async listen(host: string, port: number): Promise<{ host: string; port: number }> {
    const handler = (req: IncomingMessage, res: ServerResponse) => this.handle(req, res);
    const httpOptions = {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    };
    const tls = this.options.security?.tls;
    const server: Server =
      tls === undefined
        ? createHttpServer(httpOptions, handler)
        : createHttpsServer(
            { ...httpOptions, cert: tls.cert, key: tls.key, handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS },
            handler,
          );
    server.maxConnections = MAX_CONNECTIONS;
    server.setTimeout(SOCKET_IDLE_TIMEOUT_MS);
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      try {
        this.clientError(err, socket);
      } catch {
        socket.destroy();
      }
    });
    server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      this.refusals.write(
        'debug',
        `TLS handshake with ${socket.remoteAddress ?? '?'} failed: ${err.code ?? err.message}`,
      );
      socket.destroy();
    });
    server.on('drop', (data?: { remoteAddress?: string }) =>
      this.refusals.write(
        'warn',
        `dropped a connection from ${data?.remoteAddress ?? '?'}: ${MAX_CONNECTIONS} connections are open already`,
      ),
    );
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', (err) =>
        reject(
          new ManagerError(
            'metrics',
            `cannot listen on ${host}:${port} for metrics: ${(err as NodeJS.ErrnoException).code ?? err.message}`,
            { cause: err },
          ),
        ),
      );
      server.listen(port, host, () => resolveListen());
    });
    // from here on an error of the server (EMFILE on accept, …) is logged, never the end of the process
    server.removeAllListeners('error');
    server.on('error', (err: NodeJS.ErrnoException) =>
      this.refusals.write('error', `listener: ${err.code ?? ''} ${err.message}`.trim()),
    );
    this.server = server;
    const addr = server.address() as AddressInfo;
    this.accepts = hostAcceptor([host, addr.address], this.options.allowedHosts);
    return { host: addr.address, port: addr.port };
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.refusals.flush();
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
