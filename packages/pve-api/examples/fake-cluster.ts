// Runs offline: a fake pveproxy on 127.0.0.1 with a certificate made on the spot, and a client
// that pins that certificate's fingerprint.
//   pnpm tsx --conditions=poise-source packages/pve-api/examples/fake-cluster.ts
import { ApiToken, PveClient } from '@poise/pve-api';
import { generateCertificates, startFakePveServer } from '@poise/pve-api/server';

const TOKEN = 'poise@pve!balancer=0b6bd1c4-7a3f-4c5e-9d8e-2f1a3b4c5d6e';
const certs = await generateCertificates();
const server = await startFakePveServer({
  tls: { cert: certs.certPem, key: certs.keyPem },
  tokens: [TOKEN],
  routes: {
    'GET /version': { data: { version: '9.2.2', release: '9.2', repoid: 'b9984c6d90a4bd80' } },
    'GET /cluster/resources': {
      data: [
        {
          id: 'node/pve1',
          type: 'node',
          node: 'pve1',
          status: 'online',
          cpu: 0.12,
          maxcpu: 16,
          mem: 8589934592,
          maxmem: 34359738368,
        },
        {
          id: 'qemu/100',
          type: 'qemu',
          vmid: 100,
          node: 'pve1',
          status: 'running',
          cpu: '0.5',
          maxcpu: 2,
          mem: 1073741824,
          maxmem: 2147483648,
          memhost: 1300000000,
          template: 0,
          hastate: 'started',
        },
      ],
    },
    'GET /cluster/options': { data: { crs: 'ha=dynamic,ha-auto-rebalance=1' } },
  },
});

const client = new PveClient({
  baseUrls: [server.url],
  token: ApiToken.parse(TOKEN),
  tls: { fingerprints: [certs.fingerprint256] },
});
console.log('tls:', client.security.mode, client.security.insecure ? 'INSECURE' : 'verified');
console.log('version:', (await client.version()).version);
for (const r of await client.clusterResources()) {
  if (r.kind === 'node') console.log(`node ${r.node}: cpu ${r.cpuUsage}, mem ${r.memBytes}/${r.maxMemBytes} bytes`);
  if (r.kind === 'guest')
    console.log(
      `${r.sid} on ${r.node}: cpu ${r.cpuUsage} of ${r.maxCpus} vCPUs, memhost ${r.memHostBytes} bytes, HA ${r.haState}`,
    );
}
const { crs } = await client.clusterOptions();
console.log('built-in balancer on:', crs.haAutoRebalance === true);
console.log('client:', String(client));
await client.close();
await server.close();
