// The listener of a real poise-manager process (the whole CLI, the fake cluster as its host):
// an uncaught exception would end the process, so here "still answers" means the process lives.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeCluster } from '../testing/fake-cluster';
import { rawRequest } from '../testing/listening-daemon';
import { spawnScript, TOKEN, unbalanced } from '../testing/pve-support';

const FAKE_DAEMON = join(dirname(fileURLToPath(import.meta.url)), '..', 'testing', 'fake-daemon.ts');

describe('a poise-manager process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'poise-listener-process-'));
  const statePath = join(dir, 'state.json');
  let proc: ReturnType<typeof spawnScript>;
  let port = 0;
  let motion = '';

  beforeAll(async () => {
    // vm:101 moves for a very long time: the motion stays in flight while the listener is knocked on
    const cluster = FakeCluster.create(unbalanced({ scripts: { 'vm:101': { rounds: 100_000 } } }));
    writeFileSync(join(dir, 'cluster.json'), JSON.stringify(cluster.toJSON()));
    writeFileSync(
      join(dir, 'poise-manager.yaml'),
      [
        'env: pve',
        'mode: act',
        "pve: {urls: ['https://node1:8006'], token-env: POISE_TEST_TOKEN}",
        `state: {file: ${statePath}}`,
        "metrics: {listen: '127.0.0.1:0'}",
        'lock: {enabled: false}',
        'log: {format: json}',
        'policy: {ha-auto-rebalance-preset: reference, ha-auto-rebalance-hold-duration: 1}',
      ].join('\n'),
    );
    proc = spawnScript(FAKE_DAEMON, [join(dir, 'cluster.json'), '--config', join(dir, 'poise-manager.yaml')], {
      POISE_TEST_TOKEN: TOKEN,
      FAKE_ROUND_MS: '300',
    });
    const listening = await proc.waitFor('the listener', (r) => String(r.msg).startsWith('status page on '));
    port = Number(/:(\d+)\//.exec(String(listening.msg))![1]);
    await proc.waitFor('the motion moving', () => {
      try {
        return (
          (JSON.parse(readFileSync(statePath, 'utf8')) as { motion?: { phase?: string } }).motion?.phase === 'moving'
        );
      } catch {
        return false;
      }
    });
    motion = JSON.stringify((JSON.parse(readFileSync(statePath, 'utf8')) as { motion: unknown }).motion);
  });
  afterAll(async () => {
    proc.child.kill('SIGTERM');
    await proc.exited;
  });

  const stillAnswers = async () => {
    expect(proc.child.exitCode, proc.stderr()).toBeNull();
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    expect(JSON.stringify((JSON.parse(readFileSync(statePath, 'utf8')) as { motion: unknown }).motion)).toBe(motion);
  };

  it.each([['//'], ['///'], ['/%']])('lives through GET %s (a 404)', async (path) => {
    const reply = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(reply.status).toBe(404);
    await stillAnswers();
  });

  it('lives through arbitrary request lines and headers, the motion in flight untouched', async () => {
    const target = fc.oneof(
      fc.constantFrom('//', '///', '/%', '/%zz', '*', 'http://x/', '/metrics', '/api/history?after=%zz'),
      fc.string().map((s) => `/${s}`),
    );
    const header = fc.tuple(fc.constantFrom('Host', 'Content-Length', 'Transfer-Encoding', 'X'), fc.string());
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'HEAD', 'POST', 'X'),
        target,
        fc.array(header, { maxLength: 3 }),
        async (m, t, hs) => {
          await rawRequest(
            port,
            `${m} ${t} HTTP/1.1\r\nHost: 127.0.0.1\r\n${hs.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`,
          );
          await stillAnswers();
        },
      ),
      { numRuns: 40 },
    );
  });
});
