// End to end: poise-manager (the whole CLI path in this process: config file, token file, the
// Proxmox VE host with its TLS pin, the daemon) against `poise-sim serve` (the real command in a
// child process, its certificate generated at start and its fingerprint read from what it
// prints) over real HTTPS on 127.0.0.1. Nothing here depends on how fast the machine is:
// - the daemon's runs use `serve --step`, in lockstep with the daemon: the served simulation
//   advances only when the daemon sleeps between rounds (a `step` line on the server's standard
//   input, one 20 s HA round, answered `stepped to <t> s`), and the daemon's clock is the
//   simulation's, so every round sees the same cluster whatever the load (the HTTP requests are
//   real, with a generous timeout);
// - `serve --manager-config` runs in accelerated real time; the test waits for what it prints
//   (every HA resource started) before asking `--once`, and asks nothing that depends on the pace.
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createPveHost, type Host } from './host';
import type { Clock } from './clock';
import type { Io } from '../cli/io';
import { EXIT_FAILURE, EXIT_OK, main } from '../cli/main';
import { spawnScript } from '../testing/pve-support';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../../../..');
const SIM_CLI = join(ROOT, 'apps/sim/src/cli.ts');
const BUNDLED = join(ROOT, 'apps/manager/scenarios/three-nodes-unbalanced');
const SECRET = 'e2e5ec2e-7b1f-4c9e-8d4a-2e7b1f3c9e2d';
const TOKEN = `poise@pve!balancer=${SECRET}`;
/** The served cluster's epoch: simulated second 0 is 2026-01-01T00:00:00Z. */
const EPOCH = 1_767_225_600;
/** Rounds after which a run stops whatever happened (a bound, not an expectation). */
const MAX_ROUNDS = 80;
/** How long anything waited on in real time may take (a bound for a loaded machine, not a pace). */
const PATIENCE_MS = 120_000;
/** Each test's bound: it spawns a server and runs tens of rounds over HTTPS on a machine that may be loaded. */
const TEST_TIMEOUT_MS = 600_000;

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGTERM');
});

/**
 * The bundled scenario with a long tail (`delay 3000`: it ends at about 3200 simulated seconds),
 * so that the daemon is never racing the scenario's end.
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

/** A directory with the token file (mode 600). */
function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'poise-e2e-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  return { dir, tokenFile };
}

/** Waits until `found()` gives a value, polling; fails after {@link PATIENCE_MS} or when the server exited. */
async function until<T>(what: string, server: ReturnType<typeof spawnScript>, found: () => T | undefined): Promise<T> {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    const value = found();
    if (value !== undefined) return value;
    if (server.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`poise-sim serve: no ${what}:\n${server.lines.join('\n')}\n${server.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const urlOf = (lines: readonly string[]) =>
  lines.map((l) => /API on (https:\/\/127\.0\.0\.1:\d+)\/api2\/json$/.exec(l)?.[1]).find((u) => u !== undefined);
const fingerprintOf = (lines: readonly string[]) =>
  lines.map((l) => /^fingerprint \(SHA-256\): ([0-9A-F:]+)$/.exec(l)?.[1]).find((f) => f !== undefined);

/** `poise-sim serve --step` in a child process; once it listens: its URL, printed fingerprint and lines. */
async function serveInLockstep(tokenFile: string) {
  const server = spawnScript(
    SIM_CLI,
    ['serve', e2eCase(), '--port', '0', '--token-file', tokenFile, '--step'],
    {},
    { stdin: 'pipe' },
  );
  children.push(server.child);
  const url = await until('URL', server, () => urlOf(server.lines));
  const fingerprint = await until('fingerprint', server, () => fingerprintOf(server.lines));
  return { server, lines: server.lines, url, fingerprint };
}

/**
 * The served simulation's clock: `sleep` sends `step <n>` (the 20 s HA rounds that cover the
 * pause) and waits for the answer; `now` is the cluster's clock (its epoch + simulated seconds).
 */
function lockstepClock(s: Awaited<ReturnType<typeof serveInLockstep>>): Clock & { ended(): boolean } {
  let time = 0;
  let ended = false;
  let answers = 0;
  const stepped = () => s.lines.filter((l) => l.startsWith('stepped to '));
  return {
    now: () => EPOCH + time,
    ended: () => ended,
    sleep: async (seconds, signal) => {
      if (signal.aborted || ended) return;
      s.server.child.stdin!.write(`step ${Math.max(1, Math.ceil(seconds / 20))}\n`);
      answers++;
      const answer = await until('answer to step', s.server, () => stepped()[answers - 1]);
      const m = /^stepped to (\d+) s( \(the scenario has ended\))?$/.exec(answer)!;
      time = Number(m[1]);
      ended = m[2] !== undefined;
    },
  };
}

interface Run {
  code: number;
  records: Record<string, unknown>[];
  lines: string[];
  /** Prometheus text and /status JSON, scraped before the end. */
  metrics: string;
  status: string;
}

function captureIo(lines: string[]): Io {
  return {
    out: (l) => lines.push(l),
    err: (l) => lines.push(JSON.stringify({ msg: l })),
    logLine: (l) => lines.push(l),
    isTty: false,
    env: {},
    onSignal: () => () => undefined,
  };
}

/** A config file for a server, in the workspace (`extra` lines appended). */
function managerConfig(
  w: { dir: string; tokenFile: string },
  url: string,
  mode: 'act' | 'observe',
  fingerprint: string,
  extra: string[] = [],
): string {
  const config = join(w.dir, `poise-manager-${mode}.yaml`);
  writeFileSync(
    config,
    [
      'env: pve',
      `mode: ${mode}`,
      'pve:',
      `  urls: ['${url}']`,
      `  token-file: ${w.tokenFile}`,
      // a bound for a loaded machine: the server answers at once, from this process
      '  timeout: 60',
      `  tls: {fingerprint: '${fingerprint}'}`,
      `state: {file: ${join(w.dir, `state-${mode}.json`)}}`,
      'lock: {enabled: false}',
      'log: {format: json}',
      ...extra,
    ].join('\n'),
  );
  return config;
}

/**
 * Runs poise-manager (`main` with a config file: interval 20 s, the daemon's default settle
 * time) against a server in lockstep until `done(records)` holds, {@link MAX_ROUNDS} or the
 * scenario's end; the Proxmox VE host is the real one, its clock the simulation's.
 */
async function runInLockstep(
  w: { dir: string; tokenFile: string },
  s: Awaited<ReturnType<typeof serveInLockstep>>,
  mode: 'act' | 'observe',
  done: (records: Record<string, unknown>[]) => boolean,
): Promise<Run> {
  const config = managerConfig(w, s.url, mode, s.fingerprint, ['interval: 20', 'metrics: {listen: "127.0.0.1:0"}']);
  const lines: string[] = [];
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  let port = 0;
  let scraped: { metrics: string; status: string } | undefined;
  const clock = lockstepClock(s);
  const code = await main(['--config', config], captureIo(lines), {
    onListening: (a) => (port = a.port),
    createHost: (c): Host => ({
      ...createPveHost(c, { backoffBaseMs: 1, retries: 1, clock }),
      finished: () => scraped !== undefined,
      clock: {
        now: () => clock.now(),
        sleep: async (seconds, signal) => {
          const rs = records();
          if (done(rs) || rs.filter((r) => r.event === 'round').length >= MAX_ROUNDS || clock.ended()) {
            const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
            const status = await (await fetch(`http://127.0.0.1:${port}/status`)).text();
            scraped = { metrics, status };
          }
          await clock.sleep(seconds, signal);
        },
      },
    }),
  });
  return { code, records: records(), lines, metrics: scraped?.metrics ?? '', status: scraped?.status ?? '' };
}

const rounds = (r: Run) => r.records.filter((x) => x.event === 'round');
const posts = (lines: readonly string[]) => lines.filter((l) => / POST /.test(l));

describe('poise-manager against poise-sim serve over HTTPS (pinned), in lockstep', () => {
  it(
    'act: the cluster ends balanced, each motion requested once and followed to success; the token is in no log line, metric or status',
    async () => {
      const w = workspace();
      const s = await serveInLockstep(w.tokenFile);
      // done: below the threshold after at least one motion succeeded, nothing in flight
      const run = await runInLockstep(w, s, 'act', (rs) => {
        const last = rs.filter((r) => r.event === 'round').at(-1);
        return rs.some((r) => r.event === 'motion' && r.result === 'succeeded') && last?.reason === 'below-threshold';
      });
      expect(run.code).toBe(EXIT_OK);
      const all = rounds(run);
      expect(all.length).toBeLessThan(MAX_ROUNDS);
      expect(run.records.find((r) => r.event === 'start' && String(r.msg).startsWith('TLS:'))!.msg).toBe(
        `TLS: only the certificate with fingerprint ${s.fingerprint} is accepted (pinned; the chain is not checked)`,
      );
      // the cluster boots: no motion until it has settled (the daemon's 120 s after the last change)
      expect(all[0]).toMatchObject({ reason: 'not-quorate' });
      const settling = all.filter((r) => r.reason === 'settling');
      expect(settling.length).toBeGreaterThan(0);
      // started unbalanced (every guest on node1: the imbalance of all on one node is 1 up to rounding), ended below the threshold
      expect(all.some((r) => r.reason === 'holding' && Math.abs((r.imbalance as number) - 1) < 1e-9)).toBe(true);
      const last = all.at(-1)!;
      expect(last.reason).toBe('below-threshold');
      expect(last.imbalance as number).toBeLessThan(0.3);
      const moves = all.filter((r) => r.outcome === 'move');
      expect(moves.length).toBeGreaterThanOrEqual(2);
      expect(all.indexOf(moves[0]!)).toBeGreaterThan(all.indexOf(settling.at(-1)!));
      expect(all.filter((r) => r.outcome === 'error')).toEqual([]);
      // each motion followed to its end: succeeded, none failed
      const outcomes = run.records.filter((r) => r.event === 'motion');
      expect(outcomes.map((r) => r.result)).toEqual(moves.map(() => 'succeeded'));
      expect(outcomes.map((r) => r.sid)).toEqual(moves.map((r) => r.sid));
      // the server saw exactly those requests, once each, and the simulated CRM moved the guests
      const moved = moves.map((r) => ({
        sid: r.sid as string,
        source: r.source as string,
        target: r.target as string,
      }));
      expect(posts(s.lines)).toEqual(
        moved.map((m) =>
          expect.stringContaining(`POST migrate ${m.sid} to ${m.target}: queued for the CRM's next round`),
        ),
      );
      for (const m of moved)
        expect(
          s.lines.some((l) => l.endsWith(`${m.sid}: started on ${m.target} (was migrate ${m.source} → ${m.target})`)),
        ).toBe(true);
      expect(run.metrics).toMatch(/poise_motions_succeeded_total\{via="ha"\} [1-9]/);
      expect(run.records.at(-1)!.msg).toBe(
        `stopped after ${all.length} rounds; motions this run: ${moves.length} requested, ${moves.length} succeeded, 0 failed`,
      );
      // the token: in no line of either side, no metric, no status
      for (const text of [...run.lines, run.metrics, run.status, ...s.lines]) expect(text).not.toContain(SECRET);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'observe: nothing moves (no request reaches the server), every decision is a line saying what it would do',
    async () => {
      const w = workspace();
      const s = await serveInLockstep(w.tokenFile);
      const run = await runInLockstep(
        w,
        s,
        'observe',
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
      expect(posts(s.lines)).toEqual([]);
      expect(run.records.at(-1)!.msg).toMatch(
        /^stopped after \d+ rounds; observe mode: nothing moved, \d+ rounds would have requested a motion$/,
      );
      for (const text of [...run.lines, run.metrics, run.status, ...s.lines]) expect(text).not.toContain(SECRET);
    },
    TEST_TIMEOUT_MS,
  );
});

describe('the real command: poise-sim serve --manager-config (a child process), then poise-manager --once', () => {
  it(
    'the written config pins the printed fingerprint and keeps a state file of its own; --once says what would move; a wrong fingerprint is refused',
    async () => {
      const w = workspace();
      const written = join(w.dir, 'pm.yaml');
      const caseDir = e2eCase();
      const server = spawnScript(SIM_CLI, [
        'serve',
        caseDir,
        '--port',
        '0',
        '--token-file',
        w.tokenFile,
        '--speed',
        '20',
        '--manager-config',
        written,
      ]);
      children.push(server.child);
      const url = await until('URL', server, () => urlOf(server.lines));
      const fingerprint = await until('fingerprint', server, () => fingerprintOf(server.lines));
      await until('config', server, () =>
        server.lines.some((l) => l.startsWith('poise-manager config written to')) ? true : undefined,
      );
      // every HA resource of the case started (what the server prints as the simulated CRM changes them)
      const started = () =>
        new Set(
          server.lines
            .map((l) => /^sim \S+ {2}((?:vm|ct):\d+): started on node1/.exec(l)?.[1])
            .filter((sid) => sid !== undefined),
        );
      await until('start of every HA resource', server, () => (started().size === 6 ? true : undefined));
      const config = readFileSync(written, 'utf8');
      expect(config).toContain(`tls: {fingerprint: '${fingerprint}'}`);
      expect(config).toContain(`urls: ['${url}']`);
      const statePath = join(w.dir, `pm-state-${caseDir.split('/').at(-1)!}-${new URL(url).port}.json`);
      expect(config).toContain(`state: {file: '${statePath}'}`);

      // --once with the written config: the hold counted as met, one round that says what would move now
      const lines: string[] = [];
      expect(await main(['--config', written, '--once'], captureIo(lines))).toBe(EXIT_OK);
      const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const round = records.filter((r) => r.event === 'round');
      expect(round).toHaveLength(1);
      expect(round[0]!.msg).toMatch(
        /^observe: would migrate vm:10[2-6] from node1 to node[23] \(imbalance 100\.0% → \d+\.\d%\) \(--once: the hold of 3 rounds counted as met\)$/,
      );
      expect(existsSync(statePath)).toBe(false);
      expect(posts(server.lines)).toEqual([]);

      // the same server pinned with another certificate's fingerprint: refused before a request is sent
      const wrong = fingerprint.replace(/^(..)/, (b) => (b === 'AA' ? 'BB' : 'AA'));
      const refusedLines: string[] = [];
      const refusedConfig = managerConfig(w, url, 'observe', wrong);
      expect(await main(['--config', refusedConfig, '--once'], captureIo(refusedLines))).toBe(EXIT_FAILURE);
      const refused = refusedLines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((r) => r.event === 'round');
      expect(refused[0]).toMatchObject({ outcome: 'error', reason: 'api-error', kind: 'tls' });
      expect(refused[0]!.msg).toMatch(/^reading the cluster failed \(tls, GET \/cluster\/\S+\): .*fingerprint/);
      expect(posts(server.lines)).toEqual([]);
      for (const text of [...lines, ...refusedLines, ...server.lines, server.stderr()])
        expect(text).not.toContain(SECRET);
    },
    TEST_TIMEOUT_MS,
  );
});
