import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { ManagerError } from '../errors';
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

/**
 * The daemon's listener over plain HTTP: `/metrics` (Prometheus text) and the routes it is given
 * (`/status`, the status page and its JSON endpoints). GET and HEAD only.
 */
export class MetricsServer {
  private server: Server | undefined;

  constructor(
    private readonly metrics: Metrics,
    private readonly routes: ReadonlyMap<string, HttpRoute>,
  ) {}

  private async reply(path: string, query: URLSearchParams): Promise<HttpReply> {
    if (path === '/metrics') {
      try {
        return { status: 200, type: this.metrics.registry.contentType, body: await this.metrics.registry.metrics() };
      } catch (err) {
        return { status: 500, type: 'text/plain', body: `metrics failed: ${String(err)}\n` };
      }
    }
    const route = this.routes.get(path);
    if (route === undefined) {
      const paths = ['/metrics', ...this.routes.keys()].filter((p) => !p.startsWith('/ui/'));
      return { status: 404, type: 'text/plain', body: `not found: try ${paths.join(', ')}\n` };
    }
    return route(query);
  }

  /** Listens; resolves with the bound address (port 0 picks a free one). */
  async listen(host: string, port: number): Promise<{ host: string; port: number }> {
    const server = createServer((req, res) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      const url = new URL(req.url ?? '/', 'http://localhost');
      const gzipOk = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
      this.reply(url.pathname, url.searchParams).then(
        (r) => {
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
          res.writeHead(r.status, headers).end(body);
        },
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`failed: ${String(err)}\n`),
      );
    });
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
    this.server = server;
    const addr = server.address() as AddressInfo;
    return { host: addr.address, port: addr.port };
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
