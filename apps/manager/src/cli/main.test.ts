import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadToken } from '../config/secret';
import { FakeCluster, type FakeClusterSpec, fakeHost } from '../testing/fake-cluster';
import { EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, main } from './main';
import { PortError } from '../cluster/port';
import { spawnScript } from '../testing/pve-support';
import { captureIo } from '../testing/support';

const ROOT = resolve(__dirname, '../../../..');
const FIXTURE = join(__dirname, '..', 'testing', 'fake-daemon.ts');
const CLI = join(__dirname, '..', 'cli.ts');
const GIB = 1024 ** 3;
const SECRET = '5ec2e7aa-0000-4bad-8c0d-5ec2e75ec2e7';
const TOKEN = `poise@pve!balancer=${SECRET}`;

function unbalanced(extra: Partial<FakeClusterSpec> = {}): FakeClusterSpec {
  return {
    nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }],
    guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104'].map((sid) => ({ sid, node: 'node1', cpu: 2, mem: 8 * GIB })),
    ...extra,
  };
}

/** A config file (YAML) in a fresh directory with a token file; returns paths. */
function workspace(extraYaml = '') {
  const dir = mkdtempSync(join(tmpdir(), 'poise-main-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  chmodSync(tokenFile, 0o600);
  const config = join(dir, 'poise-manager.yaml');
  const base = [
    'env: pve',
    'pve:',
    '  urls: [https://node1:8006]',
    `  token-file: ${tokenFile}`,
    `state: {file: ${join(dir, 'state.json')}}`,
    'metrics: {listen: "127.0.0.1:0"}',
    `lock: {dir: ${join(dir, 'lock')}}`,
    'log: {format: json}',
  ].join('\n');
  writeFileSync(config, `${base}\n${extraYaml}`);
  return { dir, config, tokenFile, base, statePath: join(dir, 'state.json') };
}

describe('command line', () => {
  it.each([
    [['--help'], EXIT_OK, /^usage: poise-manager/],
    [['--bogus'], EXIT_USAGE, /^poise-manager: unknown option '--bogus'/],
    [['--mode', 'fast'], EXIT_USAGE, /^poise-manager: '--mode' takes observe or act, got 'fast'/],
    [['--config'], EXIT_USAGE, /^poise-manager: '--config' needs a value/],
    [['--sim', '--once'], EXIT_USAGE, /'--sim' and '--once' do not go together/],
    [
      ['--sim', '--speed', 'fast'],
      EXIT_USAGE,
      /'--speed' takes a number ≥ 0 \(simulated seconds per real second\), got 'fast'/,
    ],
    [['--sim', '--speed', '-1'], EXIT_USAGE, /'--speed' takes a number ≥ 0 .*got '-1'/],
    [['--speed', '10'], EXIT_USAGE, /'--speed' goes with '--sim'/],
    [['--sim', '--listen', '9879'], EXIT_USAGE, /'--listen' takes <host>:<port> .*got '9879'/],
    [['--sim', '--listen', '127.0.0.1:70000'], EXIT_USAGE, /'--listen' takes <host>:<port> .*got '127.0.0.1:70000'/],
    [['--sim', '--listen', 'http://x:1'], EXIT_USAGE, /'--listen' takes <host>:<port> .*got 'http:\/\/x:1'/],
    [['--sim', '--listen'], EXIT_USAGE, /'--listen' needs a value/],
    [['--once', '--listen', '127.0.0.1:0'], EXIT_USAGE, /'--listen' does not go with it/],
    [[], EXIT_USAGE, /^poise-manager: no config file: use --config <file>/],
  ])('%j exits %i', async (argv, code, text) => {
    const c = captureIo();
    expect(await main(argv, c.io)).toBe(code);
    expect([...c.out, ...c.err].join('\n')).toMatch(text);
  });

  it('--print-schema prints the committed JSON schema', async () => {
    const c = captureIo();
    expect(await main(['--print-schema'], c.io)).toBe(EXIT_OK);
    expect(JSON.parse(c.out.join('\n'))).toEqual(
      JSON.parse(readFileSync(join(__dirname, '..', '..', 'config.schema.json'), 'utf8')),
    );
  });

  it('--check-config summarises a valid config, with the token id but not its secret', async () => {
    const w = workspace('mode: act\npolicy: {ha-auto-rebalance-margin: 5, ha-auto-rebalance-cooldown: 600}');
    const c = captureIo();
    expect(await main(['--check-config', '--config', w.config], c.io)).toBe(EXIT_OK);
    const text = c.out.join('\n');
    expect(text).toContain(`config ${w.config} is valid`);
    expect(text).toContain('env pve, mode act, interval 10 s');
    expect(text).toContain(`API token poise@pve!balancer from file '${w.tokenFile}'`);
    expect(text).toContain('TLS: verified against the system CAs');
    expect(text).toContain(
      'margin 5%, method bruteforce; preset recommended, objective contention, backoff 60 s, cooldown 600 s,',
    );
    expect(text).toContain(
      `policy keys: from poise-manager's defaults: hold-duration 3, method bruteforce, preset recommended, threshold 30; from '${w.config}': cooldown 600, margin 5`,
    );
    expect(text).not.toContain(SECRET);
  });

  it.each([
    ['interval: fast', /poise-manager\.yaml: interval: expected a number of seconds from 1 to 3600, got "fast"/],
    [
      'policy: {ha-auto-rebalance-threshold: abc}',
      /poise-manager\.yaml: policy\.ha-auto-rebalance-threshold: expected a number from 0 to 100, got "abc"/,
    ],
    ['guests: {non-ha: maybe}', /poise-manager\.yaml: guests\.non-ha: expected true or false, got "maybe"/],
  ])('--check-config refuses a bad config (%s) with exit 78 and the dot path', async (yaml, message) => {
    const w = workspace(yaml);
    const c = captureIo();
    expect(await main(['--check-config', '--config', w.config], c.io)).toBe(EXIT_CONFIG);
    expect(c.err.join('\n')).toMatch(message);
  });

  it('--check-config reads the CA file', async () => {
    const w = workspace();
    writeFileSync(w.config, w.base.replace('  token-file:', '  tls: {ca-file: /nonexistent/ca.pem}\n  token-file:'));
    const c = captureIo();
    expect(await main(['--check-config', '--config', w.config], c.io)).toBe(EXIT_CONFIG);
    expect(c.err.join('\n')).toContain("pve.tls.ca-file: cannot read '/nonexistent/ca.pem' (ENOENT)");
  });

  it('--check-config refuses a malformed token without showing it', async () => {
    const w = workspace();
    writeFileSync(w.tokenFile, SECRET);
    const c = captureIo();
    expect(await main(['--check-config', '--config', w.config], c.io)).toBe(EXIT_CONFIG);
    expect(c.err.join('\n')).toContain(
      `${w.config}: pve.token-file: token file '${w.tokenFile}' has the wrong format; expected 'USER@REALM!TOKENID=SECRET'`,
    );
    expect(c.out.join('\n')).not.toContain('is valid');
    expect(c.err.join('\n')).not.toContain(SECRET);
  });

  it('--check-config gives one verdict after every check: the token, the TLS files, the lock directory, the state file', async () => {
    const w = workspace();
    writeFileSync(w.tokenFile, SECRET); // a malformed token
    const file = join(w.dir, 'file');
    writeFileSync(file, '');
    writeFileSync(
      w.config,
      w.base
        .replace('  token-file:', '  tls: {ca-file: /nonexistent/ca.pem}\n  token-file:')
        .replace(`state: {file: ${w.statePath}}`, `state: {file: ${w.dir}}`)
        .replace(`lock: {dir: ${join(w.dir, 'lock')}}`, `lock: {dir: ${join(file, 'lock')}}`),
    );
    const c = captureIo();
    expect(await main(['--check-config', '--config', w.config], c.io)).toBe(EXIT_CONFIG);
    expect(c.out.join('\n')).not.toContain('is valid');
    expect(c.err[0]!.split('\n')).toEqual([
      'poise-manager: invalid configuration (3 problems):',
      `${w.config}: pve.token-file: token file '${w.tokenFile}' has the wrong format; expected 'USER@REALM!TOKENID=SECRET' (e.g. 'poise@pve!balancer=<uuid>')`,
      expect.stringMatching(
        new RegExp(
          `^${w.config}: lock\\.dir: the lock directory '${file}/lock' does not exist and cannot be created: '${file}' is not a directory; set 'lock\\.dir'`,
        ),
      ),
      `${w.config}: state.file: '${w.dir}' is a directory; expected the path of a file in it (e.g. '${w.dir}/state.json')`,
    ]);
    // with the token fixed, the CA file is read too, and named
    writeFileSync(w.tokenFile, TOKEN);
    const again = captureIo();
    expect(await main(['--check-config', '--config', w.config], again.io)).toBe(EXIT_CONFIG);
    expect(again.err[0]).toContain(`${w.config}: pve.tls.ca-file: cannot read '/nonexistent/ca.pem' (ENOENT)`);
    expect(again.err[0]).toContain('(3 problems)');
  });

  it('--check-config accepts a token file in the PVEAPIToken=USER@REALM!TOKENID=SECRET form', async () => {
    const w = workspace();
    writeFileSync(w.tokenFile, `PVEAPIToken=${TOKEN}\n`);
    const c = captureIo();
    expect(await main(['--check-config', '--config', w.config], c.io)).toBe(EXIT_OK);
    expect(c.out.join('\n')).toContain(`API token poise@pve!balancer from file '${w.tokenFile}'`);
  });

  it('a lock that cannot work (the default lock.dir off a cluster node) is a start-up error naming the key, also for --check-config', async () => {
    const w = workspace();
    const missing = join(w.dir, 'no-pmxcfs', 'priv', 'lock');
    writeFileSync(w.config, w.base.replace(`lock: {dir: ${join(w.dir, 'lock')}}`, `lock: {dir: ${missing}}`));
    for (const argv of [
      ['--config', w.config],
      ['--config', w.config, '--once'],
      ['--check-config', '--config', w.config],
    ]) {
      const c = captureIo();
      expect(await main(argv, c.io)).toBe(EXIT_CONFIG);
      expect(c.err.join('\n')).toContain(
        `${w.config}: lock.dir: the lock directory '${missing}' does not exist and cannot be created: '${join(w.dir, 'no-pmxcfs', 'priv')}' does not exist;`,
      );
      expect(c.err.join('\n')).toContain("or 'lock.enabled: false' to run a single instance without the lock");
      expect(c.logs).toEqual([]); // no round ran
    }
  });

  it('env pve against a cluster that cannot be reached: --once says why in the round line and exits 1', async () => {
    const w = workspace();
    writeFileSync(w.config, w.base.replace('https://node1:8006', 'https://127.0.0.1:1'));
    const c = captureIo();
    expect(await main(['--config', w.config, '--once'], c.io)).toBe(EXIT_FAILURE);
    const round = c.logs.map((l) => JSON.parse(l)).find((r) => r.event === 'round');
    expect(round).toMatchObject({ outcome: 'error', reason: 'api-error', kind: 'network' });
    expect(round.msg).toMatch(
      /^reading the cluster failed \(network, GET \/cluster\/\S+\): .*via https:\/\/127\.0\.0\.1:1: connection failed .*; nothing done this round$/,
    );
    expect(c.logs.join('\n')).not.toContain(SECRET);
  });

  it('--sim runs the bundled scenario to its end (exit 0); a directory that is no case is a config error (exit 78)', async () => {
    const c = captureIo();
    expect(await main(['--sim'], c.io)).toBe(EXIT_OK);
    const records = c.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.filter((r) => r.event === 'stop').map((r) => r.msg)).toEqual([
      'the scenario ended at 720 s of simulated time',
      'stopped after 37 rounds; motions this run: 3 requested, 3 succeeded, 0 failed',
    ]);
    const bad = captureIo();
    expect(await main(['--sim', join(ROOT, 'apps')], bad.io)).toBe(EXIT_CONFIG);
    expect(bad.err.join('\n')).toMatch(
      /sim\.case-dir: '.*apps' is not a simulator case directory \(no 'cmdlist' file in it\)/,
    );
  });

  it.each([
    [
      'a file',
      () => join(ROOT, 'package.json'),
      /^sim\.case-dir: '.*package\.json' is a file, not a simulator case directory \(a directory with 'cmdlist', 'hardware_status', …\)$/,
    ],
    [
      'a directory that does not exist',
      () => join(tmpdir(), 'no-such-case-dir'),
      /^sim\.case-dir: '.*no-such-case-dir' does not exist$/,
    ],
  ])('--sim with %s says what is wrong (exit 78)', async (_name, dir, message) => {
    for (const argv of [
      ['--sim', dir()],
      ['--check-config', '--sim', dir()],
    ]) {
      const c = captureIo();
      expect(await main(argv, c.io)).toBe(EXIT_CONFIG);
      expect(c.err.join('\n').split('\n')).toContainEqual(expect.stringMatching(message));
    }
  });

  it('--once answers what would be moved now and why (the hold counted as met): no request, no lock, the state file not written', async () => {
    const w = workspace('mode: act'); // the production config of a running daemon: act, hold 3
    const cluster = FakeCluster.create(unbalanced());
    const c = captureIo();
    expect(await main(['--config', w.config, '--once'], c.io, { createHost: () => fakeHost(cluster) })).toBe(EXIT_OK);
    const records = c.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const rounds = records.filter((r) => r.event === 'round');
    expect(rounds).toHaveLength(1);
    expect(rounds[0]).toMatchObject({ outcome: 'would-move' });
    expect(rounds[0]!.msg).toMatch(
      /^observe: would migrate vm:10\d from node1 to node[23] \(imbalance 100\.0% → \d+\.\d%\) \(--once: the hold of 3 rounds counted as met\)$/,
    );
    expect(records.find((r) => r.event === 'start' && String(r.msg).startsWith('--once'))?.msg).toBe(
      '--once: one round that says what would be moved now and why; nothing is moved, the state file is read and not written, the hold of 3 rounds counts as met',
    );
    expect(cluster.s.requests).toEqual([]);
    expect(existsSync(w.statePath)).toBe(false);
    expect(existsSync(join(w.dir, 'lock', 'poise-manager'))).toBe(false);
    expect(records.find((r) => r.event === 'metrics')?.msg).toBe('disabled (metrics.enabled: false)');
  });

  it('--once beside a daemon: reads its state (the motion in flight), leaves the file as it was; below the threshold it says so, without the hold note', async () => {
    const w = workspace('mode: act\npolicy: {ha-auto-rebalance-hold-duration: 1, ha-auto-rebalance-preset: reference}');
    const cluster = FakeCluster.create(unbalanced({ scripts: { 'vm:101': { rounds: 20 } } }));
    const host = () => ({ ...fakeHost(cluster), finished: () => true }); // one round per run
    expect(await main(['--config', w.config], captureIo().io, { createHost: host })).toBe(EXIT_OK); // the daemon: vm:101 requested
    cluster.step();
    const before = readFileSync(w.statePath, 'utf8');
    const c = captureIo();
    expect(await main(['--config', w.config, '--once'], c.io, { createHost: host })).toBe(EXIT_OK);
    expect(c.logs.map((l) => JSON.parse(l)).find((r) => r.event === 'round').msg).toMatch(
      /^motion in flight: migrate vm:101 from node1 to node2 \(moving, 10 s\)$/,
    );
    expect(readFileSync(w.statePath, 'utf8')).toBe(before);
    expect(cluster.s.requests).toHaveLength(1);

    const balanced = FakeCluster.create({
      nodes: [{ name: 'node1' }, { name: 'node2' }],
      guests: [
        { sid: 'vm:101', node: 'node1', cpu: 1, mem: GIB },
        { sid: 'vm:102', node: 'node2', cpu: 1, mem: GIB },
      ],
    });
    const below = captureIo();
    expect(
      await main(['--config', workspace().config, '--once'], below.io, { createHost: () => fakeHost(balanced) }),
    ).toBe(EXIT_OK);
    expect(below.logs.map((l) => JSON.parse(l)).find((r) => r.event === 'round').msg).toMatch(
      /^imbalance 0\.0% at or below threshold 30\.0%$/,
    );
  });

  it("'--once --mode act' is a usage error: --once moves nothing", async () => {
    const c = captureIo();
    expect(await main(['--config', 'x.yaml', '--once', '--mode', 'act'], c.io)).toBe(EXIT_USAGE);
    expect(c.err.join('\n')).toMatch(
      /^poise-manager: '--once' says what would be moved now and moves nothing: '--mode act' does not go with it/,
    );
  });
});

describe('secrets', () => {
  it('the API token appears in no log line, no metric and no status, even when an adapter error or a config echoes it', async () => {
    const w = workspace('mode: act\npolicy: {ha-auto-rebalance-hold-duration: 1}');
    const cluster = FakeCluster.create(unbalanced({ scripts: { 'vm:101': { outcome: 'fail' } } }));
    // a careless adapter that puts the Authorization header in its error
    let reads = 0;
    const read = cluster.readSnapshot.bind(cluster);
    cluster.readSnapshot = async () => {
      reads++;
      if (reads === 2) throw new PortError('GET /cluster/resources', 'auth', `401 for header PVEAPIToken=${TOKEN}`);
      return read();
    };
    const c = captureIo();
    let port = 0;
    let scraped = '';
    let status = '';
    let rounds = 0;
    const code = await main(['--config', w.config], c.io, {
      createHost: (config) => {
        const { token } = loadToken({ file: config.pve.tokenFile });
        const host = fakeHost(cluster, { redact: (text) => token.redact(text) });
        return {
          ...host,
          // a token-like value in a config reload, and the end of the run after a few rounds
          finished: () => {
            rounds++;
            if (rounds === 3) {
              writeFileSync(w.config, `${w.base}\nmode: act\npve: {urls: ['${TOKEN}']}\n`);
              c.handlers.get('SIGHUP')!();
            }
            return rounds >= 8;
          },
          clock: {
            now: () => host.clock.now(),
            sleep: async (seconds, signal) => {
              if (rounds === 6) {
                scraped = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
                status = await (await fetch(`http://127.0.0.1:${port}/status`)).text();
              }
              await host.clock.sleep(seconds, signal);
            },
          },
        };
      },
      onListening: (a) => (port = a.port),
    });
    expect(code).toBe(EXIT_OK);
    expect(scraped).toContain('poise_api_errors_total{endpoint="GET /cluster/resources",kind="auth"} 1');
    expect(c.logs.some((l) => l.includes('[redacted]'))).toBe(true); // the careless error was logged, redacted
    expect(c.logs.some((l) => l.includes('reload failed'))).toBe(true);
    for (const text of [...c.logs, ...c.out, ...c.err, scraped, status]) {
      expect(text).not.toContain(SECRET);
    }
    expect(c.logs.length).toBeGreaterThan(10);
  });
});

/** A poise-manager process over a fake cluster file (see testing/fake-daemon.ts). */
function spawnDaemon(clusterFile: string, args: string[], env: Record<string, string> = {}) {
  return spawnScript(FIXTURE, [clusterFile, ...args], env);
}

function clusterFile(dir: string, spec: FakeClusterSpec): string {
  const file = join(dir, 'cluster.json');
  writeFileSync(file, JSON.stringify(FakeCluster.create(spec).toJSON()));
  return file;
}

describe('signals (child process)', () => {
  it('the CLI entry point runs', async () => {
    const cli = spawnScript(CLI, ['--help']);
    expect(await cli.exited).toBe(0);
    expect(cli.lines.join('\n')).toMatch(/^usage: poise-manager/);
  });

  it('SIGTERM finishes the current round and exits 0', async () => {
    const w = workspace('mode: observe');
    const d = spawnDaemon(clusterFile(w.dir, unbalanced()), ['--config', w.config], { FAKE_READ_DELAY_MS: '1500' });
    await d.waitFor('the start-up', (r) => r.event === 'lock');
    d.child.kill('SIGTERM'); // the first round is reading the cluster now
    expect(await d.exited).toBe(0);
    const events = d.records().map((r) => `${String(r.event)}: ${String(r.msg)}`);
    const term = events.indexOf('stop: SIGTERM: finishing the current round, then exiting');
    expect(term).toBeGreaterThan(0);
    // the round ends (after saying what the first read showed), the lock is released
    // (the fake cluster reports no pressure: the recommended policy's pressure gate and its
    // contention objective each say so once)
    expect(events.slice(term + 1).map((e) => e.split(':')[0])).toEqual([
      'cluster',
      'policy',
      'policy',
      'round',
      'lock',
      'stop',
    ]);
    expect(events.at(-1)).toBe('stop: stopped after 1 round; observe mode: nothing moved');
  });

  it('SIGHUP reloads the config; a bad one is refused and the old one kept', async () => {
    const w = workspace('mode: observe');
    const cluster = clusterFile(w.dir, unbalanced());
    const d = spawnDaemon(cluster, ['--config', w.config], { FAKE_ROUND_MS: '100' });
    await d.waitFor('a round', (r) => r.event === 'round');
    writeFileSync(w.config, `${w.base}\nmode: act\npolicy: {ha-auto-rebalance-hold-duration: -1}\n`);
    d.child.kill('SIGHUP');
    const refused = await d.waitFor('the refusal', (r) => r.event === 'config');
    expect(refused.level).toBe('error');
    expect(refused.msg).toBe(
      `reload failed, keeping the running config:\n  ${w.config}: policy.ha-auto-rebalance-hold-duration: expected an integer ≥ 0, got -1`,
    );
    writeFileSync(w.config, `${w.base}\nmode: act\npolicy: {ha-auto-rebalance-hold-duration: 1}\n`);
    d.child.kill('SIGHUP');
    await d.waitFor('the reload', (r) => r.event === 'config' && String(r.msg).startsWith('reloaded'));
    await d.waitFor('a motion', (r) => r.event === 'round' && r.outcome === 'move');
    d.child.kill('SIGTERM');
    expect(await d.exited).toBe(0);
    const before = d.records().slice(
      0,
      d.records().findIndex((r) => String(r.msg).startsWith('reloaded')),
    );
    expect(before.filter((r) => r.outcome === 'move')).toEqual([]); // observe kept until the good reload
  });

  it('killed (SIGKILL) in the middle of a motion and restarted: the motion is followed, not re-issued', async () => {
    const w = workspace('mode: act\npolicy: {ha-auto-rebalance-hold-duration: 1}');
    const cluster = clusterFile(w.dir, unbalanced({ scripts: { 'vm:101': { rounds: 6 } } }));
    const first = spawnDaemon(cluster, ['--config', w.config], { FAKE_ROUND_MS: '100' });
    await first.waitFor(
      'vm:101 moving',
      (r) => r.event === 'round' && /^motion in flight: migrate vm:101 .*\(moving/.test(String(r.msg)),
    );
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(JSON.parse(readFileSync(w.statePath, 'utf8')).motion).toMatchObject({ sid: 'vm:101', phase: 'moving' });

    // the lock of the killed process is fresh, but its holder record names this node and a
    // process that is gone: the restarted one takes it over at once and follows the motion
    const second = spawnDaemon(cluster, ['--config', w.config], { FAKE_ROUND_MS: '20' });
    const loaded = await second.waitFor('the state', (r) => r.event === 'state');
    expect(loaded.msg).toMatch(/following the motion in flight from before: migrate vm:101 from node1 to node2/);
    const taken = await second.waitFor(
      'the lock',
      (r) => r.event === 'lock' && /^(took over|acquired)/.test(String(r.msg)),
    );
    expect(taken.msg).toMatch(
      new RegExp(
        `^took over the lock '.*' at once: its holder on this node \\(pid ${first.child.pid} on [^,]+, since .*\\) is gone; this instance is active$`,
      ),
    );
    const firstRound = await second.waitFor('the first round', (r) => r.event === 'round');
    expect(firstRound.outcome).not.toBe('standby');
    const outcome = await second.waitFor('the outcome', (r) => r.event === 'motion');
    expect(outcome.msg).toMatch(/^migrate vm:101 from node1 to node2 succeeded after \d+ s$/);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const requests = (JSON.parse(readFileSync(cluster, 'utf8')) as { requests: { sid: string }[] }).requests;
    expect(requests.filter((r) => r.sid === 'vm:101')).toHaveLength(1);
  });
});
