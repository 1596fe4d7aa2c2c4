// Test support: a daemon in this process against a fake cluster served over real HTTPS on
// 127.0.0.1 (fake-pve.ts), through the real Proxmox VE host (`createPveHost`: client, TLS pin,
// adapter). The daemon's clock is the cluster's: each sleep between rounds is one HA round.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCertificates, type TestCertificates } from '@poise/pve-api/server';
import { createPveHost, type Host } from '../cluster/host';
import { type ManagerConfig, parseConfig } from '../config/load';
import { Daemon } from '../runtime';
import { FakeCluster, type FakeClusterSpec } from './fake-cluster';
import { Logger } from '../log';
import { type FakePve, type FakePveOptions, startFakePve } from './fake-pve';

export const GIB = 1024 ** 3;
export const SECRET = '7b1f3c9e-2d4a-4e8b-9f60-5ec2e75ec2e7';
export const TOKEN = `poise@pve!balancer=${SECRET}`;

let certificates: Promise<TestCertificates> | undefined;
/** One CA and server certificate per test file (generating them takes a moment). */
export function certs(): Promise<TestCertificates> {
  certificates ??= generateCertificates();
  return certificates;
}

/** Three nodes of 16 cores / 64 GiB; four HA VMs of 2 cores / 8 GiB on node1. */
export function unbalanced(extra: Partial<FakeClusterSpec> = {}): FakeClusterSpec {
  return {
    nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }],
    guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104'].map((sid) => ({ sid, node: 'node1', cpu: 2, mem: 8 * GIB })),
    ...extra,
  };
}

export interface PveSetup {
  dir: string;
  statePath: string;
  cluster: FakeCluster;
  fake: FakePve;
  config: ManagerConfig;
  host: Host;
  daemon: Daemon;
  lines: string[];
  records: () => Record<string, unknown>[];
  rounds: () => Record<string, unknown>[];
  /** Runs n rounds with one HA round (cluster step) after each. */
  run: (n: number) => Promise<void>;
  /** HA migrate/relocate and guest migrate POSTs that reached the server. */
  posts: () => { path: string; target: string | null }[];
  /** The metrics address once the daemon listens (metrics enabled). */
  listening: () => { host: string; port: number } | undefined;
  close: () => Promise<void>;
}

/** A daemon over the fake API; `doc` is merged into the config (pinned fingerprint, 1 s timeout). */
export async function pveSetup(
  doc: Record<string, unknown> = {},
  spec: FakeClusterSpec = unbalanced(),
  options: {
    fake?: Partial<Omit<FakePveOptions, 'cluster'>>;
    dir?: string;
    cluster?: FakeCluster;
    pve?: Record<string, unknown>;
  } = {},
): Promise<PveSetup> {
  const c = await certs();
  const cluster = options.cluster ?? FakeCluster.create(spec);
  const fake = await startFakePve({
    cluster,
    tls: { cert: c.certPem, key: c.keyPem },
    tokens: [TOKEN],
    ...options.fake,
  });
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'poise-pve-'));
  const statePath = join(dir, 'state.json');
  const config = parseConfig(
    {
      env: 'pve',
      pve: {
        urls: [fake.url],
        'token-env': 'POISE_TOKEN',
        timeout: 1,
        tls: { fingerprint: c.fingerprint256 },
        ...options.pve,
      },
      state: { file: statePath },
      metrics: { enabled: false },
      lock: { enabled: false },
      ...doc,
      // the reference pipeline unless a test asks for more (the motions it makes are worked out by hand)
      policy: { 'ha-auto-rebalance-preset': 'reference', ...(doc.policy as Record<string, unknown> | undefined) },
    },
    join(dir, 'poise-manager.yaml'),
  );
  const host = createPveHost(config, {
    env: { POISE_TOKEN: TOKEN },
    clock: {
      now: () => cluster.time,
      sleep: async (seconds, signal) => {
        if (!signal.aborted) cluster.step(seconds);
      },
    },
    backoffBaseMs: 1,
  });
  const lines: string[] = [];
  const log = new Logger(
    { format: 'json', level: 'debug' },
    (l) => lines.push(l),
    () => cluster.time,
  );
  let address: { host: string; port: number } | undefined;
  const daemon = new Daemon({ config, host, log, version: 'test', onListening: (a) => (address = a) });
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const never = new AbortController().signal;
  return {
    dir,
    statePath,
    cluster,
    fake,
    config,
    host,
    daemon,
    lines,
    records,
    rounds: () => records().filter((r) => r.event === 'round'),
    run: async (n) => {
      for (let i = 0; i < n; i++) {
        await daemon.runRound();
        await host.clock.sleep(config.intervalSeconds, never);
      }
    },
    posts: () => fake.posts().map((r) => ({ path: r.path, target: r.form.get('node') ?? r.form.get('target') })),
    listening: () => address,
    close: async () => {
      await host.port.close?.();
      await fake.close();
    },
  };
}

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../../../..');
const CLI = join(HERE, '..', 'cli.ts');

/** The real `poise-manager` CLI in a child process (from source), its JSON log lines collected. */
export function spawnCli(args: string[], env: Record<string, string> = {}) {
  return spawnScript(CLI, args, env);
}

/**
 * A TypeScript entry point (`script`, from source) in a child process (its standard input
 * closed, or a pipe with `stdin: 'pipe'`): its stdout lines collected (`records()` parses them
 * as JSON log lines), its stderr, its exit, and `waitFor` a line that matches.
 */
export function spawnScript(
  script: string,
  args: readonly string[],
  env: Record<string, string> = {},
  options: { stdin?: 'pipe' } = {},
) {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--conditions=poise-source', '--import', 'tsx', script, ...args],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  let stderr = '';
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'close': the process has exited and its output is read to the end
  const exited = new Promise<number | string>((r) => child.on('close', (code, signal) => r(code ?? signal ?? -1)));
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  async function waitFor(what: string, predicate: (r: Record<string, unknown>) => boolean, timeoutMs = 60_000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = records().find(predicate);
      if (found) return found;
      if (Date.now() > until)
        throw new Error(`timed out waiting for ${what}; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return { child, lines, records, waitFor, exited, stderr: () => stderr };
}
