import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeCluster, type FakeClusterSpec, fakeHost } from '../../testing/fake-cluster';
import { captureIo, GIB } from '../../testing/support';
import { EXIT_FAILURE, EXIT_OK, main } from '../main';

// What a drain moves, end to end on a scripted cluster through the CLI: only the drained node's
// guests, another one only to make room (named with why); a guest the daemon's migratability
// check refuses stays and blocks its node's drain; an offline node (0 cores and memory, as PVE
// reports it) is a node that takes nothing in plan, drain, place and what-if.

function configFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'poise-drain-minimal-'));
  const file = join(dir, 'poise-manager.yaml');
  writeFileSync(
    file,
    [
      'env: pve',
      'pve: {urls: ["https://127.0.0.1:8006"], token-env: POISE_TOKEN}',
      `state: {file: ${join(dir, 'state.json')}}`,
      'lock: {enabled: false}',
      'log: {format: json}',
    ].join('\n'),
  );
  return file;
}

async function run(cluster: FakeCluster, argv: string[]) {
  const c = captureIo();
  const code = await main([...argv, '--config', configFile()], c.io, { createHost: () => fakeHost(cluster) });
  return { code, ...c, text: c.out.join('\n') };
}

const node = (name: string, memGib = 16) => ({ name, maxcpu: 16, maxmem: memGib * GIB, baseCpu: 0, baseMem: 0 });
const guest = (sid: string, on: string, memGib: number, extra: Partial<FakeClusterSpec['guests'][number]> = {}) => ({
  sid,
  node: on,
  cpu: 1,
  mem: memGib * GIB,
  maxmem: memGib * GIB,
  ...extra,
});

describe('drain --execute moves only what it must', () => {
  it("the drained node's guests only: as many motions as it holds, the rest stay", async () => {
    // node2 holds much more than node3 and node4: a rebalancing would move some; the drain does not
    const cluster = FakeCluster.create({
      nodes: [node('node1'), node('node2'), node('node3'), node('node4')],
      guests: [
        guest('vm:101', 'node1', 2),
        guest('vm:102', 'node1', 1),
        guest('vm:103', 'node1', 1),
        guest('vm:201', 'node2', 6),
        guest('vm:202', 'node2', 6),
      ],
    });
    const r = await run(cluster, ['drain', 'node1', '--execute']);
    expect(r.code).toBe(EXIT_OK);
    expect(r.text).toContain('drain: 3 guests leave node1; no other guest moves; 3 motions');
    expect(cluster.s.requests.map((q) => q.sid).sort()).toEqual(['vm:101', 'vm:102', 'vm:103']);
    expect(cluster.s.guests.filter((g) => g.node === 'node1')).toEqual([]);
    expect(cluster.s.guests.filter((g) => g.node === 'node2').map((g) => g.sid)).toEqual(['vm:201', 'vm:202']);
    expect(r.logs.at(-1)).toContain('drain done: 3 motions');
  }, 30_000);

  it('one other guest moves first where that is the only way to make room, named with why', async () => {
    // vm:101 needs 8 GiB: node2 has 3 free, node3 6; vm:201 (5 GiB) node2 → node3 makes room
    const cluster = FakeCluster.create({
      nodes: [node('node1'), node('node2'), node('node3')],
      guests: [
        guest('vm:101', 'node1', 8),
        guest('vm:201', 'node2', 5),
        guest('vm:202', 'node2', 8),
        guest('vm:301', 'node3', 10),
      ],
    });
    const r = await run(cluster, ['drain', 'node1', '--execute']);
    expect(r.code).toBe(EXIT_OK);
    expect(r.text).toContain(
      'drain: 1 guest leaves node1; 1 other guest moves to make room (notes below say why); 2 motions',
    );
    expect(r.text).toContain(
      'note: vm:201 node2 → node3 to make room for vm:101 (needs 8.0 GiB, node2 has 3.0 GiB free)',
    );
    expect(cluster.s.requests.map((q) => `${q.sid}>${q.target}`)).toEqual(['vm:201>node3', 'vm:101>node2']);
    expect(r.logs.at(-1)).toContain('drain done: 2 motions');
  }, 30_000);

  it('when no room can be made it stops with the reason and requests nothing', async () => {
    const cluster = FakeCluster.create({
      nodes: [node('node1'), node('node2'), node('node3')],
      guests: [guest('vm:101', 'node1', 12), guest('vm:201', 'node2', 12), guest('vm:301', 'node3', 12)],
    });
    const r = await run(cluster, ['drain', 'node1', '--execute']);
    expect(r.code).toBe(EXIT_FAILURE);
    expect(r.err.join('\n')).toContain(
      'poise-manager: node1 cannot be drained: vm:101 (12.0 GiB) fits on no node it may use, not even after moving up to 4 other guests off one of them (the most room: node2 with 4.0 GiB free)',
    );
    expect(cluster.s.requests).toEqual([]);
  }, 30_000);
});

describe('what the daemon calls not migratable holds for plans and drains', () => {
  const spec = (): FakeClusterSpec => ({
    nodes: [node('node1', 64), node('node2', 64), node('node3', 64)],
    guests: [
      guest('vm:101', 'node1', 2),
      guest('vm:105', 'node1', 2, { config: { ide2: 'local:iso/d.iso,media=cdrom', scsi0: 'ceph:vm-105-disk-0' } }),
      guest('vm:201', 'node2', 2),
    ],
  });

  it('plan names the guest with a local cd-rom as staying and never moves it', async () => {
    const cluster = FakeCluster.create(spec());
    const r = await run(cluster, ['plan']);
    expect(r.code).toBe(EXIT_OK);
    expect(r.text).toContain(
      "note: vm:105 stays on node1: it cannot be migrated: local cd-rom image 'local:iso/d.iso' (ide2)",
    );
    expect(r.text).not.toMatch(/vm:105 node1 →/);
  });

  it('a drain of its node stops with that reason and requests nothing (plan --drain says the same)', async () => {
    const cluster = FakeCluster.create(spec());
    const reason = "node1 cannot be drained: vm:105 cannot be migrated: local cd-rom image 'local:iso/d.iso' (ide2)";
    const plan = await run(cluster, ['plan', '--drain', 'node1']);
    expect(plan.code).toBe(EXIT_OK);
    expect(plan.text).toContain(`plan (drain of node1): infeasible\n  - ${reason}`);
    const r = await run(cluster, ['drain', 'node1', '--execute']);
    expect(r.code).toBe(EXIT_FAILURE);
    expect(r.err.join('\n')).toContain(reason);
    expect(cluster.s.requests).toEqual([]);
    // a drain of another node plans around it
    const other = await run(cluster, ['drain', 'node2']);
    expect(other.code).toBe(EXIT_OK);
    expect(other.text).toContain('drain: 1 guest leaves node2; no other guest moves; 1 motion');
  });
});

describe('an offline node (0 cores and memory, as PVE reports it) takes nothing', () => {
  const cluster = () =>
    FakeCluster.create({
      nodes: [node('node1'), node('node2'), node('node3'), { ...node('node4'), maxcpu: 0, maxmem: 0, online: false }],
      guests: [guest('vm:101', 'node1', 4), guest('vm:102', 'node1', 4), guest('vm:201', 'node2', 2)],
    });

  it('plan', async () => {
    const r = await run(cluster(), ['plan']);
    expect(r.code).toBe(EXIT_OK);
    expect(r.text).toContain('plan (rebalancing): feasible');
    expect(r.text).not.toMatch(/→ node4/);
    expect(r.text).not.toMatch(/^ {2}node4 /m);
  });

  it('drain (observe): planned around it; with --execute it waits for HA as the daemon does', async () => {
    const r = await run(cluster(), ['drain', 'node1']);
    expect(r.code).toBe(EXIT_OK);
    expect(r.text).toContain('drain: 2 guests leave node1; no other guest moves; 2 motions');
    expect(r.text).not.toMatch(/→ node4/);
    const c = cluster();
    const x = await run(c, ['drain', 'node1', '--execute']);
    expect(x.code).toBe(EXIT_FAILURE);
    expect(x.logs.at(-1)).toContain("the cluster is not settled: node 'node4'");
    expect(c.s.requests).toEqual([]);
  }, 30_000);

  it('place', async () => {
    const r = await run(cluster(), ['place', '--guest', 'cpu=1,mem=1G', '--count', '3']);
    expect(r.code).toBe(EXIT_OK);
    expect(r.text).toContain('placed 3 of 3 new guests:');
    expect(r.text).not.toMatch(/→ node4/);
  });

  it('what-if', async () => {
    const r = await run(cluster(), ['plan', '--what-if', 'node-failure']);
    expect(r.code).toBe(EXIT_OK);
    expect(r.text).toMatch(/^node1: recovered/m);
    expect(r.text).not.toMatch(/^node4:/m);
  });
});
