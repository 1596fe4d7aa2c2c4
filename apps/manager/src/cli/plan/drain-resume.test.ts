import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BalancerPort, MotionRequest } from '../../cluster/port';
import { FakeCluster, fakeHost } from '../../testing/fake-cluster';
import { captureIo, GIB } from '../../testing/support';
import { EXIT_FAILURE, EXIT_OK, main } from '../main';

// A drain that dies mid-way (in this process: the request that crashes it was applied, as when
// the process is killed right after sending it) and is run again with the same config: the
// lanes' state files bring the motions in flight back, they are followed, never requested
// again, and the rest is planned from the cluster as it is. The same with a real process and
// SIGKILL: drain-resume.slow.test.ts.

const SIDS = ['vm:101', 'vm:102', 'vm:103', 'vm:104', 'vm:105', 'vm:106', 'vm:107', 'vm:108'];

function setup() {
  const cluster = FakeCluster.create({
    nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }],
    guests: SIDS.map((sid) => ({ sid, node: 'node1', cpu: 1, mem: 4 * GIB })),
    // each motion takes a few HA rounds, so several overlap
    scripts: Object.fromEntries(SIDS.map((sid) => [sid, { rounds: 3 }])),
  });
  const dir = mkdtempSync(join(tmpdir(), 'poise-drain-resume-'));
  const config = join(dir, 'poise-manager.yaml');
  writeFileSync(
    config,
    [
      'env: pve',
      'pve: {urls: ["https://127.0.0.1:8006"], token-env: POISE_TOKEN}',
      `state: {file: ${join(dir, 'state.json')}}`,
      'lock: {enabled: false}',
      'log: {format: json}',
    ].join('\n'),
  );
  return { cluster, dir, config };
}

/** The fake cluster's port, except that the `n`-th motion request throws after it was applied. */
function crashingAfter(port: BalancerPort, n: number): BalancerPort {
  let sent = 0;
  return new Proxy(port, {
    get(target, key) {
      if (key === 'requestMotion')
        return async (request: MotionRequest) => {
          const reply = await target.requestMotion(request);
          if (++sent === n) throw new Error('killed right after the request left');
          return reply;
        };
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('a drain killed mid-way and run again', () => {
  it('follows the motions in flight, requests none twice, and drains the rest', async () => {
    const s = setup();
    const first = captureIo();
    const code1 = await main(['drain', 'node1', '--config', s.config, '--execute', '--parallel', '3'], first.io, {
      createHost: () => {
        const host = fakeHost(s.cluster);
        return { ...host, port: crashingAfter(host.port, 3) };
      },
    });
    expect(code1).toBe(EXIT_FAILURE);
    expect(first.err.join('\n')).toContain('killed right after the request left');
    expect(s.cluster.s.requests.map((q) => q.sid)).toHaveLength(3);
    // the lanes' files hold the three motions (the third written before its request)
    const laneDir = join(s.dir, 'drain-node1');
    const lanes = readdirSync(laneDir)
      .map(
        (f) => JSON.parse(readFileSync(join(laneDir, f), 'utf8')) as { motion: { sid: string; phase: string } | null },
      )
      .filter((l) => l.motion !== null);
    expect(lanes).toHaveLength(3);
    expect(lanes.map((l) => l.motion!.phase).sort()).toEqual(['queued', 'queued', 'requesting']);

    // run again with fewer motions in flight: the third lane's motion is followed all the same
    const second = captureIo();
    const code2 = await main(['drain', 'node1', '--config', s.config, '--execute', '--parallel', '1'], second.io, {
      createHost: () => fakeHost(s.cluster),
    });
    const records = second.logs.map((l) => JSON.parse(l) as { event: string; msg: string; result?: string });
    expect(records.find((r) => r.msg.startsWith('resuming:'))?.msg).toMatch(
      /^resuming: 3 motions of an interrupted drain in flight \(/,
    );
    expect(code2).toBe(EXIT_OK);
    // the closing line counts the whole drain: the 3 motions followed after the resume and the 5 of this run
    expect(records.at(-1)).toMatchObject({
      event: 'drain',
      result: 'done',
      motions: 8,
      msg: 'drain done: 8 motions (5 in this run, 3 before it was resumed)',
    });
    // and so does the progress record the status page reads
    expect(JSON.parse(readFileSync(join(s.dir, 'drain-progress.json'), 'utf8'))).toMatchObject({
      state: 'done',
      total: 8,
      succeeded: 8,
      failed: 0,
      inFlight: [],
    });
    // every guest left node1, each requested exactly once
    expect(s.cluster.s.guests.filter((g) => g.node === 'node1')).toEqual([]);
    const counts = new Map<string, number>();
    for (const q of s.cluster.s.requests) counts.set(q.sid, (counts.get(q.sid) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(SIDS);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
    // the drain ended: its state is gone
    expect(existsSync(laneDir)).toBe(false);
  }, 60_000);
});
