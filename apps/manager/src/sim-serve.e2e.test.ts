// End to end: poise-manager (the whole CLI path in this process: config file, token file, the
// Proxmox VE host with its TLS pin, the daemon) against `poise-sim serve` (a child process: the
// real command, its certificate generated at start and its fingerprint read from its output)
// over real HTTPS on 127.0.0.1. The serve command runs the simulation in accelerated real time;
// the daemon's pauses between rounds are shortened to keep the test fast (its clock is the
// wall clock; only `sleep` is shorter than `interval`).
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createPveHost, type Host } from './adapters';
import { systemClock } from './clock';
import { EXIT_FAILURE, EXIT_OK, type Io, main } from './main';
import { spawnScript } from './pve-test-support';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../../..');
const SIM_CLI = join(ROOT, 'apps/sim/src/cli.ts');
const BUNDLED = join(ROOT, 'apps/manager/scenarios/three-nodes-unbalanced');
const SECRET = 'e2e5ec2e-7b1f-4c9e-8d4a-2e7b1f3c9e2d';
const TOKEN = `poise@pve!balancer=${SECRET}`;
/** Simulated seconds per real second: one 20 s round every 0.2 s. */
const SPEED = 100;
/** The daemon's real pause between rounds, ms (about one simulated round). */
const DAEMON_PAUSE_MS = 200;
/** Rounds after which a run stops whatever happened (a bound, not an expectation). */
const MAX_ROUNDS = 80;

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGTERM');
});

/**
 * The bundled scenario with a long tail (`delay 3000`: the scenario ends at about 3200 s, 32 s
 * of real time at this speed), so that the daemon is never racing the scenario's end.
 */
function e2eCase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'poise-e2e-case-'));
  cpSync(BUNDLED, dir, { recursive: true });
  writeFileSync(
    join(dir, 'cmdlist'),
    JSON.stringify([
      ['power node1 on', 'power node2 on', 'power node3 on'],
      [
        'service vm:103 set-dynamic-stats cpu 2 mem 4096',
        'service vm:104 set-dynamic-stats cpu 2 mem 4096',
        'service ct:105 set-dynamic-stats cpu 1 mem 2048',
      ],
      ['delay 3000'],
    ]),
  );
  return dir;
}

/** `poise-sim serve` in a child process; resolves once it listens, with its URL and printed fingerprint. */
async function startServe(dir: string, tokenFile: string) {
  const { child, lines, stderr } = spawnScript(SIM_CLI, [
    'serve',
    e2eCase(),
    '--port',
    '0',
    '--token-file',
    tokenFile,
    '--speed',
    String(SPEED),
  ]);
  children.push(child);
  const until = Date.now() + 60_000;
  for (;;) {
    const url = lines
      .map((l) => /API on (https:\/\/127\.0\.0\.1:\d+)\/api2\/json$/.exec(l)?.[1])
      .find((u) => u !== undefined);
    const fingerprint = lines
      .map((l) => /^fingerprint \(SHA-256\): ([0-9A-F:]+)$/.exec(l)?.[1])
      .find((f) => f !== undefined);
    if (url && fingerprint) return { url, fingerprint, lines, stderr, dir };
    if (child.exitCode !== null || Date.now() > until)
      throw new Error(`poise-sim serve did not start:\n${lines.join('\n')}\n${stderr()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A directory with the token file (mode 600). */
function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'poise-e2e-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  return { dir, tokenFile };
}

interface Run {
  code: number;
  records: Record<string, unknown>[];
  lines: string[];
  /** Prometheus text and /status JSON, scraped before the end. */
  metrics: string;
  status: string;
}

/**
 * Runs poise-manager (`main` with a config file) against a server until `done(records)` holds
 * (or {@link MAX_ROUNDS}); the Proxmox VE host is the real one, its clock's pause shortened.
 */
async function runManager(
  w: { dir: string; tokenFile: string },
  server: { url: string },
  mode: 'act' | 'observe',
  fingerprint: string,
  done: (records: Record<string, unknown>[]) => boolean,
  extraArgs: string[] = [],
): Promise<Run> {
  const config = join(w.dir, `poise-manager-${mode}.yaml`);
  writeFileSync(
    config,
    [
      'env: pve',
      `mode: ${mode}`,
      'interval: 1',
      'pve:',
      `  urls: ['${server.url}']`,
      `  token-file: ${w.tokenFile}`,
      '  timeout: 5',
      `  tls: {fingerprint: '${fingerprint}'}`,
      `state: {file: ${join(w.dir, `state-${mode}.json`)}}`,
      'lock: {enabled: false}',
      // the cluster runs 100 times faster than the daemon's clock: its settle time in real seconds
      'limits: {settle-time: 2}',
      'metrics: {listen: "127.0.0.1:0"}',
      'log: {format: json}',
    ].join('\n'),
  );
  const lines: string[] = [];
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  let port = 0;
  let scraped: { metrics: string; status: string } | undefined;
  const io: Io = {
    out: (l) => lines.push(l),
    err: (l) => lines.push(JSON.stringify({ msg: l })),
    logLine: (l) => lines.push(l),
    isTty: false,
    env: {},
    onSignal: () => () => undefined,
  };
  const code = await main(['--config', config, ...extraArgs], io, {
    onListening: (a) => (port = a.port),
    createHost: (c): Host => {
      const host = createPveHost(c, { backoffBaseMs: 1, retries: 1 });
      return {
        ...host,
        finished: () => scraped !== undefined,
        clock: {
          now: () => systemClock.now(),
          sleep: async (_seconds, signal) => {
            const rs = records();
            if (done(rs) || rs.filter((r) => r.event === 'round').length >= MAX_ROUNDS) {
              const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
              const status = await (await fetch(`http://127.0.0.1:${port}/status`)).text();
              scraped = { metrics, status };
            }
            await systemClock.sleep(DAEMON_PAUSE_MS / 1000, signal);
          },
        },
      };
    },
  });
  return { code, records: records(), lines, metrics: scraped?.metrics ?? '', status: scraped?.status ?? '' };
}

const rounds = (r: Run) => r.records.filter((x) => x.event === 'round');

describe('poise-manager against poise-sim serve over HTTPS (pinned)', () => {
  it('act: the cluster ends balanced, each motion requested once and followed to success; the token is in no log line, metric or status', async () => {
    const w = workspace();
    const server = await startServe(w.dir, w.tokenFile);
    // done: below the threshold after at least one motion succeeded, nothing in flight
    const run = await runManager(w, server, 'act', server.fingerprint, (rs) => {
      const last = rs.filter((r) => r.event === 'round').at(-1);
      return rs.some((r) => r.event === 'motion' && r.result === 'succeeded') && last?.reason === 'below-threshold';
    });
    expect(run.code).toBe(EXIT_OK);
    const all = rounds(run);
    expect(all.length).toBeLessThan(MAX_ROUNDS);
    expect(run.records.find((r) => r.event === 'start' && String(r.msg).startsWith('TLS:'))!.msg).toBe(
      `TLS: only the certificate with fingerprint ${server.fingerprint} is accepted (pinned; the chain is not checked)`,
    );
    // started unbalanced (every guest on node1), ended below the threshold
    // (the cluster settles after its nodes came up first: by then three guests got busier, and the
    // imbalance of all on one node is 1 up to rounding)
    expect(all.some((r) => r.reason === 'holding' && Math.abs((r.imbalance as number) - 1) < 1e-9)).toBe(true);
    const last = all.at(-1)!;
    expect(last.reason).toBe('below-threshold');
    expect(last.imbalance as number).toBeLessThan(0.3);
    const moves = all.filter((r) => r.outcome === 'move');
    expect(moves.length).toBeGreaterThanOrEqual(2);
    expect(all.filter((r) => r.outcome === 'error')).toEqual([]);
    // each motion followed to its end: succeeded, none failed
    const outcomes = run.records.filter((r) => r.event === 'motion');
    expect(outcomes.map((r) => r.result)).toEqual(moves.map(() => 'succeeded'));
    expect(outcomes.map((r) => r.sid)).toEqual(moves.map((r) => r.sid));
    // the server saw exactly those requests, once each, and the simulated CRM moved the guests
    const posts = server.lines.filter((l) => / POST /.test(l));
    expect(posts).toEqual(
      moves.map((m) =>
        expect.stringContaining(
          `POST migrate ${String(m.sid)} to ${String(m.target)}: queued for the CRM's next round`,
        ),
      ),
    );
    for (const m of moves)
      expect(
        server.lines.some((l) =>
          l.endsWith(
            `${String(m.sid)}: started on ${String(m.target)} (was migrate ${String(m.source)} → ${String(m.target)})`,
          ),
        ),
      ).toBe(true);
    expect(run.metrics).toMatch(/poise_motions_succeeded_total\{via="ha"\} [1-9]/);
    expect(run.records.at(-1)!.msg).toBe(
      `stopped after ${all.length} rounds; motions this run: ${moves.length} requested, ${moves.length} succeeded, 0 failed`,
    );
    // the token: in no line of either side, no metric, no status
    for (const text of [...run.lines, run.metrics, run.status, ...server.lines, server.stderr()])
      expect(text).not.toContain(SECRET);
  });

  it('observe: nothing moves (no request reaches the server), every decision is a line saying what it would do; a wrong fingerprint is refused', async () => {
    const w = workspace();
    const server = await startServe(w.dir, w.tokenFile);
    const run = await runManager(
      w,
      server,
      'observe',
      server.fingerprint,
      (rs) => rs.filter((r) => r.event === 'round' && r.outcome === 'would-move').length >= 2,
    );
    expect(run.code).toBe(EXIT_OK);
    const all = rounds(run);
    expect(all.filter((r) => r.outcome === 'move')).toEqual([]);
    const would = all.filter((r) => r.outcome === 'would-move');
    expect(would.length).toBeGreaterThanOrEqual(2);
    // the default policy (recommended): its cost weight prefers a guest that copies less memory than vm:101
    for (const r of would)
      expect(r.msg).toMatch(
        /^observe: would migrate vm:10[2-6] from node1 to node[23] \(imbalance 100\.0% → \d+\.\d%\)$/,
      );
    expect(server.lines.filter((l) => / POST /.test(l))).toEqual([]);
    expect(run.records.at(-1)!.msg).toMatch(
      /^stopped after \d+ rounds; observe mode: nothing moved, \d+ rounds would have requested a motion$/,
    );

    // the same server pinned with another certificate's fingerprint: refused before a request is sent
    const wrong = server.fingerprint.replace(/^(..)/, (b) => (b === 'AA' ? 'BB' : 'AA'));
    const refused = await runManager(w, server, 'act', wrong, () => true, ['--once']);
    expect(refused.code).toBe(EXIT_FAILURE);
    const round = rounds(refused)[0]!;
    expect(round).toMatchObject({ outcome: 'error', reason: 'api-error', kind: 'tls' });
    expect(round.msg).toMatch(/^reading the cluster failed \(tls, GET \/cluster\/\S+\): .*fingerprint/);
    expect(server.lines.filter((l) => / POST /.test(l))).toEqual([]);
    for (const text of [...run.lines, ...refused.lines, run.metrics, run.status, ...server.lines])
      expect(text).not.toContain(SECRET);
  });
});
