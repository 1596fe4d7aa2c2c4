import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from './main';
import { REPO_ROOT } from './testing/upstream';

const capture = () => {
  const out: string[] = [];
  const err: string[] = [];
  const chunks: string[] = [];
  return {
    out,
    err,
    chunks,
    io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), write: (c: string) => chunks.push(c) },
  };
};
const scenario = (name: string) => resolve(REPO_ROOT, 'apps/sim/scenarios', name);

describe('poise-sim summary and --set', () => {
  test('summary prints one line of JSON with the documented keys, in order', () => {
    const c = capture();
    expect(main(['summary', scenario('failing-migration-local-cdrom')], c.io)).toBe(0);
    expect(c.out).toHaveLength(1);
    const summary = JSON.parse(c.out[0]!) as Record<string, unknown>;
    expect(Object.keys(summary)).toEqual([
      'guestContentionSeconds',
      'migrationSeconds',
      'moves',
      'failedMoves',
      'movesBySid',
      'pingPongs',
      'imbalanceTimeWeighted',
      'pressureSeconds',
      'simSeconds',
    ]);
    // the reference balancer: vm:101 to node2 every 80 s from 80 to 1360, all failed
    expect(summary).toMatchObject({
      moves: 17,
      failedMoves: 17,
      movesBySid: { 'vm:101': 17 },
      pingPongs: 0,
      pressureSeconds: null,
      simSeconds: 1400,
    });
  });

  test('--set overrides datacenter.cfg keys, repeatable, for summary, run and test', () => {
    const c = capture();
    const dir = scenario('failing-migration-local-cdrom');
    expect(
      main(
        ['summary', dir, '--set', 'ha-auto-rebalance-backoff=60', '--set', 'ha-auto-rebalance-check-migratable=1'],
        c.io,
      ),
    ).toBe(0);
    expect(JSON.parse(c.out[0]!)).toMatchObject({ moves: 3, failedMoves: 0 });
    const run = capture();
    expect(main(['run', dir, '--set', 'ha-auto-rebalance-check-migratable=1'], run.io)).toBe(0);
    expect(run.chunks.join('')).toContain(
      "auto rebalance - vm:101 cannot be migrated: local cd-rom image 'local:iso/debian-13.iso' (ide2)",
    );
    // test: the variant's log is what log.expect.check-migratable holds, not log.expect
    const t = capture();
    expect(main(['test', dir, '--set', 'ha-auto-rebalance-check-migratable=1'], t.io)).toBe(1);
    expect(t.out.at(-1)).toBe('0 passed, 1 failed');
  });

  test.each([
    [['summary', 'x', '--set'], "'--set' needs <crs-key>=<value>"],
    [
      ['summary', scenario('failing-migration-local-cdrom'), '--set', 'ha-auto-rebalance-bakoff=60'],
      "'--set ha-auto-rebalance-bakoff=60': unknown crs key 'ha-auto-rebalance-bakoff'",
    ],
    [
      ['run', scenario('failing-migration-local-cdrom'), '--set', 'ha-auto-rebalance-backoff=soon'],
      "'--set ha-auto-rebalance-backoff=soon': invalid value 'soon' for 'crs.ha-auto-rebalance-backoff' (seconds, 0 to 3600)",
    ],
    [
      ['test', scenario('failing-migration-local-cdrom'), '--set', 'ha-auto-rebalance-margin=-1'],
      "'--set ha-auto-rebalance-margin=-1': expected a finite number from 0 to 100",
    ],
    [['summary'], "'summary' takes one case directory"],
  ])('a bad --set or a missing case is a usage error (exit 2): %j', (argv, message) => {
    const c = capture();
    expect(main(argv, c.io)).toBe(2);
    expect(c.err.join('\n')).toContain(message);
    expect(c.out).toEqual([]);
  });
});
