// A fake Proxmox VE cluster over HTTPS on 127.0.0.1 for trying poise-manager by hand (and for
// the README's sample output): `tsx --conditions=poise-source fake-pve-cluster.ts <dir>`
// writes <dir>/token and <dir>/poise-manager.yaml (env pve, pinned fingerprint) and serves the
// cluster of four HA VMs on node1 until interrupted; one HA round every 2 s. Then run
// `pnpm poise-manager --config <dir>/poise-manager.yaml` in another terminal.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FakeCluster } from './fake-cluster';
import { startFakePve } from './fake-pve';
import { certs, TOKEN, unbalanced } from './pve-support';

const dir = resolve(process.argv[2] ?? 'poise-fake-pve');
mkdirSync(dir, { recursive: true });
const c = await certs();
const spec = unbalanced({
  startTime: Math.floor(Date.now() / 1000),
  roundSeconds: 2,
  scripts: { 'vm:101': { rounds: 3 } },
});
spec.nodes[0]!.pressureCpu = 14.2;
spec.nodes[1]!.pressureCpu = 0.4;
spec.nodes[2]!.pressureCpu = 0.3;
const cluster = FakeCluster.create(spec);
const fake = await startFakePve({ cluster, tls: { cert: c.certPem, key: c.keyPem }, tokens: [TOKEN] });
setInterval(() => cluster.step(), 2000);
writeFileSync(join(dir, 'token'), `${TOKEN}\n`);
chmodSync(join(dir, 'token'), 0o600);
writeFileSync(
  join(dir, 'poise-manager.yaml'),
  [
    'env: pve',
    'mode: act',
    'interval: 5',
    'pve:',
    `  urls: ['${fake.url}']`,
    '  token-file: token',
    `  tls: {fingerprint: '${c.fingerprint256}'}`,
    'policy:',
    '  ha-auto-rebalance-hold-duration: 2',
    'state: {file: state.json}',
    'lock: {dir: lock}',
    'metrics: {listen: "127.0.0.1:9879"}',
    '',
  ].join('\n'),
);
console.log(`fake cluster on ${fake.url}; config in ${join(dir, 'poise-manager.yaml')}`);
