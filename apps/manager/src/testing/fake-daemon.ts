// A poise-manager process against a fake cluster kept in a JSON file, so that a test can signal,
// kill and restart it: `fake-daemon.ts <cluster.json> <poise-manager arguments...>`.
// The whole CLI runs (config, token, state, lock, metrics, signals); only the host is the fake.
// Each round waits FAKE_ROUND_MS of real time; FAKE_READ_DELAY_MS slows each snapshot read.
import { readFileSync } from 'node:fs';
import { loadToken } from '../config/secret';
import { FakeCluster, type FakeClusterState, fakeHost } from './fake-cluster';
import { localLockFs } from '../runtime/lock';
import { processIo } from '../cli/io';
import { main } from '../cli/main';
import type { MotionRequest } from '../cluster/port';
import { writeAtomically } from '../runtime/state';

const [clusterFile, ...args] = process.argv.slice(2);
if (!clusterFile) throw new Error('usage: fake-daemon.ts <cluster.json> <args...>');
const cluster = FakeCluster.fromJSON(JSON.parse(readFileSync(clusterFile, 'utf8')) as FakeClusterState);
const persist = () => writeAtomically(clusterFile, JSON.stringify(cluster.toJSON()));
const roundMs = Number(process.env.FAKE_ROUND_MS ?? '50');
const readDelayMs = Number(process.env.FAKE_READ_DELAY_MS ?? '0');

const request = cluster.requestMotion.bind(cluster);
cluster.requestMotion = async (req: MotionRequest) => {
  try {
    return await request(req);
  } finally {
    persist();
  }
};
const read = cluster.readSnapshot.bind(cluster);
cluster.readSnapshot = async () => {
  if (readDelayMs > 0) await new Promise((r) => setTimeout(r, readDelayMs));
  return read();
};

process.exitCode = await main(args, processIo, {
  lockFs: localLockFs,
  createHost: (config) => {
    const token =
      config.env === 'pve' ? loadToken({ file: config.pve.tokenFile, env: config.pve.tokenEnv }).token : undefined;
    const host = fakeHost(cluster, {
      afterStep: persist,
      ...(token ? { redact: (text: string) => token.redact(text) } : {}),
    });
    const clock = host.clock;
    return {
      ...host,
      clock: {
        now: () => clock.now(),
        sleep: async (seconds, signal) => {
          await new Promise<void>((resolve) => {
            const done = () => {
              clearTimeout(timer);
              signal.removeEventListener('abort', done);
              resolve();
            };
            const timer = setTimeout(done, roundMs);
            signal.addEventListener('abort', done, { once: true });
          });
          await clock.sleep(seconds, signal);
        },
      },
    };
  },
});
