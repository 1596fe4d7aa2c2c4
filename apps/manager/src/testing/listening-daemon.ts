// Support for the listener's tests: a real daemon on port 0 against the fake cluster, and raw
// requests over TCP (node:net), so that a test can send what no HTTP client would.
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../config/load';
import { Logger } from '../log';
import { FakeCluster, fakeHost } from './fake-cluster';
import { Daemon } from '../runtime/daemon';

const GIB = 1024 ** 3;

/** A daemon listening on 127.0.0.1 (port 0 unless given), in act mode on three nodes with six VMs on node1. */
export interface ListeningDaemon {
  readonly daemon: Daemon;
  readonly port: number;
  readonly dir: string;
  /** The log lines so far, parsed. */
  records(): Record<string, unknown>[];
  /** Runs n rounds with a cluster step of the interval between them. */
  run(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function listeningDaemon(
  metrics: Record<string, unknown> = {},
  options: { dir?: string; cluster?: FakeCluster } = {},
): Promise<ListeningDaemon> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'poise-listener-'));
  const config = parseConfig(
    {
      env: 'pve',
      mode: 'act',
      pve: { urls: ['https://node1:8006'], 'token-env': 'POISE_TEST_TOKEN' },
      state: { file: join(dir, 'state.json') },
      metrics: { enabled: true, listen: '127.0.0.1:0', ...metrics },
      lock: { enabled: false },
      policy: { 'ha-auto-rebalance-preset': 'reference', 'ha-auto-rebalance-hold-duration': 1 },
    },
    join(dir, 'poise-manager.yaml'),
  );
  const cluster =
    options.cluster ??
    FakeCluster.create({
      nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }],
      guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104', 'vm:105', 'vm:106'].map((sid) => ({
        sid,
        node: 'node1',
        cpu: 2,
        mem: 8 * GIB,
      })),
      // vm:101 moves for many rounds: a motion stays in flight while the tests knock
      scripts: { 'vm:101': { rounds: 1000 } },
    });
  const host = fakeHost(cluster);
  const lines: string[] = [];
  let port = 0;
  const daemon = new Daemon({
    config,
    host,
    log: new Logger(
      { format: 'json', level: 'debug' },
      (l) => lines.push(l),
      () => cluster.time,
    ),
    version: 'test',
    onListening: (a) => (port = a.port),
  });
  await daemon.start();
  const never = new AbortController().signal;
  return {
    daemon,
    port,
    dir,
    records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
    run: async (n) => {
      for (let i = 0; i < n; i++) {
        await daemon.runRound();
        await host.clock.sleep(config.intervalSeconds, never);
      }
    },
    close: async () => {
      daemon.stop('SIGTERM');
      await daemon.close();
    },
  };
}

/** What came back on a raw connection: the bytes until the server closed it (or reset it). */
export interface RawReply {
  readonly text: string;
  /** The status of the first response, if one came. */
  readonly status: number | undefined;
  /** The connection ended with an error (reset) rather than a close. */
  readonly reset: boolean;
}

/**
 * Sends `bytes` on a new connection, half-closes it, and reads until the server closes it. A
 * request the server waits on (incomplete) is closed by it when it sees the end of input.
 */
export function rawRequest(port: number, bytes: string | Buffer): Promise<RawReply> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let reset = false;
    const socket = connect({ port, host: '127.0.0.1' }, () => {
      socket.write(bytes);
      socket.end();
    });
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => (reset = true));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ text, status: m ? Number(m[1]) : undefined, reset });
    });
  });
}

/**
 * Opens a request with a body that never ends (chunks as fast as the server takes them) and
 * resolves once the server closed the connection: what it answered and how many bytes were sent.
 */
export function endlessBody(port: number, head: string): Promise<RawReply & { sentBytes: number }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let reset = false;
    let sent = 0;
    let open = true;
    const chunk = Buffer.from(`4000\r\n${'x'.repeat(0x4000)}\r\n`);
    const socket = connect({ port, host: '127.0.0.1' }, () => {
      socket.write(head);
      const pump = () => {
        while (open && socket.write(chunk)) sent += chunk.length;
        if (open) {
          sent += chunk.length;
          socket.once('drain', pump);
        }
      };
      pump();
    });
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => {
      reset = true;
      open = false;
    });
    socket.on('close', () => {
      open = false;
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ text, status: m ? Number(m[1]) : undefined, reset, sentBytes: sent });
    });
  });
}
