import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

/** A request as the fake server saw it. */
export interface FakeRequest {
  /** `GET`, `POST`, … */
  method: string;
  /** Path below `/api2/json` (`/nodes/pve1/status`), percent-decoded. */
  path: string;
  /** Path parameters of the matched route template (`{node}` → `node`). */
  params: Record<string, string>;
  /** Query string. */
  query: URLSearchParams;
  /** Form (or JSON) body of a POST. */
  form: URLSearchParams;
  /** The `Authorization` header as received (test material: it holds the secret). */
  authorization: string | undefined;
}

/**
 * What the fake server answers. `data` is wrapped as `{"data": …}`; `rawBody` is sent as is
 * (malformed JSON…). Error statuses carry `statusText` as the reason phrase and as `message`,
 * like `pveproxy`. `delayMs` waits before answering; `drop` destroys the socket before the reply
 * or in the middle of the body.
 */
export interface FakeReply {
  status?: number;
  statusText?: string;
  data?: unknown;
  rawBody?: string;
  delayMs?: number;
  drop?: 'before-reply' | 'mid-body';
}

/** Computes the reply of a route. */
export type FakeHandler = (request: FakeRequest) => FakeReply | Promise<FakeReply>;

/** Options of {@link startFakePveServer}. */
export interface FakePveServerOptions {
  /** Serve HTTPS with this certificate and key (PEM); plain HTTP when left out. */
  tls?: { cert: string; key: string };
  /**
   * Accepted tokens, as `USER@REALM!TOKENID=SECRET`; a request without one of them gets 401.
   * Left out: no check.
   */
  tokens?: string[];
  /** Routes: `'GET /nodes/{node}/status'` → handler or fixed reply. Unmatched → 501 like pveproxy. */
  routes?: Record<string, FakeHandler | FakeReply>;
  /** Listen address (default `127.0.0.1`). */
  host?: string;
  /** Port (default 0: any free port). */
  port?: number;
  /**
   * Keep every request in `requests` (default true, for tests). A long-running server (e.g.
   * `poise-sim serve`) passes false: the list would grow without bound and holds the raw
   * `authorization` header.
   */
  record?: boolean;
}

/** A running fake server. */
export interface FakePveServer {
  /** `https://127.0.0.1:<port>` (or `http:`). */
  url: string;
  /** Requests that reached the routing (after TLS), in order (empty with `record: false`). */
  requests: FakeRequest[];
  /** Connections accepted (TCP), including those refused during the TLS handshake. */
  connections(): number;
  /** Add or replace a route. */
  route(key: string, handler: FakeHandler | FakeReply): void;
  /** Replace the accepted tokens (e.g. `[]` to revoke every token mid-run). */
  setTokens(tokens: string[] | undefined): void;
  /** Stop listening and drop every connection. */
  close(): Promise<void>;
}

interface CompiledRoute {
  method: string;
  regex: RegExp;
  names: string[];
  handler: FakeHandler | FakeReply;
}

function compile(key: string, handler: FakeHandler | FakeReply): CompiledRoute {
  const space = key.indexOf(' ');
  if (space < 0) throw new Error(`route '${key}' must be 'METHOD /path'`);
  const method = key.slice(0, space);
  const template = key.slice(space + 1);
  const names: string[] = [];
  const pattern = template
    .split('/')
    .map((part) => {
      const m = /^\{(\w+)\}$/.exec(part);
      if (m) {
        names.push(m[1]!);
        return '([^/]+)';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return { method, regex: new RegExp(`^${pattern}$`), names, handler };
}

const API_ROOT = '/api2/json';

/**
 * Start a fake Proxmox VE API server on 127.0.0.1 that answers like `pveproxy`: `{"data": …}`
 * bodies, the message in the reason phrase and in `message`, 401 for a missing or unknown
 * token, 501 for unknown paths. Used by the client's tests; meant to be the base of
 * `poise-sim serve`.
 */
export async function startFakePveServer(options: FakePveServerOptions = {}): Promise<FakePveServer> {
  const routes: CompiledRoute[] = Object.entries(options.routes ?? {}).map(([k, h]) => compile(k, h));
  let tokens = options.tokens === undefined ? undefined : new Set(options.tokens.map((t) => `PVEAPIToken=${t}`));
  const requests: FakeRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let connectionCount = 0;

  const send = (res: ServerResponse, status: number, statusText: string, body: string) => {
    res.writeHead(status, statusText, {
      'content-type': 'application/json;charset=UTF-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const bodyText = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    if (!url.pathname.startsWith(API_ROOT)) {
      send(res, 404, 'Not Found', '{"data":null}');
      return;
    }
    const path = decodeURIComponent(url.pathname.slice(API_ROOT.length));
    let form = new URLSearchParams();
    if (bodyText) {
      if ((req.headers['content-type'] ?? '').includes('json')) {
        const obj = JSON.parse(bodyText) as Record<string, unknown>;
        form = new URLSearchParams(Object.entries(obj).map(([k, v]): [string, string] => [k, String(v)]));
      } else form = new URLSearchParams(bodyText);
    }
    const authorization = req.headers.authorization;
    const method = req.method ?? 'GET';
    let matched: CompiledRoute | undefined;
    let params: Record<string, string> = {};
    for (const route of routes) {
      const m = route.method === method ? route.regex.exec(path) : null;
      if (m) {
        matched = route;
        params = Object.fromEntries(route.names.map((n, i) => [n, m[i + 1]!]));
      }
    }
    const request: FakeRequest = { method, path, params, query: url.searchParams, form, authorization };
    if (options.record !== false) requests.push(request);
    if (tokens !== undefined && (authorization === undefined || !tokens.has(authorization))) {
      send(res, 401, 'authentication failure', JSON.stringify({ data: null, message: 'authentication failure' }));
      return;
    }
    if (!matched) {
      const text = `Method '${method} ${API_ROOT}${path}' not implemented`;
      send(res, 501, text, JSON.stringify({ data: null, message: text }));
      return;
    }
    const reply = typeof matched.handler === 'function' ? await matched.handler(request) : matched.handler;
    if (reply.delayMs) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          timers.delete(t);
          resolve();
        }, reply.delayMs);
        timers.add(t);
      });
    }
    if (res.destroyed) return;
    if (reply.drop === 'before-reply') {
      req.socket.destroy();
      return;
    }
    const status = reply.status ?? 200;
    const statusText = reply.statusText ?? (status < 300 ? 'OK' : 'error');
    const body =
      reply.rawBody ??
      (status < 300
        ? JSON.stringify({ data: reply.data ?? null })
        : JSON.stringify({
            data: null,
            message: statusText,
            ...(reply.data === undefined ? {} : { errors: reply.data }),
          }));
    if (reply.drop === 'mid-body') {
      res.writeHead(status, statusText, {
        'content-type': 'application/json;charset=UTF-8',
        'content-length': Buffer.byteLength(body) + 100,
      });
      res.write(body.slice(0, Math.max(1, Math.floor(body.length / 2))), () => req.socket.destroy());
      return;
    }
    send(res, status, statusText, body);
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, 'fake server error', JSON.stringify({ data: null, message: String(err) }));
    });
  };
  const server: Server = options.tls
    ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, listener)
    : createHttpServer(listener);
  server.on('connection', (socket: Socket) => {
    connectionCount++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${address.port}`,
    requests,
    connections: () => connectionCount,
    route: (key, handler) => {
      const compiled = compile(key, handler);
      const i = routes.findIndex((r) => r.method === compiled.method && r.regex.source === compiled.regex.source);
      if (i >= 0) routes[i] = compiled;
      else routes.push(compiled);
    },
    setTokens: (list) => {
      tokens = list === undefined ? undefined : new Set(list.map((t) => `PVEAPIToken=${t}`));
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
