import { describe, expect, it } from 'vitest';
import { stablePlugin } from '@poise/policy-stable';
import { pressurePlugin } from '@poise/policy-pressure';
import { type ContentionPluginOptions, createContentionPlugin } from './index';
import { GIB, KNEE, cluster, guests, lines, loadDriven, pipelineFor } from './testing/support';

const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };

/**
 * The pipeline of this package, the stability and the pressure plug-ins for a `crs` section, as
 * the HA core and poise-manager build it: through a `PolicyRegistry`.
 */
const composed = (crs: Record<string, unknown>, options: ContentionPluginOptions = {}) =>
  pipelineFor(crs, REF, [createContentionPlugin(options), stablePlugin, pressurePlugin]);

describe('composes with the other variant stages', () => {
  it('the preset with the contention objective: every stage in its slot', () => {
    const pipeline = composed({
      'ha-auto-rebalance-preset': 'recommended',
      'ha-auto-rebalance-objective': 'contention',
    });
    expect(pipeline.stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'contention',
      'smoothing',
      'backoff-series',
      'pressure',
      'contention-hold',
      'candidates',
      'pressure-source',
      'cooldown',
      'backoff',
      'migratable',
      'contention-score',
      'select-cost',
      'contention-margin',
      'min-improvement',
    ]);
  });

  it('migratable: the move that would spare most is of a guest that cannot move, the next one moves', () => {
    // node1: vm:101 uses 4 cores (activity 1), vm:102 and vm:103 2 each; vm:101 has a local cd-rom
    const list = [
      {
        sid: 'vm:101',
        node: 'node1',
        cpu: 4,
        maxcpu: 4,
        mem: 4 * GIB,
        config: { ide2: 'local:iso/d.iso,media=cdrom' },
      },
      { sid: 'vm:102', node: 'node1', cpu: 2, maxcpu: 4, mem: 4 * GIB, config: { scsi0: 'ceph:vm-102-disk-0' } },
      { sid: 'vm:103', node: 'node1', cpu: 2, maxcpu: 4, mem: 4 * GIB, config: { scsi0: 'ceph:vm-103-disk-0' } },
      ...guests('node1', 104, 2, 2),
    ];
    const alone = cluster(list);
    alone.run(composed({ 'ha-auto-rebalance-objective': 'contention' }), {
      until: 200,
      beforeRound: loadDriven(KNEE),
    });
    expect(alone.moves()[0]!.resources).toEqual(['vm:101']);
    const c = cluster(list);
    c.run(composed({ 'ha-auto-rebalance-objective': 'contention', 'ha-auto-rebalance-check-migratable': 1 }), {
      until: 200,
      beforeRound: loadDriven(KNEE),
    });
    expect(c.moves()[0]!.resources).not.toEqual(['vm:101']);
    expect(lines(c).filter((l) => l.includes('not-migratable'))).toEqual([
      "40 notice not-migratable: vm:101 cannot be migrated: local cd-rom image 'local:iso/d.iso' (ide2)",
    ]);
  });

  it('cost: among moves sparing nearly as much, the one copying less memory (gains compared, not imbalances)', () => {
    // node1: vm:101 2.2 cores and 12 GiB, vm:102 1.8 cores and 2 GiB, five guests of 1.5 cores and 1 GiB:
    // (1 + 11.5)/16 = 78 % → 36 %; vm:101 spares the most, a 1.5-core guest 7 % less and copies 1 GiB
    const list = [
      { sid: 'vm:101', node: 'node1', cpu: 2.2, maxcpu: 4, mem: 12 * GIB },
      { sid: 'vm:102', node: 'node1', cpu: 1.8, maxcpu: 4, mem: 2 * GIB },
      ...guests('node1', 103, 5, 1.5, 1),
    ];
    const without = cluster(list);
    without.run(composed({ 'ha-auto-rebalance-objective': 'contention' }), {
      until: 300,
      beforeRound: loadDriven(KNEE),
    });
    expect(without.moves()[0]!.resources).toEqual(['vm:101']);
    const c = cluster(list);
    c.run(composed({ 'ha-auto-rebalance-objective': 'contention', 'ha-auto-rebalance-cost-weight': 0.3 }), {
      until: 300,
      beforeRound: loadDriven(KNEE),
    });
    expect(c.moves()[0]!.resources).toEqual(['vm:103']);
    expect(lines(c).find((l) => l.includes('cost-preferred'))).toMatch(
      /preferred vm:103 to node2 \(copies 1\.0 GiB, guest contention gain \d+ guest-seconds\) over vm:101 to node2 \(copies 12\.0 GiB, guest contention gain \d+ guest-seconds\)$/,
    );
  });

  it('cooldown: a guest it just moved is left where it is, even when moving it again would spare the most', () => {
    // node1 runs 6 cores of its own and vm:101 (8 cores): (6 + 8)/16 = 88 % → 55 %; it moves vm:101 away,
    // then its new node fills up with work of its own and vm:101 is the only guest that could leave
    const make = () => cluster([{ sid: 'vm:101', node: 'node1', cpu: 8, maxcpu: 8, mem: 8 * GIB }], [{ cpu: 6 }]);
    let hot = '';
    const script = (c: ReturnType<typeof make>) => {
      if (c.time === 300) {
        hot = c.nodeOf('vm:101');
        c.setNode(hot, { cpu: 7 });
      }
      loadDriven(KNEE)(c);
    };
    // the objective's own hold of a moved guest (the pace's window) shortened to a minute, so that
    // what keeps vm:101 in place below is the cooldown
    const pace = { windowSeconds: 60 };
    const without = make();
    without.run(composed({ 'ha-auto-rebalance-objective': 'contention' }, { pace }), {
      until: 600,
      beforeRound: script,
    });
    expect(without.moves()).toHaveLength(2);
    const c = make();
    c.run(composed({ 'ha-auto-rebalance-objective': 'contention', 'ha-auto-rebalance-cooldown': 600 }, { pace }), {
      until: 600,
      beforeRound: script,
    });
    expect(c.moves()).toHaveLength(1);
    expect(lines(c).some((l) => /stop cooldown: cooldown of vm:101 until \d+/.test(l))).toBe(true);
  });

  it('backoff: a motion that failed is not retried in its series; the next best target is', () => {
    const list = [{ sid: 'vm:101', node: 'node1', cpu: 8, maxcpu: 8, mem: 8 * GIB, failures: 1 }];
    const c = cluster(list, [{ cpu: 6 }]);
    c.run(composed({ 'ha-auto-rebalance-objective': 'contention', 'ha-auto-rebalance-backoff': 60 }), {
      until: 400,
      beforeRound: loadDriven(KNEE),
    });
    const [first, second] = c.moves();
    expect(c.outcomes().map((o) => o.ok)).toEqual([false, true]);
    expect(second!.target).not.toBe(first!.target);
    // the retry continues the series: no new hold rounds (the retry in the round the failure is known)
    expect(second!.time - first!.time).toBe(20);
  });
});
