// `poise-manager drain --execute` as a child process against the fake API over HTTPS (pinned),
// killed with SIGKILL while its motions run, then run again with the same command: it follows
// the motions of the killed run, plans the rest from the cluster as it is, and every POST
// reaches the cluster once. The in-process version: drain-resume.test.ts.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeCluster } from '../../testing/fake-cluster';
import { type FakePve, startFakePve } from '../../testing/fake-pve';
import { certs, GIB, SECRET, spawnCli, TOKEN } from '../../testing/pve-support';

let fake: FakePve | undefined;
let ticker: NodeJS.Timeout | undefined;
afterEach(async () => {
  clearInterval(ticker);
  await fake?.close();
});

const SIDS = ['vm:101', 'vm:102', 'vm:103', 'vm:104'];

/** The JSON log lines of a run (stdout also carries the plan as text). */
function logRecords(lines: readonly string[]): Record<string, unknown>[] {
  return lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('drain killed (SIGKILL) mid-way and run again (child process)', () => {
  it('the rerun follows the motions in flight, re-plans the rest and sends no request twice', async () => {
    const c = await certs();
    const cluster = FakeCluster.create({
      nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }],
      guests: SIDS.map((sid) => ({ sid, node: 'node1', cpu: 1, mem: 4 * GIB })),
      scripts: Object.fromEntries(SIDS.map((sid) => [sid, { rounds: 12 }])),
      startTime: Math.floor(Date.now() / 1000),
      roundSeconds: 1,
    });
    fake = await startFakePve({ cluster, tls: { cert: c.certPem, key: c.keyPem }, tokens: [TOKEN] });
    ticker = setInterval(() => cluster.step(), 250);
    const dir = mkdtempSync(join(tmpdir(), 'poise-drain-kill-'));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    chmodSync(tokenFile, 0o600);
    const config = join(dir, 'poise-manager.yaml');
    writeFileSync(
      config,
      [
        'env: pve',
        'pve:',
        `  urls: ['${fake.url}']`,
        `  token-file: ${tokenFile}`,
        `  tls: {fingerprint: '${c.fingerprint256}'}`,
        `state: {file: ${join(dir, 'state.json')}}`,
        'metrics: {enabled: false}',
        'lock: {enabled: false}',
        'log: {format: json}',
      ].join('\n'),
    );
    const argv = ['drain', 'node1', '--config', config, '--execute', '--parallel', '2'];

    const first = spawnCli(argv);
    await until('two motions requested', () => fake!.posts().length >= 2);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(fake.posts()).toHaveLength(2);

    const second = spawnCli(argv);
    expect(await second.exited).toBe(0);
    const records = logRecords(second.lines);
    expect(records.find((r) => String(r.msg).startsWith('resuming:'))?.msg).toMatch(
      /^resuming: 2 motions of an interrupted drain in flight/,
    );
    // the closing line counts the whole drain: the 2 motions of the killed run and the 2 of this one
    expect(records.at(-1)).toMatchObject({
      event: 'drain',
      result: 'done',
      motions: 4,
      msg: 'drain done: 4 motions (2 in this run, 2 before it was resumed)',
    });
    const posts = fake.posts().map((p) => p.path);
    expect(posts.sort()).toEqual(SIDS.map((sid) => `/cluster/ha/resources/${sid}/migrate`));
    expect(cluster.s.guests.filter((g) => g.node === 'node1')).toEqual([]);
    for (const line of [...first.lines, ...second.lines]) expect(line).not.toContain(SECRET);
  }, 180_000);
});
