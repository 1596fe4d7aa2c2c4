// What a real Proxmox VE cluster does that a fake written from poise's own expectations would
// not (spec §3.5, §4.1): quorum as a Perl boolean, nodes that fail and come back while HA
// fences and recovers, PVE 9's rules endpoint that already holds the groups not yet migrated,
// and node pressure read from a 60-s RRD. Each against the fake API over real HTTPS, through the
// real Proxmox VE host and the daemon.
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeClusterSpec } from '../testing/fake-cluster';
import { GIB, type PveSetup, pveSetup, unbalanced } from '../testing/pve-support';

const open: PveSetup[] = [];
async function setup(...args: Parameters<typeof pveSetup>): Promise<PveSetup> {
  const s = await pveSetup(...args);
  open.push(s);
  return s;
}
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** Act at once (hold 1), settle 30 s, a 120 s pickup timeout. */
const ACT = {
  mode: 'act',
  policy: { 'ha-auto-rebalance-hold-duration': 1 },
  limits: { 'settle-time': 30, 'pickup-timeout': 120 },
};

const motions = (s: PveSetup) => s.posts().map((p) => `${p.path.split('/')[4]}>${p.target}`);
const lines = (s: PveSetup, event: string) =>
  s
    .records()
    .filter((r) => r.event === event)
    .map((r) => String(r.msg));

describe('quorum: a Perl boolean in manager_status', () => {
  it.each([
    [{ quorate: false }, 'the cluster is not quorate: nothing is balanced'],
    [
      { quorate: false, quorumUnreadable: true },
      'the cluster is not quorate (the node that answered could not check its quorum): nothing is balanced',
    ],
  ])('quorate "" or null (%j) is read as not quorate, not as an invalid reply', async (state, message) => {
    const s = await setup(ACT);
    Object.assign(s.cluster.s, state);
    await s.daemon.start();
    await s.run(2);
    expect(s.rounds().map((r) => [r.outcome, r.reason, r.msg])).toEqual(
      Array(2).fill(['skip', 'not-quorate', message]),
    );
    expect(await s.daemon.metrics.registry.getSingleMetricAsString('poise_api_errors_total')).not.toMatch(
      /poise_api_errors_total\{[^}]*\} [1-9]/,
    );
    expect(s.posts()).toEqual([]);
    // quorum back: balancing goes on
    s.cluster.s.quorate = true;
    s.cluster.s.quorumUnreadable = false;
    await s.run(1);
    expect(s.rounds().at(-1)).toMatchObject({ outcome: 'move' });
  });
});

describe('nodes that fail', () => {
  it('a motion whose target goes offline fails at once, not after the pickup timeout; the node change is logged once each way', async () => {
    const s = await setup(ACT);
    await s.daemon.start();
    await s.daemon.runRound(); // t 0: vm:101 → node2 requested; the CRM would pick it up next round
    s.cluster.node('node2').online = false; // … but node2 fails first: the command is dropped
    s.cluster.step();
    await s.run(3); // t 10 … 30
    expect(lines(s, 'motion')).toEqual([
      "migrate vm:101 from node1 to node2 failed after 10 s: the target 'node2' has failed (HA node state 'unknown': its HA services wait for fencing) before the HA manager started the motion: it drops the command",
    ]);
    expect(lines(s, 'cluster').filter((m) => m.includes('node2'))).toEqual([
      "node 'node2' has failed (HA node state 'unknown': its HA services wait for fencing) (was online)",
    ]);
    // while node2 is down no motion is requested, and the round says why
    expect(
      s
        .rounds()
        .slice(1)
        .map((r) => r.msg),
    ).toEqual(
      Array(3).fill(
        "the cluster is not settled: node 'node2' has failed (HA state 'unknown'); no motion is requested until 30 s after the last change",
      ),
    );
    expect(s.daemon.status().cluster).toMatchObject({
      settled: false,
      reasons: ["node 'node2' has failed (HA state 'unknown')"],
      nodes: { node1: 'online', node2: 'unknown', node3: 'online' },
    });
    expect(s.daemon.status().notice).toMatch(/^the cluster is not settled/);
    expect(motions(s)).toEqual(['vm:101>node2']);

    s.cluster.node('node2').online = true; // back at t 40
    await s.run(6); // t 40 … 90
    expect(lines(s, 'cluster').filter((m) => m.includes('node2'))).toHaveLength(2);
    expect(lines(s, 'cluster').at(-1)).toBe("node 'node2' is back online (was unknown)");
    // settle time: 30 s after the last change (t 40), then balancing resumes
    expect(
      s
        .rounds()
        .slice(4, 7)
        .map((r) => r.reason),
    ).toEqual(['settling', 'settling', 'settling']);
    expect(s.rounds()[4]!.msg).toBe(
      "the cluster is settling: the last change (node 'node2' back online) was 0 s ago; motions resume at 2026-01-01T00:01:10.000Z (limits.settle-time 30 s)",
    );
    expect(s.rounds()[7]).toMatchObject({ outcome: 'move' });
    expect(
      s
        .rounds()
        .slice(1, 7)
        .filter((r) => r.outcome === 'move'),
    ).toEqual([]);
  });

  it('fenced, recovered: no motion while the HA manager fences and recovers, nor for the settle time after; the recovery is not raced', async () => {
    const spec: FakeClusterSpec = unbalanced();
    spec.guests.push({ sid: 'vm:105', node: 'node3', cpu: 2, mem: 8 * GIB });
    const s = await setup({ ...ACT, policy: { 'ha-auto-rebalance-hold-duration': 3 } }, spec);
    await s.daemon.start();
    await s.run(1); // t 0: hold 1/3
    // node3 fails: HA waits (unknown), fences it, then recovers vm:105 on node2
    const node3 = s.cluster.node('node3');
    const vm105 = s.cluster.guest('vm:105');
    node3.online = false;
    vm105.haState = 'fence';
    await s.run(2); // t 10, 20
    node3.haState = 'fence';
    await s.run(1); // t 30
    vm105.haState = 'recovery';
    node3.haState = 'unknown';
    await s.run(1); // t 40
    vm105.node = 'node2';
    vm105.haState = 'started';
    await s.run(5); // t 50 … 90
    const reasons = s.rounds().map((r) => r.reason);
    expect(reasons.slice(0, 5)).toEqual(['holding', 'not-settled', 'not-settled', 'not-settled', 'not-settled']);
    expect(s.rounds()[3]!.msg).toBe(
      "the cluster is not settled: node 'node3' is being fenced; vm:105 in HA state 'fence'; no motion is requested until 30 s after the last change",
    );
    expect(s.rounds()[4]!.msg).toBe(
      "the cluster is not settled: node 'node3' has failed (HA state 'unknown'); vm:105 in HA state 'recovery'; no motion is requested until 30 s after the last change",
    );
    // node3 stays down: still not settled, nothing requested during the whole failure
    expect(reasons.slice(5)).toEqual(Array(5).fill('not-settled'));
    expect(s.posts()).toEqual([]);
    expect(lines(s, 'cluster').filter((m) => m.includes('node3'))).toEqual([
      "node 'node3' has failed (HA node state 'unknown': its HA services wait for fencing) (was online)",
      "node 'node3' is being fenced (HA node state 'fence') (was unknown)",
      // fenced: after the recovery no line says the services wait for fencing
      "node 'node3' has been fenced (HA node state 'unknown' until it rejoins; its HA services are recovered on other nodes) (was fence)",
    ]);
    // node3 back: settle, then the hold starts again from scratch
    node3.online = true;
    delete node3.haState;
    await s.run(7); // t 100 … 160
    expect(
      s
        .rounds()
        .slice(10)
        .map((r) => r.reason),
    ).toEqual(['settling', 'settling', 'settling', 'holding', 'holding', 'move', 'motion-in-flight']);
  });
});

describe('Proxmox VE 9 with HA groups not yet migrated', () => {
  it('the rules endpoint already holds them as ha-group-<name> rules: read once, the groups endpoint not read', async () => {
    const groups = [{ group: 'pinned', nodes: 'node1:2,node2', restricted: true, members: ['vm:101', 'vm:102'] }];
    const s = await setup(ACT, unbalanced(), { fake: { version: '9.2.2', groups } });
    const snapshot = await s.host.port.readSnapshot();
    expect(snapshot.rules).toEqual([
      {
        type: 'node-affinity',
        id: 'ha-group-pinned',
        resources: ['vm:101', 'vm:102'],
        nodes: [
          { node: 'node1', priority: 2 },
          { node: 'node2', priority: 0 },
        ],
        strict: true,
      },
    ]);
    expect(s.fake.server.requests.map((r) => r.path)).not.toContain('/cluster/ha/groups');
    // the group keeps its resources on its nodes: vm:101, vm:102 never go to node3
    await s.daemon.start();
    await s.run(6);
    expect(motions(s).filter((m) => /^vm:10[12]>node3$/.test(m))).toEqual([]);
    expect(motions(s).length).toBeGreaterThan(0);
  });
});

describe('telemetry after a motion', () => {
  it('a policy that reads node pressure decides only on pressure read after the last motion ended', async () => {
    const spec = unbalanced();
    spec.nodes[0]!.pressureCpu = 40;
    spec.nodes[1]!.pressureCpu = 1;
    spec.nodes[2]!.pressureCpu = 1;
    const s = await setup(
      { ...ACT, policy: { 'ha-auto-rebalance-hold-duration': 1, 'ha-auto-rebalance-min-pressure-cpu': 10 } },
      spec,
    );
    await s.daemon.start();
    const rrd = () =>
      s.fake.server.requests
        .filter((r) => r.path.endsWith('/rrddata'))
        .map((r) => `${r.path.split('/')[2]}@${s.cluster.time}`);
    await s.run(3); // t 0: vm:101 → node2; t 10: moving; t 20: succeeded (ended at t 20)
    const ended = s.rounds()[2]!;
    expect(lines(s, 'motion')).toEqual(['migrate vm:101 from node1 to node2 succeeded after 20 s']);
    expect(ended).toMatchObject({ reason: 'telemetry-pending' });
    expect(ended.msg).toBe(
      'waiting for the pressure of node1, node2 from after the last motion (ended at 2026-01-01T00:00:20.000Z); at most until 2026-01-01T00:03:20.000Z',
    );
    const before = rrd().length;
    await s.run(1); // t 30: node1 and node2's RRD read again (the 60-s cache is not waited for)
    expect(
      rrd()
        .slice(before)
        .map((x) => x.split('@')[0])
        .sort(),
    ).toEqual(['node1', 'node2']);
    // a complete RRD row starting at or after t 20 exists from t 140 (the row of minute 00:01)
    await s.run(12); // t 40 … 150
    const reasons = s.rounds().map((r) => r.reason);
    const resumed = reasons.findIndex((r, i) => i > 2 && r !== 'telemetry-pending');
    expect(reasons.slice(2, resumed).every((r) => r === 'telemetry-pending')).toBe(true);
    expect(s.rounds()[resumed]!.time).toBe('2026-01-01T00:02:00.000Z');
    expect(motions(s).length).toBe(2);
  });

  it('a policy that does not read pressure decides at once', async () => {
    const s = await setup(ACT);
    await s.daemon.start();
    await s.run(3);
    expect(s.rounds().map((r) => r.reason)).toEqual(['move', 'motion-in-flight', 'move']);
  });
});
