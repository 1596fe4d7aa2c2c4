import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificates } from '@poise/pve-api/server';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Logger } from '../log';
import { endlessBody, type ListeningDaemon, listeningDaemon, rawRequest } from '../testing/listening-daemon';
import { scryptHash } from './http-auth';
import {
  beyondLoopback,
  hostAcceptor,
  hostOfHeader,
  type HttpRoute,
  MAX_BODY_BYTES,
  MAX_CONNECTIONS,
  MetricsServer,
  parseTarget,
} from './listener';
import { Metrics } from './metrics';

const get = (path: string, headers: string[] = []) =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;

describe('the request target and the Host header', () => {
  it.each([
    ['/', '/', ''],
    ['//', '//', ''],
    ['///', '///', ''],
    ['/%', '/%', ''],
    ['/%zz?a=%zz', '/%zz', 'a=%25zz'],
    ['/api/history?after=3', '/api/history', 'after=3'],
    ['http://x/metrics?a=1', '/metrics', 'a=1'],
  ])('%s is path %s, query %s (never decoded, never an error)', (target, path, query) => {
    const t = parseTarget(target);
    expect(t).toMatchObject({ path });
    expect('query' in t ? t.query.toString() : undefined).toBe(query);
  });

  it.each([['*'], [''], ['metrics'], ['http://[::1/'], [undefined]])('%s is refused', (target) => {
    expect(parseTarget(target)).toHaveProperty('error');
  });

  it('takes the authority of an absolute-form target, to be checked like the Host', () => {
    expect(parseTarget('http://Evil.Example:80/')).toMatchObject({ path: '/', authority: 'evil.example' });
  });

  it.each([
    ['127.0.0.1:9879', '127.0.0.1'],
    ['LOCALHOST', 'localhost'],
    ['node1.example.org.:80', 'node1.example.org'],
    ['[::1]:9879', '::1'],
    ['[::1]', '::1'],
  ])('Host %s is %s', (header, host) => expect(hostOfHeader(header)).toBe(host));

  it.each([['a b'], [''], [':80'], ['x:y'], ['[::1']])('Host %j is not host[:port]', (header) =>
    expect(hostOfHeader(header)).toBeUndefined(),
  );

  it('on loopback answers the listen address, localhost, loopback addresses and the allowed names only', () => {
    const accepts = hostAcceptor(['127.0.0.1'], ['poise.example.org']);
    for (const h of ['127.0.0.1', 'localhost', '::1', '127.0.0.2', 'poise.example.org'])
      expect(accepts(h), h).toBe(true);
    // a DNS rebinding: the attacker's name resolves to 127.0.0.1, the Host stays theirs
    for (const h of ['evil.example', '10.0.0.1', 'poise.example.org.evil.example']) expect(accepts(h), h).toBe(false);
  });

  it('on an address beyond loopback answers that address and the allowed names; on a wildcard any address literal too', () => {
    const one = hostAcceptor(['192.0.2.10'], ['node1']);
    expect(['192.0.2.10', 'node1'].map(one)).toEqual([true, true]);
    expect(['localhost', '192.0.2.11', 'evil.example'].map(one)).toEqual([false, false, false]);
    const any = hostAcceptor(['0.0.0.0'], []);
    expect(['192.0.2.11', '::1', 'localhost'].map(any)).toEqual([true, true, true]);
    expect(any('evil.example')).toBe(false);
  });

  it.each([
    ['127.0.0.1', false],
    ['localhost', false],
    ['::1', false],
    ['0.0.0.0', true],
    ['::', true],
    ['192.0.2.10', true],
    ['node1', true],
  ])('%s beyond loopback: %s', (host, beyond) => expect(beyondLoopback(host)).toBe(beyond));
});

describe('the listener of a running daemon cannot be crashed or wedged', () => {
  let d: ListeningDaemon;
  /** The motion bookkeeping before the knocks: none of them may change it. */
  let motionBefore: string;
  let motionsBefore: string;

  /**
   * What escaped the listener: in a daemon process an uncaught exception ends it; in the test
   * worker it would be reported after the run, so it is caught here and failed on at once.
   */
  const escaped: unknown[] = [];
  const record = (err: unknown) => escaped.push(err);

  const motionsNow = async () => JSON.stringify(await (await fetch(`http://127.0.0.1:${d.port}/api/motions`)).json());
  const stillAnswers = async () => {
    expect(escaped).toEqual([]);
    const res = await fetch(`http://127.0.0.1:${d.port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('poise_motion_in_flight 1');
    expect(JSON.stringify(d.daemon.currentState().motion)).toBe(motionBefore);
    expect(await motionsNow()).toBe(motionsBefore);
  };

  beforeAll(async () => {
    process.on('uncaughtException', record);
    process.on('unhandledRejection', record);
    d = await listeningDaemon();
    await d.run(2); // a migrate of vm:101 requested and moving
    motionBefore = JSON.stringify(d.daemon.currentState().motion);
    expect(motionBefore).toContain('vm:101');
    motionsBefore = await motionsNow();
  });
  afterAll(async () => {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
    await d.close();
  });

  it.each([['//'], ['///'], ['/%'], ['/%zz'], ['/..%2f..%2fetc/passwd']])(
    'GET %s is a 404 and the daemon answers on',
    async (path) => {
      const reply = await rawRequest(d.port, get(path));
      expect(reply.status).toBe(404);
      await stillAnswers();
    },
  );

  it.each([
    ['GET * HTTP/1.1', 400],
    ['OPTIONS * HTTP/1.1', 400],
    ['GET http://127.0.0.1/metrics HTTP/1.1', 200],
    ['GET http://evil.example/metrics HTTP/1.1', 421],
    ['POST /metrics HTTP/1.1', 405],
    ['BREW /metrics HTTP/1.1', 400],
  ])('%s → %i', async (line, status) => {
    const reply = await rawRequest(d.port, `${line}\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(reply.status).toBe(status);
    await stillAnswers();
  });

  it('a header of 1 MiB is refused (431, or the connection reset while sending) and the daemon answers on', async () => {
    const reply = await rawRequest(d.port, get('/metrics', [`X-Big: ${'a'.repeat(1024 * 1024)}`]));
    expect(reply.status === 431 || (reply.status === undefined && reply.reset)).toBe(true);
    await stillAnswers();
  });

  it('a body that never ends is refused (413, the socket closed) once it passes the bound; the daemon answers on', async () => {
    const reply = await endlessBody(
      d.port,
      'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    expect(reply.status === 413 || reply.reset).toBe(true);
    // the server stopped reading after the bound; what was sent beyond sat in the socket buffers
    expect(reply.sentBytes).toBeLessThan(256 * 1024 * 1024);
    await stillAnswers();
  });

  it('a body declared beyond the bound is refused at once with 413; a small one is read and ignored', async () => {
    const big = await rawRequest(d.port, get('/metrics', [`Content-Length: ${MAX_BODY_BYTES + 1}`]));
    expect(big.status).toBe(413);
    const small = await rawRequest(d.port, `${get('/metrics', ['Content-Length: 5'])}hello`);
    expect(small.status).toBe(200);
    await stillAnswers();
  });

  it('a client gone in the middle of a reply, or before it, changes nothing', async () => {
    for (const path of ['/api/history', '/api/decisions', '/', '/metrics']) {
      await new Promise<void>((resolve) => {
        const socket = connect({ port: d.port, host: '127.0.0.1' }, () => {
          socket.write(get(path, ['Accept-Encoding: gzip']));
          socket.once('data', () => socket.destroy());
        });
        socket.on('error', () => {});
        socket.on('close', () => resolve());
      });
      const gone = connect({ port: d.port, host: '127.0.0.1' }, () => {
        gone.write(get(path));
        gone.destroy();
      });
      gone.on('error', () => {});
    }
    await stillAnswers();
  });

  it('a foreign Host is refused with 421 and logged', async () => {
    const reply = await rawRequest(d.port, 'GET /status HTTP/1.1\r\nHost: rebind.evil.example:9879\r\n\r\n');
    expect(reply.status).toBe(421);
    expect(d.records()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        event: 'metrics',
        msg: "refused GET /status from 127.0.0.1: 421 the Host 'rebind.evil.example' is not a name this daemon answers to (add it to metrics.allowed-hosts)",
      }),
    );
    await stillAnswers();
  });

  it('connections beyond the cap are dropped (and logged), the daemon answers once they close', async () => {
    const sockets: Socket[] = [];
    for (let i = 0; i < MAX_CONNECTIONS; i++)
      sockets.push(
        await new Promise<Socket>((resolve) => {
          const s = connect({ port: d.port, host: '127.0.0.1' }, () => resolve(s));
          s.on('error', () => {});
        }),
      );
    const extra = await rawRequest(d.port, get('/metrics'));
    expect(extra.status).toBeUndefined(); // closed without a reply
    for (const s of sockets) s.destroy();
    // the server counts a connection gone once it saw it close: ask until it has
    let status = 0;
    while (status !== 200) status = (await rawRequest(d.port, get('/metrics'))).status ?? 0;
    expect(d.records().some((r) => String(r.msg).startsWith('dropped a connection from 127.0.0.1'))).toBe(true);
    await stillAnswers();
  });

  it('arbitrary request lines, paths, headers, methods and bodies leave it answering, the motion untouched', async () => {
    const token = fc.stringMatching(/^[A-Za-z!#$%&'*+.^_`|~-]{1,12}$/);
    // mostly requests node parses (so that they reach the daemon's handler), some that it cannot
    const method = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('GET', 'HEAD') },
      { weight: 1, arbitrary: fc.constantFrom('POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT', 'PRI', 'get') },
      { weight: 1, arbitrary: token },
    );
    const path = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('//', '///', '/%', '/%zz', '*', 'http://x/', '//x', '/?%') },
      fc.constantFrom(
        '/',
        '//',
        '///',
        '/%',
        '/%zz',
        '*',
        'http://x/',
        'http://127.0.0.1/status',
        '/metrics',
        '/status',
        '/api/history?after=-1',
        '/api/decisions?limit=99999999999999999999',
        '/api/plan',
        '/api/what-if',
        '/api/motions?limit=%zz',
        '/ui/../../etc/passwd',
        '/\u00e9',
        '',
      ),
      fc.string().map((s) => `/${s}`),
      fc.string(),
    );
    const version = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('HTTP/1.1', 'HTTP/1.0') },
      { weight: 1, arbitrary: fc.constantFrom('HTTP/2.0', 'HTTP/9.9', '', 'HTTP/1.1 x') },
    );
    const host = fc.oneof(
      { weight: 4, arbitrary: fc.constant(['Host: 127.0.0.1']) },
      { weight: 1, arbitrary: fc.constantFrom([], ['Host: evil.example'], ['Host: [::1]:1'], ['Host: a', 'Host: b']) },
    );
    const header = fc.tuple(
      fc.oneof(
        fc.constantFrom(
          'Host',
          'Content-Length',
          'Transfer-Encoding',
          'Authorization',
          'Connection',
          'Expect',
          'Upgrade',
          'Accept-Encoding',
          'Range',
        ),
        token,
      ),
      fc.oneof(
        fc.constantFrom(
          '127.0.0.1',
          'evil.example',
          'chunked',
          '0',
          '-1',
          '99999999999',
          'close',
          '100-continue',
          'gzip',
          'websocket',
          'Basic Og==',
          'Bearer x',
        ),
        fc.string(),
      ),
    );
    const request = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.tuple(
          method,
          path,
          version,
          host,
          fc.array(header, { maxLength: 5 }),
          fc.string({ maxLength: 64 }),
        ),
      },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)) },
    );
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const bytes = Buffer.isBuffer(r)
          ? r
          : `${r[0]} ${r[1]} ${r[2]}\r\n${[...r[3], ...r[4].map(([n, v]) => `${n}: ${v}`)].map((h) => `${h}\r\n`).join('')}\r\n${r[5]}`;
        await rawRequest(d.port, bytes);
        await stillAnswers();
      }),
      { numRuns: 120 },
    );
  });
});

describe('the guard around the routes', () => {
  const logged: string[] = [];
  const log = new Logger(
    { format: 'json', level: 'debug' },
    (l) => logged.push(l),
    () => 0,
  );

  it('a route that throws synchronously, one that rejects and a reply that cannot be written are 500s and logged', async () => {
    const server = new MetricsServer(
      new Metrics(),
      new Map<string, HttpRoute>([
        [
          '/sync',
          () => {
            throw new Error('sync failure');
          },
        ],
        ['/async', async () => Promise.reject(new Error('async failure'))],
        ['/header', () => ({ status: 200, type: 'text/plain\r\nx: y', body: 'x' })],
        ['/bodiless', () => ({ status: 200, type: 'text/plain' }) as never],
      ]),
      { log, allowedHosts: [] },
    );
    const { port } = await server.listen('127.0.0.1', 0);
    try {
      for (const path of ['/sync', '/async', '/header', '/bodiless']) {
        const res = await fetch(`http://127.0.0.1:${port}${path}`);
        expect(res.status, path).toBe(500);
        expect(await res.text()).toBe('internal error (logged)\n');
      }
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
      const errors = logged
        .map((l) => JSON.parse(l) as { level: string; msg: string })
        .filter((r) => r.level === 'error');
      expect(errors.map((e) => e.msg)).toEqual([
        'request failed: sync failure',
        'request failed: async failure',
        expect.stringMatching(/^cannot write a reply \(200\): /),
        expect.stringMatching(/^cannot write a reply \(200\): /),
      ]);
    } finally {
      await server.close();
    }
  });

  it('a flood of refused requests is logged at most 20 lines a minute, then one line says how many were left out', async () => {
    const lines: string[] = [];
    let now = 0;
    const server = new MetricsServer(new Metrics(), new Map(), {
      log: new Logger(
        { format: 'json', level: 'info' },
        (l) => lines.push(l),
        () => 0,
      ),
      allowedHosts: [],
      now: () => now,
    });
    const { port } = await server.listen('127.0.0.1', 0);
    try {
      for (let i = 0; i < 50; i++) await rawRequest(port, 'GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n');
      expect(lines).toHaveLength(20);
      now = 61;
      await rawRequest(port, 'GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n');
      const msgs = lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
      expect(msgs[20]).toBe('30 more lines like these left out (at most 20 per 60 s)');
      expect(msgs).toHaveLength(22);
    } finally {
      await server.close();
    }
  });
});

describe('authentication', () => {
  const TOKEN = 'c2VjcmV0LXRva2VuLW9mLXRoZS1saXN0ZW5lcg';

  it.each([
    ['no header', 401, undefined],
    ['the token', 200, `Bearer ${TOKEN}`],
    ['the scheme in lower case', 200, `bearer ${TOKEN}`],
    ['another token', 401, 'Bearer nope'],
    ['basic instead', 401, 'Basic dXNlcjpwYXNz'],
  ])('a bearer token: %s → %i, on every route', async (_, status, header) => {
    const file = join(mkdtempSync(join(tmpdir(), 'poise-bearer-')), 'token');
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    const d = await listeningDaemon({ 'bearer-token-file': file });
    try {
      for (const path of ['/metrics', '/status', '/', '/api/history', '/nope']) {
        const res = await fetch(`http://127.0.0.1:${d.port}${path}`, {
          headers: header === undefined ? {} : { authorization: header },
        });
        expect(res.status, path).toBe(status === 200 && path === '/nope' ? 404 : status);
        if (status === 401) expect(res.headers.get('www-authenticate')).toBe('Bearer realm="poise-manager"');
      }
    } finally {
      await d.close();
    }
  });

  it('basic authentication with {SHA} and $scrypt$ users; a wrong password, an unknown user and none are 401', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'poise-basic-')), 'users');
    const sha = createHash('sha1').update('prometheus-pass').digest('base64');
    // ln=10: the smallest accepted cost, enough for a test
    const scrypt = await scryptHash('operator pass', randomBytes(16), { logN: 10, r: 8, p: 1 });
    writeFileSync(file, `# users of the page\nprometheus:{SHA}${sha}\noperator:${scrypt}\n`, { mode: 0o600 });
    const d = await listeningDaemon({ 'basic-auth-file': file });
    const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    try {
      const status = async (header?: string) =>
        (await fetch(`http://127.0.0.1:${d.port}/metrics`, { headers: header ? { authorization: header } : {} }))
          .status;
      expect(await status(basic('prometheus', 'prometheus-pass'))).toBe(200);
      expect(await status(basic('operator', 'operator pass'))).toBe(200);
      expect(await status(basic('operator', 'operator pass'))).toBe(200); // from the cache of right answers
      expect(await status(basic('operator', 'wrong'))).toBe(401);
      expect(await status(basic('nobody', 'operator pass'))).toBe(401);
      expect(await status(`Bearer x`)).toBe(401);
      expect(await status()).toBe(401);
      const res = await fetch(`http://127.0.0.1:${d.port}/`);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="poise-manager", charset="UTF-8"');
      expect(d.records()).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          msg:
            "metrics.basic-auth-file: 'prometheus' in '" +
            file +
            "' has a '{SHA}' hash (unsalted SHA-1: quick to guess from a copy of the file); a '$scrypt$' hash is stronger",
        }),
      );
      expect(d.records()).toContainEqual(
        expect.objectContaining({ level: 'warn', msg: 'refused GET /metrics from 127.0.0.1: 401 wrong credentials' }),
      );
    } finally {
      await d.close();
    }
  });
});

describe('TLS and the start-up lines', () => {
  it('serves HTTPS with the configured certificate and says so; plain HTTP on its port gets nothing', async () => {
    const certs = await generateCertificates();
    const dir = mkdtempSync(join(tmpdir(), 'poise-tls-'));
    writeFileSync(join(dir, 'cert.pem'), certs.certPem);
    writeFileSync(join(dir, 'key.pem'), certs.keyPem, { mode: 0o600 });
    const d = await listeningDaemon({ tls: { 'cert-file': join(dir, 'cert.pem'), 'key-file': join(dir, 'key.pem') } });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: d.port, path: '/metrics', ca: certs.caPem }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(200);
      const plain = await rawRequest(d.port, get('/metrics'));
      expect(plain.status).toBeUndefined();
      expect(d.records()).toContainEqual(
        expect.objectContaining({
          event: 'metrics',
          msg: `status page on https://127.0.0.1:${d.port}/ (JSON: /status, /api/…), metrics on https://127.0.0.1:${d.port}/metrics; authentication: none`,
        }),
      );
    } finally {
      await d.close();
    }
  });

  it('warns at start when it listens beyond loopback without authentication', async () => {
    const d = await listeningDaemon({ listen: '0.0.0.0:0' });
    try {
      expect(d.records()).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          event: 'metrics',
          msg: `the listener on 0.0.0.0:${d.port} is reachable beyond loopback without authentication: anyone who reaches it reads the cluster's state (set metrics.bearer-token-file or metrics.basic-auth-file, or listen on 127.0.0.1)`,
        }),
      );
    } finally {
      await d.close();
    }
    const local = await listeningDaemon();
    try {
      expect(local.records().filter((r) => r.level === 'warn' && r.event === 'metrics')).toEqual([]);
    } finally {
      await local.close();
    }
  });
});
