// The daemon killed (SIGKILL) in the middle of a motion and restarted, as a child process running
// the real CLI against the fake API over HTTPS (pinned): the state file brings the motion back,
// it is followed to its outcome, and its request reaches the cluster exactly once.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeCluster } from '../testing/fake-cluster';
import { type FakePve, startFakePve } from '../testing/fake-pve';
import { certs, SECRET, spawnCli, TOKEN, unbalanced } from '../testing/pve-support';

let fake: FakePve | undefined;
let ticker: NodeJS.Timeout | undefined;
afterEach(async () => {
  clearInterval(ticker);
  await fake?.close();
});

/** A fake cluster on the real clock, one HA round every 250 ms, served over HTTPS; a config for the CLI. */
async function cluster(rounds: number) {
  const c = await certs();
  const cl = FakeCluster.create({
    ...unbalanced({ scripts: { 'vm:101': { rounds } } }),
    startTime: Math.floor(Date.now() / 1000),
    roundSeconds: 1,
  });
  fake = await startFakePve({ cluster: cl, tls: { cert: c.certPem, key: c.keyPem }, tokens: [TOKEN] });
  ticker = setInterval(() => cl.step(), 250);
  const dir = mkdtempSync(join(tmpdir(), 'poise-restart-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  chmodSync(tokenFile, 0o600);
  const config = join(dir, 'poise-manager.yaml');
  writeFileSync(
    config,
    [
      'env: pve',
      'mode: act',
      'interval: 1',
      'pve:',
      `  urls: ['${fake.url}']`,
      `  token-file: ${tokenFile}`,
      `  tls: {fingerprint: '${c.fingerprint256}'}`,
      'policy: {ha-auto-rebalance-hold-duration: 1}',
      `state: {file: ${join(dir, 'state.json')}}`,
      'metrics: {enabled: false}',
      'lock: {enabled: false}',
      'log: {format: json}',
    ].join('\n'),
  );
  return {
    config,
    statePath: join(dir, 'state.json'),
    vm101Posts: () => fake!.posts().filter((p) => p.path.includes('vm:101')).length,
  };
}

describe('killed in the middle of a motion and restarted (child process)', () => {
  it('while the motion runs: the restarted daemon follows it and never requests it again', async () => {
    const w = await cluster(20);
    const first = spawnCli(['--config', w.config]);
    await first.waitFor(
      'vm:101 moving',
      (r) => r.event === 'round' && /^motion in flight: migrate vm:101 .*\(moving/.test(String(r.msg)),
    );
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(JSON.parse(readFileSync(w.statePath, 'utf8')).motion).toMatchObject({ sid: 'vm:101', phase: 'moving' });

    const second = spawnCli(['--config', w.config]);
    const loaded = await second.waitFor('the state', (r) => r.event === 'state');
    expect(loaded.msg).toMatch(
      /following the motion in flight from before: migrate vm:101 from node1 to node2 \(issued at .*, moving\)$/,
    );
    const outcome = await second.waitFor('the outcome', (r) => r.event === 'motion');
    expect(outcome.msg).toMatch(/^migrate vm:101 from node1 to node2 succeeded after \d+ s$/);
    await second.waitFor('the next motion', (r) => r.event === 'round' && r.outcome === 'move');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(w.vm101Posts()).toBe(1);
    for (const line of [...first.lines, ...second.lines]) expect(line).not.toContain(SECRET);
  });

  it('while its request is on the wire: the motion written ahead is followed, the request is not sent again', async () => {
    const w = await cluster(4);
    fake!.postDelayMs = 3000; // applied at once, answered 3 s later
    const first = spawnCli(['--config', w.config]);
    const until = Date.now() + 60_000;
    while (w.vm101Posts() === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(JSON.parse(readFileSync(w.statePath, 'utf8')).motion).toMatchObject({ sid: 'vm:101', phase: 'requesting' });
    fake!.postDelayMs = 0;

    const second = spawnCli(['--config', w.config]);
    const outcome = await second.waitFor('the outcome', (r) => r.event === 'motion');
    expect(outcome.msg).toMatch(/^migrate vm:101 from node1 to node2 succeeded after \d+ s$/);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(w.vm101Posts()).toBe(1);
  });
});
