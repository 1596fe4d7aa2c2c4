// `poise-manager drain` against the fake Proxmox VE API over real HTTPS on 127.0.0.1 (pinned
// fingerprint), through the real host (client, TLS, adapter): the HA migrate endpoint, the
// guest migrate endpoint for a guest outside HA, and the active/standby lock.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPveHost } from '../../cluster/host';
import { FakeCluster } from '../../testing/fake-cluster';
import { ActiveLock, localLockFs } from '../../runtime/lock';
import { main } from '../main';
import { type FakePve, startFakePve } from '../../testing/fake-pve';
import { certs, GIB, SECRET, TOKEN, unbalanced } from '../../testing/pve-support';
import { captureIo } from '../../testing/support';

const open: FakePve[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
}, 60_000);

async function setup(lockEnabled = false) {
  const c = await certs();
  const cluster = FakeCluster.create(
    unbalanced({ guests: [...unbalanced().guests, { sid: 'vm:201', node: 'node1', ha: false, cpu: 1, mem: 2 * GIB }] }),
  );
  const fake = await startFakePve({ cluster, tls: { cert: c.certPem, key: c.keyPem }, tokens: [TOKEN] });
  open.push(fake);
  const dir = mkdtempSync(join(tmpdir(), 'poise-drain-pve-'));
  const config = join(dir, 'poise-manager.yaml');
  writeFileSync(
    config,
    [
      'env: pve',
      `pve: {urls: ["${fake.url}"], token-env: POISE_TOKEN, timeout: 1, tls: {fingerprint: "${c.fingerprint256}"}}`,
      `state: {file: ${join(dir, 'state.json')}}`,
      `lock: {enabled: ${lockEnabled}, dir: ${join(dir, 'lock')}}`,
      'log: {format: json}',
    ].join('\n'),
  );
  const io = captureIo();
  const createHost = (cfg: Parameters<typeof createPveHost>[0]) =>
    createPveHost(cfg, {
      env: { POISE_TOKEN: TOKEN },
      clock: {
        now: () => cluster.time,
        sleep: async (seconds, signal) => (signal.aborted ? undefined : cluster.step(seconds)),
      },
      backoffBaseMs: 1,
    });
  return { cluster, fake, dir, config, io, createHost };
}

describe('drain through the Proxmox VE API', () => {
  it('observe mode requests nothing', async () => {
    const s = await setup();
    const code = await main(['drain', 'node1', '--config', s.config], s.io.io, { createHost: s.createHost });
    expect(code).toBe(0);
    expect(s.fake.posts()).toEqual([]);
    expect(s.io.logs.filter((l) => l.includes('observe: would'))).toHaveLength(5);
  }, 60_000);

  it('--execute empties node1: HA resources through the HA endpoint, the other guest by a migration task', async () => {
    const s = await setup();
    const code = await main(['drain', 'node1', '--config', s.config, '--execute'], s.io.io, {
      createHost: s.createHost,
    });
    expect(code).toBe(0);
    expect(s.cluster.s.guests.filter((g) => g.node === 'node1').map((g) => g.sid)).toEqual([]);
    expect(
      s.fake
        .posts()
        .map((p) => p.path)
        .sort(),
    ).toEqual([
      '/cluster/ha/resources/vm:101/migrate',
      '/cluster/ha/resources/vm:102/migrate',
      '/cluster/ha/resources/vm:103/migrate',
      '/cluster/ha/resources/vm:104/migrate',
      '/nodes/node1/qemu/201/migrate',
    ]);
    const last = JSON.parse(s.io.logs.at(-1)!) as Record<string, unknown>;
    expect(last).toMatchObject({ event: 'drain', result: 'done', motions: 5 });
    for (const line of [...s.io.logs, ...s.io.out, ...s.io.err]) expect(line).not.toContain(SECRET);
  }, 60_000);

  it('does not start while another instance holds the lock', async () => {
    const s = await setup(true);
    // a daemon on another node holds it
    const other = new ActiveLock(join(s.dir, 'lock'), 'poise-manager', () => s.cluster.time, localLockFs, {
      self: { node: 'node9', bootId: 'boot-9', pid: 4242, startTime: '1' },
      running: () => true,
    });
    expect(other.acquire().held).toBe(true);
    const code = await main(['drain', 'node1', '--config', s.config, '--execute'], s.io.io, {
      createHost: s.createHost,
    });
    expect(code).toBe(1);
    expect(JSON.parse(s.io.logs.at(-1)!).msg).toMatch(
      /^drain stopped after 0 of 5 motions: standby: the lock .* \(another poise-manager is active: stop it, or let it finish\)$/,
    );
    expect(s.fake.posts()).toEqual([]);
  }, 60_000);
});
