import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { PlanInput } from '@poise/plan';
import { describe, expect, it } from 'vitest';
import { generatedCluster } from '@poise/plan/testing';
import { BUILTIN_REGISTRY } from '@poise/ha';
import { FakeCluster, type FakeClusterSpec, fakeHost } from '../../testing/fake-cluster';
import { EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, main } from '../main';
import { spawnCli } from '../../testing/pve-support';
import { captureIo, GIB } from '../../testing/support';
import { type DrainProgress, readDrainProgress } from '../../runtime/drain-progress';

// The subcommands end to end in this process: a snapshot file, the simulator (the bundled
// scenario), and a scripted fake cluster standing in for the API (divergence, failures).

/** Three nodes of 16 cores / 64 GiB; five guests on node1, one of them not migratable; two must stay apart. */
const CLUSTER: PlanInput = {
  nodes: ['node1', 'node2', 'node3'].map((name) => ({ name, cpuCores: 16, memBytes: 64 * GIB })),
  guests: [
    { id: 'vm:101', kind: 'vm', node: 'node1', ha: true, cpu: 3.2, mem: 6 * GIB },
    { id: 'vm:102', kind: 'vm', node: 'node1', ha: true, cpu: 2.5, mem: 5 * GIB },
    { id: 'vm:103', kind: 'vm', node: 'node1', ha: true, cpu: 1.1, mem: 2 * GIB },
    {
      id: 'vm:104',
      kind: 'vm',
      node: 'node1',
      ha: true,
      cpu: 0.8,
      mem: 3 * GIB,
      migratable: false,
      reason: 'has a local disk',
    },
    { id: 'ct:105', kind: 'ct', node: 'node1', ha: false, cpu: 0.4, mem: 1 * GIB },
  ],
  rules: [{ id: 'web-apart', type: 'resource-affinity', affinity: 'negative', resources: ['vm:101', 'vm:102'] }],
};

function writeJson(value: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'poise-plan-cli-')), 'cluster.json');
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

async function run(argv: string[], hooks: Parameters<typeof main>[2] = {}) {
  const c = captureIo();
  const code = await main(argv, c.io, hooks);
  return { code, ...c, text: c.out.join('\n'), json: () => JSON.parse(c.out.join('\n')) as Record<string, unknown> };
}

describe('plan --snapshot', () => {
  const file = writeJson(CLUSTER);

  it('prints the plan: balance before and after, moves, memory, bound and gap, steps', async () => {
    const r = await run(['plan', '--snapshot', file]);
    expect(r.code).toBe(EXIT_OK);
    expect(r.text).toMatch(/^cluster: snapshot file '.*cluster\.json': 3 nodes, 5 guests, 1 rules$/m);
    expect(r.text).toMatch(/^plan \(rebalancing\): feasible$/m);
    expect(r.text).toMatch(
      /^balance now: +objective [\d.]+ \(highest cpu [\d.]+ %, highest memory [\d.]+ %\), reference imbalance [\d.]+ %$/m,
    );
    expect(r.text).toMatch(/^balance after: objective/m);
    expect(r.text).toMatch(/^moves: \d+ migrations? in \d+ steps?, [\d.]+ GiB of memory to copy$/m);
    expect(r.text).toMatch(/^bound: [\d.]+, gap [\d.]+ %/m);
    expect(r.text).toMatch(/^step 1:\n {2}\S+ node1 → node[23] \([\d.]+ GiB\)$/m);
  });

  it('--json: feasible, placement, steps of {sid, source, target}, objective and bound', async () => {
    const r = await run(['plan', '--snapshot', file, '--json']);
    expect(r.code).toBe(EXIT_OK);
    const doc = r.json();
    expect(doc.feasible).toBe(true);
    const placement = doc.placement as Record<string, string>;
    expect(Object.keys(placement).sort()).toEqual(['ct:105', 'vm:101', 'vm:102', 'vm:103', 'vm:104']);
    expect(placement['vm:104']).toBe('node1'); // it cannot move
    expect(placement['vm:101']).not.toBe(placement['vm:102']); // negative affinity
    const steps = doc.steps as { sid: string; source: string; target: string }[][];
    expect(steps.length).toBeGreaterThan(0);
    // applying the steps to the current placement gives the target placement
    const where = new Map(CLUSTER.guests.map((g) => [g.id, g.node]));
    for (const step of steps) {
      for (const m of step) {
        expect(where.get(m.sid)).toBe(m.source);
        where.set(m.sid, m.target);
      }
    }
    expect(Object.fromEntries(where)).toEqual(placement);
    const objective = doc.objective as { value: number; moves: number };
    expect(objective.moves).toBe(steps.flat().length);
    expect(doc.bound).toBeLessThanOrEqual(objective.value + 1e-9); // the same sum in another order
  });

  it('an infeasible drain is an answer with the reason (text and JSON)', async () => {
    const text = await run(['plan', '--snapshot', file, '--drain', 'node1']);
    expect(text.code).toBe(EXIT_OK);
    expect(text.text).toMatch(
      /^plan \(drain of node1\): infeasible\n {2}- node1 cannot be drained: vm:104 has a local disk$/m,
    );
    const json = (await run(['plan', '--snapshot', file, '--drain', 'node1', '--json'])).json();
    expect(json).toMatchObject({
      feasible: false,
      reason: 'node1 cannot be drained: vm:104 has a local disk',
      placement: null,
      steps: [],
    });
  });

  it('drains node3 with HA and non-HA guests, within a memory headroom from the command line', async () => {
    const spread: PlanInput = {
      ...CLUSTER,
      guests: CLUSTER.guests.map((g) => (g.id === 'vm:103' || g.id === 'ct:105' ? { ...g, node: 'node3' } : g)),
    };
    const doc = (
      await run(['plan', '--snapshot', writeJson(spread), '--drain', 'node3', '--memory-headroom', '80', '--json'])
    ).json();
    expect(doc.feasible).toBe(true);
    const placement = doc.placement as Record<string, string>;
    expect(placement['vm:103']).not.toBe('node3');
    expect(placement['ct:105']).not.toBe('node3');
    // 80 % headroom: at most 12.8 GiB in use per node. node1 holds 14 GiB now: a drain does not
    // fix that (it moves only what it must), it sends nothing there; node2 takes both (3 GiB)
    expect(placement['vm:103']).toBe('node2');
    expect(placement['ct:105']).toBe('node2');
    expect(doc.steps).toHaveLength(2);
    expect(doc.drainPlan).toEqual({ nodes: ['node3'], required: 2, makeRoom: [], motions: 2 });
    const mem = Object.fromEntries((doc.nodes as { node: string; mem: number }[]).map((n) => [n.node, n.mem]));
    expect(mem).toEqual({ node1: 14 / 64, node2: 3 / 64 });
  });

  it('a cpu overcommit limit the cluster cannot meet says which constraint fails', async () => {
    const doc = (await run(['plan', '--snapshot', file, '--cpu-overcommit', '0.1', '--json'])).json();
    expect(doc.feasible).toBe(false);
    expect(doc.reason).toMatch(/cpu|cores/);
  });

  it.each([
    [
      { ...CLUSTER, guests: [{ ...CLUSTER.guests[0], mem: -1 }] },
      /cluster\.json: guest 'vm:101' \(guests\[0\]\): mem must be a finite number >= 0/,
    ],
    [{ ...CLUSTER, nodes: [] }, /cluster\.json: .*nodes/],
    [{ ...CLUSTER, guests: [{ ...CLUSTER.guests[0], node: 'node9' }] }, /cluster\.json: .*node9/],
    ['{"nodes": [', /cluster\.json: not valid JSON/],
  ])('a bad snapshot file is refused naming the file and field (%#)', async (doc, message) => {
    const r = await run(['plan', '--snapshot', writeJson(doc)]);
    expect(r.code).toBe(EXIT_CONFIG);
    expect(r.err.join('\n')).toMatch(message);
  });

  it('a missing snapshot file, or a drained node the cluster lacks, is named', async () => {
    const missing = await run(['plan', '--snapshot', '/nonexistent/cluster.json']);
    expect(missing.code).toBe(EXIT_CONFIG);
    expect(missing.err.join('\n')).toContain("--snapshot: cannot read '/nonexistent/cluster.json' (ENOENT)");
    const unknown = await run(['plan', '--snapshot', file, '--drain', 'node9']);
    expect(unknown.code).toBe(EXIT_USAGE);
    expect(unknown.err.join('\n')).toContain("'node9' is not a node of the cluster (nodes: node1, node2, node3)");
  });

  it('bad capacity values name the option and value', async () => {
    const r = await run(['plan', '--snapshot', file, '--memory-headroom', '150']);
    expect(r.code).toBe(EXIT_USAGE);
    expect(r.err[0]).toMatch(
      /^poise-manager: '--memory-headroom' takes a percent from 0 up to \(not including\) 100, got '150'/,
    );
  });
});

describe('the command', () => {
  it('poise-manager plan --snapshot --json in a process of its own: one JSON document, exit 0; a bad value exits 2', async () => {
    const ok = spawnCli(['plan', '--snapshot', writeJson(CLUSTER), '--json', '--cpu-overcommit', '8']);
    expect(await ok.exited).toBe(EXIT_OK);
    expect(JSON.parse(ok.lines.join('\n'))).toMatchObject({ feasible: true });
    const bad = spawnCli(['plan', '--snapshot', writeJson(CLUSTER), '--cpu-overcommit', 'lots']);
    expect(await bad.exited).toBe(EXIT_USAGE);
    expect(bad.stderr()).toContain(
      "'--cpu-overcommit' takes a ratio > 0 (assigned cores per physical core, e.g. 4), got 'lots'",
    );
  }, 120_000);

  it('--help shows the subcommands and their options', async () => {
    const r = await run(['--help']);
    expect(r.text).toContain(
      '       poise-manager drain <node> [--config <file> | --sim [<case-dir>] [--at start|end|<time>]] [--execute] [--parallel <n>]',
    );
    expect(r.text).toMatch(/\nplan options:\n/);
    expect(r.text).toContain('--what-if node-failure');
  });
});

describe('plan --what-if node-failure', () => {
  it('says per node whether HA recovers its guests, and the balance after', async () => {
    const file = writeJson(CLUSTER);
    const r = await run(['plan', '--snapshot', file, '--what-if', 'node-failure']);
    expect(r.code).toBe(EXIT_OK);
    expect(r.text).toContain('what if one node fails: HA cannot recover the guests of every node (N+1 does not hold)');
    expect(r.text).toMatch(/^node1: NOT recovered: vm:104 has a local disk.*; lost with it \(not HA\): ct:105$/m);
    expect(r.text).toMatch(
      /^node2: recovered \(0 HA resources\); after: highest cpu [\d.]+ %, highest memory [\d.]+ %, reference imbalance [\d.]+ %$/m,
    );
    const doc = (await run(['plan', '--snapshot', file, '--what-if', 'node-failure', '--json'])).json();
    expect(doc.survivesAnyNodeFailure).toBe(false);
    const cases = doc.cases as { node: string; recovered: boolean; lost: string[] }[];
    expect(cases.map((c) => [c.node, c.recovered])).toEqual([
      ['node1', false],
      ['node2', true],
      ['node3', true],
    ]);
  });
});

describe('place', () => {
  const file = writeJson(CLUSTER);

  it('places N new guests within capacity and prints the cluster after', async () => {
    const r = await run(['place', '--snapshot', file, '--guest', 'cpu=4,mem=8G', '--count', '20']);
    expect(r.code).toBe(EXIT_OK);
    expect(r.text).toMatch(/^placed 20 of 20 new guests:$/m);
    expect(r.text).toMatch(/^ {2}new-20 → node[123]$/m);
    expect(r.text).toMatch(/^balance after: highest cpu/m);
    const doc = (await run(['place', '--snapshot', file, '--guest', 'cpu=4,mem=8G', '--count', '20', '--json'])).json();
    expect(Object.keys(doc.placed as object)).toHaveLength(20);
  });

  it('guests that fit nowhere are reported with the reason, the others placed', async () => {
    const doc = (
      await run(['place', '--snapshot', file, '--guest', 'cpu=2,mem=40G,id=big', '--count', '5', '--json'])
    ).json();
    // 64 GiB nodes holding 17, 0 and 0 GiB: one 40 GiB guest fits on each of node2 and node3 only... and node1 (47 free)
    expect(Object.keys(doc.placed as object)).toHaveLength(3);
    expect((doc.unplaced as { id: string; reason: string }[]).map((u) => u.id)).toEqual(['big-4', 'big-5']);
  });

  it('a bad --guest names the spec and key', async () => {
    const r = await run(['place', '--snapshot', file, '--guest', 'cpu=4,mem=lots']);
    expect(r.code).toBe(EXIT_USAGE);
    expect(r.err[0]).toContain(
      "'--guest cpu=4,mem=lots': mem must be a size > 0 such as 8G, 512M or 8192 (MiB), got 'lots'",
    );
  });
});

describe('a generated cluster', () => {
  it('plan, drain plan, what-if and place all answer on 16 nodes × 600 guests with 60 rules', async () => {
    const file = writeJson(generatedCluster(7, 16, 600, 60));
    const plan = (await run(['plan', '--snapshot', file, '--json'])).json();
    expect(plan.feasible).toBe(true);
    expect(Object.keys(plan.placement as object)).toHaveLength(600);
    const drain = (await run(['plan', '--snapshot', file, '--drain', 'node003', '--json'])).json();
    expect(drain.feasible).toBe(true);
    expect(Object.values(drain.placement as Record<string, string>)).not.toContain('node003');
    const whatIf = (await run(['plan', '--snapshot', file, '--what-if', 'node-failure', '--json'])).json();
    expect(whatIf.cases).toHaveLength(16);
    const place = (
      await run(['place', '--snapshot', file, '--guest', 'cpu=4,mem=8G', '--count', '20', '--json'])
    ).json();
    expect(Object.keys(place.placed as object)).toHaveLength(20);
  }, 120_000);
});

describe('plan and drain on the simulator', () => {
  it('plan --sim: the bundled scenario, read once it settled', async () => {
    const r = await run(['plan', '--sim', '--json']);
    expect(r.code).toBe(EXIT_OK);
    const doc = r.json();
    expect(doc.source).toMatch(
      /^simulator, case 'three-nodes-unbalanced': 3 nodes, 6 HA resources, read at sim \d\d:\d\d:\d\d \(after the case's command lists\): 3 nodes, 6 guests, 0 rules$/,
    );
    expect(doc.feasible).toBe(true);
    // six guests start on node1: the plan spreads them
    expect(new Set(Object.values(doc.placement as Record<string, string>)).size).toBe(3);
  }, 120_000);

  it('drain --sim observes by default: the motions it would request, nothing requested', async () => {
    const r = await run(['drain', 'node1', '--sim']);
    expect(r.code).toBe(EXIT_OK);
    const records = r.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const wouldMove = records.filter((x) => x.event === 'drain' && String(x.msg).includes('observe: would'));
    expect(wouldMove).toHaveLength(6);
    expect(records.some((x) => x.event === 'motion')).toBe(false);
    expect(records.at(-1)).toMatchObject({ event: 'drain', result: 'observe', motions: 6 });
  }, 120_000);

  it('drain --sim --execute empties the node, motion after motion, each followed to success', async () => {
    const r = await run(['drain', 'node1', '--sim', '--execute']);
    expect(r.code).toBe(EXIT_OK);
    const records = r.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const succeeded = records.filter((x) => x.event === 'motion' && x.result === 'succeeded');
    expect(succeeded.map((x) => x.sid).sort()).toEqual(['ct:105', 'ct:106', 'vm:101', 'vm:102', 'vm:103', 'vm:104']);
    expect(succeeded.every((x) => x.target !== 'node1')).toBe(true);
    expect(records.at(-1)).toMatchObject({ event: 'drain', result: 'done', motions: 6 });
  }, 180_000);
});

describe('the bundled simulator scenarios', () => {
  const dir = resolve(__dirname, '../../../../sim/scenarios');
  const scenarios = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);

  it('there are some', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(10);
  });

  /** The bad policy values of a scenario's datacenter.cfg (a scenario of the HA core's fallback): refused at load. */
  const badValues = (name: string) =>
    Object.entries(
      (JSON.parse(readFileSync(join(dir, name, 'datacenter.cfg'), 'utf8')) as { crs?: Record<string, unknown> }).crs ??
        {},
    ).filter(([key, value]) => BUILTIN_REGISTRY.spec(key) !== undefined && BUILTIN_REGISTRY.refusal(key, value));

  it.each(scenarios)(
    '%s: plan and what-if answer',
    async (name) => {
      const bad = badValues(name);
      if (bad.length > 0) {
        const refused = await run(['plan', '--sim', join(dir, name), '--json']);
        expect(refused.code).toBe(EXIT_CONFIG);
        expect(refused.err.join('\n')).toContain(
          `${join(dir, name, 'datacenter.cfg')}: crs.${bad[0]![0]}: invalid value`,
        );
        return;
      }
      const plan = await run(['plan', '--sim', join(dir, name), '--json']);
      expect(plan.code, plan.err.join('\n')).toBe(EXIT_OK);
      const doc = plan.json();
      expect(typeof doc.feasible).toBe('boolean');
      if (doc.feasible)
        expect(doc.bound as number).toBeLessThanOrEqual((doc.objective as { value: number }).value + 1e-9);
      else expect(doc.reason).toEqual(expect.any(String));
      const whatIf = await run(['plan', '--sim', join(dir, name), '--what-if', 'node-failure', '--json']);
      expect(whatIf.code).toBe(EXIT_OK);
      expect(typeof whatIf.json().survivesAnyNodeFailure).toBe('boolean');
    },
    180_000,
  );
});

describe('drain against a cluster that does not follow the plan', () => {
  const spec = (extra: Partial<FakeClusterSpec> = {}): FakeClusterSpec => ({
    nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }],
    guests: [
      ...['vm:101', 'vm:102', 'vm:103'].map((sid) => ({ sid, node: 'node1', cpu: 2, mem: 8 * GIB })),
      { sid: 'vm:201', node: 'node1', ha: false, cpu: 1, mem: 4 * GIB },
    ],
    ...extra,
  });
  const configFile = () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-drain-'));
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
  };
  // one motion at a time: the order in which a divergence or a failure is met is the plan's
  const drain = async (cluster: FakeCluster, afterStep?: () => void) =>
    run(['drain', 'node1', '--config', configFile(), '--execute', '--parallel', '1'], {
      createHost: () => fakeHost(cluster, afterStep ? { afterStep } : {}),
    });
  const records = (logs: string[]) => logs.map((l) => JSON.parse(l) as Record<string, unknown>);

  it('drains HA resources through HA and other guests by a migration', async () => {
    const cluster = FakeCluster.create(spec());
    const r = await drain(cluster);
    expect(r.code).toBe(EXIT_OK);
    expect(cluster.s.guests.filter((g) => g.node === 'node1')).toEqual([]);
    expect(cluster.s.requests.map((q) => `${q.sid} ${q.via}`).sort()).toEqual([
      'vm:101 ha',
      'vm:102 ha',
      'vm:103 ha',
      'vm:201 guest',
    ]);
  }, 60_000);

  it('writes its progress beside state.file for the status page: running with the motion in flight, then done', async () => {
    const cluster = FakeCluster.create(spec());
    const file = configFile();
    const progressFile = join(dirname(file), 'drain-progress.json');
    const seen: DrainProgress[] = [];
    const r = await run(['drain', 'node1', '--config', file, '--execute', '--parallel', '1'], {
      createHost: () =>
        fakeHost(cluster, {
          afterStep: () => {
            const read = readDrainProgress(progressFile);
            if (read.kind === 'record') seen.push(read.progress);
          },
        }),
    });
    expect(r.code).toBe(EXIT_OK);
    // while a motion runs the record says which, with what ended before it
    const moving = seen.filter((p) => p.inFlight.length > 0);
    expect(moving.length).toBeGreaterThanOrEqual(4);
    expect(moving[0]).toMatchObject({
      state: 'running',
      nodes: ['node1'],
      total: 4,
      succeeded: 0,
      failed: 0,
      pid: process.pid,
    });
    expect(moving[0]!.inFlight[0]).toMatchObject({ source: 'node1', sid: cluster.s.requests[0]!.sid });
    expect(moving.at(-1)).toMatchObject({ state: 'running', succeeded: 3 });
    const end = readDrainProgress(progressFile);
    expect(end).toMatchObject({
      kind: 'record',
      processGone: false,
      progress: { state: 'done', total: 4, succeeded: 4, failed: 0, inFlight: [], message: 'drain done: 4 motions' },
    });
  }, 60_000);

  it('a drain that stops says so in its progress record', async () => {
    const cluster = FakeCluster.create(
      spec({ scripts: { 'vm:101': { outcome: 'fail' }, 'vm:102': { outcome: 'fail' } } }),
    );
    const file = configFile();
    const r = await run(['drain', 'node1', '--config', file, '--execute', '--parallel', '1'], {
      createHost: () => fakeHost(cluster),
    });
    expect(r.code).toBe(EXIT_FAILURE);
    const end = readDrainProgress(join(dirname(file), 'drain-progress.json'));
    expect(end.kind).toBe('record');
    if (end.kind !== 'record') return;
    expect(end.progress).toMatchObject({ state: 'stopped', failed: 1, inFlight: [] });
    expect(end.progress.message).toMatch(/^drain stopped after \d of 4 motions: .* failed: /);
  }, 60_000);

  it('stops when a guest is not where the plan expects it', async () => {
    const cluster = FakeCluster.create(spec());
    let moved = false;
    // someone else moves a guest still on node1 to node3 while the first motion runs
    const r = await drain(cluster, () => {
      if (moved) return;
      const other = cluster.s.guests.find(
        (g) => g.node === 'node1' && g.haState === 'started' && cluster.s.requests.every((q) => q.sid !== g.sid),
      );
      if (other) {
        other.node = 'node3';
        moved = true;
      }
    });
    expect(r.code).toBe(EXIT_FAILURE);
    const last = records(r.logs).at(-1)!;
    expect(last).toMatchObject({ event: 'drain', result: 'stopped' });
    expect(last.msg).toMatch(
      /^drain stopped after \d of 4 motions: the cluster diverged from the plan before step \d+ \(.*\): '(vm:\d+)' is on 'node3', the plan expects it on 'node1'$/,
    );
    expect(cluster.s.requests.length).toBeLessThan(4);
  }, 60_000);

  it('stops when a motion fails, and when one is refused', async () => {
    const failing = FakeCluster.create(
      spec({
        scripts: Object.fromEntries(
          ['vm:101', 'vm:102', 'vm:103', 'vm:201'].map((sid) => [sid, { outcome: 'fail' as const }]),
        ),
      }),
    );
    const failed = await drain(failing);
    expect(failed.code).toBe(EXIT_FAILURE);
    expect(records(failed.logs).at(-1)!.msg).toMatch(/^drain stopped after 0 of 4 motions: .* failed: /);
    expect(failing.s.requests).toHaveLength(1);

    const refusing = FakeCluster.create(
      spec({
        scripts: Object.fromEntries(
          ['vm:101', 'vm:102', 'vm:103', 'vm:201'].map((sid) => [sid, { reply: 'refuse' as const }]),
        ),
      }),
    );
    const refused = await drain(refusing);
    expect(refused.code).toBe(EXIT_FAILURE);
    expect(records(refused.logs).at(-1)!.msg).toMatch(
      /^drain stopped after 0 of 4 motions: step 1: the cluster refused to .*scripted refusal/,
    );
  }, 60_000);

  it('SIGTERM ends the drain at the next read, the motion in flight left to HA', async () => {
    const cluster = FakeCluster.create(
      spec({
        scripts: { 'vm:101': { rounds: 3 }, 'vm:102': { rounds: 3 }, 'vm:103': { rounds: 3 }, 'vm:201': { rounds: 3 } },
      }),
    );
    const c = captureIo();
    const code = await main(['drain', 'node1', '--config', configFile(), '--execute', '--parallel', '1'], c.io, {
      createHost: () => fakeHost(cluster, { afterStep: () => c.handlers.get('SIGTERM')?.() }),
    });
    expect(code).toBe(EXIT_FAILURE);
    expect(records(c.logs).at(-1)!.msg).toBe(
      'drain stopped after 0 of 4 motions: interrupted while 1 motion moves (they are not stopped; run the drain again to follow them)',
    );
    expect(cluster.s.requests).toHaveLength(1);
    expect(c.handlers.size).toBe(0); // the handlers are removed at the end
  }, 60_000);

  it('does not start while a node has failed', async () => {
    const cluster = FakeCluster.create(
      spec({ nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }, { name: 'node4', online: false }] }),
    );
    const r = await drain(cluster);
    expect(r.code).toBe(EXIT_FAILURE);
    expect(records(r.logs).at(-1)!.msg).toMatch(/the cluster is not settled: node 'node4'/);
    expect(cluster.s.requests).toEqual([]);
  }, 60_000);
});
